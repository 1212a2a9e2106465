#pragma once
/// What a `kafka` or `upsert-kafka` table means, read once from its WITH options at planning time and
/// shared read-only by the source and sink subtasks (Flink's KafkaDynamicTableFactory /
/// UpsertKafkaDynamicTableFactory options). No librdkafka types here.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "connectors/kafka/kafka_format.h"
#include "table/catalog/table_factory.h"
#include "types/logical_type.h"

namespace sluice::connectors::kafka {

/// `scan.startup.mode` (Flink's StartupMode).
enum class StartupMode { kEarliestOffset, kLatestOffset, kGroupOffsets, kTimestamp, kSpecificOffsets };
/// `scan.bounded.mode` (Flink's BoundedMode).
enum class BoundedMode { kUnbounded, kLatestOffset, kGroupOffsets, kTimestamp, kSpecificOffsets };
/// `sink.partitioner`.
enum class SinkPartitioner { kDefault, kFixed, kRoundRobin };

/// A metadata key the source reads (Flink's KafkaDynamicSource.ReadableMetadata).
enum class KafkaMetadata { kTopic, kPartition, kOffset, kTimestamp, kTimestampType };

/// The resolved options of one Kafka table.
struct KafkaTableSpec {
  std::string table_name;
  bool upsert = false;                  ///< `upsert-kafka`
  std::vector<std::string> topics;      ///< `topic` (one or a ';' list); empty with `topic-pattern`
  std::string topic_pattern;            ///< `topic-pattern` (a regular expression matched against whole names)
  std::string bootstrap;                ///< `properties.bootstrap.servers`
  /// librdkafka properties: every `properties.*` option (prefix removed) that librdkafka knows.
  std::map<std::string, std::string> properties;
  std::optional<std::string> group_id;  ///< `properties.group.id`
  /// Timeout of the metadata and offset requests in ms (`properties.default.api.timeout.ms`, Kafka's
  /// default 60000): an unreachable broker fails the job after it.
  int timeout_ms = 60000;
  /// `properties.auto.offset.reset` for partitions without a committed offset under group-offsets:
  /// "earliest", "latest" or "none" (default: an error, as Flink's default).
  std::string auto_offset_reset = "none";
  /// `properties.enable.auto.commit` (default false, as Flink's KafkaSourceBuilder): the source commits
  /// the offsets it has read to `group_id` every `commit_interval_ms` and when it ends or closes, so a
  /// later job under `group-offsets` resumes there (a Kafka consumer's auto commit).
  bool commit_offsets = false;
  /// `properties.commit.offsets.on.checkpoint` (default true, Flink's KafkaSourceOptions): with a
  /// `group_id`, a completed checkpoint's offsets are committed to the group.
  bool commit_on_checkpoint = true;
  int commit_interval_ms = 5000;  ///< `properties.auto.commit.interval.ms` (Kafka's default 5000)
  /// Sink: how long a record may wait for its acknowledgement before the job fails, in ms
  /// (`properties.delivery.timeout.ms` or its librdkafka alias `properties.message.timeout.ms`; default
  /// 120000 as the Kafka producer's delivery.timeout.ms, below librdkafka's own 300000).
  int delivery_timeout_ms = 120000;

  StartupMode startup = StartupMode::kGroupOffsets;
  int64_t startup_timestamp = 0;             ///< scan.startup.timestamp-millis
  std::map<int, int64_t> startup_offsets;    ///< scan.startup.specific-offsets: partition -> offset
  BoundedMode bounded = BoundedMode::kUnbounded;
  int64_t bounded_timestamp = 0;             ///< scan.bounded.timestamp-millis
  std::map<int, int64_t> bounded_offsets;    ///< scan.bounded.specific-offsets

  types::RowType physical;                   ///< the table's physical columns
  std::vector<int> primary_key;              ///< indexes into `physical`
  std::optional<KafkaFormat> key_format;     ///< `key.format` (upsert-kafka: required)
  KafkaFormat value_format;                  ///< `format` / `value.format`
  std::vector<int> key_fields;               ///< physical indexes of the key columns, in key order
  std::vector<int> value_fields;             ///< physical indexes of the value columns (ALL or EXCEPT_KEY)
  std::string key_fields_prefix;             ///< `key.fields-prefix`: removed from key column names in the key format

  /// Metadata columns appended after the physical ones (applyReadableMetadata).
  std::vector<KafkaMetadata> metadata;
  std::vector<types::LogicalType> metadata_types;

  SinkPartitioner partitioner = SinkPartitioner::kDefault;
  /// `sink.delivery-guarantee`: at-least-once (Flink's default) | none; exactly-once is refused with a
  /// ConfigError saying why (librdkafka cannot resume a prepared transaction after a restart).
  std::string delivery_guarantee = "at-least-once";
  std::string transactional_id_prefix;  ///< `sink.transactional-id-prefix` (required by exactly-once)

  /// Row type the key format reads/writes: the key columns, names without `key_fields_prefix`.
  types::RowType keyRowType() const;
  /// Row type the value format reads/writes.
  types::RowType valueRowType() const;
  /// The row type the source emits: physical columns then metadata columns.
  types::RowType producedType(const std::vector<std::string>& metadata_names) const;
  /// "topic 'a'" or "topics 'a;b'" or "topic pattern 'x.*'" for messages.
  std::string topicsText() const;
};

/// The key of a metadata column ("offset", ...) and its type; used for listReadableMetadata().
std::map<std::string, types::LogicalType> readableKafkaMetadata();

/// Parses the options of a `kafka` (`upsert` false) or `upsert-kafka` table; `source` selects the
/// checks of a source (topic-pattern allowed, startup/bounded modes) or of a sink (one topic). Throws
/// UserError naming the table and the option key on a missing or bad option, with Flink's wording
/// where Flink has one (e.g. upsert-kafka without a primary key).
KafkaTableSpec parseKafkaTable(const table::ResolvedTable& table, bool upsert, bool source);

/// Option keys of `kafka` / `upsert-kafka` for supportedOptions() ("properties.#" stands for any
/// property).
std::set<std::string> kafkaOptionKeys(bool upsert);

}  // namespace sluice::connectors::kafka
