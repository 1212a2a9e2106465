// Jobs against the network stack's limits: too little network memory fails the submission naming the
// options to raise; BATCH jobs exchange through spill files that are gone when the job ends.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "api/datastream.h"
#include "test_util.h"

namespace sluice::api {
namespace {

TEST(NetworkMemoryTest, TooLittleNetworkMemoryFailsTheSubmissionNamingTheOptions) {
  Configuration config;
  config.set("parallelism.default", "4");
  // 3 segments of 32 kb; each of the 4 source subtasks needs a partition pool of 4 subpartitions + 1.
  config.set("taskmanager.memory.network.min", "96kb");
  config.set("taskmanager.memory.network.max", "96kb");
  StreamExecutionEnvironment env(std::move(config));
  env.fromSequence(1, 100).rebalance().map([](int64_t v) { return v; }).collect();
  try {
    env.execute();
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    const std::string msg = e.what();
    // 4 subtasks x (4 subpartitions + 1) = 20 buffers; 20 x 32768 = 655360 bytes.
    EXPECT_NE(msg.find("needs at least 20 buffers of 32768 bytes"), std::string::npos) << msg;
    EXPECT_NE(msg.find("only 3 (98304 bytes)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("'taskmanager.memory.network.min'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("at least 655360 bytes"), std::string::npos) << msg;
  }
}

TEST(NetworkMemoryTest, JustEnoughNetworkMemoryRuns) {
  Configuration config;
  config.set("parallelism.default", "4");
  // Exactly the 20 buffers the pools need at minimum (each subpartition then has one buffer).
  config.set("taskmanager.memory.network.min", "640kb");
  config.set("taskmanager.memory.network.max", "640kb");
  StreamExecutionEnvironment env(std::move(config));
  auto out = env.fromSequence(1, 2000).rebalance().map([](int64_t v) { return v * 2; }).executeAndCollect();
  std::vector<int64_t> expected;
  for (int64_t v = 1; v <= 2000; ++v) expected.push_back(v * 2);
  EXPECT_EQ(testing::sorted(out), expected);
}

// A fresh directory for io.tmp.dirs, removed by the destructor.
struct TempDir {
  std::string path;
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "sluice-spill-test-XXXXXX").string();
    path = ::mkdtemp(pattern.data());
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  // Spill files below the directory right now.
  int spillFiles() const {
    int n = 0;
    for (const auto& e : std::filesystem::recursive_directory_iterator(path)) {
      n += e.path().extension() == ".spill" ? 1 : 0;
    }
    return n;
  }
  bool empty() const { return std::filesystem::is_empty(path); }
};

using KeyCount = std::pair<std::string, int64_t>;

// Sums of v over 1..n per key "k<v mod 7>", by a plain loop (the oracle).
std::map<std::string, int64_t> expectedSums(int64_t n) {
  std::map<std::string, int64_t> m;
  for (int64_t v = 1; v <= n; ++v) m["k" + std::to_string(v % 7)] += v;
  return m;
}

// fromSequence(1, n) -> (key, v) -> keyBy(key) -> sum -> [observe spill files] -> collect. The keyBy edge is
// blocking in BATCH mode.
std::map<std::string, int64_t> runKeyedSum(RuntimeExecutionMode mode, const TempDir& tmp, int64_t n,
                                           std::atomic<int>* files_seen, bool fail = false) {
  Configuration config;
  config.set("parallelism.default", "3");
  config.set("io.tmp.dirs", tmp.path);
  config.set("taskmanager.memory.segment-size", "1kb");  // many buffers per spill file
  StreamExecutionEnvironment env(std::move(config));
  env.setRuntimeMode(mode);
  const TempDir* dir = &tmp;
  auto out = env.fromSequence(1, n)
                 .map([](int64_t v) {
                   return KeyCount{"k" + std::to_string(v % 7), v};
                 })
                 .keyBy([](const KeyCount& c) { return c.first; })
                 .sum(&KeyCount::second)
                 .map([dir, files_seen, fail](const KeyCount& c) {
                   // Runs in the consumer of the blocking exchange, while it reads the spill files.
                   if (files_seen != nullptr && files_seen->load() == 0) files_seen->store(dir->spillFiles() + 1);
                   if (fail) throw std::runtime_error("boom in the consumer");
                   return c;
                 })
                 .executeAndCollect();
  std::map<std::string, int64_t> result;
  // BATCH emits one final sum per key; STREAMING every running sum, of which the largest is the final one.
  for (const auto& [key, sum] : out) result[key] = std::max(result[key], sum);
  return result;
}

TEST(BlockingResultTest, BatchJobSpillsToFilesAndEqualsTheStreamingJob) {
  const int64_t n = 30000;
  TempDir tmp;
  std::atomic<int> files_seen{0};
  const std::map<std::string, int64_t> batch = runKeyedSum(RuntimeExecutionMode::BATCH, tmp, n, &files_seen);
  EXPECT_EQ(batch, expectedSums(n));
  // While the consumers ran, the 3 producers had written 3 x 3 subpartition files.
  EXPECT_EQ(files_seen.load() - 1, 9);
  EXPECT_TRUE(tmp.empty()) << "spill files left after the job";

  TempDir tmp2;
  std::atomic<int> none{0};
  const std::map<std::string, int64_t> streaming = runKeyedSum(RuntimeExecutionMode::STREAMING, tmp2, n, &none);
  EXPECT_EQ(streaming, expectedSums(n));
  EXPECT_EQ(none.load() - 1, 0);  // pipelined: no spill files
  EXPECT_TRUE(tmp2.empty());
}

TEST(BlockingResultTest, AFailingBatchJobLeavesNoSpillFiles) {
  TempDir tmp;
  std::atomic<int> files_seen{0};
  EXPECT_THROW(runKeyedSum(RuntimeExecutionMode::BATCH, tmp, 5000, &files_seen, /*fail=*/true), std::runtime_error);
  EXPECT_EQ(files_seen.load() - 1, 9);  // the consumer failed while the files were there
  EXPECT_TRUE(tmp.empty()) << "spill files left after a failed job";
}

TEST(BlockingResultTest, AnUnusableTmpDirIsAConfigErrorNamingTheOption) {
  Configuration config;
  config.set("io.tmp.dirs", "/proc/no-such-dir/spill");
  StreamExecutionEnvironment env(std::move(config));
  env.setRuntimeMode(RuntimeExecutionMode::BATCH);
  env.fromSequence(1, 10).keyBy([](int64_t v) { return v % 2; }).sum().collect();
  try {
    env.execute();
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("io.tmp.dirs"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace sluice::api
