#pragma once
/// The baseline of the hourly aggregation benchmark: the main job's query (per hour of scheduled departure
/// and airline: COUNT(*), SUM(CANCELLED), AVG(DEPARTURE_DELAY) as INT, MAX(DEPARTURE_DELAY)) as a plain
/// single-threaded C++ loop over the CSV bytes, with no engine code.

#include <cstdint>
#include <string_view>

namespace sluice::bench {

/// What the baseline computed: enough to cross-check the engine (one output row per group).
struct BaselineResult {
  int64_t rows = 0;      ///< input rows aggregated
  int64_t groups = 0;    ///< distinct (hour, airline) = rows the window aggregate emits
  int64_t result_sum = 0;  ///< sum of every output value (NULL as 0), so the aggregation is not optimized away
};

/// Aggregates the flights CSV held in `data` (31 comma-separated fields per line, no quoting, empty
/// numeric fields are NULL). Throws std::runtime_error on a row with too few fields. Single-threaded.
BaselineResult hourlyAggregateBaseline(std::string_view data);

}  // namespace sluice::bench
