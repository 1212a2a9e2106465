#include "connectors/json_format.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <limits>
#include <unordered_map>

#include "common/error.h"
#include "types/value_format.h"

namespace sluice::connectors {

using types::Column;
using types::LogicalType;
using types::RowBatch;
using types::RowKind;
using types::TypeId;

namespace {

namespace od = simdjson::ondemand;

struct ParseFailure {
  std::string what;
};

/// One value of a parsed document. Objects link their members (`first`, then `next`); arrays keep only
/// their JSON text. Text views point into the padded message copy or the parser's string buffer and
/// stay valid until the next message is parsed.
struct JsonNode {
  enum class Kind : uint8_t { kNull, kBool, kNumber, kString, kObject, kArray };
  Kind kind = Kind::kNull;
  std::string_view key;   // member name (unescaped) inside an object
  std::string_view text;  // string: unescaped; number/bool: as written; object/array: JSON text
  int32_t first = -1;
  int32_t next = -1;
};

std::string_view trimRight(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

/// RFC 8259 number grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? (simdjson's On Demand API
/// only checks a number when it converts it; values are converted here from their text instead).
bool isJsonNumber(std::string_view s) {
  size_t i = 0;
  auto digits = [&] {
    const size_t start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    return i > start;
  };
  if (i < s.size() && s[i] == '-') ++i;
  if (i < s.size() && s[i] == '0') {
    ++i;
  } else if (!digits()) {
    return false;
  }
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (!digits()) return false;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (!digits()) return false;
  }
  return i == s.size();
}

/// The parsed form of one message: simdjson On Demand walks every value (so an error anywhere is found,
/// as with a full tree) into a flat node list. Stage 1 (structure, UTF-8) runs on the CPU's best kernel;
/// nesting is limited to kMaxDepth levels.
class JsonDocument {
 public:
  static constexpr int kMaxDepth = 256;

  /// Parses `message`; throws ParseFailure. Returns the root, an object.
  const JsonNode& parse(std::string_view message) {
    nodes_.clear();
    message_ = message;
    padded_.assign(message.data(), message.size());
    padded_.resize(message.size() + simdjson::SIMDJSON_PADDING);
    doc_valid_ = false;
    if (auto e = parser_.iterate(padded_.data(), message.size(), padded_.size()).get(doc_)) fail(e);
    doc_valid_ = true;
    od::json_type type;
    if (auto e = doc_.type().get(type)) fail(e);
    if (type != od::json_type::object) throw ParseFailure{"expected a JSON object"};
    od::object obj;
    if (auto e = doc_.get_object().get(obj)) fail(e);
    nodes_.push_back(JsonNode{JsonNode::Kind::kObject, {}, trimRight(message), -1, -1});
    walkMembers(obj, 0, 1);
    const char* rest = nullptr;
    if (!doc_.current_location().get(rest)) failAt(rest, "unexpected text after the JSON object");
    return nodes_[0];
  }

  /// The member `key` of object `obj` (the last one when repeated, as Jackson's tree), or nullptr.
  const JsonNode* member(const JsonNode& obj, std::string_view key) const {
    const JsonNode* found = nullptr;
    for (int32_t i = obj.first; i >= 0; i = nodes_[static_cast<size_t>(i)].next)
      if (nodes_[static_cast<size_t>(i)].key == key) found = &nodes_[static_cast<size_t>(i)];
    return found;
  }
  const JsonNode* firstMember(const JsonNode& obj) const { return obj.first < 0 ? nullptr : &nodes_[obj.first]; }
  const JsonNode* nextMember(const JsonNode& m) const { return m.next < 0 ? nullptr : &nodes_[m.next]; }

