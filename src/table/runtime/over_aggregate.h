#pragma once
/// OVER aggregation in streaming mode (Flink's StreamExecOverAggregate and the process functions of
/// flink-table-runtime .../operators/over/): per input row, the row followed by the aggregates over its
/// window frame. Output is insert-only (+I), one row per input row that is not dropped as late.

#include <cstdint>
#include <memory>

#include "runtime/operators/stream_operator.h"
#include "table/runtime/over_spec.h"

namespace sluice::table {

/// Aggregates over `PARTITION BY keys ORDER BY time ROWS|RANGE BETWEEN ... PRECEDING AND CURRENT ROW`.
///
/// Rules, one per Flink function (frames: ROWS n = the n preceding rows and the current one; RANGE t = the
/// rows whose time is in [time - t, time]; RANGE rows of equal time are peers with one result):
///  - event time, UNBOUNDED (RowTimeRowsUnboundedPrecedingFunction / RowTimeRangeUnboundedPrecedingFunction,
///    AbstractRowTimeUnboundedPrecedingOver): a row with time <= the current watermark is late; otherwise
///    it is buffered under its time and the key gets one event-time timer at max(0, watermark + 1). The
///    timer takes the buffered times <= the watermark in increasing order: ROWS accumulates and emits each
///    row in arrival order, RANGE accumulates all rows of one time, then emits them with one result; rows
///    still ahead of the watermark get a timer at watermark + 1.
///  - event time, bounded ROWS (RowTimeRowsBoundedPrecedingFunction): lateness is per key: a row with time
///    <= the last time fired for its key (0 before the first, so rows at or before 1970-01-01 00:00:00
///    are late, as in Flink) is late; otherwise it is buffered with a timer at its time. The timer
///    processes that time's rows in arrival order: once n + 1 rows are in the frame, the oldest buffered
///    row (smallest time, then arrival) is retracted and removed, then the row is accumulated and emitted.
///  - event time, bounded RANGE (RowTimeRangeBoundedPrecedingFunction): lateness as for ROWS. The timer at
///    time T retracts and removes every buffered time < T - t, accumulates T's rows and emits them with
///    one result. State cleanup: each buffered row keeps a cleanup time of at least its time + t + 1;
///    when it must move, a timer is set at time + 1.5 t + 1 (Flink's rule, no timer deleted); a timer at
///    or after the stored cleanup time drops the key's whole state.
///  - processing time, UNBOUNDED (ProcTimeUnboundedPrecedingFunction, ROWS and RANGE alike): each row is
///    accumulated and emitted at once.
///  - processing time, bounded ROWS (ProcTimeRowsBoundedPrecedingFunction): each row is emitted at once;
///    rows are kept under their arrival time and the oldest is retracted once n + 1 are in the frame.
///    (Flink loses track of the oldest row when the frame holds one row, ROWS 0 PRECEDING; here the
///    current row is the oldest then.)
///  - processing time, bounded RANGE (ProcTimeRangeBoundedPrecedingFunction): rows are buffered under
///    their arrival ms with a processing-time timer 1 ms later; the timer retracts rows older than
///    arrival - t, accumulates that ms's rows and emits them with one result. Cleanup as for event-time
///    RANGE, on processing time; a cleanup timer that falls on a data timer (t = 0) emits the data first
///    (Flink would drop it). At the end of a bounded input the pending processing-time timers fire, so no
///    buffered row is lost (Flink does not fire them, FLINK-14231).
/// Aggregates: AggsHandler's COUNT/SUM/AVG/MIN/MAX with Flink's NULL and type rules; bounded frames use
/// the retracting forms (MIN/MAX keep a value -> count map). No idle-state retention
/// (table.exec.state.ttl) yet: an UNBOUNDED or ROWS frame keeps its key's state for good.
///
/// State (keyed by the KeyCodec bytes of the partition keys in the key group of runtime::hashKey over
/// them, the hash of the HASH exchange in front; Flink's state names): ValueState "accState" (the
/// accumulators), ValueState "inputState" (an ordered map time ms -> rows, KeyCodec bytes of the whole
/// input row, in arrival order; not for UNBOUNDED processing time; Flink's is a MapState, but on RocksDB
/// each fired time would leave a tombstone that every later scan of the key passes, quadratic in the
/// rows of a key; the smallest time is its first entry, so Flink's "smallestTSState" is not needed),
/// ValueState<int64> "lastTriggeringTsState" (bounded event time), "processedCountState" (ROWS bounded),
/// "cleanupTsState" (RANGE bounded), and the timer service "user-timers". Everything restores on either
/// backend and at another parallelism; the current watermark is not state (Flink: it restarts at
/// Long.MIN_VALUE, so no row is late until the first watermark after a restore).
/// Threading: task thread only.
class OverAggregateOperator : public runtime::StreamOperator {
 public:
  /// Throws UserError on out-of-range columns, a time column that is not a TIMESTAMP/BIGINT, a negative
  /// `preceding`, or an unsupported aggregate argument type.
  OverAggregateOperator(types::RowType input_type, OverSpec spec);
  ~OverAggregateOperator() override;

  /// Input columns, then one column per call (named by AggregateCall::name, or "EXPR$<i>" when empty).
  static types::RowType outputType(const types::RowType& input_type, const OverSpec& spec);
  const types::RowType& outputType() const { return output_type_; }

  /// Registers the states; restored accumulators that do not fit the calls, or rows that do not decode,
  /// throw InputError naming the operator, state and key group.
  void open(const runtime::OperatorContext& ctx, runtime::Output* output) override;
  /// Throws UserError on a -U/-D/+U row (the planner refuses updating input) or a NULL event time.
  void processBatch(types::RowBatch&& batch) override;
  void processWatermark(runtime::Watermark mark) override;
  /// Processing-time RANGE: fires every pending processing-time timer (see the class comment).
  void endInput() override;

  /// Rows dropped as late (Flink's numLateRecordsDropped; also counted in OperatorMetrics).
  int64_t numLateRecordsDropped() const { return num_late_records_dropped_; }
  /// Keys with accumulators in this subtask (tests); 0 before open().
  size_t numKeys() const;
  /// (key, time) entries of buffered rows in this subtask (tests); 0 before open().
  size_t numBufferedTimes() const;

 private:
  struct Impl;
  /// The task's processing time (ms); the system clock when driven by hand without a timer service.
  int64_t processingTime() const;
  /// Schedules a round of processing-time timers on the task's ProcessingTimeService, once per time.
  void scheduleProcessingTimer(int64_t time);
  void fireProcessingTimers(int64_t now);

  types::RowType output_type_;
  std::unique_ptr<Impl> impl_;
  int64_t num_late_records_dropped_ = 0;
};

/// Factory for OverAggregateOperator; validates the arguments now (UserError).
std::shared_ptr<const runtime::StreamOperatorFactory> makeOverAggregateFactory(types::RowType input_type,
                                                                                OverSpec spec);

}  // namespace sluice::table
