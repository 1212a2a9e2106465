#include "connectors/json_format.h"

#include <fmt/format.h>

#include <limits>

#include "common/error.h"
#include "types/value_format.h"

namespace sluice::connectors {

using types::Column;
using types::LogicalType;
using types::RowBatch;
using types::RowKind;
using types::TypeId;

namespace {

/// A parsed JSON value. Scalars keep their text: strings unescaped, numbers/true/false/null as written.
struct JsonValue {
  enum class Kind : uint8_t { kNull, kBool, kNumber, kString, kObject, kArray };
  Kind kind = Kind::kNull;
  std::string text;                                       // scalar text; raw JSON of objects/arrays
  // kObject members in order (two vectors: a vector of pairs would need JsonValue complete here).
  std::vector<std::string> keys;
  std::vector<JsonValue> values;
  const JsonValue* find(std::string_view key) const {
    for (size_t i = 0; i < keys.size(); ++i)
      if (keys[i] == key) return &values[i];
    return nullptr;
  }
};

struct ParseFailure {
  std::string what;
};

/// A recursive-descent parser of one JSON document (RFC 8259), nesting limited to 64 levels.
class JsonParser {
 public:
  explicit JsonParser(std::string_view s) : s_(s) {}

  JsonValue parseDocument() {
    JsonValue v = parseValue(0);
    skipWs();
    if (pos_ != s_.size()) failAt("unexpected text after the JSON value");
    return v;
  }

 private:
  [[noreturn]] void failAt(const char* what) {
    throw ParseFailure{fmt::format("malformed JSON at column {}: {}", pos_ + 1, what)};
  }
  void skipWs() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) ++pos_;
  }
  bool literal(std::string_view word) {
    if (s_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }
  static void appendUtf8(uint32_t cp, std::string& out) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }
  uint32_t hex4() {
    if (pos_ + 4 > s_.size()) failAt("truncated \\u escape");
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      char c = s_[pos_++];
      v <<= 4;
      if (c >= '0' && c <= '9') v |= static_cast<uint32_t>(c - '0');
      else if (c >= 'a' && c <= 'f') v |= static_cast<uint32_t>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') v |= static_cast<uint32_t>(c - 'A' + 10);
      else failAt("bad \\u escape");
    }
    return v;
  }
  std::string parseString() {
    ++pos_;  // opening quote
    std::string out;
    while (true) {
      if (pos_ >= s_.size()) failAt("unterminated string");
      char c = s_[pos_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) failAt("control character in string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= s_.size()) failAt("unterminated string");
      char e = s_[pos_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          uint32_t cp = hex4();
          if (cp >= 0xD800 && cp < 0xDC00 && s_.substr(pos_, 2) == "\\u") {
            pos_ += 2;
            uint32_t lo = hex4();
            if (lo < 0xDC00 || lo > 0xDFFF) failAt("bad surrogate pair");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          }
          appendUtf8(cp, out);
          break;
        }
        default: failAt("bad escape");
      }
    }
  }
  JsonValue parseValue(int depth) {
    if (depth > 64) failAt("nesting too deep");
    skipWs();
    if (pos_ >= s_.size()) failAt("unexpected end of input");
    JsonValue v;
    const size_t start = pos_;
    char c = s_[pos_];
    if (c == '{') {
      v.kind = JsonValue::Kind::kObject;
      ++pos_;
      skipWs();
      if (pos_ < s_.size() && s_[pos_] == '}') {
        ++pos_;
      } else {
        while (true) {
          skipWs();
          if (pos_ >= s_.size() || s_[pos_] != '"') failAt("expected a field name");
          std::string key = parseString();
          skipWs();
          if (pos_ >= s_.size() || s_[pos_] != ':') failAt("expected ':'");
          ++pos_;
          JsonValue member = parseValue(depth + 1);
          v.keys.push_back(std::move(key));
          v.values.push_back(std::move(member));
          skipWs();
          if (pos_ < s_.size() && s_[pos_] == ',') {
            ++pos_;
            continue;
          }
          if (pos_ < s_.size() && s_[pos_] == '}') {
            ++pos_;
            break;
          }
          failAt("expected ',' or '}'");
        }
      }
      v.text = std::string(s_.substr(start, pos_ - start));
    } else if (c == '[') {
      v.kind = JsonValue::Kind::kArray;
      ++pos_;
      skipWs();
      if (pos_ < s_.size() && s_[pos_] == ']') {
        ++pos_;
      } else {
        while (true) {
          parseValue(depth + 1);
          skipWs();
          if (pos_ < s_.size() && s_[pos_] == ',') {
            ++pos_;
            continue;
          }
          if (pos_ < s_.size() && s_[pos_] == ']') {
            ++pos_;
            break;
          }
          failAt("expected ',' or ']'");
        }
      }
      v.text = std::string(s_.substr(start, pos_ - start));
    } else if (c == '"') {
      v.kind = JsonValue::Kind::kString;
      v.text = parseString();
    } else if (literal("true")) {
      v.kind = JsonValue::Kind::kBool;
      v.text = "true";
    } else if (literal("false")) {
      v.kind = JsonValue::Kind::kBool;
      v.text = "false";
    } else if (literal("null")) {
      v.kind = JsonValue::Kind::kNull;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      v.kind = JsonValue::Kind::kNumber;
      while (pos_ < s_.size() && (std::string_view("+-.eE").find(s_[pos_]) != std::string_view::npos ||
                                  (s_[pos_] >= '0' && s_[pos_] <= '9')))
        ++pos_;
      v.text = std::string(s_.substr(start, pos_ - start));
      double d;
      if (!types::parseDouble(v.text, d)) failAt("bad number");
    } else {
      failAt("unexpected character");
    }
    return v;
  }

  std::string_view s_;
  size_t pos_ = 0;
};

