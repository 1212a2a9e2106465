#pragma once
/// The Kafka source on the FLIP-27 interface (Flink's KafkaSource as used by KafkaDynamicSource and the
/// upsert-kafka source): one split per topic partition, assigned to subtasks as Flink's
/// KafkaSourceEnumerator does (partition p of topic t goes to subtask
/// (((hash(t) * 31) & 0x7FFFFFFF) % parallelism + p) % parallelism, hash = Java's String.hashCode), so
/// every subtask computes the same assignment on its own. Start and stop offsets are resolved when a
/// subtask asks for its splits (`scan.startup.mode`, `scan.bounded.mode`); a bounded split ends at its
/// stop offset (exclusive) and the subtask ends when all of its splits have. Partitions are read
/// without joining a consumer group; with `properties.enable.auto.commit` the reader commits the next
/// offset to read per partition to `properties.group.id` every `properties.auto.commit.interval.ms`,
/// at the end of its splits (waited for: a refused commit fails the job) and on close (best effort), as
/// a Kafka consumer's auto commit. Start offsets follow Flink's OffsetsInitializers: an out-of-range
/// specific offset starts at the earliest, an out-of-range or missing committed offset at
/// `properties.auto.offset.reset`.
///
/// Checkpoints (Flink's KafkaSourceReader): the splits with their next offsets are the operator state
/// "SourceReaderState" (SPLIT_DISTRIBUTE over the subtasks on rescale); a restored split starts at its
/// checkpointed offset whatever `scan.startup.mode` says. With `properties.group.id` and
/// `properties.commit.offsets.on.checkpoint` (default true) the offsets of a checkpoint, those of its
/// finished splits included, are committed to the group when it completes (notifyCheckpointComplete;
/// asynchronous, a refused commit is only counted, as Flink's: the checkpoint is what recovery uses).
///
/// Broker loss: a broken connection or an unanswered request is printed on stderr at once (naming
/// table, topic and bootstrap servers) and retried (requests of at most 1 s, so the task thread stays
/// free for checkpoints); brokers still unreachable after `properties.default.api.timeout.ms` fail the
/// job with a KafkaUnavailableError (a TransientError: restart strategies retry it).
///
/// Errors (UserError, failing the job): a topic that does not
/// exist or disappears while read (naming topic and partition), a record that its format cannot decode
/// (naming topic, partition and offset) unless the format ignores parse errors.
/// Threading: a reader belongs to its task thread; librdkafka runs its own threads inside.

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "connectors/kafka/kafka_spec.h"
#include "runtime/operators/row_source_reader_operator.h"
#include "runtime/serialization/type_traits.h"
#include "table/catalog/table_factory.h"

namespace sluice::connectors::kafka {

/// One topic partition to read (Flink's KafkaPartitionSplit).
struct KafkaPartitionSplit {
  std::string topic;
  int partition = 0;
  /// The next offset to read: the first one when the split is assigned, the position after the last
  /// record emitted in a checkpoint (Flink's KafkaPartitionSplitState.getCurrentOffset).
  int64_t start_offset = 0;
  int64_t stop_offset = -1;       ///< bounded: offset where reading stops (exclusive); -1 unbounded
  /// Timestamp modes the broker could not answer by offset: skip records before the first whose
  /// timestamp is >= start_timestamp; stop at the first whose timestamp is >= stop_timestamp (-1: none).
  int64_t start_timestamp = -1;
  int64_t stop_timestamp = -1;

