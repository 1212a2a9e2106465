#include "table/functions/datetime_pattern.h"

#include <cstring>

#include <fmt/format.h>

#include "common/error.h"
#include "types/value_format.h"

namespace sluice::table::internal {

namespace {
constexpr const char* kMonths[] = {"January", "February", "March",     "April",   "May",      "June",
                                   "July",    "August",   "September", "October", "November", "December"};
constexpr const char* kDays[] = {"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"};

bool isPatternLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

void appendPadded(int64_t v, int width, std::string& out) {
  std::string digits = std::to_string(v < 0 ? -v : v);
  if (v < 0) out += '-';
  if (static_cast<int>(digits.size()) < width) out.append(static_cast<size_t>(width) - digits.size(), '0');
  out += digits;
}

bool isNumericLetter(char c, int count) {
  switch (c) {
    case 'y': case 'd': case 'H': case 'h': case 'm': case 's': case 'S': return true;
    case 'M': return count <= 2;
    default: return false;
  }
}
}  // namespace

DateTimePattern::DateTimePattern(std::string_view p) {
  size_t i = 0;
  while (i < p.size()) {
    const char c = p[i];
    if (c == '\'') {
      std::string lit;
      ++i;
      bool closed = false;
      while (i < p.size()) {
        if (p[i] == '\'') {
          if (i + 1 < p.size() && p[i + 1] == '\'') { lit += '\''; i += 2; continue; }
          closed = true;
          ++i;
          break;
        }
        lit += p[i++];
      }
      if (!closed && !(lit.empty() && i == p.size())) throw UserError(fmt::format("Unterminated quote in date time pattern '{}'", p));
      // '' outside quotes is a literal quote.
      tokens_.push_back({0, 0, lit.empty() ? std::string(1, '\'') : std::move(lit)});
      continue;
    }
    if (isPatternLetter(c)) {
      int count = 0;
      while (i < p.size() && p[i] == c) { ++count; ++i; }
      if (!std::strchr("yMdHhmsSaE", c)) throw UserError(fmt::format("Illegal pattern character '{}' in date time pattern '{}'", c, p));
      tokens_.push_back({c, count, {}});
      continue;
    }
    if (!tokens_.empty() && tokens_.back().letter == 0) tokens_.back().text += c;
    else tokens_.push_back({0, 0, std::string(p.substr(i, 1))});
    ++i;
  }
}

void DateTimePattern::format(int64_t ms, std::string& out) const {
  const types::DateTimeParts p = types::splitTimestamp(ms);
  for (const Token& t : tokens_) {
    switch (t.letter) {
      case 0: out += t.text; break;
      case 'y':
        if (t.count == 2) appendPadded(((p.year % 100) + 100) % 100, 2, out);
        else appendPadded(p.year, t.count, out);
        break;
      case 'M':
        if (t.count >= 4) out += kMonths[p.month - 1];
        else if (t.count == 3) out.append(kMonths[p.month - 1], 3);
        else appendPadded(p.month, t.count, out);
        break;
      case 'd': appendPadded(p.day, t.count, out); break;
      case 'H': appendPadded(p.hour, t.count, out); break;
      case 'h': appendPadded(p.hour % 12 == 0 ? 12 : p.hour % 12, t.count, out); break;
      case 'm': appendPadded(p.minute, t.count, out); break;
      case 's': appendPadded(p.second, t.count, out); break;
      case 'S': {
        // Fraction of second, `count` digits (milliseconds, then zeros).
        std::string frac = fmt::format("{:03}", p.millis);
        frac.resize(static_cast<size_t>(t.count), '0');
        out += frac;
        break;
      }
      case 'a': out += p.hour < 12 ? "AM" : "PM"; break;
      case 'E': {
        const int64_t days = (ms >= 0 ? ms / 86400000 : -((-ms + 86399999) / 86400000));
        const int64_t dow = ((days % 7) + 7 + 3) % 7;  // 1970-01-01 was a Thursday (index 3)
        if (t.count >= 4) out += kDays[dow];
        else out.append(kDays[dow], 3);
        break;
      }
      default: break;
    }
  }
}

bool DateTimePattern::parse(std::string_view s, int64_t& epoch_ms) const {
  int64_t year = 1970, month = 1, day = 1, hour = 0, minute = 0, second = 0, millis = 0;
  int64_t hour12 = -1;
  bool pm = false;
  size_t pos = 0;
  for (size_t k = 0; k < tokens_.size(); ++k) {
    const Token& t = tokens_[k];
    if (t.letter == 0) {
      if (s.substr(pos, t.text.size()) != t.text) return false;
      pos += t.text.size();
      continue;
    }
    if (t.letter == 'a') {
      if (s.size() - pos < 2) return false;
      const std::string_view ap = s.substr(pos, 2);
      if (ap == "AM" || ap == "am") pm = false;
      else if (ap == "PM" || ap == "pm") pm = true;
      else return false;
      pos += 2;
      continue;
    }
    if (t.letter == 'E' || (t.letter == 'M' && t.count >= 3)) {
      const char* const* names = t.letter == 'E' ? kDays : kMonths;
      const int n = t.letter == 'E' ? 7 : 12;
      bool found = false;
      for (int idx = 0; idx < n && !found; ++idx) {
        const std::string_view full = names[idx];
        const std::string_view name = t.count >= 4 ? full : full.substr(0, 3);
        if (s.substr(pos, name.size()) == name) {
          pos += name.size();
          if (t.letter == 'M') month = idx + 1;
          found = true;
        }
      }
      if (!found) return false;
      continue;
    }
    // Numeric field: exactly `count` digits when the next token is also numeric (yyyyMMdd) or when
    // the field is written with 2+ letters (strict like DateTimeFormatter); else 1+ digits.
    const bool adjacent = k + 1 < tokens_.size() && isNumericLetter(tokens_[k + 1].letter, tokens_[k + 1].count);
    size_t max_digits = (t.count >= 2 || adjacent) ? static_cast<size_t>(t.count) : 9;
    if (t.letter == 'y' && t.count >= 4 && !adjacent) max_digits = 9;
    const size_t start = pos;
    int64_t v = 0;
    while (pos < s.size() && pos - start < max_digits && s[pos] >= '0' && s[pos] <= '9') v = v * 10 + (s[pos++] - '0');
    const size_t digits = pos - start;
    if (digits == 0) return false;
    if (t.count >= 2 && digits < static_cast<size_t>(t.count) && t.letter != 'y') return false;
    switch (t.letter) {
      case 'y': year = (t.count == 2 && digits == 2) ? 2000 + v : v; break;
      case 'M': month = v; break;
      case 'd': day = v; break;
      case 'H': hour = v; break;
      case 'h': hour12 = v; break;
      case 'm': minute = v; break;
      case 's': second = v; break;
      case 'S': {
        int64_t ms = v;
        for (size_t d = digits; d < 3; ++d) ms *= 10;
        for (size_t d = 3; d < digits; ++d) ms /= 10;
        millis = ms;
        break;
      }
      default: return false;
    }
  }
  if (pos != s.size()) return false;
  if (hour12 >= 0) {
    if (hour12 < 1 || hour12 > 12) return false;
    hour = hour12 % 12 + (pm ? 12 : 0);
  }
  // Validate through the default parser's range checks.
  const std::string canonical = fmt::format("{:04}-{:02}-{:02} {:02}:{:02}:{:02}.{:03}", year, month, day, hour, minute, second, millis);
  if (year < 0 || year > 9999) return false;
  return types::parseTimestamp(canonical, epoch_ms);
}

}  // namespace sluice::table::internal
