// Sub-plan and source reuse (Flink's SubplanReuser / ScanReuser, `table.optimizer.reuse-sub-plan-enabled` and
// `table.optimizer.reuse-source-enabled`): the JobGraph JSON and the plan text of `explain` for statement sets
// whose INSERTs read one table.

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/config.h"
#include "connectors/builtin.h"
#include "table/api/table_environment.h"

namespace sluice::table {
namespace {

/// One JobVertex of the JSON plan.
struct PlanVertex {
  std::string id;
  std::string op;
  std::string description;
  int parallelism = 0;
  std::vector<std::string> operators;
  std::vector<std::string> input_ids;
  std::vector<std::string> ship;
};

class ReusePlanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("sluice_reuse_plan_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    std::ofstream(dir_ / "rows.csv") << "a,1,x\nb,2,y\n";
    std::ofstream(dir_ / "cdc.json") << R"({"before":null,"after":{"k":"a","v":1,"s":"x"},"op":"c"})"
                                     << "\n";
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  /// DDL of table t (k STRING, v INT, s STRING) over a csv file, plus blackhole sinks s1 (k, v) and s2 (s, v).
  std::string ddl(const std::string& extra = "") const {
    return "CREATE TABLE t (k STRING, v INT, s STRING) WITH ('connector' = 'filesystem', 'path' = '" +
           (dir_ / "rows.csv").string() + "', 'format' = 'csv'" + extra + ");\n" +
           "CREATE TABLE s1 (k STRING, v BIGINT) WITH ('connector' = 'blackhole');\n"
           "CREATE TABLE s2 (s STRING, v BIGINT) WITH ('connector' = 'blackhole');\n";
  }

  TableEnvironment env(const std::vector<std::pair<std::string, std::string>>& options) const {
    Configuration config;
    config.set("parallelism.default", "2");
    for (const auto& [k, v] : options) config.set(k, v);
    auto registry = std::make_shared<FactoryRegistry>();
    connectors::registerBuiltinConnectors(*registry);
    return TableEnvironment(config, registry);
  }

  /// The vertices of the single job planned from `script`.
  std::vector<PlanVertex> plan(const std::string& script,
                               const std::vector<std::pair<std::string, std::string>>& options = {}) const {
    nlohmann::json doc = nlohmann::json::parse(env(options).explainScript(script, true));
    std::vector<PlanVertex> out;
    for (const auto& n : doc["nodes"]) {
      PlanVertex v;
      v.id = n["id"].get<std::string>();
      v.op = n["operator"].get<std::string>();
      v.description = n["description"].get<std::string>();
      v.parallelism = n["parallelism"].get<int>();
      for (const auto& o : n["operators"]) v.operators.push_back(o.get<std::string>());
      if (n.contains("inputs"))
        for (const auto& in : n["inputs"]) {
          v.input_ids.push_back(in["id"].get<std::string>());
          v.ship.push_back(in["ship_strategy"].get<std::string>());
        }
      out.push_back(v);
    }
    return out;
  }

  std::string text(const std::string& script,
                   const std::vector<std::pair<std::string, std::string>>& options = {}) const {
    return env(options).explainScript(script, false);
  }

  std::filesystem::path dir_;
};

std::vector<const PlanVertex*> sources(const std::vector<PlanVertex>& v) {
  std::vector<const PlanVertex*> out;
  for (const auto& x : v)
    if (x.op.rfind("Source: t", 0) == 0) out.push_back(&x);
  return out;
}

/// The vertices that read vertex `id` (one entry per input edge).
std::vector<const PlanVertex*> consumers(const std::vector<PlanVertex>& v, const std::string& id) {
  std::vector<const PlanVertex*> out;
  for (const auto& x : v)
    for (const auto& in : x.input_ids)
      if (in == id) out.push_back(&x);
  return out;
}

size_t count(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (size_t p = haystack.find(needle); p != std::string::npos; p = haystack.find(needle, p + 1)) ++n;
  return n;
}

const std::pair<std::string, std::string> kNoChaining{"pipeline.operator-chaining.enabled", "false"};
const std::pair<std::string, std::string> kNoSourceReuse{"table.optimizer.reuse-source-enabled", "false"};
const std::pair<std::string, std::string> kNoSubplanReuse{"table.optimizer.reuse-sub-plan-enabled", "false"};

/// EXECUTE STATEMENT SET of INSERT INTO s1 `q1` and INSERT INTO s2 `q2`.
std::string statementSet(const std::string& q1, const std::string& q2) {
  return "EXECUTE STATEMENT SET BEGIN\nINSERT INTO s1 " + q1 + ";\nINSERT INTO s2 " + q2 + ";\nEND;";
}

/// The vertices whose chain is exactly `op`.
std::vector<const PlanVertex*> named(const std::vector<PlanVertex>& v, const std::string& op) {
  std::vector<const PlanVertex*> out;
  for (const auto& x : v)
    if (x.op == op) out.push_back(&x);
  return out;
}

// Two filters over t: s1 reads k, v and s2 reads s, v.
const std::string kTwoFilters = statementSet("SELECT k, v FROM t WHERE v > 1", "SELECT s, v FROM t WHERE v < 5");

// Unchained: one source vertex, read by two Calc vertices (one FORWARD edge each).
TEST_F(ReusePlanTest, OneSourceWithTwoConsumers) {
  auto v = plan(ddl() + kTwoFilters, {kNoChaining});
  auto src = sources(v);
  ASSERT_EQ(src.size(), 1u);
  auto readers = consumers(v, src[0]->id);
  ASSERT_EQ(readers.size(), 2u);
  for (const auto* r : readers) EXPECT_EQ(r->op, "Calc");
  EXPECT_NE(readers[0], readers[1]);
  // Both branches together read every column: the shared scan is not projected.
  EXPECT_NE(src[0]->description.find("fields=[k, v, s]"), std::string::npos) << src[0]->description;
}

// Chained (the default): the source and both Calcs (each with its sink) are one vertex.
TEST_F(ReusePlanTest, SourceChainsToBothBranches) {
  auto v = plan(ddl() + kTwoFilters);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].operators, (std::vector<std::string>{"Source: t", "Calc", "Sink: s1", "Calc", "Sink: s2"}));
}

