#include "table/runtime/aggregate_call.h"

#include <algorithm>

#include "common/error.h"

namespace sluice::table {

using types::LogicalType;
using types::TypeId;

// Flink's rules, per aggregate:
//  - COUNT(*) / COUNT(x): Count1AggFunction / CountAggFunction, getResultType() = BIGINT NOT NULL.
//  - SUM: SumAggFunction.ByteSumAggFunction -> TINYINT, ShortSumAggFunction -> SMALLINT,
//    IntSumAggFunction -> INT, LongSumAggFunction -> BIGINT, FloatSumAggFunction -> FLOAT,
//    DoubleSumAggFunction -> DOUBLE, DecimalSumAggFunction -> LogicalTypeMerging.findSumAggType =
//    DECIMAL(38, s). The sum is kept in the result type and wraps (Java's (byte)(sum + x)).
//  - AVG: AvgAggFunction.Byte/Short/IntAvgAggFunction -> the argument type (sum kept as BIGINT),
//    LongAvgAggFunction -> BIGINT, FloatAvgAggFunction -> FLOAT and DoubleAvgAggFunction -> DOUBLE
//    (sum kept as DOUBLE), DecimalAvgAggFunction -> LogicalTypeMerging.findAvgAggType = DECIMAL(38, max(6, s)).
//  - MIN / MAX (MinAggFunction, MaxWithRetractAggFunction): the argument type.
LogicalType AggregateCall::resultType(AggKind kind, const LogicalType& arg) {
  switch (kind) {
    case AggKind::kCountStar:
    case AggKind::kCount:
      return LogicalType::bigint(false);
    case AggKind::kSum:
      switch (arg.id) {
        case TypeId::kTinyInt: case TypeId::kSmallInt: case TypeId::kInt: case TypeId::kBigInt:
        case TypeId::kFloat: case TypeId::kDouble:
          return arg.withNullable(true);
        case TypeId::kDecimal: return LogicalType::decimal(types::kMaxDecimalPrecision, arg.scale);
        default:
          throw UserError(fmt::format("SUM does not support argument type {}; it needs a numeric type",
                                      arg.toString()));
      }
    case AggKind::kAvg:
      switch (arg.id) {
        case TypeId::kTinyInt: case TypeId::kSmallInt: case TypeId::kInt: case TypeId::kBigInt:
        case TypeId::kFloat: case TypeId::kDouble:
          return arg.withNullable(true);
        case TypeId::kDecimal:
          return LogicalType::decimal(types::kMaxDecimalPrecision, std::max<int32_t>(6, arg.scale));
        default:
          throw UserError(fmt::format("AVG does not support argument type {}; it needs a numeric type",
                                      arg.toString()));
      }
    case AggKind::kListAgg:
      if (!arg.isString())
        throw UserError(fmt::format("LISTAGG does not support argument type {}; it needs a string", arg.toString()));
      return LogicalType::string(true);
    case AggKind::kFirstValue:
    case AggKind::kLastValue:
      if (arg.id == TypeId::kNull || arg.id == TypeId::kRow)
        throw UserError(fmt::format("{} does not support argument type {}",
                                    kind == AggKind::kFirstValue ? "FIRST_VALUE" : "LAST_VALUE", arg.toString()));
      return arg.withNullable(true);
    case AggKind::kMin:
    case AggKind::kMax:
      if (arg.id == TypeId::kNull) {
        throw UserError(fmt::format("{} does not support an argument of type NULL",
                                    kind == AggKind::kMin ? "MIN" : "MAX"));
      }
      return arg.withNullable(true);
    case AggKind::kUser:
      throw InternalError("the result type of a user-defined aggregate comes from its function");
  }
  throw InternalError("unknown AggKind");
}

}  // namespace sluice::table
