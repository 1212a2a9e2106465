#pragma once
/// Temporal sort in streaming mode (Flink's StreamExecTemporalSort): `ORDER BY time [, other ...]` without
/// LIMIT, the first column an ascending time attribute. Runs in one subtask (GLOBAL exchange in front).
///
/// Rules, as Flink's operators (flink-table-runtime .../operators/sort/), input insert-only:
///  - row time (RowTimeSortOperator): a row whose time is <= the last time fired (0 before the first, so
///    rows at or before 1970-01-01 00:00:00 are late, as in Flink) is dropped and counted as late
///    (numLateRecordsDropped); otherwise it is buffered under its time with an event-time timer there.
///    A watermark fires the buffered times it passes in increasing order: each time's rows are emitted
///    (+I) sorted by the other ORDER BY columns (stable: ties keep their arrival order), then forgotten.
///    Watermarks are forwarded after the rows they fired.
///  - processing time (ProcTimeSortOperator): with other ORDER BY columns each row is buffered and a
///    processing-time timer set 1 ms later; the timer emits every buffered row sorted by those columns.
///    Ordered by the processing time alone, rows pass in arrival order (Flink plans no operator then).
///    At the end of a bounded input the pending processing-time timer fires, so no buffered row is lost
///    (Flink does not fire it, FLINK-14231).
/// Output rows have the input's type; the time attribute stays one.
///
/// State (one key, Flink's names): MapState "dataState" time -> rows (row time; the sort key bytes of the
/// other columns and the row's KeyCodec bytes, in arrival order), ValueState "lastTriggeringTsState",
/// ListState "dataState" (processing time), and the timer service "user-timers". Restores on either
/// backend. Threading: task thread only.

#include <cstdint>
#include <memory>
#include <vector>

#include "runtime/operators/stream_operator.h"
#include "table/runtime/rank_spec.h"
#include "types/row_batch.h"

namespace sluice::table {

class TemporalSortOperator : public runtime::StreamOperator {
 public:
  /// `order[0]`: the time attribute (ascending); `rowtime`: it is a row time, else processing time.
  /// Throws UserError on an out-of-range column, a descending time column, or a row-time column that is
  /// not a TIMESTAMP / TIMESTAMP_LTZ.
  TemporalSortOperator(types::RowType input_type, std::vector<SortField> order, bool rowtime);
  ~TemporalSortOperator() override;
  /// Registers the states; restored rows that do not decode throw InputError naming operator and state.
  void open(const runtime::OperatorContext& ctx, runtime::Output* output) override;
  /// Throws UserError on a -U/+U/-D row or a NULL row time.
  void processBatch(types::RowBatch&& batch) override;
  void processWatermark(runtime::Watermark mark) override;
  void endInput() override;

  /// Rows dropped as late (also counted in OperatorMetrics).
  int64_t numLateRecordsDropped() const { return num_late_records_dropped_; }
  /// Rows buffered in this subtask (tests); 0 before open().
  size_t numBufferedRows() const;

 private:
  struct Impl;
  int64_t processingTime() const;
  void scheduleProcessingTimer(int64_t time);
  void fireProcessingTimers(int64_t now);

  std::unique_ptr<Impl> impl_;
  int64_t num_late_records_dropped_ = 0;
};

/// Factory for TemporalSortOperator; validates the arguments now (UserError).
std::shared_ptr<const runtime::StreamOperatorFactory> makeTemporalSortFactory(types::RowType input_type,
                                                                               std::vector<SortField> order,
                                                                               bool rowtime);

}  // namespace sluice::table
