#include "connectors/kafka/mock_cluster.h"

// rdkafka_mock.h needs rdkafka.h first.
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>

#include <fmt/format.h>

#include "common/error.h"
#include "connectors/kafka/kafka_internal.h"

namespace sluice::connectors::kafka {

namespace {

// Delivery outcome of one produce() call, updated by librdkafka's delivery report callback (run by
// rd_kafka_flush/poll on the producing thread).
struct DeliveryState {
  int64_t delivered = 0;
  rd_kafka_resp_err_t first_error = RD_KAFKA_RESP_ERR_NO_ERROR;
  int error_partition = -1;
};

void onDelivery(rd_kafka_t*, const rd_kafka_message_t* msg, void*) {
  auto* state = static_cast<DeliveryState*>(msg->_private);
  if (state == nullptr) return;
  if (msg->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
    ++state->delivered;
  } else if (state->first_error == RD_KAFKA_RESP_ERR_NO_ERROR) {
    state->first_error = msg->err;
    state->error_partition = msg->partition;
  }
}

}  // namespace

struct MockKafkaCluster::Impl {
  mutable std::mutex mu;
  RdKafkaPtr owner;  // the handle whose background thread runs the brokers
  rd_kafka_mock_cluster_t* cluster = nullptr;
  std::string bootstrap;
  int brokers = 0;
  RdKafkaPtr producer;
  mutable RdKafkaPtr reader;  // created on first use by the const readers

  rd_kafka_t* readerHandle() const {
    if (!reader) {
      reader = newHandle(RD_KAFKA_CONSUMER, {{"bootstrap.servers", bootstrap}, {"enable.partition.eof", "false"}},
                         "mock cluster");
    }
    return reader.get();
  }
};

MockKafkaCluster::MockKafkaCluster(int brokers) : impl_(std::make_unique<Impl>()) {
  if (brokers < 1) throw UserError(fmt::format("A mock Kafka cluster needs at least one broker, got {}", brokers));
  impl_->owner = newHandle(RD_KAFKA_PRODUCER, {}, "mock cluster");
  impl_->cluster = rd_kafka_mock_cluster_new(impl_->owner.get(), brokers);
  if (impl_->cluster == nullptr) throw UserError("Cannot start the mock Kafka cluster");
  impl_->bootstrap = rd_kafka_mock_cluster_bootstraps(impl_->cluster);
  impl_->brokers = brokers;
}

MockKafkaCluster::~MockKafkaCluster() { stop(); }

const std::string& MockKafkaCluster::bootstrapServers() const { return impl_->bootstrap; }

int MockKafkaCluster::numBrokers() const { return impl_->brokers; }

void MockKafkaCluster::createTopic(const std::string& topic, int partitions) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  if (impl_->cluster == nullptr) throw UserError("The mock Kafka cluster is stopped");
  if (topic.empty() || partitions < 1)
    throw UserError(fmt::format("Cannot create Kafka topic '{}' with {} partitions", topic, partitions));
  rd_kafka_resp_err_t err =
      rd_kafka_mock_topic_create(impl_->cluster, topic.c_str(), partitions, std::min(3, impl_->brokers));
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
    throw UserError(fmt::format("Cannot create Kafka topic '{}': {}", topic, rd_kafka_err2str(err)));
}

