// Unaligned checkpoints (FLIP-76) under backpressure, driven step by step from the test: a source emits a
// burst of 8 large batches (about 16 network buffers) at once and then idles; the sink processes one batch per
// permit the test gives. With the data queued in the channel, an unaligned barrier overtakes it and the sink
// snapshots after at most the batches its credit let it read before the barrier was queued, with the rest
// persisted as channel state; an aligned barrier waits behind the whole burst.
#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>

#include "cluster/mini_cluster.h"
#include "graph/job_graph.h"
#include "progress_wait.h"
#include "test_operators.h"

namespace sluice::cluster {
namespace {

using graph::TransformationKind;
using testing::bigintRow;
using testing::makeHashPartition;
using testing::makeTransformation;

constexpr int kBatches = 8;
constexpr int64_t kRowsPerBatch = 5000;  // 40 KB of values: more than one 32 KB buffer per batch

// What the test and the operators share.
struct Gates {
  std::mutex mu;
  std::condition_variable cv;
  int source_emitted_at_snapshot = -1;  // batches the source had emitted at its first snapshot
  bool finish = false;                  // the source may end
  int permits = 0;                      // batches the sink may still process
  int processed = 0;
  int64_t sum = 0;
  int waiting_at = -1;   // the sink waits for a permit after this many batches
  int snapshot_at = -1;  // batches the sink had processed at its first snapshot

  void release(int n) {
    std::lock_guard<std::mutex> lock(mu);
    permits += n;
    cv.notify_all();
  }
  template <class Pred>
  bool await(Pred pred) {
    std::unique_lock<std::mutex> lock(mu);
    return cv.wait_for(lock, std::chrono::seconds(20), pred);  // failure guard only
  }
};

class BurstSource : public runtime::SourceOperator {
 public:
  explicit BurstSource(Gates* g) : g_(g) {}
  runtime::InputStatus emitNext() override {
    if (emitted_ == 0) {
      for (; emitted_ < kBatches; ++emitted_) {
        types::RowBatch b(bigintRow(1));
        for (int64_t v = 0; v < kRowsPerBatch; ++v) {
          b.column(0).appendLong(emitted_ * kRowsPerBatch + v);
          b.kinds().push_back(types::RowKind::kInsert);
        }
        output_->collect(std::move(b));
      }
      return runtime::InputStatus::kMoreAvailable;
    }
    std::lock_guard<std::mutex> lock(g_->mu);
    return g_->finish ? runtime::InputStatus::kEndOfInput : runtime::InputStatus::kNothingAvailable;
  }
  void snapshotState(int64_t) override {
    std::lock_guard<std::mutex> lock(g_->mu);
    if (g_->source_emitted_at_snapshot < 0) g_->source_emitted_at_snapshot = emitted_;
    g_->cv.notify_all();
  }

 private:
  Gates* g_;
  int emitted_ = 0;
};

class GatedSink : public runtime::StreamOperator {
 public:
  explicit GatedSink(Gates* g) : g_(g) {}
  void processBatch(types::RowBatch&& in) override {
    std::unique_lock<std::mutex> lock(g_->mu);
    g_->waiting_at = g_->processed;
    g_->cv.notify_all();
    g_->cv.wait(lock, [&] { return g_->permits > 0; });
    --g_->permits;
    g_->waiting_at = -1;
    ++g_->processed;
    for (size_t r = 0; r < in.numRows(); ++r) g_->sum += in.column(0).getLong(r);
    g_->cv.notify_all();
  }
  void snapshotState(int64_t) override {
    std::lock_guard<std::mutex> lock(g_->mu);
    if (g_->snapshot_at < 0) g_->snapshot_at = g_->processed;
    g_->cv.notify_all();
  }

