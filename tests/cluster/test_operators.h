#pragma once
// Tiny operators for engine tests: a number source, a map, a keyed sum, a collecting sink.

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "common/error.h"
#include "graph/transformation.h"
#include "runtime/operators/stream_operator.h"

namespace sluice::testing {

inline types::RowType bigintRow(int columns) {
  types::RowType t;
  for (int i = 0; i < columns; ++i) {
    t.names.push_back(fmt::format("f{}", i));
    t.types.push_back(types::LogicalType::bigint());
  }
  return t;
}

// Emits the numbers 1..n (n < 0: forever) whose (v - 1) % parallelism == subtask, `batch` rows per batch,
// as one BIGINT column; a watermark equal to the last value after every batch.
class NumberSource : public runtime::SourceOperator {
 public:
  /// `watermarks` false: no watermark after each batch (only row batches take network buffers).
  NumberSource(int64_t n, size_t batch, bool watermarks = true) : n_(n), batch_(batch), watermarks_(watermarks) {}
  void open(const runtime::OperatorContext& ctx, runtime::Output* output) override {
    SourceOperator::open(ctx, output);
    next_ = 1 + ctx.subtask_index;
  }
  runtime::InputStatus emitNext() override {
    if (n_ >= 0 && next_ > n_) return runtime::InputStatus::kEndOfInput;
    types::RowBatch b(bigintRow(1));
    for (size_t i = 0; i < batch_ && (n_ < 0 || next_ <= n_); ++i) {
      b.column(0).appendLong(next_);
      b.kinds().push_back(types::RowKind::kInsert);
      next_ += ctx_.parallelism;
    }
    const int64_t last = b.column(0).getLong(b.numRows() - 1);
    output_->collect(std::move(b));
    if (watermarks_) output_->emitWatermark(runtime::Watermark{last});
    return runtime::InputStatus::kMoreAvailable;
  }

 private:
  int64_t n_;
  size_t batch_;
  bool watermarks_;
  int64_t next_ = 1;
};

// (v) -> (v % 5, 2 * v); throws UserError on value `fail_at` when > 0.
class KeyAndDoubleMap : public runtime::StreamOperator {
 public:
  explicit KeyAndDoubleMap(int64_t fail_at = 0) : fail_at_(fail_at) {}
  void processBatch(types::RowBatch&& in) override {
    types::RowBatch out(bigintRow(2));
    for (size_t r = 0; r < in.numRows(); ++r) {
      const int64_t v = in.column(0).getLong(r);
      if (v == fail_at_) throw UserError(fmt::format("bad value {} at test.csv:7", v));
      out.column(0).appendLong(v % 5);
      out.column(1).appendLong(2 * v);
      out.kinds().push_back(in.kind(r));
    }
    output_->collect(std::move(out));
  }

 private:
  int64_t fail_at_;
};

// Shared observations of the keyed sum subtasks.
struct KeyedSumLog {
  std::mutex mu;
  std::map<int64_t, std::vector<int>> subtasks_of_key;  // every subtask that saw the key
  std::vector<int64_t> max_watermark_per_subtask = std::vector<int64_t>(16, INT64_MIN);
};

// Sums column 1 per key of column 0; emits (key, sum) rows at endInput.
class KeyedSum : public runtime::StreamOperator {
 public:
  explicit KeyedSum(KeyedSumLog* log) : log_(log) {}
  void processBatch(types::RowBatch&& in) override {
    std::lock_guard<std::mutex> lock(log_->mu);
    for (size_t r = 0; r < in.numRows(); ++r) {
      const int64_t k = in.column(0).getLong(r);
      sums_[k] += in.column(1).getLong(r);
      auto& subs = log_->subtasks_of_key[k];
      if (std::find(subs.begin(), subs.end(), ctx_.subtask_index) == subs.end()) subs.push_back(ctx_.subtask_index);
    }
  }
  void processWatermark(runtime::Watermark mark) override {
    {
      std::lock_guard<std::mutex> lock(log_->mu);
      log_->max_watermark_per_subtask[static_cast<size_t>(ctx_.subtask_index)] = mark.timestamp;
    }
    output_->emitWatermark(mark);
  }
  void endInput() override {
    types::RowBatch out(bigintRow(2));
    for (const auto& [k, s] : sums_) {
      out.column(0).appendLong(k);
      out.column(1).appendLong(s);
      out.kinds().push_back(types::RowKind::kInsert);
    }
    output_->collect(std::move(out));
  }

 private:
  KeyedSumLog* log_;
  std::map<int64_t, int64_t> sums_;
};

// Collects every row (all columns as int64) and can signal the first batch.
struct Collected {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::vector<int64_t>> rows;
  std::vector<int> subtask_of_row;  // the sink subtask that received rows[i]
  int64_t batches = 0;
  bool ended = false;

  void waitForBatches(int64_t n) {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return batches >= n; });
  }
};

