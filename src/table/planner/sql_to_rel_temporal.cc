// Joins with `t FOR SYSTEM_TIME AS OF left.time` on their right (Calcite's SqlSnapshot):
//  - AS OF a processing-time attribute of the left side, over a table whose connector can be looked up
//    (the filesystem connector): a lookup join (Flink's StreamPhysicalLookupJoin / StreamExecLookupJoin).
//    Rules, as Flink's LookupJoin:
//     - INNER and LEFT joins only;
//     - an equality `<expression over the left side> = <a column of the table>` is a lookup key (the left
//       expression is computed in a Calc below the join); at least one is needed ("Temporal table join
//       requires an equality condition on fields of table [...]");
//     - conjuncts over the table alone filter the table (Flink's calcOnTemporalTable, EXPLAIN `where=`);
//       for an INNER join conjuncts over the left side alone filter it before the lookup; the rest is the
//       join condition (`joinCondition=`), evaluated per looked-up row;
//     - the output keeps the left side's changelog and time attributes; no exchange (chained).
//  - AS OF a row-time attribute of the left side: an event-time temporal join against a versioned table
//    (Flink's StreamPhysicalTemporalJoin on row time): the right side needs a primary key (a table's, or the
//    unique key of a view, as uniqueKeysOf finds it) that the equi keys contain, and a row time attribute;
//    both sides are hash-partitioned on the keys into a TemporalRowTimeJoinOperator. For an INNER join
//    conjuncts over the left side alone filter it first; the rest (conditions on the right side included)
//    is checked against the version found, as Flink does. The output keeps the left side's changelog and
//    time attributes (EXPLAIN `TemporalJoin(..., where=[AND(=(k, k0), __TEMPORAL_JOIN_CONDITION(...))])`).
//  - AS OF anything else is refused at the period, as Flink does.

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.h"
#include "table/planner/sql_to_rel_internal.h"
#include "table/planner/type_coercion.h"