 private:
  Gates* g_;
};

graph::JobGraph buildJob(Gates* g, const Configuration& conf) {
  auto source = makeTransformation(1, "burst", TransformationKind::kSource, 1,
                                   runtime::makeOperatorFactory([g] { return std::make_unique<BurstSource>(g); }, true));
  auto hash = makeHashPartition(2, source, {0});
  auto sink = makeTransformation(3, "Sink: gated", TransformationKind::kSink, 1,
                                 runtime::makeOperatorFactory([g] { return std::make_unique<GatedSink>(g); }), {hash});
  return graph::buildJobGraph({sink}, conf, "backpressured");
}

Configuration backpressureConfig(bool unaligned, int task_managers) {
  Configuration conf;
  conf.set("execution.checkpointing.interval", "50 ms");
  conf.set("execution.checkpointing.unaligned.enabled", unaligned ? "true" : "false");
  // The whole burst fits the producer's share of buffers: the source never blocks and takes its snapshot.
  conf.set("taskmanager.network.memory.max-buffers-per-channel", "64");
  conf.set("execution.buffer-timeout", "0 ms");
  conf.set("local.number-taskmanager", std::to_string(task_managers));
  return conf;
}

// Gives the sink one permit at a time until it snapshots; returns the batches it had processed then.
int releaseUntilSnapshot(Gates& g) {
  int from;
  {
    std::lock_guard<std::mutex> lock(g.mu);
    from = g.processed;
  }
  for (int i = from; i < kBatches; ++i) {
    // The sink waits for a permit after i batches, or has snapshotted.
    EXPECT_TRUE(g.await([&] { return g.snapshot_at >= 0 || g.waiting_at == i; })) << "sink stuck at " << i;
    {
      std::lock_guard<std::mutex> lock(g.mu);
      if (g.snapshot_at >= 0) return g.snapshot_at;
    }
    g.release(1);
  }
  EXPECT_TRUE(g.await([&] { return g.snapshot_at >= 0; }));
  std::lock_guard<std::mutex> lock(g.mu);
  return g.snapshot_at;
}

int64_t expectedSum() {
  const int64_t n = kBatches * kRowsPerBatch;
  return n * (n - 1) / 2;
}

class UnalignedBackpressureTest : public ::testing::TestWithParam<int> {};

TEST_P(UnalignedBackpressureTest, CompletesAfterAFewBatchesWithTheRestPersisted) {
  Gates g;
  const Configuration conf = backpressureConfig(true, GetParam());
  MiniCluster cluster(conf);
  auto handle = cluster.start(buildJob(&g, conf), conf);
  ASSERT_TRUE(g.await([&] { return g.source_emitted_at_snapshot >= 0; }));
  ASSERT_EQ(g.source_emitted_at_snapshot, kBatches) << "the first checkpoint came before the burst";
  const int at = releaseUntilSnapshot(g);
  // Credit (2 buffers per channel, 8 floating over TCP) bounds what the sink had read before the barrier was
  // queued ahead of the rest.
  EXPECT_LE(at, 5);
  ASSERT_TRUE(testing::waitForProgress(*handle, [](const JobProgress& p) {
    return p.checkpoints && p.checkpoints->number_of_completed_checkpoints >= 1;
  }));
  {
    // The sink waits for a permit: no later checkpoint can complete, these are the first one's figures.
    const JobProgress p = handle->progress();
    EXPECT_TRUE(p.checkpoints->last_checkpoint_unaligned);
    // At least the batches the sink had not read: (8 - 5) * 40 KB.
    EXPECT_GE(p.checkpoints->last_checkpoint_persisted_in_flight_bytes, (kBatches - 5) * kRowsPerBatch * 8);
    ASSERT_EQ(p.checkpoints->last_checkpoint_subtasks.size(), 2u);
    EXPECT_TRUE(p.checkpoints->last_checkpoint_subtasks[1][0].unaligned);
  }
  {
    std::lock_guard<std::mutex> lock(g.mu);
    g.finish = true;
  }
  g.release(1 << 20);
  handle->wait();
  std::lock_guard<std::mutex> lock(g.mu);
  EXPECT_EQ(g.processed, kBatches);
  EXPECT_EQ(g.sum, expectedSum());
}

TEST_P(UnalignedBackpressureTest, AnAlignedCheckpointWaitsForTheWholeBacklog) {
  Gates g;
  const Configuration conf = backpressureConfig(false, GetParam());
  MiniCluster cluster(conf);
  auto handle = cluster.start(buildJob(&g, conf), conf);
  ASSERT_TRUE(g.await([&] { return g.source_emitted_at_snapshot >= 0; }));
  ASSERT_EQ(g.source_emitted_at_snapshot, kBatches) << "the first checkpoint came before the burst";
  g.release(3);
  ASSERT_TRUE(g.await([&] { return g.waiting_at == 3; }));
  EXPECT_EQ(handle->progress().checkpoints->number_of_completed_checkpoints, 0);
  EXPECT_EQ(g.snapshot_at, -1);
  EXPECT_EQ(releaseUntilSnapshot(g), kBatches);
  {
    std::lock_guard<std::mutex> lock(g.mu);
    g.finish = true;
  }
  g.release(1 << 20);
  const JobExecutionResult r = handle->wait();
  ASSERT_TRUE(r.checkpoints.has_value());
  EXPECT_FALSE(r.checkpoints->last_checkpoint_unaligned);
  EXPECT_EQ(r.checkpoints->last_checkpoint_persisted_in_flight_bytes, 0);
  std::lock_guard<std::mutex> lock(g.mu);
  EXPECT_EQ(g.sum, expectedSum());
}

INSTANTIATE_TEST_SUITE_P(TaskManagers, UnalignedBackpressureTest, ::testing::Values(1, 2));

// A source whose output is full still takes the checkpoint (Flink runs mail while it waits for output
// availability): the sink does not read a single batch before the source's snapshot, so with the source
// blocked inside a buffer request the checkpoint could never start. Batches of 100 rows (1.6 KB) fit in one
// buffer, so the source never waits in the middle of one.
struct FullOutput {
  std::mutex mu;
  std::condition_variable cv;
  bool source_snapshotted = false;
  bool finish = false;
  int64_t emitted = 0;  // rows; values 0, 1, 2, ...
  int64_t sum = 0;
};

class EndlessSource : public runtime::SourceOperator {
 public:
  explicit EndlessSource(FullOutput* f) : f_(f) {}
  runtime::InputStatus emitNext() override {
    {
      std::lock_guard<std::mutex> lock(f_->mu);
      if (f_->finish) return runtime::InputStatus::kEndOfInput;
    }
    types::RowBatch b(bigintRow(2));
    for (int i = 0; i < 100; ++i, ++next_) {
      b.column(0).appendLong(next_ % 7);
      b.column(1).appendLong(next_);
      b.kinds().push_back(types::RowKind::kInsert);
    }
    output_->collect(std::move(b));
    std::lock_guard<std::mutex> lock(f_->mu);
    f_->emitted = next_;
    return runtime::InputStatus::kMoreAvailable;
  }
  void snapshotState(int64_t) override {
    std::lock_guard<std::mutex> lock(f_->mu);
    f_->source_snapshotted = true;
    f_->cv.notify_all();
  }

