#include "types/value_format.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>

#include <fmt/format.h>

namespace sluice::types {

namespace {
// Lays out shortest round-trip digits as Java's Double.toString / Float.toString do (the same rules for
// both: plain for 1e-3 <= |v| < 1e7, else "d.dddE[-]n").
template <typename F>
void formatJavaFloating(F v, std::string& out) {
  if (std::isnan(v)) { out += "NaN"; return; }
  if (std::isinf(v)) { out += v > 0 ? "Infinity" : "-Infinity"; return; }
  if (v == 0) { out += std::signbit(v) ? "-0.0" : "0.0"; return; }
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::scientific);
  std::string sci(buf, res.ptr);  // e.g. "-1.2345e+07"
  bool neg = sci[0] == '-';
  if (neg) sci.erase(0, 1);
  size_t e = sci.find('e');
  std::string mant = sci.substr(0, e);
  int exp = std::atoi(sci.c_str() + e + 1);
  std::string digits;
  for (char c : mant)
    if (c != '.') digits += c;
  if (neg) out += '-';
  const F a = std::fabs(v);
  if (a >= F(1e-3) && a < F(1e7)) {
    if (exp >= 0) {
      std::string ip = digits.substr(0, std::min<size_t>(digits.size(), exp + 1));
      while (ip.size() < static_cast<size_t>(exp + 1)) ip += '0';
      std::string fp = digits.size() > static_cast<size_t>(exp + 1) ? digits.substr(exp + 1) : "0";
      out += ip;
      out += '.';
      out += fp;
    } else {
      out += "0.";
      out.append(static_cast<size_t>(-exp - 1), '0');
      out += digits;
    }
  } else {
    out += digits.substr(0, 1);
    out += '.';
    out += digits.size() > 1 ? digits.substr(1) : "0";
    out += 'E';
    out += std::to_string(exp);
  }
}
}  // namespace

void formatDouble(double v, std::string& out) { formatJavaFloating(v, out); }

void formatFloat(double v, std::string& out) { formatJavaFloating(static_cast<float>(v), out); }

void formatDecimal(int64_t unscaled, int32_t scale, std::string& out) {
  bool neg = unscaled < 0;
  uint64_t mag = neg ? 0 - static_cast<uint64_t>(unscaled) : static_cast<uint64_t>(unscaled);
  const std::string digits = std::to_string(mag);
  if (neg) out += '-';
  if (scale <= 0) {
    out += digits;
    return;
  }
  const size_t s = static_cast<size_t>(scale);
  if (digits.size() <= s) {
    out += "0.";
    out.append(s - digits.size(), '0');
    out += digits;
  } else {
    out.append(digits, 0, digits.size() - s);
    out += '.';
    out.append(digits, digits.size() - s, s);
  }
}

void formatDecimalJava(int64_t unscaled, int32_t scale, std::string& out) {
  const bool neg = unscaled < 0;
  const uint64_t mag = neg ? 0 - static_cast<uint64_t>(unscaled) : static_cast<uint64_t>(unscaled);
  const std::string digits = std::to_string(mag);
  const int64_t adjusted = static_cast<int64_t>(digits.size()) - 1 - scale;
  if (scale >= 0 && adjusted >= -6) {
    formatDecimal(unscaled, scale, out);
    return;
  }
  if (neg) out += '-';
  out += digits[0];
  if (digits.size() > 1) {
    out += '.';
    out.append(digits, 1, std::string::npos);
  }
  out += 'E';
  if (adjusted > 0) out += '+';
  out += std::to_string(adjusted);
}

int64_t daysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

void civilFromDays(int64_t z, int64_t& y, unsigned& m, unsigned& d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  y = static_cast<int64_t>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  d = doy - (153 * mp + 2) / 5 + 1;
  m = mp < 10 ? mp + 3 : mp - 9;
  y += m <= 2;
}

