#include "connectors/csv_format.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <fmt/format.h>

#include "common/error.h"
#include "types/value_format.h"

namespace sluice::connectors {

using types::Column;
using types::LogicalType;
using types::RowBatch;
using types::TypeId;

std::set<std::string> csvFormatOptionKeys() {
  return {"csv.field-delimiter",    "csv.quote-character", "csv.disable-quote-character",
          "csv.allow-comments",     "csv.ignore-parse-errors", "csv.array-element-delimiter",
          "csv.escape-character",   "csv.null-literal",    "csv.write-bigdecimal-in-scientific-notation"};
}

CsvFormatOptions parseCsvFormatOptions(const OptionMap& options, const std::string& table) {
  CsvFormatOptions o;
  if (auto d = charOption(options, "csv.field-delimiter", table)) o.field_delimiter = *d;
  o.quote_enabled = !boolOption(options, "csv.disable-quote-character", false, table);
  if (auto q = charOption(options, "csv.quote-character", table)) {
    if (!o.quote_enabled)
      throw UserError(fmt::format(
          "Format cannot define a quote character and disabled quote character at the same time (table '{}').", table));
    o.quote_character = *q;
  }
  o.allow_comments = boolOption(options, "csv.allow-comments", false, table);
  o.ignore_parse_errors = boolOption(options, "csv.ignore-parse-errors", false, table);
  if (auto a = findOption(options, "csv.array-element-delimiter")) o.array_element_delimiter = *a;
  o.escape_character = charOption(options, "csv.escape-character", table);
  o.null_literal = findOption(options, "csv.null-literal");
  o.write_bigdecimal_in_scientific_notation =
      boolOption(options, "csv.write-bigdecimal-in-scientific-notation", true, table);
  if (o.field_delimiter == '\n' || o.field_delimiter == '\r')
    throw UserError(fmt::format("Option 'csv.field-delimiter' of table '{}' must not be a line break.", table));
  if (o.quote_enabled && o.quote_character == o.field_delimiter)
    throw UserError(fmt::format("Options 'csv.quote-character' and 'csv.field-delimiter' of table '{}' must differ.", table));
  return o;
}

// ---------------------------------------------------------------------------------------------
// Field conversions. Each returns false when the text does not parse; `why` may name the reason.

namespace {

// Java's String.trim(): strips every char <= ' ' at both ends.
std::string_view javaTrim(std::string_view s) {
  size_t b = 0;
  size_t e = s.size();
  while (b < e && static_cast<unsigned char>(s[b]) <= ' ') ++b;
  while (e > b && static_cast<unsigned char>(s[e - 1]) <= ' ') --e;
  return s.substr(b, e - b);
}

bool parseLong(std::string_view s, int64_t min, int64_t max, int64_t& out, const char*& why) {
  s = javaTrim(s);
  const char* b = s.data();
  const char* e = s.data() + s.size();
  if (b != e && *b == '+') {
    ++b;
    if (b != e && *b == '-') return false;
  }
  if (b == e) return false;
  auto res = std::from_chars(b, e, out);
  if (res.ec == std::errc::result_out_of_range && res.ptr == e) {
    why = "out of range";
    return false;
  }
  if (res.ec != std::errc() || res.ptr != e) return false;
  if (out < min || out > max) {
    why = "out of range";
    return false;
  }
  return true;
}

// Java's Double.parseDouble for decimal text: optional sign, "NaN", "Infinity", digits with an
// optional fraction and exponent, an optional d/D/f/F suffix. Hexadecimal floats are not accepted.
bool parseDouble(std::string_view s, double& out) {
  s = javaTrim(s);
  bool neg = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s == "NaN") {
    out = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  if (s == "Infinity") {
    out = neg ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
    return true;
  }
  if (!s.empty()) {
    char last = s.back();
    if (last == 'd' || last == 'D' || last == 'f' || last == 'F') s.remove_suffix(1);
  }
  if (s.empty() || !((s[0] >= '0' && s[0] <= '9') || s[0] == '.')) return false;
  for (char c : s)
    if (c == 'x' || c == 'X' || c == 'p' || c == 'P') return false;
  double v = 0;
  auto res = std::from_chars(s.data(), s.data() + s.size(), v, std::chars_format::general);
  if (res.ptr != s.data() + s.size()) return false;
  if (res.ec == std::errc::result_out_of_range) {
    // Java rounds to Infinity or 0 instead of failing; strtod reports the same.
    std::string copy(s);
    v = std::strtod(copy.c_str(), nullptr);
  } else if (res.ec != std::errc()) {
    return false;
  }
  out = neg ? -v : v;
  return true;
}

// The common integer text: an optional '-' and 1..18 digits, nothing else (so it fits int64). Anything
// else (spaces, '+', more digits) is left to parseLong, which has the full rules and the messages.
inline bool parsePlainLong(std::string_view s, int64_t& out) {
  size_t i = 0;
  const bool neg = !s.empty() && s[0] == '-';
  if (neg) i = 1;
  const size_t digits = s.size() - i;
  if (digits == 0 || digits > 18) return false;
  int64_t v = 0;
  for (; i < s.size(); ++i) {
    const unsigned d = static_cast<unsigned>(static_cast<unsigned char>(s[i])) - '0';
    if (d > 9) return false;
    v = v * 10 + static_cast<int64_t>(d);
  }
  out = neg ? -v : v;
  return true;
}

bool parseBooleanJava(std::string_view s) {
  s = javaTrim(s);
  if (s.size() != 4) return false;
  static const char kTrue[] = "true";
  for (size_t i = 0; i < 4; ++i)
    if ((s[i] | 0x20) != kTrue[i]) return false;
  return true;
}

// new BigDecimal(text) then setScale(scale, HALF_UP); fails when |unscaled| >= 10^precision or
// does not fit int64.
bool parseDecimal(std::string_view s, int32_t precision, int32_t scale, int64_t& out, const char*& why) {
  size_t i = 0;
  bool neg = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
    neg = s[i] == '-';
    ++i;
  }
  size_t int_begin = i;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
  std::string_view int_part = s.substr(int_begin, i - int_begin);
  std::string_view frac_part;
  if (i < s.size() && s[i] == '.') {
    size_t f = ++i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    frac_part = s.substr(f, i - f);
  }
  if (int_part.empty() && frac_part.empty()) return false;
  int64_t exponent = 0;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    bool eneg = false;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
      eneg = s[i] == '-';
      ++i;
    }
    size_t eb = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      // Clamp: anything this large overflows or rounds to zero anyway.
      if (exponent < 1'000'000'000) exponent = exponent * 10 + (s[i] - '0');
      ++i;
    }
    if (i == eb) return false;
    if (eneg) exponent = -exponent;
  }
  if (i != s.size()) return false;

  const int64_t ndigits = static_cast<int64_t>(int_part.size() + frac_part.size());
  auto digit = [&](int64_t j) -> int {
    return j < static_cast<int64_t>(int_part.size()) ? int_part[j] - '0' : frac_part[j - int_part.size()] - '0';
  };
  // unscaled = digits * 10^shift
  const int64_t shift = exponent - static_cast<int64_t>(frac_part.size()) + scale;
  int64_t keep = ndigits;
  bool round_up = false;
  if (shift < 0) {
    keep = ndigits + shift;
    if (keep >= 0 && keep < ndigits) round_up = digit(keep) >= 5;
    if (keep < 0) keep = 0;
  }
  const int64_t limit_digits = std::min<int64_t>(precision, 19);
  unsigned __int128 acc = 0;
  int64_t significant = 0;
  for (int64_t j = 0; j < keep; ++j) {
    int d = digit(j);
    if (significant == 0 && d == 0) continue;
    if (++significant > limit_digits) {
      why = "out of range";
      return false;
    }
    acc = acc * 10 + static_cast<unsigned>(d);
  }
  if (shift > 0 && acc != 0) {
    if (significant + shift > limit_digits) {
      why = "out of range";
      return false;
    }
    for (int64_t k = 0; k < shift; ++k) acc *= 10;
  }
  if (round_up) acc += 1;
  unsigned __int128 bound = 1;
  for (int32_t k = 0; k < precision && k < 38; ++k) bound *= 10;
  if (acc >= bound || acc > static_cast<unsigned __int128>(std::numeric_limits<int64_t>::max())) {
    why = "out of range";
    return false;
  }
  out = neg ? -static_cast<int64_t>(acc) : static_cast<int64_t>(acc);
  return true;
}

