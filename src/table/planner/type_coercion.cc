#include "table/planner/type_coercion.h"

#include <algorithm>

namespace sluice::table {

using types::LogicalType;
using types::TypeId;

namespace {
int numericRank(TypeId id) {
  switch (id) {
    case TypeId::kInt: return 1;
    case TypeId::kBigInt: return 2;
    case TypeId::kDecimal: return 3;
    case TypeId::kDouble: return 4;
    default: return 0;
  }
}

int integerDigits(const LogicalType& t) {
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
  int ra = numericRank(a.id), rb = numericRank(b.id);
  if (ra && rb) {
    if (a.id == TypeId::kDouble || b.id == TypeId::kDouble) return LogicalType::doubleType(nullable);
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
  if (from.id == TypeId::kTimestamp && to.id == TypeId::kTimestamp) return true;
  int rf = numericRank(from.id), rt = numericRank(to.id);
  if (rf && rt) {
    if (to.id == TypeId::kDouble) return true;
    // Flink's LogicalTypeCasts: every exact numeric type casts implicitly to any DECIMAL.
    if (to.id == TypeId::kDecimal) return from.id != TypeId::kDouble;
    return rf <= rt && from.id != TypeId::kDecimal;
  }
  return false;
}

}  // namespace sluice::table
