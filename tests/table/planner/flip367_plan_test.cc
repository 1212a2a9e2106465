// FLIP-367 (`scan.parallelism`) and sink-parallelism plans: the JobGraph JSON of `explain`, vertex
// parallelism and the ship strategy of every edge, plus the planning errors.

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/config.h"
#include "common/error.h"
#include "connectors/builtin.h"
#include "table/api/table_environment.h"
#include "plan_vertices.h"

namespace sluice::table {
namespace {

using nlohmann::json;

using testing::Vertex;

class Flip367PlanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("sluice_flip367_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    std::ofstream(dir_ / "rows.csv") << "a,1\nb,2\n";
    std::ofstream(dir_ / "cdc.json") << R"({"before":null,"after":{"k":"a","v":1},"op":"c"})" << "\n";
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  /// DDL of a filesystem table `name` over the csv or debezium-json file, with extra WITH options.
  std::string table(const std::string& name, bool cdc, bool pk, const std::string& extra) const {
    std::string path = (dir_ / (cdc ? "cdc.json" : "rows.csv")).string();
    return "CREATE TABLE " + name + " (k STRING, v INT" + (pk ? ", PRIMARY KEY (k) NOT ENFORCED" : "") +
           ") WITH ('connector' = 'filesystem', 'path' = '" + path + "', 'format' = '" +
           (cdc ? "debezium-json" : "csv") + "'" + extra + ");\n";
  }

  /// The vertices of the single job planned from `script` at default parallelism `p`, in JSON order.
  std::vector<Vertex> plan(const std::string& script, int p) { return testing::planVertices(script, p); }

  std::filesystem::path dir_;
};

constexpr const char* kSink = "CREATE TABLE sink (k STRING, v INT) WITH ('connector' = 'blackhole');\n";

// Insert-only source at 3, default 2: Source(3) -REBALANCE-> rest(2); the filter stays in the source vertex.
TEST_F(Flip367PlanTest, InsertOnlySourceRebalancesToTheDefault) {
  auto v = plan(table("t", false, false, ", 'scan.parallelism' = '3'") + kSink +
                    "INSERT INTO sink SELECT k, v + 1 FROM t WHERE v > 0;",
                2);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].parallelism, 3);
  EXPECT_NE(v[0].op.find("Calc"), std::string::npos) << v[0].op;  // pushed into the source block
  EXPECT_TRUE(v[0].inputs.empty());
  EXPECT_EQ(v[1].parallelism, 2);
  EXPECT_EQ(v[1].inputs, std::vector<std::string>{"REBALANCE"});
}

// datagen reads scan.parallelism through the same option helper: Source(3) -REBALANCE-> Sink(2).
TEST_F(Flip367PlanTest, DatagenSourceGetsItsOwnParallelism) {
  auto v = plan("CREATE TABLE g (k STRING, v INT) WITH ('connector' = 'datagen', 'number-of-rows' = '10', "
                "'scan.parallelism' = '3');\n" + std::string(kSink) + "INSERT INTO sink SELECT k, v FROM g;",
                2);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].parallelism, 3);
  EXPECT_EQ(v[1].parallelism, 2);
  EXPECT_EQ(v[1].inputs, std::vector<std::string>{"REBALANCE"});
}

// scan.parallelism equal to the default: one chained vertex, no exchange.
TEST_F(Flip367PlanTest, EqualParallelismIsForwardAndChained) {
  auto v = plan(table("t", false, false, ", 'scan.parallelism' = '2'") + kSink + "INSERT INTO sink SELECT k, v FROM t;",
                2);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].parallelism, 2);
  EXPECT_NE(v[0].op.find("Sink"), std::string::npos) << v[0].op;
}

// No scan.parallelism: the source runs at the default and chains.
TEST_F(Flip367PlanTest, NoScanParallelismUsesTheDefault) {
  auto v = plan(table("t", true, true, "") + kSink + "INSERT INTO sink SELECT k, v FROM t;", 4);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].parallelism, 4);
}

// A changelog source with a primary key at 3, default 2: Source(3) -HASH-> Calc/Sink(2); the Calc is not
// pushed into the source.
TEST_F(Flip367PlanTest, ChangelogSourceIsHashedOnItsPrimaryKey) {
  auto v = plan(table("t", true, true, ", 'scan.parallelism' = '3'") + kSink +
                    "INSERT INTO sink SELECT k, v + 1 FROM t WHERE v > 0;",
                2);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].parallelism, 3);
  EXPECT_EQ(v[0].op.find("Calc"), std::string::npos) << v[0].op;
  EXPECT_EQ(v[1].parallelism, 2);
  EXPECT_EQ(v[1].inputs, std::vector<std::string>{"HASH"});
  EXPECT_NE(v[1].op.find("Calc"), std::string::npos) << v[1].op;
}

