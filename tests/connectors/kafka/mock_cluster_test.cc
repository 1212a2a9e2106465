#include "connectors/kafka/mock_cluster.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/error.h"

namespace sluice::connectors::kafka {
namespace {

TEST(MockKafkaClusterTest, ProduceThenReadBackPerPartitionInOrder) {
  MockKafkaCluster cluster(3);
  EXPECT_EQ(cluster.numBrokers(), 3);
  // Three brokers: three comma-separated loopback addresses.
  const std::string& bs = cluster.bootstrapServers();
  EXPECT_EQ(std::count(bs.begin(), bs.end(), ','), 2) << bs;
  EXPECT_EQ(bs.rfind("127.0.0.1:", 0), 0u) << bs;
  cluster.createTopic("t", 2);
  EXPECT_EQ(cluster.numPartitions("t"), 2);
  std::vector<KafkaRecord> in;
  for (int i = 0; i < 10; ++i) {
    KafkaRecord r;
    r.key = "k" + std::to_string(i);
    r.value = "v" + std::to_string(i);
    r.timestamp_ms = 1000 + i;
    r.partition = i % 2;
    in.push_back(r);
  }
  KafkaRecord tombstone;
  tombstone.key = "k0";
  tombstone.partition = 0;
  tombstone.timestamp_ms = 5000;
  in.push_back(tombstone);
  cluster.produce("t", in);
  std::vector<KafkaRecord> out = cluster.readAll("t");
  // Partition 0 holds the even records then the tombstone (offsets 0..5), partition 1 the odd ones.
  ASSERT_EQ(out.size(), 11u);
  std::vector<int> expect_order = {0, 2, 4, 6, 8, 10, 1, 3, 5, 7, 9};
  for (size_t k = 0; k < out.size(); ++k) {
    const KafkaRecord& want = in[static_cast<size_t>(expect_order[k])];
    EXPECT_EQ(out[k].key, want.key) << k;
    EXPECT_EQ(out[k].value, want.value) << k;
    EXPECT_EQ(out[k].timestamp_ms, want.timestamp_ms) << k;
    EXPECT_EQ(out[k].partition, want.partition) << k;
  }
  EXPECT_EQ(out[5].offset, 5);
  EXPECT_FALSE(out[5].value.has_value());
  EXPECT_EQ(out[6].offset, 0);
}

TEST(MockKafkaClusterTest, MissingAndDeletedTopicsAreErrorsNamingTheTopic) {
  MockKafkaCluster cluster(1);
  try {
    cluster.readAll("nope", 5000);
    FAIL() << "expected an error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("'nope'"), std::string::npos) << e.what();
  }
  cluster.createTopic("gone", 1);
  cluster.produce("gone", {KafkaRecord{std::nullopt, std::string("x"), 0, 0, -1}});
  EXPECT_EQ(cluster.readAll("gone").size(), 1u);
  cluster.markTopicDeleted("gone");
  EXPECT_THROW(cluster.numPartitions("gone"), UserError);
}

TEST(MockKafkaClusterTest, StoppedClusterRejectsCalls) {
  MockKafkaCluster cluster(1);
  cluster.stop();
  EXPECT_TRUE(cluster.bootstrapServers().empty());
  EXPECT_THROW(cluster.createTopic("t", 1), UserError);
  cluster.stop();
}

}  // namespace
}  // namespace sluice::connectors::kafka
