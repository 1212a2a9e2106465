#pragma once
/// Resolved, typed scalar expressions (Calcite's RexNode role): what the planner builds from the AST
/// after name resolution, and what the vectorized evaluator runs. Plain data, shared read-only by
/// all subtasks once built.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "types/logical_type.h"

namespace sluice::table {

/// A literal value in its physical form (see types/logical_type.h): int64_t for BOOLEAN/INT/BIGINT/
/// DECIMAL(unscaled)/TIMESTAMP(ms)/INTERVAL(ms), double, std::string; monostate is NULL.
using LiteralValue = std::variant<std::monostate, int64_t, double, std::string>;

enum class ExprKind { kInputRef, kLiteral, kCall };

/// Built-in scalar operators and functions (names as in Flink SQL).
enum class ScalarOp {
  kPlus, kMinus, kTimes, kDivide, kMod, kNegate,
  kEquals, kNotEquals, kLessThan, kLessThanOrEqual, kGreaterThan, kGreaterThanOrEqual,
  kAnd, kOr, kNot, kIsNull, kIsNotNull, kIsTrue, kIsFalse,
  kBetween, kNotBetween,  ///< args: value, low, high
  kIn, kNotIn,            ///< args: value, candidates...
  kLike, kNotLike,        ///< args: value, pattern [, escape]
  kCase,                  ///< args: when1, then1, ..., [else]
  kCast,                  ///< args: value; target = Expr::type
  kCoalesce, kConcat,
  kUpper, kLower, kTrim, kCharLength, kSubstring, kLpad, kRpad,
  kToTimestamp, kDateFormat, kHour, kAbs, kRound,
  // Additions (after the original list so existing values keep their numbers):
  kTryCast,               ///< args: value; target = Expr::type (always nullable); NULL instead of an error
  kLtrim, kRtrim,         ///< args: value [, characters]. kTrim takes value [, characters [, mode]]
                          ///< where mode is an INT literal: 0 BOTH (default), 1 LEADING, 2 TRAILING
  kYear, kMonth, kDayOfMonth, kMinute, kSecond,  ///< args: timestamp; BIGINT like HOUR
  // Built-ins typed and compiled in builtins.cc (SqlFunctionUtils / Calcite SqlFunctions semantics).
  kPower, kSqrt, kLn, kLog, kLog10, kLog2, kExp, kSin, kCos, kTan, kCot, kAsin, kAcos, kAtan, kAtan2,
  kSinh, kCosh, kTanh, kDegrees, kRadians, kPi, kE, kCeil, kFloor, kTruncate, kSign,
  kRand, kRandInteger,    ///< args: [seed INT literal,] (bound for RAND_INTEGER); not constant-folded
  kIf, kNullIf, kIfNull, kGreatest, kLeast, kIsDistinctFrom, kIsNotDistinctFrom,
  kConcatWs, kReplace, kRegexp, kRegexpExtract, kRegexpReplace, kSplitIndex, kLeft, kRight, kInitCap,
  kPosition, kLocate, kInstr, kReverse, kRepeat, kAscii, kChr, kMd5, kSha1, kSha224, kSha256, kSha384,
  kSha512, kSha2, kToBase64, kFromBase64,
  // Temporal built-ins (builtins_time.cc). A unit is a leading (EXTRACT, TIMESTAMPADD, TIMESTAMPDIFF) or
  // trailing (FLOOR/CEIL(x TO unit)) string literal; the session-zone functions below take the zone id
  // as a trailing string literal (see usesSessionTimeZone).
  kExtract, kTimestampAdd, kTimestampDiff, kCurrentTimestamp, kCurrentDate, kCurrentTime, kLocalTimestamp,
  kLocalTime, kNow, kUnixTimestamp, kFromUnixtime, kToDate, kDayOfWeek, kDayOfYear, kWeek, kQuarter, kConvertTz,
  // JSON (kernels_json.cc): JSON_OBJECT / JSON_ARRAY take a leading 'NULL' / 'ABSENT' literal (ON NULL).
  kJsonValue, kJsonQuery, kJsonExists, kJsonObject, kJsonArray,
  kUuid, kHex, kBin, kIsAlpha, kIsDigit, kIsDecimal, kOverlay, kParseUrl,  ///< kernels_text.cc
  kTypeOf,  ///< TYPEOF(x [, force_serializable]): the argument's type summary, a constant
  /// PROCTIME(): the processing-time attribute of a computed column, the wall clock in the session zone when
  /// the row is computed (Flink's TIMESTAMP_LTZ(3) *PROCTIME*; TIMESTAMP(3) here until the window operators
  /// read TIMESTAMP_LTZ attributes).
  kProctime,
  /// A user-defined scalar function (user_function.h): Expr::function, named Expr::function_name.
  kUserFunction,
  /// TO_TIMESTAMP_LTZ(numeric[, precision 0 | 3]) (epoch seconds / millis) and
  /// TO_TIMESTAMP_LTZ(string[, format[, zone]]) (the text read in `zone`, by default UTC); builtins_time.cc.
  kToTimestampLtz,
};

struct Expr;
using ExprPtr = std::shared_ptr<const Expr>;
class ScalarFunction;

/// One node. `type` is the inferred result type (with nullability).
struct Expr {
  ExprKind kind = ExprKind::kLiteral;
  types::LogicalType type;
  int input_index = -1;     ///< kInputRef: column of the input RowBatch
  LiteralValue literal;     ///< kLiteral
  ScalarOp op = ScalarOp::kPlus;  ///< kCall
  std::vector<ExprPtr> args;      ///< kCall
  std::shared_ptr<const ScalarFunction> function;  ///< kCall of kUserFunction
  std::string function_name;                       ///< its name as registered (explain)