// Reads 1..max_digits decimal digits at s[i].
bool readNumber(std::string_view s, size_t& i, size_t min_digits, size_t max_digits, unsigned& out) {
  size_t b = i;
  out = 0;
  while (i < s.size() && i - b < max_digits && s[i] >= '0' && s[i] <= '9') out = out * 10 + (s[i++] - '0');
  return i - b >= min_digits;
}

// java.sql.Timestamp.valueOf's layout, also with 'T' (ISO) and without seconds.
bool parseTimestamp(std::string_view s, int64_t& out) {
  s = javaTrim(s);
  size_t i = 0;
  unsigned year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (!readNumber(s, i, 4, 4, year)) return false;
  if (i >= s.size() || s[i++] != '-') return false;
  if (!readNumber(s, i, 1, 2, month)) return false;
  if (i >= s.size() || s[i++] != '-') return false;
  if (!readNumber(s, i, 1, 2, day)) return false;
  if (i >= s.size() || (s[i] != ' ' && s[i] != 'T')) return false;
  ++i;
  if (!readNumber(s, i, 1, 2, hour)) return false;
  if (i >= s.size() || s[i++] != ':') return false;
  if (!readNumber(s, i, 1, 2, minute)) return false;
  unsigned millis = 0;
  if (i < s.size() && s[i] == ':') {
    ++i;
    if (!readNumber(s, i, 1, 2, second)) return false;
    if (i < s.size() && s[i] == '.') {
      ++i;
      size_t b = i;
      while (i < s.size() && s[i] >= '0' && s[i] <= '9' && i - b < 9) {
        if (i - b < 3) millis = millis * 10 + (s[i] - '0');
        ++i;
      }
      if (i == b) return false;
      for (size_t k = i - b; k < 3; ++k) millis *= 10;
    }
  }
  if (i != s.size()) return false;
  static const unsigned kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (month < 1 || month > 12 || day < 1) return false;
  bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  unsigned max_day = kDays[month - 1] + (month == 2 && leap ? 1 : 0);
  if (day > max_day || hour > 23 || minute > 59 || second > 59) return false;
  out = types::joinTimestamp(types::DateTimeParts{year, month, day, hour, minute, second, millis});
  return true;
}

