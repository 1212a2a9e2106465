#pragma once
/// Internal to the functions module: Flink's built-in scalar functions beyond the core operators
/// (math, conditional, string, regex, hash): their names, type inference (builtins.cc) and the
/// row-at-a-time kernels that run them (kernels_math.cc, kernels_text.cc). Semantics follow Flink's
/// SqlFunctionUtils / Calcite's SqlFunctions and the "System (Built-in) Functions" page; each kernel
/// says where it differs.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "table/functions/evaluator_internal.h"

namespace sluice::table::internal {

// Shared type-inference helpers (expression.cc).
[[noreturn]] void cannotApply(ScalarOp op, const std::vector<ExprPtr>& args, const std::string& forms);
void checkArity(ScalarOp op, size_t n, size_t lo, size_t hi);
bool isNullLiteral(const ExprPtr& e);
ExprPtr typedNull(const types::LogicalType& t);
void retypeNulls(std::vector<ExprPtr>& args, size_t from, const types::LogicalType& t);
bool anyNullable(const std::vector<ExprPtr>& args);
void requireBoolean(ScalarOp op, std::vector<ExprPtr>& args, size_t from, size_t step, const std::string& forms,
                    size_t end = static_cast<size_t>(-1));
void requireString(ScalarOp op, std::vector<ExprPtr>& args, size_t i, const std::string& forms);
void requireIntegral(ScalarOp op, std::vector<ExprPtr>& args, size_t i, const std::string& forms);
void requireTimestamp(ScalarOp op, std::vector<ExprPtr>& args, size_t i, const std::string& forms);

/// True for the ops typed and compiled by this file set (kPower and after).
bool isBuiltin(ScalarOp op);
/// SQL name of a built-in ("POWER", "IS DISTINCT FROM"); nullptr for other ops.
const char* builtinName(ScalarOp op);
/// Function looked up by its SQL name (upper case), e.g. "CEILING" -> kCeil.
std::optional<ScalarOp> builtinByName(const std::string& name);
/// The SQL names builtinByName knows.
std::vector<std::string> builtinNames();
/// Checks arity and argument types, retypes NULL literals, returns the result type. Throws UserError
/// ("Cannot apply ...", "Invalid number of arguments ...").
types::LogicalType inferBuiltinType(ScalarOp op, std::vector<ExprPtr>& args);
/// RAND, RAND_INTEGER, CURRENT_TIMESTAMP, ...: a new value per row or batch, so never folded.
bool isNonDeterministic(ScalarOp op);

/// Units of EXTRACT, TIMESTAMPADD, TIMESTAMPDIFF and FLOOR/CEIL(x TO unit) (Calcite's TimeUnitRange).
enum class TimeUnit {
  kMillennium, kCentury, kDecade, kYear, kQuarter, kMonth, kWeek, kDay, kHour, kMinute, kSecond,
  kMillisecond, kMicrosecond, kDow, kIsoDow, kDoy, kEpoch,
};
/// "YEAR", "SQL_TSI_DAY", "DOW", ... (upper case) -> unit.
std::optional<TimeUnit> parseTimeUnit(std::string_view name);
/// The unit of a string literal argument written by the parser; throws UserError for an unknown one.
TimeUnit unitArg(ScalarOp op, const ExprPtr& e);

/// The temporal built-ins (kExtract and after, and FLOOR/CEIL with a unit): builtins_time.cc.
bool isTemporal(ScalarOp op, size_t num_args);
types::LogicalType inferTemporalType(ScalarOp op, std::vector<ExprPtr>& args);
/// Kernels in kernels_temporal.cc; constant unit / zone / format arguments are read once.
NodePtr makeTemporalNode(ScalarOp op, const types::LogicalType& type, std::vector<NodePtr> args, int reg);

/// JSON_VALUE / JSON_QUERY / JSON_EXISTS / JSON_OBJECT / JSON_ARRAY (kernels_json.cc, SQL/JSON path
/// subset: [lax|strict] $ followed by .key, ."key", .*, [n], [*]).
bool isJson(ScalarOp op);
types::LogicalType inferJsonType(ScalarOp op, std::vector<ExprPtr>& args);
/// `raw[k]`: argument k is JSON text to embed as JSON.
NodePtr makeJsonNode(ScalarOp op, const types::LogicalType& type, std::vector<NodePtr> args, const std::vector<bool>& raw,
                     int reg);

/// The string of a constant node (e.g. a unit or zone literal); empty when NULL.
std::string constString(const Node& node);

/// Row `i` of the arguments of a row kernel (constants are one-row columns).
struct RowArgs {
  const std::vector<const types::Column*>& cols;
  const std::vector<uint8_t>& consts;
  size_t i;
  size_t row(size_t k) const { return consts[k] ? 0 : i; }
  bool valid(size_t k) const { return cols[k]->validity()[row(k)] != 0; }
  int64_t l(size_t k) const { return cols[k]->getLong(row(k)); }
  double d(size_t k) const { return cols[k]->getDouble(row(k)); }
  std::string_view s(size_t k) const { return cols[k]->getString(row(k)); }
  size_t size() const { return cols.size(); }
};

/// Computes row `i` into `out` (longs()/doubles()[i] or setString); returns false for NULL.
using RowFn = std::function<bool(const RowArgs& args, types::Column& out, size_t i)>;

/// A node that evaluates its arguments column-wise and then `fn` once per active row. `strict`:
/// a NULL argument gives NULL without calling `fn` (Flink's default for built-ins). `may_throw`:
/// `fn` may throw UserError for a row, so callers pass masks (lazy CASE/AND/OR).
NodePtr makeRowFunctionNode(const types::LogicalType& type, std::vector<NodePtr> args, bool strict, bool may_throw,
                            RowFn fn, int reg);

/// A call of a user-defined scalar function (user_function.cc): a row node over its compiled arguments
/// that wraps what the function throws with its name and the call's text.
NodePtr makeUserFunctionNode(const Expr& call, std::vector<NodePtr> args, int reg);

/// Math functions (kernels_math.cc): DOUBLE functions get DOUBLE arguments; CEIL/FLOOR/SIGN/TRUNCATE
/// get the argument in its own type. `state_reg` is a register that keeps RAND's generator between
/// batches (one per scratch, so one per subtask).
NodePtr makeMathNode(ScalarOp op, const types::LogicalType& type, std::vector<NodePtr> args, int reg, int state_reg);
/// String, regex and hash functions (kernels_text.cc); arguments already in their parameter types.
NodePtr makeTextNode(ScalarOp op, const types::LogicalType& type, std::vector<NodePtr> args, int reg);
/// GREATEST / LEAST / IS [NOT] DISTINCT FROM over arguments of one common type.
NodePtr makeCompareListNode(ScalarOp op, const types::LogicalType& type, std::vector<NodePtr> args, int reg);

}  // namespace sluice::table::internal
