// SQL in execution.runtime-mode BATCH on the cluster: a job of three pipelined regions (scan, GROUP BY, a
// second GROUP BY over its counts, split by blocking HASH exchanges) at parallelism 2 runs its regions one
// after another on 2 slots (FLINK-14060: a slot sharing group per region), asserted from the scheduler's
// figures in the job's result, and writes only final rows.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>

#include "cluster/mini_cluster.h"
#include "common/config.h"
#include "connectors/builtin.h"
#include "table/api/table_environment.h"
#include "table/catalog/table_factory.h"

namespace sluice::table {
namespace {

namespace fs = std::filesystem;

class BatchModeTest : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("sluice-batch-mode-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    // k = i mod 5 for i = 1..30 except that k 0 also gets i = 31..35: counts 1..4 -> 6 rows, 0 -> 11 rows.
    std::ofstream in(dir_ / "t.csv");
    for (int i = 1; i <= 35; ++i) in << "k" << (i <= 30 ? i % 5 : 0) << "," << i << "\n";
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::vector<std::string> sinkLines() const {
    std::vector<std::string> lines;
    for (const auto& f : fs::recursive_directory_iterator(dir_ / "out")) {
      if (!f.is_regular_file() || f.path().filename().string().rfind('.', 0) == 0) continue;
      std::ifstream in(f.path());
      for (std::string l; std::getline(in, l);) lines.push_back(l);
    }
    std::sort(lines.begin(), lines.end());
    return lines;
  }

  fs::path dir_;
};

TEST_F(BatchModeTest, ThreeRegionsAtParallelismTwoRunOnTwoSlots) {
  Configuration config;
  config.set("parallelism.default", "2");
  config.set("taskmanager.numberOfTaskSlots", "2");
  auto registry = std::make_shared<FactoryRegistry>();
  connectors::registerBuiltinConnectors(*registry);
  TableEnvironment env(config, registry);
  env.executeScript("SET 'execution.runtime-mode' = 'batch';\n"
                    "CREATE TABLE t (k STRING, v INT) WITH ('connector' = 'filesystem', 'path' = '" +
                    (dir_ / "t.csv").string() +
                    "', 'format' = 'csv');\n"
                    "CREATE TABLE s (n BIGINT, keys BIGINT) WITH ('connector' = 'filesystem', 'path' = '" +
                    (dir_ / "out").string() +
                    "', 'format' = 'csv');\n"
                    "INSERT INTO s SELECT n, COUNT(*) FROM (SELECT k, COUNT(*) AS n FROM t GROUP BY k) GROUP BY n;");
  ASSERT_EQ(env.jobs().size(), 1u);
  const cluster::JobExecutionResult& r = *env.jobs()[0].execution;
  EXPECT_EQ(r.vertices.size(), 3u);
  EXPECT_EQ(r.deployed_regions, (std::vector<int>{0, 1, 2}));  // one after another, behind blocking inputs
  EXPECT_EQ(r.slots_required, 2);  // the largest region: parallelism 2
  EXPECT_EQ(r.slots_configured, 2);
  EXPECT_EQ(r.slots_peak, 2);
  // Final rows only: four keys with 6 rows, one with 11; a streaming run would also write the counts
  // that were later retracted.
  EXPECT_EQ(sinkLines(), (std::vector<std::string>{"11,1", "6,4"}));
  EXPECT_EQ(env.jobs()[0].rows_written, 2);
}

}  // namespace
}  // namespace sluice::table
