// A window aggregation of user-defined aggregate functions recovers from an injected failure
// (sluice.test.fail-operator / fail-after-records, which waits for a completed checkpoint of its attempt):
// the job restarts once, restores the functions' accumulators from the checkpoint on the hashmap and on
// the RocksDB backend, and its exactly-once filesystem sink holds exactly the rows the test computes
// itself from the generated input.

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "cluster/job_listener.h"
#include "cluster/mini_cluster.h"
#include "common/config.h"
#include "connectors/builtin.h"
#include "runtime/serialization/type_traits.h"
#include "table/api/table_environment.h"
#include "table/catalog/table_factory.h"
#include "table/functions/aggregate_function.h"

namespace sluice::table {

struct WeightSum {
  int64_t sum = 0;     // SUM(v * w)
  int64_t weight = 0;  // SUM(w)
};
SLUICE_TYPE(WeightSum, sum, weight)

namespace {

namespace fs = std::filesystem;

constexpr int kRows = 3000;  // ten per second from 2024-01-01 00:00:00: minutes 0 to 4

// Row i of the input: key, value, weight, second.
std::tuple<std::string, int64_t, int64_t, int> rowOf(int i) {
  return {"k" + std::to_string(i * 7 % 5), i % 97 - 30, 1 + i % 4, i / 10};
}

// wavg1000(v, w) = SUM(v * w) * 1000 / SUM(w) (truncated), spread(v) = MAX(v) - MIN(v).
std::shared_ptr<const AggregateFunction> weightedAvg() {
  return makeAggregateFunction<WeightSum>(
      [](WeightSum& a, int64_t v, int64_t w) {
        a.sum += v * w;
        a.weight += w;
      },
      [](const WeightSum& a) -> std::optional<int64_t> {
        if (a.weight == 0) return std::nullopt;
        return a.sum * 1000 / a.weight;
      });
}
std::shared_ptr<const AggregateFunction> spread() {
  using MinMax = std::pair<int64_t, int64_t>;
  return makeAggregateFunction<MinMax>(
      [](MinMax& a, int64_t v) {
        a.first = std::min(a.first, v);
        a.second = std::max(a.second, v);
      },
      [](const MinMax& a) { return a.second - a.first; }, nullptr, nullptr,
      MinMax{std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()});
}

class Outcome : public cluster::JobListener {
 public:
  void onJobSubmitted(const graph::JobGraph&, const Configuration&, const std::shared_ptr<cluster::JobHandle>&) override {}
  void onJobExecuted(const std::string&, const cluster::JobExecutionResult* result, std::exception_ptr) override {
    if (result == nullptr) return;
    restarts = result->num_restarts;
    if (result->checkpoints) completed = result->checkpoints->number_of_completed_checkpoints;
  }
  int restarts = -1;
  int64_t completed = 0;
};

class UserAggregateRecoveryTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / fmt::format("sluice-udaf-recovery-{}-{}", GetParam(), ::getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    std::ofstream in(dir_ / "t.csv");
    for (int i = 0; i < kRows; ++i) {
      const auto [k, v, w, sec] = rowOf(i);
      in << fmt::format("{},{},{},2024-01-01 00:{:02}:{:02}.{:03}\n", k, v, w, sec / 60, sec % 60, i % 10 * 100);
    }
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  /// Runs the job with `extra` options; returns the sink's lines, sorted.
  std::vector<std::string> run(const std::map<std::string, std::string>& extra, Outcome& outcome) {
    Configuration config;
    config.set("parallelism.default", "1");
    config.set("execution.checkpointing.interval", "20ms");
    config.set("restart-strategy.type", "fixed-delay");
    config.set("restart-strategy.fixed-delay.attempts", "3");
    config.set("restart-strategy.fixed-delay.delay", "0ms");
    config.set("state.backend.type", GetParam());
    for (const auto& [key, value] : extra) config.set(key, value);
    auto registry = std::make_shared<FactoryRegistry>();
    connectors::registerBuiltinConnectors(*registry);
    TableEnvironment env(config, registry);
    auto listener = std::shared_ptr<Outcome>(&outcome, [](Outcome*) {});
    env.registerJobListener(listener);
    env.createTemporarySystemFunction("wavg1000", weightedAvg());
    env.createTemporarySystemFunction("spread", spread());
    const fs::path out = dir_ / ("out-" + std::to_string(++runs_));
    env.executeScript(fmt::format(
        "CREATE TABLE t (k STRING, v BIGINT, w BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)\n"
        "  WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv');\n"
        "CREATE TABLE out_t (k STRING, m BIGINT, a BIGINT, s BIGINT, n BIGINT)\n"
        "  WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv');\n"
        "INSERT INTO out_t SELECT k, EXTRACT(MINUTE FROM window_start), wavg1000(v, w), spread(v) FILTER (WHERE w > 1),"
        "  COUNT(*)\n"
        "  FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) GROUP BY k, window_start, window_end;\n",
        (dir_ / "t.csv").string(), out.string()));
    std::vector<std::string> lines;
    for (const auto& f : fs::directory_iterator(out)) {
      const std::string name = f.path().filename().string();
      if (name.rfind("part-", 0) != 0) continue;
      std::ifstream in(f.path());
      for (std::string line; std::getline(in, line);) lines.push_back(line);
    }
    std::sort(lines.begin(), lines.end());
    return lines;
  }

  fs::path dir_;
  int runs_ = 0;
};

// The rows the job must write, from the generated input directly.
std::vector<std::string> expectedRows() {
  struct Group {
    int64_t sum = 0, weight = 0, count = 0;
    int64_t min = std::numeric_limits<int64_t>::max(), max = std::numeric_limits<int64_t>::min();
  };
  std::map<std::pair<std::string, int>, Group> groups;
  for (int i = 0; i < kRows; ++i) {
    const auto [k, v, w, sec] = rowOf(i);
    Group& g = groups[{k, sec / 60}];
    g.sum += v * w;
    g.weight += w;
    ++g.count;
    if (w > 1) {
      g.min = std::min(g.min, v);
      g.max = std::max(g.max, v);
    }
  }
  std::vector<std::string> rows;
  for (const auto& [key, g] : groups)
    rows.push_back(fmt::format("{},{},{},{},{}", key.first, key.second, g.sum * 1000 / g.weight, g.max - g.min, g.count));
  std::sort(rows.begin(), rows.end());
  return rows;
}

TEST_P(UserAggregateRecoveryTest, AFailureRestoresTheAccumulatorsAndGivesTheSameRows) {
  const std::vector<std::string> expected = expectedRows();
  ASSERT_EQ(expected.size(), 25u);  // 5 keys x 5 minutes
  Outcome clean;
  EXPECT_EQ(run({}, clean), expected);
  EXPECT_EQ(clean.restarts, 0);
  // The window operator fails once it has received half of the rows and a checkpoint of the attempt
  // completed: the restore reads the accumulators of the open windows back.
  Outcome failed;
  EXPECT_EQ(run({{"sluice.test.fail-operator", "WindowAggregate"}, {"sluice.test.fail-after-records", "1500"}}, failed),
            expected);
  EXPECT_EQ(failed.restarts, 1);
  EXPECT_GE(failed.completed, 1);
}

INSTANTIATE_TEST_SUITE_P(Backends, UserAggregateRecoveryTest, ::testing::Values("hashmap", "rocksdb"));

}  // namespace
}  // namespace sluice::table
