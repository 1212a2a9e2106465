#include "connectors/kafka/kafka_internal.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include <fmt/format.h>

#include "common/error.h"

namespace sluice::connectors::kafka {

namespace {

void dropLog(const rd_kafka_t*, int, const char*, const char*) {}

}  // namespace

void RdKafkaDeleter::operator()(rd_kafka_t* rk) const {
  if (rk == nullptr) return;
  // Consumers here never join a group, so there is no group to leave.
  rd_kafka_destroy_flags(rk, RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE);
}

RdKafkaPtr newHandle(rd_kafka_type_t type, const std::map<std::string, std::string>& properties,
                     const std::string& table, const HandleCallbacks& callbacks) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  char errstr[512];
  rd_kafka_conf_set_log_cb(conf, dropLog);
  for (const auto& [key, value] : properties) {
    if (rd_kafka_conf_set(conf, key.c_str(), value.c_str(), errstr, sizeof(errstr)) != RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(conf);
      throw UserError(fmt::format("Invalid Kafka property 'properties.{}' of table '{}': {}", key, table, errstr));
    }
  }
  if (callbacks.dr_msg_cb != nullptr) rd_kafka_conf_set_dr_msg_cb(conf, callbacks.dr_msg_cb);
  if (callbacks.error_cb != nullptr) rd_kafka_conf_set_error_cb(conf, callbacks.error_cb);
  if (callbacks.opaque != nullptr) rd_kafka_conf_set_opaque(conf, callbacks.opaque);
  rd_kafka_t* rk = rd_kafka_new(type, conf, errstr, sizeof(errstr));
  if (rk == nullptr) {
    rd_kafka_conf_destroy(conf);
    throw UserError(fmt::format("Cannot create a Kafka client for table '{}': {}", table, errstr));
  }
  return RdKafkaPtr(rk);
}

bool isBrokerUnreachable(rd_kafka_resp_err_t err) {
  switch (err) {
    case RD_KAFKA_RESP_ERR__TRANSPORT:
    case RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN:
    case RD_KAFKA_RESP_ERR__RESOLVE:
    case RD_KAFKA_RESP_ERR__TIMED_OUT:
    case RD_KAFKA_RESP_ERR__MSG_TIMED_OUT:
    case RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT:
    case RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION:
    case RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE:
    case RD_KAFKA_RESP_ERR_BROKER_NOT_AVAILABLE: return true;
    default: return false;
  }
}

BrokerOutage::BrokerOutage(std::string client, int timeout_ms, std::string timeout_key)
    : client_(std::move(client)), timeout_ms_(timeout_ms), timeout_key_(std::move(timeout_key)) {}

void BrokerOutage::failed(const std::string& reason) {
  reason_ = reason;
  if (since_) return;
  since_ = std::chrono::steady_clock::now();
  ++count_;
  if (counter_ != nullptr) counter_->fetch_add(1, std::memory_order_relaxed);
  std::fprintf(stderr, "%s: the brokers cannot be reached (%s); retrying for up to %d ms (%s)\n", client_.c_str(),
               reason.c_str(), timeout_ms_, timeout_key_.c_str());
}

void BrokerOutage::recovered() {
  if (!since_) return;
  std::fprintf(stderr, "%s: the brokers answer again after %lld ms\n", client_.c_str(),
               static_cast<long long>(downMs()));
  since_.reset();
}

int64_t BrokerOutage::downMs() const {
  if (!since_) return 0;
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - *since_).count();
}

void BrokerOutage::throwIfExpired() const {
  if (since_ && downMs() >= timeout_ms_) fail();
}

void BrokerOutage::fail() const {
  throw KafkaUnavailableError(fmt::format("{}: the brokers could not be reached for {} ms ({} = {}): {}", client_,
                                          downMs(), timeout_key_, timeout_ms_, reason_));
}