DateTimeParts splitTimestamp(int64_t ms) {
  int64_t days = ms >= 0 ? ms / 86400000 : -((-ms + 86399999) / 86400000);
  int64_t rem = ms - days * 86400000;
  DateTimeParts p{};
  civilFromDays(days, p.year, p.month, p.day);
  p.hour = static_cast<unsigned>(rem / 3600000);
  p.minute = static_cast<unsigned>(rem / 60000 % 60);
  p.second = static_cast<unsigned>(rem / 1000 % 60);
  p.millis = static_cast<unsigned>(rem % 1000);
  return p;
}

int64_t joinTimestamp(const DateTimeParts& p) {
  return daysFromCivil(p.year, p.month, p.day) * 86400000 + p.hour * 3600000LL + p.minute * 60000LL +
         p.second * 1000LL + p.millis;
}

void formatTimestampIso(int64_t ms, std::string& out) {
  DateTimeParts p = splitTimestamp(ms);
  out += fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}", p.year, p.month, p.day, p.hour, p.minute);
  if (p.second != 0 || p.millis != 0) out += fmt::format(":{:02}", p.second);
  if (p.millis != 0) out += fmt::format(".{:03}", p.millis);
}

void formatInstantIso(int64_t ms, std::string& out) {
  DateTimeParts p = splitTimestamp(ms);
  out += fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}", p.year, p.month, p.day, p.hour, p.minute, p.second);
  if (p.millis != 0) out += fmt::format(".{:03}", p.millis);
  out += 'Z';
}

void formatInstantText(int64_t ms, bool iso, std::string& out) {
  DateTimeParts p = splitTimestamp(ms);
  out += fmt::format("{:04}-{:02}-{:02}{}{:02}:{:02}:{:02}", p.year, p.month, p.day, iso ? 'T' : ' ', p.hour, p.minute,
                     p.second);
  if (p.millis != 0) {
    std::string frac = fmt::format("{:03}", p.millis);
    while (frac.back() == '0') frac.pop_back();
    out += '.';
    out += frac;
  }
  out += 'Z';
}

void formatTimestampSql(int64_t ms, int32_t precision, std::string& out) {
  DateTimeParts p = splitTimestamp(ms);
  out += fmt::format("{:04}-{:02}-{:02} {:02}:{:02}:{:02}", p.year, p.month, p.day, p.hour, p.minute, p.second);
  if (precision > 0) {
    std::string frac = fmt::format("{:03}", p.millis);
    frac.resize(static_cast<size_t>(precision), '0');
    out += '.';
    out += frac;
  }
}

namespace {
std::string_view trimBlanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// Reads 1..max_digits digits at `pos` into `v`; false when there is no digit.
bool readNumber(std::string_view s, size_t& pos, size_t max_digits, int64_t& v) {
  size_t start = pos;
  v = 0;
  while (pos < s.size() && pos - start < max_digits && s[pos] >= '0' && s[pos] <= '9') v = v * 10 + (s[pos++] - '0');
  return pos > start;
}

bool isLeap(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

// "yyyy-[M]M-[d]d" at `pos`; true when it is a real calendar day.
bool readDate(std::string_view s, size_t& pos, int64_t& y, int64_t& mo, int64_t& d) {
  const size_t start = pos;
  if (!readNumber(s, pos, 4, y) || pos != start + 4) return false;
  if (pos >= s.size() || s[pos++] != '-' || !readNumber(s, pos, 2, mo)) return false;
  if (pos >= s.size() || s[pos++] != '-' || !readNumber(s, pos, 2, d)) return false;
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (mo < 1 || mo > 12 || d < 1) return false;
  return d <= kDays[mo - 1] + (mo == 2 && isLeap(y) ? 1 : 0);
}

// "[H]H:[m]m[:[s]s[.fraction]]" up to the end of `s`: ms of the day (fraction beyond ms truncated) and the
// number of fraction digits; false when malformed or out of range.
bool readTimeToEnd(std::string_view s, size_t& pos, int64_t& millis_of_day, int& fraction_digits) {
  int64_t h, mi, sec = 0, ms = 0;
  fraction_digits = 0;
  if (!readNumber(s, pos, 2, h)) return false;
  if (pos >= s.size() || s[pos++] != ':' || !readNumber(s, pos, 2, mi)) return false;
  if (pos < s.size()) {
    if (s[pos++] != ':' || !readNumber(s, pos, 2, sec)) return false;
    if (pos < s.size()) {
      if (s[pos++] != '.') return false;
      const size_t start = pos;
      while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
        if (pos - start < 3) ms = ms * 10 + (s[pos] - '0');
        ++pos;
      }
      fraction_digits = static_cast<int>(pos - start);
      if (fraction_digits == 0 || fraction_digits > 9 || pos != s.size()) return false;
      for (int i = fraction_digits; i < 3; ++i) ms *= 10;
    }
  }
  if (h > 23 || mi > 59 || sec > 59) return false;
  millis_of_day = ((h * 60 + mi) * 60 + sec) * 1000 + ms;
  return true;
}
}  // namespace

