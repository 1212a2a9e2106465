#pragma once
/// The `json` and `debezium-json` formats (Flink's flink-json: JsonRowDataDeserializationSchema,
/// JsonToRowDataConverters, RowDataToJsonConverters, DebeziumJsonDeserializationSchema,
/// DebeziumJsonSerializationSchema). One message is one JSON document: a line of a file, or the key or
/// value of a Kafka record. Parsing runs on simdjson (On Demand, every value visited, so malformed JSON
/// anywhere in the document is an error as with Flink's Jackson tree); simdjson.h stays inside the .cc.
/// No runtime or table dependency, so the fuzz targets link json_format.cc alone.
///
/// `json` (Flink's rules): top-level fields are matched to columns by name (a repeated name: the last
/// wins, as Jackson's tree); a missing field is NULL, or an error with `json.fail-on-missing-field`. A
/// JSON string is accepted for a numeric or BOOLEAN column when its text parses (Flink converts through
/// `asText()`); a non-string value for a STRING column is its JSON text. TIMESTAMP values are strings in
/// the `json.timestamp-format.standard` format: `SQL` (default) "yyyy-MM-dd HH:mm:ss[.fraction]", or
/// `ISO-8601` "yyyy-MM-ddTHH:mm[:ss[.fraction]]" (Flink's SQL_TIMESTAMP_FORMAT / ISO_LOCAL_DATE_TIME;
/// fraction 1-9 digits, kept to milliseconds). With `json.ignore-parse-errors` a message that is not a
/// JSON object or whose field does not convert is skipped (Flink returns null for the whole row).
///
/// `debezium-json` (schema-include false): {"before": {...}|null, "after": {...}|null, "op": "c"|"r"|"u"|"d"}.
/// c and r → +I from `after`; u → -U from `before` then +U from `after`; d → -D from `before`. With
/// `debezium-json.schema-include` the object is {"schema": ..., "payload": {...}}. An unknown op, or a
/// missing `before` of an update, is an error (Flink's messages) unless `debezium-json.ignore-parse-errors`.
/// Its timestamps follow `debezium-json.timestamp-format.standard`.
/// Errors are InputError "<where>: <what>" (`where` = "path:line" for files). One deserializer or
/// serializer per thread.

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "connectors/connector_options.h"
#include "types/row_batch.h"

namespace sluice::connectors {

/// Which format a JsonRowDeserializer / JsonRowSerializer speaks.
enum class JsonFlavor {
  kJson,      ///< `format` = `json`: each message one +I row
  kDebezium,  ///< `format` = `debezium-json`: each message a change event (+I, -U/+U, or -D)
};

/// `<format>.timestamp-format.standard` (Flink's TimestampFormat).
enum class JsonTimestampFormat {
  kSql,      ///< "2020-12-30 12:13:14.123" (default)
  kIso8601,  ///< "2020-12-30T12:13:14.123"
};

/// The options of the json / debezium-json formats (Flink's keys and defaults).
struct JsonFormatOptions {
  bool ignore_parse_errors = false;    ///< json.ignore-parse-errors / debezium-json.ignore-parse-errors
  bool fail_on_missing_field = false;  ///< json.fail-on-missing-field
  bool schema_include = false;         ///< debezium-json.schema-include
  JsonTimestampFormat timestamp_format = JsonTimestampFormat::kSql;  ///< <fmt>.timestamp-format.standard
  bool encode_decimal_as_plain_number = false;                       ///< <fmt>.encode.decimal-as-plain-number
  bool encode_ignore_null_fields = false;                            ///< json.encode.ignore-null-fields
};

/// The option keys of both flavors, for DynamicTableFactory::supportedOptions.
std::set<std::string> jsonFormatOptionKeys();

/// Reads the options of `flavor` from a table's WITH options (keys "json.*" or "debezium-json.*"; a
/// Kafka table's `key.json.*` / `value.json.*` are passed here with their prefix removed). Throws
/// UserError naming the table and key on a bad value, and Flink's error when both
/// fail-on-missing-field and ignore-parse-errors are true.
JsonFormatOptions parseJsonFormatOptions(const OptionMap& options, JsonFlavor flavor, const std::string& table);

/// Converts JSON messages into rows of a physical RowType (or of a projection of it).
class JsonRowDeserializer {
 public:
  /// `projection`: physical indexes emitted, ascending; empty emits every field. Throws UserError when a
  /// column type cannot be read from JSON.
  JsonRowDeserializer(types::RowType row_type, JsonFormatOptions options, JsonFlavor flavor,
                      std::vector<int> projection = {});
  ~JsonRowDeserializer();
  JsonRowDeserializer(const JsonRowDeserializer&) = delete;
  JsonRowDeserializer& operator=(const JsonRowDeserializer&) = delete;

  /// Decodes one message (e.g. a Kafka record value; any bytes, no padding or terminator needed) and
  /// appends 0, 1 or 2 rows with their kinds to `out` (columns of producedType()). Returns the number of
  /// rows appended. An empty message yields no row (Flink's formats return nothing for a null message,
  /// and debezium-json skips tombstones). On bad input: with ignore-parse-errors the message is skipped
  /// and counted in parseErrors(); otherwise throws InputError "<where>: <what>". `out` is unchanged
  /// unless rows are returned (the two rows of an update are appended together or not at all).
  size_t deserialize(std::string_view message, types::RowBatch& out, std::string_view where);

  /// deserialize() for one line of a file: a trailing '\r' is dropped, a blank line yields no row, and
  /// errors read "<path>:<line_number>: <what>".
  size_t parseLine(std::string_view line, types::RowBatch& out, std::string_view path, int64_t line_number);

  /// Messages skipped because of parse errors so far.
  int64_t parseErrors() const { return parse_errors_; }
  const types::RowType& producedType() const { return produced_type_; }

 private:
  template <typename Where>
  size_t decode(std::string_view message, types::RowBatch& out, const Where& where);

  struct Impl;
  std::unique_ptr<Impl> impl_;
  types::RowType produced_type_;
  int64_t parse_errors_ = 0;
};

/// Converts rows into JSON messages (Flink's JsonRowDataSerializationSchema / DebeziumJsonSerializationSchema).
/// `json`: one object per row, fields in column order, the row kind not written (a Kafka / upsert-kafka
/// sink decides what a kind means). `debezium-json`: +I/+U → {"before":null,"after":{...},"op":"c"},
/// -U/-D → {"before":{...},"after":null,"op":"d"}. Values: numbers as JSON numbers (DOUBLE as Java's
/// Double.toString, DECIMAL as BigDecimal.toString or plain with encode.decimal-as-plain-number; NaN and
/// Infinity as strings, as Jackson), TIMESTAMP as a string in the timestamp-format standard, NULL as null
/// (or left out with json.encode.ignore-null-fields).
class JsonRowSerializer {
 public:
  /// Throws UserError when a column type cannot be written as JSON.
  JsonRowSerializer(types::RowType row_type, JsonFormatOptions options, JsonFlavor flavor);

  /// Appends the message of row `row` of `batch` (columns of the row type) to `out`, without a newline.
  void serialize(const types::RowBatch& batch, size_t row, std::string& out) const;

 private:
  void writeObject(const types::RowBatch& batch, size_t row, std::string& out) const;

  types::RowType row_type_;
  JsonFormatOptions options_;
  JsonFlavor flavor_;
};

/// Appends `text` as a JSON string literal (quotes, escapes of '"', '\\' and control characters).
void appendJsonString(std::string_view text, std::string& out);

}  // namespace sluice::connectors
