#pragma once
/// An in-process Kafka cluster for tests, examples and the `sluice-kafka-mock` tool: librdkafka's mock
/// cluster (a real Kafka protocol server on 127.0.0.1, in memory), plus a small producer and reader to
/// load and inspect topics. Clients (the kafka connectors, kcat) reach it at bootstrapServers().
///
/// Quirks of the librdkafka 2.0 mock (see the deps reference): a consumer group join takes about 3 s, so
/// readers here and in the connector read partitions directly without a group; a metadata request that
/// names a topic auto-creates it, so existence is checked against the list of all topics.
/// Threading: every method may be called from any thread; the brokers run on librdkafka's threads.
/// librdkafka headers stay in mock_cluster.cc.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sluice::connectors::kafka {

/// One Kafka record as produced to or read from a topic.
struct KafkaRecord {
  std::optional<std::string> key;    ///< nullopt: no key (null)
  std::optional<std::string> value;  ///< nullopt: null value (an upsert-kafka tombstone)
  int64_t timestamp_ms = 0;          ///< CreateTime in ms since the epoch; 0 when producing: now
  int partition = -1;                ///< producing: -1 lets librdkafka's partitioner pick; read: the partition
  int64_t offset = -1;               ///< read: the record's offset; ignored when producing
};

/// A running mock cluster. Stopped by stop() or the destructor.
class MockKafkaCluster {
 public:
  /// Starts `brokers` (>= 1) mock brokers on loopback ports chosen by the OS. Throws UserError when
  /// librdkafka cannot create them.
  explicit MockKafkaCluster(int brokers = 1);
  ~MockKafkaCluster();
  MockKafkaCluster(const MockKafkaCluster&) = delete;
  MockKafkaCluster& operator=(const MockKafkaCluster&) = delete;

  /// "127.0.0.1:port,127.0.0.1:port,..." for `properties.bootstrap.servers`. Empty after stop().
  const std::string& bootstrapServers() const;
  int numBrokers() const;

  /// Creates `topic` with `partitions` partitions (replication factor min(3, brokers)). Throws UserError
  /// naming the topic when it exists already or the arguments are bad.
  void createTopic(const std::string& topic, int partitions);

  /// Produces `records` to `topic` in order and waits (up to `timeout_ms`) until every one is acknowledged.
  /// A record with partition -1 goes where librdkafka's default partitioner puts it (by key hash, or
  /// spread when it has no key). A topic that does not exist yet is auto-created with one partition.
  /// Throws UserError naming topic (and partition) on the first delivery error or a timeout.
  void produce(const std::string& topic, const std::vector<KafkaRecord>& records, int timeout_ms = 30000);

  /// Every record of `topic` from the beginning to its current end, partition by partition (partition
  /// ascending, offset ascending). Throws UserError naming the topic when it does not exist or the read
  /// times out.
  std::vector<KafkaRecord> readAll(const std::string& topic, int timeout_ms = 30000) const;

  /// Partition count of `topic`; throws UserError when it does not exist.
  int numPartitions(const std::string& topic) const;

  /// Commits `offsets` (partition -> next offset to read) of `topic` for consumer group `group`, as a
  /// consumer of that group would (for `scan.startup.mode` = 'group-offsets'). Throws UserError naming
  /// the group and topic on failure.
  void commitOffsets(const std::string& group, const std::string& topic, const std::map<int, int64_t>& offsets);

  /// The offsets of `topic` committed by consumer group `group` (partition -> next offset to read), only
  /// partitions with a committed offset. Throws UserError naming the group and topic on failure.
  std::map<int, int64_t> committedOffsets(const std::string& group, const std::string& topic) const;

  /// From now on every request about `topic` fails with UNKNOWN_TOPIC_OR_PARTITION, as after a delete
  /// (the mock cannot delete topics).
  void markTopicDeleted(const std::string& topic);

  /// Takes broker `broker_id` (1-based) down or up again: its connections are closed and refused.
  void setBrokerDown(int broker_id, bool down);

  /// Stops the brokers; clients see connection failures afterwards. Idempotent.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sluice::connectors::kafka
