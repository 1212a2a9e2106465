#pragma once
/// A window table function on its own, `FROM TABLE(TUMBLE | HOP | CUMULATE(TABLE t, DESCRIPTOR(ts), ...))`
/// read without a window aggregation (Flink's StreamExecWindowTableFunction, AlignedWindowTableFunctionOperator):
/// each input row leaves once per window containing its row time, followed by `window_start`, `window_end`
/// (TIMESTAMP(3) NOT NULL) and `window_time` = window_end - 1 ms (TIMESTAMP(3) NOT NULL, the output's row time).
/// Over a TIMESTAMP_LTZ row time (`WindowSpec::time_zone` set, FLIP-162) the windows are aligned on the zone's
/// wall clock: window_start / window_end are its wall-clock values and window_time is TIMESTAMP_LTZ(3) NOT
/// NULL, the instant of window_end - 1 ms there (TimeWindowUtil.toEpochMills).
/// Rows pass at once, late ones too (the operator keeps no state and judges no lateness); a row whose row
/// time is NULL is dropped and counted (numNullRowTimeRecordsDropped). Insert-only input (UserError otherwise).
/// Threading: task thread only.

#include <cstdint>
#include <memory>

#include "runtime/operators/stream_operator.h"
#include "table/runtime/aggregate_call.h"
#include "table/runtime/time_window_util.h"
#include "types/row_batch.h"

namespace sluice::table {

class WindowTableFunctionOperator : public runtime::StreamOperator {
 public:
  /// Throws UserError for a SESSION window or invalid window parameters (the slice assigners' checks).
  WindowTableFunctionOperator(types::RowType input_type, WindowSpec window);
  void processBatch(types::RowBatch&& batch) override;
  /// The input columns, then window_start, window_end, window_time (TIMESTAMP_LTZ(3) when `window`
  /// has a time zone).
  static types::RowType outputType(const types::RowType& input_type, const WindowSpec& window);
  /// Rows dropped for a NULL row time so far.
  int64_t numNullRowTimeRecordsDropped() const { return num_null_rowtime_dropped_; }

 private:
  types::RowType output_type_;
  WindowSpec window_;
  ShiftTimeZone shift_;
  int64_t num_null_rowtime_dropped_ = 0;
};

std::shared_ptr<const runtime::StreamOperatorFactory> makeWindowTableFunctionFactory(types::RowType input_type,
                                                                                      WindowSpec window);

}  // namespace sluice::table
