#pragma once
/// The RowBatch counterpart of SourceReaderOperator: runs a FLIP-27 Source whose records are whole
/// RowBatches (the SQL connectors' sources) in a source task. Each emitted RowBatch goes downstream as it
/// is. Without a watermark generator it emits no watermarks (the SQL WatermarkAssigner downstream does);
/// with one (watermark push-down, Flink's SupportsWatermarkPushDown) it keeps a watermark per split
/// (SplitWatermarks) and emits their minimum after each poll.
///
/// Idleness (Flink's SourceOperator): a subtask of an unbounded source that has no split, or whose splits
/// are all idle (`table.exec.source.idle-timeout`, with a generator), announces WatermarkStatus IDLE, so
/// it does not hold back event time downstream; it announces ACTIVE before its next rows or watermark.
/// Split idleness is measured on an InputActivityClock paused while a batch, watermark or status is
/// downstream (back pressure, chained operators), so a blocked output never makes a split idle.
/// A subtask of a bounded source without a split ends. Threading: one task thread; the enumerator
/// is shared through an ExecutionScopeSlot when one is given, else each subtask has its own (correct for
/// enumerators that assign splits by subtask index, as Flink's static assignment does).
///
/// Checkpoints: the splits and their positions are operator state, restored into the reader on open,
/// and the enumerator skips the splits claimed before the checkpoint (SourceReaderSplitState, whose rule
/// source_sink_operators.h documents).

#include <chrono>
#include <memory>
#include <string>
#include <utility>

#include "runtime/operators/execution_scope.h"
#include "runtime/operators/source_sink_operators.h"
#include "runtime/operators/split_watermarks.h"
#include "runtime/time/input_activity_clock.h"
#include "runtime/time/processing_time_service.h"
#include "types/row_batch.h"

namespace sluice::runtime {

/// Runs a Source of RowBatches (Flink's SourceOperator): asks the enumerator for a split whenever the
/// reader has finished the ones it has, and forwards every batch the reader emits.
template <typename SplitT>
class RowSourceReaderOperator : public SourceOperator {
 public:
  /// `watermarks`: when set, the source generates the watermarks itself, per split (see the file
  /// comment); batches emitted without a split count as one implicit split "".
  RowSourceReaderOperator(std::shared_ptr<const Source<types::RowBatch, SplitT>> source, int source_id = 0,
                          std::shared_ptr<ExecutionScopeSlot> slot = nullptr,
                          std::shared_ptr<const BatchWatermarkGenerator> watermarks = nullptr)
      : source_(std::move(source)),
        source_id_(source_id),
        scope_slot_(std::move(slot)),
        generator_(std::move(watermarks)) {}

  /// Creates (or joins) the enumerator and this subtask's reader, and gives the reader the splits
  /// restored from `ctx.state` (with their positions). Rethrows what they throw.
  void open(const OperatorContext& ctx, Output* output) override {
    SourceOperator::open(ctx, output);
    auto scope = scope_slot_ ? scope_slot_->current() : std::make_shared<ExecutionScope>();
    std::vector<SplitT> restored = split_state_.open(ctx_, source_.get(), *scope, source_id_);
    if (ctx.config != nullptr) {
      const int64_t timeout = ctx.config->get(options::kIdleTimeout);
      split_watermarks_ = SplitWatermarks(timeout);
      backlog_status_ = SourceBacklogStatus::forOperator(ctx);
      pausing_ = generator_ != nullptr && timeout > 0;
    }
    reader_ = source_->createReader(SourceReaderContext{ctx.subtask_index, ctx.parallelism, ctx.config});
    reader_->start();
    if (!restored.empty()) {
      reader_->addSplits(std::move(restored));
      has_split_ = true;
    }
  }

  /// One pollNext of the reader; kEndOfInput once the enumerator has no split left for this subtask.
  /// A reader without work gets every split the enumerator has for it at once (as Flink's enumerators
  /// assign splits in batches), so a reader that reads its splits side by side (Kafka partitions) has
  /// them all; readers that read splits one after another queue them.
  /// The enumerator's backlog status as this subtask last heard it (FLIP-309; false before any report).
  bool isProcessingBacklog() const { return backlog_; }

  InputStatus emitNext() override {
    pickUpBacklogStatus();
    if (!has_split_) {
      while (auto split = split_state_.request(ctx_.subtask_index)) {
        reader_->addSplit(std::move(*split));
        has_split_ = true;
      }
      if (!has_split_) {
        if (source_->isBounded()) return InputStatus::kEndOfInput;
        // An unbounded source gets no "no more splits": the reader waits for work, idle (as Flink's).
        markIdle();
        return InputStatus::kNothingAvailable;
      }
    }
    // Again after the split request: a status set while handing out the split comes before its records.
    pickUpBacklogStatus();
    const InputStatus status = reader_->pollNext(forward_);
    if (status == InputStatus::kEndOfInput) {
      has_split_ = false;
      split_watermarks_.releaseAll();  // every split of the reader is finished
    }
    if (generator_) {
      const int64_t now = activityMs();
      if (auto wm = split_watermarks_.nextWatermark(now)) {
        markActive();
        downstream([&] {
          output_->emitWatermark(Watermark{*wm});
          if (auto a = backlog_status_.onWatermark(*wm, ctx_.processing_time_service)) output_->emitRecordAttributes(*a);
        });
      }
      if (split_watermarks_.allIdle(now)) markIdle();
    }
    return status == InputStatus::kNothingAvailable ? InputStatus::kNothingAvailable : InputStatus::kMoreAvailable;
  }