 private:
  [[noreturn]] void fail(simdjson::error_code e) {
    const char* at = nullptr;
    if (!doc_valid_ || doc_.current_location().get(at)) at = nullptr;
    failAt(at, simdjson::error_message(e));
  }
  [[noreturn]] void failAt(const char* at, std::string_view what) {
    std::string text(message_.substr(0, 200));
    if (message_.size() > 200) text += "...";
    if (at != nullptr && at >= padded_.data() && at <= padded_.data() + message_.size())
      throw ParseFailure{fmt::format("Failed to deserialize JSON '{}': malformed JSON at column {}: {}", text,
                                     at - padded_.data() + 1, what)};
    throw ParseFailure{fmt::format("Failed to deserialize JSON '{}': malformed JSON: {}", text, what)};
  }

  void walkMembers(od::object& obj, size_t parent, int depth) {
    int32_t last = -1;
    for (auto member : obj) {
      od::field field;
      if (auto e = std::move(member).get(field)) fail(e);
      std::string_view key;
      if (auto e = field.unescaped_key().get(key)) fail(e);
      const int32_t child = walk(field.value(), depth, key);
      if (last < 0)
        nodes_[parent].first = child;
      else
        nodes_[static_cast<size_t>(last)].next = child;
      last = child;
    }
  }

  // Adds the node of `v` (and of its members) and returns its index.
  int32_t walk(od::value v, int depth, std::string_view key) {
    if (depth > kMaxDepth) throw ParseFailure{fmt::format("JSON nested deeper than {} levels", kMaxDepth)};
    od::json_type type;
    if (auto e = v.type().get(type)) fail(e);
    const auto index = static_cast<int32_t>(nodes_.size());
    nodes_.push_back(JsonNode{JsonNode::Kind::kNull, key, {}, -1, -1});
    JsonNode::Kind kind = JsonNode::Kind::kNull;
    std::string_view text;
    switch (type) {
      case od::json_type::object: {
        kind = JsonNode::Kind::kObject;
        od::object obj;
        bool rewound = false;
        if (auto e = v.get_object().get(obj)) fail(e);
        if (auto e = obj.raw_json().get(text)) fail(e);
        text = trimRight(text);
        if (auto e = obj.reset().get(rewound)) fail(e);
        walkMembers(obj, static_cast<size_t>(index), depth + 1);
        break;
      }
      case od::json_type::array: {
        kind = JsonNode::Kind::kArray;
        od::array arr;
        bool rewound = false;
        if (auto e = v.get_array().get(arr)) fail(e);
        if (auto e = arr.raw_json().get(text)) fail(e);
        text = trimRight(text);
        if (auto e = arr.reset().get(rewound)) fail(e);
        for (auto element : arr) {
          od::value item;
          if (auto e = std::move(element).get(item)) fail(e);
          walk(item, depth + 1, {});
        }
        nodes_.resize(static_cast<size_t>(index) + 1);  // elements are only checked, not kept
        break;
      }
      case od::json_type::string:
        kind = JsonNode::Kind::kString;
        if (auto e = v.get_string().get(text)) fail(e);
        break;
      case od::json_type::number: {
        kind = JsonNode::Kind::kNumber;
        text = trimRight(v.raw_json_token());
        if (!isJsonNumber(text)) failAt(text.data(), "bad number");
        break;
      }
      case od::json_type::boolean: {
        kind = JsonNode::Kind::kBool;
        bool b = false;
        if (auto e = v.get_bool().get(b)) fail(e);
        text = b ? "true" : "false";
        break;
      }
      case od::json_type::null: {
        bool is_null = false;
        if (auto e = v.is_null().get(is_null)) fail(e);
        if (!is_null) failAt(v.raw_json_token().data(), "unexpected literal");
        break;
      }
    }
    JsonNode& node = nodes_[static_cast<size_t>(index)];
    node.kind = kind;
    node.text = text;
    return index;
  }

