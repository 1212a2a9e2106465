#include "table/functions/type_rules.h"

#include <algorithm>
#include <optional>

#include "common/error.h"
#include "table/functions/expression.h"

namespace sluice::table {

using types::LogicalType;
using types::TypeId;

namespace internal {

namespace {
// LogicalTypeMerging.MINIMUM_ADJUSTED_SCALE.
constexpr int32_t kMinimumAdjustedScale = 6;

DecimalPs adjustPrecisionScale(int32_t precision, int32_t scale) {
  if (precision <= types::kMaxDecimalPrecision) return {precision, scale};
  const int32_t digit_part = precision - scale;
  const int32_t min_scale_part = std::min(scale, kMinimumAdjustedScale);
  const int32_t adjusted = std::max(types::kMaxDecimalPrecision - digit_part, min_scale_part);
  return {types::kMaxDecimalPrecision, adjusted};
}
}  // namespace

DecimalPs decimalView(const LogicalType& t) {
  switch (t.id) {
    case TypeId::kTinyInt: return {3, 0};
    case TypeId::kSmallInt: return {5, 0};
    case TypeId::kInt: return {10, 0};
    case TypeId::kBigInt: return {19, 0};
    case TypeId::kBoolean: return {1, 0};
    default: return {t.precision, t.scale};
  }
}

DecimalPs additionDecimal(DecimalPs a, DecimalPs b) {
  const int32_t scale = std::max(a.scale, b.scale);
  const int32_t precision = std::max(a.precision - a.scale, b.precision - b.scale) + scale + 1;
  return adjustPrecisionScale(precision, scale);
}

DecimalPs multiplicationDecimal(DecimalPs a, DecimalPs b) {
  return adjustPrecisionScale(a.precision + b.precision + 1, a.scale + b.scale);
}

DecimalPs divisionDecimal(DecimalPs a, DecimalPs b) {
  const int32_t scale = std::max(6, a.scale + b.precision + 1);
  return adjustPrecisionScale(a.precision - a.scale + b.scale + scale, scale);
}

DecimalPs moduloDecimal(DecimalPs a, DecimalPs b) {
  const int32_t scale = std::max(a.scale, b.scale);
  return adjustPrecisionScale(std::min(a.precision - a.scale, b.precision - b.scale) + scale, scale);
}

DecimalPs roundDecimal(DecimalPs a, int32_t r) {
  if (r >= a.scale) return a;
  if (r < 0) return {std::min(types::kMaxDecimalPrecision, 1 + a.precision - a.scale), 0};
  // Rounding may add a digit, hence the +1.
  return {1 + a.precision - a.scale + r, r};
}

bool isComparable(const LogicalType& a, const LogicalType& b) {
  if (a.id == TypeId::kNull || b.id == TypeId::kNull) return true;
  if (a.isNumeric() && b.isNumeric()) return true;
  if (a.isString() && b.isString()) return true;
  return a.id == b.id;
}

int64_t pow10(int n) {
  static constexpr int64_t kTable[] = {1LL,
                                       10LL,
                                       100LL,
                                       1000LL,
                                       10000LL,
                                       100000LL,
                                       1000000LL,
                                       10000000LL,
                                       100000000LL,
                                       1000000000LL,
                                       10000000000LL,
                                       100000000000LL,
                                       1000000000000LL,
                                       10000000000000LL,
                                       100000000000000LL,
                                       1000000000000000LL,
                                       10000000000000000LL,
                                       100000000000000000LL,
                                       1000000000000000000LL};
  SLUICE_CHECK(n >= 0 && n <= 18, "pow10 out of range: {}", n);
  return kTable[n];
}

}  // namespace internal

namespace {

int32_t combineLength(int32_t a, int32_t b) { return std::max(a, b); }

// One step of LogicalTypeMerging.findCommonNullableType over two non-NULL types (nullability ignored).
std::optional<LogicalType> commonOfTwo(const LogicalType& r, const LogicalType& t) {
  if (r.isString() && t.isString()) {
    const int32_t len = combineLength(r.precision, t.precision);
    if (r.id == TypeId::kVarchar || t.id == TypeId::kVarchar) return LogicalType::varchar(len);
    // Different fixed lengths become VARCHAR so that no padding is added (Flink deviates from the
    // standard here).
    if (r.precision != t.precision) return LogicalType::varchar(len);
    return LogicalType::charType(len);
  }
  if (r.isNumeric() && t.isNumeric()) {
    if (r.id == TypeId::kDouble || t.id == TypeId::kDouble) return LogicalType::doubleType();
    // LogicalTypeMerging: FLOAT with DECIMAL is DOUBLE, FLOAT with an integer is FLOAT.
    if (r.id == TypeId::kFloat || t.id == TypeId::kFloat) {
      if (r.id == TypeId::kDecimal || t.id == TypeId::kDecimal) return LogicalType::doubleType();
      return LogicalType::floatType();
    }
    if (r.id == TypeId::kDecimal || t.id == TypeId::kDecimal) {
      const internal::DecimalPs a = internal::decimalView(r);
      const internal::DecimalPs b = internal::decimalView(t);
      const int32_t scale = std::max(a.scale, b.scale);
      const int32_t digits = std::max(a.precision - a.scale, b.precision - b.scale);
      return LogicalType::decimal(std::min(digits + scale, types::kMaxDecimalPrecision), scale);
    }
    // Integers: the wider one.
    return r.integralBits() >= t.integralBits() ? r.withNullable(true) : t.withNullable(true);
  }
  if (r.id == TypeId::kTimestamp && t.id == TypeId::kTimestamp)
    return LogicalType::timestamp(std::max(r.precision, t.precision));
  if (r.id == TypeId::kTimestampLtz && t.id == TypeId::kTimestampLtz)
    return LogicalType::timestampLtz(std::max(r.precision, t.precision));
  // TIMESTAMP with TIMESTAMP_LTZ (Flink: TIMESTAMP_LTZ) needs the session zone to convert: the planner
  // casts the TIMESTAMP side first (sql_to_rel_expr.cc), so here the pair has no common type.
  if (r.id == TypeId::kTimestampLtz && t.id == TypeId::kIntervalDayTime) return r.withNullable(true);
  if (r.id == TypeId::kIntervalDayTime && t.id == TypeId::kTimestampLtz) return t.withNullable(true);
  // DATETIME with INTERVAL keeps the DATETIME (findCommonTypePattern).
  if (r.id == TypeId::kTimestamp && t.id == TypeId::kIntervalDayTime) return r.withNullable(true);
  if (r.id == TypeId::kIntervalDayTime && t.id == TypeId::kTimestamp) return t.withNullable(true);
  if (r.id == t.id) return r.withNullable(true);
  return std::nullopt;
}

}  // namespace

std::optional<LogicalType> findCommonType(const std::vector<LogicalType>& types) {
  if (types.empty()) return std::nullopt;
  bool any_nullable = false;
  std::optional<LogicalType> result;
  for (const LogicalType& t : types) {
    any_nullable = any_nullable || t.nullable;
    if (t.id == TypeId::kNull) continue;
    if (!result) {
      result = t.withNullable(true);
      continue;
    }
    result = commonOfTwo(*result, t.withNullable(true));
    if (!result) return std::nullopt;
  }
  if (!result) return std::nullopt;  // only NULLs: reserved for untyped literals
  return result->withNullable(any_nullable);
}

bool castNeedsTimeZone(const LogicalType& from, const LogicalType& to) {
  if (from.id == TypeId::kNull || to.id == TypeId::kNull) return false;
  return (from.id == TypeId::kTimestampLtz) != (to.id == TypeId::kTimestampLtz);
}

bool supportsExplicitCast(const LogicalType& from, const LogicalType& to) {
  if (from.id == TypeId::kNull) return to.id != TypeId::kNull;
  if (to.id == TypeId::kNull) return false;
  if (to.isString()) return true;  // everything has a text form
  if (from.isString()) return to.id != TypeId::kIntervalDayTime;
  switch (to.id) {
    case TypeId::kBoolean:
      return from.id == TypeId::kBoolean || from.isNumeric();
    case TypeId::kTinyInt:
    case TypeId::kSmallInt:
    case TypeId::kInt:
    case TypeId::kBigInt:
    case TypeId::kFloat:
    case TypeId::kDouble:
    case TypeId::kDecimal:
      return from.id == TypeId::kBoolean || from.isNumeric();
    // LogicalTypeCasts: TIMESTAMP and TIMESTAMP_LTZ from the DATETIME family (numerics are not castable here).
    case TypeId::kTimestamp:
    case TypeId::kTimestampLtz:
      return from.isTimestampFamily() || from.id == TypeId::kDate || from.id == TypeId::kTime;
    case TypeId::kDate:
      return from.id == TypeId::kDate || from.isTimestampFamily();
    case TypeId::kTime:
      return from.id == TypeId::kTime || from.isTimestampFamily();
    case TypeId::kIntervalDayTime:
      return from.id == TypeId::kIntervalDayTime;
    default:
      return false;
  }
}

}  // namespace sluice::table
