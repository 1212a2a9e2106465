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

}  // namespace
}  // namespace sluice::table