char unescapeJackson(char c) {
  switch (c) {
    case '0': return '\0';
    case 'n': return '\n';
    case 'r': return '\r';
    case 't': return '\t';
    default: return c;
  }
}

std::string printable(std::string_view v) {
  constexpr size_t kMax = 100;
  std::string s(v.substr(0, kMax));
  if (v.size() > kMax) s += "...";
  return s;
}

void rollback(RowBatch& out, size_t rows) {
  for (auto& c : out.columns()) {
    c.validity().resize(rows);
    if (c.type().isString()) {
      auto& refs = c.strings();
      refs.resize(rows);
      c.arena().resize(rows == 0 ? 0 : refs[rows - 1].offset + refs[rows - 1].length);
    } else if (c.type().isApproximate()) {
      c.doubles().resize(rows);
    } else {
      c.longs().resize(rows);
    }
  }
  out.kinds().resize(rows);
}

}  // namespace

// ---------------------------------------------------------------------------------------------

namespace {

std::vector<int> allFields(size_t n) {
  std::vector<int> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<int>(i);
  return v;
}

}  // namespace

CsvRowDeserializer::CsvRowDeserializer(types::RowType row_type, CsvFormatOptions options)
    : CsvRowDeserializer(row_type, std::move(options), allFields(row_type.size())) {}

