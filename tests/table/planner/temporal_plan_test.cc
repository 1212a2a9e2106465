// Lookup and temporal joins in the plan: Flink's LookupJoin text (table, joinType, lookup keys as table
// field = input field, the dimension calc as where=, the rest as joinCondition=, select=), the key
// expression computed by a Calc below, the lookup chained after the probe side without an exchange; the
// TemporalJoin with its temporal condition over two HASH exchanges.

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "common/config.h"
#include "connectors/builtin.h"
#include "table/api/table_environment.h"

namespace sluice::table {
namespace {

class TemporalPlanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("sluice_temporal_plan_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    std::ofstream(dir_ / "orders.csv") << "1,a\n";
    std::ofstream(dir_ / "dim.csv") << "a,apple,1\n";
    std::ofstream(dir_ / "ev.csv") << "1,EUR,2024-01-01 10:00:00\n";
    std::ofstream(dir_ / "rates.csv") << "EUR,114,2024-01-01 10:00:00\n";
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  std::string ddl() const {
    return "CREATE TABLE orders (id INT, k STRING, pt AS PROCTIME()) WITH ('connector' = 'filesystem', 'path' = '" +
           (dir_ / "orders.csv").string() +
           "', 'format' = 'csv');\n"
           "CREATE TABLE dim (k STRING, name STRING, w INT) WITH ('connector' = 'filesystem', 'path' = '" +
           (dir_ / "dim.csv").string() +
           "', 'format' = 'csv');\n"
           "CREATE TABLE ev (id INT, cur STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH ('connector' = "
           "'filesystem', 'path' = '" +
           (dir_ / "ev.csv").string() +
           "', 'format' = 'csv');\n"
           "CREATE TABLE rates (cur STRING, rate INT, rts TIMESTAMP(3), PRIMARY KEY (cur) NOT ENFORCED, WATERMARK FOR "
           "rts AS rts) WITH ('connector' = 'filesystem', 'path' = '" +
           (dir_ / "rates.csv").string() + "', 'format' = 'csv');\n";
  }

  std::string explain(const std::string& query, bool json) const {
    Configuration config;
    config.set("parallelism.default", "2");
    if (json) config.set("pipeline.operator-chaining.enabled", "false");
    auto registry = std::make_shared<FactoryRegistry>();
    connectors::registerBuiltinConnectors(*registry);
    std::string t = TableEnvironment(config, registry).explainScript(ddl() + query, json);
    return json ? t : t.substr(0, t.find("== Stream Graph =="));
  }

  std::filesystem::path dir_;
};

TEST_F(TemporalPlanTest, LookupJoinOverTheProbeWithoutExchange) {
  std::string t = explain("SELECT o.id, d.name FROM orders AS o JOIN dim FOR SYSTEM_TIME AS OF o.pt AS d ON o.k = d.k;", false);
  EXPECT_NE(t.find("+- LookupJoin(table=[default_catalog.default_database.dim], joinType=[InnerJoin], lookup=[k=k], "
                   "select=[id, k, pt, k0, name, w])\n"
                   "      +- Calc(select=[id, k, PROCTIME("),
            std::string::npos)
      << t;
  EXPECT_EQ(t.find("Exchange"), std::string::npos) << t;
}

TEST_F(TemporalPlanTest, KeyExpressionWhereAndJoinCondition) {
  std::string t = explain(
      "SELECT o.id, d.name FROM orders AS o LEFT JOIN dim FOR SYSTEM_TIME AS OF o.pt AS d "
      "ON MOD(o.id, 10) = d.w AND d.name <> 'x' AND o.k > d.k;",
      false);
  EXPECT_NE(t.find("LookupJoin(table=[default_catalog.default_database.dim], joinType=[LeftOuterJoin], lookup=[w=$f3], "
                   "where=[<>(name, 'x')], joinCondition=[>(k, k0)], select=[id, k, pt, $f3, k0, name, w])"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("AS $f3])"), std::string::npos) << t;
}

TEST_F(TemporalPlanTest, LookupJoinReadsItsInputForward) {
  nlohmann::json doc = nlohmann::json::parse(
      explain("SELECT o.id, d.name FROM orders AS o JOIN dim FOR SYSTEM_TIME AS OF o.pt AS d ON o.k = d.k;", true));
  int lookups = 0;
  for (const auto& n : doc["nodes"]) {
    if (n["operator"].get<std::string>().rfind("LookupJoin", 0) != 0) continue;
    ++lookups;
    ASSERT_EQ(n["inputs"].size(), 1u) << n.dump();
    EXPECT_EQ(n["inputs"][0]["ship_strategy"].get<std::string>(), "FORWARD") << n.dump();
  }
  EXPECT_EQ(lookups, 1) << doc.dump();
}

TEST_F(TemporalPlanTest, TemporalJoinOverTwoHashExchanges) {
  std::string t = explain("SELECT * FROM ev LEFT JOIN rates FOR SYSTEM_TIME AS OF ev.ts AS r ON ev.cur = r.cur AND r.rate > 1;",
                          false);
  EXPECT_NE(t.find("TemporalJoin(joinType=[LeftOuterJoin], where=[AND(=(cur, cur0), >(rate, 1), "
                   "__TEMPORAL_JOIN_CONDITION(ts, rts, __TEMPORAL_JOIN_CONDITION_PRIMARY_KEY(cur0), "
                   "__TEMPORAL_JOIN_LEFT_KEY(cur), __TEMPORAL_JOIN_RIGHT_KEY(cur0)))], "
                   "select=[id, cur, ts, cur0, rate, rts])\n"
                   "   :- Exchange(distribution=[hash[cur]])\n"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("   +- Exchange(distribution=[hash[cur]])\n      +- WatermarkAssigner(rowtime=[rts]"), std::string::npos)
      << t;
  // Insert-only, as the left side is.
  EXPECT_EQ(t.find("[changelog:"), std::string::npos) << t;
}

}  // namespace
}  // namespace sluice::table
