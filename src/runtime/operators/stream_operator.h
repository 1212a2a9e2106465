#pragma once
/// Operator interfaces (Flink's StreamOperator / OneInputStreamOperator / SourceOperator), batch at a time.
/// Threading: every method is called only from the owning task's thread, so operators need no locks.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "graph/transformation.h"
#include "runtime/stream_element.h"

namespace sluice {
class Configuration;
}

namespace sluice::runtime {

/// Where an operator sends its output: the next chained operator, or the task's record writer.
class Output {
 public:
  virtual ~Output() = default;
  /// Hands a batch downstream. Empty batches may be dropped by the callee.
  virtual void collect(types::RowBatch&& batch) = 0;
  virtual void emitWatermark(Watermark mark) = 0;
};

/// Counters an operator updates (read by progress reporting from other threads).
struct OperatorMetrics {
  std::atomic<int64_t> num_records_in{0};
  std::atomic<int64_t> num_records_out{0};
};

/// Facts about the running subtask, fixed for its lifetime.
struct OperatorContext {
  int subtask_index = 0;         ///< 0-based
  int parallelism = 1;
  int max_parallelism = 128;
  std::string task_name;         ///< e.g. "Source: flights -> Calc (2/4)"
  std::string operator_name;
  const Configuration* config = nullptr;  ///< job configuration, read-only
  OperatorMetrics* metrics = nullptr;     ///< never null once open() is called
};

/// An operator with one logical input (a union of channels counts as one input).
class StreamOperator {
 public:
  virtual ~StreamOperator() = default;
  /// Called once before any element. `output` outlives the operator.
  virtual void open(const OperatorContext& ctx, Output* output) {
    ctx_ = ctx;
    output_ = output;
  }
  /// Processes a batch of rows (with their RowKinds) in order.
  virtual void processBatch(types::RowBatch&& batch) = 0;
  /// Event time advanced. Default: forward. Operators with timers fire them first.
  virtual void processWatermark(Watermark mark) { output_->emitWatermark(mark); }
  /// All input has been consumed (bounded input; Flink's BoundedOneInput.endInput). Flush buffered state.
  virtual void endInput() {}
  /// Releases resources; called after endInput on success, or alone on failure/cancel.
  virtual void close() {}

 protected:
  OperatorContext ctx_;
  Output* output_ = nullptr;
};

/// Result of SourceOperator::emitNext.
enum class InputStatus { kMoreAvailable, kNothingAvailable, kEndOfInput };

/// A source: the head of a source task, driven by the task loop (FLIP-27's SourceOperator role).
class SourceOperator : public StreamOperator {
 public:
  void processBatch(types::RowBatch&&) override {}
  /// Emits at most one batch (and watermarks) to the output. Must not block for long: return
  /// kNothingAvailable when no data is ready (e.g. rate limiting) so the task can run mails.
  /// Throws UserError on bad input (with file:line).
  virtual InputStatus emitNext() = 0;
};

/// Creates the operator instance of one subtask. Shared by all subtasks; must be thread-safe (const).
class StreamOperatorFactory : public graph::OperatorFactory {
 public:
  virtual std::unique_ptr<StreamOperator> createOperator() const = 0;
};

/// A factory from a lambda, for operators that need no extra description.
template <typename Fn>
class LambdaOperatorFactory : public StreamOperatorFactory {
 public:
  LambdaOperatorFactory(Fn fn, bool is_source) : fn_(std::move(fn)), is_source_(is_source) {}
  std::unique_ptr<StreamOperator> createOperator() const override { return fn_(); }
  bool isSource() const override { return is_source_; }
  graph::ChainingStrategy chainingStrategy() const override {
    return is_source_ ? graph::ChainingStrategy::kHead : graph::ChainingStrategy::kAlways;
  }

 private:
  Fn fn_;
  bool is_source_;
};

/// makeOperatorFactory([captures]{ return std::make_unique<MyOp>(...); })
template <typename Fn>
std::shared_ptr<const StreamOperatorFactory> makeOperatorFactory(Fn fn, bool is_source = false) {
  return std::make_shared<LambdaOperatorFactory<Fn>>(std::move(fn), is_source);
}

}  // namespace sluice::runtime