  /// SQL-like text for explain, e.g. "+($1, 1)" or "UPPER($0)". Input refs print as $i
  /// unless `names` gives column names.
  std::string toString(const std::vector<std::string>* names = nullptr) const;
};

/// Builders. makeCall infers the result type by Flink's rules (numeric promotion, DECIMAL precision
/// and scale, NULL propagation), inserts implicit casts, and throws UserError with a message like
/// "Cannot apply '+' to arguments of type '<INT> + <STRING>'" when the types do not fit. The planner
/// adds the SQL position to that message.
ExprPtr makeInputRef(int index, const types::LogicalType& type);
ExprPtr makeLiteral(LiteralValue value, const types::LogicalType& type);
ExprPtr makeCall(ScalarOp op, std::vector<ExprPtr> args);
/// A call of a user-defined scalar function: asks `fn` for the result type (ScalarFunction::inferType)
/// and casts the arguments it asks for. Throws UserError when `fn` refuses the arguments.
ExprPtr makeUserFunctionCall(const std::string& name, std::shared_ptr<const ScalarFunction> fn,
                             std::vector<ExprPtr> args);
/// Casts each of `args` to the type a user-defined function's inferType asked for (`types`, same size);
/// NULL literals become typed NULLs, character strings are left as they are.
void castUserFunctionArguments(std::vector<ExprPtr>& args, const std::vector<types::LogicalType>& types);
/// CAST(value AS target); throws UserError when the cast is not supported. A cast between
/// TIMESTAMP_LTZ and another type (castNeedsTimeZone) converts in the session zone `time_zone` (a zone
/// id of `table.local-time-zone`, validated here; it becomes the call's second argument); without one
/// such a cast throws UserError.
ExprPtr makeCast(ExprPtr value, const types::LogicalType& target, const std::string& time_zone = "");

/// TRY_CAST(value AS target): like makeCast, but the result is nullable and a value that does not
/// convert gives NULL instead of failing the job (Flink 1.15+).
ExprPtr makeTryCast(ExprPtr value, const types::LogicalType& target, const std::string& time_zone = "");

/// True when CAST(from AS to) converts through the session time zone: exactly one side is
/// TIMESTAMP_LTZ (TIMESTAMP, DATE, TIME and STRING to or from TIMESTAMP_LTZ).
bool castNeedsTimeZone(const types::LogicalType& from, const types::LogicalType& to);

/// Literal builders typed by Flink's rules for SQL literals (Calcite's SqlLiteral typing):
///  - integer "42" -> INT NOT NULL, BIGINT NOT NULL when it does not fit INT, DECIMAL(p,0) beyond BIGINT
///    (precision <= 18 only; larger throws UserError);
///  - exact "1.50" -> DECIMAL(3, 2) NOT NULL (precision = all digits, at least the scale + 1 for "0.5");
///  - approximate "1e3" -> DOUBLE NOT NULL;
///  - string 'abc' -> CHAR(3) NOT NULL (length in characters; '' is CHAR(0));
///  - TIMESTAMP '2015-01-01 00:00:00[.fff]' -> TIMESTAMP(p) NOT NULL with p = fraction digits (max 3 kept);
///  - INTERVAL -> INTERVAL DAY TO SECOND NOT NULL holding milliseconds.
/// Text is as written without sign. Throws UserError naming the text when it is malformed.
ExprPtr makeIntegerLiteral(const std::string& digits);
ExprPtr makeDecimalLiteral(const std::string& text);
ExprPtr makeApproxLiteral(const std::string& text);
ExprPtr makeStringLiteral(std::string text);
ExprPtr makeBooleanLiteral(bool value);
/// NULL literal of type NULL (any call gives it a real type by inference).
ExprPtr makeNullLiteral();
ExprPtr makeTimestampLiteral(const std::string& text);
ExprPtr makeIntervalLiteral(int64_t millis);

/// Looks up a function written by name in SQL (upper case): UPPER, LOWER, TRIM, LTRIM, RTRIM,
/// CHAR_LENGTH, CHARACTER_LENGTH, SUBSTRING, SUBSTR, LPAD, RPAD, CONCAT, MOD, ROUND, ABS, COALESCE,
/// TO_TIMESTAMP, DATE_FORMAT, HOUR, MINUTE, SECOND, YEAR, MONTH, DAYOFMONTH. Operators (+, =, AND,
/// LIKE, ...) are not listed: the planner maps them from the AST directly.
std::optional<ScalarOp> scalarFunctionByName(const std::string& name);
/// Every name scalarFunctionByName knows (SHOW FUNCTIONS), sorted.
std::vector<std::string> scalarFunctionNames();

/// True for the functions that read the session time zone (`table.local-time-zone`: CURRENT_TIMESTAMP,
/// NOW, LOCALTIMESTAMP, CURRENT_DATE, CURRENT_TIME, LOCALTIME, UNIX_TIMESTAMP, FROM_UNIXTIME): the planner
/// appends the zone id as a last string literal argument; makeCall then validates it against the
/// time-zone database ('default' is the system zone, as Flink) and throws UserError when unknown.
bool usesSessionTimeZone(ScalarOp op);

/// The name an operator or function prints with in explain and errors: "+", "=", "AND", "UPPER",
/// "CHAR_LENGTH", "IS NULL", "CAST", ...
const char* scalarOpName(ScalarOp op);

/// Flink's LogicalTypeMerging.findCommonType (the least restrictive type) over `types`, e.g.
/// INT, BIGINT -> BIGINT; INT, DECIMAL(5,2) -> DECIMAL(12,2); CHAR(1), CHAR(3) -> VARCHAR(3);
/// NOT NULL only when every input is NOT NULL. Empty when there is none (e.g. INT and STRING).
std::optional<types::LogicalType> findCommonType(const std::vector<types::LogicalType>& types);

/// True when CAST(from AS to) is supported (Flink's explicit cast table, for the types of this engine).
bool supportsExplicitCast(const types::LogicalType& from, const types::LogicalType& to);

}  // namespace sluice::table
