#pragma once
/// Window joins (FLIP-145; Flink's StreamExecWindowJoin / WindowJoinOperator): two inputs that each went
/// through the same window TVF, joined on equal window_start and window_end plus equi keys. Rows are
/// buffered per key and window until the watermark passes the window's end, then the window's rows are
/// joined at once and dropped. INNER / LEFT / RIGHT / FULL, SEMI / ANTI (left rows with / without a match).

#include <cstdint>
#include <memory>

#include "runtime/operators/stream_operator.h"
#include "runtime/operators/two_input_row_operator.h"
#include "table/runtime/join_spec.h"
#include "table/runtime/time_window_util.h"

namespace sluice::table {

/// Joins its first input (left, processBatch) with its second (right, processBatch2). Both are
/// hash-partitioned on the join keys (none: one subtask); `left_window_end` / `right_window_end` are the
/// window_end columns (TIMESTAMP(3)) of each input. Per input row (+I only, UserError otherwise) with window
/// end e: when e - 1 <= the current watermark (TimeWindowUtil.isWindowFired, the minimum of both inputs'
/// watermarks) the row is late, dropped and counted (numLateRecordsDropped, also in OperatorMetrics);
/// otherwise it is buffered under (key, e) with an event-time timer at e - 1. When the watermark reaches
/// the timer, each buffered left row joins each right row of its key and window the residual condition
/// accepts (NULL keys match nothing), emitting +I[left ++ right]; an outer side's rows without a match
/// are emitted padded with NULLs; SEMI / ANTI emit +I[left] for left rows with / without a match. Output:
/// insert-only, in the window's left arrival order (then the right side's unmatched rows); the watermark
/// is forwarded after the windows it fires. `time_zone` is the windows' shift time zone (WindowSpec::time_zone):
/// window ends are then wall-clock values and "fired" is ShiftTimeZone::isWindowFired, the timers at
/// toEpochMillsForTimer(e - 1).
///
/// State (flink-checkpointing.md §6), keyed by the KeyCodec bytes of the join key in the key group of
/// runtime::hashKey over the key columns: per side a ValueState `left-records` / `right-records` whose
/// namespace is the window end (8 bytes big-endian) and value the side's rows of that window in arrival
/// order (KeyCodec form); event-time timers `window-timers` (namespace = window end); the last watermark
/// in the UNION operator list state `watermark` (restored as its minimum). A snapshot at any batch
/// boundary restores, also at another parallelism.
/// Threading: task thread only.
class WindowJoinOperator : public runtime::StreamOperator, public runtime::TwoInputRowOperator {
 public:
  /// Throws UserError when the key lists differ in length or an index is out of range, a window end
  /// column is not TIMESTAMP / BIGINT, or the condition is not BOOLEAN.
  WindowJoinOperator(types::RowType left_type, types::RowType right_type, JoinSpec spec, int left_window_end,
                     int right_window_end, const std::string& time_zone = {});
  ~WindowJoinOperator() override;

  /// Registers the states in `ctx.state` (or a private context when null). Throws InputError naming the
  /// operator, state and key group when restored rows do not decode as rows of the inputs.
  void open(const runtime::OperatorContext& ctx, runtime::Output* output) override;
  void processBatch(types::RowBatch&& batch) override;
  void processBatch2(types::RowBatch&& batch) override;
  /// Fires the windows whose end - 1 <= the watermark, then forwards it.
  void processWatermark(runtime::Watermark mark) override;
  void snapshotState(int64_t checkpoint_id) override;

  /// Rows dropped as late so far.
  int64_t numLateRecordsDropped() const { return num_late_records_dropped_; }
  /// Buffered rows of a side over all keys and windows (for tests); 0 before open().
  size_t numBufferedRows(bool left) const;

 private:
  struct Impl;
  void processInput(const types::RowBatch& batch, bool left);
  std::unique_ptr<Impl> impl_;
  ShiftTimeZone shift_;
  int64_t num_late_records_dropped_ = 0;
};

/// Factory of a two-input WindowJoinOperator; `num_first_input_edges` as makeStreamingJoinFactory's.
/// Validates the arguments now (UserError), so errors surface at plan time.
std::shared_ptr<const runtime::StreamOperatorFactory> makeWindowJoinFactory(types::RowType left_type,
                                                                            types::RowType right_type, JoinSpec spec,
                                                                            int left_window_end,
                                                                            int right_window_end,
                                                                            int num_first_input_edges,
                                                                            const std::string& time_zone = {});

}  // namespace sluice::table
