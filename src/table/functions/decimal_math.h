#pragma once
/// Internal: exact DECIMAL helpers over 128-bit intermediates (values are stored as int64 unscaled).

#include <cstdint>

#include "common/error.h"

namespace sluice::table::internal {

using Int128 = __int128;

/// 10^n as Int128 for 0 <= n <= 38.
inline Int128 pow10Wide(int n) {
  SLUICE_CHECK(n >= 0 && n <= 38, "pow10Wide out of range: {}", n);
  Int128 v = 1;
  for (int i = 0; i < n; ++i) v *= 10;
  return v;
}

/// v / d rounded HALF_UP (ties away from zero), d > 0.
inline Int128 divideHalfUp(Int128 v, Int128 d) {
  Int128 q = v / d;
  Int128 r = v % d;
  if (r < 0) r = -r;
  if (r * 2 >= d) q += v < 0 ? -1 : 1;
  return q;
}

/// Changes the scale of an unscaled value, rounding HALF_UP when the scale shrinks. Returns false on
/// Int128 overflow.
inline bool rescale(Int128 v, int from_scale, int to_scale, Int128& out) {
  if (to_scale == from_scale) {
    out = v;
    return true;
  }
  if (to_scale > from_scale) {
    const int k = to_scale - from_scale;
    if (k > 38) return v == 0 ? (out = 0, true) : false;
    return !__builtin_mul_overflow(v, pow10Wide(k), &out);
  }
  const int k = from_scale - to_scale;
  if (k > 38) {
    out = 0;
    return true;
  }
  out = divideHalfUp(v, pow10Wide(k));
  return true;
}

/// Outcome of fitting a wide value into a DECIMAL(p, s) column.
enum class FitResult { kOk, kPrecisionOverflow, kInt64Overflow };

/// Checks `v` against DECIMAL precision `p` (Flink gives NULL when the precision is exceeded; only
/// checked for p <= 18, which is exact in int64) and against the int64 storage.
inline FitResult fitDecimal(Int128 v, int precision, int64_t& out) {
  if (v > INT64_MAX || v < INT64_MIN) return FitResult::kInt64Overflow;
  if (precision <= 18) {
    const Int128 limit = pow10Wide(precision);
    if (v >= limit || v <= -limit) return FitResult::kPrecisionOverflow;
  }
  out = static_cast<int64_t>(v);
  return FitResult::kOk;
}

}  // namespace sluice::table::internal
