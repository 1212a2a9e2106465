// Jobs against the network stack's limits: too little network memory fails the submission naming the
// options to raise.
#include <gtest/gtest.h>

#include <string>
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

}  // namespace
}  // namespace sluice::api
