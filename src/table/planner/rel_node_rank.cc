#include <fmt/format.h>
#include <fmt/ranges.h>

#include "table/planner/rel_node.h"

namespace sluice::table {

std::string describeRank(const RelNode& rel) {
  const RankSpec& r = rel.rank;
  const std::vector<std::string>& in = rel.inputs.at(0)->row_type.names;
  auto name = [&](int c) { return c >= 0 && static_cast<size_t>(c) < in.size() ? in[static_cast<size_t>(c)] : fmt::format("${}", c); };
  std::vector<std::string> keys, order;
  for (int k : r.partition_keys) keys.push_back(name(k));
  for (const SortField& f : r.order) {
    std::string o = name(f.column);
    if (!f.ascending) o += " DESC";
    // Only a NULL order other than Flink's default (NULLs smallest) is printed.
    if (f.nulls_first != f.ascending) o += f.nulls_first ? " NULLS FIRST" : " NULLS LAST";
    order.push_back(o);
  }
  if (rel.kind == RelKind::kWindowRank || rel.kind == RelKind::kWindowDeduplicate) {
    // Flink's StreamPhysicalWindowRank / StreamPhysicalWindowDeduplicate.
    const std::string window =
        windowAttachedSummary(rel.window, name(rel.window_rank_cols[0]), name(rel.window_rank_cols[1]));
    if (rel.kind == RelKind::kWindowDeduplicate)
      return fmt::format("WindowDeduplicate(window=[{}], keep=[{}], partitionKeys=[{}], orderKey=[{}], order=[ROWTIME])",
                         window, r.keep_last ? "LastRow" : "FirstRow", fmt::join(keys, ", "), name(r.order[0].column));
    const char* type = r.type == RankType::kRowNumber ? "ROW_NUMBER" : r.type == RankType::kRank ? "RANK" : "DENSE_RANK";
    return fmt::format("WindowRank(window=[{}], rankType=[{}], rankRange=[rankStart={}, rankEnd={}], partitionBy=[{}], "
                       "orderBy=[{}], select=[{}])",
                       window, type, r.rank_start, r.rank_end, fmt::join(keys, ", "), fmt::join(order, ", "),
                       fmt::join(rel.row_type.names, ", "));
  }
  if (rel.kind == RelKind::kDeduplicate)
    return fmt::format("Deduplicate(keep=[{}], key=[{}], order=[{}])", r.keep_last ? "LastRow" : "FirstRow",
                       fmt::join(keys, ", "), r.rowtime ? "ROWTIME" : "PROCTIME");
  if (r.form == RankForm::kTemporalSort) {
    // Flink's StreamPhysicalTemporalSort prints every direction (RelExplainUtil.collationToString).
    std::vector<std::string> collation;
    for (const SortField& f : r.order) collation.push_back(name(f.column) + (f.ascending ? " ASC" : " DESC"));
    return fmt::format("TemporalSort(orderBy=[{}])", fmt::join(collation, ", "));
  }
  const int64_t offset = r.rank_start - 1;
  const int64_t fetch = r.rank_end - offset;
  if (r.form == RankForm::kLimit)
    return fmt::format("Limit(offset=[{}], fetch=[{}])", offset, fetch);
  // Flink's batch plans: BatchPhysicalSort and the global BatchPhysicalSortLimit.
  if (r.form == RankForm::kSort) return fmt::format("Sort(orderBy=[{}])", fmt::join(order, ", "));
  if (r.form == RankForm::kSortLimit && r.batch_sort)
    return fmt::format("SortLimit(orderBy=[{}], offset=[{}], fetch=[{}], global=[true])", fmt::join(order, ", "),
                       offset, fetch);
  if (r.form == RankForm::kSortLimit)
    return fmt::format("SortLimit(orderBy=[{}], offset=[{}], fetch=[{}], strategy=[{}])", fmt::join(order, ", "), offset,
                       fetch, rankStrategyName(r.strategy));
  const char* type = r.type == RankType::kRowNumber ? "ROW_NUMBER" : r.type == RankType::kRank ? "RANK" : "DENSE_RANK";
  return fmt::format("Rank(strategy=[{}], rankType=[{}], rankRange=[rankStart={}, rankEnd={}], partitionBy=[{}], "
                     "orderBy=[{}], select=[{}])",
                     rankStrategyName(r.strategy), type, r.rank_start, r.rank_end, fmt::join(keys, ", "),
                     fmt::join(order, ", "), fmt::join(rel.row_type.names, ", "));
}

}  // namespace sluice::table
