#pragma once
/// An aggregate call as the planner hands it to the aggregation operators.
/// Result types follow Flink: COUNT -> BIGINT NOT NULL; SUM(INT) -> INT, SUM(BIGINT) -> BIGINT,
/// SUM(DECIMAL(p,s)) -> DECIMAL(38,s), SUM(DOUBLE) -> DOUBLE; AVG(x) -> the type of x for INT/BIGINT/
/// DOUBLE (integer division for integers), DECIMAL(p,s) -> DECIMAL(38, max(6,s)); MIN/MAX -> the type of x.
/// Every result but COUNT is nullable (NULL when no non-NULL input). A user-defined aggregate (kUser) has
/// the result type its function's inferType gives.

#include <memory>
#include <string>
#include <vector>

#include "types/logical_type.h"

namespace sluice::table {

class AggregateFunction;  // table/functions/aggregate_function.h

/// FIRST_VALUE / LAST_VALUE: the first / last non-NULL value in arrival order (Flink's
/// FirstValueWithRetractAggFunction / LastValueWithRetractAggFunction: a retraction removes the value's
/// earliest occurrence); LISTAGG: the non-NULL string values in arrival order joined by `separator`
/// (ListAggWithRetractAggFunction). All three: the argument's type (LISTAGG: STRING), NULL when no value.
/// kUser: a user-defined AggregateFunction (`function`) over the columns `user_args`.
enum class AggKind { kCountStar, kCount, kSum, kMin, kMax, kAvg, kFirstValue, kLastValue, kListAgg, kUser };

struct AggregateCall {
  AggKind kind = AggKind::kCountStar;
  int arg_index = -1;          ///< input column; -1 for COUNT(*)
  bool distinct = false;       ///< COUNT(DISTINCT x) etc.
  /// A BOOLEAN input column, or -1: `agg(...) FILTER (WHERE c)` aggregates (and retracts) only the rows
  /// where it is TRUE (NULL counts as FALSE), as Calcite's AggregateCall.filterArg; the planner computes c
  /// into that column below the aggregate. A DISTINCT call keeps the distinct values of those rows only.
  int filter_arg = -1;
  types::LogicalType arg_type;
  types::LogicalType result_type;
  std::string separator = ",";  ///< LISTAGG's second argument (a literal), Flink's default ','
  std::string name;            ///< e.g. "COUNT(*)", "AVG(DEPARTURE_DELAY)" for explain
  /// kUser: the function, the name it was called by (explain), its argument columns in order, already of
  /// the parameter types its inferType asked for (arg_index is -1; DISTINCT takes exactly one), and the
  /// call as written, which a failure of the function names (`name` when empty).
  std::shared_ptr<const AggregateFunction> function;
  std::string function_name;
  std::vector<int> user_args;
  std::string call_text;

  /// The Flink result type of `kind` over `arg` (see above). Throws UserError on a non-numeric SUM/AVG,
  /// InternalError for kUser (its function types it).
  static types::LogicalType resultType(AggKind kind, const types::LogicalType& arg);
};

/// Window table-valued functions (FLIP-145): TUMBLE(size), HOP(slide, size) and CUMULATE(step, max size),
/// each with an optional offset (Flink 1.15+), and SESSION(gap) (FLINK-24024), on event time.
struct WindowSpec {
  enum class Kind { kTumble, kHop, kCumulate, kSession } kind = Kind::kTumble;
  int time_index = -1;   ///< input column holding the row time (TIMESTAMP(3), ms)
  int64_t size_ms = 0;   ///< TUMBLE / HOP size, CUMULATE max size, SESSION gap
  int64_t slide_ms = 0;  ///< HOP slide, CUMULATE step; equals size_ms for TUMBLE
  int64_t offset_ms = 0; ///< window starts are offset + k * (size for TUMBLE / CUMULATE, slide for HOP)
  /// Processing time (`pt AS PROCTIME()`): rows fall into the windows of the operator's clock when they
  /// arrive, and a window fires when that clock passes its end; `time_index` is then not read.
  bool proctime = false;
  /// SESSION's PARTITION BY columns (input columns, as written; EXPLAIN prints them). The operator
  /// keeps sessions per group key, which the planner makes equal to these.
  std::vector<int> partition_keys;
  /// The shift time zone (Flink's TimeWindowUtil.getShiftTimeZone, FLIP-162): `table.local-time-zone`
  /// when the time attribute is a TIMESTAMP_LTZ, empty (UTC, no shift) when it is a TIMESTAMP. Windows
  /// are then aligned on the zone's wall clock: window_start / window_end are TIMESTAMP(3) wall-clock
  /// values, window_time a TIMESTAMP_LTZ(3) instant, and a window fires at the instant of its last
  /// wall-clock millisecond (ShiftTimeZone in time_window_util.h).
  std::string time_zone;
};

}  // namespace sluice::table