bool parseBool(std::string_view text) {
  // Java's Boolean.parseBoolean, as Flink applies it to non-boolean nodes.
  if (text.size() != 4) return false;
  for (size_t i = 0; i < 4; ++i)
    if ((text[i] | 0x20) != "true"[i]) return false;
  return true;
}

}  // namespace

std::set<std::string> jsonFormatOptionKeys() {
  return {"json.ignore-parse-errors",
          "json.fail-on-missing-field",
          "json.timestamp-format.standard",
          "json.map-null-key.mode",
          "json.map-null-key.literal",
          "json.encode.decimal-as-plain-number",
          "debezium-json.ignore-parse-errors",
          "debezium-json.schema-include",
          "debezium-json.timestamp-format.standard",
          "debezium-json.map-null-key.mode",
          "debezium-json.map-null-key.literal",
          "debezium-json.encode.decimal-as-plain-number"};
}

JsonFormatOptions parseJsonFormatOptions(const OptionMap& options, JsonFlavor flavor, const std::string& table) {
  JsonFormatOptions o;
  const std::string prefix = flavor == JsonFlavor::kJson ? "json." : "debezium-json.";
  o.ignore_parse_errors = boolOption(options, prefix + "ignore-parse-errors", false, table);
  if (flavor == JsonFlavor::kJson) o.fail_on_missing_field = boolOption(options, "json.fail-on-missing-field", false, table);
  if (flavor == JsonFlavor::kDebezium) o.schema_include = boolOption(options, "debezium-json.schema-include", false, table);
  if (o.ignore_parse_errors && o.fail_on_missing_field)
    throw UserError(fmt::format("fail-on-missing-field and ignore-parse-errors shouldn't both be true (table '{}').",
                                table));
  if (auto ts = findOption(options, prefix + "timestamp-format.standard"); ts && *ts != "SQL" && *ts != "ISO-8601")
    throw UserError(fmt::format("Unsupported value '{}' for '{}' of table '{}'. Supported values are [SQL, ISO-8601].",
                                *ts, prefix + "timestamp-format.standard", table));
  return o;
}

struct JsonRowDeserializer::Impl {
  types::RowType row_type;
  JsonFormatOptions options;
  JsonFlavor flavor;
  std::vector<int> columns;  // physical index of each output column

  // Appends the fields of `obj` to `out` as one row of `kind`; throws ParseFailure.
  void appendRow(const JsonValue& obj, RowKind kind, RowBatch& out) const {
    if (obj.kind != JsonValue::Kind::kObject) throw ParseFailure{"expected a JSON object for the row"};
    for (size_t c = 0; c < columns.size(); ++c) {
      const size_t f = static_cast<size_t>(columns[c]);
      const JsonValue* v = obj.find(row_type.names[f]);
      if (v == nullptr && options.fail_on_missing_field)
        throw ParseFailure{fmt::format("Could not find field with name '{}'.", row_type.names[f])};
      Column& col = out.column(c);
      if (v == nullptr || v->kind == JsonValue::Kind::kNull) {
        col.appendNull();
        continue;
      }
      convert(*v, row_type.types[f], row_type.names[f], col);
    }
    out.kinds().push_back(kind);
  }

  static void convert(const JsonValue& v, const LogicalType& t, const std::string& name, Column& col) {
    const std::string& s = v.text;
    bool ok = true;
    switch (t.id) {
      case TypeId::kVarchar:
      case TypeId::kChar:
        col.appendString(s);
        return;
      case TypeId::kBoolean:
        col.appendLong(v.kind == JsonValue::Kind::kBool ? (s == "true") : parseBool(s));
        return;
      case TypeId::kInt:
      case TypeId::kBigInt: {
        int64_t x = 0;
        ok = v.kind != JsonValue::Kind::kObject && v.kind != JsonValue::Kind::kArray && types::parseInt64(s, x);
        if (ok && t.id == TypeId::kInt)
          ok = x >= std::numeric_limits<int32_t>::min() && x <= std::numeric_limits<int32_t>::max();
        if (ok) col.appendLong(x);
        break;
      }
      case TypeId::kDouble: {
        double x = 0;
        ok = types::parseDouble(s, x);
        if (ok) col.appendDouble(x);
        break;
      }
      case TypeId::kDecimal: {
        int64_t x = 0;
        ok = types::parseDecimal(s, t.scale, x);
        if (ok) col.appendLong(x);
        break;
      }
      case TypeId::kTimestamp: {
        int64_t x = 0;
        ok = v.kind == JsonValue::Kind::kString && types::parseTimestamp(s, x);
        if (ok) col.appendLong(x);
        break;
      }
      default:
        ok = false;
        break;
    }
    if (!ok)
      throw ParseFailure{fmt::format("Fail to deserialize at field: {}: cannot convert {} to {}", name,
                                     v.kind == JsonValue::Kind::kString ? "'" + s + "'" : s, t.toString())};
  }

