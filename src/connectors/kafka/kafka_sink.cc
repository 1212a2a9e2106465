#include "connectors/kafka/kafka_sink.h"

#include <librdkafka/rdkafka.h>

#include <algorithm>

#include <fmt/format.h>

#include "common/error.h"
#include "connectors/kafka/kafka_internal.h"

namespace sluice::connectors::kafka {

namespace {

// The columns `fields` of `batch` as a batch of `type` (same row kinds).
types::RowBatch projectBatch(const types::RowBatch& batch, const std::vector<int>& fields, const types::RowType& type) {
  types::RowBatch out(type);
  for (size_t k = 0; k < fields.size(); ++k) out.columns()[k] = batch.column(static_cast<size_t>(fields[k]));
  out.kinds() = batch.kinds();
  return out;
}

bool allFields(const std::vector<int>& fields, size_t arity) {
  if (fields.size() != arity) return false;
  for (size_t i = 0; i < fields.size(); ++i)
    if (fields[i] != static_cast<int>(i)) return false;
  return true;
}

}  // namespace

struct KafkaSinkOperator::Impl {
  explicit Impl(std::shared_ptr<const KafkaTableSpec> s)
      : spec(std::move(s)),
        outage(fmt::format("Kafka sink of table '{}' (topic '{}', brokers '{}')", spec->table_name,
                           spec->topics.empty() ? std::string() : spec->topics.front(), spec->bootstrap),
               spec->delivery_timeout_ms, "properties.delivery.timeout.ms") {}
  std::shared_ptr<const KafkaTableSpec> spec;
  BrokerOutage outage;
  RdKafkaPtr producer;
  std::unique_ptr<FormatEncoder> key_encoder;
  std::unique_ptr<FormatEncoder> value_encoder;
  std::string topic;
  int num_partitions = 0;
  int fixed_partition = -1;
  int next_partition = 0;
  int64_t sent = 0;
  int64_t delivered = 0;
  rd_kafka_resp_err_t first_error = RD_KAFKA_RESP_ERR_NO_ERROR;
  int error_partition = -1;
  std::string key_buf;
  std::string value_buf;

  static void onDelivery(rd_kafka_t*, const rd_kafka_message_t* msg, void* opaque) {
    auto* self = static_cast<Impl*>(opaque);
    if (msg->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      ++self->delivered;
      self->outage.recovered();
    } else if (self->first_error == RD_KAFKA_RESP_ERR_NO_ERROR) {
      self->first_error = msg->err;
      self->error_partition = msg->partition;
    }
  }

  // Broken connections, all brokers down: said on stderr at once, while librdkafka keeps retrying.
  static void onError(rd_kafka_t*, int err, const char* reason, void* opaque) {
    auto* self = static_cast<Impl*>(opaque);
    if (isBrokerUnreachable(static_cast<rd_kafka_resp_err_t>(err))) self->outage.failed(reason);
  }

  // Waits until every record sent so far is acknowledged or has failed (each does within
  // message.timeout.ms, so this ends), then throws the first delivery error.
  void flushAll() {
    if (!producer) return;
    while (rd_kafka_outq_len(producer.get()) > 0) {
      rd_kafka_flush(producer.get(), 100);
      checkDelivery();
    }
    checkDelivery();
    SLUICE_CHECK(delivered == sent, "kafka sink of table '{}': {} records sent but {} acknowledged", spec->table_name,
                 sent, delivered);
  }

