// Window aggregations in the plan: the WindowAggregate node as Flink's explain prints it (the window
// spec's summary string, SessionWindowSpec.toSummaryString for SESSION).

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "common/config.h"
#include "connectors/builtin.h"
#include "table/api/table_environment.h"

namespace sluice::table {
namespace {

class WindowPlanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("sluice_window_plan_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    std::ofstream(dir_ / "t.csv") << "a,1,2015-01-01 00:00:00\n";
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  std::string text(const std::string& query) const {
    Configuration config;
    config.set("parallelism.default", "2");
    auto registry = std::make_shared<FactoryRegistry>();
    connectors::registerBuiltinConnectors(*registry);
    const std::string ddl = "CREATE TABLE t (k STRING, v INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' "
                            "SECOND) WITH ('connector' = 'filesystem', 'path' = '" +
                            (dir_ / "t.csv").string() + "', 'format' = 'csv');\n";
    std::string t = TableEnvironment(config, registry).explainScript(ddl + query, false);
    return t.substr(0, t.find("== Stream Graph =="));
  }

  std::filesystem::path dir_;
};

TEST_F(WindowPlanTest, SessionWithPartitionKeys) {
  const std::string t = text(
      "SELECT k, window_start, COUNT(*) FROM TABLE(SESSION(TABLE t PARTITION BY k, DESCRIPTOR(ts), INTERVAL '10' "
      "SECOND)) GROUP BY k, window_start, window_end;");
  EXPECT_NE(t.find("WindowAggregate(groupBy=[k], window=[SESSION(time_col=[ts], gap=[10 s], partition keys=[k])], "
                   "select=[k, COUNT(*) AS EXPR$0, window_start, window_end])\n"),
            std::string::npos)
      << t;
}

TEST_F(WindowPlanTest, SessionPartitionKeysPrintInTheirOwnOrder) {
  const std::string t = text(
      "SELECT k, v, COUNT(*) FROM TABLE(SESSION(TABLE t PARTITION BY (v, k), DESCRIPTOR(ts), INTERVAL '90' "
      "SECOND)) GROUP BY window_start, window_end, k, v;");
  EXPECT_NE(t.find("WindowAggregate(groupBy=[k, v], window=[SESSION(time_col=[ts], gap=[90 s], partition "
                   "keys=[v, k])], select=[k, v, COUNT(*) AS EXPR$0, window_start, window_end])\n"),
            std::string::npos)
      << t;
}

TEST_F(WindowPlanTest, SessionWithoutPartitionKeys) {
  const std::string t = text(
      "SELECT window_start, SUM(v) FROM TABLE(SESSION(TABLE t, DESCRIPTOR(ts), INTERVAL '5' MINUTE)) "
      "GROUP BY window_start, window_end;");
  EXPECT_NE(t.find("WindowAggregate(groupBy=[], window=[SESSION(time_col=[ts], gap=[5 min])], "
                   "select=[SUM($f0) AS EXPR$0, window_start, window_end])\n"),
            std::string::npos)
      << t;
}

TEST_F(WindowPlanTest, LegacyGroupWindowsAreGroupWindowAggregates) {
  std::string t = text(
      "SELECT k, TUMBLE_START(ts, INTERVAL '1' HOUR), COUNT(*) FROM t GROUP BY k, TUMBLE(ts, INTERVAL '1' HOUR);");
  EXPECT_NE(t.find("GroupWindowAggregate(groupBy=[k], window=[TumblingGroupWindow('w$, ts, 3600000)], "
                   "properties=[w$start, w$end, w$rowtime, w$proctime], select=[k, COUNT(*) AS EXPR$0, "
                   "start('w$) AS w$start, end('w$) AS w$end, rowtime('w$) AS w$rowtime, proctime('w$) AS "
                   "w$proctime])\n"),
            std::string::npos)
      << t;
  t = text("SELECT COUNT(*) FROM t GROUP BY HOP(ts, INTERVAL '15' MINUTE, INTERVAL '1' HOUR);");
  EXPECT_NE(t.find("window=[SlidingGroupWindow('w$, ts, 3600000, 900000)]"), std::string::npos) << t;
  t = text("SELECT k, COUNT(*) FROM t GROUP BY SESSION(ts, INTERVAL '10' SECOND), k;");
  EXPECT_NE(t.find("GroupWindowAggregate(groupBy=[k], window=[SessionGroupWindow('w$, ts, 10000)]"), std::string::npos)
      << t;
}

TEST_F(WindowPlanTest, WindowTableFunctionAlone) {
  const std::string t = text(
      "SELECT k, window_start, window_time FROM TABLE(HOP(TABLE t, DESCRIPTOR(ts), INTERVAL '1' MINUTE, INTERVAL '5' "
      "MINUTE, INTERVAL '10' SECOND));");
  EXPECT_NE(t.find("WindowTableFunction(window=[HOP(time_col=[ts], size=[5 min], slide=[1 min], offset=[10 s])])\n"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("Calc(select=[k, window_start, window_time])"), std::string::npos) << t;
}

TEST_F(WindowPlanTest, WindowJoin) {
  const std::string t = text(
      "SELECT L.k, L.v, R.v FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) L LEFT JOIN "
      "TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) R ON L.window_start = R.window_start AND "
      "L.window_end = R.window_end AND L.k = R.k AND L.v < R.v;");
  EXPECT_NE(t.find("WindowJoin(leftWindow=[TUMBLE(win_start=[window_start], win_end=[window_end], size=[1 min])], "
                   "rightWindow=[TUMBLE(win_start=[window_start], win_end=[window_end], size=[1 min])], "
                   "joinType=[LeftOuterJoin], where=[AND(=(k, k0), <(v, v0))], select=[k, v, ts, window_start, "
                   "window_end, window_time, k0, v0, ts0, window_start0, window_end0, window_time0])\n"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("Exchange(distribution=[hash[k]])"), std::string::npos) << t;
  EXPECT_EQ(t.find("changelog"), std::string::npos) << t;  // insert-only
}

TEST_F(WindowPlanTest, WindowTopNOverTheWindowTableFunction) {
  // StreamPhysicalWindowRankRule: PARTITION BY window_start, window_end (and k) over a window TVF.
  const std::string t = text(
      "SELECT k, v, rn FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, k, window_end ORDER BY v DESC) "
      "AS rn FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' MINUTE))) WHERE rn <= 3;");
  EXPECT_NE(t.find("WindowRank(window=[TUMBLE(win_start=[window_start], win_end=[window_end], size=[1 min])], "
                   "rankType=[ROW_NUMBER], rankRange=[rankStart=1, rankEnd=3], partitionBy=[k], orderBy=[v DESC], "
                   "select=[k, v, ts, window_start, window_end, window_time, w0$o0])\n"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("WindowTableFunction(window=[TUMBLE(time_col=[ts], size=[1 min])])"), std::string::npos) << t;
  EXPECT_EQ(t.find("Rank(strategy"), std::string::npos) << t;
}

TEST_F(WindowPlanTest, WindowTopNOverAWindowAggregation) {
  const std::string t = text(
      "SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY s, e ORDER BY c DESC) AS rn FROM (SELECT "
      "window_start AS s, window_end AS e, k, COUNT(*) AS c FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' "
      "MINUTE)) GROUP BY window_start, window_end, k)) WHERE rn <= 2;");
  EXPECT_NE(t.find("WindowRank(window=[TUMBLE(win_start=[s], win_end=[e], size=[1 min])], rankType=[ROW_NUMBER], "
                   "rankRange=[rankStart=1, rankEnd=2], partitionBy=[], orderBy=[c DESC], select=[s, e, k, c, rn])"),
            std::string::npos)
      << t;
}

TEST_F(WindowPlanTest, WindowDeduplicate) {
  const std::string t = text(
      "SELECT k, v FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end, k ORDER BY ts DESC) AS "
      "rn FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' MINUTE))) WHERE rn = 1;");
  EXPECT_NE(t.find("WindowDeduplicate(window=[TUMBLE(win_start=[window_start], win_end=[window_end], size=[1 min])], "
                   "keep=[LastRow], partitionKeys=[k], orderKey=[ts], order=[ROWTIME])\n"),
            std::string::npos)
      << t;
  EXPECT_EQ(t.find("Deduplicate(keep"), std::string::npos) << t;
}

TEST_F(WindowPlanTest, TopNWithoutBothWindowColumnsIsARegularRank) {
  // StreamPhysicalRankRule matches when the PARTITION BY lacks window_start or window_end.
  const std::string t = text(
      "SELECT k, v FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start ORDER BY v DESC) AS rn FROM "
      "TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' MINUTE))) WHERE rn <= 2;");
  EXPECT_NE(t.find("Rank(strategy=[AppendFastStrategy], rankType=[ROW_NUMBER], rankRange=[rankStart=1, rankEnd=2], "
                   "partitionBy=[window_start], orderBy=[v DESC]"),
            std::string::npos)
      << t;
  EXPECT_EQ(t.find("WindowRank"), std::string::npos) << t;
}

TEST_F(WindowPlanTest, WindowJoinOfWindowAggregations) {
  // Nexmark q8's form: the window properties of both window aggregations make it a WindowJoin, not a Join.
  const std::string agg = "(SELECT k, window_start AS s, window_end AS e FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), "
                          "INTERVAL '10' SECOND)) GROUP BY k, window_start, window_end)";
  const std::string t = text("SELECT L.k, L.s FROM " + agg + " L FULL JOIN " + agg +
                             " R ON L.k = R.k AND L.s = R.s AND L.e = R.e;");
  EXPECT_NE(t.find("WindowJoin(leftWindow=[TUMBLE(win_start=[s], win_end=[e], size=[10 s])], "
                   "rightWindow=[TUMBLE(win_start=[s], win_end=[e], size=[10 s])], joinType=[FullOuterJoin], "
                   "where=[=(k, k0)], select=[k, s, e, k0, s0, e0])\n"),
            std::string::npos)
      << t;
  EXPECT_EQ(t.find("Join(joinType"), std::string::npos) << t;
}

TEST_F(WindowPlanTest, WindowSemiJoinFromACorrelatedIn) {
  const std::string tvf = "(SELECT * FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' MINUTE)))";
  const std::string t = text("SELECT L.k FROM " + tvf + " L WHERE L.k IN (SELECT k FROM " + tvf +
                             " R WHERE L.window_start = R.window_start AND L.window_end = R.window_end);");
  EXPECT_NE(t.find("WindowJoin(leftWindow=[TUMBLE(win_start=[window_start], win_end=[window_end], size=[1 min])], "
                   "rightWindow=[TUMBLE(win_start=[window_start], win_end=[window_end], size=[1 min])], "
                   "joinType=[LeftSemiJoin], where=[=(k, k0)], select=[k, v, ts, window_start, window_end, "
                   "window_time])"),
            std::string::npos)
      << t;
}

}  // namespace
}  // namespace sluice::table
