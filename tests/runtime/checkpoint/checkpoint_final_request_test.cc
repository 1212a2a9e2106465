// FLIP-147's final checkpoint on the CheckpointCoordinator: a task that reached its end of input asks for
// a checkpoint (requestCheckpoint) and waits for one to complete. When a checkpoint is still pending at
// max-concurrent-checkpoints 1, the request must wait in the queue and start the moment the pending one
// completes, is declined or expires (Flink's CheckpointRequestDecider keeps queued requests and runs them
// on completion or abort), never one interval later, and min-pause still applies. Driven by a hand-moved
// clock, so every expected trigger time below is exact; the times are worked out by hand from those rules.

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

// Checkpoint 1 starts at t=100; both sources acknowledge it, the sink does not yet; at t=150 a source
// that ended its input asks for its final checkpoint.
void startPendingAndRequest(Cluster& cluster, CheckpointCoordinator& c) {
  tickThrough(cluster, c, {100});
  ASSERT_EQ(cluster.startedSoFar(), (Starts{{1, 100}}));
  c.acknowledgeCheckpoint(0, 0, 1, {}, {});
  c.acknowledgeCheckpoint(0, 1, 1, {}, {});
  cluster.now_ms = 150;
  c.reportEndOfInput(0, 0);
  c.requestCheckpoint();
  c.awaitClockTick();
  EXPECT_EQ(cluster.startedSoFar().size(), 1u);  // queued behind checkpoint 1
}

TEST(CheckpointFinalRequestTest, ARequestBehindAPendingCheckpointStartsWhenItCompletes) {
  const graph::JobGraph g = job();
  Cluster cluster;
  CheckpointCoordinator c(g, g.job_id, config(), cluster.hooks());
  c.start();
  startPendingAndRequest(cluster, c);
  tickThrough(cluster, c, {155});
  EXPECT_EQ(cluster.startedSoFar().size(), 1u);
  cluster.now_ms = 160;
  c.acknowledgeCheckpoint(1, 0, 1, {}, {});
  EXPECT_EQ(c.awaitCheckpoint(1, 10s), "");
  c.awaitClockTick();
  ASSERT_EQ(cluster.startedSoFar(), (Starts{{1, 100}, {2, 160}}));
  // The request is served: the periodic checkpoints follow from t=160 again.
  acknowledgeAll(c, 2);
  tickThrough(cluster, c, {170, 259});
  EXPECT_EQ(cluster.startedSoFar().size(), 2u);
  tickThrough(cluster, c, {260});
  EXPECT_EQ(cluster.startedSoFar().back(), (std::pair<int64_t, int64_t>{3, 260}));
  c.stop();
}

TEST(CheckpointFinalRequestTest, ARequestBehindAPendingCheckpointStartsWhenItIsDeclined) {
  const graph::JobGraph g = job();
  Cluster cluster;
  CheckpointCoordinator c(g, g.job_id, config(), cluster.hooks());
  c.start();
  startPendingAndRequest(cluster, c);
  cluster.now_ms = 170;
  c.declineCheckpoint(1, 0, 1, "injected");
  EXPECT_THROW(c.awaitCheckpoint(1, 10s), UserError);
  c.awaitClockTick();
  EXPECT_EQ(cluster.startedSoFar(), (Starts{{1, 100}, {2, 170}}));
  acknowledgeAll(c, 2);
  c.stop();
  EXPECT_EQ(cluster.completed, std::vector<int64_t>{2});
}

TEST(CheckpointFinalRequestTest, ARequestBehindAPendingCheckpointStartsWhenItExpires) {
  const graph::JobGraph g = job();
  Cluster cluster;
  CheckpointCoordinatorConfiguration conf = config();
  conf.timeout_ms = 400;  // checkpoint 1 expires at t=500
  CheckpointCoordinator c(g, g.job_id, conf, cluster.hooks());
  c.start();
  startPendingAndRequest(cluster, c);
  tickThrough(cluster, c, {200, 300, 499});  // periodic triggers are skipped while 1 is pending
  EXPECT_EQ(cluster.startedSoFar().size(), 1u);
  tickThrough(cluster, c, {500});
  EXPECT_EQ(cluster.startedSoFar(), (Starts{{1, 100}, {2, 500}}));
  EXPECT_EQ(c.stats().number_of_failed_checkpoints, 1);
  acknowledgeAll(c, 2);
  c.stop();
}

TEST(CheckpointFinalRequestTest, AQueuedRequestStillWaitsForTheMinPause) {
  const graph::JobGraph g = job();
  Cluster cluster;
  CheckpointCoordinatorConfiguration conf = config();
  conf.min_pause_ms = 50;
  CheckpointCoordinator c(g, g.job_id, conf, cluster.hooks());
  c.start();
  startPendingAndRequest(cluster, c);
  cluster.now_ms = 160;
  c.acknowledgeCheckpoint(1, 0, 1, {}, {});
  c.awaitCheckpoint(1, 10s);
  tickThrough(cluster, c, {160, 209});
  EXPECT_EQ(cluster.startedSoFar().size(), 1u);
  tickThrough(cluster, c, {210});  // the completion at 160 plus the pause
  EXPECT_EQ(cluster.startedSoFar(), (Starts{{1, 100}, {2, 210}}));
  acknowledgeAll(c, 2);
  c.stop();
}

// A savepoint is not the checkpoint a finished task waits for (it notifies no task): the request stays
// queued behind it.
TEST(CheckpointFinalRequestTest, ASavepointDoesNotServeTheRequest) {
  const graph::JobGraph g = job();
  Cluster cluster;
  CheckpointCoordinator c(g, g.job_id, config(), cluster.hooks());
  c.start();
  cluster.now_ms = 40;
  ASSERT_EQ(c.triggerCheckpoint(CheckpointKind::kSavepoint, "/sp"), std::optional<int64_t>(1));
  c.requestCheckpoint();
  tickThrough(cluster, c, {50, 100, 200});
  EXPECT_EQ(cluster.startedSoFar(), (Starts{{1, 40}}));
  cluster.now_ms = 210;
  acknowledgeAll(c, 1);
  c.awaitClockTick();
  EXPECT_EQ(cluster.startedSoFar(), (Starts{{1, 40}, {2, 210}}));
  acknowledgeAll(c, 2);
  c.stop();
  EXPECT_EQ(cluster.completed, std::vector<int64_t>{2});
}

// A periodic trigger that comes due while max-concurrent-checkpoints are pending is queued the same way
// (Flink's CheckpointRequestDecider queues it): it starts the moment a pending checkpoint completes, is
// declined or expires (min-pause permitting), never a whole interval later, and the schedule goes on from
// that start.

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