  void checkDelivery() const {
    if (first_error == RD_KAFKA_RESP_ERR_NO_ERROR) return;
    const std::string where = error_partition >= 0 ? fmt::format(" partition {}", error_partition) : std::string();
    std::string why = rd_kafka_err2str(first_error);
    if (first_error == RD_KAFKA_RESP_ERR__MSG_TIMED_OUT)
      why = fmt::format(
          "{}: not acknowledged within {} ms (properties.delivery.timeout.ms){}", why, spec->delivery_timeout_ms,
          error_partition >= 0 ? "" : "; the topic's partitions stayed unknown: brokers unreachable or topic missing");
    const std::string msg = fmt::format("Writing to Kafka topic '{}'{} failed (table '{}', brokers '{}'): {}", topic,
                                        where, spec->table_name, spec->bootstrap, why);
    // Brokers out of reach are worth a restart; a record the brokers refuse is not.
    if (isBrokerUnreachable(first_error)) throw KafkaUnavailableError(msg);
    throw UserError(msg);
  }

  void send(const std::string* key, const std::string* value) {
    int32_t partition = RD_KAFKA_PARTITION_UA;
    if (fixed_partition >= 0) {
      partition = fixed_partition;
    } else if (spec->partitioner == SinkPartitioner::kRoundRobin) {
      partition = next_partition;
      next_partition = (next_partition + 1) % num_partitions;
    }
    // The RD_KAFKA_V_* macros cast their arguments without parentheses: plain variables only.
    void* kp = key != nullptr ? const_cast<char*>(key->data()) : nullptr;
    const size_t kl = key != nullptr ? key->size() : 0;
    void* vp = value != nullptr ? const_cast<char*>(value->data()) : nullptr;
    const size_t vl = value != nullptr ? value->size() : 0;
    while (true) {
      rd_kafka_resp_err_t err = rd_kafka_producev(
          producer.get(), RD_KAFKA_V_TOPIC(topic.c_str()), RD_KAFKA_V_PARTITION(partition),
          RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_KEY(kp, kl), RD_KAFKA_V_VALUE(vp, vl), RD_KAFKA_V_END);
      if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
        rd_kafka_poll(producer.get(), 50);  // serves delivery reports, which frees queue space
        checkDelivery();
        continue;
      }
      if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
        throw UserError(fmt::format("Cannot write to Kafka topic '{}' (table '{}'): {}", topic, spec->table_name,
                                    rd_kafka_err2str(err)));
      ++sent;
      return;
    }
  }
};

KafkaSinkOperator::KafkaSinkOperator(std::shared_ptr<const KafkaTableSpec> spec)
    : impl_(std::make_unique<Impl>(std::move(spec))) {}

KafkaSinkOperator::~KafkaSinkOperator() { close(); }

void KafkaSinkOperator::open(const runtime::OperatorContext& ctx, runtime::Output* output) {
  StreamOperator::open(ctx, output);
  Impl& m = *impl_;
  const KafkaTableSpec& spec = *m.spec;
  m.topic = spec.topics.at(0);
  std::map<std::string, std::string> props = spec.properties;
  props["bootstrap.servers"] = spec.bootstrap;
  props.erase("group.id");
  if (props.count("partitioner") == 0) props["partitioner"] = "murmur2_random";
  // A bounded wait for acknowledgements: the Kafka producer's delivery.timeout.ms default, not
  // librdkafka's 300 s (an explicit value, under either name, is in `props` already).
  if (props.count("message.timeout.ms") == 0 && props.count("delivery.timeout.ms") == 0)
    props["message.timeout.ms"] = std::to_string(spec.delivery_timeout_ms);
  HandleCallbacks cb;
  cb.dr_msg_cb = &Impl::onDelivery;
  cb.error_cb = &Impl::onError;
  cb.opaque = &m;
  if (ctx.metrics != nullptr) m.outage.setCounter(&ctx.metrics->num_connection_outages);
  m.producer = newHandle(RD_KAFKA_PRODUCER, props, spec.table_name, cb);
  if (spec.key_format) m.key_encoder = FormatEncoder::create(*spec.key_format, spec.keyRowType());
  m.value_encoder = FormatEncoder::create(spec.value_format, spec.valueRowType());
  if (spec.partitioner != SinkPartitioner::kDefault) {
    // As the Java producer's partitionsFor: asks for the topic by name, so brokers that auto-create
    // topics create it, as the default partitioner's first record would.
    m.num_partitions =
        static_cast<int>(fetchPartitionsCreating(m.producer.get(), m.topic,
                                                 std::min(spec.timeout_ms, spec.delivery_timeout_ms), spec.bootstrap)
                             .size());
    if (spec.partitioner == SinkPartitioner::kFixed) m.fixed_partition = ctx.subtask_index % m.num_partitions;
  }
}

