#include "connectors/filesystem_partition.h"

#include <fmt/format.h>

#include "types/value_format.h"

namespace sluice::connectors {

using types::TypeId;

namespace {

bool needsEscaping(unsigned char c) {
  if (c < 0x20 || c == 0x7F) return true;
  switch (c) {
    case '"': case '#': case '%': case '\'': case '*': case '/': case ':': case '=': case '?': case '\\':
    case '{': case '}': case '[': case ']': case '^':
      return true;
    default:
      return false;
  }
}

int hexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string escapePathName(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  for (const char ch : name) {
    const auto c = static_cast<unsigned char>(ch);
    if (needsEscaping(c)) {
      fmt::format_to(std::back_inserter(out), "%{:02X}", static_cast<unsigned>(c));
    } else {
      out += ch;
    }
  }
  return out;
}

std::string unescapePathName(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  for (size_t i = 0; i < name.size(); ++i) {
    // Flink's loop needs a character after the two digits (`i + 2 < length`): a trailing "%XX" stays.
    if (name[i] == '%' && i + 2 < name.size()) {
      const int hi = hexValue(name[i + 1]);
      const int lo = hexValue(name[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
        continue;
      }
    }
    out += name[i];
  }
  return out;
}

bool isPartitionType(const types::LogicalType& type) {
  switch (type.id) {
    case TypeId::kChar: case TypeId::kVarchar: case TypeId::kBoolean: case TypeId::kTinyInt:
    case TypeId::kSmallInt: case TypeId::kInt: case TypeId::kBigInt: case TypeId::kDate:
      return true;
    default:
      return false;
  }
}

std::optional<std::string> partitionValueText(const types::Column& column, size_t row) {
  if (column.isNull(row)) return std::nullopt;
  switch (column.type().id) {
    case TypeId::kChar:
    case TypeId::kVarchar:
      return std::string(column.getString(row));
    case TypeId::kBoolean:
      return std::string(column.getLong(row) != 0 ? "true" : "false");
    case TypeId::kDate: {
      std::string out;
      types::formatDate(column.getLong(row), out);
      return out;
    }
    default:
      return std::to_string(column.getLong(row));
  }
}

bool appendPartitionValue(const std::optional<std::string>& text, types::Column& column) {
  if (!text) {
    column.appendNull();
    return true;
  }
  const TypeId id = column.type().id;
  if (id == TypeId::kChar || id == TypeId::kVarchar) {
    column.appendString(*text);
    return true;
  }
  if (id == TypeId::kBoolean) {
    // Java's Boolean.parseBoolean: "true" in any case is true, everything else false.
    std::string lower;
    for (char c : *text) lower += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    column.appendLong(lower == "true" ? 1 : 0);
    return true;
  }
  int64_t v = 0;
  if (id == TypeId::kDate) {
    if (!types::parseDate(*text, v)) return false;
    column.appendLong(v);
    return true;
  }
  if (!types::parseInt64(*text, v)) return false;
  const int64_t lo = id == TypeId::kTinyInt ? -128 : id == TypeId::kSmallInt ? -32768 : id == TypeId::kInt ? INT32_MIN : INT64_MIN;
  const int64_t hi = id == TypeId::kTinyInt ? 127 : id == TypeId::kSmallInt ? 32767 : id == TypeId::kInt ? INT32_MAX : INT64_MAX;
  if (v < lo || v > hi) return false;
  column.appendLong(v);
  return true;
}

std::string partitionPath(const types::RowBatch& batch, size_t row, const std::vector<int>& keys,
                          const types::RowType& row_type, const std::string& default_name) {
  std::string out;
  for (size_t k = 0; k < keys.size(); ++k) {
    const auto c = static_cast<size_t>(keys[k]);
    if (k > 0) out += '/';
    out += escapePathName(row_type.names[c]);
    out += '=';
    std::optional<std::string> v = partitionValueText(batch.column(c), row);
    out += v && !v->empty() ? escapePathName(*v) : default_name;
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> partitionSpecOf(std::string_view relative_path) {
  std::vector<std::pair<std::string, std::string>> out;
  size_t start = 0;
  while (true) {
    const size_t slash = relative_path.find('/', start);
    if (slash == std::string_view::npos) break;  // the rest is the file name
    const std::string_view dir = relative_path.substr(start, slash - start);
    // Flink's PARTITION_NAME_PATTERN "([^/]+)=([^/]+)": the first '=' splits (both sides non-empty).
    const size_t eq = dir.find('=');
    if (eq != std::string_view::npos && eq > 0 && eq + 1 < dir.size())
      out.emplace_back(unescapePathName(dir.substr(0, eq)), unescapePathName(dir.substr(eq + 1)));
    start = slash + 1;
  }
  return out;
}

std::optional<int64_t> extractPartitionTime(const std::string& pattern,
                                            const std::vector<std::pair<std::string, std::string>>& spec) {
  std::string text;
  if (pattern.empty()) {
    if (spec.empty()) return std::nullopt;
    text = spec.front().second;
  } else {
    // Flink replaces "$key" for each key in order (String#replaceAll), so "$dt" inside "$dtx" is replaced too.
    text = pattern;
    for (const auto& [key, value] : spec) {
      const std::string needle = "$" + key;
      for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + value.size()))
        text.replace(at, needle.size(), value);
    }
  }
  // Flink's default formatter 'yyyy-MM-dd HH:mm:ss' (lenient on digit counts, a fraction allowed) or a
  // bare date; the 'T' form is Flink's ISO formatter, not the default: refuse it.
  if (text.find('T') != std::string::npos) return std::nullopt;
  int64_t ms = 0;
  if (!types::parseTimestamp(text, ms)) return std::nullopt;
  return ms;
}

}  // namespace sluice::connectors