CsvRowDeserializer::CsvRowDeserializer(types::RowType row_type, CsvFormatOptions options, std::vector<int> projection)
    : row_type_(std::move(row_type)), options_(std::move(options)), projection_(std::move(projection)) {
  wanted_.assign(row_type_.size(), 0);
  for (size_t k = 0; k < projection_.size(); ++k) {
    const int c = projection_[k];
    SLUICE_CHECK(c >= 0 && static_cast<size_t>(c) < row_type_.size() && (k == 0 || c > projection_[k - 1]),
                 "csv projection index {} at position {} is out of range or not ascending (arity {})", c, k,
                 row_type_.size());
    wanted_[c] = 1;
    FastKind kind = FastKind::kOther;
    switch (row_type_.types[c].id) {
      case TypeId::kVarchar:
      case TypeId::kChar: kind = FastKind::kString; break;
      case TypeId::kInt: kind = FastKind::kInt; break;
      case TypeId::kBigInt: kind = FastKind::kBigInt; break;
      default: break;
    }
    actions_.push_back({static_cast<uint32_t>(c), kind});
    produced_type_.names.push_back(c < static_cast<int>(row_type_.names.size()) ? row_type_.names[c]
                                                                                 : std::to_string(c));
    produced_type_.types.push_back(row_type_.types[c]);
  }
  for (size_t c = 0; c < row_type_.size(); ++c) {
    switch (row_type_.types[c].id) {
      case TypeId::kBoolean:
      case TypeId::kTinyInt:
      case TypeId::kSmallInt:
      case TypeId::kInt:
      case TypeId::kBigInt:
      case TypeId::kFloat:
      case TypeId::kDouble:
      case TypeId::kDecimal:
      case TypeId::kVarchar:
      case TypeId::kChar:
      case TypeId::kTimestamp:
      case TypeId::kTimestampLtz:
      case TypeId::kDate:
      case TypeId::kTime:
        break;
      default:
        throw UserError(fmt::format("The csv format does not support type {} of column '{}'.",
                                    row_type_.types[c].toString(),
                                    c < row_type_.names.size() ? row_type_.names[c] : std::to_string(c)));
    }
  }
  fields_.resize(row_type_.size() + 17);
}

bool CsvRowDeserializer::splitPlain(std::string_view line) {
  const char delim = options_.field_delimiter;
  // Characters that send the line to the general path; the delimiter stands in for a disabled one.
  const char quote = options_.quote_enabled ? options_.quote_character : delim;
  const char esc = options_.escape_character ? *options_.escape_character : delim;
  const char* p = line.data();
  const size_t n = line.size();
  // Spans are stored without push_back: room for 17 more (a 16-byte block has at most 16 delimiters,
  // plus the last field) is made before each block.
  size_t count = 0;
  FieldSpan* out = fields_.data();
  auto room = [&] {
    if (count + 17 > fields_.size()) {
      fields_.resize(2 * fields_.size() + 17);
      out = fields_.data();
    }
  };
  uint32_t begin = 0;
  size_t i = 0;
#if defined(__SSE2__)
  const __m128i vd = _mm_set1_epi8(delim);
  const __m128i vq = _mm_set1_epi8(quote);
  const __m128i ve = _mm_set1_epi8(esc);
  for (; i + 16 <= n; i += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
    const __m128i d = _mm_cmpeq_epi8(v, vd);
    const __m128i special = _mm_andnot_si128(d, _mm_or_si128(_mm_cmpeq_epi8(v, vq), _mm_cmpeq_epi8(v, ve)));
    if (_mm_movemask_epi8(special) != 0) return false;
    room();
    for (unsigned m = static_cast<unsigned>(_mm_movemask_epi8(d)); m != 0; m &= m - 1) {
      const uint32_t at = static_cast<uint32_t>(i) + static_cast<uint32_t>(__builtin_ctz(m));
      out[count++] = {begin, at - begin, false};
      begin = at + 1;
    }
  }
#endif
  for (; i < n; ++i) {
    const char c = p[i];
    if (c == delim) {
      if (count + 2 > fields_.size()) room();
      out[count++] = {begin, static_cast<uint32_t>(i) - begin, false};
      begin = static_cast<uint32_t>(i) + 1;
    } else if (c == quote || c == esc) {
      return false;
    }
  }
  room();
  out[count++] = {begin, static_cast<uint32_t>(n) - begin, false};
  num_fields_ = count;
  return true;
}