class CollectSink : public runtime::StreamOperator {
 public:
  CollectSink(Collected* out, int64_t fail_after_batches = -1) : out_(out), fail_after_(fail_after_batches) {}
  void processBatch(types::RowBatch&& in) override {
    {
      std::lock_guard<std::mutex> lock(out_->mu);
      for (size_t r = 0; r < in.numRows(); ++r) {
        std::vector<int64_t> row;
        for (size_t c = 0; c < in.numColumns(); ++c) row.push_back(in.column(c).getLong(r));
        out_->rows.push_back(std::move(row));
        out_->subtask_of_row.push_back(ctx_.subtask_index);
      }
      ++out_->batches;
    }
    out_->cv.notify_all();
    if (fail_after_ >= 0 && ++seen_ > fail_after_) throw std::runtime_error("sink exploded");
  }
  void endInput() override {
    std::lock_guard<std::mutex> lock(out_->mu);
    out_->ended = true;
  }

 private:
  Collected* out_;
  int64_t fail_after_;
  int64_t seen_ = 0;
};

inline graph::TransformationPtr makeTransformation(int id, std::string name, graph::TransformationKind kind,
                                                   int parallelism,
                                                   std::shared_ptr<const graph::OperatorFactory> factory,
                                                   std::vector<graph::TransformationPtr> inputs = {}) {
  auto t = std::make_shared<graph::Transformation>();
  t->id = id;
  t->name = std::move(name);
  t->kind = kind;
  t->parallelism = parallelism;
  t->factory = std::move(factory);
  t->inputs = std::move(inputs);
  return t;
}

inline graph::TransformationPtr makeHashPartition(int id, graph::TransformationPtr input, std::vector<int> keys) {
  auto t = std::make_shared<graph::Transformation>();
  t->id = id;
  t->name = "Exchange";
  t->kind = graph::TransformationKind::kPartition;
  t->partitioner.strategy = graph::ShipStrategy::kHash;
  t->partitioner.key_columns = std::move(keys);
  t->inputs = {std::move(input)};
  return t;
}

}  // namespace sluice::testing

namespace sluice::testing {

// Emits the values 1..n once (one batch), then reports kNothingAvailable until cancelled.
class TrickleSource : public runtime::SourceOperator {
 public:
  explicit TrickleSource(int64_t n) : n_(n) {}
  runtime::InputStatus emitNext() override {
    if (done_) return runtime::InputStatus::kNothingAvailable;
    done_ = true;
    types::RowBatch b(bigintRow(1));
    for (int64_t v = 1; v <= n_; ++v) {
      b.column(0).appendLong(v);
      b.kinds().push_back(types::RowKind::kInsert);
    }
    output_->collect(std::move(b));
    return runtime::InputStatus::kMoreAvailable;
  }

 private:
  int64_t n_;
  bool done_ = false;
};

// Passes batches through unchanged.
class IdentityMap : public runtime::StreamOperator {
 public:
  void processBatch(types::RowBatch&& in) override { output_->collect(std::move(in)); }
};

}  // namespace sluice::testing

namespace sluice::testing {

// Emits one row and Watermark::kMaxTimestamp itself, then ends.
class SelfFinishingSource : public runtime::SourceOperator {
 public:
  runtime::InputStatus emitNext() override {
    if (done_) return runtime::InputStatus::kEndOfInput;
    done_ = true;
    types::RowBatch b(bigintRow(1));
    b.column(0).appendLong(1);
    b.kinds().push_back(types::RowKind::kInsert);
    output_->collect(std::move(b));
    output_->emitWatermark(runtime::Watermark{runtime::Watermark::kMaxTimestamp});
    return runtime::InputStatus::kMoreAvailable;
  }

 private:
  bool done_ = false;
};

// Counts the watermarks it sees (all subtasks together), forwards everything.
class WatermarkCounter : public runtime::StreamOperator {
 public:
  explicit WatermarkCounter(std::atomic<int>* count) : count_(count) {}
  void processBatch(types::RowBatch&& in) override { output_->collect(std::move(in)); }
  void processWatermark(runtime::Watermark mark) override {
    count_->fetch_add(1);
    output_->emitWatermark(mark);
  }

 private:
  std::atomic<int>* count_;
};

}  // namespace sluice::testing

namespace sluice::testing {

// A gate task threads wait at until the test opens it; the test can wait until one has arrived.
struct Gate {
  std::mutex mu;
  std::condition_variable cv;
  bool arrived = false;
  bool opened = false;

  void arriveAndWait() {
    std::unique_lock<std::mutex> lock(mu);
    arrived = true;
    cv.notify_all();
    cv.wait(lock, [&] { return opened; });
  }
  void waitForArrival() {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return arrived; });
  }
  void open() {
    std::lock_guard<std::mutex> lock(mu);
    opened = true;
    cv.notify_all();
  }
};

// A CollectSink whose snapshotState (the synchronous part of every checkpoint and savepoint, on the task
// thread) waits at `gate`: the snapshot stays in progress until the test opens it.
class GatedSnapshotSink : public CollectSink {
 public:
  GatedSnapshotSink(Collected* out, Gate* gate) : CollectSink(out), gate_(gate) {}
  void snapshotState(int64_t) override { gate_->arriveAndWait(); }

 private:
  Gate* gate_;
};

}  // namespace sluice::testing