  // Appends the rows of one document; throws ParseFailure.
  void rows(const JsonValue& doc, RowBatch& out, std::string_view line) const {
    if (doc.kind != JsonValue::Kind::kObject) throw ParseFailure{"expected a JSON object"};
    if (flavor == JsonFlavor::kJson) {
      appendRow(doc, RowKind::kInsert, out);
      return;
    }
    const JsonValue* payload = &doc;
    if (options.schema_include) {
      payload = doc.find("payload");
      if (payload == nullptr || payload->kind != JsonValue::Kind::kObject)
        throw ParseFailure{"missing \"payload\" object although 'debezium-json.schema-include' is true"};
    }
    const JsonValue* op = payload->find("op");
    const JsonValue* before = payload->find("before");
    const JsonValue* after = payload->find("after");
    const std::string op_text = op != nullptr ? op->text : std::string("null");
    auto requireImage = [&](const JsonValue* image, const char* which) {
      if (image == nullptr || image->kind != JsonValue::Kind::kObject)
        throw ParseFailure{fmt::format("The \"{}\" field of a \"{}\" message is null or missing. The Debezium JSON "
                                       "message is '{}'",
                                       which, op_text, line)};
    };
    if (op_text == "c" || op_text == "r") {
      requireImage(after, "after");
      appendRow(*after, RowKind::kInsert, out);
    } else if (op_text == "u") {
      if (before == nullptr || before->kind != JsonValue::Kind::kObject)
        throw ParseFailure{
            "The \"before\" field of update message is null, if you are using Debezium Postgres Connector, please "
            "check the Postgres table has been set REPLICA IDENTITY to FULL level."};
      requireImage(after, "after");
      appendRow(*before, RowKind::kUpdateBefore, out);
      appendRow(*after, RowKind::kUpdateAfter, out);
    } else if (op_text == "d") {
      if (before == nullptr || before->kind != JsonValue::Kind::kObject)
        throw ParseFailure{
            "The \"before\" field of delete message is null, if you are using Debezium Postgres Connector, please "
            "check the Postgres table has been set REPLICA IDENTITY to FULL level."};
      appendRow(*before, RowKind::kDelete, out);
    } else {
      throw ParseFailure{fmt::format("Unknown \"op\" value \"{}\". The Debezium JSON message is '{}'", op_text, line)};
    }
  }
};

JsonRowDeserializer::JsonRowDeserializer(types::RowType row_type, JsonFormatOptions options, JsonFlavor flavor,
                                         std::vector<int> projection)
    : impl_(std::make_unique<Impl>()) {
  impl_->row_type = std::move(row_type);
  impl_->options = options;
  impl_->flavor = flavor;
  if (projection.empty())
    for (size_t i = 0; i < impl_->row_type.size(); ++i) projection.push_back(static_cast<int>(i));
  impl_->columns = std::move(projection);
  for (size_t i = 0; i < impl_->row_type.size(); ++i) {
    const LogicalType& t = impl_->row_type.types[i];
    if (t.id == TypeId::kIntervalDayTime || t.id == TypeId::kNull)
      throw UserError(fmt::format("The json format does not support the type {} of column '{}'", t.toString(),
                                  impl_->row_type.names[i]));
  }
  for (int c : impl_->columns) {
    SLUICE_CHECK(c >= 0 && static_cast<size_t>(c) < impl_->row_type.size(), "bad json projection index {}", c);
    produced_type_.names.push_back(impl_->row_type.names[static_cast<size_t>(c)]);
    produced_type_.types.push_back(impl_->row_type.types[static_cast<size_t>(c)]);
  }
}

JsonRowDeserializer::~JsonRowDeserializer() = default;

size_t JsonRowDeserializer::parseLine(std::string_view line, RowBatch& out, std::string_view path,
                                      int64_t line_number) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.find_first_not_of(" \t") == std::string_view::npos) return 0;
  // Rows are appended into a scratch batch first, so a failing second row of an update leaves `out` unchanged.
  RowBatch scratch(produced_type_);
  try {
    JsonParser parser(line);
    JsonValue doc = parser.parseDocument();
    impl_->rows(doc, scratch, line);
  } catch (const ParseFailure& f) {
    if (impl_->options.ignore_parse_errors) {
      ++parse_errors_;
      return 0;
    }
    throw InputError(fmt::format("{}:{}: {}", path, line_number, f.what));
  }
  const size_t n = scratch.numRows();
  for (size_t r = 0; r < n; ++r) out.appendRow(scratch, r);
  return n;
}

}  // namespace sluice::connectors
