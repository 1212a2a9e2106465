// Window joins (FLIP-145, Flink's StreamPhysicalWindowJoinRule, WindowJoinUtil): both join inputs have window
// properties (window TVFs, window aggregations over them, Calcs of those: windowPropertiesOf) and the ON clause
// equates a window_start and a window_end column of each. Rules, as Flink's planner:
//  - both equalities make a window join, neither a regular join over the TVFs, one of them only is refused;
//  - both sides must use the same window (kind, size, slide / step, offset);
//  - the other equalities are the join keys (none: one subtask), the rest the residual condition;
//  - INNER / LEFT / RIGHT / FULL, and SEMI / ANTI from a correlated IN / EXISTS; the output is insert-only, both sides' columns (window_start,
//    window_end, window_time of each), window_time of each side keeps being a row time.

#include <fmt/format.h>

#include <algorithm>

#include "common/error.h"
#include "table/planner/sql_to_rel_internal.h"

namespace sluice::table {

RelNodePtr SqlToRelConverter::Impl::makeWindowJoin(FlinkJoinType type, sql::SourcePos pos,
                                                   const WindowProperties& left_window,
                                                   const WindowProperties& right_window, RelNodePtr left,
                                                   RelNodePtr right, std::vector<ExprPtr> left_keys,
                                                   std::vector<ExprPtr> right_keys, const std::vector<ExprPtr>& rest) {
  auto has = [](const std::vector<int>& v, int x) { return std::find(v.begin(), v.end(), x) != v.end(); };
  int lstart = -1, lend = -1, rstart = -1, rend = -1;
  std::vector<ExprPtr> lk, rk;
  for (size_t i = 0; i < left_keys.size(); ++i) {
    const Expr& l = *left_keys[i];
    const Expr& r = *right_keys[i];
    if (l.kind == ExprKind::kInputRef && r.kind == ExprKind::kInputRef) {
      if (has(left_window.starts, l.input_index) && has(right_window.starts, r.input_index)) {
        if (lstart < 0) lstart = l.input_index, rstart = r.input_index;
        continue;
      }
      if (has(left_window.ends, l.input_index) && has(right_window.ends, r.input_index)) {
        if (lend < 0) lend = l.input_index, rend = r.input_index;
        continue;
      }
    }
    lk.push_back(left_keys[i]);
    rk.push_back(right_keys[i]);
  }
  const bool start_eq = lstart >= 0, end_eq = lend >= 0;
  if (!start_eq && !end_eq) return nullptr;
  if (!start_eq || !end_eq)
    fail(pos, "Currently, window join requires JOIN ON condition must contain both window starts equality of "
                  "input tables and window ends equality of input tables.");
  const WindowSpec& lw = left_window.window;
  const WindowSpec& rw = right_window.window;
  const bool same = lw.kind == rw.kind && lw.size_ms == rw.size_ms && lw.slide_ms == rw.slide_ms &&
                    lw.offset_ms == rw.offset_ms && lw.proctime == rw.proctime;
  if (!same)
    fail(pos, fmt::format("Currently, window join doesn't support different window table function of left and "
                              "right inputs.\nThe left window table function is {}.\nThe right window table "
                              "function is {}.",
                              windowSummary(lw), windowSummary(rw)));
  // StreamExecWindowJoin: both windows on event time.
  if (lw.proctime) fail(pos, "Processing time Window Join is not supported yet.");
  if (left->producesUpdates() || right->producesUpdates())
    fail(pos, fmt::format("StreamPhysicalWindowJoin doesn't support consuming update and delete changes which is "
                              "produced by node {}",
                              (left->producesUpdates() ? left : right)->describe()));
  RelNodePtr out = makeJoin(type, left, right, lk, rk, andOf(rest), pos);
  RelNode& join = out->kind == RelKind::kCalc ? *out->inputs[0] : *out;
  join.kind = RelKind::kWindowJoin;
  join.window = lw;
  join.window_join_cols = {lstart, lend, rstart, rend};
  join.changelog = ChangelogMode::kInsertOnly;
  // Only the windows' window_time columns stay row times (the rows leave when the watermark passes
  // window_end). Casts of keys below may have widened the left input: its own columns come first still.
  const int width = static_cast<int>(join.inputs[0]->row_type.size());
  join.rowtime.assign(join.row_type.size(), false);
  for (int c : left_window.times) join.rowtime[static_cast<size_t>(c)] = true;
  if (!join.join.isSemiOrAnti())
    for (int c : right_window.times) join.rowtime[static_cast<size_t>(width + c)] = true;
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
