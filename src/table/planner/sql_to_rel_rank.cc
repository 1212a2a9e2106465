// Top-N, ORDER BY ... LIMIT and deduplication, planned as Flink's planner does (FlinkLogicalRankRule /
// RankUtil.extractRankRange, ConstantRankNumberColumnRemoveRule, StreamPhysicalDeduplicateRule,
// StreamPhysicalSortLimitRule, RankProcessStrategy):
//  - SELECT ..., ROW_NUMBER() OVER (PARTITION BY p ORDER BY o) AS rn FROM t becomes a pending Rank below a
//    Calc; a filter on rn in an outer query (rn <= N, rn < N, rn = N, rn >= a, rn BETWEEN a AND b, with
//    constants) gives its range when the Calcs fuse (makeCalc calls pushRankRange). A Rank left without an
//    upper bound is refused when the statement is complete (checkRanks).
//  - The rank number is output only when the query above still reads it; with rankStart = rankEnd it is a
//    constant, so it becomes a literal and is not output either.
//  - ROW_NUMBER ranked 1..1 on one time attribute (row time, or a PROCTIME() column) without the rank
//    number in the output is a Deduplicate: keep the last row for DESC, the first for ASC.
//  - Strategy: AppendFastStrategy for an insert-only input, RetractStrategy otherwise.
//  - A PARTITION BY holding a window_start and a window_end column of the input's window properties makes a
//    WindowRank, or for the 1..1 rank on one time attribute a WindowDeduplicate (StreamPhysicalWindowRankRule,
//    StreamPhysicalWindowDeduplicateRule): makeWindowRank.
//  - ORDER BY ... LIMIT n [OFFSET m] over a query is a SortLimit (ranks m+1..m+n, no partition, no rank
//    number); LIMIT alone a Limit (every row ties: the first n rows).
#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "common/error.h"
#include "table/planner/sql_to_rel_internal.h"
#include "table/runtime/rank_operator.h"
#include "table/runtime/window_rank.h"

