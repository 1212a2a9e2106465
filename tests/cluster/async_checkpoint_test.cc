// The asynchronous part of checkpoints through the whole engine (AsyncCheckpointRunner): a write-out held
// back deterministically by the runner's write hook while the task goes on changing its heap state, a
// failure right after that checkpoint completed (so the restore reads exactly it), and failing write-outs
// that decline their checkpoint. Expected sums come from a plain loop over the input.

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <map>
#include <mutex>
#include <stdexcept>

#include "cluster/mini_cluster.h"
#include "graph/job_graph.h"
#include "runtime/task/async_checkpoint_runner.h"
#include "checkpointed_operators.h"
#include "test_operators.h"

namespace sluice::cluster {
namespace {

using graph::TransformationKind;
using testing::BasicCheckpointedKeyedSum;
using testing::CheckpointedNumberSource;
using testing::checkpointedConfig;
using testing::Collected;
using testing::expectedSums;
using testing::lastSumPerKey;
using testing::makeHashPartition;
using testing::makeTransformation;
using testing::SourceStarts;

// What the keyed sum's subtasks did, for the write hook (task threads write, the async thread waits).
struct Probe {
  std::mutex mu;
  std::condition_variable cv;
  int64_t processed = 0;                   // records subtask 0 processed (first attempt)
  std::map<int64_t, int64_t> at_snapshot;  // checkpoint id -> `processed` at its synchronous part
  int64_t held = -1;                       // the checkpoint whose write-out the hook held back
  bool moved_on = false;                   // subtask 0 processed records while it was held
  bool failed = false;                     // the first attempt failed on its completion
};

// A sum serializer whose first `failures` serialize calls throw: heap snapshots serialize in their
// asynchronous part, so each of those calls fails one subtask's write-out of one checkpoint.
struct FailingSumSerializer {
  static inline std::atomic<int> failures{0};
  static void serialize(const int64_t& v, runtime::DataOutputView& out) {
    if (failures.fetch_sub(1) > 0) throw std::runtime_error("injected write-out failure");
    runtime::TypeSerializer<int64_t>::serialize(v, out);
  }
  static int64_t deserialize(runtime::DataInputView& in) { return runtime::TypeSerializer<int64_t>::deserialize(in); }
};

// The keyed sum reporting to a Probe: its subtask 0 fails the first attempt when the held checkpoint
// completes, so the second attempt restores exactly that checkpoint.
class ProbedKeyedSum : public BasicCheckpointedKeyedSum<runtime::TypeSerializer<int64_t>> {
 public:
  explicit ProbedKeyedSum(Probe* probe) : probe_(probe) {}
  void processBatch(types::RowBatch&& in) override {
    const size_t rows = in.numRows();
    BasicCheckpointedKeyedSum::processBatch(std::move(in));
    if (ctx_.subtask_index != 0) return;
    std::lock_guard<std::mutex> lock(probe_->mu);
    if (probe_->failed) return;
    probe_->processed += static_cast<int64_t>(rows);
    probe_->cv.notify_all();
  }
  void snapshotState(int64_t id) override {
    BasicCheckpointedKeyedSum::snapshotState(id);
    if (ctx_.subtask_index != 0) return;
    std::lock_guard<std::mutex> lock(probe_->mu);
    if (!probe_->failed) probe_->at_snapshot[id] = probe_->processed;
  }
  void notifyCheckpointComplete(int64_t id) override {
    BasicCheckpointedKeyedSum::notifyCheckpointComplete(id);
    if (ctx_.subtask_index != 0) return;
    std::lock_guard<std::mutex> lock(probe_->mu);
    if (probe_->failed || id != probe_->held) return;
    probe_->failed = true;
    throw std::runtime_error("injected failure on the completion of the held checkpoint");
  }