void MockKafkaCluster::produce(const std::string& topic, const std::vector<KafkaRecord>& records, int timeout_ms) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  if (impl_->cluster == nullptr) throw UserError("The mock Kafka cluster is stopped");
  if (!impl_->producer) {
    HandleCallbacks cb;
    cb.dr_msg_cb = onDelivery;
    // murmur2 as the Java client's default partitioner, so keys land where Flink's producer puts them.
    impl_->producer = newHandle(RD_KAFKA_PRODUCER,
                                {{"bootstrap.servers", impl_->bootstrap},
                                 {"partitioner", "murmur2_random"},
                                 {"linger.ms", "1"},
                                 {"max.in.flight.requests.per.connection", "1"}},
                                "mock cluster", cb);
  }
  rd_kafka_t* rk = impl_->producer.get();
  DeliveryState state;
  for (const KafkaRecord& r : records) {
    // The RD_KAFKA_V_* macros cast their arguments without parentheses: plain variables only.
    void* key = r.key ? const_cast<char*>(r.key->data()) : nullptr;
    const size_t key_len = r.key ? r.key->size() : 0;
    void* value = r.value ? const_cast<char*>(r.value->data()) : nullptr;
    const size_t value_len = r.value ? r.value->size() : 0;
    const int32_t partition = r.partition < 0 ? RD_KAFKA_PARTITION_UA : r.partition;
    while (true) {
      rd_kafka_resp_err_t err = rd_kafka_producev(
          rk, RD_KAFKA_V_TOPIC(topic.c_str()),
          RD_KAFKA_V_PARTITION(partition), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_KEY(key, key_len),
          RD_KAFKA_V_VALUE(value, value_len),
          RD_KAFKA_V_TIMESTAMP(r.timestamp_ms), RD_KAFKA_V_OPAQUE(&state), RD_KAFKA_V_END);
      if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
        rd_kafka_poll(rk, 10);
        continue;
      }
      if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
        throw UserError(fmt::format("Cannot produce to Kafka topic '{}': {}", topic, rd_kafka_err2str(err)));
      break;
    }
  }
  rd_kafka_resp_err_t ferr = rd_kafka_flush(rk, timeout_ms);
  if (state.first_error != RD_KAFKA_RESP_ERR_NO_ERROR)
    throw UserError(fmt::format("Producing to Kafka topic '{}' partition {} failed: {}", topic,
                                state.error_partition, rd_kafka_err2str(state.first_error)));
  if (ferr != RD_KAFKA_RESP_ERR_NO_ERROR || state.delivered != static_cast<int64_t>(records.size()))
    throw UserError(fmt::format("Producing to Kafka topic '{}' timed out after {} ms ({} of {} records acknowledged)",
                                topic, timeout_ms, state.delivered, records.size()));
}

int MockKafkaCluster::numPartitions(const std::string& topic) const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  if (impl_->cluster == nullptr) throw UserError("The mock Kafka cluster is stopped");
  return static_cast<int>(fetchPartitions(impl_->readerHandle(), topic, 10000, impl_->bootstrap).size());
}

std::vector<KafkaRecord> MockKafkaCluster::readAll(const std::string& topic, int timeout_ms) const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  if (impl_->cluster == nullptr) throw UserError("The mock Kafka cluster is stopped");
  rd_kafka_t* rk = impl_->readerHandle();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  std::vector<int> partitions = fetchPartitions(rk, topic, timeout_ms, impl_->bootstrap);
  std::vector<KafkaRecord> out;
  SimpleConsumer consumer(rk, topic);
  for (int p : partitions) {
    int64_t lo = 0;
    int64_t hi = 0;
    rd_kafka_resp_err_t err = rd_kafka_query_watermark_offsets(rk, topic.c_str(), p, &lo, &hi, timeout_ms);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
      throw UserError(fmt::format("Cannot read the offsets of Kafka topic '{}' partition {}: {}", topic, p,
                                  rd_kafka_err2str(err)));
    if (hi <= lo) continue;
    consumer.start(p, lo);
    int64_t next = lo;
    while (next < hi) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) throw UserError(fmt::format("Reading Kafka topic '{}' timed out after {} ms", topic, timeout_ms));
      rd_kafka_message_t* m = rd_kafka_consume_queue(consumer.queue(), static_cast<int>(std::min<int64_t>(left.count(), 100)));
      if (m == nullptr) continue;
      if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
        KafkaRecord r;
        if (m->key != nullptr) r.key = std::string(static_cast<const char*>(m->key), m->key_len);
        if (m->payload != nullptr) r.value = std::string(static_cast<const char*>(m->payload), m->len);
        rd_kafka_timestamp_type_t tstype;
        r.timestamp_ms = rd_kafka_message_timestamp(m, &tstype);
        r.partition = m->partition;
        r.offset = m->offset;
        next = m->offset + 1;
        out.push_back(std::move(r));
      } else if (m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF) {
        std::string what = rd_kafka_message_errstr(m);
        rd_kafka_message_destroy(m);
        throw UserError(fmt::format("Reading Kafka topic '{}' partition {} failed: {}", topic, p, what));
      }
      rd_kafka_message_destroy(m);
    }
    consumer.stop(p);
  }
  return out;
}