// Flink hashes a configured changelog source even at the default parallelism.
TEST_F(Flip367PlanTest, ChangelogSourceAtTheDefaultIsStillHashed) {
  auto v = plan(table("t", true, true, ", 'scan.parallelism' = '2'") + kSink + "INSERT INTO sink SELECT k, v FROM t;",
                2);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].parallelism, 2);
  EXPECT_EQ(v[1].inputs, std::vector<std::string>{"HASH"});
}

// With table.exec.source.cdc-events-duplicate a ChangelogNormalize follows the source behind one HASH
// exchange on the key (which also serves FLIP-367).
TEST_F(Flip367PlanTest, CdcEventsDuplicateAddsChangelogNormalizeBehindOneHash) {
  auto v = plan("SET 'table.exec.source.cdc-events-duplicate' = 'true';\n" +
                    table("t", true, true, ", 'scan.parallelism' = '3'") + kSink + "INSERT INTO sink SELECT k, v FROM t;",
                2);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].parallelism, 3);
  EXPECT_EQ(v[1].parallelism, 2);
  EXPECT_EQ(v[1].inputs, std::vector<std::string>{"HASH"});
  EXPECT_NE(v[1].op.find("ChangelogNormalize"), std::string::npos) << v[1].op;
}

TEST_F(Flip367PlanTest, ChangelogSourceWithoutPrimaryKeyFails) {
  try {
    plan(table("t", true, false, ", 'scan.parallelism' = '3'") + kSink + "INSERT INTO sink SELECT k, v FROM t;", 2);
    FAIL() << "expected an error";
  } catch (const SqlError& e) {
    EXPECT_NE(std::string(e.what()).find("Configured parallelism 3 for upsert table "
                                         "'default_catalog.default_database.t' while can not find primary key field"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(Flip367PlanTest, NonPositiveScanParallelismFailsNamingTableAndValue) {
  for (const char* bad : {"0", "-1"}) {
    try {
      plan(table("t", false, false, std::string(", 'scan.parallelism' = '") + bad + "'") + kSink +
               "INSERT INTO sink SELECT k, v FROM t;",
           2);
      FAIL() << "expected an error for " << bad;
    } catch (const UserError& e) {
      std::string m = e.what();
      EXPECT_NE(m.find(std::string("Invalid configured parallelism ") + bad + " for table 't'"), std::string::npos)
          << m;
      EXPECT_NE(m.find("scan.parallelism"), std::string::npos) << m;
    }
  }
}

// An updating input into a sink of another parallelism is hashed on the sink's primary key.
TEST_F(Flip367PlanTest, SinkParallelismWithUpdatesHashesOnThePrimaryKey) {
  std::string sink =
      "CREATE TABLE agg (k STRING, n BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'print', "
      "'sink.parallelism' = '3');\n";
  auto v = plan(table("t", false, false, "") + sink + "INSERT INTO agg SELECT k, COUNT(*) FROM t GROUP BY k;", 2);
  // Source(2) -HASH[k]-> GroupAggregate(2) -HASH[k]-> Sink(3)
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[1].inputs, std::vector<std::string>{"HASH"});
  EXPECT_EQ(v[2].parallelism, 3);
  EXPECT_EQ(v[2].inputs, std::vector<std::string>{"HASH"});
}

TEST_F(Flip367PlanTest, SinkParallelismWithUpdatesWithoutPrimaryKeyFails) {
  std::string sink = "CREATE TABLE agg (k STRING, n BIGINT) WITH ('connector' = 'print', 'sink.parallelism' = '3');\n";
  try {
    plan(table("t", false, false, "") + sink + "INSERT INTO agg SELECT k, COUNT(*) FROM t GROUP BY k;", 2);
    FAIL() << "expected an error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("primary key is required but no primary key is found"), std::string::npos)
        << e.what();
  }
  // The same sink at the input's parallelism needs no key: Source(2) -HASH-> GroupAggregate+Sink(2).
  std::string same = "CREATE TABLE agg (k STRING, n BIGINT) WITH ('connector' = 'print', 'sink.parallelism' = '2');\n";
  auto v = plan(table("t", false, false, "") + same + "INSERT INTO agg SELECT k, COUNT(*) FROM t GROUP BY k;", 2);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[1].parallelism, 2);
}

}  // namespace
}  // namespace sluice::table