  od::parser parser_;
  od::document doc_;
  bool doc_valid_ = false;  // doc_ belongs to the current message (stage 1 passed)
  std::string padded_;
  std::string_view message_;
  std::vector<JsonNode> nodes_;
};

bool parseBool(std::string_view text) {
  // Java's Boolean.parseBoolean, as Flink applies it to non-boolean nodes.
  if (text.size() != 4) return false;
  for (size_t i = 0; i < 4; ++i)
    if ((text[i] | 0x20) != "true"[i]) return false;
  return true;
}

bool isDigits(std::string_view s, size_t pos, size_t n) {
  if (pos + n > s.size()) return false;
  for (size_t i = pos; i < pos + n; ++i)
    if (s[i] < '0' || s[i] > '9') return false;
  return true;
}

/// The shape of Flink's timestamp formats (JsonFormatOptionsUtil / TimeFormats): SQL
/// "yyyy-MM-dd HH:mm:ss[.f{1,9}]"; ISO-8601 (ISO_LOCAL_DATE_TIME) "yyyy-MM-ddTHH:mm[:ss[.f{1,9}]]".
bool hasTimestampShape(std::string_view s, JsonTimestampFormat format) {
  const char sep = format == JsonTimestampFormat::kSql ? ' ' : 'T';
  if (!isDigits(s, 0, 4) || s.size() < 16 || s[4] != '-' || !isDigits(s, 5, 2) || s[7] != '-' || !isDigits(s, 8, 2) ||
      s[10] != sep || !isDigits(s, 11, 2) || s[13] != ':' || !isDigits(s, 14, 2))
    return false;
  if (s.size() == 16) return format == JsonTimestampFormat::kIso8601;
  if (s[16] != ':' || !isDigits(s, 17, 2)) return false;
  if (s.size() == 19) return true;
  if (s[19] != '.' || s.size() < 21 || s.size() > 29) return false;
  return isDigits(s, 20, s.size() - 20);
}

/// One converted field, held until every field of the message converted.
struct FieldValue {
  bool null = true;
  int64_t l = 0;
  double d = 0;
  std::string_view s;
};

}  // namespace

std::set<std::string> jsonFormatOptionKeys() {
  std::set<std::string> keys;
  for (const char* suffix : {"ignore-parse-errors", "timestamp-format.standard", "map-null-key.mode",
                             "map-null-key.literal", "encode.decimal-as-plain-number"}) {
    keys.insert(std::string("json.") + suffix);
    keys.insert(std::string("debezium-json.") + suffix);
  }
  keys.insert("json.fail-on-missing-field");
  keys.insert("json.encode.ignore-null-fields");
  keys.insert("json.decode.json-parser.enabled");
  keys.insert("debezium-json.schema-include");
  return keys;
}

JsonFormatOptions parseJsonFormatOptions(const OptionMap& options, JsonFlavor flavor, const std::string& table) {
  JsonFormatOptions o;
  const std::string prefix = flavor == JsonFlavor::kJson ? "json." : "debezium-json.";
  o.ignore_parse_errors = boolOption(options, prefix + "ignore-parse-errors", false, table);
  if (flavor == JsonFlavor::kJson) {
    o.fail_on_missing_field = boolOption(options, "json.fail-on-missing-field", false, table);
    o.encode_ignore_null_fields = boolOption(options, "json.encode.ignore-null-fields", false, table);
    boolOption(options, "json.decode.json-parser.enabled", true, table);  // checked; one parser here
  }
  if (flavor == JsonFlavor::kDebezium)
    o.schema_include = boolOption(options, "debezium-json.schema-include", false, table);
  o.encode_decimal_as_plain_number = boolOption(options, prefix + "encode.decimal-as-plain-number", false, table);
  if (o.ignore_parse_errors && o.fail_on_missing_field)
    throw UserError(
        fmt::format("fail-on-missing-field and ignore-parse-errors shouldn't both be true (table '{}').", table));
  if (auto ts = findOption(options, prefix + "timestamp-format.standard")) {
    if (*ts == "SQL")
      o.timestamp_format = JsonTimestampFormat::kSql;
    else if (*ts == "ISO-8601")
      o.timestamp_format = JsonTimestampFormat::kIso8601;
    else
      throw UserError(
          fmt::format("Unsupported value '{}' for '{}' of table '{}'. Supported values are [SQL, ISO-8601].", *ts,
                      prefix + "timestamp-format.standard", table));
  }
  if (auto mode = findOption(options, prefix + "map-null-key.mode");
      mode && *mode != "FAIL" && *mode != "DROP" && *mode != "LITERAL")
    throw UserError(
        fmt::format("Unsupported value '{}' for '{}' of table '{}'. Supported values are [FAIL, DROP, "
                    "LITERAL].",
                    *mode, prefix + "map-null-key.mode", table));
  return o;
}

struct JsonRowDeserializer::Impl {
  types::RowType row_type;
  JsonFormatOptions options;
  JsonFlavor flavor;
  std::vector<int> columns;  // physical index of each output column
  JsonDocument doc;
  std::vector<FieldValue> staged;  // the fields of up to two rows, before they are appended
  std::vector<RowKind> staged_kinds;

