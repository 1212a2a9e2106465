#pragma once
// Checkpointed test operators shared by the recovery tests: a source that steps with checkpoints and a
// keyed sum, with the sums expected of them computed by a plain loop.

#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "common/config.h"
#include "common/hash.h"
#include "runtime/network/record_writer.h"
#include "runtime/operators/stream_operator.h"
#include "runtime/state/keyed_state_backend.h"
#include "runtime/state/operator_state_backend.h"
#include "runtime/state/stream_operator_state_context.h"
#include "test_operators.h"

namespace sluice::testing {

// Checkpoints every 10 ms, up to 3 restarts without delay.
inline Configuration checkpointedConfig() {
  Configuration conf;
  conf.set("execution.checkpointing.interval", "10 ms");
  conf.set("restart-strategy.type", "fixed-delay");
  conf.set("restart-strategy.fixed-delay.attempts", "3");
  conf.set("restart-strategy.fixed-delay.delay", "0 ms");
  return conf;
}

// Where each source subtask started, in the order the subtasks opened (over all attempts).
struct SourceStarts {
  std::mutex mu;
  std::vector<std::pair<int, int64_t>> starts;  // (subtask, first value it emits)
};

// 1..n strided over the subtasks (as NumberSource), `batch` values per batch; its position is operator
// state "next". After each `batches_per_checkpoint` batches it waits for a checkpoint before the next one.
class CheckpointedNumberSource : public runtime::SourceOperator {
 public:
  CheckpointedNumberSource(int64_t n, size_t batch, SourceStarts* log, int batches_per_checkpoint = 1)
      : n_(n), batch_(batch), log_(log), batches_per_checkpoint_(batches_per_checkpoint) {}
  void open(const runtime::OperatorContext& ctx, runtime::Output* output) override {
    SourceOperator::open(ctx, output);
    next_state_ = &ctx.state->operatorStateBackend().getListState(
        runtime::state::ListStateDescriptor<int64_t>{"next"});
    next_ = 1 + ctx.subtask_index;
    // Same parallelism in these tests: the subtask gets back its own element.
    if (!next_state_->get().empty()) next_ = next_state_->get().front();
    std::lock_guard<std::mutex> lock(log_->mu);
    log_->starts.emplace_back(ctx.subtask_index, next_);
  }
  runtime::InputStatus emitNext() override {
    if (next_ > n_) return runtime::InputStatus::kEndOfInput;
    if (waiting_for_checkpoint_) return runtime::InputStatus::kNothingAvailable;
    types::RowBatch b(bigintRow(1));
    for (size_t i = 0; i < batch_ && next_ <= n_; ++i) {
      b.column(0).appendLong(next_);
      b.kinds().push_back(types::RowKind::kInsert);
      next_ += ctx_.parallelism;
    }
    output_->collect(std::move(b));
    waiting_for_checkpoint_ = ++batches_since_checkpoint_ >= batches_per_checkpoint_;
    return runtime::InputStatus::kMoreAvailable;
  }
  void snapshotState(int64_t) override {
    next_state_->update({next_});
    waiting_for_checkpoint_ = false;
    batches_since_checkpoint_ = 0;
  }

 private:
  int64_t n_;
  size_t batch_;
  SourceStarts* log_;
  int batches_per_checkpoint_;
  int batches_since_checkpoint_ = 0;
  int64_t next_ = 1;
  bool waiting_for_checkpoint_ = false;
  runtime::state::PartitionableListState<int64_t>* next_state_ = nullptr;
};

// Sums column 1 per key of column 0 in keyed state; emits (key, sum) for every key it holds at the end.
template <typename SumSerializer>
class BasicCheckpointedKeyedSum : public runtime::StreamOperator {
 public:
  void open(const runtime::OperatorContext& ctx, runtime::Output* output) override {
    StreamOperator::open(ctx, output);
    backend_ = &ctx.state->keyedStateBackend();
    sums_ = &backend_->getValueState(runtime::state::ValueStateDescriptor<int64_t, SumSerializer>{"sum"});
  }
  void processBatch(types::RowBatch&& in) override {
    const std::vector<int> key_columns{0};
    for (size_t r = 0; r < in.numRows(); ++r) {
      const int64_t k = in.column(0).getLong(r);
      const std::string key(reinterpret_cast<const char*>(&k), sizeof k);
      backend_->setCurrentKey(key, assignToKeyGroup(runtime::hashKey(in, r, key_columns), ctx_.max_parallelism));
      int64_t* sum = sums_->value();
      if (sum == nullptr) sums_->update(in.column(1).getLong(r));
      else *sum += in.column(1).getLong(r);
    }
  }
  void endInput() override {
    types::RowBatch out(bigintRow(2));
    sums_->forEachKey([&](std::string_view key, int32_t, std::string_view, int64_t& sum) {
      int64_t k;
      std::memcpy(&k, key.data(), sizeof k);
      out.column(0).appendLong(k);
      out.column(1).appendLong(sum);
      out.kinds().push_back(types::RowKind::kInsert);
    });
    output_->collect(std::move(out));
  }

 private:
  runtime::state::KeyedStateBackend* backend_ = nullptr;
  runtime::state::ValueState<int64_t, SumSerializer>* sums_ = nullptr;
};
class CheckpointedKeyedSum : public BasicCheckpointedKeyedSum<runtime::TypeSerializer<int64_t>> {};

// key -> sum of 2v over v in 1..n with v % 5 == key.
inline std::map<int64_t, int64_t> expectedSums(int64_t n) {
  std::map<int64_t, int64_t> m;
  for (int64_t v = 1; v <= n; ++v) m[v % 5] += 2 * v;
  return m;
}

// The last (key, sum) row per key: a sink of a failed attempt may have emitted some keys already.
inline std::map<int64_t, int64_t> lastSumPerKey(Collected& c) {
  std::lock_guard<std::mutex> lock(c.mu);
  std::map<int64_t, int64_t> m;
  for (const auto& row : c.rows) m[row[0]] = row[1];
  return m;
}

}  // namespace sluice::testing
