#pragma once
/// The Kafka sink (Flink's KafkaSink behind KafkaDynamicSink and the upsert-kafka sink): records are
/// handed to librdkafka as rows arrive; at the end of input the subtask flushes and waits for every
/// delivery report, and the first delivery error fails the job naming topic, brokers and (when known)
/// partition. `sink.delivery-guarantee` (Flink's DeliveryGuarantee; default at-least-once):
/// `at-least-once` also flushes and waits in prepareSnapshotPreBarrier, so a completed checkpoint never
/// covers a record that is not acknowledged (after a restore the records since the checkpoint are
/// written again: duplicates, no loss); `none` does not wait at checkpoints. `exactly-once` is refused
/// by the option parser (kafka_spec.h says why).
///
/// Broker loss: a broken connection or all brokers down is printed on stderr at once (naming table,
/// topic and brokers) while librdkafka keeps retrying; records not acknowledged within
/// `properties.delivery.timeout.ms` (librdkafka's `message.timeout.ms`; default 120000 as the Kafka
/// producer's) fail the job with a KafkaUnavailableError (a TransientError: restart strategies retry).
///
/// `kafka`: each row is one record (key from the key format over `key.fields`, value from the value
/// format); insert-only input unless the value format is a changelog format (debezium-json writes the
/// row kind into the value). `upsert-kafka`: +I/+U write the value under the primary-key key, -D writes
/// a tombstone (null value), -U is dropped (Flink's UpsertKafka sink) and taken out of the operator's
/// numRecordsIn (in Flink the planner's DropUpdateBefore removes it before the sink).
/// `sink.partitioner`: `default` (librdkafka's murmur2_random: murmur2 of the key as the Java client,
/// random without a key), `fixed` (subtask i writes partition i % partitions, Flink's
/// FlinkFixedPartitioner), `round-robin` (partitions in turn per record). `fixed` and `round-robin` look
/// the partitions up in open() by the topic's name, so brokers that auto-create topics create it.
/// Threading: one task thread; delivery reports are served on it (rd_kafka_poll / flush).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "connectors/kafka/kafka_spec.h"
#include "runtime/operators/stream_operator.h"
#include "table/catalog/table_factory.h"

namespace sluice::connectors::kafka {

/// One subtask of the Kafka sink.
class KafkaSinkOperator final : public runtime::StreamOperator {
 public:
  explicit KafkaSinkOperator(std::shared_ptr<const KafkaTableSpec> spec);
  ~KafkaSinkOperator() override;
  /// Creates the producer; fetches the partition count for `fixed` / `round-robin` within
  /// min(`properties.default.api.timeout.ms`, delivery timeout) (UserError naming the topic and brokers
  /// when that fails, or when the topic does not exist and is not auto-created).
  void open(const runtime::OperatorContext& ctx, runtime::Output* output) override;
  /// Encodes and sends the rows. Throws UserError on a delivery error reported so far.
  void processBatch(types::RowBatch&& batch) override;
  /// Flushes and checks every delivery report. Throws KafkaUnavailableError (brokers unreachable until the
  /// delivery timeout) or UserError (a record refused), naming topic and partition.
  void endInput() override;
  /// at-least-once: flushes and waits as endInput (throwing as it does, which fails the checkpoint with
  /// the job); none: nothing.
  void prepareSnapshotPreBarrier(int64_t checkpoint_id) override;
  /// Destroys the producer; records not yet delivered are dropped (the job has failed then).
  void close() override;

  /// Records acknowledged by the brokers so far (task thread).
  int64_t recordsDelivered() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The sink the planner gets for a `kafka` / `upsert-kafka` table.
class KafkaTableSink final : public table::DynamicTableSink {
 public:
  KafkaTableSink(std::shared_ptr<const KafkaTableSpec> spec, std::optional<int> parallelism)
      : spec_(std::move(spec)), parallelism_(parallelism) {}
  std::shared_ptr<const runtime::StreamOperatorFactory> operatorFactory() const override;
  std::optional<int> parallelism() const override { return parallelism_; }
  /// upsert-kafka, or a kafka table whose value format is a changelog format (debezium-json).
  bool acceptsUpdates() const override { return spec_->upsert || spec_->value_format.isChangelog(); }
  std::string summary() const override;

 private:
  std::shared_ptr<const KafkaTableSpec> spec_;
  std::optional<int> parallelism_;
};

}  // namespace sluice::connectors::kafka
