#pragma once
/// librdkafka helpers of the kafka module (internal: included only by src/connectors/kafka/*.cc, so the
/// librdkafka headers stay out of every other translation unit).

#include <librdkafka/rdkafka.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace sluice::connectors::kafka {

/// Owns an rd_kafka_t. Consumers are destroyed without a consumer close (they never join a group).
struct RdKafkaDeleter {
  void operator()(rd_kafka_t* rk) const;
};
using RdKafkaPtr = std::unique_ptr<rd_kafka_t, RdKafkaDeleter>;

/// Callbacks a new handle gets.
struct HandleCallbacks {
  /// Delivery reports (producers).
  void (*dr_msg_cb)(rd_kafka_t*, const rd_kafka_message_t*, void*) = nullptr;
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
/// Throws UserError naming the topic and `bootstrap` when the brokers do not answer in time, or naming
/// the topic when it does not exist ("Topic 'x' does not exist ...").
std::vector<int> fetchPartitions(rd_kafka_t* rk, const std::string& topic, int timeout_ms,
                                 const std::string& bootstrap);

/// The partition ids of `topic` (ascending) for a producer: asks for the topic by name, so brokers that
/// auto-create topics (auto.create.topics.enable) create it, and waits up to `timeout_ms` until it has
/// partitions (as the Java producer's partitionsFor). Throws UserError naming the topic and `bootstrap`
/// when the brokers do not answer, or when the topic still does not exist after the wait.
std::vector<int> fetchPartitionsCreating(rd_kafka_t* rk, const std::string& topic, int timeout_ms,
                                         const std::string& bootstrap);

/// Every topic name the cluster knows (sorted; internal topics starting with "__" left out). Throws
/// UserError naming `bootstrap` when the brokers do not answer within `timeout_ms`.
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
