#pragma once
/// The `json` and `debezium-json` formats for line-delimited files (Flink's flink-json:
/// JsonRowDataDeserializationSchema, JsonToRowDataConverters, DebeziumJsonDeserializationSchema).
/// One JSON object per line, read by a small hand-written parser (no dependency), so the fuzz
/// targets can link this file alone.
///
/// `json` (Flink's rules): top-level fields are matched to columns by name; a missing field is NULL,
/// or an error with `json.fail-on-missing-field`. A JSON string is accepted for a numeric, BOOLEAN or
/// TIMESTAMP column when its text parses (Flink converts through `asText()`); a non-string value for a
/// STRING column is its JSON text. TIMESTAMP text is "yyyy-MM-dd HH:mm:ss[.f]" (SQL, the default
/// `timestamp-format.standard`) or with a 'T'. With `json.ignore-parse-errors` a line that is not an
/// object or whose field does not convert is skipped (Flink returns null for the whole row).
///
/// `debezium-json` (schema-include false): {"before": {...}|null, "after": {...}|null, "op": "c"|"r"|"u"|"d"}.
/// c and r → +I from `after`; u → -U from `before` then +U from `after`; d → -D from `before`. With
/// `debezium-json.schema-include` the object is {"schema": ..., "payload": {...}}. An unknown op, or a
/// missing `before` of an update, is an error (Flink's messages) unless `debezium-json.ignore-parse-errors`.
/// Errors are InputError "<path>:<line>: <what>". One deserializer per reading thread.

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "connectors/connector_options.h"
#include "types/row_batch.h"

namespace sluice::connectors {

/// Which line format a JsonRowDeserializer reads.
enum class JsonFlavor {
  kJson,      ///< `format` = `json`: each line one +I row
  kDebezium,  ///< `format` = `debezium-json`: each line a change event (+I, -U/+U, or -D)
};

/// The options of the json / debezium-json formats (Flink's keys, all defaults false).
struct JsonFormatOptions {
  bool ignore_parse_errors = false;   ///< json.ignore-parse-errors / debezium-json.ignore-parse-errors
  bool fail_on_missing_field = false; ///< json.fail-on-missing-field
  bool schema_include = false;        ///< debezium-json.schema-include
};

/// The option keys a flavor accepts, for DynamicTableFactory::supportedOptions.
std::set<std::string> jsonFormatOptionKeys();

/// Reads the options of `flavor` from a table's WITH options. Throws UserError naming the table and key
/// on a bad boolean.
JsonFormatOptions parseJsonFormatOptions(const OptionMap& options, JsonFlavor flavor, const std::string& table);

/// Converts JSON lines into rows of a physical RowType (or of a projection of it, json flavor only).
class JsonRowDeserializer {
 public:
  /// `projection`: physical indexes emitted, ascending; empty emits every field. Throws UserError when a
  /// column type cannot be read from JSON.
  JsonRowDeserializer(types::RowType row_type, JsonFormatOptions options, JsonFlavor flavor,
                      std::vector<int> projection = {});
  ~JsonRowDeserializer();

  /// Parses one line (a trailing '\r' is dropped; a blank line is skipped) and appends 0, 1 or 2 rows
  /// with their kinds to `out` (columns of producedType()). Returns the number of rows appended.
  /// Throws InputError "<path>:<line_number>: <what>" unless ignore-parse-errors; `out` is then unchanged.
  size_t parseLine(std::string_view line, types::RowBatch& out, std::string_view path, int64_t line_number);

  /// Lines skipped because of parse errors so far.
  int64_t parseErrors() const { return parse_errors_; }
  const types::RowType& producedType() const { return produced_type_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  types::RowType produced_type_;
  int64_t parse_errors_ = 0;
};

}  // namespace sluice::connectors
