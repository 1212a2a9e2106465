// FLIP-367 plans of the kafka connectors (`sluice explain --format=json`): the source's own parallelism,
// REBALANCE after an insert-only source, HASH on the primary key after upsert-kafka, chaining when equal.
// Planning contacts no broker.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../../table/planner/plan_vertices.h"
#include "common/error.h"

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

// The error planning `script` fails with ("no error" when it plans).
std::string planError(const std::string& script) {
  try {
    plan(script, 1);
  } catch (const UserError& e) {
    return e.what();
  }
  return "no error";
}

TEST(KafkaPlanTest, BadTopicPatternFailsPlanningNamingOptionAndPattern) {
  // Planning only: no broker listens at 127.0.0.1:1, so reaching the job would fail differently.
  const std::string err = planError(
      "CREATE TABLE t (v STRING) WITH ('connector' = 'kafka', 'topic-pattern' = 'orders_(eu', "
      "'properties.bootstrap.servers' = '127.0.0.1:1', 'format' = 'raw', 'scan.startup.mode' = 'earliest-offset');\n"
      "CREATE TABLE s (v STRING) WITH ('connector' = 'print');\nINSERT INTO s SELECT v FROM t;");
  EXPECT_NE(err.find("'topic-pattern'"), std::string::npos) << err;
  EXPECT_NE(err.find("'orders_(eu'"), std::string::npos) << err;
  EXPECT_NE(err.find("not a regular expression"), std::string::npos) << err;
}

TEST(KafkaPlanTest, RawFormatErrorsSayWhetherTheTableIsReadOrWritten) {
  const std::string kafka2 =
      "CREATE TABLE k (a STRING, b STRING) WITH ('connector' = 'kafka', 'topic' = 'x', "
      "'properties.bootstrap.servers' = '127.0.0.1:1', 'format' = 'raw', "
      "'scan.startup.mode' = 'earliest-offset');\n";
  const std::string sink_err = planError(kafka2 +
                                         "CREATE TABLE f (a STRING, b STRING) WITH ('connector' = 'datagen');\n"
                                         "INSERT INTO k SELECT * FROM f;");
  EXPECT_NE(sink_err.find("The 'raw' format writes exactly one STRING column"), std::string::npos) << sink_err;
  EXPECT_NE(sink_err.find("option 'format'"), std::string::npos) << sink_err;
  const std::string source_err = planError(
      kafka2 + "CREATE TABLE p (a STRING, b STRING) WITH ('connector' = 'print');\nINSERT INTO p SELECT * FROM k;");
  EXPECT_NE(source_err.find("The 'raw' format reads exactly one STRING column"), std::string::npos) << source_err;
}

TEST(KafkaPlanTest, OffsetCommitNeedsAGroupId) {
  const std::string err =
      planError(kafkaTable(", 'properties.enable.auto.commit' = 'true'") + kSink + "INSERT INTO s SELECT k, v FROM t;");
  EXPECT_NE(err.find("group.id is required when offset commit is enabled"), std::string::npos) << err;
}

}  // namespace
}  // namespace sluice::connectors::kafka
