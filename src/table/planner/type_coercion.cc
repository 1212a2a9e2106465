#include "table/planner/type_coercion.h"

#include <algorithm>

namespace sluice::table {

using types::LogicalType;
using types::TypeId;

namespace {
int numericRank(TypeId id) {
  switch (id) {
    case TypeId::kTinyInt: return 1;
    case TypeId::kSmallInt: return 2;
    case TypeId::kInt: return 3;
    case TypeId::kBigInt: return 4;
    case TypeId::kDecimal: return 5;
    case TypeId::kFloat: return 6;
    case TypeId::kDouble: return 7;
    default: return 0;
  }
}

int integerDigits(const LogicalType& t) {
  if (t.id == TypeId::kTinyInt) return 3;
  if (t.id == TypeId::kSmallInt) return 5;
  if (t.id == TypeId::kInt) return 10;
  if (t.id == TypeId::kBigInt) return 19;
  return t.precision - t.scale;
}
}  // namespace

std::optional<LogicalType> leastRestrictive(const LogicalType& a, const LogicalType& b) {
  bool nullable = a.nullable || b.nullable;
  if (a.id == TypeId::kNull) return b.withNullable(true);
  if (b.id == TypeId::kNull) return a.withNullable(true);
  if (a.sameRoot(b)) return a.withNullable(nullable);
  if (a.isString() && b.isString()) {
    if (a.id == TypeId::kChar && b.id == TypeId::kChar)
      return LogicalType::charType(std::max(a.precision, b.precision), nullable);
    return LogicalType::varchar(std::max(a.precision, b.precision), nullable);
  }
  if (a.id == TypeId::kTimestamp && b.id == TypeId::kTimestamp)
    return LogicalType::timestamp(std::max(a.precision, b.precision), nullable);
  if (a.id == TypeId::kTimestampLtz && b.id == TypeId::kTimestampLtz)
    return LogicalType::timestampLtz(std::max(a.precision, b.precision), nullable);
  int ra = numericRank(a.id), rb = numericRank(b.id);
  if (ra && rb) {
    if (a.id == TypeId::kDouble || b.id == TypeId::kDouble) return LogicalType::doubleType(nullable);
    // Calcite's leastRestrictive: FLOAT with DECIMAL is DOUBLE, FLOAT with an integer is FLOAT.
    if (a.id == TypeId::kFloat || b.id == TypeId::kFloat) {
      if (a.id == TypeId::kDecimal || b.id == TypeId::kDecimal) return LogicalType::doubleType(nullable);
      return LogicalType::floatType(nullable);
    }
    if (a.id == TypeId::kDecimal || b.id == TypeId::kDecimal) {
      int scale = std::max(a.id == TypeId::kDecimal ? a.scale : 0, b.id == TypeId::kDecimal ? b.scale : 0);
      int digits = std::max(integerDigits(a), integerDigits(b));
      return LogicalType::decimal(std::min(digits + scale, types::kMaxDecimalPrecision), scale, nullable);
    }
    return ra >= rb ? a.withNullable(nullable) : b.withNullable(nullable);
  }
  return std::nullopt;
}

bool canAssign(const LogicalType& from, const LogicalType& to) {
  if (from.id == TypeId::kNull) return true;
  if (from.sameRoot(to)) return true;
  if (from.isString() && to.isString()) return true;
  // LogicalTypeCasts: TIMESTAMP and TIMESTAMP_LTZ cast implicitly into each other (through the
  // session zone: the caller passes it to makeCast).
  if (from.isTimestampFamily() && to.isTimestampFamily()) return true;
  int rf = numericRank(from.id), rt = numericRank(to.id);
  if (rf && rt) {
    // Flink's LogicalTypeCasts: everything numeric casts implicitly to DOUBLE, all but DOUBLE to FLOAT,
    // every exact numeric type to any DECIMAL, and integers to wider integers.
    if (to.id == TypeId::kDouble) return true;
    if (to.id == TypeId::kFloat) return from.id != TypeId::kDouble;
    if (to.id == TypeId::kDecimal) return !from.isApproximate();
    return rf <= rt && from.isIntegral();
  }
  return false;
}

}  // namespace sluice::table
