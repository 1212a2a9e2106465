// CheckpointCoordinator against scripted tasks: the hooks record what the coordinator asks for, and the
// test plays the tasks' side (acknowledge, decline, final state). Periodic triggering is off (interval 0)
// except where a test says otherwise, so every checkpoint starts from the test thread.

#include "runtime/checkpoint/checkpoint_coordinator.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <future>
#include <mutex>
#include <set>

#include "common/error.h"
#include "graph/job_graph.h"

namespace sluice::runtime::checkpoint {
namespace {

using namespace std::chrono_literals;

// source (p=2) -> sink (p=1); each vertex has one operator with a uid.
graph::JobGraph twoVertexJob() {
  graph::JobGraph g;
  g.job_id = "0123456789abcdef0123456789abcdef";
  graph::JobVertex source;
  source.name = "Source";
  source.parallelism = 2;
  source.is_source = true;
  source.operators.push_back(graph::ChainedOperator{});
  source.operators[0].uid = "src";
  source.outputs = {0};
  graph::JobVertex sink;
  sink.name = "Sink";
  sink.parallelism = 1;
  sink.operators.push_back(graph::ChainedOperator{});
  sink.operators[0].uid = "snk";
  sink.inputs = {0};
  g.vertices = {source, sink};
  graph::JobEdge e;
  e.source_vertex = 0;
  e.target_vertex = 1;
  g.edges = {e};
  return g;
}

struct Recorder {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::tuple<int, int, int64_t>> triggered;  // vertex, subtask, id
  std::vector<int64_t> completed;
  std::vector<int64_t> aborted;
  std::vector<std::string> failures;
  std::vector<CompletedCheckpoint> stored;