  std::unordered_map<std::string_view, size_t> column_of;  // field name -> output column
  std::vector<const JsonNode*> slots;                      // the member of each output column

  // Converts the fields of `obj` into `staged` as one row of `kind`; throws ParseFailure.
  void stageRow(const JsonNode& obj, RowKind kind) {
    if (obj.kind != JsonNode::Kind::kObject) throw ParseFailure{"expected a JSON object for the row"};
    slots.assign(columns.size(), nullptr);
    for (const JsonNode* m = doc.firstMember(obj); m != nullptr; m = doc.nextMember(*m))
      if (auto it = column_of.find(m->key); it != column_of.end()) slots[it->second] = m;  // the last one wins
    for (size_t c = 0; c < columns.size(); ++c) {
      const size_t f = static_cast<size_t>(columns[c]);
      const JsonNode* v = slots[c];
      if (v == nullptr && options.fail_on_missing_field)
        throw ParseFailure{fmt::format("Could not find field with name '{}'.", row_type.names[f])};
      FieldValue& out = staged.emplace_back();
      if (v == nullptr || v->kind == JsonNode::Kind::kNull) continue;
      if (!options.ignore_parse_errors) {
        convert(*v, row_type.types[f], row_type.names[f], out);
        continue;
      }
      // Flink's JsonToRowDataConverters.wrapIntoNullableConverter: under ignore-parse-errors a field
      // that does not convert is NULL and the row is kept; only a message that is not a JSON row is dropped.
      try {
        convert(*v, row_type.types[f], row_type.names[f], out);
      } catch (const ParseFailure&) {
        out = FieldValue{};
      }
    }
    staged_kinds.push_back(kind);
  }