// Either option off: the old plan, one source per INSERT.
TEST_F(ReusePlanTest, OptionsOffGiveOneSourcePerInsert) {
  for (const auto& off : {kNoSourceReuse, kNoSubplanReuse}) {
    auto v = plan(ddl() + kTwoFilters, {kNoChaining, off});
    auto src = sources(v);
    ASSERT_EQ(src.size(), 2u) << off.first;
    EXPECT_EQ(consumers(v, src[0]->id).size(), 1u);
    EXPECT_EQ(consumers(v, src[1]->id).size(), 1u);
  }
}

// Scans that differ only in their columns become one scan of the union (Flink's ScanReuser): s1 reads k,
// s2 reads s; each alone would read one column, shared they read k and s (table order), not v.
TEST_F(ReusePlanTest, ProjectionsAreMergedIntoOneScan) {
  const std::string sql =
      ddl() + statementSet("SELECT k, CAST(1 AS BIGINT) FROM t", "SELECT s, CAST(2 AS BIGINT) FROM t");
  auto v = plan(sql, {kNoChaining});
  auto src = sources(v);
  ASSERT_EQ(src.size(), 1u);
  EXPECT_NE(src[0]->description.find("fields=[k, s])"), std::string::npos) << src[0]->description;
  EXPECT_EQ(consumers(v, src[0]->id).size(), 2u);

  auto off = plan(sql, {kNoChaining, kNoSourceReuse});
  auto two = sources(off);
  ASSERT_EQ(two.size(), 2u);
  EXPECT_NE(two[0]->description.find("fields=[k])"), std::string::npos) << two[0]->description;
  EXPECT_NE(two[1]->description.find("fields=[s])"), std::string::npos) << two[1]->description;
}

// The plan text prints the shared scan once, then a reference to it (Flink's reuse_id / Reused).
TEST_F(ReusePlanTest, PlanTextShowsReusedScan) {
  std::string t = text(ddl() + kTwoFilters);
  std::string plan_text = t.substr(0, t.find("== Stream Graph =="));
  EXPECT_EQ(count(plan_text, "TableSourceScan("), 1u) << plan_text;
  EXPECT_NE(plan_text.find("fields=[k, v, s])(reuse_id=[1])"), std::string::npos) << plan_text;
  EXPECT_EQ(count(plan_text, "+- Reused(reference_id=[1])"), 1u) << plan_text;

  std::string off = text(ddl() + kTwoFilters, {kNoSourceReuse});
  off = off.substr(0, off.find("== Stream Graph =="));
  EXPECT_EQ(count(off, "TableSourceScan("), 2u) << off;
  EXPECT_EQ(off.find("Reused"), std::string::npos) << off;
}

