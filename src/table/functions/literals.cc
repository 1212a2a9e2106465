// Literal builders typed like Calcite types SQL literals (see expression.h).
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <limits>

#include <fmt/format.h>

#include "common/error.h"
#include "table/functions/expression.h"
#include "types/value_format.h"

namespace sluice::table {

using types::LogicalType;

ExprPtr makeIntegerLiteral(const std::string& digits) {
  uint64_t v = 0;
  auto res = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (digits.empty() || res.ptr != digits.data() + digits.size() || (res.ec != std::errc() && res.ec != std::errc::result_out_of_range))
    throw UserError(fmt::format("Invalid integer literal '{}'", digits));
  if (res.ec == std::errc::result_out_of_range || v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    throw UserError(fmt::format("Numeric literal '{}' out of range (DECIMAL values are limited to 18 digits)", digits));
  const int64_t s = static_cast<int64_t>(v);
  if (s <= std::numeric_limits<int32_t>::max()) return makeLiteral(s, LogicalType::integer(false));
  return makeLiteral(s, LogicalType::bigint(false));
}

ExprPtr makeDecimalLiteral(const std::string& text) {
  const size_t dot = text.find('.');
  const int32_t scale = dot == std::string::npos ? 0 : static_cast<int32_t>(text.size() - dot - 1);
  int64_t unscaled = 0;
  if (!types::parseDecimal(text, scale, unscaled))
    throw UserError(fmt::format("Numeric literal '{}' out of range (DECIMAL values are limited to 18 digits)", text));
  // Precision = digits of the unscaled value (BigDecimal.precision), at least the scale and 1.
  int32_t precision = 0;
  for (uint64_t m = unscaled < 0 ? 0 - static_cast<uint64_t>(unscaled) : static_cast<uint64_t>(unscaled); m > 0; m /= 10) ++precision;
  precision = std::max({precision, scale, int32_t{1}});
  if (precision > 18) throw UserError(fmt::format("Numeric literal '{}' out of range (DECIMAL values are limited to 18 digits)", text));
  return makeLiteral(unscaled, LogicalType::decimal(precision, scale, false));
}

ExprPtr makeApproxLiteral(const std::string& text) {
  double d = 0;
  if (!types::parseDouble(text, d)) throw UserError(fmt::format("Invalid numeric literal '{}'", text));
  return makeLiteral(d, LogicalType::doubleType(false));
}

ExprPtr makeStringLiteral(std::string text) {
  int32_t chars = 0;
  for (char c : text) chars += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return makeLiteral(std::move(text), LogicalType::charType(chars, false));
}

ExprPtr makeBooleanLiteral(bool value) { return makeLiteral(int64_t{value ? 1 : 0}, LogicalType::boolean(false)); }

ExprPtr makeNullLiteral() { return makeLiteral(std::monostate{}, LogicalType::null()); }

ExprPtr makeTimestampLiteral(const std::string& text) {
  int64_t ms = 0;
  int frac = 0;
  if (!types::parseTimestamp(text, ms, &frac))
    throw UserError(fmt::format("Illegal TIMESTAMP literal '{}': use format 'yyyy-MM-dd HH:mm:ss[.SSS]'", text));
  return makeLiteral(ms, LogicalType::timestamp(std::min(frac, 3), false));
}

ExprPtr makeIntervalLiteral(int64_t millis) { return makeLiteral(millis, LogicalType::intervalDayTime(false)); }

}  // namespace sluice::table
