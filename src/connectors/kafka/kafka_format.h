#pragma once
/// The formats of a Kafka record's key and value (Flink's `format`, `key.format`, `value.format`):
/// `csv`, `json`, `debezium-json` (through the csv_format.h / json_format.h decoders) and `raw` (one
/// STRING column holding the bytes as they are; a null message is a NULL value, as Flink's
/// RawFormatDeserializationSchema). One decoder / encoder per thread.

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <string_view>

#include "connectors/connector_options.h"
#include "connectors/csv_format.h"
#include "connectors/json_format.h"
#include "types/row_batch.h"

namespace sluice::connectors::kafka {

/// A format and its options, read from a table's WITH options.
struct KafkaFormat {
  std::string name;  ///< "csv", "json", "debezium-json" or "raw"
  CsvFormatOptions csv;
  JsonFormatOptions json;
  /// True for formats whose messages carry row kinds (debezium-json).
  bool isChangelog() const { return name == "debezium-json"; }
};

/// The formats a Kafka table accepts.
inline const char* kKafkaFormats = "csv, debezium-json, json, raw";

/// Reads the format named by option `format_key` (e.g. "value.format") and its options, which are
/// prefixed with `option_prefix` ("" for `format`, "key." / "value." otherwise: `value.json.ignore-parse-errors`).
/// Throws UserError naming the table and key for an unknown format or a bad option value.
KafkaFormat parseKafkaFormat(const OptionMap& options, const std::string& format_key, const std::string& option_prefix,
                             const std::string& table);

/// Every option key of the formats with `option_prefix`, for supportedOptions().
std::set<std::string> kafkaFormatOptionKeys(const std::string& option_prefix);

/// Decodes the bytes of one key or value into rows of `row_type`.
class FormatDecoder {
 public:
  virtual ~FormatDecoder() = default;
  /// Creates the decoder of `format` over `row_type`. Throws UserError when a column type cannot be read
  /// (`raw`: exactly one STRING column).
  static std::unique_ptr<FormatDecoder> create(const KafkaFormat& format, const types::RowType& row_type);
  /// Appends the rows of one message (`message` null: a Kafka null) to `out` and returns how many (0-2).
  /// Throws InputError "<what>" on bad bytes unless the format ignores parse errors (the caller adds
  /// where the message came from, so nothing is formatted per message).
  virtual size_t decode(const std::string_view* message, types::RowBatch& out) = 0;
  /// Messages (csv: fields) skipped or nulled because of parse errors so far.
  virtual int64_t parseErrors() const = 0;
};

/// Encodes rows into the bytes of a key or value.
class FormatEncoder {
 public:
  virtual ~FormatEncoder() = default;
  /// Throws UserError when a column type cannot be written (`raw`: exactly one STRING column).
  static std::unique_ptr<FormatEncoder> create(const KafkaFormat& format, const types::RowType& row_type);
  /// Writes row `row` of `batch` (columns of the row type) into `out` (cleared first). Returns false when
  /// the message is a Kafka null (`raw` with a NULL value).
  virtual bool encode(const types::RowBatch& batch, size_t row, std::string& out) = 0;
};

}  // namespace sluice::connectors::kafka
