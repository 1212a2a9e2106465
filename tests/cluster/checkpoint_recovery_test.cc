// Checkpoints and recovery through the whole engine: barriers from the sources through chains, local
// and TCP channels (aligned over a HASH exchange), the coordinator, failover with a restart strategy,
// and restore of operator and keyed state — with a failure injected after N records for many N.
//
// The source emits in lock step with checkpoints (a batch, then nothing until a checkpoint has been
// taken), so checkpoints cut the stream at batch boundaries without any timing assumption; which
// checkpoint is the latest when the failure hits still varies, and every outcome must give the same
// final sums. Expected values come from a plain loop over the input.

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <set>

#include "cluster/mini_cluster.h"
#include "common/error.h"
#include "common/hash.h"
#include "graph/job_graph.h"
#include "runtime/checkpoint/checkpoint_storage.h"
#include "runtime/network/record_writer.h"
#include "runtime/state/keyed_state_backend.h"
#include "runtime/state/operator_state_backend.h"
#include "runtime/state/stream_operator_state_context.h"
#include "runtime/task/operator_chain.h"
#include "checkpointed_operators.h"
#include "progress_wait.h"
#include "test_operators.h"

namespace sluice::cluster {
namespace {

using graph::TransformationKind;
using testing::bigintRow;
using testing::CheckpointedKeyedSum;
using testing::CheckpointedNumberSource;
using testing::checkpointedConfig;
using testing::Collected;
using testing::expectedSums;
using testing::lastSumPerKey;
using testing::SourceStarts;
using testing::makeHashPartition;
using testing::makeTransformation;

// Source(p, 1..n) -> Map(v % 5, 2v) -HASH(0)-> KeyedSum(p) -> Sink(p=1).
// The source waits for a checkpoint after every `batches_per_checkpoint` batches.
std::vector<graph::TransformationPtr> buildJob(Collected* out, SourceStarts* starts, int64_t n, size_t batch,
                                               int parallelism = 2, int batches_per_checkpoint = 1) {
  auto source = makeTransformation(1, "numbers", TransformationKind::kSource, parallelism,
                                   runtime::makeOperatorFactory([n, batch, starts, batches_per_checkpoint] {
                                     return std::make_unique<CheckpointedNumberSource>(n, batch, starts,
                                                                                       batches_per_checkpoint);
                                   }, true));
  auto map = makeTransformation(2, "Map", TransformationKind::kOneInput, parallelism, runtime::makeOperatorFactory([] {
                                  return std::make_unique<testing::KeyAndDoubleMap>();
                                }),
                                {source});
  auto hash = makeHashPartition(3, map, {0});
  auto sum = makeTransformation(4, "KeyedSum", TransformationKind::kOneInput, parallelism,
                                runtime::makeOperatorFactory([] { return std::make_unique<CheckpointedKeyedSum>(); }),
                                {hash});
  auto sink = makeTransformation(5, "Sink: collect", TransformationKind::kSink, 1,
                                 runtime::makeOperatorFactory([out] { return std::make_unique<testing::CollectSink>(out); }),
                                 {sum});
  return {sink};
}

TEST(CheckpointRecoveryTest, WithoutFailuresCheckpointsCompleteAndSumsAreExact) {
  constexpr int64_t kN = 200;
  Configuration conf = checkpointedConfig();
  Collected out;
  SourceStarts starts;
  const graph::JobGraph job = graph::buildJobGraph(buildJob(&out, &starts, kN, 10), conf, "checkpointed-sum");
  MiniCluster cluster(conf);
  const JobExecutionResult r = cluster.execute(job, conf);
  EXPECT_EQ(lastSumPerKey(out), expectedSums(kN));
  ASSERT_TRUE(r.checkpoints.has_value());
  // Each source subtask emits 10 batches and waits for a checkpoint after each: at least 9 complete.
  EXPECT_GE(r.checkpoints->number_of_completed_checkpoints, 9);
  EXPECT_EQ(r.checkpoints->number_of_failed_checkpoints, 0);
  EXPECT_EQ(r.num_restarts, 0);
}

// The failure is injected into the keyed sum (after N records at subtask 0), or into the source.
struct FailurePoint {
  const char* operator_name;
  int subtask;
};

class CheckpointRecoveryFailureTest : public ::testing::TestWithParam<std::tuple<FailurePoint, int>> {};

TEST_P(CheckpointRecoveryFailureTest, AFailureAfterNRecordsRestoresAndGivesTheSameSums) {
  constexpr int64_t kN = 200;
  const auto [point, task_managers] = GetParam();
  // 20 failure points; every key has 40 values (200 / 5), so a subtask with a key sees at least 40 records.
  int resumed_past_start = 0;
  for (int64_t after = 1; after < 40; after += 2) {
    SCOPED_TRACE(fmt::format("{} subtask {} fails after {} records, {} TaskManagers", point.operator_name, point.subtask,
                             after, task_managers));
    Configuration conf = checkpointedConfig();
    conf.set("sluice.test.fail-operator", point.operator_name);
    conf.set("sluice.test.fail-subtask", std::to_string(point.subtask));
    conf.set("sluice.test.fail-after-records", std::to_string(after));
    conf.set("local.number-taskmanager", std::to_string(task_managers));
    Collected out;
    SourceStarts starts;
    const graph::JobGraph job = graph::buildJobGraph(buildJob(&out, &starts, kN, 10), conf, "checkpointed-sum");
    MiniCluster cluster(conf);
    const JobExecutionResult r = cluster.execute(job, conf);
    EXPECT_EQ(r.num_restarts, 1);
    EXPECT_EQ(lastSumPerKey(out), expectedSums(kN));
    // The failure waits for a completed checkpoint, so the second attempt resumed from one: its sources
    // start on batch boundaries (10 values of stride 2 per batch), past their first values (1 and 2)
    // unless that checkpoint was taken before the first batch (a trigger that came before the source's
    // first poll).
    std::lock_guard<std::mutex> lock(starts.mu);
    ASSERT_EQ(starts.starts.size(), 4u);
    bool past_start = false;
    for (size_t i = 2; i < 4; ++i) {
      const auto [subtask, first] = starts.starts[i];
      EXPECT_GE(first, 1 + subtask);
      EXPECT_EQ((first - 1 - subtask) % 20, 0) << first;
      past_start = past_start || first > 1 + subtask;
    }
    resumed_past_start += past_start ? 1 : 0;
  }
  // A restart that restored nothing would start every run at the first values.
  EXPECT_GE(resumed_past_start, 5);
}

INSTANTIATE_TEST_SUITE_P(FailurePoints, CheckpointRecoveryFailureTest,
                         ::testing::Values(std::make_tuple(FailurePoint{"KeyedSum", 0}, 1),
                                           std::make_tuple(FailurePoint{"KeyedSum", 1}, 2),
                                           std::make_tuple(FailurePoint{"numbers", 1}, 1)));

// The keyed sum on RocksDB with incremental checkpoints in a checkpoint directory: every restart opens
// the uploaded database files of the last completed checkpoint.
TEST(CheckpointRecoveryTest, RocksDBIncrementalCheckpointsRestoreAfterAFailureAtManyRecordCounts) {
  constexpr int64_t kN = 200;
  const std::filesystem::path root =
      std::filesystem::path(::testing::TempDir()) / fmt::format("sluice-incremental-recovery-{}", ::getpid());
  for (int64_t after = 1; after < 40; after += 4) {
    SCOPED_TRACE(fmt::format("KeyedSum subtask 0 fails after {} records", after));
    std::filesystem::remove_all(root);
    Configuration conf = checkpointedConfig();
    conf.set("state.backend.type", "rocksdb");
    conf.set("execution.checkpointing.incremental", "true");
    conf.set("execution.checkpointing.dir", root.string());
    conf.set("io.tmp.dirs", root.string());
    conf.set("sluice.test.fail-operator", "KeyedSum");
    conf.set("sluice.test.fail-subtask", "0");
    conf.set("sluice.test.fail-after-records", std::to_string(after));
    Collected out;
    SourceStarts starts;
    const graph::JobGraph job = graph::buildJobGraph(buildJob(&out, &starts, kN, 10), conf, "incremental-sum");
    MiniCluster cluster(conf);
    const JobExecutionResult r = cluster.execute(job, conf);
    EXPECT_EQ(r.num_restarts, 1);
    EXPECT_EQ(lastSumPerKey(out), expectedSums(kN));
    ASSERT_TRUE(r.checkpoints.has_value());
    // The keyed sum's database is in the checkpoints as files, which count into the full size.
    EXPECT_GT(r.checkpoints->last_checkpoint_full_size, 0);
  }
  std::filesystem::remove_all(root);
}

TEST(CheckpointRecoveryTest, WithoutARestartStrategyTheInjectedFailureFailsTheJob) {
  Configuration conf = checkpointedConfig();
  conf.set("restart-strategy.type", "none");
  conf.set("sluice.test.fail-operator", "KeyedSum");
  conf.set("sluice.test.fail-after-records", "10");
  Collected out;
  SourceStarts starts;
  const graph::JobGraph job = graph::buildJobGraph(buildJob(&out, &starts, 200, 10), conf, "checkpointed-sum");
  MiniCluster cluster(conf);
  try {
    cluster.execute(job, conf);
    FAIL() << "the job finished despite the injected failure";
  } catch (const runtime::InjectedFailure& e) {
    EXPECT_NE(std::string(e.what()).find("KeyedSum"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace sluice::cluster

namespace sluice::cluster {
namespace {

// AT_LEAST_ONCE: barriers are counted, never block a channel. Without failures the sums are exact; with one,
// records after a barrier on a faster channel may be in the restored state and replayed, so a key's sum may
// count values twice but never misses one (Flink's CheckpointBarrierTracker guarantee).
TEST(CheckpointRecoveryTest, AtLeastOnceLosesNothing) {
  constexpr int64_t kN = 200;
  for (const int64_t after : {-1, 5, 25}) {
    SCOPED_TRACE(fmt::format("failure after {} records", after));
    Configuration conf = checkpointedConfig();
    conf.set("execution.checkpointing.mode", "AT_LEAST_ONCE");
    if (after >= 0) {
      conf.set("sluice.test.fail-operator", "KeyedSum");
      conf.set("sluice.test.fail-after-records", std::to_string(after));
    }
    Collected out;
    SourceStarts starts;
    const graph::JobGraph job = graph::buildJobGraph(buildJob(&out, &starts, kN, 10), conf, "checkpointed-sum");
    MiniCluster cluster(conf);
    const JobExecutionResult r = cluster.execute(job, conf);
    EXPECT_EQ(r.num_restarts, after >= 0 ? 1 : 0);
    const std::map<int64_t, int64_t> expected = expectedSums(kN);
    const std::map<int64_t, int64_t> got = lastSumPerKey(out);
    ASSERT_EQ(got.size(), expected.size());
    for (const auto& [k, sum] : expected) {
      if (after < 0) EXPECT_EQ(got.at(k), sum) << "key " << k;
      else EXPECT_GE(got.at(k), sum) << "key " << k;
    }
  }
}

}  // namespace
}  // namespace sluice::cluster

namespace sluice::cluster {
namespace {

// Unaligned checkpoints (FLIP-76): the same job and failure points with barriers that overtake in-flight
// data, at parallelism 1, 2 and 2 over two TaskManagers (TCP channels). The sums must be exact: the channel
// state of the checkpoint restored is replayed once, in order, before new records. The source emits four
// batches (of 5 rows) per checkpoint, and the coalescing buffer timeout keeps rows pending at the
// producers, so barriers overtake data; how much varies from run to run (printed), the sums never do.
struct UnalignedCase {
  int parallelism;
  int task_managers;
};

class UnalignedRecoveryTest : public ::testing::TestWithParam<UnalignedCase> {};

TEST_P(UnalignedRecoveryTest, AFailureAfterNRecordsRestoresInFlightDataExactlyOnce) {
  constexpr int64_t kN = 200;
  const UnalignedCase c = GetParam();
  int64_t persisted = 0;
  int unaligned_runs = 0;
  for (int64_t after = 1; after < 40 * 2 / c.parallelism; after += 3) {
    SCOPED_TRACE(fmt::format("KeyedSum subtask 0 fails after {} records, -p {}, {} TaskManagers", after, c.parallelism,
                             c.task_managers));
    Configuration conf = checkpointedConfig();
    conf.set("execution.checkpointing.unaligned.enabled", "true");
    conf.set("sluice.test.fail-operator", "KeyedSum");
    conf.set("sluice.test.fail-subtask", "0");
    conf.set("sluice.test.fail-after-records", std::to_string(after));
    conf.set("local.number-taskmanager", std::to_string(c.task_managers));
    Collected out;
    SourceStarts starts;
    const graph::JobGraph job =
        graph::buildJobGraph(buildJob(&out, &starts, kN, 5, c.parallelism, 4), conf, "checkpointed-sum");
    MiniCluster cluster(conf);
    const JobExecutionResult r = cluster.execute(job, conf);
    EXPECT_EQ(r.num_restarts, 1);
    EXPECT_EQ(lastSumPerKey(out), expectedSums(kN));
    ASSERT_TRUE(r.checkpoints.has_value());
    persisted += r.restored_in_flight_bytes;
    unaligned_runs += r.checkpoints->last_checkpoint_unaligned ? 1 : 0;
  }
  // Every checkpoint of these runs was unaligned (the last one of each run included).
  EXPECT_GT(unaligned_runs, 0);
  std::printf("-p %d, %d TaskManagers: %lld bytes of in-flight data restored over the runs\n", c.parallelism,
              c.task_managers, static_cast<long long>(persisted));
}

INSTANTIATE_TEST_SUITE_P(Layouts, UnalignedRecoveryTest,
                         ::testing::Values(UnalignedCase{1, 1}, UnalignedCase{2, 1}, UnalignedCase{2, 2}));

}  // namespace
}  // namespace sluice::cluster

namespace sluice::cluster {
namespace {

// Savepoints of a STREAMING job without execution.checkpointing.interval (Flink's `flink savepoint` and
// `flink stop` work on any streaming job): no checkpoint directory either, only the savepoints' targets.
// The source waits after each batch for a snapshot, so each savepoint releases exactly one more batch and
// the savepoints cut the stream at known places; the restored runs take periodic checkpoints to reach
// their end. Expected sums from expectedSums (a plain loop).
class SavepointWithoutIntervalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = std::filesystem::temp_directory_path() /
          ("sluice-savepoint-" + std::to_string(::getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir);
  }
  void TearDown() override { std::filesystem::remove_all(dir); }

  // Restores `savepoint` (its _metadata or directory) with periodic checkpoints and runs to the end.
  std::map<int64_t, int64_t> restoreAndFinish(const std::string& savepoint, SourceStarts* starts) {
    Configuration conf = checkpointedConfig();
    conf.set("execution.state-recovery.path", savepoint);
    Collected out;
    const graph::JobGraph job = graph::buildJobGraph(buildJob(&out, starts, kN, 10), conf, "checkpointed-sum");
    const JobExecutionResult r = MiniCluster(conf).execute(job, conf);
    EXPECT_EQ(r.status, JobStatus::kFinished);
    return lastSumPerKey(out);
  }

  static constexpr int64_t kN = 200;
  std::filesystem::path dir;
};

TEST_F(SavepointWithoutIntervalTest, SavepointAndStopRestoreToExactSums) {
  Configuration conf;  // no interval, no checkpoint directory
  Collected out;
  SourceStarts starts;
  const graph::JobGraph job = graph::buildJobGraph(buildJob(&out, &starts, kN, 10), conf, "checkpointed-sum");
  std::shared_ptr<JobHandle> handle = MiniCluster(conf).start(job, conf);
  EXPECT_EQ(handle->checkpointDirectory(), "");
  // The source vertex wrote `n` records: both subtasks emitted that many batches of 10 and wait.
  auto emitted = [&](int64_t n) {
    return testing::waitForProgress(*handle, [n](const JobProgress& p) { return p.vertices[0].records_out >= n; });
  };
  ASSERT_NE(job.vertices[0].name.find("numbers"), std::string::npos) << job.vertices[0].name;

  ASSERT_TRUE(emitted(20));
  const std::string first = handle->triggerSavepoint((dir / "sp").string(), std::chrono::seconds(60));
  EXPECT_EQ(std::filesystem::path(first).parent_path().parent_path(), dir / "sp");
  EXPECT_TRUE(std::filesystem::is_regular_file(first));
  // No periodic checkpoints and none taken: no checkpoint figures (savepoints are not counted in them).
  EXPECT_FALSE(handle->progress().checkpoints.has_value());
  EXPECT_FALSE(handle->isDone());

  ASSERT_TRUE(emitted(40));  // the savepoint released one more batch per subtask
  const std::string stop = handle->stopWithSavepoint((dir / "stop").string(), false, std::chrono::seconds(60));
  const JobExecutionResult r = handle->wait();
  EXPECT_EQ(r.status, JobStatus::kFinished);
  EXPECT_FALSE(r.checkpoints.has_value());
  {
    std::lock_guard<std::mutex> lock(out.mu);
    EXPECT_TRUE(out.rows.empty());  // stopped without --drain: the sums stay in the savepoint
  }
  EXPECT_EQ(runtime::checkpoint::FsCheckpointStorage::load(stop).kind, runtime::checkpoint::CheckpointKind::kSavepointSuspend);

  // Each source subtask emitted one batch (10 values) before the first savepoint and one more before the
  // stop: the restores start at 1 + subtask + 10 * 2 and + 20 * 2.
  SourceStarts from_first;
  EXPECT_EQ(restoreAndFinish(runtime::checkpoint::withoutMetadataFile(first), &from_first), expectedSums(kN));
  SourceStarts from_stop;
  EXPECT_EQ(restoreAndFinish(stop, &from_stop), expectedSums(kN));
  using Starts = std::set<std::pair<int, int64_t>>;
  std::lock_guard<std::mutex> lock_first(from_first.mu);
  std::lock_guard<std::mutex> lock_stop(from_stop.mu);
  EXPECT_EQ(Starts(from_first.starts.begin(), from_first.starts.end()), (Starts{{0, 21}, {1, 22}}));
  EXPECT_EQ(Starts(from_stop.starts.begin(), from_stop.starts.end()), (Starts{{0, 41}, {1, 42}}));
}

// Two pipelines in one job: one ends at once, the other runs until cancelled. Without an interval the
// ended tasks do not wait for a final checkpoint (none would come); they report their final state, so a
// savepoint taken afterwards completes with it.
TEST_F(SavepointWithoutIntervalTest, TasksEndWithoutAFinalCheckpointAndTakePartWithTheirFinalState) {
  Configuration conf;
  Collected ended, running;
  auto done_source = makeTransformation(1, "Source: once", TransformationKind::kSource, 1,
                                        runtime::makeOperatorFactory([] {
                                          return std::make_unique<testing::SelfFinishingSource>();
                                        }, true));
  auto done_sink = makeTransformation(2, "Sink: ended", TransformationKind::kSink, 1,
                                      runtime::makeOperatorFactory([&ended] {
                                        return std::make_unique<testing::CollectSink>(&ended);
                                      }), {done_source});
  auto trickle = makeTransformation(3, "Source: trickle", TransformationKind::kSource, 1,
                                    runtime::makeOperatorFactory([] {
                                      return std::make_unique<testing::TrickleSource>(5);
                                    }, true));
  auto running_sink = makeTransformation(4, "Sink: running", TransformationKind::kSink, 2,
                                         runtime::makeOperatorFactory([&running] {
                                           return std::make_unique<testing::CollectSink>(&running);
                                         }), {makeHashPartition(5, trickle, {0})});
  const graph::JobGraph job = graph::buildJobGraph({done_sink, running_sink}, conf, "two-pipelines");
  size_t ended_vertex = job.vertices.size();
  for (size_t v = 0; v < job.vertices.size(); ++v) {
    if (job.vertices[v].name.find("Source: once") != std::string::npos) ended_vertex = v;
  }
  ASSERT_LT(ended_vertex, job.vertices.size());
  std::shared_ptr<JobHandle> handle = MiniCluster(conf).start(job, conf);
  ASSERT_TRUE(testing::waitForProgress(*handle, [&](const JobProgress& p) {
    return p.vertices[ended_vertex].finished_subtasks == p.vertices[ended_vertex].parallelism;
  })) << "the ended pipeline's task waited for a checkpoint";
  {
    std::lock_guard<std::mutex> lock(ended.mu);
    EXPECT_TRUE(ended.ended);
    EXPECT_EQ(ended.rows.size(), 1u);
  }
  running.waitForBatches(1);
  const std::string path = handle->triggerSavepoint((dir / "sp").string(), std::chrono::seconds(60));
  EXPECT_TRUE(std::filesystem::is_regular_file(path));
  EXPECT_FALSE(handle->isDone());
  handle->cancel();
  EXPECT_EQ(handle->wait().status, JobStatus::kCanceled);
}

TEST(SavepointBatchTest, ABatchJobIsNotAStreamingJob) {
  Configuration conf;
  conf.set("execution.runtime-mode", "BATCH");
  Collected out;
  auto source = makeTransformation(1, "Source: trickle", TransformationKind::kSource, 1,
                                   runtime::makeOperatorFactory([] {
                                     return std::make_unique<testing::TrickleSource>(5);
                                   }, true));
  auto sink = makeTransformation(2, "Sink: collect", TransformationKind::kSink, 1,
                                 runtime::makeOperatorFactory([&out] {
                                   return std::make_unique<testing::CollectSink>(&out);
                                 }), {source});
  const graph::JobGraph job = graph::buildJobGraph({sink}, conf, "batch");
  std::shared_ptr<JobHandle> handle = MiniCluster(conf).start(job, conf);
  try {
    handle->triggerSavepoint("/nonexistent", std::chrono::seconds(60));
    FAIL() << "a BATCH job took a savepoint";
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()), "Job " + handle->jobId() +
                                         " is not a streaming job: a BATCH job ('execution.runtime-mode') takes no "
                                         "savepoints");
  }
  handle->cancel();
  handle->wait();
}

}  // namespace
}  // namespace sluice::cluster
