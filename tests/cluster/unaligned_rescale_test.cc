// Rescaling an unaligned checkpoint that holds in-flight data (FLIP-76; Flink's UnalignedCheckpointRescaleITCase):
// Source(2) -HASH(key)-> KeyedSum(2) -> Sink(1), checkpointed under backpressure, restored at -p 1, 2 and 3.
//
// Run 1 is driven by hooks, not timing: the sources emit their burst only after the first checkpoint completed
// (so its barriers are ahead of all data), the KeyedSum subtasks block on their first batch until every source
// took the next checkpoint K (whose unaligned barriers then overtake the queued burst, so K holds in-flight
// data), and any KeyedSum snapshot after K throws, so K stays the latest checkpoint. Run 2 restores K at
// another parallelism: the in-flight records of the HASH edge are routed again by key group, the sources
// emit the splits K had not covered, and the sums per key must equal a plain loop over the input.
#include <gtest/gtest.h>

#include <condition_variable>
#include <filesystem>
#include <mutex>

#include "checkpointed_operators.h"
#include "cluster/mini_cluster.h"
#include "graph/job_graph.h"
#include "progress_wait.h"
#include "test_operators.h"

namespace sluice::cluster {
namespace {

using graph::TransformationKind;
using testing::bigintRow;
using testing::Collected;
using testing::lastSumPerKey;
using testing::makeHashPartition;
using testing::makeTransformation;

constexpr int64_t kSplits = 4;       // split s: the values v in 1..kN with v % kSplits == s
constexpr int64_t kN = 96000;        // 1.5 MB of (key, value) rows: far more than the channels' credit
constexpr int64_t kKeys = 16;        // key = v % kKeys
constexpr int64_t kBatchRows = 2000;  // 32 KB per batch

struct Hooks {
  std::mutex mu;
  std::condition_variable cv;
  bool run1 = false;              // run 1: the gates below apply and the sources never end
  int64_t first_complete = -1;    // id of the first completed checkpoint (run 1)
  std::vector<int64_t> source_snapshot;  // per source subtask: its latest snapshot id
  bool stop = false;              // run 1 may end (a KeyedSum snapshot after K throws)

  template <class Pred>
  bool await(Pred pred) {
    std::unique_lock<std::mutex> lock(mu);
    return cv.wait_for(lock, std::chrono::seconds(30), pred);  // failure guard only
  }
  bool sourcesTookK() const {
    if (first_complete < 0) return false;
    for (int64_t id : source_snapshot) {
      if (id <= first_complete) return false;
    }
    return true;
  }
};

// Emits the rows of its splits (operator list state "splits": the splits not emitted yet) in one burst.
class SplitSource : public runtime::SourceOperator {
 public:
  explicit SplitSource(Hooks* h) : h_(h) {}
  void open(const runtime::OperatorContext& ctx, runtime::Output* output) override {
    SourceOperator::open(ctx, output);
    state_ = &ctx.state->operatorStateBackend().getListState(runtime::state::ListStateDescriptor<int64_t>{"splits"});
    if (ctx.state->isRestored()) {
      splits_ = state_->get();
    } else {
      for (int64_t s = ctx.subtask_index; s < kSplits; s += ctx.parallelism) splits_.push_back(s);
    }
    std::lock_guard<std::mutex> lock(h_->mu);
    may_emit_ = !h_->run1;
  }
  runtime::InputStatus emitNext() override {
    if (!splits_.empty() && may_emit_) {
      for (int64_t s : splits_) {
        types::RowBatch b(bigintRow(2));
        for (int64_t v = s == 0 ? kSplits : s; v <= kN; v += kSplits) {
          b.column(0).appendLong(v % kKeys);
          b.column(1).appendLong(v);
          b.kinds().push_back(types::RowKind::kInsert);
          if (static_cast<int64_t>(b.numRows()) == kBatchRows) {
            output_->collect(std::move(b));
            b = types::RowBatch(bigintRow(2));
          }
        }
        if (b.numRows() > 0) output_->collect(std::move(b));
      }
      splits_.clear();
      return runtime::InputStatus::kMoreAvailable;
    }
    std::lock_guard<std::mutex> lock(h_->mu);
    if (h_->run1 || !splits_.empty()) return runtime::InputStatus::kNothingAvailable;
    return runtime::InputStatus::kEndOfInput;
  }
  void snapshotState(int64_t id) override {
    state_->update(splits_);
    std::lock_guard<std::mutex> lock(h_->mu);
    if (h_->run1) h_->source_snapshot[static_cast<size_t>(ctx_.subtask_index)] = id;
    h_->cv.notify_all();
  }
  void notifyCheckpointComplete(int64_t id) override {
    std::lock_guard<std::mutex> lock(h_->mu);
    if (h_->first_complete < 0) h_->first_complete = id;
    may_emit_ = true;
    h_->cv.notify_all();
  }

 private:
  Hooks* h_;
  std::vector<int64_t> splits_;
  bool may_emit_ = false;
  runtime::state::PartitionableListState<int64_t>* state_ = nullptr;
};

class GatedKeyedSum : public testing::CheckpointedKeyedSum {
 public:
  explicit GatedKeyedSum(Hooks* h) : h_(h) {}
  void processBatch(types::RowBatch&& in) override {
    {
      std::unique_lock<std::mutex> lock(h_->mu);
      if (h_->run1) h_->cv.wait(lock, [&] { return h_->sourcesTookK(); });
    }
    CheckpointedKeyedSum::processBatch(std::move(in));
  }
  void snapshotState(int64_t id) override {
    std::unique_lock<std::mutex> lock(h_->mu);
    if (!h_->run1 || h_->first_complete < 0 || id <= h_->first_complete + 1) return;
    h_->cv.wait(lock, [&] { return h_->stop; });
    throw UserError("test: run 1 ends after checkpoint K");
  }

