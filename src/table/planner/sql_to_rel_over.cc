// OVER aggregation, planned as Flink's planner does for streaming (LogicalWindow -> FlinkLogicalOverAggregate
// -> StreamPhysicalOverAggregate -> StreamExecOverAggregate):
//  - SELECT ..., agg(x) OVER w, ... FROM t becomes Calc(post) over OverAggregate over Calc(pre): the pre-Calc
//    applies WHERE and computes PARTITION BY keys and aggregate arguments that are not columns; the
//    OverAggregate emits each input row followed by its aggregates (w0$o0, w0$o1, ...); the post-Calc
//    evaluates the SELECT list, in which an OVER aggregate may sit inside any expression.
//  - Every OVER aggregate of one SELECT must use the same window ("All aggregates must be computed on the
//    same window."), ordered by one time attribute ascending (row time or a PROCTIME() column), with a frame
//    that ends at CURRENT ROW and starts at UNBOUNDED PRECEDING or n PRECEDING (ROWS: an integer, RANGE: a
//    day-time INTERVAL). ORDER BY without a frame is RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW.
//  - The input must be insert-only; the output is insert-only and keeps the input's time attributes.
#include <fmt/format.h>

#include "common/error.h"
#include "table/functions/aggregate_function.h"
#include "table/planner/sql_to_rel_internal.h"
#include "table/runtime/over_aggregate.h"