void MockKafkaCluster::commitOffsets(const std::string& group, const std::string& topic,
                                     const std::map<int, int64_t>& offsets) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  if (impl_->cluster == nullptr) throw UserError("The mock Kafka cluster is stopped");
  RdKafkaPtr rk = newHandle(RD_KAFKA_CONSUMER,
                            {{"bootstrap.servers", impl_->bootstrap}, {"group.id", group}, {"enable.auto.commit", "false"}},
                            "mock cluster");
  PartitionList list;
  for (const auto& [p, o] : offsets) list.add(topic, p, o);
  rd_kafka_resp_err_t err = rd_kafka_commit(rk.get(), list.list, 0);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
    throw UserError(fmt::format("Cannot commit offsets of group '{}' for Kafka topic '{}': {}", group, topic,
                                rd_kafka_err2str(err)));
}

std::map<int, int64_t> MockKafkaCluster::committedOffsets(const std::string& group, const std::string& topic) const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  if (impl_->cluster == nullptr) throw UserError("The mock Kafka cluster is stopped");
  const std::vector<int> partitions = fetchPartitions(impl_->readerHandle(), topic, 10000, impl_->bootstrap);
  RdKafkaPtr rk = newHandle(
      RD_KAFKA_CONSUMER,
      {{"bootstrap.servers", impl_->bootstrap}, {"group.id", group}, {"enable.auto.commit", "false"}}, "mock cluster");
  PartitionList list;
  for (int p : partitions) list.add(topic, p, RD_KAFKA_OFFSET_INVALID);
  rd_kafka_resp_err_t err = rd_kafka_committed(rk.get(), list.list, 10000);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
    throw UserError(fmt::format("Cannot fetch the committed offsets of group '{}' for Kafka topic '{}': {}", group,
                                topic, rd_kafka_err2str(err)));
  std::map<int, int64_t> out;
  for (int i = 0; i < list.list->cnt; ++i)
    if (list.list->elems[i].offset >= 0) out[list.list->elems[i].partition] = list.list->elems[i].offset;
  return out;
}

void MockKafkaCluster::markTopicDeleted(const std::string& topic) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  if (impl_->cluster == nullptr) return;
  rd_kafka_mock_topic_set_error(impl_->cluster, topic.c_str(), RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART);
}

void MockKafkaCluster::setBrokerDown(int broker_id, bool down) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  if (impl_->cluster == nullptr) return;
  rd_kafka_resp_err_t err = down ? rd_kafka_mock_broker_set_down(impl_->cluster, broker_id)
                                 : rd_kafka_mock_broker_set_up(impl_->cluster, broker_id);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
    throw UserError(fmt::format("Cannot take mock Kafka broker {} {}: {}", broker_id, down ? "down" : "up",
                                rd_kafka_err2str(err)));
}

void MockKafkaCluster::stop() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->producer.reset();
  impl_->reader.reset();
  if (impl_->cluster != nullptr) {
    rd_kafka_mock_cluster_destroy(impl_->cluster);
    impl_->cluster = nullptr;
  }
  impl_->owner.reset();
  impl_->bootstrap.clear();
}

}  // namespace sluice::connectors::kafka