 private:
  Probe* probe_;
};

// Source(p=2, 1..n, 3 batches per checkpoint) -> Map(v % 5, 2v) -HASH(0)-> KeyedSum(p=2) -> Sink(p=1).
template <typename MakeSum>
graph::JobGraph buildJob(const Configuration& conf, Collected* out, SourceStarts* starts, int64_t n,
                         MakeSum make_sum) {
  auto source = makeTransformation(1, "numbers", TransformationKind::kSource, 2,
                                   runtime::makeOperatorFactory([n, starts] {
                                     return std::make_unique<CheckpointedNumberSource>(n, 10, starts, 3);
                                   }, true));
  auto map = makeTransformation(2, "Map", TransformationKind::kOneInput, 2, runtime::makeOperatorFactory([] {
                                  return std::make_unique<testing::KeyAndDoubleMap>();
                                }),
                                {source});
  auto hash = makeHashPartition(3, map, {0});
  auto sum = makeTransformation(4, "KeyedSum", TransformationKind::kOneInput, 2, runtime::makeOperatorFactory(make_sum),
                                {hash});
  auto sink = makeTransformation(5, "Sink: collect", TransformationKind::kSink, 1,
                                 runtime::makeOperatorFactory([out] { return std::make_unique<testing::CollectSink>(out); }),
                                 {sum});
  return graph::buildJobGraph({sink}, conf, "async-checkpointed-sum");
}

int vertexNamed(const graph::JobGraph& job, const std::string& name) {
  for (size_t v = 0; v < job.vertices.size(); ++v) {
    if (job.vertices[v].name.find(name) != std::string::npos) return static_cast<int>(v);
  }
  ADD_FAILURE() << "no vertex named " << name;
  return -1;
}

struct ResetHook {
  ~ResetHook() { runtime::AsyncCheckpointRunner::setWriteHookForTesting(nullptr); }
};

// The write-out of checkpoint 2 (or the first later one subtask 0 takes) is held until subtask 0 has
// processed records after its barrier, then written; the first attempt fails when that checkpoint
// completes. The restore reads exactly it: a snapshot that saw the later records would count them twice.
TEST(AsyncCheckpointTest, AWriteOutHeldWhileTheTaskMovesOnHoldsTheStateOfItsBarrier) {
  constexpr int64_t kN = 2000;
  const std::filesystem::path root =
      std::filesystem::path(::testing::TempDir()) / fmt::format("sluice-async-checkpoint-{}", ::getpid());
  // RocksDB full: the iteration of the native checkpoint taken at the barrier is held; incremental: its
  // upload.
  for (const char* backend : {"hashmap", "rocksdb", "rocksdb-incremental"}) {
    SCOPED_TRACE(backend);
    std::filesystem::remove_all(root);
    Configuration conf = checkpointedConfig();
    conf.set("state.backend.type", std::string(backend).substr(0, std::string(backend).find('-')));
    conf.set("io.tmp.dirs", root.string());
    if (std::string(backend) == "rocksdb-incremental") {
      conf.set("execution.checkpointing.incremental", "true");
      conf.set("execution.checkpointing.dir", root.string());
    }
    Probe probe;
    Collected out;
    SourceStarts starts;
    const graph::JobGraph job =
        buildJob(conf, &out, &starts, kN, [&probe] { return std::make_unique<ProbedKeyedSum>(&probe); });
    const int sum_vertex = vertexNamed(job, "KeyedSum");
    ResetHook reset;
    runtime::AsyncCheckpointRunner::setWriteHookForTesting([&](int vertex, int subtask, int64_t id) {
      if (vertex != sum_vertex || subtask != 0) return;
      std::unique_lock<std::mutex> lock(probe.mu);
      if (probe.held >= 0 || probe.failed || id < 2 || probe.at_snapshot.count(id) == 0) return;
      probe.held = id;
      // The sources emit three batches after every barrier, so records after this one reach subtask 0
      // while its checkpoint waits here; the deadline only keeps a broken engine from hanging the test.
      const int64_t at = probe.at_snapshot[id];
      probe.moved_on = probe.cv.wait_for(lock, std::chrono::seconds(60), [&] { return probe.processed > at; });
    });
    MiniCluster cluster(conf);
    const JobExecutionResult r = cluster.execute(job, conf);
    EXPECT_TRUE(probe.moved_on);
    EXPECT_TRUE(probe.failed);
    EXPECT_EQ(r.num_restarts, 1);
    EXPECT_EQ(lastSumPerKey(out), expectedSums(kN));
  }
  std::filesystem::remove_all(root);
}

// A failing asynchronous part declines its checkpoint: counted as failed, tolerated up to
// tolerable-failed-checkpoints, and the task goes on (no restart); later checkpoints complete.
TEST(AsyncCheckpointTest, AFailingAsyncPartDeclinesTheCheckpointWithoutFailingTheTask) {
  constexpr int64_t kN = 200;
  Configuration conf = checkpointedConfig();
  conf.set("execution.checkpointing.tolerable-failed-checkpoints", "10");
  FailingSumSerializer::failures = 2;
  Collected out;
  SourceStarts starts;
  const graph::JobGraph job = buildJob(conf, &out, &starts, kN, [] {
    return std::make_unique<BasicCheckpointedKeyedSum<FailingSumSerializer>>();
  });
  MiniCluster cluster(conf);
  const JobExecutionResult r = cluster.execute(job, conf);
  EXPECT_EQ(lastSumPerKey(out), expectedSums(kN));
  ASSERT_TRUE(r.checkpoints.has_value());
  EXPECT_GE(r.checkpoints->number_of_failed_checkpoints, 1);
  EXPECT_LE(r.checkpoints->number_of_failed_checkpoints, 2);
  EXPECT_GE(r.checkpoints->number_of_completed_checkpoints, 1);
  EXPECT_EQ(r.num_restarts, 0);
}

TEST(AsyncCheckpointTest, AFailingAsyncPartBeyondTheToleranceFailsTheJob) {
  Configuration conf = checkpointedConfig();
  conf.set("restart-strategy.type", "none");
  conf.set("execution.checkpointing.tolerable-failed-checkpoints", "0");
  FailingSumSerializer::failures = 1000000;
  Collected out;
  SourceStarts starts;
  const graph::JobGraph job = buildJob(conf, &out, &starts, 200, [] {
    return std::make_unique<BasicCheckpointedKeyedSum<FailingSumSerializer>>();
  });
  MiniCluster cluster(conf);
  try {
    cluster.execute(job, conf);
    ADD_FAILURE() << "the job should have failed";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("tolerable failure threshold"), std::string::npos) << e.what();
  }
  FailingSumSerializer::failures = 0;
}

}  // namespace
}  // namespace sluice::cluster
