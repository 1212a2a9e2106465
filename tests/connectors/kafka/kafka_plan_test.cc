// FLIP-367 plans of the kafka connectors (`sluice explain --format=json`): the source's own parallelism,
// REBALANCE after an insert-only source, HASH on the primary key after upsert-kafka, chaining when equal.
// Planning contacts no broker.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../../table/planner/plan_vertices.h"

namespace sluice::connectors::kafka {
namespace {

using table::testing::Vertex;

std::vector<Vertex> plan(const std::string& script, int p) { return table::testing::planVertices(script, p); }

std::string kafkaTable(const std::string& extra) {
  return "CREATE TABLE t (k STRING, v INT) WITH ('connector' = 'kafka', 'topic' = 'x', "
         "'properties.bootstrap.servers' = '127.0.0.1:1', 'format' = 'csv', 'scan.startup.mode' = "
         "'earliest-offset'" + extra + ");\n";
}

std::string upsertTable(const std::string& extra) {
  return "CREATE TABLE t (k STRING, v INT, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'upsert-kafka', "
         "'topic' = 'x', 'properties.bootstrap.servers' = '127.0.0.1:1', 'key.format' = 'raw', 'value.format' = "
         "'json'" + extra + ");\n";
}

constexpr const char* kSink = "CREATE TABLE s (k STRING, v INT) WITH ('connector' = 'print');\n";

TEST(KafkaPlanTest, InsertOnlySourceAtItsParallelismRebalancesToTheDefault) {
  auto v = plan(kafkaTable(", 'scan.parallelism' = '3'") + kSink + "INSERT INTO s SELECT k, v FROM t WHERE v > 0;", 2);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].parallelism, 3);
  EXPECT_TRUE(v[0].inputs.empty());
  EXPECT_EQ(v[1].parallelism, 2);
  EXPECT_EQ(v[1].inputs, std::vector<std::string>{"REBALANCE"});
}

TEST(KafkaPlanTest, EqualParallelismChains) {
  auto v = plan(kafkaTable(", 'scan.parallelism' = '2'") + kSink + "INSERT INTO s SELECT k, v FROM t;", 2);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].parallelism, 2);
}

TEST(KafkaPlanTest, UpsertSourceIsHashedOnThePrimaryKeyIntoChangelogNormalize) {
  auto v = plan(upsertTable(", 'scan.parallelism' = '3'") + kSink + "INSERT INTO s SELECT k, v FROM t;", 2);
  ASSERT_GE(v.size(), 2u);
  EXPECT_EQ(v[0].parallelism, 3);
  EXPECT_EQ(v[1].parallelism, 2);
  EXPECT_EQ(v[1].inputs, std::vector<std::string>{"HASH"});
  EXPECT_NE(v[1].op.find("ChangelogNormalize"), std::string::npos) << v[1].op;
  // Even at equal parallelism the changes of a key are hashed (FLIP-367: always for updating sources).
  auto same = plan(upsertTable(", 'scan.parallelism' = '2'") + kSink + "INSERT INTO s SELECT k, v FROM t;", 2);
  ASSERT_GE(same.size(), 2u);
  EXPECT_EQ(same[1].inputs, std::vector<std::string>{"HASH"});
}

}  // namespace
}  // namespace sluice::connectors::kafka
