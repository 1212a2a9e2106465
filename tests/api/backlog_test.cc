// FLIP-309 through the DataStream API: execution.checkpointing.interval-during-backlog checked at
// submission; the enumerator's backlog status reaches every reader, also one that opens later.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "api/datastream.h"
#include "api/hybrid_source.h"
#include "api/sources.h"
#include "harness.h"
#include "tagged_numbers.h"
#include "test_util.h"

namespace sluice::api {
namespace {

using runtime::InputStatus;
using test_sources::TaggedNumbers;
using test_sources::tagged;

TEST(BacklogStatusTest, EveryReaderHearsTheStatusAlsoOneThatOpensAfterItWasReported) {
  Configuration conf;
  conf.set("sluice.batch.size", "10");
  // Subtask 0 reads 1-20; subtask 1 reads 21-40, then 41-60, whose hand-out ends the backlog.
  auto source = std::make_shared<const TaggedNumbers>(
      std::vector<std::pair<int, RangeSplit>>{
          {0, {1, 20, std::nullopt}}, {1, {21, 40, std::nullopt}}, {1, {41, 60, std::nullopt}}},
      41);
  auto slot = std::make_shared<runtime::ExecutionScopeSlot>();
  std::vector<std::unique_ptr<runtime::SourceReaderOperator<int64_t, RangeSplit>>> ops;
  std::vector<std::unique_ptr<testing::CollectingOutput>> outs;
  auto open = [&](int subtask) {
    outs.push_back(std::make_unique<testing::CollectingOutput>());
    ops.push_back(std::make_unique<runtime::SourceReaderOperator<int64_t, RangeSplit>>(
        source, runtime::WatermarkStrategy<int64_t>::noWatermarks(), 1, /*batch_mode=*/true, slot));
    runtime::OperatorContext ctx;
    ctx.subtask_index = subtask;
    ctx.parallelism = 2;
    ctx.config = &conf;
    ctx.uid = "tagged";
    ops.back()->open(ctx, outs.back().get());
  };
  auto runToEnd = [&](int subtask) {
    while (ops[static_cast<size_t>(subtask)]->emitNext() != InputStatus::kEndOfInput) {
    }
  };
  open(0);  // starts the enumerator: backlog
  runToEnd(0);
  EXPECT_TRUE(ops[0]->isProcessingBacklog());
  open(1);  // registers after the report: hears "backlog" at once
  EXPECT_FALSE(ops[1]->isProcessingBacklog());  // picked up on the task thread, at its first emitNext
  runToEnd(1);  // 21-40 in backlog; 41-60 is handed out live and read so
  EXPECT_FALSE(ops[1]->isProcessingBacklog());
  ops[0]->emitNext();  // the reader still registered hears the change too
  EXPECT_FALSE(ops[0]->isProcessingBacklog());
  for (auto& op : ops) op->close();

  EXPECT_EQ(outs[0]->values<int64_t>(), tagged(1, 20, true));
  std::vector<int64_t> expected1 = tagged(21, 40, true);
  for (int64_t v : tagged(41, 60, false)) expected1.push_back(v);
  EXPECT_EQ(outs[1]->values<int64_t>(), expected1);
}

TEST(BacklogStatusTest, AJobsReadersTagWhatTheyReadDuringBacklog) {
  // Through a cluster with checkpoints (none during backlog): the records of 1-30 and 31-60 are backlog,
  // those of 61-90 live (the status changes when that split is handed out). At -p 1, as at -p > 1 the
  // status is the source's, not a split's: a reader may hear "live" while it still reads a backlog split.
  Configuration config;
  config.set("parallelism.default", "1");
  config.set("execution.checkpointing.interval", "100ms");
  config.set("execution.checkpointing.interval-during-backlog", "0");
  StreamExecutionEnvironment env(std::move(config));
  auto values = env.fromSource(std::make_shared<TaggedNumbers>(std::vector<std::pair<int, RangeSplit>>{{0, {1, 30, std::nullopt}},
                                                                                         {0, {31, 60, std::nullopt}},
                                                                                         {0, {61, 90, std::nullopt}}},
                                                               61),
                               WatermarkStrategy<int64_t>::noWatermarks(), "tagged")
                    .collect();
  env.execute();
  std::vector<int64_t> got = values->values();
  std::sort(got.begin(), got.end());
  std::vector<int64_t> expected = tagged(1, 60, true);
  for (int64_t v : tagged(61, 90, false)) expected.push_back(v);
  EXPECT_EQ(got, expected);
}

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

TEST(BacklogStatusTest, AFailureDuringBacklogRestartsFromTheLastCheckpointBeforeIt) {
  // 1-30 live, then 31-60 backlog (no checkpoints: interval-during-backlog 0), then 61-90 live. The source
  // finishes 1-30 only after a checkpoint completed; it fails once that checkpoint completed and it has
  // emitted 5 more records, inside 31-60. The restart must resume from that checkpoint: 31-60 again from 31
  // (a checkpoint taken inside the backlog would resume past 31).
  Configuration config;
  config.set("parallelism.default", "1");
  config.set("execution.checkpointing.interval", "20ms");
  config.set("execution.checkpointing.interval-during-backlog", "0");
  config.set("restart-strategy.fixed-delay.delay", "0ms");
  config.set("sluice.test.fail-operator", "tagged");
  config.set("sluice.test.fail-after-records", "5");
  StreamExecutionEnvironment env(std::move(config));
  auto source = std::make_shared<TaggedNumbers>(
      std::vector<std::pair<int, RangeSplit>>{
          {0, {1, 30, std::nullopt}}, {0, {31, 60, std::nullopt}}, {0, {61, 90, std::nullopt}}},
      31, 61);
  auto values = env.fromSource(source, WatermarkStrategy<int64_t>::noWatermarks(), "tagged").collect();
  env.execute();
  // First attempt: 1-30, then 31-60 (fails inside); second: 31-60 from its start, then 61-90.
  EXPECT_EQ(source->splitStarts(), (std::vector<int64_t>{1, 31, 31, 61}));
  // Everything the second attempt emitted (the tail of the collected records) is 31-90, tagged by hand.
  std::vector<int64_t> expected = tagged(31, 60, true);
  for (int64_t v : tagged(61, 90, false)) expected.push_back(v);
  const std::vector<int64_t> got = values->values();
  ASSERT_GE(got.size(), expected.size());
  EXPECT_EQ(std::vector<int64_t>(got.end() - static_cast<std::ptrdiff_t>(expected.size()), got.end()), expected);
  EXPECT_EQ(std::vector<int64_t>(got.begin(), got.begin() + 30), tagged(1, 30, false));
}

// Before the fix this job never ended: the enumerator reports backlog to the end, so its source subtasks
// waited for a final checkpoint (FLIP-147) that no checkpoint during backlog (interval 0) let start. A
// source whose subtasks all reached their end of input processes no backlog.
TEST(BacklogStatusTest, ASourceWhoseEnumeratorStaysInBacklogToTheEndFinishesWhileCheckpointing) {
  Configuration config;
  config.set("parallelism.default", "2");
  config.set("execution.checkpointing.interval", "20ms");
  config.set("execution.checkpointing.interval-during-backlog", "0");
  StreamExecutionEnvironment env(std::move(config));
  // live_from 0: no split starts there, the backlog never ends.
  auto source = std::make_shared<TaggedNumbers>(
      std::vector<std::pair<int, RangeSplit>>{{0, {1, 20, std::nullopt}}, {1, {21, 40, std::nullopt}}}, 0);
  auto values = env.fromSource(source, WatermarkStrategy<int64_t>::noWatermarks(), "tagged").collect();
  env.execute();
  std::vector<int64_t> got = values->values();
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, tagged(1, 40, true));
}

// A history of three elements, then two lines of a file.
std::shared_ptr<const HybridSource<std::string, RangeSplit>> historyThenFile(const std::string& path) {
  {
    std::ofstream out(path);
    out << "l1\nl2\n";
  }
  return std::make_shared<const HybridSource<std::string, RangeSplit>>(
      std::vector<std::shared_ptr<const runtime::Source<std::string, RangeSplit>>>{
          std::make_shared<const CollectionSource<std::string>>(std::vector<std::string>{"h1", "h2", "h3"}),
          std::make_shared<const TextLineSource>(path)});
}

std::string tempFile(const std::string& name) {
  return (std::filesystem::temp_directory_path() / fmt::format("{}-{}.txt", name, ::getpid())).string();
}

TEST(HybridSourceTest, ReadsTheSourcesInOrderAndIsBacklogUntilTheLast) {
  const std::string path = tempFile("hybrid-order");
  auto source = historyThenFile(path);
  Configuration conf;
  auto slot = std::make_shared<runtime::ExecutionScopeSlot>();
  runtime::SourceReaderOperator<std::string, HybridSourceSplit<RangeSplit>> op(
      source, runtime::WatermarkStrategy<std::string>::noWatermarks(), 1, /*batch_mode=*/true, slot);
  testing::CollectingOutput out;
  runtime::OperatorContext ctx;
  ctx.config = &conf;
  ctx.uid = "hybrid";
  op.open(ctx, &out);
  op.emitNext();  // the history: backlog
  EXPECT_TRUE(op.isProcessingBacklog());
  EXPECT_EQ(out.values<std::string>(), (std::vector<std::string>{"h1", "h2", "h3"}));
  while (op.emitNext() != InputStatus::kEndOfInput) {
  }
  EXPECT_FALSE(op.isProcessingBacklog());  // the file (the last source) is not backlog
  op.close();
  EXPECT_EQ(out.values<std::string>(), (std::vector<std::string>{"h1", "h2", "h3", "l1", "l2"}));
  std::filesystem::remove(path);
}

TEST(HybridSourceTest, AJobWithNoCheckpointsDuringBacklogReadsEverythingOnce) {
  const std::string path = tempFile("hybrid-job");
  Configuration config;
  config.set("parallelism.default", "2");
  config.set("execution.checkpointing.interval", "20ms");
  config.set("execution.checkpointing.interval-during-backlog", "0");
  StreamExecutionEnvironment env(std::move(config));
  auto values = env.fromSource(std::const_pointer_cast<HybridSource<std::string, RangeSplit>>(historyThenFile(path)),
                               WatermarkStrategy<std::string>::noWatermarks(), "hybrid")
                    .collect();
  env.execute();
  std::vector<std::string> got = values->values();
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<std::string>{"h1", "h2", "h3", "l1", "l2"}));
  std::filesystem::remove(path);
}

TEST(HybridSourceTest, OnlyTheLastSourceMayBeUnbounded) {
  struct Unbounded final : runtime::Source<std::string, RangeSplit> {
    bool isBounded() const override { return false; }
    std::unique_ptr<runtime::SplitEnumerator<RangeSplit>> createEnumerator(int) const override { return nullptr; }
    std::unique_ptr<runtime::SourceReader<std::string, RangeSplit>> createReader(
        const runtime::SourceReaderContext&) const override {
      return nullptr;
    }
  };
  using Sources = std::vector<std::shared_ptr<const runtime::Source<std::string, RangeSplit>>>;
  auto history = std::make_shared<const CollectionSource<std::string>>(std::vector<std::string>{"h"});
  using Hybrid = HybridSource<std::string, RangeSplit>;
  EXPECT_THROW(Hybrid(Sources{std::make_shared<Unbounded>(), history}), UserError);
  EXPECT_FALSE(Hybrid(Sources{history, std::make_shared<Unbounded>()}).isBounded());
  EXPECT_THROW(Hybrid(Sources{}), UserError);
}

}  // namespace
}  // namespace sluice::api