std::vector<int> fetchPartitions(rd_kafka_t* rk, const std::string& topic, int timeout_ms,
                                 const std::string& bootstrap) {
  // An all-topics request: a request naming the topic would auto-create it on brokers that allow it
  // (the mock cluster always does), which would hide a misspelt or deleted topic.
  const rd_kafka_metadata_t* md = nullptr;
  rd_kafka_resp_err_t err = rd_kafka_metadata(rk, 1, nullptr, &md, timeout_ms);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
    throw KafkaUnavailableError(fmt::format("Cannot fetch the metadata of Kafka topic '{}' from '{}' within {} ms: {}",
                                            topic, bootstrap, timeout_ms, rd_kafka_err2str(err)));
  std::vector<int> out;
  rd_kafka_resp_err_t topic_err = RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART;
  for (int t = 0; t < md->topic_cnt; ++t) {
    const rd_kafka_metadata_topic_t& mt = md->topics[t];
    if (topic != mt.topic) continue;
    topic_err = mt.err;
    for (int p = 0; p < mt.partition_cnt; ++p) out.push_back(mt.partitions[p].id);
  }
  rd_kafka_metadata_destroy(md);
  if (topic_err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART || (topic_err == RD_KAFKA_RESP_ERR_NO_ERROR && out.empty()))
    throw UserError(fmt::format("Kafka topic '{}' does not exist (brokers '{}').", topic, bootstrap));
  if (topic_err != RD_KAFKA_RESP_ERR_NO_ERROR)
    throw UserError(fmt::format("Cannot read the metadata of Kafka topic '{}' (brokers '{}'): {}", topic, bootstrap,
                                rd_kafka_err2str(topic_err)));
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<int> fetchPartitionsCreating(rd_kafka_t* rk, const std::string& topic, int timeout_ms,
                                         const std::string& bootstrap) {
  rd_kafka_topic_t* rkt = rd_kafka_topic_new(rk, topic.c_str(), nullptr);
  if (rkt == nullptr)
    throw UserError(fmt::format("Cannot write Kafka topic '{}': {}", topic, rd_kafka_err2str(rd_kafka_last_error())));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  rd_kafka_resp_err_t last = RD_KAFKA_RESP_ERR__TIMED_OUT;
  std::vector<int> out;
  while (out.empty()) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    const rd_kafka_metadata_t* md = nullptr;
    const rd_kafka_resp_err_t err = rd_kafka_metadata(rk, 0, rkt, &md, static_cast<int>(left.count()));
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      last = err;
      break;  // the request itself waited out the time left, or failed for good
    }
    for (int t = 0; t < md->topic_cnt; ++t) {
      const rd_kafka_metadata_topic_t& mt = md->topics[t];
      if (topic != mt.topic) continue;
      last = mt.err;
      if (mt.err == RD_KAFKA_RESP_ERR_NO_ERROR)
        for (int p = 0; p < mt.partition_cnt; ++p) out.push_back(mt.partitions[p].id);
    }
    rd_kafka_metadata_destroy(md);
    // A topic being created answers UNKNOWN_TOPIC / LEADER_NOT_AVAILABLE for a moment: ask again after a
    // short pause (librdkafka's own retry backoff is 100 ms).
    if (out.empty()) rd_kafka_poll(rk, 100);
  }
  rd_kafka_topic_destroy(rkt);
  if (!out.empty()) {
    std::sort(out.begin(), out.end());
    return out;
  }
  if (last == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART || last == RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE ||
      last == RD_KAFKA_RESP_ERR_NO_ERROR)
    throw UserError(
        fmt::format("Kafka topic '{}' does not exist and the brokers '{}' did not create it within {} ms "
                    "(create it first, or enable auto.create.topics.enable on the brokers).",
                    topic, bootstrap, timeout_ms));
  throw KafkaUnavailableError(fmt::format("Cannot fetch the metadata of Kafka topic '{}' from '{}' within {} ms: {}",
                                          topic, bootstrap, timeout_ms, rd_kafka_err2str(last)));
}

std::vector<std::string> fetchTopics(rd_kafka_t* rk, int timeout_ms, const std::string& bootstrap) {
  const rd_kafka_metadata_t* md = nullptr;
  rd_kafka_resp_err_t err = rd_kafka_metadata(rk, 1, nullptr, &md, timeout_ms);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
    throw KafkaUnavailableError(fmt::format("Cannot list the Kafka topics of '{}' within {} ms: {}", bootstrap,
                                            timeout_ms, rd_kafka_err2str(err)));
  std::vector<std::string> out;
  for (int t = 0; t < md->topic_cnt; ++t) {
    std::string name = md->topics[t].topic;
    if (md->topics[t].err == RD_KAFKA_RESP_ERR_NO_ERROR && name.rfind("__", 0) != 0) out.push_back(std::move(name));
  }
  rd_kafka_metadata_destroy(md);
  std::sort(out.begin(), out.end());
  return out;
}

OffsetCommitter::OffsetCommitter(const std::map<std::string, std::string>& properties, const std::string& table) {
  std::map<std::string, std::string> props = properties;
  props["enable.auto.commit"] = "false";  // the commits are sent here, for partitions read without the group
  rk_ = newHandle(RD_KAFKA_CONSUMER, props, table);
  queue_ = rd_kafka_queue_new(rk_.get());
}