 private:
  FullOutput* f_;
  int64_t next_ = 0;
};

class WaitingSink : public runtime::StreamOperator {
 public:
  explicit WaitingSink(FullOutput* f) : f_(f) {}
  void processBatch(types::RowBatch&& in) override {
    std::unique_lock<std::mutex> lock(f_->mu);
    // Failure guard only: without the fix the source never snapshots.
    EXPECT_TRUE(f_->cv.wait_for(lock, std::chrono::seconds(20), [&] { return f_->source_snapshotted; }))
        << "the back pressured source did not take the checkpoint";
    for (size_t r = 0; r < in.numRows(); ++r) f_->sum += in.column(1).getLong(r);
  }

 private:
  FullOutput* f_;
};

TEST_P(UnalignedBackpressureTest, ASourceWithAFullOutputStillTakesTheCheckpoint) {
  FullOutput f;
  Configuration conf;
  conf.set("execution.checkpointing.interval", "20 ms");
  conf.set("execution.checkpointing.unaligned.enabled", "true");
  conf.set("execution.buffer-timeout", "0 ms");
  conf.set("local.number-taskmanager", std::to_string(GetParam()));
  auto source = makeTransformation(1, "endless", TransformationKind::kSource, 1,
                                   runtime::makeOperatorFactory([&f] { return std::make_unique<EndlessSource>(&f); }, true));
  auto hash = makeHashPartition(2, source, {0});
  auto sink = makeTransformation(3, "Sink: waiting", TransformationKind::kSink, 1,
                                 runtime::makeOperatorFactory([&f] { return std::make_unique<WaitingSink>(&f); }), {hash});
  MiniCluster cluster(conf);
  auto handle = cluster.start(graph::buildJobGraph({sink}, conf, "full-output"), conf);
  ASSERT_TRUE(testing::waitForProgress(*handle, [](const JobProgress& p) {
    return p.checkpoints && p.checkpoints->number_of_completed_checkpoints >= 1;
  }));
  {
    std::lock_guard<std::mutex> lock(f.mu);
    f.finish = true;
  }
  const JobExecutionResult r = handle->wait();
  ASSERT_TRUE(r.checkpoints.has_value());
  EXPECT_GE(r.checkpoints->number_of_completed_checkpoints, 1);
  std::lock_guard<std::mutex> lock(f.mu);
  EXPECT_GT(f.emitted, 0);
  EXPECT_EQ(f.sum, f.emitted * (f.emitted - 1) / 2);
}

}  // namespace
}  // namespace sluice::cluster