bool parseTimestamp(std::string_view text, int64_t& epoch_ms, int* fraction_digits) {
  std::string_view s = trimBlanks(text);
  size_t pos = 0;
  int64_t y, mo, d, tod = 0;
  int frac = 0;
  if (!readDate(s, pos, y, mo, d)) return false;
  if (pos < s.size()) {
    if (s[pos] != ' ' && s[pos] != 'T') return false;
    ++pos;
    if (!readTimeToEnd(s, pos, tod, frac)) return false;
  }
  epoch_ms = daysFromCivil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d)) * 86400000 + tod;
  if (fraction_digits) *fraction_digits = frac;
  return true;
}

bool decimalFitsPrecision(int64_t unscaled, int32_t precision) {
  if (precision >= 19) return true;
  uint64_t bound = 1;
  for (int32_t k = 0; k < precision; ++k) bound *= 10;
  const uint64_t magnitude = unscaled < 0 ? 0 - static_cast<uint64_t>(unscaled) : static_cast<uint64_t>(unscaled);
  return magnitude < bound;
}

bool parseDecimal(std::string_view text, int32_t scale, int64_t& unscaled) {
  std::string_view s = trimBlanks(text);
  size_t pos = 0;
  bool neg = false;
  if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) neg = s[pos++] == '-';
  // Collect significant digits and the decimal exponent of the last one.
  std::string digits;
  int64_t exp10 = 0;
  bool any = false, dot = false;
  for (; pos < s.size(); ++pos) {
    char c = s[pos];
    if (c >= '0' && c <= '9') {
      any = true;
      if (!(digits.empty() && c == '0')) digits += c;
      if (dot) --exp10;
    } else if (c == '.' && !dot) {
      dot = true;
    } else {
      break;
    }
  }
  if (!any) return false;
  if (pos < s.size() && (s[pos] == 'e' || s[pos] == 'E')) {
    ++pos;
    bool eneg = false;
    if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) eneg = s[pos++] == '-';
    int64_t e = 0;
    size_t start = pos;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9' && e < 100000) e = e * 10 + (s[pos++] - '0');
    if (pos == start) return false;
    exp10 += eneg ? -e : e;
  }
  if (pos != s.size()) return false;
  if (digits.empty()) { unscaled = 0; return true; }
  // value = digits * 10^exp10; we want round(value * 10^scale).
  const int64_t shift = exp10 + scale;
  if (shift >= 0) {
    if (static_cast<int64_t>(digits.size()) + shift > 19) return false;
    digits.append(static_cast<size_t>(shift), '0');
    __int128 v = 0;
    for (char c : digits) v = v * 10 + (c - '0');
    if (v > std::numeric_limits<int64_t>::max()) return false;
    unscaled = neg ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
    return true;
  }
  const size_t drop = static_cast<size_t>(-shift);
  if (drop > digits.size()) { unscaled = 0; return true; }
  const std::string keep = digits.substr(0, digits.size() - drop);
  const bool round_up = digits[digits.size() - drop] >= '5';  // HALF_UP looks at the first dropped digit
  if (keep.size() > 19) return false;
  __int128 v = 0;
  for (char c : keep) v = v * 10 + (c - '0');
  if (round_up) ++v;
  if (v > std::numeric_limits<int64_t>::max()) return false;
  unscaled = neg ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
  return true;
}

