#pragma once
/// What the planner hands the OVER aggregation operator (Flink's OverSpec with one window group): the
/// partition keys, the time attribute the window is ordered by, the frame and the aggregate calls.

#include <cstdint>
#include <vector>

#include "table/runtime/aggregate_call.h"

namespace sluice::table {

/// `agg(...) OVER (PARTITION BY keys ORDER BY time ROWS|RANGE BETWEEN lower PRECEDING AND CURRENT ROW)`.
struct OverSpec {
  std::vector<int> partition_keys;  ///< input columns; empty: one partition (a GLOBAL exchange, one subtask)
  int time_column = -1;             ///< the ORDER BY time attribute (TIMESTAMP(3), ms)
  bool rowtime = true;              ///< event time (a watermarked column) or processing time (PROCTIME())
  bool rows = false;                ///< ROWS (true) or RANGE (false)
  bool unbounded = true;            ///< UNBOUNDED PRECEDING
  /// Bounded frames: ROWS: the number of preceding rows (n of `n PRECEDING`, >= 0); RANGE: the interval
  /// in ms (>= 0).
  int64_t preceding = 0;
  std::vector<AggregateCall> calls;  ///< their results follow the input columns, in this order

  /// Same window (the aggregates' calls are not compared).
  bool sameWindow(const OverSpec& o) const {
    return partition_keys == o.partition_keys && time_column == o.time_column && rowtime == o.rowtime &&
           rows == o.rows && unbounded == o.unbounded && (unbounded || preceding == o.preceding);
  }
};

}  // namespace sluice::table