  void convert(const JsonNode& v, const LogicalType& t, const std::string& name, FieldValue& out) const {
    const std::string_view s = v.text;
    const bool scalar = v.kind != JsonNode::Kind::kObject && v.kind != JsonNode::Kind::kArray;
    bool ok = true;
    switch (t.id) {
      case TypeId::kVarchar:
      case TypeId::kChar:
        out.s = s;
        break;
      case TypeId::kBoolean:
        out.l = v.kind == JsonNode::Kind::kBool ? (s == "true") : parseBool(s);
        break;
      case TypeId::kTinyInt:
      case TypeId::kSmallInt:
      case TypeId::kInt:
      case TypeId::kBigInt:
        // Byte/Short/Integer/Long.parseLong of the text: outside the type's range does not parse.
        ok = scalar && types::parseInt64(s, out.l) && types::wrapToType(t, out.l) == out.l;
        break;
      case TypeId::kDouble:
        ok = scalar && types::parseDouble(s, out.d);
        break;
      case TypeId::kFloat: {
        float f = 0;
        ok = scalar && types::parseFloat(s, f);
        out.d = f;
        break;
      }
      case TypeId::kDate:  // ISO_LOCAL_DATE
        ok = v.kind == JsonNode::Kind::kString && types::parseDate(s, out.l);
        break;
      case TypeId::kTime:  // SQL_TIME_FORMAT: HH:mm:ss[.fraction]
        ok = v.kind == JsonNode::Kind::kString && types::parseTime(s, out.l);
        break;
      case TypeId::kDecimal:
        // Past the declared precision is out of range, as the CSV format says (Flink's
        // DecimalData.fromBigDecimal gives up on it).
        ok = scalar && types::parseDecimal(s, t.scale, out.l) && types::decimalFitsPrecision(out.l, t.precision);
        break;
      case TypeId::kTimestamp:
        ok = v.kind == JsonNode::Kind::kString && hasTimestampShape(s, options.timestamp_format) &&
             types::parseTimestamp(s, out.l);
        if (!ok)
          throw ParseFailure{fmt::format(
              "Fail to deserialize at field: {}: cannot convert {} to {} (timestamp-format.standard {} reads \"{}\")",
              name, v.kind == JsonNode::Kind::kString ? "'" + std::string(s) + "'" : std::string(s), t.toString(),
              options.timestamp_format == JsonTimestampFormat::kSql ? "SQL" : "ISO-8601",
              options.timestamp_format == JsonTimestampFormat::kSql ? "yyyy-MM-dd HH:mm:ss[.fraction]"
                                                                    : "yyyy-MM-ddTHH:mm[:ss[.fraction]]")};
        break;
      case TypeId::kTimestampLtz: {
        // SQL "yyyy-MM-dd HH:mm:ss[.fraction]Z" / ISO-8601 "yyyy-MM-ddTHH:mm[:ss[.fraction]]Z", in UTC.
        const bool z = !s.empty() && s.back() == 'Z';
        const std::string_view body = z ? s.substr(0, s.size() - 1) : s;
        ok = v.kind == JsonNode::Kind::kString && z && hasTimestampShape(body, options.timestamp_format) &&
             types::parseTimestamp(body, out.l);
        if (!ok)
          throw ParseFailure{fmt::format(
              "Fail to deserialize at field: {}: cannot convert {} to {} (timestamp-format.standard {} reads \"{}\")",
              name, v.kind == JsonNode::Kind::kString ? "'" + std::string(s) + "'" : std::string(s), t.toString(),
              options.timestamp_format == JsonTimestampFormat::kSql ? "SQL" : "ISO-8601",
              options.timestamp_format == JsonTimestampFormat::kSql ? "yyyy-MM-dd HH:mm:ss[.fraction]Z"
                                                                    : "yyyy-MM-ddTHH:mm[:ss[.fraction]]Z")};
        break;
      }
      default:
        ok = false;
        break;
    }
    if (!ok)
      throw ParseFailure{fmt::format("Fail to deserialize at field: {}: cannot convert {} to {}", name,
                                     v.kind == JsonNode::Kind::kString ? "'" + std::string(s) + "'" : std::string(s),
                                     t.toString())};
    out.null = false;
  }