bool parseInt64(std::string_view text, int64_t& value) {
  std::string_view s = trimBlanks(text);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty()) return false;
  auto res = std::from_chars(s.data(), s.data() + s.size(), value);
  return res.ec == std::errc() && res.ptr == s.data() + s.size();
}

namespace {
template <typename F>
bool parseJavaFloating(std::string_view text, F& value) {
  std::string_view s = trimBlanks(text);
  if (s.empty()) return false;
  bool neg = false;
  std::string_view body = s;
  if (body.front() == '+' || body.front() == '-') {
    neg = body.front() == '-';
    body.remove_prefix(1);
  }
  if (body == "NaN") { value = std::numeric_limits<F>::quiet_NaN(); return true; }
  if (body == "Infinity") { value = neg ? -std::numeric_limits<F>::infinity() : std::numeric_limits<F>::infinity(); return true; }
  // Java accepts a trailing d/D/f/F type suffix.
  if (!body.empty() && (body.back() == 'd' || body.back() == 'D' || body.back() == 'f' || body.back() == 'F')) body.remove_suffix(1);
  if (body.empty() || !((body.front() >= '0' && body.front() <= '9') || body.front() == '.')) return false;
  F v = 0;
  auto res = std::from_chars(body.data(), body.data() + body.size(), v);
  if (res.ptr != body.data() + body.size()) return false;
  if (res.ec == std::errc::result_out_of_range) {
    // Java rounds to Infinity or 0 instead of failing; strtod / strtof do the same.
    const std::string b(body);
    if constexpr (std::is_same_v<F, float>) v = std::strtof(b.c_str(), nullptr);
    else v = std::strtod(b.c_str(), nullptr);
  } else if (res.ec != std::errc()) {
    return false;
  }
  value = neg ? -v : v;
  return true;
}
}  // namespace

bool parseDouble(std::string_view text, double& value) { return parseJavaFloating(text, value); }

bool parseFloat(std::string_view text, float& value) { return parseJavaFloating(text, value); }

void formatDate(int64_t days, std::string& out) {
  int64_t y;
  unsigned m, d;
  civilFromDays(days, y, m, d);
  if (y > 9999) out += '+';  // java.time.LocalDate.toString
  if (y < 0) out += fmt::format("-{:04}-{:02}-{:02}", -y, m, d);
  else out += fmt::format("{:04}-{:02}-{:02}", y, m, d);
}

void formatTimeIso(int64_t millis_of_day, std::string& out) {
  const int64_t h = millis_of_day / 3600000, mi = millis_of_day / 60000 % 60, sec = millis_of_day / 1000 % 60;
  const int64_t ms = millis_of_day % 1000;
  out += fmt::format("{:02}:{:02}", h, mi);
  if (sec == 0 && ms == 0) return;
  out += fmt::format(":{:02}", sec);
  if (ms != 0) out += fmt::format(".{:03}", ms);
}

void formatTimeSql(int64_t millis_of_day, int32_t precision, std::string& out) {
  out += fmt::format("{:02}:{:02}:{:02}", millis_of_day / 3600000, millis_of_day / 60000 % 60,
                     millis_of_day / 1000 % 60);
  if (precision <= 0) return;
  std::string frac = fmt::format("{:03}", millis_of_day % 1000);
  frac.resize(static_cast<size_t>(precision), '0');
  out += '.';
  out += frac;
}

bool parseDate(std::string_view text, int64_t& days) {
  std::string_view s = trimBlanks(text);
  size_t pos = 0;
  int64_t y, mo, d;
  if (!readDate(s, pos, y, mo, d) || pos != s.size()) return false;
  days = daysFromCivil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d));
  return true;
}

