#pragma once
/// librdkafka helpers of the kafka module (internal: included only by src/connectors/kafka/*.cc, so the
/// librdkafka headers stay out of every other translation unit).

#include <librdkafka/rdkafka.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/error.h"

namespace sluice::connectors::kafka {

/// Owns an rd_kafka_t. Consumers are destroyed without a consumer close (they never join a group).
struct RdKafkaDeleter {
  void operator()(rd_kafka_t* rk) const;
};
using RdKafkaPtr = std::unique_ptr<rd_kafka_t, RdKafkaDeleter>;

/// Brokers that do not answer in time (refused connections, a timeout): a TransientError, so a restart
/// strategy restarts the job. The message names the topic and the bootstrap servers.
class KafkaUnavailableError : public TransientError {
 public:
  using TransientError::TransientError;
};

/// True for librdkafka errors that mean "the brokers cannot be reached now" (transport, all brokers
/// down, resolve, timeouts), which librdkafka retries by itself.
bool isBrokerUnreachable(rd_kafka_resp_err_t err);

/// An outage of a client's brokers as the user sees it (Flink's Kafka clients log and keep retrying):
/// the first failure prints one line on stderr naming the client (table, topic, brokers), the reason
/// and how long it keeps retrying; the end of the outage prints another; throwIfExpired fails once it
/// has lasted `timeout_ms`. Task thread only (count() may be read from any thread).
class BrokerOutage {
 public:
  /// `client`: e.g. "Kafka source of table 't' (topic 'x', brokers 'h:9092')"; `timeout_key`: the option
  /// whose value `timeout_ms` is, named in the messages.
  BrokerOutage(std::string client, int timeout_ms, std::string timeout_key);
  /// A request failed or a connection broke with `reason`: starts the outage (printing) or continues it.
  void failed(const std::string& reason);
  /// The brokers answered: ends the outage (printing) if there was one.
  void recovered();
  bool down() const { return since_.has_value(); }
  /// Milliseconds since the outage began (0 when there is none).
  int64_t downMs() const;
  /// Throws KafkaUnavailableError naming the client, the timeout and the last reason when the outage has
  /// lasted `timeout_ms`.
  void throwIfExpired() const;
  /// Throws KafkaUnavailableError as throwIfExpired, whatever the time.
  [[noreturn]] void fail() const;
  /// Outages seen so far.
  int64_t count() const { return count_; }
  /// Also counts every new outage into `counter` (an operator's num_connection_outages; not owned).
  void setCounter(std::atomic<int64_t>* counter) { counter_ = counter; }