void KafkaSinkOperator::processBatch(types::RowBatch&& batch) {
  Impl& m = *impl_;
  const KafkaTableSpec& spec = *m.spec;
  const size_t n = batch.numRows();
  if (n == 0) return;
  std::optional<types::RowBatch> key_batch;
  if (m.key_encoder) key_batch = projectBatch(batch, spec.key_fields, spec.keyRowType());
  std::optional<types::RowBatch> value_holder;
  const types::RowBatch* values = &batch;
  if (!allFields(spec.value_fields, batch.numColumns())) {
    value_holder = projectBatch(batch, spec.value_fields, spec.valueRowType());
    values = &*value_holder;
  }
  int64_t dropped = 0;
  for (size_t r = 0; r < n; ++r) {
    const types::RowKind kind = batch.kind(r);
    if (spec.upsert && kind == types::RowKind::kUpdateBefore) {
      ++dropped;  // the +U that follows replaces the value
      continue;
    }
    const std::string* key = nullptr;
    if (m.key_encoder && m.key_encoder->encode(*key_batch, r, m.key_buf)) key = &m.key_buf;
    if (spec.upsert) {
      if (kind == types::RowKind::kDelete) {
        m.send(key, nullptr);  // tombstone
        continue;
      }
    } else if (!spec.value_format.isChangelog()) {
      SLUICE_CHECK(kind == types::RowKind::kInsert, "kafka sink of table '{}' received a {} row; it accepts inserts",
                   spec.table_name, types::shortString(kind));
    }
    const std::string* value = m.value_encoder->encode(*values, r, m.value_buf) ? &m.value_buf : nullptr;
    m.send(key, value);
  }
  // Flink's planner removes -U before an upsert sink (DropUpdateBefore), so the sink's numRecordsIn
  // counts +I/+U/-D only: take the dropped rows back out of the count the chain made.
  if (dropped > 0 && ctx_.metrics != nullptr) {
    std::atomic<int64_t>& in = ctx_.metrics->num_records_in;
    in.store(in.load(std::memory_order_relaxed) - dropped, std::memory_order_relaxed);
  }
  rd_kafka_poll(m.producer.get(), 0);
  m.checkDelivery();
}

void KafkaSinkOperator::endInput() { impl_->flushAll(); }

void KafkaSinkOperator::prepareSnapshotPreBarrier(int64_t) {
  // Flink's KafkaWriter.flush(false): at-least-once waits for every record before the barrier, so the
  // checkpoint covers only acknowledged records; `none` leaves them in flight.
  if (impl_->spec->delivery_guarantee != "none") impl_->flushAll();
}

void KafkaSinkOperator::close() {
  Impl& m = *impl_;
  if (m.producer) {
    rd_kafka_purge(m.producer.get(), RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
    rd_kafka_poll(m.producer.get(), 0);
    m.producer.reset();
  }
}

int64_t KafkaSinkOperator::recordsDelivered() const { return impl_->delivered; }

std::shared_ptr<const runtime::StreamOperatorFactory> KafkaTableSink::operatorFactory() const {
  auto spec = spec_;
  return runtime::makeOperatorFactory([spec] { return std::make_unique<KafkaSinkOperator>(spec); });
}

std::string KafkaTableSink::summary() const {
  return fmt::format("{} {}, format={}", spec_->upsert ? "upsert-kafka" : "kafka", spec_->topicsText(),
                     spec_->value_format.name);
}

}  // namespace sluice::connectors::kafka