void CsvRowDeserializer::addField(FieldSpan f) {
  if (num_fields_ == fields_.size()) {
    fields_.push_back(f);
  } else {
    fields_[num_fields_] = f;
  }
  ++num_fields_;
}

bool CsvRowDeserializer::split(std::string_view line) {
  num_fields_ = 0;
  scratch_.clear();
  if (splitPlain(line)) return true;
  num_fields_ = 0;
  const char delim = options_.field_delimiter;
  const char quote = options_.quote_character;
  const bool quoting = options_.quote_enabled;
  const bool escaping = options_.escape_character.has_value();
  const char esc = escaping ? *options_.escape_character : 0;
  const size_t n = line.size();
  size_t pos = 0;
  while (true) {
    if (quoting && pos < n && line[pos] == quote) {
      // An unprojected field is only delimited: its bytes are not copied.
      const bool keep = num_fields_ < wanted_.size() && wanted_[num_fields_];
      const uint32_t begin = static_cast<uint32_t>(scratch_.size());
      ++pos;
      bool closed = false;
      while (pos < n) {
        // Copy the run up to the next quote (or escape) in one go.
        size_t stop = pos;
        while (stop < n && line[stop] != quote && !(escaping && line[stop] == esc)) ++stop;
        if (keep) scratch_.append(line.data() + pos, stop - pos);
        pos = stop;
        if (pos == n) break;
        if (escaping && line[pos] == esc && line[pos] != quote) {
          if (pos + 1 == n) {
            error_ = "escape character at the end of the line";
            return false;
          }
          if (keep) scratch_ += unescapeJackson(line[pos + 1]);
          pos += 2;
          continue;
        }
        // A quote: doubled means a literal quote, otherwise it closes the field.
        if (pos + 1 < n && line[pos + 1] == quote) {
          if (keep) scratch_ += quote;
          pos += 2;
          continue;
        }
        ++pos;
        closed = true;
        break;
      }
      if (!closed) {
        error_ = "unterminated quoted field";
        return false;
      }
      addField({begin, static_cast<uint32_t>(scratch_.size() - begin), true});
      if (pos == n) return true;
      if (line[pos] != delim) {
        error_ = fmt::format("unexpected character '{}' after a closing quote", line[pos]);
        return false;
      }
      ++pos;
      continue;
    }
    // Unquoted field.
    if (!escaping) {
      // Fields are short: a plain loop beats a memchr call per field.
      size_t end = pos;
      while (end < n && line[end] != delim) ++end;
      addField({static_cast<uint32_t>(pos), static_cast<uint32_t>(end - pos), false});
      if (end == n) return true;
      pos = end + 1;
      continue;
    }
    size_t end = pos;
    while (end < n && line[end] != delim && line[end] != esc) ++end;
    if (end == n || line[end] == delim) {
      addField({static_cast<uint32_t>(pos), static_cast<uint32_t>(end - pos), false});
      if (end == n) return true;
      pos = end + 1;
      continue;
    }
    // An escape inside an unquoted field: build the value in scratch_ (only when projected).
    const bool keep = num_fields_ < wanted_.size() && wanted_[num_fields_];
    const uint32_t begin = static_cast<uint32_t>(scratch_.size());
    if (keep) scratch_.append(line.data() + pos, end - pos);
    pos = end;
    while (pos < n && line[pos] != delim) {
      if (line[pos] == esc) {
        if (pos + 1 == n) {
          error_ = "escape character at the end of the line";
          return false;
        }
        if (keep) scratch_ += unescapeJackson(line[pos + 1]);
        pos += 2;
      } else {
        if (keep) scratch_ += line[pos];
        ++pos;
      }
    }
    addField({begin, static_cast<uint32_t>(scratch_.size() - begin), true});
    if (pos == n) return true;
    ++pos;
  }
}