 private:
  std::string client_;
  int timeout_ms_;
  std::string timeout_key_;
  std::optional<std::chrono::steady_clock::time_point> since_;
  std::string reason_;
  int64_t count_ = 0;
  std::atomic<int64_t>* counter_ = nullptr;
};

/// Callbacks a new handle gets.
struct HandleCallbacks {
  /// Delivery reports (producers).
  void (*dr_msg_cb)(rd_kafka_t*, const rd_kafka_message_t*, void*) = nullptr;
  /// Client-level errors (broken connections, all brokers down), served by rd_kafka_poll.
  void (*error_cb)(rd_kafka_t*, int, const char*, void*) = nullptr;
  /// Passed to every callback as the handle's opaque.
  void* opaque = nullptr;
};

/// A new librdkafka handle of `type` with the librdkafka `properties` (e.g. "bootstrap.servers"). Its log
/// lines are dropped (errors reach the connector through return codes and delivery reports instead).
/// Throws UserError "Invalid Kafka property 'properties.<key>' of table '<table>': <librdkafka's reason>"
/// for a property librdkafka rejects, or naming `table` when the handle cannot be created.
RdKafkaPtr newHandle(rd_kafka_type_t type, const std::map<std::string, std::string>& properties,
                     const std::string& table, const HandleCallbacks& callbacks = {});

/// The partition ids of `topic` (ascending) from a metadata request that waits at most `timeout_ms`.
/// Throws KafkaUnavailableError naming the topic and `bootstrap` when the brokers do not answer in time,
/// UserError naming the topic when it does not exist ("Kafka topic 'x' does not exist ...").
std::vector<int> fetchPartitions(rd_kafka_t* rk, const std::string& topic, int timeout_ms,
                                 const std::string& bootstrap);

/// The partition ids of `topic` (ascending) for a producer: asks for the topic by name, so brokers that
/// auto-create topics (auto.create.topics.enable) create it, and waits up to `timeout_ms` until it has
/// partitions (as the Java producer's partitionsFor). Throws KafkaUnavailableError naming the topic and
/// `bootstrap` when the brokers do not answer, UserError when the topic still does not exist after the wait.
std::vector<int> fetchPartitionsCreating(rd_kafka_t* rk, const std::string& topic, int timeout_ms,
                                         const std::string& bootstrap);

/// Every topic name the cluster knows (sorted; internal topics starting with "__" left out). Throws
/// KafkaUnavailableError naming `bootstrap` when the brokers do not answer within `timeout_ms`.
std::vector<std::string> fetchTopics(rd_kafka_t* rk, int timeout_ms, const std::string& bootstrap);

/// Builds an rd_kafka_topic_partition_list_t and frees it.
struct PartitionList {
  PartitionList() : list(rd_kafka_topic_partition_list_new(4)) {}
  ~PartitionList() { rd_kafka_topic_partition_list_destroy(list); }
  PartitionList(const PartitionList&) = delete;
  PartitionList& operator=(const PartitionList&) = delete;
  rd_kafka_topic_partition_t* add(const std::string& topic, int partition, int64_t offset) {
    rd_kafka_topic_partition_t* p = rd_kafka_topic_partition_list_add(list, topic.c_str(), partition);
    p->offset = offset;
    return p;
  }
  rd_kafka_topic_partition_list_t* list;
};

/// Commits the offsets a source has read to a consumer group without joining it (Kafka's auto commit,
/// done by the source: its partitions are read with the simple consumer). Offsets are "next offset to
/// read", as Kafka commits them. Task thread only.
class OffsetCommitter {
 public:
  /// `properties` must hold bootstrap.servers and group.id. Throws UserError naming `table` as newHandle.
  OffsetCommitter(const std::map<std::string, std::string>& properties, const std::string& table);
  ~OffsetCommitter();
  OffsetCommitter(const OffsetCommitter&) = delete;
  OffsetCommitter& operator=(const OffsetCommitter&) = delete;
  /// The next offset to read of `topic` `partition` is now `next`.
  void advance(const std::string& topic, int partition, int64_t next);
  /// Sends the offsets that changed since the last successful commit, unless a commit is in flight; does
  /// not wait. Results of earlier commits are collected first.
  void commitAsync();
  /// Sends what changed and waits up to `timeout_ms` until every offset advanced so far is committed.
  /// Returns "" on success, else the reason (librdkafka's error or a timeout).
  std::string commitSync(int timeout_ms);

 private:
  void send();
  bool collect(int timeout_ms);  // one result; false when none arrived in time

  RdKafkaPtr rk_;
  rd_kafka_queue_t* queue_ = nullptr;
  std::map<std::pair<std::string, int>, int64_t> next_;
  std::map<std::pair<std::string, int>, int64_t> committed_;
  int in_flight_ = 0;
  std::string last_error_;
};

/// Reads partitions of one topic with librdkafka's simple (legacy) consumer API into one queue: no
/// consumer group, so nothing waits on a group coordinator (the mock's is slow, and a group consumer of
/// librdkafka 2.0 can hang on destroy after a topic vanished). Stops its partitions on destruction.
class SimpleConsumer {
 public:
  /// `rk` must be a consumer handle and outlive this object. Messages go to `queue` when given (not
  /// owned; several consumers may share one), else to a queue of its own.
  SimpleConsumer(rd_kafka_t* rk, const std::string& topic, rd_kafka_queue_t* queue = nullptr);
  ~SimpleConsumer();
  SimpleConsumer(const SimpleConsumer&) = delete;
  SimpleConsumer& operator=(const SimpleConsumer&) = delete;
  /// Starts fetching `partition` at `offset` (an offset or RD_KAFKA_OFFSET_BEGINNING / _END) into queue().
  /// Throws UserError naming topic and partition when librdkafka refuses.
  void start(int partition, int64_t offset);
  /// Stops fetching `partition` (no-op when not started).
  void stop(int partition);
  rd_kafka_queue_t* queue() const { return queue_; }
  const std::string& topic() const { return topic_; }

 private:
  rd_kafka_topic_t* rkt_ = nullptr;
  rd_kafka_queue_t* queue_ = nullptr;
  bool owns_queue_ = false;
  std::string topic_;
  std::vector<int> started_;
};

}  // namespace sluice::connectors::kafka
