#pragma once
/// SESSION window table-valued-function aggregation on event time (FLINK-24024; Flink's WindowAggOperator
/// with an UnsliceWindowAggProcessor over a SessionUnsliceAssigner and MergingWindowProcessFunction).

#include <cstdint>
#include <memory>
#include <vector>

#include "runtime/operators/stream_operator.h"
#include "table/runtime/aggregate_call.h"
#include "table/runtime/time_window_util.h"

namespace sluice::table {

/// Aggregates insert-only rows per (session, group key) and emits each session's row once the watermark
/// passes its end.
///
/// Output row: the group key columns, one column per aggregate call, then `window_start` and
/// `window_end`, both TIMESTAMP(3) NOT NULL (ms since the epoch), as WindowAggregateOperator.
///
/// Sessions (SessionWindowAssigner, TimeWindow.mergeWindows, MergingWindowSet.addWindow): a row at time t
/// opens the window [t, t + gap); it merges with every session of its key that it intersects or touches
/// (TimeWindow.intersects: `a.start <= b.end && a.end >= b.start`, so [0, 10) and [10, 20) merge), and a
/// merge may bridge several sessions into one covering all of them. Lateness is judged after merging
/// (MergingWindowProcessFunction.assignStateNamespace): a row is late, dropped and counted in
/// numLateRecordsDropped() and OperatorMetrics, only when its window merged with nothing and has fired
/// already (`t + gap - 1 <= watermark`); a row behind the watermark that reaches a pending session joins it.
/// The accumulators of merged sessions are merged into one (AggsHandler::merge, the earlier session's
/// first, so FIRST_VALUE / LAST_VALUE / LISTAGG follow the sessions' time order; rows added later come
/// after them).
/// processWatermark(w): when w advances, fires every session with `window_end - 1 <= w`, emitting one +I
/// row per (key, session) in increasing window_end order and, within one end, in the order the keys
/// first came into their sessions; frees their state, then forwards the watermark. endInput emits
/// nothing: the final Watermark::kMaxTimestamp fires the remaining sessions.
///
/// State (flink-checkpointing.md §6): per key the keyed ValueState "session-windows" (empty namespace)
/// holding the key's pending sessions ordered by start, each with its start, end, arrival number and
/// accumulators (Flink keeps the "session-window-mapping" MapState plus accumulators per state window; one
/// value per key is enough here as a key's sessions never overlap). Each session has an event-time timer
/// at window_end - 1 in the timer service "window-timers" with namespace = window end (8 bytes,
/// big-endian); a merge deletes the merged sessions' timers and registers the new end's. The current
/// watermark is the UNION operator list state "watermark" (restored as its minimum). Keys are KeyCodec
/// bytes of the group key in the key group of runtime::hashKey over the group key columns.
/// Threading: task thread only.
class SessionWindowAggregateOperator : public runtime::StreamOperator {
 public:
  /// `window.kind` must be kSession, `window.size_ms` is the gap (ms) and `window.time_index` the row-time
  /// column (TIMESTAMP(3), ms). `group_keys` excludes window_start / window_end. Throws UserError on a
  /// gap <= 0, bad column indexes or aggregate argument types.
  SessionWindowAggregateOperator(types::RowType input_type, WindowSpec window, std::vector<int> group_keys,
                                 std::vector<AggregateCall> calls);
  ~SessionWindowAggregateOperator() override;

  const types::RowType& outputType() const { return output_type_; }

  /// Registers the states in `ctx.state` (a private context when null) and restores the current
  /// watermark. Throws InputError naming the operator, state and key group when restored state does not
  /// match this query or does not decode.
  void open(const runtime::OperatorContext& ctx, runtime::Output* output) override;
  /// Throws UserError on a row that is not +I or whose row time is NULL (as WindowAggregateOperator).
  void processBatch(types::RowBatch&& batch) override;
  void processWatermark(runtime::Watermark mark) override;
  /// Writes the current watermark into the "watermark" list state. Emits nothing.
  void snapshotState(int64_t checkpoint_id) override;

  /// Rows dropped because their session had fired before they came (Flink's metric of that name).
  int64_t numLateRecordsDropped() const { return num_late_records_dropped_; }
  /// Sessions holding state (not fired yet) in this subtask, over all keys; 0 before open() (tests).
  size_t numPendingWindows() const;
  /// Keys holding a "session-windows" value (tests: state is freed with the last session of a key).
  size_t numKeysWithState() const;
  /// Registered event-time timers (tests: one per pending session).
  size_t numTimers() const;

 private:
  struct Impl;  // accumulators and state handles (accumulators_internal.h stays out of this header)
  types::RowType output_type_;
  WindowSpec window_;
  ShiftTimeZone shift_;  ///< FLIP-162: sessions on the wall clock of window_.time_zone
  std::unique_ptr<Impl> impl_;
  int64_t current_watermark_ = runtime::Watermark::kMinTimestamp;
  int64_t num_late_records_dropped_ = 0;
};

/// Factory for SessionWindowAggregateOperator (see its constructor). Validates the arguments now (UserError).
std::shared_ptr<const runtime::StreamOperatorFactory> makeSessionWindowAggregateFactory(
    types::RowType input_type, WindowSpec window, std::vector<int> group_keys, std::vector<AggregateCall> calls);

}  // namespace sluice::table