  /// Writes the reader's splits with their positions into the operator state (between two emitNext
  /// calls, so every row read is downstream already). UserError when the source cannot be checkpointed.
  void snapshotState(int64_t checkpoint_id) override { split_state_.snapshot(checkpoint_id, *reader_); }
  /// Forwarded to the reader (Kafka commits its offsets there).
  void notifyCheckpointComplete(int64_t checkpoint_id) override { reader_->notifyCheckpointComplete(checkpoint_id); }
  /// A finished source processes no backlog: RecordAttributes(not backlog) when it last announced backlog.
  void endInput() override {
    if (auto attributes = backlog_status_.endOfInput()) output_->emitRecordAttributes(*attributes);
  }

  /// Hands a backlog status the enumerator reported since the last call to the reader (FLIP-309).
  void pickUpBacklogStatus() {
    if (auto backlog = split_state_.backlogChange()) {
      backlog_ = *backlog;
      reader_->setIsProcessingBacklog(backlog_);
      if (auto attributes = backlog_status_.setProcessingBacklog(backlog_)) output_->emitRecordAttributes(*attributes);
    }
  }

  void close() override {
    split_state_.close();
    if (reader_) reader_->close();
  }

 protected:
  /// The reader of this subtask (valid after open).
  SourceReader<types::RowBatch, SplitT>* reader() const { return reader_.get(); }

 private:
  // Processing time (ms): the task's clock, so tests can drive idleness by hand.
  int64_t nowMs() const {
    if (ctx_.processing_time_service != nullptr) return ctx_.processing_time_service->currentProcessingTime();
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }

  // The split idleness clock (see the file comment); plain processing time when nothing pauses it.
  int64_t activityMs() const { return activity_.relative(nowMs()); }
  // Runs `f`, a call that goes downstream, with the idleness clock paused.
  template <typename F>
  void downstream(F&& f) {
    if (!pausing_) return f();
    activity_.pause(nowMs());
    struct Resume {
      RowSourceReaderOperator* op;
      ~Resume() { op->activity_.resume(op->nowMs()); }
    } resume{this};
    f();
  }

  void emit(const std::string& split_id, types::RowBatch batch) {
    if (generator_) {
      const std::optional<int64_t> candidate = generator_->evaluate(batch);
      split_watermarks_.onBatch(split_id, candidate, activityMs());
      // Before the first watermark: rows whose own watermark lags are backlog (the subtask's watermark,
      // the minimum over its splits, lags at least as much).
      if (candidate) {
        if (auto a = backlog_status_.beforeFirstRecords(*candidate, ctx_.processing_time_service)) {
          downstream([&] { output_->emitRecordAttributes(*a); });
        }
      }
    }
    markActive();
    downstream([&] { output_->collect(std::move(batch)); });
  }

  void markIdle() {
    downstream([&] { status_.markIdle(output_); });
  }
  void markActive() {
    downstream([&] { status_.markActive(output_); });
  }

  struct Forward final : ReaderOutput<types::RowBatch> {
    explicit Forward(RowSourceReaderOperator* o) : op(o) {}
    RowSourceReaderOperator* op;
    void collect(types::RowBatch batch) override { op->emit(std::string(), std::move(batch)); }
    void collect(types::RowBatch batch, int64_t) override { op->emit(std::string(), std::move(batch)); }
    void createOutputForSplit(const std::string& split_id) override {
      if (op->generator_) op->split_watermarks_.addSplit(split_id, op->activityMs());
    }
    void collectForSplit(const std::string& split_id, types::RowBatch batch) override {
      op->emit(split_id, std::move(batch));
    }
    void releaseOutputForSplit(const std::string& split_id) override { op->split_watermarks_.releaseSplit(split_id); }
  };

  std::shared_ptr<const Source<types::RowBatch, SplitT>> source_;
  int source_id_;
  std::shared_ptr<ExecutionScopeSlot> scope_slot_;
  SourceReaderSplitState<types::RowBatch, SplitT> split_state_;
  bool backlog_ = false;
  std::unique_ptr<SourceReader<types::RowBatch, SplitT>> reader_;
  std::shared_ptr<const BatchWatermarkGenerator> generator_;
  SplitWatermarks split_watermarks_;
  /// What goes downstream as RecordAttributes: the enumerator's status (FLIP-309) OR the watermark lag (FLIP-328).
  SourceBacklogStatus backlog_status_;
  Forward forward_{this};
  bool has_split_ = false;
  WatermarkStatusOutput status_;
  InputActivityClock activity_;
  bool pausing_ = false;  ///< split idleness is on: the downstream calls pause activity_
};

}  // namespace sluice::runtime
