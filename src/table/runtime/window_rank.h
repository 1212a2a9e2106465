#pragma once
/// Window Top-N and window deduplication (Flink's StreamExecWindowRank / WindowRankOperator with
/// WindowRankProcessor and TopNRecordsCombiner, StreamExecWindowDeduplicate /
/// RowTimeWindowDeduplicateProcessor): `ROW_NUMBER() OVER (PARTITION BY window_start, window_end, k...
/// ORDER BY ...)` filtered to a constant rank range, over the output of a window TVF, a window aggregation
/// or a window join. Nothing is emitted before a window fires; then its final Top-N leaves at once,
/// insert-only, and its state is dropped.
///
/// Rules, as Flink's operators (flink-table-runtime .../operators/rank/window/ and
/// .../deduplicate/window/), event time only:
///  - A row (+I only; UserError "Window rank does not support input RowKind: -U" otherwise) belongs to the
///    window ending at its `window_end` column (TIMESTAMP(3), ms). When `window_end - 1 <= watermark`
///    (TimeWindowUtil.isWindowFired) the window has fired: the row is late, dropped and counted
///    (numLateRecordsDropped, also in OperatorMetrics). Otherwise it joins the window's rows of its partition
///    key (the PARTITION BY columns other than window_start / window_end) and an event-time timer at
///    window_end - 1 is registered.
///  - Top-N: rows rank by the sort key (SortKeyCodec order); rows with equal sort keys in arrival order. Only
///    the best rank_end rows of a (key, window) are kept (a row ranked below them can never come back, since
///    rows only arrive). When the watermark reaches the timer, rows ranked rank_start..rank_end are emitted
///    as +I, each followed by its rank (BIGINT NOT NULL) when `spec.output_rank_number`.
///  - Deduplication (`deduplicate`, Top-1 on the row time `spec.order[0].column`): keep first keeps the row
///    with the smallest row time (the first of equal ones), keep last (`spec.keep_last`) the one with the
///    largest row time, the last of equal ones (DeduplicateFunctionHelper.isDuplicate: a row replaces the
///    kept one when its row time is >= for keep last, < for keep first). The kept row is emitted when the
///    window fires.
/// Output order: windows by end, keys of one window in key-byte order (the timers' order), rows by rank.
/// Watermarks are forwarded after the windows they fire. Threading: task thread only. The input must be
/// hash-partitioned on the partition keys (all in one subtask when there are none).
///
/// State (flink-checkpointing.md §6), keyed by the KeyCodec bytes of the partition keys in the key group of
/// runtime::hashKey over them: ValueState "window-rank" whose namespace is the window end (8 bytes
/// big-endian) and value the (key, window)'s kept rows as a TopNBuffer (sort key → rows in arrival order);
/// event-time timers "window-timers" at window_end - 1 (namespace = window end); the last watermark in the
/// UNION operator list state "watermark" (restored as its minimum). A snapshot at any batch boundary
/// restores, also at another parallelism and into the other backend.
#include <cstdint>
#include <memory>

#include "runtime/operators/stream_operator.h"
#include "table/runtime/rank_spec.h"
#include "table/runtime/time_window_util.h"
#include "types/row_batch.h"

namespace sluice::table {

class WindowRankOperator : public runtime::StreamOperator {
 public:
  /// `spec.partition_keys` exclude window_start / window_end; `window_end` is the input's window_end column.
  /// Throws UserError when a column is out of range, window_end is not a TIMESTAMP / BIGINT, the range is
  /// not 1 <= start <= end (a deduplication must be 1..1 on one ORDER BY column), or the rank type is not
  /// ROW_NUMBER ("RANK() function is not supported on Window TopN currently, ...", as Flink).
  /// `time_zone`: the windows' shift time zone (WindowSpec::time_zone); window ends are then wall-clock
  /// values, fired by ShiftTimeZone::isWindowFired.
  WindowRankOperator(types::RowType input_type, RankSpec spec, int window_end, bool deduplicate,
                     const std::string& time_zone = {});
  ~WindowRankOperator() override;

  /// Registers the states in `ctx.state` (a private context when null) and restores the watermark. Throws
  /// InputError naming the operator, state and key group when restored bytes do not decode for this input.
  void open(const runtime::OperatorContext& ctx, runtime::Output* output) override;
  void processBatch(types::RowBatch&& batch) override;
  /// Fires the windows whose end - 1 <= the watermark, then forwards it.
  void processWatermark(runtime::Watermark mark) override;
  /// Writes the current watermark into the "watermark" list state. Emits nothing.
  void snapshotState(int64_t checkpoint_id) override;

  /// Rows dropped because their window had fired.
  int64_t numLateRecordsDropped() const { return num_late_records_dropped_; }
  /// Rows kept over all keys and windows of this subtask (tests); 0 before open().
  size_t numBufferedRows() const;

  /// The output row type: `input` (+ "w0$o0" BIGINT NOT NULL when the rank number is output).
  static types::RowType outputType(const types::RowType& input, const RankSpec& spec);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  ShiftTimeZone shift_;
  int64_t num_late_records_dropped_ = 0;
};

/// Factory for WindowRankOperator; validates the arguments now (UserError).
std::shared_ptr<const runtime::StreamOperatorFactory> makeWindowRankFactory(types::RowType input_type, RankSpec spec,
                                                                            int window_end, bool deduplicate,
                                                                            const std::string& time_zone = {});

}  // namespace sluice::table