bool parseTime(std::string_view text, int64_t& millis_of_day) {
  std::string_view s = trimBlanks(text);
  size_t pos = 0;
  int frac = 0;
  return readTimeToEnd(s, pos, millis_of_day, frac);
}

void formatIntervalDayTime(int64_t v, std::string& out) {
  const char sign = v < 0 ? '-' : '+';
  const uint64_t a = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  out += fmt::format("{}{} {:02}:{:02}:{:02}.{:03}", sign, a / 86400000, a / 3600000 % 24, a / 60000 % 60, a / 1000 % 60,
                     a % 1000);
}

void formatSqlString(const Column& c, size_t row, std::string& out) {
  const LogicalType& t = c.type();
  switch (t.id) {
    case TypeId::kNull:
    case TypeId::kRow: break;  // ROW is never a column (logical_type.h)
    case TypeId::kBoolean: out += c.getLong(row) ? "TRUE" : "FALSE"; break;
    case TypeId::kTinyInt:
    case TypeId::kSmallInt:
    case TypeId::kInt:
    case TypeId::kBigInt: out += std::to_string(c.getLong(row)); break;
    case TypeId::kDouble: formatDouble(c.getDouble(row), out); break;
    case TypeId::kFloat: formatFloat(c.getDouble(row), out); break;
    case TypeId::kDate: formatDate(c.getLong(row), out); break;
    case TypeId::kTime: formatTimeSql(c.getLong(row), t.precision, out); break;
    case TypeId::kDecimal: formatDecimal(c.getLong(row), t.scale, out); break;
    case TypeId::kTimestamp: formatTimestampSql(c.getLong(row), t.precision, out); break;
    // Callers that know the session zone convert first (CAST, the SQL client); UTC otherwise.
    case TypeId::kTimestampLtz: formatTimestampSql(c.getLong(row), t.precision, out); break;
    case TypeId::kIntervalDayTime: formatIntervalDayTime(c.getLong(row), out); break;
    case TypeId::kVarchar:
    case TypeId::kChar: out += c.getString(row); break;
  }
}

void formatField(const Column& c, size_t row, std::string& out) {
  if (c.isNull(row)) { out += "null"; return; }
  const LogicalType& t = c.type();
  switch (t.id) {
    case TypeId::kNull: out += "null"; break;
    case TypeId::kRow: break;  // never a column (logical_type.h)
    case TypeId::kBoolean: out += c.getLong(row) ? "true" : "false"; break;
    case TypeId::kInt:
    case TypeId::kBigInt: out += std::to_string(c.getLong(row)); break;
    case TypeId::kTinyInt:
    case TypeId::kSmallInt: out += std::to_string(c.getLong(row)); break;
    case TypeId::kDouble: formatDouble(c.getDouble(row), out); break;
    case TypeId::kFloat: formatFloat(c.getDouble(row), out); break;
    case TypeId::kDate: formatDate(c.getLong(row), out); break;
    case TypeId::kTime: formatTimeIso(c.getLong(row), out); break;
    case TypeId::kDecimal: formatDecimalJava(c.getLong(row), t.scale, out); break;
    case TypeId::kVarchar:
    case TypeId::kChar: out += c.getString(row); break;
    case TypeId::kTimestamp: formatTimestampIso(c.getLong(row), out); break;
    case TypeId::kTimestampLtz: formatInstantIso(c.getLong(row), out); break;
    case TypeId::kIntervalDayTime: formatIntervalDayTime(c.getLong(row), out); break;
  }
}

void formatRow(const RowBatch& batch, size_t row, std::string& out) {
  out += shortString(batch.kind(row));
  out += '[';
  for (size_t c = 0; c < batch.numColumns(); ++c) {
    if (c) out += ", ";
    formatField(batch.column(c), row, out);
  }
  out += ']';
}

}  // namespace sluice::types
