// FROM clauses with joins: INNER / LEFT / RIGHT / FULL [OUTER] JOIN ... ON, CROSS JOIN and `FROM a, b`
// turned into regular streaming joins (Flink's StreamPhysicalJoin / StreamExecJoin).
//
// Rules, as Flink's planner:
//  - the ON condition (and, for inner and cross joins not below an outer join, the WHERE conjuncts that
//    read both sides, as Flink's FilterJoinRule pushes them) is split into equi-join keys (`l = r`, each
//    side reading one input only) and a non-equi rest evaluated per matching pair; a WHERE conjunct over
//    one table below inner joins only filters that table before the join;
//  - a join without equi keys is refused at its SQL position: without a key both inputs would have to be
//    broadcast into unbounded state (Flink would run it at parallelism 1);
//  - key pairs of different types are cast to their least restrictive type in a Calc below the join, so
//    both sides hash and encode equal values alike;
//  - the input specs follow Flink's JoinUtil/JoinInputSideSpec from the inputs' unique keys
//    (FlinkRelMdUniqueKeys: a table's primary key, the group keys of an aggregation, the key of a
//    ChangelogNormalize, kept through projections);
//  - the output has no time attributes (a regular join materializes them) and its changelog is
//    insert-only for an inner join of insert-only inputs, a retract changelog otherwise;
//  - a condition bounding the inputs' time attributes against each other (sql_to_rel_interval.cc) makes
//    an interval join instead (Flink's StreamPhysicalIntervalJoin): its time predicates become bounds, the
//    equalities keys (none: one subtask), the rest the residual condition; insert-only inputs only; the
//    output keeps both inputs' time attributes and is insert-only;
//  - a WHERE conjunct `x [NOT] IN (SELECT y ...)` is a semi / anti join on x = y of the FROM clause
//    (filtered by the rest of the WHERE) with the subquery (Flink's StreamingSemiAntiJoinOperator); NOT IN
//    only over NOT NULL values (SQL's NULL rules make it a join without keys);
//  - `[NOT] EXISTS (SELECT ... FROM t WHERE ...)` and a correlated IN are decorrelated as Flink's
//    SubQueryDecorrelator does for a plain SELECT: the subquery's conjuncts over its own table filter it,
//    `outer = inner` conjuncts become join keys, the other correlated ones the semi / anti join's residual
//    condition; a NULL outer key matches nothing (NOT EXISTS keeps the row).

#include <algorithm>

#include <fmt/format.h>

#include "common/error.h"
#include "table/planner/sql_to_rel_internal.h"
#include "table/planner/type_coercion.h"
#include "table/runtime/streaming_join.h"

