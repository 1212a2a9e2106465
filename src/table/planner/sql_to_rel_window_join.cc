// Window joins (FLIP-145, Flink's StreamPhysicalWindowJoinRule, WindowJoinUtil): both join inputs are window
// TVFs and the ON clause equates their window_start and window_end columns. Rules, as Flink's planner:
//  - both equalities make a window join, neither a regular join over the TVFs, one of them only is refused;
//  - both sides must use the same window (kind, size, slide / step, offset);
//  - the other equalities are the join keys (none: one subtask), the rest the residual condition;
//  - INNER / LEFT / RIGHT / FULL; the output is insert-only, both sides' columns (window_start,
//    window_end, window_time of each), window_time of each side keeps being a row time.

#include <fmt/format.h>

#include "common/error.h"
#include "table/planner/sql_to_rel_internal.h"

namespace sluice::table {

RelNodePtr SqlToRelConverter::Impl::makeWindowJoin(const sql::TableRef& ref, const WindowSpec& left_window,
                                                   const WindowSpec& right_window, RelNodePtr left, RelNodePtr right,
                                                   std::vector<ExprPtr> left_keys, std::vector<ExprPtr> right_keys,
                                                   const std::vector<ExprPtr>& rest) {
  // The window TVF's columns end the row of each side: window_start, window_end, window_time.
  const int nl = static_cast<int>(left->row_type.size());
  const int nr = static_cast<int>(right->row_type.size());
  const int lstart = nl - 3, lend = nl - 2, rstart = nr - 3, rend = nr - 2;
  bool start_eq = false, end_eq = false;
  std::vector<ExprPtr> lk, rk;
  for (size_t i = 0; i < left_keys.size(); ++i) {
    const Expr& l = *left_keys[i];
    const Expr& r = *right_keys[i];
    if (l.kind == ExprKind::kInputRef && r.kind == ExprKind::kInputRef) {
      if (l.input_index == lstart && r.input_index == rstart) {
        start_eq = true;
        continue;
      }
      if (l.input_index == lend && r.input_index == rend) {
        end_eq = true;
        continue;
      }
    }
    lk.push_back(left_keys[i]);
    rk.push_back(right_keys[i]);
  }
  if (!start_eq && !end_eq) return nullptr;
  if (!start_eq || !end_eq)
    fail(ref.pos, "Currently, window join requires JOIN ON condition must contain both window starts equality of "
                  "input tables and window ends equality of input tables.");
  const bool same = left_window.kind == right_window.kind && left_window.size_ms == right_window.size_ms &&
                    left_window.slide_ms == right_window.slide_ms && left_window.offset_ms == right_window.offset_ms;
  if (!same)
    fail(ref.pos, fmt::format("Currently, window join doesn't support different window table function of left and "
                              "right inputs.\nThe left window table function is {}.\nThe right window table "
                              "function is {}.",
                              windowSummary(left_window), windowSummary(right_window)));
  FlinkJoinType type = FlinkJoinType::kInner;
  if (ref.join_type == sql::JoinType::kLeft) type = FlinkJoinType::kLeft;
  if (ref.join_type == sql::JoinType::kRight) type = FlinkJoinType::kRight;
  if (ref.join_type == sql::JoinType::kFull) type = FlinkJoinType::kFull;
  RelNodePtr out = makeJoin(type, left, right, lk, rk, andOf(rest), ref.pos);
  RelNode& join = out->kind == RelKind::kCalc ? *out->inputs[0] : *out;
  join.kind = RelKind::kWindowJoin;
  join.window = left_window;
  join.window_join_cols = {lstart, lend, rstart, rend};
  join.changelog = ChangelogMode::kInsertOnly;
  // Only the windows' window_time stay row times (the rows leave when the watermark passes window_end).
  const int width = static_cast<int>(join.inputs[0]->row_type.size());
  join.rowtime.assign(join.row_type.size(), false);
  join.rowtime[static_cast<size_t>(nl - 1)] = true;
  join.rowtime[static_cast<size_t>(width + nr - 1)] = true;
  if (out->kind == RelKind::kCalc) {
    out->changelog = ChangelogMode::kInsertOnly;
    for (size_t i = 0; i < out->projections.size(); ++i) {
      const Expr& p = *out->projections[i];
      out->rowtime[i] = p.kind == ExprKind::kInputRef && join.rowtime[static_cast<size_t>(p.input_index)];
    }
  }
  return out;
}

}  // namespace sluice::table