 private:
  Hooks* h_;
};

graph::JobGraph buildJob(Hooks* h, Collected* out, int parallelism, const Configuration& conf) {
  auto source = makeTransformation(1, "splits", TransformationKind::kSource, parallelism,
                                   runtime::makeOperatorFactory([h] { return std::make_unique<SplitSource>(h); }, true));
  auto hash = makeHashPartition(2, source, {0});
  auto sum = makeTransformation(3, "KeyedSum", TransformationKind::kOneInput, parallelism,
                                runtime::makeOperatorFactory([h] { return std::make_unique<GatedKeyedSum>(h); }), {hash});
  auto sink = makeTransformation(4, "Sink: collect", TransformationKind::kSink, 1,
                                 runtime::makeOperatorFactory([out] { return std::make_unique<testing::CollectSink>(out); }),
                                 {sum});
  return graph::buildJobGraph({sink}, conf, "unaligned-rescale");
}

Configuration baseConfig(int task_managers) {
  Configuration conf;
  conf.set("execution.checkpointing.interval", "100 ms");
  conf.set("execution.checkpointing.unaligned.enabled", "true");
  conf.set("restart-strategy.type", "none");
  // The whole burst fits the sources' share of buffers: they never block and take checkpoint K.
  conf.set("taskmanager.network.memory.max-buffers-per-channel", "64");
  conf.set("execution.buffer-timeout", "0 ms");
  conf.set("local.number-taskmanager", std::to_string(task_managers));
  return conf;
}

std::map<int64_t, int64_t> expectedSums() {
  std::map<int64_t, int64_t> m;
  for (int64_t v = 1; v <= kN; ++v) m[v % kKeys] += v;
  return m;
}

struct RescaleCase {
  int task_managers;
  int restore_parallelism;
};

class UnalignedRescaleTest : public ::testing::TestWithParam<RescaleCase> {};

TEST_P(UnalignedRescaleTest, InFlightDataOfAHashEdgeIsRoutedToTheNewOwnersOfItsKeyGroups) {
  const RescaleCase c = GetParam();
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) /
                                    fmt::format("sluice-unaligned-rescale-{}-{}-{}", ::getpid(), c.task_managers,
                                                c.restore_parallelism);
  std::filesystem::remove_all(dir);

  // Run 1 at -p 2: ends with a failure after checkpoint K, which holds in-flight data.
  std::string path;
  {
    Hooks h;
    h.run1 = true;
    h.source_snapshot.assign(2, -1);
    Configuration conf = baseConfig(c.task_managers);
    conf.set("execution.checkpointing.dir", dir.string());
    conf.set("execution.checkpointing.externalized-checkpoint-retention", "RETAIN_ON_CANCELLATION");
    Collected out;
    MiniCluster cluster(conf);
    auto handle = cluster.start(buildJob(&h, &out, 2, conf), conf);
    ASSERT_TRUE(h.await([&] { return h.sourcesTookK(); }));
    int64_t k;
    {
      std::lock_guard<std::mutex> lock(h.mu);
      k = h.first_complete + 1;
    }
    ASSERT_TRUE(testing::waitForProgress(*handle, [k](const JobProgress& p) {
      return p.checkpoints && p.checkpoints->last_checkpoint_id >= k;
    }));
    const JobProgress p = handle->progress();
    ASSERT_EQ(p.checkpoints->last_checkpoint_id, k);
    EXPECT_TRUE(p.checkpoints->last_checkpoint_unaligned);
    // At least what the KeyedSum subtasks had not read: the burst minus their credit (a few buffers each).
    EXPECT_GT(p.checkpoints->last_checkpoint_persisted_in_flight_bytes, 500 * 1000);
    path = p.checkpoints->last_checkpoint_external_path;
    ASSERT_FALSE(path.empty());
    {
      std::lock_guard<std::mutex> lock(h.mu);
      h.stop = true;
      h.cv.notify_all();
    }
    EXPECT_THROW(handle->wait(), UserError);
  }

  // Run 2: restore K at the new parallelism and run to the end.
  Hooks h;
  Configuration conf = baseConfig(c.task_managers);
  conf.set("execution.state-recovery.path", path);
  Collected out;
  MiniCluster cluster(conf);
  const JobExecutionResult r = cluster.execute(buildJob(&h, &out, c.restore_parallelism, conf), conf);
  EXPECT_GT(r.restored_in_flight_bytes, 500 * 1000);
  EXPECT_EQ(lastSumPerKey(out), expectedSums());
  {
    std::lock_guard<std::mutex> lock(out.mu);
    EXPECT_EQ(out.rows.size(), static_cast<size_t>(kKeys)) << "every key once, from the subtask owning it";
  }
  std::filesystem::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Parallelism, UnalignedRescaleTest,
                         ::testing::Values(RescaleCase{1, 1}, RescaleCase{1, 2}, RescaleCase{1, 3}, RescaleCase{2, 1},
                                           RescaleCase{2, 2}, RescaleCase{2, 3}),
                         [](const ::testing::TestParamInfo<RescaleCase>& i) {
                           return fmt::format("tm{}_p2_to_p{}", i.param.task_managers, i.param.restore_parallelism);
                         });

}  // namespace
}  // namespace sluice::cluster
