#include "types/value_format.h"

#include <charconv>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

namespace sluice::types {

void formatDouble(double v, std::string& out) {
  if (std::isnan(v)) { out += "NaN"; return; }
  if (std::isinf(v)) { out += v > 0 ? "Infinity" : "-Infinity"; return; }
  if (v == 0) { out += std::signbit(v) ? "-0.0" : "0.0"; return; }
  // Shortest round-trip digits, then laid out as Java does.
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
  double a = std::fabs(v);
  if (a >= 1e-3 && a < 1e7) {
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

void formatField(const Column& c, size_t row, std::string& out) {
  if (c.isNull(row)) { out += "null"; return; }
  const LogicalType& t = c.type();
  switch (t.id) {
    case TypeId::kNull: out += "null"; break;
    case TypeId::kBoolean: out += c.getLong(row) ? "true" : "false"; break;
    case TypeId::kInt:
    case TypeId::kBigInt: out += std::to_string(c.getLong(row)); break;
    case TypeId::kDouble: formatDouble(c.getDouble(row), out); break;
    case TypeId::kDecimal: formatDecimal(c.getLong(row), t.scale, out); break;
    case TypeId::kVarchar:
    case TypeId::kChar: out += c.getString(row); break;
    case TypeId::kTimestamp: formatTimestampIso(c.getLong(row), out); break;
    case TypeId::kIntervalDayTime: {
      // Flink prints INTERVAL DAY TO SECOND as "+0 00:00:05.000".
      int64_t v = c.getLong(row);
      char sign = v < 0 ? '-' : '+';
      uint64_t a = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
      out += fmt::format("{}{} {:02}:{:02}:{:02}.{:03}", sign, a / 86400000, a / 3600000 % 24, a / 60000 % 60,
                         a / 1000 % 60, a % 1000);
      break;
    }
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