  /// Flink's KafkaPartitionSplit.splitId(): "<topic>-<partition>", whatever the position.
  std::string splitId() const { return topic + "-" + std::to_string(partition); }
};
SLUICE_TYPE(KafkaPartitionSplit, topic, partition, start_offset, stop_offset, start_timestamp, stop_timestamp)

/// The subtask that reads partition `partition` of `topic` at `parallelism` (Flink's
/// KafkaSourceEnumerator.getSplitOwner).
int kafkaSplitOwner(const std::string& topic, int partition, int parallelism);

/// The splits of one subtask: discovers the partitions and resolves their offsets. Throws UserError as
/// described above.
std::vector<KafkaPartitionSplit> discoverKafkaSplits(const KafkaTableSpec& spec, int subtask, int parallelism);

/// The Kafka source: static per-subtask assignment (see the file comment).
class KafkaSource final : public runtime::Source<types::RowBatch, KafkaPartitionSplit> {
 public:
  explicit KafkaSource(std::shared_ptr<const KafkaTableSpec> spec) : spec_(std::move(spec)) {}
  bool isBounded() const override { return spec_->bounded != BoundedMode::kUnbounded; }
  std::unique_ptr<runtime::SplitEnumerator<KafkaPartitionSplit>> createEnumerator(int parallelism) const override;
  /// A restored execution assigns the partitions over its own parallelism: split ids do not depend on
  /// the layout, and the caller skips the partitions claimed before the checkpoint (their positions come
  /// back through the split state), so only partitions new since then are discovered afresh.
  std::unique_ptr<runtime::SplitEnumerator<KafkaPartitionSplit>> restoreEnumerator(int parallelism,
                                                                                int) const override {
    return createEnumerator(parallelism);
  }
  std::unique_ptr<runtime::SourceReader<types::RowBatch, KafkaPartitionSplit>> createReader(
      const runtime::SourceReaderContext& ctx) const override;

 private:
  std::shared_ptr<const KafkaTableSpec> spec_;
};

/// One subtask of the Kafka source.
/// `watermarks`: the pushed-down watermark generator (per partition), or null.
class KafkaSourceOperator final : public runtime::RowSourceReaderOperator<KafkaPartitionSplit> {
 public:
  explicit KafkaSourceOperator(std::shared_ptr<const KafkaTableSpec> spec,
                               std::shared_ptr<const runtime::BatchWatermarkGenerator> watermarks = nullptr)
      : RowSourceReaderOperator(std::make_shared<KafkaSource>(std::move(spec)), 0, nullptr, std::move(watermarks)) {}
  /// Opens as RowSourceReaderOperator; broker outages count into ctx.metrics->num_connection_outages.
  void open(const runtime::OperatorContext& ctx, runtime::Output* output) override;
};

/// The source the planner gets for a `kafka` / `upsert-kafka` table.
class KafkaTableSource final : public table::ScanTableSource {
 public:
  KafkaTableSource(std::shared_ptr<const KafkaTableSpec> spec, std::optional<int> parallelism)
      : spec_(std::move(spec)), parallelism_(parallelism) {}
  std::shared_ptr<const runtime::StreamOperatorFactory> operatorFactory() const override;
  std::optional<int> parallelism() const override { return parallelism_; }
  /// upsert-kafka: upserts ([I,UA,D]); a changelog value format (debezium-json): all kinds; else insert-only.
  table::ChangelogMode changelogMode() const override;
  bool isBounded() const override { return spec_->bounded != BoundedMode::kUnbounded; }
  std::string summary() const override;
  /// topic STRING, partition INT, offset BIGINT, timestamp TIMESTAMP(3) (Flink: TIMESTAMP_LTZ(3)),
  /// timestamp-type STRING.
  std::map<std::string, types::LogicalType> listReadableMetadata() const override { return readableKafkaMetadata(); }
  /// Throws UserError naming the column when its type cannot hold the key's values (partition: INT or
  /// BIGINT; offset: BIGINT; timestamp: TIMESTAMP(p); topic, timestamp-type: STRING / VARCHAR / CHAR).
  void applyReadableMetadata(const std::vector<table::MetadataColumn>& columns) override;
  /// Watermarks per partition inside the source, as Flink's KafkaSource (always accepted).
  bool applyWatermark(std::shared_ptr<const runtime::BatchWatermarkGenerator> generator) override {
    watermarks_ = std::move(generator);
    return true;
  }
  const KafkaTableSpec& spec() const { return *spec_; }

 private:
  std::shared_ptr<const KafkaTableSpec> spec_;
  std::optional<int> parallelism_;
  std::shared_ptr<const runtime::BatchWatermarkGenerator> watermarks_;
};

}  // namespace sluice::connectors::kafka
