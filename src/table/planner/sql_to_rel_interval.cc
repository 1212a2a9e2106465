// Interval join bounds from a join condition, as Flink's IntervalJoinUtil.extractWindowBoundsFromPredicate:
//  - a time predicate is a comparison (<, <=, >, >=, =) whose two sides read only time attributes, one
//    each, of different inputs and of the same kind (both row times or both processing times); a
//    BETWEEN over time attributes counts as its `>=` and `<=` halves (Calcite expands it);
//  - the condition has bounds when it holds exactly one `=` time predicate or exactly two range ones
//    bounding left.time - right.time from below and from above, over the same pair of attributes; each
//    side reduces to the attribute plus or minus constant intervals (the attribute taken as 0);
//  - `<` / `>` tighten the bound by one millisecond;
//  - a comparison of a row time with a processing time attribute is refused at its position (Flink plans
//    a regular join keeping unbounded state for it).

#include <fmt/format.h>

#include "common/error.h"
#include "table/planner/sql_to_rel_internal.h"

namespace sluice::table {

namespace {

enum class TimeKind { kNone, kRowTime, kProcTime };

struct TimeAccess {
  TimeKind kind;
  bool left;
  int index;  ///< in its input's row
};

bool isComparison(ScalarOp op) {
  return op == ScalarOp::kLessThan || op == ScalarOp::kLessThanOrEqual || op == ScalarOp::kGreaterThan ||
         op == ScalarOp::kGreaterThanOrEqual || op == ScalarOp::kEquals;
}

/// A constant interval (ms): interval literals, their negation, sums, differences and integer multiples.
std::optional<int64_t> constantMillis(const Expr& e) {
  if (e.kind == ExprKind::kLiteral) {
    if (e.type.id != types::TypeId::kIntervalDayTime) return std::nullopt;
    if (const auto* v = std::get_if<int64_t>(&e.literal)) return *v;
    return std::nullopt;
  }
  if (e.kind != ExprKind::kCall) return std::nullopt;
  if (e.op == ScalarOp::kNegate && e.args.size() == 1) {
    auto v = constantMillis(*e.args[0]);
    return v ? std::optional<int64_t>(-*v) : std::nullopt;
  }
  if ((e.op == ScalarOp::kPlus || e.op == ScalarOp::kMinus) && e.args.size() == 2) {
    auto a = constantMillis(*e.args[0]), b = constantMillis(*e.args[1]);
    if (!a || !b) return std::nullopt;
    return e.op == ScalarOp::kPlus ? *a + *b : *a - *b;
  }
  if (e.op == ScalarOp::kTimes && e.args.size() == 2) {
    for (int i = 0; i < 2; ++i) {
      const Expr& n = *e.args[static_cast<size_t>(1 - i)];
      auto v = constantMillis(*e.args[static_cast<size_t>(i)]);
      if (v && n.kind == ExprKind::kLiteral && n.type.isIntegral())
        if (const auto* k = std::get_if<int64_t>(&n.literal)) return *v * *k;
    }
  }
  return std::nullopt;
}

/// The side `e` of a time predicate as the offset (ms) it adds to its time attribute: `ts` → 0,
/// `ts + INTERVAL '1' SECOND` → 1000, `ts - c` → -c; nullopt for anything else.
std::optional<int64_t> offsetMillis(const Expr& e) {
  if (e.kind == ExprKind::kInputRef) return 0;
  if (e.kind != ExprKind::kCall || e.args.size() != 2) return std::nullopt;
  if (e.op == ScalarOp::kPlus) {
    if (auto c = constantMillis(*e.args[1]))
      if (auto o = offsetMillis(*e.args[0])) return *o + *c;
    if (auto c = constantMillis(*e.args[0]))
      if (auto o = offsetMillis(*e.args[1])) return *o + *c;
    return std::nullopt;
  }
  if (e.op == ScalarOp::kMinus) {
    if (auto c = constantMillis(*e.args[1]))
      if (auto o = offsetMillis(*e.args[0])) return *o - *c;
  }
  return std::nullopt;
}

struct TimePredicate {
  ScalarOp op;
  TimeAccess a;  ///< the attribute in args[0]
  TimeAccess b;  ///< the attribute in args[1]
  int64_t offset_a, offset_b;
};

}  // namespace

std::optional<IntervalJoinBounds> SqlToRelConverter::Impl::intervalBounds(std::vector<ExprPtr>& conjuncts,
                                                                          std::vector<sql::SourcePos>& positions,
                                                                          const RelNode& left, const RelNode& right,
                                                                          std::vector<bool>& is_time) const {
  const int nl = static_cast<int>(left.row_type.size());
  auto kindOf = [&](int col) {
    const RelNode& in = col < nl ? left : right;
    const int i = col < nl ? col : col - nl;
    if (in.rowtime[static_cast<size_t>(i)]) return TimeKind::kRowTime;
    return isProctimeAttribute(in, i) ? TimeKind::kProcTime : TimeKind::kNone;
  };
  // Every input column `e` reads, in order; false when one is not a time attribute.
  std::function<bool(const Expr&, std::vector<TimeAccess>&)> accesses = [&](const Expr& e,
                                                                            std::vector<TimeAccess>& out) {
    if (e.kind == ExprKind::kInputRef) {
      const TimeKind k = kindOf(e.input_index);
      if (k == TimeKind::kNone) return false;
      out.push_back({k, e.input_index < nl, e.input_index < nl ? e.input_index : e.input_index - nl});
      return true;
    }
    if (e.kind == ExprKind::kCall)
      for (const auto& a : e.args)
        if (!accesses(*a, out)) return false;
    return true;
  };
  // BETWEEN over time attributes only: its two halves (Calcite's expansion).
  for (size_t i = 0; i < conjuncts.size(); ++i) {
    const Expr& c = *conjuncts[i];
    if (c.kind != ExprKind::kCall || c.op != ScalarOp::kBetween || c.args.size() != 3) continue;
    std::vector<TimeAccess> seen;
    bool only_time = true;
    for (const auto& a : c.args) only_time = only_time && accesses(*a, seen);
    if (!only_time || seen.size() != 3) continue;
    ExprPtr lower = makeCall(ScalarOp::kGreaterThanOrEqual, {c.args[0], c.args[1]});
    ExprPtr upper = makeCall(ScalarOp::kLessThanOrEqual, {c.args[0], c.args[2]});
    conjuncts[i] = lower;
    conjuncts.insert(conjuncts.begin() + static_cast<long>(i) + 1, upper);
    positions.insert(positions.begin() + static_cast<long>(i) + 1, positions[i]);
    ++i;
  }
  is_time.assign(conjuncts.size(), false);
  std::vector<TimePredicate> preds;
  std::vector<size_t> pred_at;
  for (size_t i = 0; i < conjuncts.size(); ++i) {
    const Expr& c = *conjuncts[i];
    if (c.kind != ExprKind::kCall || !isComparison(c.op) || c.args.size() != 2) continue;
    std::vector<TimeAccess> ta, tb;
    if (!accesses(*c.args[0], ta) || !accesses(*c.args[1], tb)) continue;
    if (ta.size() != 1 || tb.size() != 1 || ta[0].left == tb[0].left) continue;
    if (ta[0].kind != tb[0].kind) {
      const TimeAccess& l = ta[0].left ? ta[0] : tb[0];
      const TimeAccess& r = ta[0].left ? tb[0] : ta[0];
      auto describe = [](TimeKind k) {
        return k == TimeKind::kRowTime ? "a row time (event time) attribute" : "a processing time attribute";
      };
      fail(positions[i],
           fmt::format("An interval join compares time attributes of one kind: '{}' of the left input is {}, "
                       "'{}' of the right input {}",
                       left.row_type.names[static_cast<size_t>(l.index)], describe(l.kind),
                       right.row_type.names[static_cast<size_t>(r.index)], describe(r.kind)));
    }
    auto oa = offsetMillis(*c.args[0]), ob = offsetMillis(*c.args[1]);
    if (!oa || !ob) continue;
    preds.push_back({c.op, ta[0], tb[0], *oa, *ob});
    pred_at.push_back(i);
  }
  if (preds.empty() || preds.size() > 2) return std::nullopt;
  if (preds.size() == 1 && preds[0].op != ScalarOp::kEquals) return std::nullopt;
  if (preds.size() == 2 && (preds[0].op == ScalarOp::kEquals || preds[1].op == ScalarOp::kEquals))
    return std::nullopt;
  // Flink's computeWindowBoundFromPredicate: the bound on left.time - right.time and whether it is the
  // lower one.
  std::optional<int64_t> lower, upper;
  int left_time = -1, right_time = -1;
  for (const TimePredicate& p : preds) {
    const bool left_first = p.a.left;
    const int lt = left_first ? p.a.index : p.b.index;
    const int rt = left_first ? p.b.index : p.a.index;
    if (left_time >= 0 && (lt != left_time || rt != right_time)) return std::nullopt;
    left_time = lt;
    right_time = rt;
    // left.time + off_l (op) right.time + off_r  ⇔  left.time - right.time (op) off_r - off_l.
    int64_t offset = left_first ? p.offset_b - p.offset_a : p.offset_a - p.offset_b;
    ScalarOp op = p.op;
    if (!left_first) {  // flip: the left attribute on the left side
      if (op == ScalarOp::kLessThan) op = ScalarOp::kGreaterThan;
      else if (op == ScalarOp::kLessThanOrEqual) op = ScalarOp::kGreaterThanOrEqual;
      else if (op == ScalarOp::kGreaterThan) op = ScalarOp::kLessThan;
      else if (op == ScalarOp::kGreaterThanOrEqual) op = ScalarOp::kLessThanOrEqual;
    }
    switch (op) {
      case ScalarOp::kEquals: lower = upper = offset; break;
      case ScalarOp::kGreaterThan: lower = offset + 1; break;
      case ScalarOp::kGreaterThanOrEqual: lower = offset; break;
      case ScalarOp::kLessThan: upper = offset - 1; break;
      default: upper = offset; break;
    }
  }
  if (!lower || !upper) return std::nullopt;  // two lower (or two upper) bounds
  for (size_t i : pred_at) is_time[i] = true;
  IntervalJoinBounds b;
  b.is_event_time = preds[0].a.kind == TimeKind::kRowTime;
  b.left_lower_bound = *lower;
  b.left_upper_bound = *upper;
  b.left_time_index = left_time;
  b.right_time_index = right_time;
  return b;
}

}  // namespace sluice::table