  CheckpointCoordinator::Hooks hooks() {
    CheckpointCoordinator::Hooks h;
    h.trigger_task = [this](int v, int s, const CheckpointBarrier& b) {
      std::lock_guard<std::mutex> lock(mu);
      triggered.emplace_back(v, s, b.id);
    };
    h.notify_complete = [this](int64_t id) {
      std::lock_guard<std::mutex> lock(mu);
      completed.push_back(id);
    };
    h.notify_aborted = [this](int64_t id) {
      std::lock_guard<std::mutex> lock(mu);
      aborted.push_back(id);
    };
    h.store = [this](const CompletedCheckpoint& c, const std::string&) {
      std::lock_guard<std::mutex> lock(mu);
      stored.push_back(c);
      return "/ck/chk-" + std::to_string(c.checkpoint_id);
    };
    h.fail_job = [this](const std::string& reason) {
      {
        std::lock_guard<std::mutex> lock(mu);
        failures.push_back(reason);
      }
      cv.notify_all();
    };
    return h;
  }
  /// Waits until the coordinator failed the job (at most 10 s, then the assertions below fail).
  void waitForFailure() {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait_for(lock, 10s, [&] { return !failures.empty(); });
  }
};

TaskStateSnapshot stateOf(const std::string& uid, const std::string& name, const std::string& element) {
  TaskStateSnapshot s;
  s[uid].operator_state[name].elements.push_back(element);
  return s;
}

TEST(CheckpointCoordinatorTest, TriggersSourcesAndCompletesWhenEveryTaskAcknowledged) {
  const graph::JobGraph job = twoVertexJob();
  Recorder rec;
  CheckpointCoordinator coordinator(job, job.job_id, CheckpointCoordinatorConfiguration{}, rec.hooks());
  coordinator.start();
  const std::optional<int64_t> id = coordinator.triggerCheckpoint();
  ASSERT_EQ(id, 1);
  {
    std::lock_guard<std::mutex> lock(rec.mu);
    // Only the sources are triggered; the sink gets the barrier through its input.
    EXPECT_EQ(rec.triggered, (std::vector<std::tuple<int, int, int64_t>>{{0, 0, 1}, {0, 1, 1}}));
  }
  coordinator.acknowledgeCheckpoint(0, 0, 1, stateOf("src", "offsets", "a"), {});
  coordinator.acknowledgeCheckpoint(0, 1, 1, stateOf("src", "offsets", "b"), {});
  EXPECT_EQ(coordinator.stats().number_of_completed_checkpoints, 0);  // the sink has not acknowledged
  coordinator.acknowledgeCheckpoint(1, 0, 1, stateOf("snk", "pending", "c"), {});
  EXPECT_EQ(coordinator.awaitCheckpoint(1, 10s), "/ck/chk-1");
  coordinator.stop();

  ASSERT_EQ(rec.stored.size(), 1u);
  const CompletedCheckpoint& c = rec.stored[0];
  EXPECT_EQ(c.checkpoint_id, 1);
  ASSERT_EQ(c.operators.count("src"), 1u);
  ASSERT_EQ(c.operators.at("src").subtasks.size(), 2u);
  EXPECT_EQ(c.operators.at("src").subtasks[1].operator_state.at("offsets").elements,
            std::vector<std::string>{"b"});
  EXPECT_EQ(c.operators.at("snk").parallelism, 1);
  EXPECT_EQ(rec.completed, std::vector<int64_t>{1});
  const CheckpointStats s = coordinator.stats();
  EXPECT_EQ(s.number_of_completed_checkpoints, 1);
  EXPECT_EQ(s.last_checkpoint_id, 1);
  EXPECT_EQ(s.last_checkpoint_size, 3);  // "a", "b", "c"
  EXPECT_EQ(s.last_checkpoint_external_path, "/ck/chk-1");
  ASSERT_NE(coordinator.latestCompletedCheckpoint(), nullptr);
  EXPECT_EQ(coordinator.latestCompletedCheckpoint()->checkpoint_id, 1);
}

TEST(CheckpointCoordinatorTest, AwaitReturnsWhenTheCoordinatorStopsWithTheCheckpointPending) {
  // A savepoint request waiting on a job that ends (REST, SIGUSR1) must not wait out its timeout.
  const graph::JobGraph job = twoVertexJob();
  Recorder rec;
  CheckpointCoordinator coordinator(job, job.job_id, CheckpointCoordinatorConfiguration{}, rec.hooks());
  coordinator.start();
  ASSERT_EQ(coordinator.triggerCheckpoint(CheckpointKind::kSavepoint, "/sp"), 1);
  std::future<std::string> waiting = std::async(std::launch::async, [&] {
    try {
      coordinator.awaitCheckpoint(1, std::chrono::hours(1));
      return std::string("completed");
    } catch (const UserError& e) {
      return std::string(e.what());
    }
  });
  coordinator.stop();  // before or while the waiter waits: either way it returns
  EXPECT_EQ(waiting.get(), "Checkpoint 1 did not complete: the job ended");
  EXPECT_THROW(coordinator.awaitCheckpoint(1, std::chrono::hours(1)), UserError);
}

TEST(CheckpointCoordinatorTest, FinishedTasksTakePartWithTheirFinalStateAndDownstreamIsTriggered) {
  const graph::JobGraph job = twoVertexJob();
  Recorder rec;
  CheckpointCoordinator coordinator(job, job.job_id, CheckpointCoordinatorConfiguration{}, rec.hooks());
  coordinator.start();
  // Source 0 finished before the checkpoint; source 1 finishes while it is pending.
  coordinator.reportFinalState(0, 0, stateOf("src", "offsets", "end0"));
  ASSERT_EQ(coordinator.triggerCheckpoint(), 1);
  coordinator.reportFinalState(0, 1, stateOf("src", "offsets", "end1"));
  coordinator.acknowledgeCheckpoint(1, 0, 1, {}, {});
  EXPECT_EQ(coordinator.awaitCheckpoint(1, 10s), "/ck/chk-1");
  EXPECT_EQ(rec.stored[0].operators.at("src").subtasks[0].operator_state.at("offsets").elements,
            std::vector<std::string>{"end0"});
  EXPECT_EQ(rec.stored[0].operators.at("src").subtasks[1].operator_state.at("offsets").elements,
            std::vector<std::string>{"end1"});
  // Every source finished: FLIP-147 triggers the sink itself.
  ASSERT_EQ(coordinator.triggerCheckpoint(), 2);
  {
    std::lock_guard<std::mutex> lock(rec.mu);
    EXPECT_EQ(rec.triggered.back(), (std::tuple<int, int, int64_t>{1, 0, 2}));
  }
  // Once every task finished there is nothing to checkpoint.
  coordinator.reportFinalState(1, 0, {});
  EXPECT_EQ(coordinator.awaitCheckpoint(2, 10s), "/ck/chk-2");
  EXPECT_EQ(coordinator.triggerCheckpoint(), std::nullopt);
  coordinator.stop();
}

TEST(CheckpointCoordinatorTest, DeclinesCountAgainstTheTolerableFailures) {
  const graph::JobGraph job = twoVertexJob();
  Recorder rec;
  CheckpointCoordinatorConfiguration config;
  config.tolerable_failures = 1;
  config.max_concurrent = 1;
  CheckpointCoordinator coordinator(job, job.job_id, config, rec.hooks());
  coordinator.start();
  ASSERT_EQ(coordinator.triggerCheckpoint(), 1);
  // max-concurrent-checkpoints 1: a second one cannot start while 1 is pending.
  EXPECT_EQ(coordinator.triggerCheckpoint(), std::nullopt);
  coordinator.declineCheckpoint(0, 1, 1, "disk full");
  EXPECT_THROW(
      {
        try {
          coordinator.awaitCheckpoint(1, 10s);
        } catch (const UserError& e) {
          EXPECT_NE(std::string(e.what()).find("disk full"), std::string::npos) << e.what();
          EXPECT_NE(std::string(e.what()).find("Source (2/2)"), std::string::npos) << e.what();
          throw;
        }
      },
      UserError);
  ASSERT_EQ(coordinator.triggerCheckpoint(), 2);
  coordinator.declineCheckpoint(0, 0, 2, "disk full");
  EXPECT_THROW(coordinator.awaitCheckpoint(2, 10s), UserError);
  rec.waitForFailure();
  coordinator.stop();
  EXPECT_EQ(coordinator.stats().number_of_failed_checkpoints, 2);
  // Two failures in a row with one tolerated: the job fails.
  EXPECT_EQ(rec.failures, std::vector<std::string>{"Exceeded checkpoint tolerable failure threshold."});
  EXPECT_EQ(rec.aborted, (std::vector<int64_t>{1, 2}));
}

TEST(CheckpointCoordinatorTest, AnUnacknowledgedCheckpointExpires) {
  const graph::JobGraph job = twoVertexJob();
  Recorder rec;
  CheckpointCoordinatorConfiguration config;
  config.timeout_ms = 20;
  config.tolerable_failures = 5;
  CheckpointCoordinator coordinator(job, job.job_id, config, rec.hooks());
  coordinator.start();
  ASSERT_EQ(coordinator.triggerCheckpoint(), 1);
  try {
    coordinator.awaitCheckpoint(1, 10s);
    FAIL() << "checkpoint 1 completed without acknowledgements";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("expired"), std::string::npos) << e.what();
  }
  // A late acknowledgement of the expired checkpoint is discarded.
  coordinator.acknowledgeCheckpoint(0, 0, 1, {}, {});
  coordinator.stop();
  EXPECT_EQ(coordinator.stats().number_of_failed_checkpoints, 1);
  EXPECT_TRUE(rec.stored.empty());
}

TEST(CheckpointCoordinatorTest, ARestartAbortsPendingCheckpointsAndIdsKeepIncreasing) {
  const graph::JobGraph job = twoVertexJob();
  Recorder rec;
  CheckpointCoordinator coordinator(job, job.job_id, CheckpointCoordinatorConfiguration{}, rec.hooks());
  coordinator.setNextCheckpointId(8);  // restored from checkpoint 7
  coordinator.start();
  ASSERT_EQ(coordinator.triggerCheckpoint(), 8);
  coordinator.reportFinalState(0, 0, {});
  coordinator.restartAttempt();
  EXPECT_THROW(coordinator.awaitCheckpoint(8, 10s), UserError);
  // The failover is not a checkpoint failure, and finished states of the old attempt are forgotten.
  EXPECT_EQ(coordinator.stats().number_of_failed_checkpoints, 0);
  ASSERT_EQ(coordinator.triggerCheckpoint(), 9);
  {
    std::lock_guard<std::mutex> lock(rec.mu);
    const std::set<std::tuple<int, int, int64_t>> last(rec.triggered.end() - 2, rec.triggered.end());
    EXPECT_EQ(last, (std::set<std::tuple<int, int, int64_t>>{{0, 0, 9}, {0, 1, 9}}));
  }
  coordinator.stop();
}

TEST(CheckpointCoordinatorTest, SavepointsAreForcedAndNotifyNoTask) {
  const graph::JobGraph job = twoVertexJob();
  Recorder rec;
  CheckpointCoordinator coordinator(job, job.job_id, CheckpointCoordinatorConfiguration{}, rec.hooks());
  coordinator.start();
  ASSERT_EQ(coordinator.triggerCheckpoint(), 1);
  // Forced past the concurrency limit.
  ASSERT_EQ(coordinator.triggerCheckpoint(CheckpointKind::kSavepoint, "/sp"), 2);
  for (int64_t id : {1, 2}) {
    coordinator.acknowledgeCheckpoint(0, 0, id, {}, {});
    coordinator.acknowledgeCheckpoint(0, 1, id, {}, {});
    coordinator.acknowledgeCheckpoint(1, 0, id, {}, {});
  }
  EXPECT_EQ(coordinator.awaitCheckpoint(2, 10s), "/ck/chk-2");
  EXPECT_EQ(coordinator.awaitCheckpoint(1, 10s), "/ck/chk-1");
  coordinator.stop();
  EXPECT_EQ(rec.completed, std::vector<int64_t>{1});  // the savepoint notified nobody
  EXPECT_EQ(coordinator.stats().number_of_completed_checkpoints, 1);
  EXPECT_EQ(coordinator.latestCompletedCheckpoint()->checkpoint_id, 1);
}

}  // namespace
}  // namespace sluice::runtime::checkpoint