bool CsvRowDeserializer::convert(size_t c, std::string_view v, Column& column) {
  const LogicalType& t = row_type_.types[c];
  const char* why = nullptr;
  switch (t.id) {
    case TypeId::kVarchar:
    case TypeId::kChar:
      column.appendString(v);
      return true;
    case TypeId::kTinyInt:
    case TypeId::kSmallInt:
    case TypeId::kInt: {  // Byte.parseByte / Short.parseShort / Integer.parseInt of the trimmed text
      const int64_t hi = (int64_t{1} << (t.integralBits() - 1)) - 1;
      int64_t x;
      if (!parseLong(v, -hi - 1, hi, x, why)) break;
      column.appendLong(x);
      return true;
    }
    case TypeId::kFloat: {  // Float.parseFloat(text.trim())
      float x;
      if (!types::parseFloat(v, x)) break;
      column.appendDouble(x);
      return true;
    }
    case TypeId::kDate: {  // ISO yyyy-MM-dd
      int64_t x;
      if (!types::parseDate(v, x)) break;
      column.appendLong(x);
      return true;
    }
    case TypeId::kTime: {  // HH:mm:ss[.fraction]
      int64_t x;
      if (!types::parseTime(v, x)) break;
      column.appendLong(x);
      return true;
    }
    case TypeId::kBigInt: {
      int64_t x;
      if (!parseLong(v, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), x, why)) break;
      column.appendLong(x);
      return true;
    }
    case TypeId::kDouble: {
      double x;
      if (!parseDouble(v, x)) break;
      column.appendDouble(x);
      return true;
    }
    case TypeId::kDecimal: {
      int64_t x;
      if (!parseDecimal(v, t.precision, t.scale, x, why)) break;
      column.appendLong(x);
      return true;
    }
    case TypeId::kBoolean:
      column.appendLong(parseBooleanJava(v) ? 1 : 0);
      return true;
    case TypeId::kTimestamp: {
      int64_t x;
      if (!parseTimestamp(v, x)) break;
      column.appendLong(x);
      return true;
    }
    case TypeId::kTimestampLtz: {
      // CsvToRowDataConverters: SQL_TIMESTAMP_WITH_LOCAL_TIMEZONE_FORMAT, the instant in UTC with a 'Z'.
      std::string_view u = javaTrim(v);
      int64_t x;
      if (u.empty() || u.back() != 'Z' || !parseTimestamp(u.substr(0, u.size() - 1), x)) {
        why = "expected yyyy-MM-dd HH:mm:ss[.fraction]Z, in UTC";
        break;
      }
      column.appendLong(x);
      return true;
    }
    default:
      break;
  }
  // Formatting the message is costly; under ignore-parse-errors nobody reads it.
  if (!options_.ignore_parse_errors) {
    error_ = fmt::format("cannot parse '{}' as {} for column '{}'{}", printable(v), t.withNullable(true).toString(),
                         c < row_type_.names.size() ? row_type_.names[c] : std::to_string(c),
                         why ? fmt::format(" ({})", why) : std::string());
  }
  return false;
}

void CsvRowDeserializer::fail(RowBatch& out, size_t rows_before, std::string_view path, int64_t line_number,
                              const std::string& what) {
  rollback(out, rows_before);
  throw InputError(fmt::format("{}:{}: {}", path, line_number, what));
}

