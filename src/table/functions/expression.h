#pragma once
/// Resolved, typed scalar expressions (Calcite's RexNode role): what the planner builds from the AST
/// after name resolution, and what the vectorized evaluator runs. Plain data, shared read-only by
/// all subtasks once built.

#include <cstdint>
#include <memory>
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
};

struct Expr;
using ExprPtr = std::shared_ptr<const Expr>;

/// One node. `type` is the inferred result type (with nullability).
struct Expr {
  ExprKind kind = ExprKind::kLiteral;
  types::LogicalType type;
  int input_index = -1;     ///< kInputRef: column of the input RowBatch
  LiteralValue literal;     ///< kLiteral
  ScalarOp op = ScalarOp::kPlus;  ///< kCall
  std::vector<ExprPtr> args;      ///< kCall

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
/// CAST(value AS target); throws UserError when the cast is not supported.
ExprPtr makeCast(ExprPtr value, const types::LogicalType& target);

}  // namespace sluice::table