namespace sluice::table {

namespace {

// INNER (and CROSS), LEFT, RIGHT, FULL of the SQL text as Flink's join types.
FlinkJoinType joinTypeOf(sql::JoinType t) {
  if (t == sql::JoinType::kLeft) return FlinkJoinType::kLeft;
  if (t == sql::JoinType::kRight) return FlinkJoinType::kRight;
  if (t == sql::JoinType::kFull) return FlinkJoinType::kFull;
  return FlinkJoinType::kInner;
}

}  // namespace

std::vector<std::vector<int>> uniqueKeysOf(const RelNode& rel) {
  switch (rel.kind) {
    case RelKind::kTableSourceScan:
      if (rel.primary_key.empty()) return {};
      return {rel.primary_key};
    case RelKind::kChangelogNormalize:
      return {rel.group_keys};
    case RelKind::kGroupAggregate: {
      if (rel.group_keys.empty()) return {};
      std::vector<int> k;
      for (size_t i = 0; i < rel.group_keys.size(); ++i) k.push_back(static_cast<int>(i));
      return {k};
    }
    case RelKind::kWatermarkAssigner:
      return uniqueKeysOf(*rel.inputs[0]);
    case RelKind::kCalc: {
      std::vector<std::vector<int>> out;
      for (const auto& uk : uniqueKeysOf(*rel.inputs[0])) {
        std::vector<int> mapped;
        for (int c : uk) {
          for (size_t i = 0; i < rel.projections.size(); ++i) {
            const Expr& p = *rel.projections[i];
            if (p.kind == ExprKind::kInputRef && p.input_index == c) {
              mapped.push_back(static_cast<int>(i));
              break;
            }
          }
        }
        if (mapped.size() == uk.size()) out.push_back(mapped);
      }
      return out;
    }
    default:
      return {};
  }
}

namespace {

/// Flink's JoinInputSideSpec of an input with join keys `keys`: a unique key inside the join key wins,
/// else the shortest unique key.
JoinInputSideSpec inputSideSpec(const RelNode& input, const std::vector<int>& keys) {
  JoinInputSideSpec spec;
  std::vector<std::vector<int>> uks = uniqueKeysOf(input);
  std::sort(uks.begin(), uks.end(), [](const auto& a, const auto& b) { return a.size() < b.size(); });
  for (const auto& uk : uks) {
    bool contained = std::all_of(uk.begin(), uk.end(),
                                 [&](int c) { return std::find(keys.begin(), keys.end(), c) != keys.end(); });
    if (contained) {
      spec.unique_key = uk;
      spec.join_key_contains_unique_key = true;
      return spec;
    }
  }
  if (!uks.empty()) spec.unique_key = uks[0];
  return spec;
}

}  // namespace

RelNodePtr SqlToRelConverter::Impl::makeJoin(FlinkJoinType type, RelNodePtr left, RelNodePtr right,
                                             const std::vector<ExprPtr>& left_keys,
                                             const std::vector<ExprPtr>& right_keys, ExprPtr rest,
                                             sql::SourcePos pos, const IntervalJoinBounds* interval,
                                             ExprPtr time_condition,
                                             const TemporalJoinSpec* temporal) {
  if (interval != nullptr) {
    // Flink's changelog inference: an interval join takes insert-only inputs.
    for (const RelNodePtr& in : {left, right}) {
      if (!in->producesUpdates()) continue;
      const RelNode* producer = in.get();
      while ((producer->kind == RelKind::kCalc || producer->kind == RelKind::kWatermarkAssigner) &&
             !producer->inputs.empty())
        producer = producer->inputs[0].get();
      fail(pos, fmt::format("IntervalJoin doesn't support consuming update and delete changes which is produced by "
                            "node {}",
                            producer->describe()));
    }
  }
  const int nl = static_cast<int>(left->row_type.size());
  const int nr = static_cast<int>(right->row_type.size());
  // Keys that are not bare columns of one key form become extra columns of a Calc below the join.
  auto keyColumns = [&](RelNodePtr& input, const std::vector<ExprPtr>& keys, const std::vector<LogicalType>& want) {
    std::vector<int> cols;
    std::vector<ExprPtr> projections;
    std::vector<std::string> names = input->row_type.names;
    for (size_t i = 0; i < input->row_type.size(); ++i)
      projections.push_back(makeInputRef(static_cast<int>(i), input->row_type.types[i]));
    for (size_t k = 0; k < keys.size(); ++k) {
      if (keys[k]->kind == ExprKind::kInputRef && keys[k]->type.withNullable(want[k].nullable) == want[k]) {
        cols.push_back(keys[k]->input_index);
        continue;
      }
      ExprPtr e = keys[k]->type.withNullable(want[k].nullable) == want[k] ? keys[k] : makeCast(keys[k], want[k]);
      cols.push_back(static_cast<int>(projections.size()));
      projections.push_back(e);
      names.push_back(fmt::format("$f{}", projections.size() - 1));
    }
    const size_t extra = projections.size() - input->row_type.size();
    if (extra > 0) input = makeCalc(input, nullptr, projections, names);
    return std::make_pair(cols, static_cast<int>(extra));
  };
  std::vector<LogicalType> lwant, rwant;
  for (size_t k = 0; k < left_keys.size(); ++k) {
    const LogicalType& a = left_keys[k]->type;
    const LogicalType& b = right_keys[k]->type;
    if (sameKeyForm(a, b) && left_keys[k]->kind == ExprKind::kInputRef && right_keys[k]->kind == ExprKind::kInputRef) {
      lwant.push_back(a);
      rwant.push_back(b);
      continue;
    }
    std::optional<LogicalType> common = leastRestrictive(a, b);
    if (!common) fail(pos, fmt::format("Cannot join on keys of types {} and {}", a.toString(), b.toString()));
    lwant.push_back(common->withNullable(a.nullable));
    rwant.push_back(common->withNullable(b.nullable));
  }
  auto [lcols, lextra] = keyColumns(left, left_keys, lwant);
  auto [rcols, rextra] = keyColumns(right, right_keys, rwant);

  auto join = std::make_shared<RelNode>();
  join->kind = interval != nullptr ? RelKind::kIntervalJoin : RelKind::kJoin;
  join->inputs = {left, right};
  join->join.type = type;
  join->join.left_keys = lcols;
  join->join.right_keys = rcols;
  // The rest reads the joined row: right columns move behind the left side's extra key columns.
  if (rest) join->join.non_equi_condition = shiftRefs(rest, nl, lextra);
  join->join.left_spec = inputSideSpec(*left, lcols);
  join->join.right_spec = inputSideSpec(*right, rcols);
  join->row_type = StreamingJoinOperator::outputType(left->row_type, right->row_type, type);
  uniquifyNames(join->row_type.names);
  if (interval != nullptr) {
    // An interval join keeps the time attributes of both inputs (Flink's RelTimeIndicatorConverter
    // materializes them for regular joins only) and emits only +I, also when outer.
    join->interval = *interval;
    if (time_condition) join->interval_condition = shiftRefs(time_condition, nl, lextra);
    join->rowtime = left->rowtime;
    join->rowtime.insert(join->rowtime.end(), right->rowtime.begin(), right->rowtime.end());
    join->changelog = ChangelogMode::kInsertOnly;
  } else {
    join->rowtime.assign(join->row_type.size(), false);
    // Insert-only: an inner or semi join of insert-only inputs (a semi join's row passes at its first match
    // and stays); an anti join retracts a row when its first match comes.
    const bool insert_only_inputs = !left->producesUpdates() && !right->producesUpdates();
    join->changelog = (type == FlinkJoinType::kInner || type == FlinkJoinType::kSemi) && insert_only_inputs
                          ? ChangelogMode::kInsertOnly
                          : ChangelogMode::kAll;
    if (temporal != nullptr && batch())
      fail(pos, "Event-time temporal join (FOR SYSTEM_TIME AS OF a row time attribute) is not supported in batch "
                "mode: Flink's batch planner has no TemporalJoin; use a lookup join on a processing-time attribute");
    if (temporal != nullptr) {
      // A temporal join emits each left row once (with its kind): the left side's changelog and time attributes.
      join->kind = RelKind::kTemporalJoin;
      join->temporal = *temporal;
      join->temporal.type = type;
      join->temporal.left_keys = lcols;
      join->temporal.right_keys = rcols;
      join->temporal.non_equi_condition = join->join.non_equi_condition;
      join->changelog = left->changelog;
      for (size_t i = 0; i < left->rowtime.size(); ++i) join->rowtime[i] = left->rowtime[i];
    }
    finalInBatch(*join);
  }
  if (lextra == 0 && rextra == 0) return join;
  // Drop the extra key columns again: the row keeps its layout.
  const int width = join->join.isSemiOrAnti() ? nl : nl + nr;
  std::vector<ExprPtr> keep;
  std::vector<std::string> names;
  for (int i = 0; i < width; ++i) {
    const int from_col = i < nl ? i : i + lextra;
    keep.push_back(makeInputRef(from_col, join->row_type.types[static_cast<size_t>(from_col)]));
    names.push_back(join->row_type.names[static_cast<size_t>(from_col)]);
  }
  return makeCalc(join, nullptr, keep, names);
}

RelNodePtr SqlToRelConverter::Impl::convertSubqueryPredicate(const RelNodePtr& input, const Scope& scope,
                                                            const sql::Expr& pred) {
  const bool not_exists = pred.kind == sql::ExprKind::kUnary;
  const sql::Expr& e = not_exists ? *pred.children[0] : pred;
  const bool exists = e.kind == sql::ExprKind::kExists;
  const bool negated = exists ? not_exists : e.negated;
  const sql::Query& q = *e.subquery;
  const char* what = exists ? "EXISTS" : "IN";
  // A plain SELECT ... FROM t WHERE ... may read the outer row (correlation); anything else is planned on
  // its own (uncorrelated IN only).
  const bool plain = q.with.empty() && q.selects.size() == 1 && q.order_by.empty() && !q.limit && !q.offset &&
                     !q.selects[0].set_op && q.selects[0].values.empty() && q.selects[0].from &&
                     q.selects[0].from->kind != sql::TableRefKind::kJoin && q.selects[0].group_by.empty() &&
                     !q.selects[0].having && !q.selects[0].distinct &&
                     std::none_of(q.selects[0].select_list.begin(), q.selects[0].select_list.end(),
                                  [this](const sql::SelectItem& i) { return i.expr && containsAggregate(*i.expr); });
  if (!plain) {
    if (exists) {
      // Planned on its own: a name of the outer query is not found there.
      RelNodePtr sub;
      try {
        sub = convertQueryRel(q);
      } catch (const SqlError& err) {
        std::string msg = err.what();
        if (msg.find("not found") == std::string::npos) throw;
        // The hint goes at the end of the first line, before the excerpt with the caret.
        msg.insert(std::min(msg.find('\n'), msg.size()),
                   " (an EXISTS subquery with GROUP BY, aggregates, DISTINCT, joins, set operations, WITH or LIMIT "
                   "cannot read the outer query yet)");
        throw SqlError(msg, err.line(), err.column());
      }
      return makeUncorrelatedExists(input, sub, nullptr, negated, e.pos);
    }
    return convertInSubquery(input, scope, e);
  }
  const sql::SelectStmt& sel = q.selects[0];
  FromResult inner = convertFrom(*sel.from);
  if (inner.windowed) fail(inner.window_pos, fmt::format("A window table function inside {} (subquery) is not "
                                                         "supported",
                                                         what));
  const int nl = static_cast<int>(input->row_type.size());
  const int ni = static_cast<int>(inner.rel->row_type.size());
  // The outer row's columns [0, nl) (seen last), then the subquery's [nl, nl + ni).
  Scope combined;
  for (ScopeColumn c : scope.columns) {
    c.depth += 1;
    combined.columns.push_back(c);
  }
  for (ScopeColumn c : inner.scope.columns) {
    if (c.index >= 0) c.index += nl;
    combined.columns.push_back(c);
  }
  std::vector<ExprPtr> parts;
  if (sel.where) {
    if (const sql::Expr* a = findAggregate(*sel.where)) fail(a->pos, "Aggregate functions are not allowed in WHERE");
    ExprPtr w = convert(*sel.where, combined);
    checkBoolean(w, *sel.where, "WHERE");
    splitConjuncts(w, parts);
  }
  // IN's value and the subquery's one column.
  ExprPtr in_value, in_item;
  if (!exists) {
    if (sel.select_list.size() != 1 || sel.select_list[0].is_star)
      fail(e.pos, fmt::format("The subquery of IN must return exactly one column, not {}",
                              sel.select_list[0].is_star ? std::string("*") : std::to_string(sel.select_list.size())));
    in_value = convert(*e.children[0], scope);
    in_item = convert(*sel.select_list[0].expr, combined);
  }
  auto readsOuter = [&](const ExprPtr& x) {
    int lo = INT32_MAX, hi = -1;
    refRange(x, lo, hi);
    return hi >= 0 && lo < nl;
  };
  const bool correlated = std::any_of(parts.begin(), parts.end(), readsOuter) || (in_item && readsOuter(in_item));
  if (!exists && !correlated) return convertInSubquery(input, scope, e);  // planned on its own, as before
  if (!correlated) {
    for (ExprPtr& p : parts) p = shiftRefs(p, 0, -nl);
    return makeUncorrelatedExists(input, inner.rel, parts.empty() ? nullptr : andOf(parts), negated, e.pos);
  }
  if (in_item && readsOuter(in_item))
    fail(sel.select_list[0].pos, "The select item of a correlated IN subquery can only read the subquery's tables");

  std::vector<ExprPtr> left_keys, right_keys, inner_filters, residual;
  if (!exists) {
    const LogicalType& b = in_item->type;
    if (!leastRestrictive(in_value->type, b))
      fail(e.pos, fmt::format("Values passed to IN operator must have compatible types: {} and {}",
                              in_value->type.toString(), b.toString()));
    if (negated && (in_value->type.nullable || b.nullable))
      fail(e.pos, fmt::format("NOT IN over nullable values is not supported (a null-aware anti join has no join key): "
                              "the value is {} and the subquery returns {}; declare the columns NOT NULL",
                              in_value->type.toString(), b.toString()));
    left_keys.push_back(in_value);
    right_keys.push_back(shiftRefs(in_item, 0, -nl));
  }
  for (const ExprPtr& p : parts) {
    int lo = INT32_MAX, hi = -1;
    refRange(p, lo, hi);
    if (hi < 0 || lo >= nl) {  // the subquery's own filter
      inner_filters.push_back(shiftRefs(p, 0, -nl));
      continue;
    }
    // outer = inner (either order): a join key pair.
    if (p->kind == ExprKind::kCall && p->op == ScalarOp::kEquals) {
      int llo = INT32_MAX, lhi = -1, rlo = INT32_MAX, rhi = -1;
      refRange(p->args[0], llo, lhi);
      refRange(p->args[1], rlo, rhi);
      const bool l_outer = lhi >= 0 && lhi < nl, r_outer = rhi >= 0 && rhi < nl;
      const bool l_inner = lhi >= 0 && llo >= nl, r_inner = rhi >= 0 && rlo >= nl;
      if ((l_outer && r_inner) || (l_inner && r_outer)) {
        const ExprPtr& o = l_outer ? p->args[0] : p->args[1];
        const ExprPtr& i = l_outer ? p->args[1] : p->args[0];
        if (leastRestrictive(o->type, i->type)) {
          left_keys.push_back(o);
          right_keys.push_back(shiftRefs(i, 0, -nl));
          continue;
        }
      }
    }
    residual.push_back(p);  // over [outer | inner], as the join's non-equi condition
  }
  if (left_keys.empty())
    fail(e.pos, fmt::format("{}{} (subquery) needs an equality between the outer query and the subquery (e.g. "
                            "WHERE inner.k = outer.k): without one the semi join would have no key",
                            negated ? "NOT " : "", what));
  RelNodePtr right = inner.rel;
  if (!inner_filters.empty()) {
    std::vector<ExprPtr> all;
    for (int i = 0; i < ni; ++i) all.push_back(makeInputRef(i, right->row_type.types[static_cast<size_t>(i)]));
    right = makeCalc(right, andOf(inner_filters), all, right->row_type.names);
  }
  const FlinkJoinType type = negated ? FlinkJoinType::kAnti : FlinkJoinType::kSemi;
  // Both sides windowed and correlated on their window columns: a window semi / anti join (Flink's WindowJoin).
  if (std::optional<WindowProperties> lw = windowPropertiesOf(*input))
    if (std::optional<WindowProperties> rw = windowPropertiesOf(*right))
      if (RelNodePtr wj = makeWindowJoin(type, e.pos, *lw, *rw, input, right, left_keys, right_keys, residual))
        return wj;
  return makeJoin(type, input, right, left_keys, right_keys, andOf(residual), e.pos);
}

RelNodePtr SqlToRelConverter::Impl::makeUncorrelatedExists(const RelNodePtr& input, const RelNodePtr& sub,
                                                          ExprPtr condition, bool negated, sql::SourcePos pos) {
  // Every row on both sides gets the key TRUE: the semi join keeps the outer rows while the subquery has a
  // row, the anti join while it has none, and both follow the subquery's retractions (they count the rows
  // of the key), so no aggregate of the subquery is needed. Only the key is kept of the subquery.
  const ExprPtr key = makeBooleanLiteral(true);
  RelNodePtr right = makeCalc(sub, std::move(condition), {key}, {"EXPR$0"});
  return makeJoin(negated ? FlinkJoinType::kAnti : FlinkJoinType::kSemi, input, right, {key},
                  {makeInputRef(0, key->type)}, nullptr, pos);
}

RelNodePtr SqlToRelConverter::Impl::convertInSubquery(const RelNodePtr& input, const Scope& scope,
                                                      const sql::Expr& in) {
  SLUICE_CHECK(in.kind == sql::ExprKind::kIn && in.subquery != nullptr, "not an IN subquery");
  ExprPtr value = convert(*in.children[0], scope);
  RelNodePtr sub = convertQueryRel(*in.subquery);
  if (sub->row_type.size() != 1)
    fail(in.pos, fmt::format("The subquery of IN must return exactly one column, not {}", sub->row_type.size()));
  const LogicalType& b = sub->row_type.types[0];
  if (!leastRestrictive(value->type, b))
    fail(in.pos, fmt::format("Values passed to IN operator must have compatible types: {} and {}",
                             value->type.toString(), b.toString()));
  // SQL's NOT IN is FALSE/UNKNOWN for every row once the subquery holds a NULL, and UNKNOWN for a NULL value:
  // a null-aware anti join would need every key's state at once (Flink runs it without keys).
  if (in.negated && (value->type.nullable || b.nullable))
    fail(in.pos, fmt::format("NOT IN over nullable values is not supported (a null-aware anti join has no join key): "
                             "the value is {} and the subquery returns {}; declare the columns NOT NULL",
                             value->type.toString(), b.toString()));
  std::vector<ExprPtr> left_keys = {value};
  std::vector<ExprPtr> right_keys = {makeInputRef(0, b)};
  return makeJoin(in.negated ? FlinkJoinType::kAnti : FlinkJoinType::kSemi, input, sub, left_keys, right_keys,
                  nullptr, in.pos);
}

/// A subtree of the FROM clause: a leaf table reference or a join of two subtrees, covering the columns
/// [lo, hi) of the whole FROM clause's row.
struct SqlToRelConverter::Impl::JoinTree {
  const sql::TableRef* ref = nullptr;
  FromResult leaf;  ///< leaves only
  /// A leaf `t FOR SYSTEM_TIME AS OF ...`: the right side of a lookup or temporal join.
  std::unique_ptr<SnapshotTable> snapshot;
  /// A leaf LATERAL TABLE(f(...)): the right side of a Correlate.
  std::unique_ptr<LateralCall> lateral;
  std::unique_ptr<JoinTree> left, right;
  int lo = 0, hi = 0;
};

FromResult SqlToRelConverter::Impl::convertJoinFrom(const sql::TableRef& from,
                                                     const std::vector<const sql::Expr*>& where_conjuncts,
                                                     ExprPtr& where) {
  // The leaves left to right; the whole FROM row is their columns in that order.
  FromResult whole;
  std::vector<char> attr;  ///< per column of `whole`: 'r' a row time, 'p' a processing time, 0 neither
  std::function<std::unique_ptr<JoinTree>(const sql::TableRef&)> leaves = [&](const sql::TableRef& ref) {
    auto t = std::make_unique<JoinTree>();
    t->ref = &ref;
    t->lo = static_cast<int>(whole.scope.columns.size());
    if (ref.kind == sql::TableRefKind::kJoin) {
      t->left = leaves(*ref.left);
      t->right = leaves(*ref.right);
    } else {
      if (ref.kind == sql::TableRefKind::kLateral) {
        t->lateral = std::make_unique<LateralCall>();
        t->leaf = convertLateral(ref, whole.scope, *t->lateral);
      } else if (ref.system_time) {
        t->snapshot = std::make_unique<SnapshotTable>();
        t->leaf = convertSnapshot(ref, whole.scope, attr, *t->snapshot);
      } else {
        t->leaf = convertFrom(ref);
      }
      if (t->leaf.windowed) {
        if (t->leaf.window.kind == WindowSpec::Kind::kSession)
          fail(t->leaf.window_pos, "Window table functions are not supported as an input of a regular join");
        t->leaf = windowTableFunction(t->leaf);  // a window join when ON equates the windows (below)
      }
      for (ScopeColumn c : t->leaf.scope.columns) {
        char a = 0;
        if (!t->snapshot && !t->lateral && c.index >= 0)
          a = c.rowtime ? 'r' : isProctimeAttribute(*t->leaf.rel, c.index) ? 'p' : 0;
        c.index += t->lo;
        c.rowtime = false;  // set from the joins' output below (only interval joins keep them)
        whole.scope.columns.push_back(c);
        attr.push_back(a);
      }
    }
    t->hi = static_cast<int>(whole.scope.columns.size());
    return t;
  };
  std::unique_ptr<JoinTree> root = leaves(from);

  // WHERE conjuncts, over the whole row; the joins take those that read both of their sides.
  std::vector<ExprPtr> pending;
  std::vector<sql::SourcePos> pending_pos;
  std::vector<bool> taken;
  for (const sql::Expr* c : where_conjuncts) {
    ExprPtr w = convert(*c, whole.scope);
    checkBoolean(w, *c, "WHERE");
    splitConjuncts(w, pending);
    pending_pos.resize(pending.size(), c->pos);
  }
  taken.assign(pending.size(), false);

  std::function<RelNodePtr(const JoinTree&, bool)> build = [&](const JoinTree& t, bool inner_path) -> RelNodePtr {
    if (!t.left) {
      if (!inner_path || t.snapshot || t.lateral) return t.leaf.rel;
      // Below inner joins only, a WHERE conjunct over one table filters that table before the join.
      std::vector<ExprPtr> filters;
      for (size_t i = 0; i < pending.size(); ++i) {
        if (taken[i]) continue;
        int lo = INT32_MAX, hi = -1;
        refRange(pending[i], lo, hi);
        if (hi < 0 || lo < t.lo || hi >= t.hi) continue;
        taken[i] = true;
        filters.push_back(shiftRefs(pending[i], 0, -t.lo));
      }
      if (filters.empty()) return t.leaf.rel;
      const RelNodePtr& in = t.leaf.rel;
      std::vector<ExprPtr> all;
      for (size_t i = 0; i < in->row_type.size(); ++i) all.push_back(makeInputRef(static_cast<int>(i), in->row_type.types[i]));
      return makeCalc(in, andOf(filters), all, in->row_type.names);
    }
    const sql::TableRef& ref = *t.ref;
    const bool inner = ref.join_type == sql::JoinType::kInner || ref.join_type == sql::JoinType::kCross;
    RelNodePtr left = build(*t.left, inner_path && inner);
    RelNodePtr right = build(*t.right, inner_path && inner);
    const int nl = t.left->hi - t.left->lo;

    // Conjuncts over this join's row (columns relative to lo), each with its SQL position.
    std::vector<ExprPtr> conjuncts;
    std::vector<sql::SourcePos> positions;
    if (ref.condition) {
      Scope scope;
      for (const auto& c : whole.scope.columns)
        if (c.index >= t.lo && c.index < t.hi) {
          ScopeColumn local = c;
          local.index -= t.lo;
          scope.columns.push_back(local);
        }
      std::vector<const sql::Expr*> parts;
      std::function<void(const sql::Expr&)> split = [&](const sql::Expr& e) {
        if (e.kind == sql::ExprKind::kBinary && e.binary_op == sql::BinaryOp::kAnd) {
          for (const auto& ch : e.children) split(*ch);
          return;
        }
        parts.push_back(&e);
      };
      split(*ref.condition);
      for (const sql::Expr* part : parts) {
        ExprPtr on = convert(*part, scope);
        checkBoolean(on, *part, "ON");
        splitConjuncts(on, conjuncts);
        positions.resize(conjuncts.size(), part->pos);
      }
    }
    if (inner_path && inner) {
      for (size_t i = 0; i < pending.size(); ++i) {
        if (taken[i]) continue;
        int lo = INT32_MAX, hi = -1;
        refRange(pending[i], lo, hi);
        if (hi < 0 || lo < t.lo || hi >= t.hi || lo >= t.lo + nl || hi < t.lo + nl) continue;
        taken[i] = true;
        conjuncts.push_back(shiftRefs(pending[i], 0, -t.lo));
        positions.push_back(pending_pos[i]);
      }
    }

    // Interval join: time predicates bounding the inputs' time attributes; they are not join keys.
    std::vector<bool> is_time;
    // (Not for a lookup or temporal join, whose right side is a snapshot.)
    std::optional<IntervalJoinBounds> bounds;
    if (t.left->lateral) fail(t.left->lateral->pos, "LATERAL TABLE needs a table to its left: FROM t, LATERAL TABLE(...)");
    if (t.right->lateral) {
      if (ref.join_type == sql::JoinType::kRight || ref.join_type == sql::JoinType::kFull)
        fail(ref.pos, "A table function (LATERAL TABLE) supports only INNER, CROSS and LEFT joins");
      return makeCorrelate(left, *t.right->lateral, t.left->lo, t.left->hi, ref.join_type == sql::JoinType::kLeft,
                           conjuncts, ref.pos);
    }
    if (!t.right->snapshot) bounds = intervalBounds(conjuncts, positions, *left, *right, is_time);
    std::vector<ExprPtr> time_preds;
    if (bounds) {
      std::vector<ExprPtr> others;
      for (size_t i = 0; i < conjuncts.size(); ++i) (is_time[i] ? time_preds : others).push_back(conjuncts[i]);
      conjuncts = std::move(others);
    }

    // Equi-join keys: `l = r` with l reading only the left side and r only the right one.
    std::vector<ExprPtr> left_keys, right_keys, rest;
    for (const auto& c : conjuncts) {
      if (c->kind == ExprKind::kCall && c->op == ScalarOp::kEquals && c->args.size() == 2) {
        int alo = INT32_MAX, ahi = -1, blo = INT32_MAX, bhi = -1;
        refRange(c->args[0], alo, ahi);
        refRange(c->args[1], blo, bhi);
        auto leftOnly = [&](int, int hi) { return hi >= 0 && hi < nl; };
        auto rightOnly = [&](int lo, int hi) { return hi >= 0 && lo >= nl; };
        if (leftOnly(alo, ahi) && rightOnly(blo, bhi)) {
          left_keys.push_back(c->args[0]);
          right_keys.push_back(shiftRefs(c->args[1], 0, -nl));
          continue;
        }
        if (rightOnly(alo, ahi) && leftOnly(blo, bhi)) {
          left_keys.push_back(c->args[1]);
          right_keys.push_back(shiftRefs(c->args[0], 0, -nl));
          continue;
        }
      }
      rest.push_back(c);
    }
    if (t.left->snapshot) fail(t.left->snapshot->period_pos, "FOR SYSTEM_TIME AS OF is only supported on the right side of a join");
    if (t.right->snapshot) {
      const SnapshotTable& snap = *t.right->snapshot;
      if (ref.join_type != sql::JoinType::kInner && ref.join_type != sql::JoinType::kLeft &&
          ref.join_type != sql::JoinType::kCross)
        fail(ref.pos, fmt::format("Temporal table join currently only support INNER JOIN and LEFT JOIN, but was {} JOIN.",
                                  ref.join_type == sql::JoinType::kRight ? "RIGHT" : "FULL"));
      // The period must still be a time attribute of this join's left input (a regular join below drops them).
      const int local = snap.period - t.left->lo;
      const bool attribute = local >= 0 && snap.period < t.left->hi &&
                             (snap.lookup ? isProctimeAttribute(*left, local) : left->rowtime[static_cast<size_t>(local)]);
      if (!attribute)
        fail(snap.period_pos, "Temporal table join currently only supports 'FOR SYSTEM_TIME AS OF' left table's time "
                              "attribute field");
      const FlinkJoinType type = ref.join_type == sql::JoinType::kLeft ? FlinkJoinType::kLeft : FlinkJoinType::kInner;
      if (snap.lookup) return makeLookupJoin(type, left, snap, conjuncts, ref.pos);
      return makeTemporalJoin(type, left, right, local, conjuncts, ref.pos);
    }
    // Inputs with window properties (window TVFs, window aggregations, window joins; sql_to_rel_window_join.cc).
    std::optional<WindowProperties> left_window = bounds ? std::nullopt : windowPropertiesOf(*left);
    std::optional<WindowProperties> right_window = left_window ? windowPropertiesOf(*right) : std::nullopt;
    if (left_window && right_window)
      if (RelNodePtr wj = makeWindowJoin(joinTypeOf(ref.join_type), ref.pos, *left_window, *right_window, left, right,
                                         left_keys, right_keys, rest))
        return wj;
    if (left_keys.empty() && !bounds) {
      if (ref.join_type == sql::JoinType::kCross)
        fail(ref.pos,
             "Cross join without an equi-join condition is not supported: it would need unbounded broadcast state; "
             "add an equality between columns of both inputs (a.x = b.y) to the WHERE clause");
      fail(ref.pos,
           "Join without an equi-join condition is not supported: the ON clause needs an equality between columns "
           "of both inputs (a.x = b.y)");
    }

    return makeJoin(joinTypeOf(ref.join_type), left, right, left_keys, right_keys, andOf(rest), ref.pos, bounds ? &*bounds : nullptr,
                    andOf(time_preds));
  };
  whole.rel = build(*root, true);
  for (auto& c : whole.scope.columns)
    if (c.index >= 0) c.rowtime = whole.rel->rowtime[static_cast<size_t>(c.index)];

  std::vector<ExprPtr> left_over;
  for (size_t i = 0; i < pending.size(); ++i)
    if (!taken[i]) left_over.push_back(pending[i]);
  where = andOf(left_over);
  return whole;
}

}  // namespace sluice::table
