#pragma once
/// Window table-valued-function aggregation on event time (FLIP-145; Flink's WindowAggOperator with a
/// SliceAssigner for TUMBLE / HOP / CUMULATE).

#include <cstdint>
#include <memory>
#include <vector>

#include "runtime/operators/stream_operator.h"
#include "table/runtime/aggregate_call.h"

namespace sluice::table {

/// Aggregates insert-only rows per (window, group key) and emits each window's rows once the
/// watermark passes its end.
///
/// Output row: the group key columns, one column per aggregate call, then `window_start` and
/// `window_end`, both TIMESTAMP(3) NOT NULL (ms since the epoch).
///
/// Window assignment from the row time t (ms), TimeWindow.getWindowStartWithOffset:
///  - TUMBLE(size): the one window starting at t - ((t - offset) mod size), mod taken non-negative;
///  - HOP(slide, size): every window [s, s + size) with s = t - ((t - offset) mod slide) - k * slide,
///    k >= 0, that contains t (size / slide windows);
///  - CUMULATE(step, max size): with s the start of t's TUMBLE(max size) window, every window
///    [s, s + k * step), k = 1 .. max size / step, whose end is past t (CumulativeSliceAssigner); its
///    window_start is s (getWindowStart(end) = the max-size window's start of end - 1).
/// A window has fired when `window_end - 1 <= watermark` (TimeWindowUtil.isWindowFired). A row joins
/// every window of its own that has not fired; when all of them fired it is late: dropped and counted
/// in numLateRecordsDropped() and OperatorMetrics (AbstractSliceWindowAggProcessor.processElement drops a row only when
/// the last window of its slice fired).
/// processWatermark(w): when w advances, fires every window with `window_end - 1 <= w` in increasing
/// window_end order, emitting one +I row per key of the window (keys in order of their first row in
/// that window), frees their state, then forwards the watermark. endInput emits nothing: the final
/// Watermark::kMaxTimestamp fires the remaining windows.
///
/// Processing time (`window.proctime`, Flink's proctime SliceAssigners): a row's time is the operator's
/// clock when it arrives (OperatorContext::processing_time_service, else the system clock), so no row is
/// late; each (key, window) has a processing-time timer at window_end - 1, and the ProcessingTimeService
/// fires the windows when its clock reaches that time. Watermarks pass unchanged. endInput fires every
/// pending window, so a bounded input loses none of its rows.
/// State (WindowAggOperator, flink-checkpointing.md §6): per (key, window) the keyed ValueState
/// "window-aggs" in namespace = window end (8 bytes, big-endian), holding the accumulators and the
/// order in which the key first came into the window; keys are KeyCodec bytes of the group key in the
/// key group of runtime::hashKey over the group key columns. Each (key, window) has an event-time timer
/// at window_end - 1 in the timer service "window-timers", which fires it. The current watermark is the
/// UNION operator list state "watermark" (one element per subtask, written by snapshotState); a restore
/// takes the minimum of its elements as the current watermark, so lateness is judged as before.
/// Threading: task thread only.
class WindowAggregateOperator : public runtime::StreamOperator {
 public:
  /// `window.time_index` names the row-time column (TIMESTAMP(3), ms). `group_keys` excludes
  /// window_start / window_end. Throws UserError: TUMBLE with size <= 0 or |offset| >= size; CUMULATE with
  /// step <= 0, max size <= 0 or a max size that is not a multiple of the step; HOP with
  /// slide <= 0 or size <= 0, or a size that is not an integral multiple of the slide (Flink's slicing
  /// HoppingSliceAssigner rejects it the same way); bad column indexes or aggregate argument types.
  WindowAggregateOperator(types::RowType input_type, WindowSpec window, std::vector<int> group_keys,
                          std::vector<AggregateCall> calls);
  ~WindowAggregateOperator() override;

  /// The output row type (see the class comment). Throws like the constructor.
  static types::RowType outputType(const types::RowType& input_type, const std::vector<int>& group_keys,
                                   const std::vector<AggregateCall>& calls);
  const types::RowType& outputType() const { return output_type_; }

  /// Throws UserError on a row that is not +I ("window aggregate does not support update/delete input")
  /// or whose row time is NULL (Flink: "RowTime field should not be null, please convert it to a
  /// non-null long value.").
  /// Registers the states in `ctx.state` (a private context when null) and restores the current
  /// watermark. Throws InputError naming the operator, state and key group when restored state does
  /// not match this query or does not decode.
  void open(const runtime::OperatorContext& ctx, runtime::Output* output) override;
  void processBatch(types::RowBatch&& batch) override;
  void processWatermark(runtime::Watermark mark) override;
  /// Writes the current watermark into the "watermark" list state. Emits nothing.
  void snapshotState(int64_t checkpoint_id) override;
  /// Processing time: fires every pending window (event time: nothing, the final watermark does it).
  void endInput() override;

  /// Rows dropped because every window they belong to had already fired (Flink's metric of that name).
  int64_t numLateRecordsDropped() const { return num_late_records_dropped_; }
  /// Windows holding state (not fired yet) in this subtask; 0 before open(). Walks the state (tests).
  size_t numPendingWindows() const;
  /// The last watermark seen (Watermark::kMinTimestamp before the first one).
  int64_t currentWatermark() const { return current_watermark_; }

 private:
  struct Impl;  // accumulators and state handles (accumulators_internal.h stays out of this header)
  /// Fires the windows whose timers are due at `time` (event time: the watermark; else the clock).
  void fireWindows(bool event_time, int64_t time);
  void scheduleProcessingTimer(int64_t time);
  int64_t processingTime() const;
  types::RowType output_type_;
  WindowSpec window_;
  std::unique_ptr<Impl> impl_;
  int64_t current_watermark_ = runtime::Watermark::kMinTimestamp;
  int64_t num_late_records_dropped_ = 0;
};

/// Factory for WindowAggregateOperator (see its constructor), or for a SESSION window
/// SessionWindowAggregateOperator (session_window_aggregate.h). Validates the arguments now (UserError).
std::shared_ptr<const runtime::StreamOperatorFactory> makeWindowAggregateFactory(
    types::RowType input_type, WindowSpec window, std::vector<int> group_keys, std::vector<AggregateCall> calls);

}  // namespace sluice::table
