#pragma once
/// An aggregate call as the planner hands it to the aggregation operators.
/// Result types follow Flink: COUNT -> BIGINT NOT NULL; SUM(INT) -> INT, SUM(BIGINT) -> BIGINT,
/// SUM(DECIMAL(p,s)) -> DECIMAL(38,s), SUM(DOUBLE) -> DOUBLE; AVG(x) -> the type of x for INT/BIGINT/
/// DOUBLE (integer division for integers), DECIMAL(p,s) -> DECIMAL(38, max(6,s)); MIN/MAX -> the type of x.
/// Every result but COUNT is nullable (NULL when no non-NULL input).

#include <string>
#include <vector>

#include "types/logical_type.h"

namespace sluice::table {

enum class AggKind { kCountStar, kCount, kSum, kMin, kMax, kAvg };

struct AggregateCall {
  AggKind kind = AggKind::kCountStar;
  int arg_index = -1;          ///< input column; -1 for COUNT(*)
  bool distinct = false;       ///< COUNT(DISTINCT x) etc.
  types::LogicalType arg_type;
  types::LogicalType result_type;
  std::string name;            ///< e.g. "COUNT(*)", "AVG(DEPARTURE_DELAY)" for explain

  /// The Flink result type of `kind` over `arg` (see above). Throws UserError on a non-numeric SUM/AVG.
  static types::LogicalType resultType(AggKind kind, const types::LogicalType& arg);
};

/// Window table-valued functions (FLIP-145): TUMBLE(size) and HOP(slide, size), on event time.
struct WindowSpec {
  enum class Kind { kTumble, kHop } kind = Kind::kTumble;
  int time_index = -1;   ///< input column holding the row time (TIMESTAMP(3), ms)
  int64_t size_ms = 0;
  int64_t slide_ms = 0;  ///< HOP only; equals size_ms for TUMBLE
  int64_t offset_ms = 0;
};

}  // namespace sluice::table
