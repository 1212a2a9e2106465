// sink.parallelism with an updating input (Flink's CommonExecSink key-by): GroupAggregate(2) -HASH[pk]->
// print sink(3). Every change of a key is printed by one sink subtask, in the order it was made.

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/config.h"
#include "connectors/builtin.h"
#include "connectors/print_connector.h"
#include "table/api/table_environment.h"

namespace sluice::table {
namespace {

constexpr int kKeys = 20;
constexpr int kRounds = 10;

TEST(SinkParallelismTest, UpdatesAreKeyedToOneSinkSubtaskInOrder) {
  const auto dir = std::filesystem::temp_directory_path() / ("sluice_sink_p_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  {
    // Round r lists every key once: k0..k19, ten times.
    std::ofstream out(dir / "clicks.csv");
    for (int r = 0; r < kRounds; ++r)
      for (int k = 0; k < kKeys; ++k) out << "k" << k << "\n";
  }
  Configuration config;
  config.set("parallelism.default", "2");
  config.set("taskmanager.memory.segment-size", "256b");
  config.set("taskmanager.network.memory.max-buffers-per-channel", "1");
  config.set("sluice.batch.size", "3");
  auto registry = std::make_shared<FactoryRegistry>();
  connectors::registerBuiltinConnectors(*registry);
  TableEnvironment env(config, registry);
  std::ostringstream printed;
  connectors::setPrintStream(&printed);
  env.executeScript("CREATE TABLE clicks (u STRING) WITH ('connector' = 'filesystem', 'path' = '" +
                    (dir / "clicks.csv").string() +
                    "', 'format' = 'csv');\n"
                    "CREATE TABLE counts (u STRING, n BIGINT, PRIMARY KEY (u) NOT ENFORCED) WITH ("
                    "'connector' = 'print', 'sink.parallelism' = '3');\n"
                    "INSERT INTO counts SELECT u, COUNT(*) FROM clicks GROUP BY u;");
  connectors::setPrintStream(nullptr);
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);

  // Lines are "N> +I[k3, 1]": split into subtask prefix and change, per key.
  std::map<std::string, std::vector<std::string>> changes;
  std::map<std::string, std::set<std::string>> subtasks;
  std::istringstream in(printed.str());
  std::string line;
  while (std::getline(in, line)) {
    const size_t gt = line.find("> ");
    ASSERT_NE(gt, std::string::npos) << line;
    const std::string change = line.substr(gt + 2);
    const std::string key = change.substr(3, change.find(',') - 3);
    changes[key].push_back(change);
    subtasks[key].insert(line.substr(0, gt));
  }
  ASSERT_EQ(changes.size(), static_cast<size_t>(kKeys));
  for (int k = 0; k < kKeys; ++k) {
    const std::string key = "k" + std::to_string(k);
    // COUNT per key: +I[k, 1], then -U[k, c-1] +U[k, c] for c = 2..10.
    std::vector<std::string> expected{"+I[" + key + ", 1]"};
    for (int c = 2; c <= kRounds; ++c) {
      expected.push_back("-U[" + key + ", " + std::to_string(c - 1) + "]");
      expected.push_back("+U[" + key + ", " + std::to_string(c) + "]");
    }
    EXPECT_EQ(changes[key], expected) << key;
    EXPECT_EQ(subtasks[key].size(), 1u) << key << " was printed by several sink subtasks";
  }
}

}  // namespace
}  // namespace sluice::table