namespace sluice::table {

FromResult SqlToRelConverter::Impl::convertSnapshot(const sql::TableRef& ref, const Scope& left,
                                                    const std::vector<char>& attr, SnapshotTable& snap) {
  const sql::Expr& at = *ref.system_time;
  ExprPtr period = convert(at, left);
  if (period->kind == ExprKind::kCall && period->op == ScalarOp::kProctime)
    fail(at.pos, "Temporal table join currently only supports 'FOR SYSTEM_TIME AS OF' left table's proctime field, "
                 "doesn't support 'PROCTIME()'");
  const char kind = period->kind == ExprKind::kInputRef ? attr[static_cast<size_t>(period->input_index)] : 0;
  if (kind == 0)
    fail(at.pos, "Temporal table join currently only supports 'FOR SYSTEM_TIME AS OF' left table's time attribute "
                 "field");
  snap.period = period->input_index;
  snap.period_pos = at.pos;
  const std::string qualifier = ref.alias ? *ref.alias : ref.name.back();
  size_t visible = 0;
  const CatalogTable* table = findWithItem(ref.name, visible) ? nullptr : catalog.findTable(ref.name);
  if (kind == 'r') {
    // An event-time temporal join reads the versioned table (or view) as any FROM item.
    FromResult out = convertNamed(ref.name, ref.alias, ref.pos);
    snap.table_name = sql::qualifiedNameToString(ref.name);
    applyColumnAliases(out, ref);
    return out;
  }
  snap.lookup = true;
  if (table == nullptr) {
    // Not a table: a view or WITH item would need a processing-time temporal join, as in Flink; an unknown
    // name gets the usual error.
    convertNamed(ref.name, ref.alias, ref.pos);
    fail(ref.pos, "Processing-time temporal join is not supported yet.");
  }
  snap.table_name = table->name;
  snap.schema = std::make_shared<TableSchema>(resolveSchema(*table->definition, table->name, qualifier));
  const ResolvedTable& resolved = snap.schema->resolved;
  if (!snap.schema->nested_paths.empty() || !resolved.metadata.empty())
    fail(ref.pos, fmt::format("Table '{}' has ROW or METADATA columns, which a lookup join cannot read yet", table->name));
  std::shared_ptr<ScanTableSource> source;
  try {
    source = factories.find(resolved).createSource(resolved, config);
  } catch (const SqlError&) {
    throw;
  } catch (const UserError& err) {
    fail(ref.pos, fmt::format("Unable to create a source for reading table 'default_catalog.default_database.{}'.\n\n{}",
                              table->name, err.what()));
  }
  snap.loader = source->lookupLoader();
  // Flink plans a table that is no LookupTableSource as a processing-time temporal join, which it refuses.
  if (snap.loader == nullptr) fail(ref.pos, "Processing-time temporal join is not supported yet.");
  FromResult out;
  out.scope.columns = snap.schema->scope;
  applyColumnAliases(out, ref);
  return out;
}

RelNodePtr SqlToRelConverter::Impl::makeLookupJoin(FlinkJoinType type, RelNodePtr probe, const SnapshotTable& snap,
                                                   const std::vector<ExprPtr>& conjuncts, sql::SourcePos pos) {
  const int nl = static_cast<int>(probe->row_type.size());
  const TableSchema& schema = *snap.schema;
  const RowType& physical = snap.loader->rowType();
  // The dimension side: the table's columns (computed ones over the physical row).
  std::vector<ExprPtr> dim;
  std::vector<std::string> dim_names;
  if (!schema.projections.empty()) {
    dim = schema.projections;
    dim_names = schema.names;
  } else {
    for (size_t i = 0; i < physical.size(); ++i) dim.push_back(makeInputRef(static_cast<int>(i), physical.types[i]));
    dim_names = physical.names;
  }
  const size_t dim_width = dim.size();

  std::vector<ExprPtr> probe_key_exprs, probe_filters, dim_conds, rest;
  std::vector<int> dim_key_cols;
  for (const ExprPtr& c : conjuncts) {
    int lo = INT32_MAX, hi = -1;
    refRange(c, lo, hi);
    if (c->kind == ExprKind::kCall && c->op == ScalarOp::kEquals && c->args.size() == 2) {
      bool taken = false;
      for (int side = 0; side < 2 && !taken; ++side) {
        const ExprPtr& l = c->args[static_cast<size_t>(side)];
        const ExprPtr& r = c->args[static_cast<size_t>(1 - side)];
        int llo = INT32_MAX, lhi = -1;
        refRange(l, llo, lhi);
        if (lhi < 0 || lhi >= nl || r->kind != ExprKind::kInputRef || r->input_index < nl) continue;
        probe_key_exprs.push_back(l);
        dim_key_cols.push_back(r->input_index - nl);
        taken = true;
      }
      if (taken) continue;
    }
    if (hi >= 0 && lo >= nl) {
      dim_conds.push_back(shiftRefs(c, 0, -nl));
    } else if (hi >= 0 && hi < nl && type == FlinkJoinType::kInner) {
      probe_filters.push_back(c);
    } else {
      rest.push_back(c);
    }
  }
  if (probe_key_exprs.empty())
    fail(pos, fmt::format("Temporal table join requires an equality condition on fields of table "
                          "[default_catalog.default_database.{}].",
                          snap.table_name));

  // Key pairs of different forms are compared in their common type: the probe side casts in a Calc below,
  // the dimension side in extra columns of its calc.
  LookupJoinSpec spec;
  spec.type = type;
  spec.table_name = snap.table_name;
  spec.loader = snap.loader;
  std::vector<ExprPtr> probe_projections;
  std::vector<std::string> probe_names = probe->row_type.names;
  for (int i = 0; i < nl; ++i)
    probe_projections.push_back(makeInputRef(i, probe->row_type.types[static_cast<size_t>(i)]));
  std::vector<std::string> key_fields;
  for (size_t k = 0; k < probe_key_exprs.size(); ++k) {
    ExprPtr pe = probe_key_exprs[k];
    int dcol = dim_key_cols[k];
    const LogicalType& a = pe->type;
    const LogicalType& b = dim[static_cast<size_t>(dcol)]->type;
    key_fields.push_back(dim_names[static_cast<size_t>(dcol)]);
    if (!sameKeyForm(a, b)) {
      std::optional<LogicalType> common = leastRestrictive(a, b);
      if (!common) fail(pos, fmt::format("Cannot join on keys of types {} and {}", a.toString(), b.toString()));
      if (a.withNullable(true) != common->withNullable(true)) pe = makeCast(pe, common->withNullable(a.nullable));
      if (b.withNullable(true) != common->withNullable(true)) {
        dim.push_back(makeCast(dim[static_cast<size_t>(dcol)], common->withNullable(b.nullable)));
        dcol = static_cast<int>(dim.size() - 1);
      }
    }
    if (pe->kind == ExprKind::kInputRef) {
      spec.probe_keys.push_back(pe->input_index);
    } else {
      spec.probe_keys.push_back(static_cast<int>(probe_projections.size()));
      probe_projections.push_back(pe);
      probe_names.push_back(fmt::format("$f{}", probe_projections.size() - 1));
    }
    spec.dim_keys.push_back(dcol);
  }
  const int extra = static_cast<int>(probe_projections.size()) - nl;
  if (extra > 0 || !probe_filters.empty()) probe = makeCalc(probe, andOf(probe_filters), probe_projections, probe_names);
  const bool identity = schema.projections.empty() && dim.size() == dim_width;
  if (!identity) spec.dim_projections = dim;
  spec.dim_width = dim_width;
  spec.dim_names = dim_names;
  // The dimension conjuncts read the table's columns; the calc evaluates them over the loaded rows.
  if (ExprPtr cond = andOf(dim_conds)) spec.dim_condition = substitute(cond, dim);
  if (ExprPtr cond = andOf(rest)) spec.join_condition = shiftRefs(cond, nl, extra);

  auto join = std::make_shared<RelNode>();
  join->kind = RelKind::kLookupJoin;
  join->inputs = {probe};
  join->lookup = std::move(spec);
  join->lookup_table_fields = physical.names;
  join->lookup_key_fields = key_fields;
  join->row_type = LookupJoinOperator::outputType(probe->row_type, lookupDimType(join->lookup), type);
  uniquifyNames(join->row_type.names);
  join->rowtime = probe->rowtime;
  join->rowtime.resize(join->row_type.size(), false);
  join->changelog = probe->changelog;
  if (extra == 0) return join;
  // Drop the computed key columns again: the row keeps its layout.
  std::vector<ExprPtr> keep;
  std::vector<std::string> names;
  for (int i = 0; i < nl + static_cast<int>(dim_width); ++i) {
    const int from = i < nl ? i : i + extra;
    keep.push_back(makeInputRef(from, join->row_type.types[static_cast<size_t>(from)]));
    names.push_back(join->row_type.names[static_cast<size_t>(from)]);
  }
  return makeCalc(join, nullptr, keep, names);
}

RelNodePtr SqlToRelConverter::Impl::makeTemporalJoin(FlinkJoinType type, RelNodePtr left, RelNodePtr right,
                                                     int left_time, const std::vector<ExprPtr>& conjuncts,
                                                     sql::SourcePos pos) {
  const int nl = static_cast<int>(left->row_type.size());
  // Flink's TemporalJoinRewriteWithUniqueKeyRule and the checks of StreamPhysicalTemporalJoinRule.
  std::vector<std::vector<int>> pks = uniqueKeysOf(*right);
  if (pks.empty())
    fail(pos, "Temporal Table Join requires primary key in versioned table, but no primary key can be found.");
  int right_time = -1;
  for (size_t i = 0; i < right->rowtime.size(); ++i)
    if (right->rowtime[i]) right_time = static_cast<int>(i);
  if (right_time < 0)
    fail(pos, "Event-Time Temporal Table Join requires both primary key and row time attribute in versioned table, "
              "but no row time attribute can be found.");
  std::vector<ExprPtr> left_keys, right_keys, left_filters, rest;
  for (const ExprPtr& c : conjuncts) {
    int lo = INT32_MAX, hi = -1;
    refRange(c, lo, hi);
    if (c->kind == ExprKind::kCall && c->op == ScalarOp::kEquals && c->args.size() == 2) {
      int alo = INT32_MAX, ahi = -1, blo = INT32_MAX, bhi = -1;
      refRange(c->args[0], alo, ahi);
      refRange(c->args[1], blo, bhi);
      const bool a_left = ahi >= 0 && ahi < nl, b_left = bhi >= 0 && bhi < nl;
      const bool a_right = ahi >= 0 && alo >= nl, b_right = bhi >= 0 && blo >= nl;
      if ((a_left && b_right) || (a_right && b_left)) {
        left_keys.push_back(a_left ? c->args[0] : c->args[1]);
        right_keys.push_back(shiftRefs(a_left ? c->args[1] : c->args[0], 0, -nl));
        continue;
      }
    }
    if (type == FlinkJoinType::kInner && hi >= 0 && hi < nl) {
      left_filters.push_back(c);
    } else {
      rest.push_back(c);
    }
  }
  // The equi keys must contain a primary key of the versioned side.
  std::vector<int> key_cols;
  for (const ExprPtr& k : right_keys)
    if (k->kind == ExprKind::kInputRef) key_cols.push_back(k->input_index);
  const std::vector<int>* pk = nullptr;
  for (const auto& uk : pks)
    if (std::all_of(uk.begin(), uk.end(),
                    [&](int c) { return std::find(key_cols.begin(), key_cols.end(), c) != key_cols.end(); }))
      pk = &uk;
  if (pk == nullptr) {
    std::vector<std::string> names = left->row_type.names;
    for (const auto& n : right->row_type.names) names.push_back(n);
    uniquifyNames(names);
    std::vector<std::string> pk_names, pairs;
    for (int c : pks[0]) pk_names.push_back(names[static_cast<size_t>(nl + c)]);
    for (size_t i = 0; i < left_keys.size(); ++i)
      pairs.push_back(fmt::format("{}={}", left_keys[i]->toString(&names), shiftRefs(right_keys[i], 0, nl)->toString(&names)));
    for (const ExprPtr& c : rest) pairs.push_back(c->toString(&names));
    fail(pos, fmt::format("Temporal table's primary key [{}] must be included in the equivalence condition of temporal "
                          "join, but current temporal join condition is [{}].",
                          fmt::join(pk_names, ", "), fmt::join(pairs, ", ")));
  }
  if (!left_filters.empty()) {
    std::vector<ExprPtr> all;
    for (int i = 0; i < nl; ++i) all.push_back(makeInputRef(i, left->row_type.types[static_cast<size_t>(i)]));
    left = makeCalc(left, andOf(left_filters), all, left->row_type.names);
  }
  TemporalJoinSpec temporal;
  temporal.left_time = left_time;
  temporal.right_time = right_time;
  RelNodePtr join = makeJoin(type, left, right, left_keys, right_keys, andOf(rest), pos, nullptr, nullptr, &temporal);
  RelNode* node = join->kind == RelKind::kTemporalJoin ? join.get() : join->inputs[0].get();
  node->temporal_primary_key = *pk;
  return join;
}

}  // namespace sluice::table