// A view that renames every column reads the same scan under other names: still one source.
TEST_F(ReusePlanTest, RenamedScanIsReused) {
  auto v = plan(ddl() + "CREATE TEMPORARY VIEW renamed (a, b, c) AS SELECT * FROM t;\n" +
                    statementSet("SELECT k, v FROM t", "SELECT c, b FROM renamed"),
                {kNoChaining});
  auto src = sources(v);
  ASSERT_EQ(src.size(), 1u);
  EXPECT_EQ(consumers(v, src[0]->id).size(), 2u);
}

// Inside one query too: a UNION ALL of a query with itself computes it once (the Calc and its scan); the
// first input is drawn with ":- " (a later sibling follows), the reference with "+- ".
TEST_F(ReusePlanTest, SelfUnionReadsTheTableOnce) {
  const std::string sql = ddl() + "INSERT INTO s1 SELECT k, v FROM t UNION ALL SELECT k, v FROM t;";
  std::string t = text(sql);
  t = t.substr(0, t.find("== Stream Graph =="));
  EXPECT_NE(t.find("      :- Calc(select=[k, v])(reuse_id=[1])\n"
                   "      :  +- TableSourceScan(table=[[default_catalog, default_database, t]], fields=[k, v])\n"
                   "      +- Reused(reference_id=[1])\n"),
            std::string::npos)
      << t;
  EXPECT_EQ(sources(plan(sql)).size(), 1u);
}

// Identical sub-plans above the scan are reused too: one GROUP BY feeding both sinks.
TEST_F(ReusePlanTest, IdenticalAggregateIsComputedOnce) {
  const std::string sql =
      ddl() + statementSet("SELECT k, COUNT(*) FROM t GROUP BY k", "SELECT k, COUNT(*) FROM t GROUP BY k");
  auto v = plan(sql, {kNoChaining});
  auto aggs = named(v, "GroupAggregate");
  ASSERT_EQ(aggs.size(), 1u);
  auto readers = consumers(v, aggs[0]->id);
  ASSERT_EQ(readers.size(), 2u);
  EXPECT_EQ(readers[0]->op.rfind("Sink: ", 0), 0u);
  EXPECT_EQ(readers[1]->op.rfind("Sink: ", 0), 0u);

  auto off = plan(sql, {kNoChaining, kNoSourceReuse});
  EXPECT_EQ(named(off, "GroupAggregate").size(), 2u);
}

// Different aggregates over one table share the scan (and the projection before the exchange), not the
// aggregation.
TEST_F(ReusePlanTest, DifferentAggregatesShareOnlyTheScan) {
  auto v = plan(ddl() + statementSet("SELECT k, COUNT(*) FROM t GROUP BY k",
                                     "SELECT k, SUM(CAST(v AS BIGINT)) FROM t GROUP BY k"),
                {kNoChaining});
  EXPECT_EQ(sources(v).size(), 1u);
  EXPECT_EQ(named(v, "GroupAggregate").size(), 2u);
}

// FLIP-367: a shared source at its own scan.parallelism (3, default 2) keeps it; each branch leaves the
// source block through its own REBALANCE.
TEST_F(ReusePlanTest, SharedSourceKeepsItsScanParallelism) {
  auto v = plan(ddl(", 'scan.parallelism' = '3'") + kTwoFilters);
  auto src = sources(v);
  ASSERT_EQ(src.size(), 1u);
  EXPECT_EQ(src[0]->parallelism, 3);
  auto readers = consumers(v, src[0]->id);
  ASSERT_EQ(readers.size(), 2u);
  for (const auto* r : readers) {
    EXPECT_EQ(r->parallelism, 2);
    EXPECT_EQ(r->ship, std::vector<std::string>{"REBALANCE"});
  }
  // The filters run in the source block, at its parallelism.
  EXPECT_EQ(count(src[0]->op, "Calc"), 2u) << src[0]->op;
}

// A changelog source is shared as a whole (it is never projected).
TEST_F(ReusePlanTest, ChangelogSourceIsShared) {
  auto v = plan("CREATE TABLE t (k STRING, v INT, s STRING) WITH ('connector' = 'filesystem', 'path' = '" +
                    (dir_ / "cdc.json").string() + "', 'format' = 'debezium-json');\n" +
                    "CREATE TABLE s1 (k STRING, v BIGINT) WITH ('connector' = 'blackhole');\n"
                    "CREATE TABLE s2 (s STRING, v BIGINT) WITH ('connector' = 'blackhole');\n" +
                    kTwoFilters,
                {kNoChaining});
  auto src = sources(v);
  ASSERT_EQ(src.size(), 1u);
  EXPECT_EQ(consumers(v, src[0]->id).size(), 2u);
}

}  // namespace
}  // namespace sluice::table