  // Stages the rows of one message; throws ParseFailure.
  void stageRows(std::string_view message) {
    const JsonNode& root = doc.parse(message);
    if (flavor == JsonFlavor::kJson) {
      stageRow(root, RowKind::kInsert);
      return;
    }
    const JsonNode* payload = &root;
    if (options.schema_include) {
      payload = doc.member(root, "payload");
      if (payload == nullptr || payload->kind != JsonNode::Kind::kObject)
        throw ParseFailure{"missing \"payload\" object although 'debezium-json.schema-include' is true"};
    }
    const JsonNode* op = doc.member(*payload, "op");
    const JsonNode* before = doc.member(*payload, "before");
    const JsonNode* after = doc.member(*payload, "after");
    const std::string_view op_text = op != nullptr && op->kind != JsonNode::Kind::kNull ? op->text : "null";
    auto isObject = [](const JsonNode* image) { return image != nullptr && image->kind == JsonNode::Kind::kObject; };
    if (op_text == "c" || op_text == "r") {
      if (!isObject(after))
        throw ParseFailure{
            fmt::format("The \"after\" field of a \"{}\" message is null or missing. The Debezium JSON "
                        "message is '{}'",
                        op_text, message)};
      stageRow(*after, RowKind::kInsert);
    } else if (op_text == "u") {
      if (!isObject(before))
        throw ParseFailure{
            "The \"before\" field of update message is null, if you are using Debezium Postgres Connector, please "
            "check the Postgres table has been set REPLICA IDENTITY to FULL level."};
      if (!isObject(after))
        throw ParseFailure{
            fmt::format("The \"after\" field of a \"u\" message is null or missing. The Debezium JSON "
                        "message is '{}'",
                        message)};
      stageRow(*before, RowKind::kUpdateBefore);
      stageRow(*after, RowKind::kUpdateAfter);
    } else if (op_text == "d") {
      if (!isObject(before))
        throw ParseFailure{
            "The \"before\" field of delete message is null, if you are using Debezium Postgres Connector, please "
            "check the Postgres table has been set REPLICA IDENTITY to FULL level."};
      stageRow(*before, RowKind::kDelete);
    } else {
      throw ParseFailure{
          fmt::format("Unknown \"op\" value \"{}\". The Debezium JSON message is '{}'", op_text, message)};
    }
  }

  // Appends the staged rows to `out`.
  void appendStaged(RowBatch& out) const {
    const size_t width = columns.size();
    for (size_t r = 0; r < staged_kinds.size(); ++r) {
      for (size_t c = 0; c < width; ++c) {
        const FieldValue& v = staged[r * width + c];
        Column& col = out.column(c);
        if (v.null)
          col.appendNull();
        else if (col.type().isString())
          col.appendString(v.s);
        else if (col.type().isApproximate())
          col.appendDouble(v.d);
        else
          col.appendLong(v.l);
      }
      out.kinds().push_back(staged_kinds[r]);
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
  for (size_t out = 0; out < impl_->columns.size(); ++out) {
    const int c = impl_->columns[out];
    SLUICE_CHECK(c >= 0 && static_cast<size_t>(c) < impl_->row_type.size(), "bad json projection index {}", c);
    impl_->column_of.emplace(impl_->row_type.names[static_cast<size_t>(c)], out);
    produced_type_.names.push_back(impl_->row_type.names[static_cast<size_t>(c)]);
    produced_type_.types.push_back(impl_->row_type.types[static_cast<size_t>(c)]);
  }
}

JsonRowDeserializer::~JsonRowDeserializer() = default;

template <typename Where>
size_t JsonRowDeserializer::decode(std::string_view message, RowBatch& out, const Where& where) {
  impl_->staged.clear();
  impl_->staged_kinds.clear();
  try {
    impl_->stageRows(message);
  } catch (const ParseFailure& f) {
    if (impl_->options.ignore_parse_errors) {
      ++parse_errors_;
      return 0;
    }
    throw InputError(fmt::format("{}: {}", where(), f.what));
  }
  impl_->appendStaged(out);
  return impl_->staged_kinds.size();
}

size_t JsonRowDeserializer::deserialize(std::string_view message, RowBatch& out, std::string_view where) {
  if (message.empty()) return 0;
  return decode(message, out, [&] { return where; });
}

size_t JsonRowDeserializer::parseLine(std::string_view line, RowBatch& out, std::string_view path,
                                      int64_t line_number) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.find_first_not_of(" \t") == std::string_view::npos) return 0;
  return decode(line, out, [&] { return fmt::format("{}:{}", path, line_number); });
}

}  // namespace sluice::connectors
