#pragma once
/// The operator behind `WATERMARK FOR rowtime AS expr` (Flink's WatermarkAssignerOperator).

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "runtime/operators/idleness_timer.h"
#include "runtime/operators/source_backlog_status.h"
#include "runtime/operators/split_watermarks.h"
#include "runtime/operators/stream_operator.h"
#include "table/functions/expression.h"
#include "types/row_batch.h"

namespace sluice::table {

class CalcProgram;

/// Forwards every row unchanged and in order, and emits watermarks from a column that already holds
/// the evaluated watermark expression (the planner computes `rowtime - INTERVAL ...` in a Calc in
/// front of this operator, so no expression is evaluated here).
///
/// Rules (WatermarkAssignerOperator):
///  - the candidate watermark is the maximum non-NULL value of the watermark column seen so far; it
///    starts at 0, so a watermark <= 0 is never emitted (Flink's `currentWatermark = 0` in open());
///  - after each batch, a Watermark is emitted when the candidate exceeds the last emitted one (Flink
///    emits every `pipeline.auto-watermark-interval`; per batch is finer and never goes backwards);
///  - a NULL watermark value is ignored; a NULL row time fails the job (UserError);
///  - watermarks from upstream are swallowed, except Watermark::kMaxTimestamp, which is forwarded once;
///  - endInput emits Watermark::kMaxTimestamp unless already forwarded (Flink's finish()), so the
///    end of a bounded input fires every event-time window downstream whichever comes first;
///  - idleness: with `table.exec.source.idle-timeout` > 0 (read from the job configuration at open), a
///    processing-time timer checks whether rows arrived; after the timeout without rows the operator
///    announces WatermarkStatus IDLE (its subtask no longer holds back event time downstream) and
///    ACTIVE again before the next rows or the MAX watermark. The timer runs every
///    IdlenessTimer::checkIntervalMs(timeout). A status from upstream is forwarded.
/// The extra watermark column is usually dropped afterwards: pass `output_columns` to forward only
/// those input columns (in that order), or leave it empty to forward the rows as they are.
/// Threading: task thread only.
class WatermarkAssignerOperator : public runtime::StreamOperator {
 public:
  /// `rowtime_index`: the row-time column (TIMESTAMP(3), ms); `watermark_index`: the column holding
  /// the watermark value (TIMESTAMP(3) or BIGINT, ms). Throws UserError on a negative index.
  WatermarkAssignerOperator(int rowtime_index, int watermark_index, std::vector<int> output_columns = {});

  /// Throws UserError ("RowTime field should not be null, ...") on a NULL row time, and InternalError
  /// when a configured column index is beyond the batch.
  /// Reads the idle timeout and starts the idleness timer (needs ctx.processing_time_service then).
  void open(const runtime::OperatorContext& ctx, runtime::Output* output) override;
  void processBatch(types::RowBatch&& batch) override;
  void processWatermark(runtime::Watermark mark) override;
  void processWatermarkStatus(runtime::WatermarkStatus status) override;
  void endInput() override;
  void close() override;

  /// The largest watermark candidate seen (0 before any; kMaxTimestamp after the end of input).
  int64_t currentWatermark() const { return current_watermark_; }
  /// The last watermark emitted (0 before any).
  int64_t lastEmittedWatermark() const { return last_watermark_; }
  /// The status last announced downstream.
  runtime::WatermarkStatus currentStatus() const { return status_; }

 private:
  void emitMax();
  void emitStatus(runtime::WatermarkStatus status);
  void onIdleCheck(int64_t now_ms);
  void scheduleIdleCheck(int64_t now_ms);

  int rowtime_index_;
  int watermark_index_;
  std::vector<int> output_columns_;
  int64_t current_watermark_ = 0;
  int64_t last_watermark_ = 0;
  runtime::IdlenessTimer idleness_;  ///< disabled (timeout 0) unless the configuration sets one
  runtime::WatermarkStatus status_ = runtime::WatermarkStatus::kActive;
  bool closed_ = false;  ///< stops the idleness timer
  /// FLIP-328: the table is backlog while its watermark lags the wall clock by more than
  /// pipeline.backlog.watermark-lag-threshold (announced downstream as RecordAttributes).
  runtime::SourceBacklogStatus backlog_;
};

/// Folds one batch into a watermark candidate: the maximum of `current` and the non-NULL values of
/// `watermark` (ms). Throws UserError ("RowTime field should not be null, ...") on a NULL in `rowtime`.
/// Shared by the WatermarkAssigner and the watermark pushed into a source.
/// `rows` (optional, the batch the columns belong to or were computed from, row for row) is quoted in the
/// error so a user can find the offending input row.
int64_t maxWatermarkOf(const types::Column& rowtime, const types::Column& watermark, int64_t current,
                       const types::RowBatch* rows = nullptr);

/// The watermark expression pushed into a source (Flink's watermark push-down): evaluates the row time
/// and `WATERMARK FOR` expression over the rows the source produces, as the Calc + WatermarkAssigner
/// would downstream. Thread-safe (evaluate is const and allocates per call).
class RowtimeWatermarkGenerator final : public runtime::BatchWatermarkGenerator {
 public:
  /// `source_type`: the row the source emits; `rowtime`, `watermark`: expressions over that row (the
  /// row-time column and the watermark expression, computed columns already substituted).
  RowtimeWatermarkGenerator(types::RowType source_type, ExprPtr rowtime, ExprPtr watermark);
  ~RowtimeWatermarkGenerator() override;
  std::optional<int64_t> evaluate(const types::RowBatch& batch) const override;

 private:
  std::unique_ptr<const CalcProgram> program_;
};

/// Factory for WatermarkAssignerOperator (see its constructor). Throws UserError like it.
std::shared_ptr<const runtime::StreamOperatorFactory> makeWatermarkAssignerFactory(
    int rowtime_index, int watermark_index, std::vector<int> output_columns = {});

}  // namespace sluice::table
