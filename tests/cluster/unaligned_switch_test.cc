// A barrier held back on one of two channels (FLIP-76), driven by hooks, not timing: source subtask 1 blocks
// in its first emitNext, so it cannot take the checkpoint's trigger, until the sink has snapshotted; then it
// emits batch X and only after that takes the trigger and sends its barrier. The sink (two channels) gets
// the barrier of channel 0 first:
//  - with execution.checkpointing.aligned-checkpoint-timeout > 0 the checkpoint starts aligned (channel 0
//    blocked) and the sink switches to unaligned when the timeout passes (Flink's alternating handler);
//  - with 0 it is unaligned at once.
// With the timeout X, which channel 1 delivered after the sink's snapshot and before its (aligned) barrier, is
// the sink's input channel state of channel 1 in _metadata, record by record; unaligned at once, source 1's
// barrier overtakes X and X is source 1's output channel state.
#include <gtest/gtest.h>

#include <condition_variable>
#include <filesystem>
#include <mutex>

#include "cluster/mini_cluster.h"
#include "graph/job_graph.h"
#include "progress_wait.h"
#include "runtime/checkpoint/checkpoint_storage.h"
#include "runtime/network/stream_element_codec.h"
#include "test_operators.h"

namespace sluice::cluster {
namespace {

using graph::TransformationKind;
using testing::bigintRow;
using testing::makeHashPartition;
using testing::makeTransformation;

constexpr int64_t kRows = 300;  // X: 1000, 1001, ... (one batch)

struct Hooks {
  std::mutex mu;
  std::condition_variable cv;
  bool sink_snapshotted = false;
  bool finish = false;  // the test has checked checkpoint 1: later ones may complete, the sources end
  int64_t sum = 0;
};

class HoldingSource : public runtime::SourceOperator {
 public:
  explicit HoldingSource(Hooks* h) : h_(h) {}
  runtime::InputStatus emitNext() override {
    std::unique_lock<std::mutex> lock(h_->mu);
    if (ctx_.subtask_index == 1 && !emitted_) {
      // Holds the task thread, so the trigger waits in the mailbox; failure guard only.
      EXPECT_TRUE(h_->cv.wait_for(lock, std::chrono::seconds(30), [&] { return h_->sink_snapshotted; }));
      emitted_ = true;
      lock.unlock();
      types::RowBatch b(bigintRow(2));
      for (int64_t v = 1000; v < 1000 + kRows; ++v) {
        b.column(0).appendLong(0);
        b.column(1).appendLong(v);
        b.kinds().push_back(types::RowKind::kInsert);
      }
      output_->collect(std::move(b));
      return runtime::InputStatus::kMoreAvailable;
    }
    // X stays in the writer until this subtask takes the trigger: an idle source flushes at once, and the
    // coordinator may not have dispatched subtask 1's trigger yet when the sink has snapshotted.
    if (ctx_.subtask_index == 1 && !snapshotted_) return runtime::InputStatus::kMoreAvailable;
    return h_->finish ? runtime::InputStatus::kEndOfInput : runtime::InputStatus::kNothingAvailable;
  }
  void snapshotState(int64_t) override { snapshotted_ = true; }  // the task thread, as emitNext

 private:
  Hooks* h_;
  bool emitted_ = false;
  bool snapshotted_ = false;
};

class SummingSink : public runtime::StreamOperator {
 public:
  explicit SummingSink(Hooks* h) : h_(h) {}
  void processBatch(types::RowBatch&& in) override {
    std::lock_guard<std::mutex> lock(h_->mu);
    for (size_t r = 0; r < in.numRows(); ++r) h_->sum += in.column(1).getLong(r);
  }
  void snapshotState(int64_t id) override {
    std::unique_lock<std::mutex> lock(h_->mu);
    h_->sink_snapshotted = true;
    h_->cv.notify_all();
    // Checkpoint 1 stays the latest completed one while the test reads it.
    if (id > 1) {
      EXPECT_TRUE(h_->cv.wait_for(lock, std::chrono::seconds(30), [&] { return h_->finish; }));
    }
  }

