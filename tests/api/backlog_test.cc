// FLIP-309 through the DataStream API: execution.checkpointing.interval-during-backlog checked at
// submission.
#include <gtest/gtest.h>

#include <string>

#include "api/datastream.h"
#include "test_util.h"

namespace sluice::api {
namespace {

std::string submissionError(const std::string& interval, const std::string& during_backlog) {
  Configuration config;
  config.set("execution.checkpointing.interval", interval);
  config.set("execution.checkpointing.interval-during-backlog", during_backlog);
  StreamExecutionEnvironment env(std::move(config));
  env.fromSequence(1, 10).map([](int64_t v) { return v; }).collect();
  try {
    env.execute();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(ran)";
}

TEST(BacklogCheckpointIntervalTest, ABacklogIntervalBelowTheIntervalIsAConfigErrorNamingTheKey) {
  const std::string error = submissionError("200ms", "100ms");
  EXPECT_NE(error.find("'execution.checkpointing.interval-during-backlog'"), std::string::npos) << error;
  EXPECT_NE(error.find("100 ms"), std::string::npos) << error;
  EXPECT_NE(error.find("200 ms"), std::string::npos) << error;
  // 0, equal and larger are fine.
  EXPECT_EQ(submissionError("200ms", "0"), "(ran)");
  EXPECT_EQ(submissionError("200ms", "200ms"), "(ran)");
  EXPECT_EQ(submissionError("200ms", "1s"), "(ran)");
}

}  // namespace
}  // namespace sluice::api