OffsetCommitter::~OffsetCommitter() {
  if (queue_ != nullptr) rd_kafka_queue_destroy(queue_);
}

void OffsetCommitter::advance(const std::string& topic, int partition, int64_t next) {
  next_[{topic, partition}] = next;
}

void OffsetCommitter::send() {
  PartitionList list;
  for (const auto& [tp, offset] : next_) {
    auto it = committed_.find(tp);
    if (it == committed_.end() || it->second != offset) list.add(tp.first, tp.second, offset);
  }
  if (list.list->cnt == 0) return;
  const rd_kafka_resp_err_t err = rd_kafka_commit_queue(rk_.get(), list.list, queue_, nullptr, nullptr);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    last_error_ = rd_kafka_err2str(err);
    return;
  }
  ++in_flight_;
}

bool OffsetCommitter::collect(int timeout_ms) {
  rd_kafka_event_t* ev = rd_kafka_queue_poll(queue_, timeout_ms);
  if (ev == nullptr) return false;
  if (rd_kafka_event_type(ev) == RD_KAFKA_EVENT_OFFSET_COMMIT) {
    --in_flight_;
    const rd_kafka_resp_err_t err = rd_kafka_event_error(ev);
    const rd_kafka_topic_partition_list_t* list = rd_kafka_event_topic_partition_list(ev);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) last_error_ = rd_kafka_event_error_string(ev);
    for (int i = 0; list != nullptr && i < list->cnt; ++i) {
      const rd_kafka_topic_partition_t& tp = list->elems[i];
      if (err == RD_KAFKA_RESP_ERR_NO_ERROR && tp.err == RD_KAFKA_RESP_ERR_NO_ERROR) {
        committed_[{tp.topic, tp.partition}] = tp.offset;
      } else if (tp.err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        last_error_ = fmt::format("partition {}-{}: {}", tp.topic, tp.partition, rd_kafka_err2str(tp.err));
      }
    }
  }
  rd_kafka_event_destroy(ev);
  return true;
}

void OffsetCommitter::commitAsync() {
  while (in_flight_ > 0 && collect(0)) {
  }
  if (in_flight_ == 0) send();
}

std::string OffsetCommitter::commitSync(int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  auto left = [&] {
    return static_cast<int>(std::max<int64_t>(
        0, std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count()));
  };
  while (in_flight_ > 0 && collect(left())) {
  }
  if (in_flight_ == 0) {
    last_error_.clear();
    send();
  }
  while (in_flight_ > 0 && collect(left())) {
  }
  for (const auto& [tp, offset] : next_) {
    auto it = committed_.find(tp);
    if (it == committed_.end() || it->second != offset)
      return !last_error_.empty() ? last_error_ : fmt::format("no answer within {} ms", timeout_ms);
  }
  return "";
}

SimpleConsumer::SimpleConsumer(rd_kafka_t* rk, const std::string& topic, rd_kafka_queue_t* queue)
    : rkt_(rd_kafka_topic_new(rk, topic.c_str(), nullptr)),
      queue_(queue != nullptr ? queue : rd_kafka_queue_new(rk)),
      owns_queue_(queue == nullptr),
      topic_(topic) {
  if (rkt_ == nullptr) {
    if (owns_queue_) rd_kafka_queue_destroy(queue_);
    throw UserError(fmt::format("Cannot read Kafka topic '{}': {}", topic, rd_kafka_err2str(rd_kafka_last_error())));
  }
}

SimpleConsumer::~SimpleConsumer() {
  for (int p : started_) rd_kafka_consume_stop(rkt_, p);
  if (owns_queue_) rd_kafka_queue_destroy(queue_);
  if (rkt_ != nullptr) rd_kafka_topic_destroy(rkt_);
}

void SimpleConsumer::start(int partition, int64_t offset) {
  if (rd_kafka_consume_start_queue(rkt_, partition, offset, queue_) != 0)
    throw UserError(fmt::format("Cannot read Kafka topic '{}' partition {}: {}", topic_, partition,
                                rd_kafka_err2str(rd_kafka_last_error())));
  started_.push_back(partition);
}

void SimpleConsumer::stop(int partition) {
  auto it = std::find(started_.begin(), started_.end(), partition);
  if (it == started_.end()) return;
  rd_kafka_consume_stop(rkt_, partition);
  started_.erase(it);
}

}  // namespace sluice::connectors::kafka