CsvLineResult CsvRowDeserializer::parseLine(std::string_view line, RowBatch& out, std::string_view path,
                                            int64_t line_number) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.empty()) return CsvLineResult::kSkipped;
  if (options_.allow_comments && line[0] == '#') return CsvLineResult::kSkipped;
  const size_t rows_before = out.numRows();
  if (line.size() > std::numeric_limits<uint32_t>::max()) {
    if (options_.ignore_parse_errors) {
      ++parse_errors_;
      return CsvLineResult::kDropped;
    }
    fail(out, rows_before, path, line_number, "line too long");
  }
  if (!split(line)) {
    if (options_.ignore_parse_errors) {
      ++parse_errors_;
      return CsvLineResult::kDropped;
    }
    fail(out, rows_before, path, line_number, error_);
  }
  const size_t arity = row_type_.size();
  const size_t present = num_fields_;
  if (present != arity) {
    if (!options_.ignore_parse_errors || present > arity) {
      if (options_.ignore_parse_errors) {
        ++parse_errors_;
        return CsvLineResult::kDropped;
      }
      fail(out, rows_before, path, line_number,
           fmt::format("row length mismatch: {} fields expected but was {}", arity, present));
    }
  }
  // Only the projected fields are looked at; the others were delimited by split() and are skipped.
  const size_t produced = actions_.size();
  const bool null_literal = options_.null_literal.has_value();
  for (size_t k = 0; k < produced; ++k) {
    const ColumnAction a = actions_[k];
    Column& column = out.column(k);
    if (a.field >= present) {
      // Too few fields under ignore-parse-errors: Flink leaves the missing ones NULL.
      column.appendNull();
      ++parse_errors_;
      continue;
    }
    const std::string_view v = field(line, fields_[a.field]);
    if (null_literal && v == *options_.null_literal) {
      column.appendNull();
      continue;
    }
    int64_t x;
    switch (a.kind) {
      case FastKind::kString:
        column.appendString(v);
        continue;
      case FastKind::kInt:
        if (parsePlainLong(v, x) && x >= std::numeric_limits<int32_t>::min() &&
            x <= std::numeric_limits<int32_t>::max()) {
          column.appendLong(x);
          continue;
        }
        break;
      case FastKind::kBigInt:
        if (parsePlainLong(v, x)) {
          column.appendLong(x);
          continue;
        }
        break;
      case FastKind::kOther:
        break;
    }
    if (!convert(a.field, v, column)) {
      if (!options_.ignore_parse_errors) fail(out, rows_before, path, line_number, error_);
      column.appendNull();
      ++parse_errors_;
    }
  }
  out.kinds().push_back(types::RowKind::kInsert);
  return CsvLineResult::kRow;
}

size_t alignToLineStart(std::string_view data, size_t offset) {
  if (offset == 0) return 0;
  if (offset > data.size()) return data.size();
  const void* hit = std::memchr(data.data() + offset - 1, '\n', data.size() - (offset - 1));
  if (hit == nullptr) return data.size();
  return static_cast<size_t>(static_cast<const char*>(hit) - data.data()) + 1;
}

int64_t countNewlines(std::string_view data, size_t end) {
  int64_t n = 0;
  const char* p = data.data();
  const char* e = data.data() + std::min(end, data.size());
#if defined(__SSE2__)
  // Subtasks past the first count the lines before their range once: 16 bytes per step.
  const __m128i nl = _mm_set1_epi8('\n');
  for (; e - p >= 16; p += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    n += __builtin_popcount(static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, nl))));
  }
#endif
  for (; p < e; ++p) n += *p == '\n';
  return n;
}

size_t readCsvLines(std::string_view data, size_t& pos, size_t range_end, int64_t& line_number,
                    CsvRowDeserializer& deserializer, RowBatch& out, size_t max_rows, std::string_view path) {
  size_t rows = 0;
  range_end = std::min(range_end, data.size());
  while (pos < range_end && rows < max_rows) {
    const void* hit = std::memchr(data.data() + pos, '\n', data.size() - pos);
    size_t end = hit ? static_cast<size_t>(static_cast<const char*>(hit) - data.data()) : data.size();
    if (deserializer.parseLine(data.substr(pos, end - pos), out, path, line_number) == CsvLineResult::kRow) ++rows;
    pos = hit ? end + 1 : data.size();
    ++line_number;
  }
  return rows;
}

}  // namespace sluice::connectors
