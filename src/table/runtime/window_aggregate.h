#pragma once
/// Window table-valued-function aggregation on event time (FLIP-145; Flink's WindowAggOperator with a
/// SliceAssigner for TUMBLE / HOP).

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
///    k >= 0, that contains t (size / slide windows).
/// A window has fired when `window_end - 1 <= watermark` (TimeWindowUtil.isWindowFired). A row joins
/// every window of its own that has not fired; when all of them fired it is late: dropped and counted
/// in numLateRecordsDropped() (AbstractSliceWindowAggProcessor.processElement drops a row only when
/// the last window of its slice fired).
/// processWatermark(w): when w advances, fires every window with `window_end - 1 <= w` in increasing
/// window_end order, emitting one +I row per key of the window (keys in order of their first row in
/// that window), frees their state, then forwards the watermark. endInput emits nothing: the final
/// Watermark::kMaxTimestamp fires the remaining windows.
/// Threading: task thread only.
class WindowAggregateOperator : public runtime::StreamOperator {
 public:
  /// `window.time_index` names the row-time column (TIMESTAMP(3), ms). `group_keys` excludes
  /// window_start / window_end. Throws UserError: TUMBLE with size <= 0 or |offset| >= size; HOP with
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
  void processBatch(types::RowBatch&& batch) override;
  void processWatermark(runtime::Watermark mark) override;

  /// Rows dropped because every window they belong to had already fired (Flink's metric of that name).
  int64_t numLateRecordsDropped() const { return num_late_records_dropped_; }
  /// Windows holding state (not fired yet).
  size_t numPendingWindows() const;
  /// The last watermark seen (Watermark::kMinTimestamp before the first one).
  int64_t currentWatermark() const { return current_watermark_; }

 private:
  struct Impl;  // per-window accumulators (accumulators_internal.h stays out of this header)
  types::RowType output_type_;
  WindowSpec window_;
  std::unique_ptr<Impl> impl_;
  int64_t current_watermark_ = runtime::Watermark::kMinTimestamp;
  int64_t num_late_records_dropped_ = 0;
};

/// Factory for WindowAggregateOperator (see its constructor). Validates the arguments now (UserError).
std::shared_ptr<const runtime::StreamOperatorFactory> makeWindowAggregateFactory(
    types::RowType input_type, WindowSpec window, std::vector<int> group_keys, std::vector<AggregateCall> calls);

}  // namespace sluice::table
