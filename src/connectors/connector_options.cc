#include "connectors/connector_options.h"

#include <cctype>
#include <charconv>
#include <cstdlib>

#include <fmt/format.h>

#include "common/config.h"
#include "common/error.h"

namespace sluice::connectors {

namespace {

std::string trimmed(const std::string& s) {
  size_t b = 0;
  size_t e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

[[noreturn]] void badOption(const std::string& table, const std::string& key, const std::string& value,
                            const std::string& expected) {
  throw UserError(fmt::format("Invalid value '{}' for option '{}' of table '{}': expected {}.", value, key,
                              table, expected));
}

}  // namespace

std::optional<std::string> findOption(const OptionMap& options, const std::string& key) {
  auto it = options.find(key);
  if (it == options.end()) return std::nullopt;
  return it->second;
}

bool boolOption(const OptionMap& options, const std::string& key, bool fallback, const std::string& table) {
  auto v = findOption(options, key);
  if (!v) return fallback;
  std::string t = trimmed(*v);
  for (char& c : t) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (t == "true") return true;
  if (t == "false") return false;
  badOption(table, key, *v, "'true' or 'false'");
}

int64_t longOption(const OptionMap& options, const std::string& key, int64_t fallback, const std::string& table) {
  auto v = findOption(options, key);
  if (!v) return fallback;
  std::string t = trimmed(*v);
  const char* b = t.data();
  const char* e = t.data() + t.size();
  if (b != e && *b == '+') ++b;
  int64_t out = 0;
  auto res = std::from_chars(b, e, out);
  if (t.empty() || res.ec != std::errc() || res.ptr != e) badOption(table, key, *v, "an integer");
  return out;
}

double doubleOption(const OptionMap& options, const std::string& key, double fallback, const std::string& table) {
  auto v = findOption(options, key);
  if (!v) return fallback;
  std::string t = trimmed(*v);
  char* end = nullptr;
  double out = std::strtod(t.c_str(), &end);
  if (t.empty() || end != t.c_str() + t.size()) badOption(table, key, *v, "a number");
  return out;
}

int64_t durationOption(const OptionMap& options, const std::string& key, int64_t fallback, const std::string& table) {
  auto v = findOption(options, key);
  if (!v) return fallback;
  try {
    return parseDurationMs(key, *v);
  } catch (const UserError&) {
    badOption(table, key, *v, "a duration such as '100 ms' or '1 min'");
  }
}

std::optional<int> parallelismOption(const OptionMap& options, const std::string& key, const std::string& table) {
  auto v = findOption(options, key);
  if (!v) return std::nullopt;
  std::string t = trimmed(*v);
  int out = 0;
  auto res = std::from_chars(t.data(), t.data() + t.size(), out);
  if (t.empty() || res.ec != std::errc() || res.ptr != t.data() + t.size())
    throw UserError(fmt::format("Could not parse value '{}' for key '{}' of table '{}': expected an integer.", *v,
                                key, table));
  // Flink's CommonExecTableSourceScan / CommonExecSink wording.
  if (out <= 0)
    throw UserError(fmt::format("Invalid configured parallelism {} for table '{}' (option '{}').", out, table, key));
  return out;
}

std::string unescapeJava(const std::string& value, const std::string& key) {
  std::string out;
  out.reserve(value.size());
  for (size_t i = 0; i < value.size(); ++i) {
    char c = value[i];
    if (c != '\\' || i + 1 == value.size()) {
      out += c;
      continue;
    }
    char n = value[++i];
    switch (n) {
      case 't': out += '\t'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case '\\': out += '\\'; break;
      case '\'': out += '\''; break;
      case '"': out += '"'; break;
      case 'u': {
        // Java allows several 'u's ("\\uu0041").
        size_t j = i + 1;
        while (j < value.size() && value[j] == 'u') ++j;
        unsigned code = 0;
        auto res = std::from_chars(value.data() + j, value.data() + std::min(value.size(), j + 4), code, 16);
        if (j + 4 > value.size() || res.ptr != value.data() + j + 4)
          throw UserError(fmt::format("Invalid unicode escape in option '{}': '{}'", key, value));
        if (code > 0x7f)
          throw UserError(fmt::format("Option '{}' supports only ASCII characters, but was: '{}'", key, value));
        out += static_cast<char>(code);
        i = j + 3;
        break;
      }
      default:
        if (n >= '0' && n <= '7') {
          // Octal escape of up to three digits (value <= 0377).
          unsigned code = static_cast<unsigned>(n - '0');
          size_t j = i + 1;
          int max_digits = n <= '3' ? 2 : 1;
          while (max_digits-- > 0 && j < value.size() && value[j] >= '0' && value[j] <= '7') {
            code = code * 8 + static_cast<unsigned>(value[j] - '0');
            ++j;
          }
          out += static_cast<char>(code);
          i = j - 1;
        } else {
          // Java's unescapeJava keeps an unknown escape's character and drops the backslash.
          out += n;
        }
    }
  }
  return out;
}

std::optional<char> charOption(const OptionMap& options, const std::string& key, const std::string& table) {
  auto v = findOption(options, key);
  if (!v) return std::nullopt;
  std::string u = unescapeJava(*v, key);
  if (u.size() != 1) {
    throw UserError(fmt::format("Option '{}' of table '{}' must be a string with single character, but was: {}", key,
                                table, *v));
  }
  return u[0];
}

void checkProjection(const std::vector<int>& fields, size_t arity, const std::string& connector,
                     const std::string& table) {
  SLUICE_CHECK(!fields.empty(), "empty projection for the {} table '{}'", connector, table);
  for (size_t k = 0; k < fields.size(); ++k)
    SLUICE_CHECK(fields[k] >= 0 && static_cast<size_t>(fields[k]) < arity && (k == 0 || fields[k] > fields[k - 1]),
                 "bad projection index {} for the {} table '{}' of {} fields", fields[k], connector, table, arity);
}

types::RowType projectRowType(const types::RowType& row_type, const std::vector<int>& projection) {
  if (projection.empty()) return row_type;
  types::RowType t;
  for (int c : projection) {
    t.names.push_back(row_type.names[static_cast<size_t>(c)]);
    t.types.push_back(row_type.types[static_cast<size_t>(c)]);
  }
  return t;
}

}  // namespace sluice::connectors
