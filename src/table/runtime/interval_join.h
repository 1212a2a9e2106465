#pragma once
/// Interval (time-bounded) INNER / LEFT / RIGHT / FULL joins of two insert-only inputs, on event or
/// processing time (Flink's RowTimeIntervalJoin and ProcTimeIntervalJoin over TimeIntervalJoin, run by
/// KeyedCoProcessOperator[WithWatermarkDelay]; allowed lateness 0).

#include <memory>
#include <vector>

#include "runtime/operators/stream_operator.h"
#include "runtime/operators/two_input_row_operator.h"
#include "table/runtime/join_spec.h"

namespace sluice::table {

/// Joins its first input (left, processBatch) with its second (right, processBatch2): a left row at time
/// l and a right row at time r of the same join key match when l - r lies in the bounds [lower, upper]
/// and the residual condition holds (the other JoinSpec fields: type, keys, non_equi_condition over
/// left ++ right; the input specs are not used). Both inputs are hash-partitioned on their join keys
/// (none: one subtask). The times are the row time columns of `bounds` (event time) or the processing
/// time a row arrives at.
///
/// Per input row (Flink's TimeIntervalJoin.processElement1/2), with T the operator time (the current
/// watermark, the minimum of both inputs; INT64_MIN before the first; or the processing time now), a
/// row of side S at time t, and the other side's relative sizes (left: -lower, right: upper):
///  - it joins the other side's cached rows of its key with times in [t - other size, t + own size]
///    (NULL keys match nothing), emitting +I[left ++ right] per pair the condition accepts;
///  - it is cached when T < t + own size (rows of the other side that could still match may come),
///    with a cleanup timer at t + own size + 1 (event or processing time);
///  - otherwise, on an outer side, a row that matched nothing is emitted padded at once (+I[row + NULLs]):
///    a late row joins only what is still cached, as Flink's allowedLateness = 0.
/// A cached row that matches a later row of the other side is marked as joined. When the timers of a key
/// fire at time X (the watermark or the clock reaching it), every cached row of that side with
/// t + own size < X leaves the state, and on an outer side each one never joined is emitted padded.
/// Bounds with lower > upper match nothing: rows are not cached, outer rows padded at once.
/// Output: insert-only (+I); rows produced by one input batch or one watermark leave as one batch. Event
/// time: the watermark is held back by max(-lower, upper) (Flink's getMaxOutputDelay; the MAX watermark of
/// a finished input passes unchanged) after the timers it fires; processing time forwards watermarks, and
/// endInput fires the pending cleanup timers, so padded rows of a bounded input are not lost.
///
/// State (flink-checkpointing.md §6), keyed by the KeyCodec bytes of the join key in the key group of
/// runtime::hashKey over the key columns: per side a ValueState `IntervalJoinLeftCache` /
/// `IntervalJoinRightCache` of time → rows (KeyCodec form, each with its joined flag), ordered by time,
/// and the timer service `user-timers` (namespace "l" / "r": the side to clean); the last watermark in
/// the UNION operator list state `watermark` (restored as its minimum), so rows after a restore see the
/// operator time they saw before it. A snapshot at any batch boundary restores, also at another
/// parallelism.
/// Threading: task thread only.
class IntervalJoinOperator : public runtime::StreamOperator, public runtime::TwoInputRowOperator {
 public:
  /// Throws UserError when key lists differ in length or index out of range, the time columns are not
  /// TIMESTAMP / BIGINT columns of the inputs (event time), the join type is semi / anti, or the
  /// condition is not BOOLEAN.
  IntervalJoinOperator(types::RowType left_type, types::RowType right_type, JoinSpec spec, IntervalJoinBounds bounds);
  ~IntervalJoinOperator() override;

  /// Registers the states in `ctx.state` (or a private context when null, see operator_state_internal.h)
  /// and re-arms restored processing-time timers. Throws InputError naming the operator, state and key
  /// group when restored rows do not decode as rows of the inputs.
  void open(const runtime::OperatorContext& ctx, runtime::Output* output) override;
  /// Left input. Throws UserError on a row that is not +I or (event time) whose row time is NULL.
  void processBatch(types::RowBatch&& batch) override;
  /// Right input (runtime::TwoInputRowOperator).
  void processBatch2(types::RowBatch&& batch) override;
  /// Fires the event-time cleanup timers up to the watermark, then emits it held back (event time).
  void processWatermark(runtime::Watermark mark) override;
  /// Processing time: fires every pending cleanup timer (padding what never joined).
  void endInput() override;
  /// Writes the current watermark (the operator time) into the UNION list state `watermark`.
  void snapshotState(int64_t checkpoint_id) override;

  /// Cached rows of a side over all keys (for tests); 0 before open().
  size_t numCachedRows(bool left) const;
  /// Pending cleanup timers (event and processing time, for tests).
  size_t numTimers() const;

 private:
  struct Impl;
  void processInput(const types::RowBatch& batch, bool left);
  void scheduleProcessingTimer(int64_t time);
  void fireProcessingTimers(int64_t now);
  int64_t processingTime() const;
  std::unique_ptr<Impl> impl_;
};

/// Factory of a two-input IntervalJoinOperator; `num_first_input_edges` as makeStreamingJoinFactory's.
/// Validates the arguments now (UserError), so errors surface at plan time.
std::shared_ptr<const runtime::StreamOperatorFactory> makeIntervalJoinFactory(types::RowType left_type,
                                                                              types::RowType right_type,
                                                                              JoinSpec spec, IntervalJoinBounds bounds,
                                                                              int num_first_input_edges);

}  // namespace sluice::table
