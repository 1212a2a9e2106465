#pragma once
/// Internal: Flink's type rules used by makeCall and the evaluator (not included from other modules).
/// Sources: flink-table-common LogicalTypeMerging (decimal precision/scale, common type),
/// FlinkTypeFactory / FlinkTypeSystem (integer arithmetic), Calcite's SqlStdOperatorTable return types.

#include <cstdint>

#include "types/logical_type.h"

namespace sluice::table::internal {

/// DECIMAL(p, s) as precision/scale pair.
struct DecimalPs {
  int32_t precision;
  int32_t scale;
};

/// The DECIMAL view of an exact numeric type: INT -> (10, 0), BIGINT -> (19, 0), DECIMAL -> (p, s)
/// (Flink's LogicalTypeMerging / DecimalType.of for integral types).
DecimalPs decimalView(const types::LogicalType& t);

/// LogicalTypeMerging.findAdditionDecimalType / findMultiplicationDecimalType / findDivisionDecimalType /
/// findModuloDecimalType / findRoundDecimalType, each followed by adjustPrecisionScale (max 38, keep at
/// least min(scale, 6) fraction digits).
DecimalPs additionDecimal(DecimalPs a, DecimalPs b);
DecimalPs multiplicationDecimal(DecimalPs a, DecimalPs b);
DecimalPs divisionDecimal(DecimalPs a, DecimalPs b);
DecimalPs moduloDecimal(DecimalPs a, DecimalPs b);
DecimalPs roundDecimal(DecimalPs a, int32_t round_to);

/// True when values of the two types can be compared with =, <, IN, BETWEEN (Calcite's
/// SqlTypeUtil.isComparable: same type family; no implicit STRING <-> number coercion since Flink
/// disables Calcite's type coercion).
bool isComparable(const types::LogicalType& a, const types::LogicalType& b);

/// 10^n for 0 <= n <= 18.
int64_t pow10(int n);

}  // namespace sluice::table::internal
