// Regular joins in the plan: the Join node as Flink's explain prints it (joinType, where, select, input
// specs from the inputs' unique keys) over two HASH exchanges on the join keys, WHERE equalities of
// `FROM a, b` turned into join keys, and the JobGraph's two-input vertex with two HASH edges.

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "common/config.h"
#include "common/error.h"
#include "connectors/builtin.h"
#include "table/api/table_environment.h"

namespace sluice::table {
namespace {

class JoinPlanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("sluice_join_plan_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    std::ofstream(dir_ / "a.csv") << "1,2\n";
    std::ofstream(dir_ / "b.csv") << "1,3\n";
    std::ofstream(dir_ / "ta.csv") << "1,2024-01-01 00:00:00\n";
    std::ofstream(dir_ / "tb.csv") << "1,2024-01-01 00:00:00\n";
    std::ofstream(dir_ / "cdc.json") << R"({"before":null,"after":{"id":1,"w":5},"op":"c"})" << "\n";
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  std::string ddl() const {
    auto csv = [&](const char* name, const char* cols) {
      return std::string("CREATE TABLE ") + name + " (" + cols + ") WITH ('connector' = 'filesystem', 'path' = '" +
             (dir_ / (std::string(name) + ".csv")).string() + "', 'format' = 'csv');\n";
    };
    return csv("a", "x INT, v INT") + csv("b", "y BIGINT, w INT") +
           csv("ta", "x INT, t TIMESTAMP(3), pt AS PROCTIME(), WATERMARK FOR t AS t - INTERVAL '1' SECOND") +
           csv("tb", "y INT, u TIMESTAMP(3), pu AS PROCTIME(), WATERMARK FOR u AS u") +
           "CREATE TABLE c (id INT, w INT, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'filesystem', "
           "'path' = '" +
           (dir_ / "cdc.json").string() + "', 'format' = 'debezium-json');\n";
  }

  std::string text(const std::string& query) const {
    Configuration config;
    config.set("parallelism.default", "2");
    auto registry = std::make_shared<FactoryRegistry>();
    connectors::registerBuiltinConnectors(*registry);
    std::string t = TableEnvironment(config, registry).explainScript(ddl() + query, false);
    return t.substr(0, t.find("== Stream Graph =="));
  }

  nlohmann::json graph(const std::string& query) const {
    Configuration config;
    config.set("parallelism.default", "2");
    config.set("pipeline.operator-chaining.enabled", "false");
    auto registry = std::make_shared<FactoryRegistry>();
    connectors::registerBuiltinConnectors(*registry);
    return nlohmann::json::parse(TableEnvironment(config, registry).explainScript(ddl() + query, true));
  }

  std::filesystem::path dir_;
};

TEST_F(JoinPlanTest, InnerJoinWithTwoHashExchanges) {
  // x INT = y BIGINT: both are integers, hashed alike, so no cast is needed.
  std::string t = text("SELECT x, w FROM a JOIN b ON a.x = b.y AND a.v > b.w;");
  EXPECT_NE(t.find("+- Join(joinType=[InnerJoin], where=[AND(=(x, y), >(v, w))], select=[x, v, y, w], "
                   "leftInputSpec=[NoUniqueKey], rightInputSpec=[NoUniqueKey])\n"
                   "      :- Exchange(distribution=[hash[x]])\n"
                   "      :  +- TableSourceScan(table=[[default_catalog, default_database, a]], fields=[x, v])\n"
                   "      +- Exchange(distribution=[hash[y]])\n"
                   "         +- TableSourceScan(table=[[default_catalog, default_database, b]], fields=[y, w])\n"),
            std::string::npos)
      << t;
}

TEST_F(JoinPlanTest, CommaJoinTakesTheWhereEqualities) {
  std::string t = text("SELECT x FROM a, b WHERE a.x = b.y AND a.v > 1;");
  // The equality becomes the key; the one-sided conjunct filters a below the join.
  EXPECT_NE(t.find("+- Join(joinType=[InnerJoin], where=[=(x, y)], select=[x, v, y, w], "
                   "leftInputSpec=[NoUniqueKey], rightInputSpec=[NoUniqueKey])\n"
                   "      :- Exchange(distribution=[hash[x]])\n"
                   "      :  +- Calc(select=[x, v], where=[>(v, 1)])\n"),
            std::string::npos)
      << t;
  // Not below an outer join: there the WHERE filters the padded result.
  t = text("SELECT x FROM a LEFT JOIN b ON a.x = b.y WHERE b.w > 1;");
  EXPECT_NE(t.find("Calc(select=[x], where=[>(w, 1)])  [changelog: +I,-U,+U,-D]\n   +- Join(joinType=[LeftOuterJoin]"), std::string::npos) << t;
}

TEST_F(JoinPlanTest, InputSpecsFollowTheUniqueKeys) {
  // c's primary key id is the join key; a GROUP BY's key w is not.
  std::string t = text(
      "SELECT * FROM c LEFT JOIN (SELECT w, COUNT(*) AS n FROM b GROUP BY w) g ON c.w = g.n;\n");
  EXPECT_NE(t.find("leftInputSpec=[HasUniqueKey], rightInputSpec=[HasUniqueKey])  [changelog: +I,-U,+U,-D]"),
            std::string::npos)
      << t;
  t = text("SELECT * FROM c FULL JOIN (SELECT w, COUNT(*) AS n FROM b GROUP BY w) g ON c.id = g.w;\n");
  EXPECT_NE(t.find("Join(joinType=[FullOuterJoin], where=[=(id, w0)], select=[id, w, w0, n], "
                   "leftInputSpec=[JoinKeyContainsUniqueKey], rightInputSpec=[JoinKeyContainsUniqueKey])"),
            std::string::npos)
      << t;
}

TEST_F(JoinPlanTest, InSubqueryIsASemiJoin) {
  std::string t = text("SELECT v FROM a WHERE v > 0 AND x IN (SELECT y FROM b);");
  EXPECT_NE(t.find("Join(joinType=[LeftSemiJoin], where=[=(x, y)], select=[x, v], leftInputSpec=[NoUniqueKey], "
                   "rightInputSpec=[NoUniqueKey])\n"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("Calc(select=[x, v], where=[>(v, 0)])"), std::string::npos) << t;
}

TEST_F(JoinPlanTest, JobGraphHasATwoInputVertexWithTwoHashEdges) {
  nlohmann::json doc = graph("SELECT x, w FROM a JOIN b ON a.x = b.y;");
  int joins = 0;
  for (const auto& n : doc["nodes"]) {
    if (n["operator"].get<std::string>().rfind("Join", 0) != 0) continue;
    ++joins;
    ASSERT_EQ(n["inputs"].size(), 2u) << n.dump();
    for (const auto& in : n["inputs"]) EXPECT_EQ(in["ship_strategy"].get<std::string>(), "HASH") << n.dump();
  }
  EXPECT_EQ(joins, 1) << doc.dump();
}

TEST_F(JoinPlanTest, KeysOfOtherTypesAreCastBelowTheJoin) {
  // INT = DOUBLE: both sides as DOUBLE, computed by a Calc in front of the exchange.
  std::string t = text("SELECT x FROM a JOIN b ON a.x = CAST(b.w AS DOUBLE);");
  EXPECT_NE(t.find("Exchange(distribution=[hash[$f2]])"), std::string::npos) << t;
}

TEST_F(JoinPlanTest, TimeBoundsMakeAnIntervalJoin) {
  // ta.t - tb.u in [-5000, 2000] ms: the BETWEEN's halves as Flink prints them, the key equality first.
  std::string t = text(
      "SELECT ta.x, tb.u FROM ta JOIN tb ON ta.x = tb.y AND ta.t BETWEEN tb.u - INTERVAL '5' SECOND AND tb.u + "
      "INTERVAL '2' SECOND;");
  EXPECT_NE(t.find("IntervalJoin(joinType=[InnerJoin], windowBounds=[isRowTime=true, leftLowerBound=-5000, "
                   "leftUpperBound=2000, leftTimeIndex=1, rightTimeIndex=1], where=[AND(=(x, y), >=(t, -(u, "
                   "5000:INTERVAL DAY TO SECOND)), <=(t, +(u, 2000:INTERVAL DAY TO SECOND)))], select=[x, t, pt, y, "
                   "u, pu])\n"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find(":- Exchange(distribution=[hash[x]])"), std::string::npos) << t;
  // Operands the other way round, strict comparisons (1 ms tighter), a residual condition after the bounds.
  t = text("SELECT ta.x FROM ta LEFT JOIN tb ON ta.x = tb.y AND tb.u > ta.t - INTERVAL '1' MINUTE AND tb.u < ta.t "
           "AND tb.y > 3;");
  EXPECT_NE(t.find("IntervalJoin(joinType=[LeftOuterJoin], windowBounds=[isRowTime=true, leftLowerBound=1, "
                   "leftUpperBound=59999, leftTimeIndex=1, rightTimeIndex=1]"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find(">(y, 3))]"), std::string::npos) << t;
  // One equality of the times: bounds [0, 0]; no key: one subtask.
  t = text("SELECT ta.x FROM ta JOIN tb ON ta.t = tb.u;");
  EXPECT_NE(t.find("IntervalJoin(joinType=[InnerJoin], windowBounds=[isRowTime=true, leftLowerBound=0, "
                   "leftUpperBound=0, leftTimeIndex=1, rightTimeIndex=1], where=[=(t, u)]"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("Exchange(distribution=[single])"), std::string::npos) << t;
  // Processing time.
  t = text("SELECT ta.x FROM ta JOIN tb ON ta.x = tb.y AND ta.pt BETWEEN tb.pu - INTERVAL '1' SECOND AND tb.pu;");
  EXPECT_NE(t.find("windowBounds=[isRowTime=false, leftLowerBound=-1000, leftUpperBound=0, leftTimeIndex=2, "
                   "rightTimeIndex=2]"),
            std::string::npos)
      << t;
  // A single range bound is a regular join.
  t = text("SELECT ta.x FROM ta JOIN tb ON ta.x = tb.y AND ta.t > tb.u;");
  EXPECT_NE(t.find("Join(joinType=[InnerJoin], where=[AND(=(x, y), >(t, u))]"), std::string::npos) << t;
}

TEST_F(JoinPlanTest, IntervalJoinWithoutKeysRunsInOneSubtask) {
  nlohmann::json doc = graph("SELECT ta.x FROM ta JOIN tb ON ta.t BETWEEN tb.u AND tb.u + INTERVAL '1' SECOND;");
  int joins = 0;
  for (const auto& n : doc["nodes"]) {
    if (n["operator"].get<std::string>().rfind("IntervalJoin", 0) != 0) continue;
    ++joins;
    EXPECT_EQ(n["parallelism"].get<int>(), 1) << n.dump();
    for (const auto& in : n["inputs"]) EXPECT_EQ(in["ship_strategy"].get<std::string>(), "GLOBAL") << n.dump();
  }
  EXPECT_EQ(joins, 1) << doc.dump();
}

}  // namespace
}  // namespace sluice::table