namespace sluice::table {

namespace {

void collectOvers(const sql::Expr& e, std::vector<const sql::Expr*>& out) {
  if (e.kind == sql::ExprKind::kOver) {
    out.push_back(&e);
    return;
  }
  for (const auto& c : e.children)
    if (c) collectOvers(*c, out);
}

// An aggregate call outside every OVER (a GROUP BY aggregate written next to OVER aggregates);
// `is_aggregate` tells aggregate calls.
template <typename IsAggregate>
const sql::Expr* plainAggregate(const sql::Expr& e, const IsAggregate& is_aggregate) {
  if (e.kind == sql::ExprKind::kOver) return nullptr;
  if (is_aggregate(e)) return &e;
  for (const auto& c : e.children)
    if (c)
      if (const sql::Expr* a = plainAggregate(*c, is_aggregate)) return a;
  return nullptr;
}

// The window as compared between aggregates: an absent frame is the SQL default.
std::string windowKey(const sql::OverWindow& w) {
  sql::OverWindow n;
  for (const auto& p : w.partition_by) n.partition_by.push_back(p->clone());
  for (const auto& o : w.order_by) n.order_by.push_back(o.clone());
  n.has_frame = true;
  n.rows = w.has_frame && w.rows;
  if (w.has_frame) {
    n.lower = w.lower;
    n.upper = w.upper;
  } else {
    n.lower.kind = sql::FrameBoundKind::kUnboundedPreceding;
    n.upper.kind = sql::FrameBoundKind::kCurrentRow;
  }
  return n.toString();
}

bool isFollowing(const sql::FrameBound& b) {
  return b.kind == sql::FrameBoundKind::kFollowing || b.kind == sql::FrameBoundKind::kUnboundedFollowing;
}

}  // namespace

RelNodePtr SqlToRelConverter::Impl::convertOverAggregate(const sql::SelectStmt& s, FromResult& from, ExprPtr where) {
  std::vector<const sql::Expr*> overs;
  for (const auto& item : s.select_list)
    if (item.expr) collectOvers(*item.expr, overs);
  const sql::Expr& first = *overs[0];
  if (!s.group_by.empty() || s.having || s.distinct)
    fail(first.pos, "OVER aggregates together with GROUP BY, HAVING or DISTINCT in one SELECT are not supported; "
                    "aggregate in a subquery and apply the OVER window over it");
  if (from.windowed) fail(from.window_pos, "OVER aggregation over a window table function is not supported yet");
  for (const auto& item : s.select_list)
    if (item.expr)
      if (const sql::Expr* a = plainAggregate(*item.expr, [this](const sql::Expr& x) { return isAggregateCall(x); }))
        fail(a->pos, fmt::format("Expression '{}' is an aggregate without OVER; it cannot be mixed with OVER "
                                 "aggregates in one SELECT",
                                 a->toString()));
  for (const sql::Expr* o : overs) {
    const sql::Expr& fn = *o->children[0];
    if (fn.kind != sql::ExprKind::kCall) fail(fn.pos, "OVER must follow a function call");
    if (fn.name == "ROW_NUMBER" || fn.name == "RANK" || fn.name == "DENSE_RANK")
      fail(fn.pos, fmt::format("{}() together with OVER aggregates in one SELECT is not supported; rank in a "
                               "subquery",
                               fn.name));
    if (!isAggregateCall(fn))
      fail(fn.pos, fmt::format("Function {} cannot be used with OVER; supported: COUNT, SUM, AVG, MIN, MAX, "
                               "user-defined aggregate functions and ROW_NUMBER",
                               fn.name));
    for (const auto& arg : fn.children) {
      std::vector<const sql::Expr*> nested;
      collectOvers(*arg, nested);
      if (!nested.empty() || findAggregate(*arg)) fail(arg->pos, "Aggregate function calls cannot be nested");
    }
    if (windowKey(*o->over) != windowKey(*first.over))
      fail(o->over->pos, "All aggregates must be computed on the same window.");
  }

  // The pre-Calc: the input's columns, then the expressions that are not columns.
  RelNodePtr base = from.rel;
  std::vector<ExprPtr> pre;
  std::vector<std::string> pre_names;
  for (size_t i = 0; i < base->row_type.size(); ++i) {
    pre.push_back(makeInputRef(static_cast<int>(i), base->row_type.types[i]));
    pre_names.push_back(base->row_type.names[i]);
  }
  auto columnOf = [&](ExprPtr x) {
    if (x->kind == ExprKind::kInputRef) return x->input_index;
    pre.push_back(std::move(x));
    pre_names.push_back(fmt::format("${}", pre.size() - 1));
    return static_cast<int>(pre.size() - 1);
  };

  const sql::OverWindow& w = *first.over;
  OverSpec spec;
  for (const auto& p : w.partition_by) spec.partition_keys.push_back(columnOf(convert(*p, from.scope)));
  // StreamExecOverAggregate's checks, at the place they concern.
  if (w.order_by.size() != 1)
    fail(w.order_by.empty() ? w.pos : w.order_by[1].pos, "The window can only be ordered by a single time column.");
  const sql::OrderItem& order = w.order_by[0];
  if (order.descending) fail(order.pos, "The window can only be ordered in ASCENDING mode.");
  const ExprPtr time = convert(*order.expr, from.scope);
  const bool rowtime = time->kind == ExprKind::kInputRef && base->rowtime[static_cast<size_t>(time->input_index)];
  if (!rowtime && !(time->kind == ExprKind::kInputRef && isProctimeAttribute(*base, time->input_index)))
    fail(order.expr->pos, "OVER windows' ordering in stream mode must be defined on a time attribute.");
  spec.time_column = time->input_index;
  spec.rowtime = rowtime;
  if (w.has_frame) {
    spec.rows = w.rows;
    for (const sql::FrameBound* b : {&w.lower, &w.upper})
      if (isFollowing(*b)) fail(b->pos, "OVER RANGE FOLLOWING windows are not supported yet.");
    if (w.upper.kind != sql::FrameBoundKind::kCurrentRow || w.lower.kind == sql::FrameBoundKind::kCurrentRow)
      fail(w.frame_pos, "OVER RANGE FOLLOWING windows are not supported yet. A streaming OVER window spans from "
                        "UNBOUNDED PRECEDING or n PRECEDING to CURRENT ROW");
    spec.unbounded = w.lower.kind == sql::FrameBoundKind::kUnboundedPreceding;
    if (!spec.unbounded) {
      const sql::Expr& off = *w.lower.offset;
      const bool integer = off.kind == sql::ExprKind::kLiteral && off.literal_kind == sql::LiteralKind::kInteger;
      const bool interval = off.kind == sql::ExprKind::kLiteral && off.literal_kind == sql::LiteralKind::kInterval;
      if (spec.rows) {
        if (!integer || off.text.size() > 18) fail(off.pos, "ROWS value must be a non-negative integral constant");
        spec.preceding = std::stoll(off.text);
      } else {
        if (!interval) fail(off.pos, "Data Type mismatch between ORDER BY and RANGE clause");
        if (sql::isYearMonthInterval(off))
          fail(off.pos, "A RANGE frame over a time attribute takes a day-time INTERVAL (SECOND to DAY), not MONTH "
                        "or YEAR");
        spec.preceding = sql::intervalMillis(off);
        if (spec.preceding < 0) fail(off.pos, "Window has negative size");
      }
    }
  }

  // The aggregate calls, each written once however often the SELECT repeats it.
  std::vector<const sql::Expr*> fns;
  for (const sql::Expr* o : overs) {
    const sql::Expr* fn = o->children[0].get();
    bool seen = false;
    for (const sql::Expr* f : fns) seen = seen || f->equals(*fn);
    if (seen) continue;
    fns.push_back(fn);
    AggregateCall call;
    call.distinct = fn->distinct;
    if (fn->filter) fail(fn->filter->pos, "FILTER (WHERE ...) in an OVER aggregation is not supported yet");
    if (const CatalogFunction* udaf = userAggregate(fn->name)) {
      // The arguments become columns of the pre-Calc (its names are only for explain).
      std::vector<ExprPtr> args;
      call = userAggregateCall(*fn, *udaf, from.scope, args);
      for (auto& arg : args) call.user_args.push_back(columnOf(std::move(arg)));
      if (!spec.unbounded && !call.function->hasRetract())
        fail(fn->pos, fmt::format("Function {} does not implement retract, which an OVER window of n PRECEDING "
                                  "rows or time needs",
                                  udaf->name));
      call.name = fmt::format("w0$o{}", spec.calls.size());
      spec.calls.push_back(call);
      continue;
    }
    if (fn->star && fn->name != "COUNT") fail(fn->pos, fmt::format("{}(*) is not allowed", fn->name));
    if (isVarianceName(fn->name) || fn->name == "FIRST_VALUE" || fn->name == "LAST_VALUE" || fn->name == "LISTAGG")
      fail(fn->pos, fmt::format("{} in an OVER aggregation is not supported yet", fn->name));
    call.kind = fn->name == "COUNT" ? (fn->star ? AggKind::kCountStar : AggKind::kCount)
                : fn->name == "SUM" ? AggKind::kSum
                : fn->name == "MIN" ? AggKind::kMin
                : fn->name == "MAX" ? AggKind::kMax
                                    : AggKind::kAvg;
    call.arg_type = LogicalType::bigint(false);
    if (!fn->star) {
      if (fn->children.size() != 1)
        fail(fn->pos, fmt::format("Invalid number of arguments to function '{}'. Was expecting 1 arguments", fn->name));
      ExprPtr arg = convert(*fn->children[0], from.scope);
      if (arg->type.id == TypeId::kNull)
        fail(fn->children[0]->pos, fmt::format("Illegal use of 'NULL' in {}", fn->name));
      call.arg_type = arg->type;
      call.arg_index = columnOf(std::move(arg));
    }
    try {
      call.result_type = AggregateCall::resultType(call.kind, call.arg_type);
    } catch (const SqlError&) {
      throw;
    } catch (const UserError& err) {
      fail(fn->pos, err.what());
    }
    call.name = fmt::format("w0$o{}", spec.calls.size());
    spec.calls.push_back(call);
  }

  if (where || pre.size() > base->row_type.size()) base = makeCalc(base, where, pre, pre_names);
  if (base->producesUpdates()) {
    const RelNode* producer = base.get();
    while (producer->kind == RelKind::kCalc && producer->inputs[0]->producesUpdates()) producer = producer->inputs[0].get();
    fail(first.pos, fmt::format("StreamPhysicalOverAggregate doesn't support consuming update and delete changes "
                                "which is produced by node {}",
                                producer->describe()));
  }
  auto over = std::make_shared<RelNode>();
  over->kind = RelKind::kOverAggregate;
  over->inputs = {base};
  over->row_type = OverAggregateOperator::outputType(base->row_type, spec);
  over->rowtime = base->rowtime;
  over->rowtime.resize(over->row_type.size(), false);
  over->changelog = ChangelogMode::kInsertOnly;
  if (spec.partition_keys.empty()) over->parallelism = 1;
  over->over = spec;

  const size_t first_agg = base->row_type.size();
  const NodeResolver agg_ref = [&](const sql::Expr& e) -> std::optional<ExprPtr> {
    if (e.kind != sql::ExprKind::kOver) return std::nullopt;
    for (size_t i = 0; i < fns.size(); ++i)
      if (fns[i]->equals(*e.children[0])) return makeInputRef(static_cast<int>(first_agg + i), spec.calls[i].result_type);
    return std::nullopt;
  };
  std::vector<ExprPtr> projections;
  std::vector<std::string> names;
  convertSelectList(s, from.scope, &agg_ref, projections, names);
  return makeCalc(over, nullptr, std::move(projections), std::move(names));
}

}  // namespace sluice::table
