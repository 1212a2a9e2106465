// FLIP-309 on the CheckpointCoordinator: execution.checkpointing.interval-during-backlog, driven by a
// hand-moved clock (Hooks::clock + awaitClockTick), so every trigger time below is exact. Expected trigger
// times are worked out by hand from the rules: regular interval R from the last trigger; while any source
// is in backlog the backlog interval B from the last trigger (0: nothing starts); when the last source
// leaves backlog, a checkpoint at once, then R again.

#include <gtest/gtest.h>

#include "graph/job_graph.h"
#include "manual_clock_cluster.h"
#include "runtime/checkpoint/checkpoint_coordinator.h"
#include "runtime/operators/source_coordinator_context.h"

namespace sluice::runtime::checkpoint {
namespace {

using namespace std::chrono_literals;
using testing::acknowledgeAll;
using testing::Cluster;
using testing::job;
using testing::tickThrough;

CheckpointCoordinatorConfiguration configWith(int64_t interval, std::optional<int64_t> during_backlog) {
  CheckpointCoordinatorConfiguration config;
  config.interval_ms = interval;
  config.interval_during_backlog_ms = during_backlog;
  return config;
}

TEST(CheckpointBacklogTest, WithZeroNoCheckpointStartsOrCompletesDuringBacklogAndOneStartsAtOnceAfter) {
  const graph::JobGraph g = job();
  Cluster cluster;
  CheckpointCoordinator c(g, g.job_id, configWith(100, 0), cluster.hooks());
  c.start();
  // The first periodic trigger is armed for t=100; backlog begins before it (FLINK-39108: it must not fire).
  tickThrough(cluster, c, {50});
  c.setIsProcessingBacklog("src", true);
  EXPECT_TRUE(c.isProcessingBacklog());
  tickThrough(cluster, c, {100, 101, 250, 1000, 5000});
  // Neither a checkpoint, nor a savepoint, nor a finished task's request starts one.
  EXPECT_EQ(c.triggerCheckpoint(), std::nullopt);
  EXPECT_EQ(c.triggerCheckpoint(CheckpointKind::kSavepoint, "/sp"), std::nullopt);
  c.requestCheckpoint();
  tickThrough(cluster, c, {5001, 9999});
  EXPECT_TRUE(cluster.startedSoFar().empty());
  EXPECT_EQ(c.stats().number_of_completed_checkpoints, 0);
  EXPECT_EQ(c.stats().number_of_in_progress_checkpoints, 0);

  // Backlog ends at t=10000: a checkpoint at once, then every 100 ms.
  cluster.now_ms = 10000;
  c.setIsProcessingBacklog("src", false);
  c.awaitClockTick();
  ASSERT_EQ(cluster.startedSoFar(), (std::vector<std::pair<int64_t, int64_t>>{{1, 10000}}));
  acknowledgeAll(c, 1);
  tickThrough(cluster, c, {10099});
  EXPECT_EQ(cluster.startedSoFar().size(), 1u);
  tickThrough(cluster, c, {10100});
  EXPECT_EQ(cluster.startedSoFar().back(), (std::pair<int64_t, int64_t>{2, 10100}));
  c.stop();
  EXPECT_EQ(cluster.completed, std::vector<int64_t>{1});
}

TEST(CheckpointBacklogTest, WithAnIntervalCheckpointsFollowItDuringBacklogAndTheRegularOneAfter) {
  const graph::JobGraph g = job();
  Cluster cluster;
  CheckpointCoordinator c(g, g.job_id, configWith(100, 300), cluster.hooks());
  c.start();
  tickThrough(cluster, c, {100});  // regular: t=100
  acknowledgeAll(c, 1);
  cluster.now_ms = 150;
  c.setIsProcessingBacklog("src", true);  // B=300 from the last trigger (100): 400, 700, ...
  tickThrough(cluster, c, {200, 399});
  EXPECT_EQ(cluster.startedSoFar().size(), 1u);
  tickThrough(cluster, c, {400});
  acknowledgeAll(c, 2);
  tickThrough(cluster, c, {500, 699, 700});
  acknowledgeAll(c, 3);
  cluster.now_ms = 750;
  c.setIsProcessingBacklog("src", false);  // at once (750), then 850, 950
  c.awaitClockTick();
  acknowledgeAll(c, 4);
  tickThrough(cluster, c, {849, 850});
  acknowledgeAll(c, 5);
  tickThrough(cluster, c, {950});
  c.stop();
  EXPECT_EQ(cluster.startedSoFar(),
            (std::vector<std::pair<int64_t, int64_t>>{{1, 100}, {2, 400}, {3, 700}, {4, 750}, {5, 850}, {6, 950}}));
}

TEST(CheckpointBacklogTest, BacklogLastsWhileAnySourceReportsIt) {
  const graph::JobGraph g = job();
  Cluster cluster;
  CheckpointCoordinator c(g, g.job_id, configWith(100, 0), cluster.hooks());
  c.start();
  c.setIsProcessingBacklog("a", true);
  c.setIsProcessingBacklog("b", true);
  c.setIsProcessingBacklog("a", false);
  c.setIsProcessingBacklog("a", false);  // repeated: the last report counts
  tickThrough(cluster, c, {100, 300});
  EXPECT_TRUE(c.isProcessingBacklog());
  EXPECT_TRUE(cluster.startedSoFar().empty());
  cluster.now_ms = 310;
  c.setIsProcessingBacklog("b", false);
  c.awaitClockTick();
  EXPECT_FALSE(c.isProcessingBacklog());
  EXPECT_EQ(cluster.startedSoFar(), (std::vector<std::pair<int64_t, int64_t>>{{1, 310}}));
  c.stop();
}

TEST(CheckpointBacklogTest, WithoutTheOptionBacklogChangesNothing) {
  const graph::JobGraph g = job();
  Cluster cluster;
  CheckpointCoordinator c(g, g.job_id, configWith(100, std::nullopt), cluster.hooks());
  c.start();
  c.setIsProcessingBacklog("src", true);
  tickThrough(cluster, c, {100});
  acknowledgeAll(c, 1);
  cluster.now_ms = 150;
  c.setIsProcessingBacklog("src", false);  // no checkpoint at once: the interval never changed
  tickThrough(cluster, c, {199, 200});
  c.stop();
  EXPECT_EQ(cluster.startedSoFar(), (std::vector<std::pair<int64_t, int64_t>>{{1, 100}, {2, 200}}));
}

TEST(CheckpointBacklogTest, AFinishedSourceNoLongerHoldsCheckpointsBack) {
  const graph::JobGraph g = job();
  Cluster cluster;
  CheckpointCoordinator c(g, g.job_id, configWith(100, 0), cluster.hooks());
  c.start();
  c.setIsProcessingBacklog("src", true);
  c.reportFinalState(0, 0, {});
  tickThrough(cluster, c, {100, 200});
  EXPECT_TRUE(cluster.startedSoFar().empty());  // one subtask still runs
  cluster.now_ms = 250;
  c.reportFinalState(0, 1, {});
  c.awaitClockTick();
  EXPECT_FALSE(c.isProcessingBacklog());
  EXPECT_EQ(c.stats().number_of_in_progress_checkpoints, 1);  // the sink's final checkpoint can start
  c.acknowledgeCheckpoint(1, 0, 1, {}, {});
  EXPECT_EQ(c.awaitCheckpoint(1, 10s), "");
  c.stop();
}

// A bounded source that ends in backlog waits for its final checkpoint (FLIP-147): the end of input of
// its subtasks (before any final state) must let that checkpoint start, or the job never ends.
TEST(CheckpointBacklogTest, ASourceWhoseSubtasksAllEndedTheirInputNoLongerHoldsCheckpointsBack) {
  const graph::JobGraph g = job();
  Cluster cluster;
  CheckpointCoordinator c(g, g.job_id, configWith(100, 0), cluster.hooks());
  c.start();
  c.setIsProcessingBacklog("src", true);
  c.setIsProcessingBacklog("src#1", true);  // subtask 1's watermark lag (FLIP-328)
  c.reportEndOfInput(0, 0);
  c.requestCheckpoint();
  tickThrough(cluster, c, {100, 200});
  EXPECT_TRUE(cluster.startedSoFar().empty());  // subtask 1 still reads its backlog
  EXPECT_TRUE(c.isProcessingBacklog());
  cluster.now_ms = 250;
  c.reportEndOfInput(0, 1);
  c.requestCheckpoint();
  c.awaitClockTick();
  EXPECT_FALSE(c.isProcessingBacklog());
  ASSERT_EQ(cluster.startedSoFar(), (std::vector<std::pair<int64_t, int64_t>>{{1, 250}}));
  acknowledgeAll(c, 1);
  c.stop();
}

// The enumerator side: the context reports a change once, to the coordinator and to every reader, and
// a reader that registers later gets the current status (SourceCoordinatorTest#testSetIsProcessingBacklog).
TEST(CheckpointBacklogTest, TheEnumeratorContextReportsToTheCoordinatorAndToEveryReader) {
  const graph::JobGraph g = job();
  Cluster cluster;
  CheckpointCoordinator c(g, g.job_id, configWith(100, 0), cluster.hooks());
  c.start();
  SourceCoordinatorContext context("src", 3, &c);
  EXPECT_EQ(context.currentParallelism(), 3);
  EXPECT_EQ(context.isProcessingBacklog(), std::nullopt);
  std::vector<std::vector<bool>> events(3);
  auto reader = [&](int subtask) { return [&events, subtask](bool b) { events[static_cast<size_t>(subtask)].push_back(b); }; };
  context.registerReader(0, reader(0));  // nothing yet: no status reported
  context.setIsProcessingBacklog(true);
  context.setIsProcessingBacklog(true);  // no change: nothing sent
  EXPECT_TRUE(c.isProcessingBacklog());
  context.registerReader(1, reader(1));
  context.registerReader(2, reader(2));
  EXPECT_EQ(events, (std::vector<std::vector<bool>>{{true}, {true}, {true}}));
  context.unregisterReader(2);
  context.setIsProcessingBacklog(false);
  EXPECT_FALSE(c.isProcessingBacklog());
  EXPECT_EQ(events, (std::vector<std::vector<bool>>{{true, false}, {true, false}, {true}}));
  c.stop();
}

}  // namespace
}  // namespace sluice::runtime::checkpoint
