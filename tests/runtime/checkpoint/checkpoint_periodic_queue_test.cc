// A periodic trigger that comes due while max-concurrent-checkpoints are pending is queued, as Flink's
// CheckpointRequestDecider queues it: it starts the moment a pending checkpoint completes, is declined or
// expires (min-pause permitting), never a whole interval later, and the schedule goes on from that start.
// Driven by a hand-moved clock; each expected start time is worked out by hand from those rules.

#include <gtest/gtest.h>

#include "common/error.h"
#include "graph/job_graph.h"
#include "manual_clock_cluster.h"
#include "runtime/checkpoint/checkpoint_coordinator.h"

namespace sluice::runtime::checkpoint {
namespace {

using namespace std::chrono_literals;
using testing::acknowledgeAll;
using testing::Cluster;
using testing::job;
using testing::tickThrough;
using Starts = std::vector<std::pair<int64_t, int64_t>>;

// Interval 100 ms (the first periodic checkpoint at t=100), one checkpoint at a time.
CheckpointCoordinatorConfiguration config() {
  CheckpointCoordinatorConfiguration c;
  c.interval_ms = 100;
  c.max_concurrent = 1;
  c.tolerable_failures = 5;
  return c;
}

// Checkpoint 1 starts at t=100; both sources acknowledge it, the sink does not. The trigger due at t=200
// finds it pending.
void startSlowCheckpoint(Cluster& cluster, CheckpointCoordinator& c) {
  tickThrough(cluster, c, {100});
  ASSERT_EQ(cluster.startedSoFar(), (Starts{{1, 100}}));
  c.acknowledgeCheckpoint(0, 0, 1, {}, {});
  c.acknowledgeCheckpoint(0, 1, 1, {}, {});
  tickThrough(cluster, c, {200, 250});
  EXPECT_EQ(cluster.startedSoFar().size(), 1u);
}

TEST(CheckpointPeriodicQueueTest, ATriggerDueBehindAPendingCheckpointStartsWhenItCompletes) {
  const graph::JobGraph g = job();
  Cluster cluster;
  CheckpointCoordinator c(g, g.job_id, config(), cluster.hooks());
  c.start();
  startSlowCheckpoint(cluster, c);
  cluster.now_ms = 260;
  c.acknowledgeCheckpoint(1, 0, 1, {}, {});
  EXPECT_EQ(c.awaitCheckpoint(1, 10s), "");
  c.awaitClockTick();
  // Skipped and rescheduled, it would start at t=300.
  ASSERT_EQ(cluster.startedSoFar(), (Starts{{1, 100}, {2, 260}}));
  acknowledgeAll(c, 2);
  tickThrough(cluster, c, {300, 359});
  EXPECT_EQ(cluster.startedSoFar().size(), 2u);
  tickThrough(cluster, c, {360});
  EXPECT_EQ(cluster.startedSoFar().back(), (std::pair<int64_t, int64_t>{3, 360}));
  c.stop();
  EXPECT_EQ(cluster.completed, (std::vector<int64_t>{1, 2}));
}

TEST(CheckpointPeriodicQueueTest, ATriggerDueBehindAPendingCheckpointStartsWhenItIsDeclined) {
  const graph::JobGraph g = job();
  Cluster cluster;
  CheckpointCoordinator c(g, g.job_id, config(), cluster.hooks());
  c.start();
  startSlowCheckpoint(cluster, c);
  cluster.now_ms = 270;
  c.declineCheckpoint(1, 0, 1, "injected");
  EXPECT_THROW(c.awaitCheckpoint(1, 10s), UserError);
  c.awaitClockTick();
  EXPECT_EQ(cluster.startedSoFar(), (Starts{{1, 100}, {2, 270}}));
  acknowledgeAll(c, 2);
  c.stop();
  EXPECT_EQ(cluster.completed, std::vector<int64_t>{2});
}

TEST(CheckpointPeriodicQueueTest, ATriggerDueBehindAPendingCheckpointStartsWhenItExpires) {
  const graph::JobGraph g = job();
  Cluster cluster;
  CheckpointCoordinatorConfiguration conf = config();
  conf.timeout_ms = 250;  // checkpoint 1 expires at t=350
  CheckpointCoordinator c(g, g.job_id, conf, cluster.hooks());
  c.start();
  startSlowCheckpoint(cluster, c);
  tickThrough(cluster, c, {300, 349});
  EXPECT_EQ(cluster.startedSoFar().size(), 1u);
  tickThrough(cluster, c, {350});
  EXPECT_EQ(cluster.startedSoFar(), (Starts{{1, 100}, {2, 350}}));
  EXPECT_EQ(c.stats().number_of_failed_checkpoints, 1);
  acknowledgeAll(c, 2);
  c.stop();
}

TEST(CheckpointPeriodicQueueTest, AQueuedTriggerStillWaitsForTheMinPause) {
  const graph::JobGraph g = job();
  Cluster cluster;
  CheckpointCoordinatorConfiguration conf = config();
  conf.min_pause_ms = 70;
  CheckpointCoordinator c(g, g.job_id, conf, cluster.hooks());
  c.start();
  startSlowCheckpoint(cluster, c);
  cluster.now_ms = 260;
  c.acknowledgeCheckpoint(1, 0, 1, {}, {});
  c.awaitCheckpoint(1, 10s);
  tickThrough(cluster, c, {260, 300, 329});
  EXPECT_EQ(cluster.startedSoFar().size(), 1u);
  tickThrough(cluster, c, {330});  // the completion at 260 plus the pause
  EXPECT_EQ(cluster.startedSoFar(), (Starts{{1, 100}, {2, 330}}));
  acknowledgeAll(c, 2);
  c.stop();
}

}  // namespace
}  // namespace sluice::runtime::checkpoint