 private:
  Hooks* h_;
};

class HeldBarrierTest : public ::testing::TestWithParam<const char*> {};

TEST_P(HeldBarrierTest, RecordsBeforeTheLateBarrierAreChannelState) {
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / fmt::format("sluice-held-barrier-{}-{}", ::getpid(), GetParam()[0]);
  std::filesystem::remove_all(dir);
  Hooks h;
  Configuration conf;
  conf.set("execution.checkpointing.interval", "20 ms");
  conf.set("execution.checkpointing.unaligned.enabled", "true");
  conf.set("execution.checkpointing.aligned-checkpoint-timeout", GetParam());
  conf.set("execution.checkpointing.dir", dir.string());
  conf.set("execution.checkpointing.externalized-checkpoint-retention", "RETAIN_ON_CANCELLATION");
  // X (one batch, below sluice.batch.size) stays in source 1's writer until its barrier comes: a
  // buffer-timeout flush between X and the trigger would let X reach the sink ahead of the barrier when
  // the task thread is slow to take the trigger.
  conf.set("execution.buffer-timeout", "10 min");
  auto source = makeTransformation(1, "holding", TransformationKind::kSource, 2,
                                   runtime::makeOperatorFactory([&h] { return std::make_unique<HoldingSource>(&h); }, true));
  auto hash = makeHashPartition(2, source, {0});
  auto sink = makeTransformation(3, "Sink: sum", TransformationKind::kSink, 1,
                                 runtime::makeOperatorFactory([&h] { return std::make_unique<SummingSink>(&h); }), {hash});
  MiniCluster cluster(conf);
  auto handle = cluster.start(graph::buildJobGraph({sink}, conf, "held-barrier"), conf);
  ASSERT_TRUE(testing::waitForProgress(*handle, [](const JobProgress& p) {
    return p.checkpoints && p.checkpoints->last_checkpoint_id >= 1;
  }));
  const JobProgress p = handle->progress();
  ASSERT_EQ(p.checkpoints->last_checkpoint_id, 1);
  EXPECT_TRUE(p.checkpoints->last_checkpoint_unaligned);
  ASSERT_EQ(p.checkpoints->last_checkpoint_subtasks.size(), 2u);
  // The sources took it as triggered (aligned when the timeout is set), the sink unaligned.
  EXPECT_EQ(p.checkpoints->last_checkpoint_subtasks[0][0].unaligned, GetParam()[0] == '0');
  EXPECT_TRUE(p.checkpoints->last_checkpoint_subtasks[1][0].unaligned);
  const runtime::checkpoint::CompletedCheckpoint first =
      runtime::checkpoint::FsCheckpointStorage::load(p.checkpoints->last_checkpoint_external_path);
  {
    std::lock_guard<std::mutex> lock(h.mu);
    h.finish = true;
    h.cv.notify_all();
  }
  handle->wait();
  {
    std::lock_guard<std::mutex> lock(h.mu);
    EXPECT_EQ(h.sum, (1000 + 1000 + kRows - 1) * kRows / 2);
  }
  // Where X is: with the timeout, source 1's barrier is aligned and comes behind X, so X is the sink's input
  // channel state; unaligned at once, source 1's barrier overtakes X, still queued in its subpartition, so X
  // is source 1's output channel state.
  const bool switched = GetParam()[0] != '0';
  std::vector<int64_t> recorded;
  int entries = 0;
  const auto read = [&](const std::string& bytes) {
    ++entries;
    runtime::network::forEachChannelStateRecord(bytes, nullptr, [&](runtime::StreamElement&& e) {
      const auto& b = std::get<types::RowBatch>(e);
      for (size_t i = 0; i < b.numRows(); ++i) recorded.push_back(b.column(1).getLong(i));
    });
  };
  for (const auto& [uid, op] : first.operators) {
    for (size_t s = 0; s < op.subtasks.size(); ++s) {
      for (const auto& in : op.subtasks[s].channel.input) {
        EXPECT_TRUE(switched);
        EXPECT_EQ(in.input, 0);
        EXPECT_EQ(in.producer_subtask, 1);
        read(in.bytes);
      }
      for (const auto& out : op.subtasks[s].channel.output) {
        EXPECT_FALSE(switched);
        EXPECT_EQ(s, 1u) << "source subtask 1";
        EXPECT_EQ(out.output, 0);
        EXPECT_EQ(out.consumer_subtask, 0);
        read(out.bytes);
      }
    }
  }
  EXPECT_EQ(entries, 1);
  std::vector<int64_t> x;
  for (int64_t v = 1000; v < 1000 + kRows; ++v) x.push_back(v);
  EXPECT_EQ(recorded, x);
  std::filesystem::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(AlignedCheckpointTimeout, HeldBarrierTest, ::testing::Values("0 ms", "30 ms"),
                         [](const ::testing::TestParamInfo<const char*>& i) {
                           return std::string(i.param[0] == '0' ? "UnalignedAtOnce" : "SwitchAfterTimeout");
                         });

}  // namespace
}  // namespace sluice::cluster
