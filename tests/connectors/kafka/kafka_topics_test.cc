// Topic lists and patterns, key.fields-prefix, and debezium-json through Kafka (a retract changelog
// source, and a sink that accepts updates), against the in-process mock cluster.

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "common/error.h"
#include "kafka_test_util.h"

namespace sluice::connectors::kafka {
namespace {

using testing::materialize;
using testing::runSql;
using testing::valueRecord;

std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

TEST(KafkaTopicsTest, TopicListAndPatternWithTopicMetadata) {
  MockKafkaCluster c(1);
  for (const char* t : {"orders_eu", "orders_us", "returns"}) {
    c.createTopic(t, 2);
    c.produce(t, {valueRecord(std::string(t) + "-a", 0), valueRecord(std::string(t) + "-b", 1)});
  }
  auto read = [&](const std::string& topics) {
    return sorted(runSql(fmt::format("CREATE TABLE t (v STRING, tp STRING METADATA FROM 'topic' VIRTUAL) WITH ("
                                     "'connector' = 'kafka', {}, 'properties.bootstrap.servers' = '{}', "
                                     "'format' = 'raw', 'scan.startup.mode' = 'earliest-offset', "
                                     "'scan.bounded.mode' = 'latest-offset', 'scan.parallelism' = '2');\n"
                                     "SELECT * FROM t;",
                                     topics, c.bootstrapServers()),
                         2));
  };
  const std::vector<std::string> orders = {"+I[orders_eu-a, orders_eu]", "+I[orders_eu-b, orders_eu]",
                                           "+I[orders_us-a, orders_us]", "+I[orders_us-b, orders_us]"};
  EXPECT_EQ(read("'topic' = 'orders_eu;orders_us'"), orders);
  // The pattern must match the whole name: 'orders' alone matches nothing.
  EXPECT_EQ(read("'topic-pattern' = 'orders_.*'"), orders);
  EXPECT_EQ(read("'topic-pattern' = 'orders'"), std::vector<std::string>{});
}

TEST(KafkaTopicsTest, KeyFieldsPrefixNamesTheKeyFormatFields) {
  MockKafkaCluster c(1);
  c.createTopic("p", 1);
  KafkaRecord r;
  r.key = R"({"id":4})";
  r.value = R"({"id":99,"name":"x"})";  // the value's own "id" is not the key column
  c.produce("p", {r});
  EXPECT_EQ(runSql(fmt::format("CREATE TABLE t (k_id INT, id INT, name STRING) WITH ('connector' = 'kafka', "
                               "'topic' = 'p', 'properties.bootstrap.servers' = '{}', 'key.format' = 'json', "
                               "'key.fields' = 'k_id', 'key.fields-prefix' = 'k_', 'value.format' = 'json', "
                               "'value.fields-include' = 'EXCEPT_KEY', 'scan.startup.mode' = 'earliest-offset', "
                               "'scan.bounded.mode' = 'latest-offset');\nSELECT * FROM t;",
                               c.bootstrapServers())),
            std::vector<std::string>{"+I[4, 99, x]"});
}

TEST(KafkaTopicsTest, DebeziumJsonThroughKafkaBothWays) {
  MockKafkaCluster c(1);
  c.createTopic("agg", 1);
  c.createTopic("cdc", 1);
  std::string csv;
  // a: 3 rows, b: 2 rows, so COUNT per key goes a 1,2,3 and b 1,2.
  for (const char* k : {"a", "b", "a", "b", "a"}) csv += std::string(k) + "\n";
  const std::string path = ::testing::TempDir() + "sluice_kafka_dbz_input.csv";
  {
    FILE* f = std::fopen(path.c_str(), "w");
    std::fputs(csv.c_str(), f);
    std::fclose(f);
  }
  // An updating query into a debezium-json kafka sink: Flink's DebeziumJsonSerializationSchema writes
  // +I/+U as op c (after) and -U/-D as op d (before).
  runSql(fmt::format("CREATE TABLE src (k STRING) WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = "
                     "'csv');\nCREATE TABLE out (k STRING, n BIGINT) WITH ('connector' = 'kafka', 'topic' = 'agg', "
                     "'properties.bootstrap.servers' = '{}', 'format' = 'debezium-json');\n"
                     "INSERT INTO out SELECT k, COUNT(*) FROM src GROUP BY k;",
                     path, c.bootstrapServers()));
  std::remove(path.c_str());
  std::vector<KafkaRecord> written = c.readAll("agg");
  // 5 inserts into the aggregate: 2 first rows (+I each) and 3 updates (-U and +U each) = 8 messages.
  ASSERT_EQ(written.size(), 8u);
  // Read back as a changelog source: the final counts a = 3, b = 2.
  auto lines = runSql(fmt::format("CREATE TABLE back (k STRING, n BIGINT) WITH ('connector' = 'kafka', 'topic' = "
                                  "'agg', 'properties.bootstrap.servers' = '{}', 'format' = 'debezium-json', "
                                  "'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset');\n"
                                  "SELECT * FROM back;",
                                  c.bootstrapServers()));
  EXPECT_EQ(materialize(lines), (std::multiset<std::string>{"[a, 3]", "[b, 2]"}));
}

}  // namespace
}  // namespace sluice::connectors::kafka
