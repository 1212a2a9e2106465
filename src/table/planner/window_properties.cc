// Flink's FlinkRelMdWindowProperties: which columns of a plan node are the window_start, window_end and
// window_time of one window (a window TVF's, a window aggregation's), followed through Calcs (plain column
// references; window_time also as window_end - 1 ms, how a window aggregation's Calc computes it, cast to
// TIMESTAMP_LTZ over an LTZ time attribute), window
// joins (both sides' columns) and window Top-N / deduplication (the input's columns). The window Top-N,
// deduplication and join rules read them (WindowUtil.groupingContainsWindowStartEnd,
// WindowJoinUtil.excludeWindowStartEqualityAndEndEqualityFromJoinCondition).

#include <algorithm>

#include "table/planner/sql_to_rel_internal.h"

namespace sluice::table {

namespace {

bool contains(const std::vector<int>& v, int x) { return std::find(v.begin(), v.end(), x) != v.end(); }

std::vector<int> shifted(std::vector<int> v, int by) {
  for (int& x : v) x += by;
  return v;
}

}  // namespace

std::optional<WindowProperties> windowPropertiesOf(const RelNode& rel) {
  switch (rel.kind) {
    case RelKind::kWindowTableFunction: {
      const int n = static_cast<int>(rel.inputs[0]->row_type.size());
      return WindowProperties{rel.window, {n}, {n + 1}, {n + 2}};
    }
    case RelKind::kWindowAggregate: {
      if (rel.group_window) return std::nullopt;  // a legacy group window's properties are not columns
      const int n = static_cast<int>(rel.row_type.size());
      return WindowProperties{rel.window, {n - 2}, {n - 1}, {}};
    }
    case RelKind::kWindowRank:
    case RelKind::kWindowDeduplicate:
      return windowPropertiesOf(*rel.inputs[0]);  // the input's columns, then perhaps the rank number
    case RelKind::kWindowJoin: {
      std::optional<WindowProperties> l = windowPropertiesOf(*rel.inputs[0]);
      std::optional<WindowProperties> r = windowPropertiesOf(*rel.inputs[1]);
      if (!l || !r) return l;
      if (rel.join.isSemiOrAnti()) return l;
      const int nl = static_cast<int>(rel.inputs[0]->row_type.size());
      for (int c : shifted(r->starts, nl)) l->starts.push_back(c);
      for (int c : shifted(r->ends, nl)) l->ends.push_back(c);
      for (int c : shifted(r->times, nl)) l->times.push_back(c);
      return l;
    }
    case RelKind::kCalc: {
      std::optional<WindowProperties> in = windowPropertiesOf(*rel.inputs[0]);
      if (!in) return std::nullopt;
      WindowProperties out{in->window, {}, {}, {}};
      for (size_t i = 0; i < rel.projections.size(); ++i) {
        const Expr& p = *rel.projections[i];
        const int c = static_cast<int>(i);
        if (p.kind == ExprKind::kInputRef) {
          if (contains(in->starts, p.input_index)) out.starts.push_back(c);
          if (contains(in->ends, p.input_index)) out.ends.push_back(c);
          if (contains(in->times, p.input_index)) out.times.push_back(c);
        } else if (rel.rowtime[i] && p.kind == ExprKind::kCall) {
          // window_end - 1 ms, for an LTZ window cast to TIMESTAMP_LTZ in its zone.
          const Expr* e = &p;
          if (e->op == ScalarOp::kCast && !e->args.empty()) e = e->args[0].get();
          if (e->kind == ExprKind::kCall && e->op == ScalarOp::kMinus && e->args[0]->kind == ExprKind::kInputRef &&
              contains(in->ends, e->args[0]->input_index))
            out.times.push_back(c);
        }
      }
      if (out.starts.empty() && out.ends.empty() && out.times.empty()) return std::nullopt;
      return out;
    }
    default:
      return std::nullopt;
  }
}

}  // namespace sluice::table
