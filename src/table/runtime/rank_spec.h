#pragma once
/// What a Top-N (Flink's StreamExecRank / StreamExecSortLimit / StreamExecLimit) or a deduplication
/// (StreamExecDeduplicate) computes: the plan's description of the operators of rank_operator.h and
/// deduplicate_operator.h. Plain data; built by the planner on the client thread, read by the operators.

#include <cstdint>
#include <string>
#include <vector>

namespace sluice::table {

/// One ORDER BY column of a rank: an input column, its direction and where NULLs go.
struct SortField {
  int column = -1;
  bool ascending = true;
  bool nulls_first = true;  ///< Flink's default: NULL is the smallest value (ASC first, DESC last)
};

/// Flink's RankType. Streaming runs ROW_NUMBER only (RANK/DENSE_RANK are refused, as StreamExecRank).
enum class RankType { kRowNumber, kRank, kDenseRank };

/// Flink's RankProcessStrategy, chosen from the input's changelog: AppendFastStrategy for insert-only
/// input (AppendOnlyTopNFunction), RetractStrategy for an updating one (RetractableTopNFunction).
/// UpdateFastStrategy (UpdatableTopNFunction, for an upsert input with a monotonic sort key) is not chosen
/// yet: such inputs use RetractStrategy, which emits the same final result.
enum class RankStrategy { kAppendFast, kRetract };

/// How the rank was written, for explain: ROW_NUMBER() OVER in a subquery with a filter (Rank), ORDER BY
/// ... LIMIT (SortLimit), LIMIT alone (Limit), ORDER BY without LIMIT (Sort, BATCH mode only), or ORDER BY
/// an ascending time attribute first without LIMIT in streaming (TemporalSort, temporal_sort.h; `rowtime`
/// tells row time from processing time).
enum class RankForm { kRank, kSortLimit, kLimit, kSort, kTemporalSort };

struct RankSpec {
  RankType type = RankType::kRowNumber;
  RankForm form = RankForm::kRank;
  RankStrategy strategy = RankStrategy::kAppendFast;
  std::vector<int> partition_keys;  ///< input columns; empty = one global partition (parallelism 1)
  std::vector<SortField> order;     ///< empty for LIMIT without ORDER BY (every row ties)
  int64_t rank_start = 1;           ///< 1-based, inclusive
  int64_t rank_end = -1;            ///< inclusive; -1 while the planner has not found the filter yet
  /// Output = the input columns, then the rank number (BIGINT NOT NULL) when true.
  bool output_rank_number = true;
  /// Deduplicate (rank_start = rank_end = 1 on one time attribute): keep the last row (ORDER BY ... DESC)
  /// or the first; on the row time (order[0].column) or on processing time (arrival order).
  bool keep_last = false;
  bool rowtime = false;
  /// table.exec.state.ttl (ms, 0 = never): a partition's state is dropped once it had no write for this long
  /// (state_retention.h). Set when the plan is translated.
  int64_t state_ttl_ms = 0;
  /// BATCH mode (Flink's BatchPhysicalSort / BatchPhysicalSortLimit): a Sort or SortLimit sorts every row in
  /// one subtask at the end of input (batch_operators.h) instead of keeping a streaming Top-N.
  bool batch_sort = false;
  /// Where the ranking function was written (SQL line and column), for errors found after parsing.
  int line = 0;
  int column = 0;
};

/// "AppendFastStrategy" / "RetractStrategy".
inline const char* rankStrategyName(RankStrategy s) {
  return s == RankStrategy::kAppendFast ? "AppendFastStrategy" : "RetractStrategy";
}

}  // namespace sluice::table