namespace sluice::table {

namespace {

const sql::Expr* firstOver(const sql::Expr& e) {
  if (e.kind == sql::ExprKind::kOver) return &e;
  for (const auto& c : e.children)
    if (c)
      if (const sql::Expr* o = firstOver(*c)) return o;
  return nullptr;
}

// An integer constant, looking through casts the type coercion put around a literal.
std::optional<int64_t> constInt(const ExprPtr& e) {
  if (e->kind == ExprKind::kLiteral && e->type.isIntegral() && std::holds_alternative<int64_t>(e->literal))
    return std::get<int64_t>(e->literal);
  if (e->kind == ExprKind::kCall && e->op == ScalarOp::kCast && e->args.size() == 1 && e->type.isIntegral())
    return constInt(e->args[0]);
  return std::nullopt;
}

bool isRef(const ExprPtr& e, int index) { return e->kind == ExprKind::kInputRef && e->input_index == index; }

bool refersTo(const ExprPtr& e, int index) {
  if (isRef(e, index)) return true;
  if (e->kind != ExprKind::kCall) return false;
  for (const auto& a : e->args)
    if (refersTo(a, index)) return true;
  return false;
}

ExprPtr replaceRef(const ExprPtr& e, int index, const ExprPtr& with) {
  if (isRef(e, index)) return with;
  if (e->kind != ExprKind::kCall) return e;
  auto n = std::make_shared<Expr>(*e);
  for (auto& a : n->args) a = replaceRef(a, index, with);
  return n;
}

void splitAnd(const ExprPtr& e, std::vector<ExprPtr>& out) {
  if (e->kind == ExprKind::kCall && e->op == ScalarOp::kAnd) {
    for (const auto& a : e->args) splitAnd(a, out);
    return;
  }
  out.push_back(e);
}

// WindowUtil.groupingContainsWindowStartEnd / groupingExcludeWindowStartEndTimeColumns: a PARTITION BY that
// holds a window_start and a window_end column of the input's window; its other keys (window_time left out).
struct WindowPartition {
  WindowSpec window;
  int start = -1;
  int end = -1;
  std::vector<int> keys;
};

std::optional<WindowPartition> windowPartition(const RelNode& input, const std::vector<int>& partition_keys) {
  std::optional<WindowProperties> props = windowPropertiesOf(input);
  if (!props) return std::nullopt;
  auto has = [](const std::vector<int>& v, int x) { return std::find(v.begin(), v.end(), x) != v.end(); };
  WindowPartition out;
  out.window = props->window;
  for (int k : partition_keys) {
    if (has(props->starts, k)) {
      if (out.start < 0) out.start = k;
    } else if (has(props->ends, k)) {
      if (out.end < 0) out.end = k;
    } else if (!has(props->times, k)) {
      out.keys.push_back(k);
    }
  }
  if (out.start < 0 || out.end < 0) return std::nullopt;
  return out;
}

RankStrategy strategyFor(const RelNode& input) {
  return input.producesUpdates() ? RankStrategy::kRetract : RankStrategy::kAppendFast;
}

}  // namespace

bool isProctimeAttribute(const RelNode& rel, int index) {
  switch (rel.kind) {
    case RelKind::kCalc: {
      const ExprPtr& p = rel.projections[static_cast<size_t>(index)];
      if (p->kind == ExprKind::kCall && p->op == ScalarOp::kProctime) return true;
      return p->kind == ExprKind::kInputRef && isProctimeAttribute(*rel.inputs[0], p->input_index);
    }
    case RelKind::kWatermarkAssigner:
    case RelKind::kChangelogNormalize:
    case RelKind::kDeduplicate:
      return isProctimeAttribute(*rel.inputs[0], index);
    case RelKind::kRank:
    case RelKind::kWindowRank:
    case RelKind::kWindowDeduplicate:
    case RelKind::kOverAggregate:
    case RelKind::kLookupJoin:
    case RelKind::kTemporalJoin:
    case RelKind::kWindowTableFunction:
      return static_cast<size_t>(index) < rel.inputs[0]->row_type.size() && isProctimeAttribute(*rel.inputs[0], index);
    case RelKind::kUnion:  // a processing-time attribute when it is one in every input
      for (const RelNodePtr& in : rel.inputs)
        if (!isProctimeAttribute(*in, index)) return false;
      return !rel.inputs.empty();
    case RelKind::kIntervalJoin:  // keep both inputs' time attributes
    case RelKind::kWindowJoin: {
      const int nl = static_cast<int>(rel.inputs[0]->row_type.size());
      return index < nl ? isProctimeAttribute(*rel.inputs[0], index) : isProctimeAttribute(*rel.inputs[1], index - nl);
    }
    default:
      return false;
  }
}

bool containsOverWindow(const sql::Expr& e) {
  if (e.kind == sql::ExprKind::kOver) return true;
  for (const auto& c : e.children)
    if (c && containsOverWindow(*c)) return true;
  return false;
}

std::string overNotHere(const sql::Expr& e) {
  (void)e;
  return "OVER windows are supported only in the SELECT list: OVER aggregates (COUNT/SUM/AVG/MIN/MAX ... OVER w), "
         "or ROW_NUMBER() OVER (...) as a whole item for Top-N and deduplication";
}

bool SqlToRelConverter::Impl::selectHasOver(const sql::SelectStmt& s) {
  for (const auto& item : s.select_list)
    if (item.expr && containsOverWindow(*item.expr)) return true;
  return false;
}

RelNodePtr SqlToRelConverter::Impl::convertOverSelect(const sql::SelectStmt& s, FromResult& from, ExprPtr where) {
  for (const auto& item : s.select_list) {
    const sql::Expr* o = item.expr ? firstOver(*item.expr) : nullptr;
    if (o != nullptr && isAggregateCall(*o->children[0]))
      return convertOverAggregate(s, from, where);
  }
  const sql::Expr* over = nullptr;
  for (const auto& item : s.select_list) {
    if (!item.expr || !containsOverWindow(*item.expr)) continue;
    if (item.expr->kind != sql::ExprKind::kOver) {
      const sql::Expr* inner = firstOver(*item.expr);
      fail(inner->pos, "A ranking function must be a whole SELECT item (e.g. ROW_NUMBER() OVER (...) AS rn)");
    }
    if (over != nullptr) fail(item.expr->pos, "Only one ranking function per SELECT is supported yet");
    over = item.expr.get();
  }
  const sql::Expr& fn = *over->children[0];
  const sql::OverWindow& w = *over->over;
  if (fn.kind != sql::ExprKind::kCall) fail(fn.pos, "OVER must follow a function call");
  RankType type;
  if (fn.name == "ROW_NUMBER") {
    type = RankType::kRowNumber;
  } else if (fn.name == "RANK") {
    type = RankType::kRank;
  } else if (fn.name == "DENSE_RANK") {
    type = RankType::kDenseRank;
  } else {
    fail(fn.pos, fmt::format("Function {} cannot be used with OVER; supported: ROW_NUMBER (RANK and DENSE_RANK are "
                             "parsed but not supported in streaming, as in Flink)",
                             fn.name));
  }
  if (!fn.children.empty() || fn.star) fail(fn.pos, fmt::format("{}() takes no arguments", fn.name));
  if (!s.group_by.empty() || s.having || s.distinct)
    fail(over->pos, "A ranking function together with GROUP BY, HAVING or DISTINCT in one SELECT is not supported; "
                    "aggregate in a subquery and rank over it");
  for (const auto& item : s.select_list)
    if (item.expr && item.expr.get() != over)
      if (const sql::Expr* a = findAggregate(*item.expr))
        fail(a->pos, "Aggregate functions together with a ranking function in one SELECT are not supported; "
                     "aggregate in a subquery and rank over it");
  // Calcite's SqlValidator: ranking functions take no frame and need an ORDER BY.
  if (w.has_frame) fail(w.frame_pos, "ROW/RANGE not allowed with RANK, DENSE_RANK or ROW_NUMBER functions");
  if (w.order_by.empty())
    fail(w.pos, fmt::format("{}() requires an ORDER BY clause in its window specification", fn.name));

  RelNodePtr base = from.rel;
  std::vector<ExprPtr> pre;
  std::vector<std::string> pre_names;
  for (size_t i = 0; i < base->row_type.size(); ++i) {
    pre.push_back(makeInputRef(static_cast<int>(i), base->row_type.types[i]));
    pre_names.push_back(base->row_type.names[i]);
  }
  // PARTITION BY / ORDER BY expressions that are not columns are computed in a Calc in front.
  auto columnOf = [&](const sql::Expr& e) {
    ExprPtr x = convert(e, from.scope);
    if (x->kind == ExprKind::kInputRef) return x->input_index;
    pre.push_back(x);
    pre_names.push_back(fmt::format("${}", pre.size() - 1));
    return static_cast<int>(pre.size() - 1);
  };
  RankSpec spec;
  spec.type = type;
  spec.line = fn.pos.line;
  spec.column = fn.pos.column;
  for (const auto& p : w.partition_by) spec.partition_keys.push_back(columnOf(*p));
  for (const auto& o : w.order_by) spec.order.push_back(SortField{columnOf(*o.expr), !o.descending, o.nullsFirst()});
  if (where || pre.size() > base->row_type.size()) base = makeCalc(base, where, pre, pre_names);
  if (type != RankType::kRowNumber)
    fail(fn.pos, windowPartition(*base, spec.partition_keys)
                     ? fmt::format("{}() function is not supported on Window TopN currently, only ROW_NUMBER() is "
                                   "supported.",
                                   fn.name)
                     : fmt::format("{}() on streaming table is not supported currently", fn.name));

  auto rank = std::make_shared<RelNode>();
  rank->kind = RelKind::kRank;
  rank->inputs = {base};
  rank->row_type = RankOperator::outputType(base->row_type, spec);
  rank->rowtime = base->rowtime;
  rank->rowtime.push_back(false);
  rank->changelog = ChangelogMode::kAll;
  rank->rank = spec;
  const int rank_column = static_cast<int>(base->row_type.size());

  // The ranking function's item reads the rank column; the others read the input columns (same indexes).
  const NodeResolver rank_ref = [&](const sql::Expr& e) -> std::optional<ExprPtr> {
    if (&e == over) return makeInputRef(rank_column, LogicalType::bigint(false));
    return std::nullopt;
  };
  std::vector<ExprPtr> projections;
  std::vector<std::string> names;
  convertSelectList(s, from.scope, &rank_ref, projections, names);
  return makeCalc(rank, nullptr, std::move(projections), std::move(names));
}

RelNodePtr SqlToRelConverter::Impl::pushRankRange(const RelNodePtr& calc) {
  const RelNodePtr& pending = calc->inputs[0];
  const int rc = static_cast<int>(pending->row_type.size()) - 1;
  int64_t lower = 1;
  std::optional<int64_t> upper;
  std::vector<ExprPtr> conjuncts, remaining;
  splitAnd(calc->condition, conjuncts);
  auto lowerTo = [&](int64_t v) { lower = std::max(lower, v); };
  auto upperTo = [&](int64_t v) { upper = upper ? std::min(*upper, v) : v; };
  for (const ExprPtr& c : conjuncts) {
    bool used = false;
    if (c->kind == ExprKind::kCall && c->args.size() == 2) {
      ScalarOp op = c->op;
      ExprPtr a = c->args[0], b = c->args[1];
      if (!isRef(a, rc) && isRef(b, rc)) {
        // N >= rn is rn <= N.
        std::swap(a, b);
        if (op == ScalarOp::kLessThan) op = ScalarOp::kGreaterThan;
        else if (op == ScalarOp::kLessThanOrEqual) op = ScalarOp::kGreaterThanOrEqual;
        else if (op == ScalarOp::kGreaterThan) op = ScalarOp::kLessThan;
        else if (op == ScalarOp::kGreaterThanOrEqual) op = ScalarOp::kLessThanOrEqual;
      }
      std::optional<int64_t> v = isRef(a, rc) ? constInt(b) : std::nullopt;
      if (v) {
        used = true;
        switch (op) {
          case ScalarOp::kLessThanOrEqual: upperTo(*v); break;
          case ScalarOp::kLessThan: upperTo(*v - 1); break;
          case ScalarOp::kEquals: lowerTo(*v); upperTo(*v); break;
          case ScalarOp::kGreaterThanOrEqual: lowerTo(*v); break;
          case ScalarOp::kGreaterThan: lowerTo(*v + 1); break;
          default: used = false;
        }
      }
    } else if (c->kind == ExprKind::kCall && c->op == ScalarOp::kBetween && c->args.size() == 3 && isRef(c->args[0], rc)) {
      std::optional<int64_t> lo = constInt(c->args[1]), hi = constInt(c->args[2]);
      if (lo && hi) {
        used = true;
        lowerTo(*lo);
        upperTo(*hi);
      }
    }
    if (!used) remaining.push_back(c);
  }
  if (!upper) return calc;  // no Top-N (yet): checkRanks refuses it if nothing above gives a bound
  if (*upper < lower)
    fail(sql::SourcePos{pending->rank.line, pending->rank.column},
         fmt::format("The rank range [{}, {}] given by the filter on this ranking function is empty", lower, *upper));
  RankSpec spec = pending->rank;
  spec.rank_start = lower;
  spec.rank_end = *upper;
  spec.strategy = strategyFor(*pending->inputs[0]);
  ExprPtr condition;
  for (const auto& c : remaining) condition = condition ? makeCall(ScalarOp::kAnd, {condition, c}) : c;
  std::vector<ExprPtr> projections = calc->projections;
  bool reads_rank = condition && refersTo(condition, rc);
  for (const auto& p : projections) reads_rank = reads_rank || refersTo(p, rc);
  if (reads_rank && lower == *upper) {
    // ConstantRankNumberColumnRemoveRule: a single rank is a constant.
    ExprPtr constant = makeLiteral(lower, LogicalType::bigint(false));
    for (auto& p : projections) p = replaceRef(p, rc, constant);
    if (condition) condition = replaceRef(condition, rc, constant);
    reads_rank = false;
  }
  spec.output_rank_number = reads_rank;

  const RelNodePtr& input = pending->inputs[0];
  if (std::optional<WindowPartition> wp = windowPartition(*input, spec.partition_keys))
    return makeCalc(makeWindowRank(input, spec, wp->window, wp->start, wp->end, wp->keys), condition,
                    std::move(projections), calc->row_type.names);
  auto rank = std::make_shared<RelNode>(*pending);
  rank->rank = spec;
  rank->row_type = RankOperator::outputType(input->row_type, spec);
  rank->rowtime = input->rowtime;
  if (spec.output_rank_number) rank->rowtime.push_back(false);
  // StreamPhysicalDeduplicateRule.canConvertToDeduplicate.
  if (spec.type == RankType::kRowNumber && spec.rank_start == 1 && spec.rank_end == 1 && !spec.output_rank_number &&
      spec.order.size() == 1) {
    const int t = spec.order[0].column;
    const bool rowtime = input->rowtime[static_cast<size_t>(t)];
    if (rowtime || isProctimeAttribute(*input, t)) {
      if (input->producesUpdates())
        fail(sql::SourcePos{spec.line, spec.column},
             fmt::format("StreamPhysicalDeduplicate doesn't support consuming update changes which is produced by "
                         "node {}",
                         input->describe()));
      rank->kind = RelKind::kDeduplicate;
      rank->rank.rowtime = rowtime;
      rank->rank.keep_last = !spec.order[0].ascending;
      rank->changelog = !rowtime && !rank->rank.keep_last ? ChangelogMode::kInsertOnly : ChangelogMode::kAll;
    }
  }
  finalInBatch(*rank);
  return makeCalc(rank, condition, std::move(projections), calc->row_type.names);
}

RelNodePtr SqlToRelConverter::Impl::makeWindowRank(const RelNodePtr& input, RankSpec spec, const WindowSpec& window,
                                                   int start, int end, std::vector<int> keys) const {
  const sql::SourcePos at{spec.line, spec.column};
  // RankUtil.canConvertToDeduplicate: the top row on one time attribute, without the rank number.
  const bool dedup = spec.type == RankType::kRowNumber && spec.rank_start == 1 && spec.rank_end == 1 &&
                     !spec.output_rank_number && spec.order.size() == 1 &&
                     (input->rowtime[static_cast<size_t>(spec.order[0].column)] ||
                      isProctimeAttribute(*input, spec.order[0].column));
  // StreamExecWindowRank / StreamExecWindowDeduplicate: windows on event time only.
  if (window.proctime)
    fail(at, dedup ? "Processing time Window Deduplication is not supported yet."
                   : "Processing time Window TopN is not supported yet.");
  if (dedup && !input->rowtime[static_cast<size_t>(spec.order[0].column)])
    fail(at, "Window Deduplication requires the order key to be an event time attribute; ordering by a processing "
             "time attribute is not supported yet");
  if (input->producesUpdates())
    fail(at, fmt::format("StreamPhysicalWindowRank doesn't support consuming update and delete changes which is "
                         "produced by node {}",
                         input->describe()));
  auto rank = std::make_shared<RelNode>();
  rank->kind = dedup ? RelKind::kWindowDeduplicate : RelKind::kWindowRank;
  rank->inputs = {input};
  spec.partition_keys = std::move(keys);
  if (dedup) {
    spec.rowtime = true;
    spec.keep_last = !spec.order[0].ascending;
  }
  rank->rank = spec;
  rank->window = window;
  rank->window_rank_cols = {start, end};
  rank->row_type = WindowRankOperator::outputType(input->row_type, spec);
  rank->rowtime = input->rowtime;
  if (spec.output_rank_number) rank->rowtime.push_back(false);
  rank->changelog = ChangelogMode::kInsertOnly;
  return rank;
}

void SqlToRelConverter::Impl::checkRanks(const RelNodePtr& rel) const {
  if (rel->kind == RelKind::kRank && rel->rank.rank_end < 0)
    fail(sql::SourcePos{rel->rank.line, rel->rank.column},
         "Rank end is not specified. Currently rank only support TopN, which means the rank end must be specified: "
         "filter the ranking function's result in an outer query with a constant upper bound (WHERE rn <= N, rn < N, "
         "rn = N or rn BETWEEN a AND b)");
  for (const auto& in : rel->inputs) checkRanks(in);
}

RelNodePtr SqlToRelConverter::Impl::applyOrderByLimit(const sql::Query& q, RelNodePtr rel) {
  if (q.order_by.empty() && !q.limit && !q.offset) return rel;
  auto constant = [&](const sql::ExprPtr& e, const char* what) {
    if (e->kind != sql::ExprKind::kLiteral || e->literal_kind != sql::LiteralKind::kInteger || e->text.size() > 18)
      fail(e->pos, fmt::format("{} must be a non-negative integer literal", what));
    return static_cast<int64_t>(std::stoll(e->text));
  };
  Scope scope;
  for (size_t i = 0; i < rel->row_type.size(); ++i)
    scope.columns.push_back({"", rel->row_type.names[i], static_cast<int>(i), rel->row_type.types[i],
                             static_cast<bool>(rel->rowtime[i]), false});
  RankSpec spec;
  for (const auto& o : q.order_by) {
    ExprPtr x;
    try {
      x = convert(*o.expr, scope);
    } catch (const SqlError&) {
      // The scope here is the SELECT list's result; a column of FROM that is not selected is not in it.
      if (o.expr->kind != sql::ExprKind::kIdentifier) throw;
      fail(o.expr->pos, fmt::format("Column '{}' is not in the query's result: ORDER BY a column that is not in the "
                                    "SELECT list is not supported yet; add it to the SELECT list",
                                    sql::qualifiedNameToString(o.expr->names)));
    }
    if (x->kind != ExprKind::kInputRef)
      fail(o.pos, "ORDER BY supports columns of the query's result only yet; compute the expression in the SELECT list");
    spec.order.push_back(SortField{x->input_index, !o.descending, o.nullsFirst()});
  }
  if (batch()) return batchSort(q, rel, std::move(spec));
  if (!q.limit) {
    if (q.offset) fail(q.offset->pos, "FETCH is missed, which on streaming table is not supported currently.");
    const SortField& first = spec.order[0];
    if (rel->rowtime[static_cast<size_t>(first.column)] || isProctimeAttribute(*rel, first.column)) {
      if (!first.ascending) fail(q.order_by[0].pos, "Sort on a time attribute supports ascending order only");
      // Flink's StreamPhysicalTemporalSort: insert-only input, one subtask, rows released as time passes.
      if (rel->producesUpdates())
        fail(q.order_pos, fmt::format("StreamPhysicalTemporalSort doesn't support consuming update and delete changes "
                                      "which is produced by node {}",
                                      rel->describe()));
      spec.form = RankForm::kTemporalSort;
      spec.rowtime = static_cast<bool>(rel->rowtime[static_cast<size_t>(first.column)]);
      spec.rank_start = 1;
      spec.rank_end = std::numeric_limits<int64_t>::max();
      spec.output_rank_number = false;
      spec.line = q.order_pos.line;
      spec.column = q.order_pos.column;
      auto sort = std::make_shared<RelNode>();
      sort->kind = RelKind::kRank;
      sort->inputs = {rel};
      sort->row_type = rel->row_type;
      sort->rowtime = rel->rowtime;
      sort->changelog = ChangelogMode::kInsertOnly;
      sort->rank = spec;
      return sort;
    }
    fail(q.order_pos, "Sort on a non-time-attribute field is not supported.");
  }
  const int64_t limit = constant(q.limit, "LIMIT");
  const int64_t offset = q.offset ? constant(q.offset, "OFFSET") : 0;
  if (limit == 0) fail(q.limit->pos, "LIMIT 0 is not supported yet");
  spec.form = spec.order.empty() ? RankForm::kLimit : RankForm::kSortLimit;
  spec.rank_start = offset + 1;
  spec.rank_end = offset + limit;
  spec.output_rank_number = false;
  spec.strategy = strategyFor(*rel);
  spec.line = q.limit->pos.line;
  spec.column = q.limit->pos.column;
  auto rank = std::make_shared<RelNode>();
  rank->kind = RelKind::kRank;
  rank->inputs = {rel};
  rank->row_type = rel->row_type;
  rank->rowtime = rel->rowtime;
  // FlinkChangelogModeInferenceProgram: a Limit over an insert-only input only ever inserts (its first n rows);
  // a SortLimit may push a row out again (-D).
  rank->changelog = spec.form == RankForm::kLimit && !rel->producesUpdates() ? ChangelogMode::kInsertOnly
                                                                               : ChangelogMode::kAll;
  rank->rank = spec;
  finalInBatch(*rank);
  return rank;
}

RelNodePtr SqlToRelConverter::Impl::batchSort(const sql::Query& q, const RelNodePtr& rel, RankSpec spec) {
  // Flink's batch planner: ORDER BY on any column is a global Sort (BatchPhysicalSort, one subtask), with
  // LIMIT a SortLimit; OFFSET without LIMIT skips rows of the sorted result; LIMIT alone is a Limit.
  auto constant = [&](const sql::ExprPtr& e, const char* what) {
    if (e->kind != sql::ExprKind::kLiteral || e->literal_kind != sql::LiteralKind::kInteger || e->text.size() > 18)
      fail(e->pos, fmt::format("{} must be a non-negative integer literal", what));
    return static_cast<int64_t>(std::stoll(e->text));
  };
  const int64_t offset = q.offset ? constant(q.offset, "OFFSET") : 0;
  const int64_t fetch = q.limit ? constant(q.limit, "LIMIT") : -1;
  if (fetch == 0) fail(q.limit->pos, "LIMIT 0 is not supported yet");
  spec.form = spec.order.empty() ? RankForm::kLimit : q.limit ? RankForm::kSortLimit : RankForm::kSort;
  spec.batch_sort = true;
  spec.rank_start = offset + 1;
  spec.rank_end = fetch < 0 ? std::numeric_limits<int64_t>::max() : offset + fetch;
  spec.output_rank_number = false;
  const sql::SourcePos at = q.limit ? q.limit->pos : q.order_pos;
  spec.line = at.line;
  spec.column = at.column;
  auto rank = std::make_shared<RelNode>();
  rank->kind = RelKind::kRank;
  rank->inputs = {rel};
  rank->row_type = rel->row_type;
  rank->rowtime = rel->rowtime;
  rank->changelog = ChangelogMode::kInsertOnly;
  rank->rank = spec;
  return rank;
}

}  // namespace sluice::table
