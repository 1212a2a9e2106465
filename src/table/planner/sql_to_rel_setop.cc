// VALUES, SELECT without FROM, WITH items, column alias lists and the set operations other than UNION ALL
// (UNION, INTERSECT, EXCEPT), planned as Flink's optimizer rewrites them (Calcite's UnionToDistinctRule,
// IntersectToDistinctRule and MinusToDistinctRule: a UNION ALL tagged per side under a GROUP BY on every
// column).

#include <fmt/format.h>

#include "common/error.h"
#include "table/functions/calc_program.h"
#include "table/planner/sql_to_rel_internal.h"
#include "table/runtime/replicate_rows.h"
#include "table/planner/type_coercion.h"
#include "table/runtime/values_source.h"

namespace sluice::table {
namespace {

/// The planner's source of a Values node: rows computed at planning time.
class ValuesTableSource final : public ScanTableSource {
 public:
  ValuesTableSource(std::shared_ptr<const types::RowBatch> rows, std::string tuples)
      : rows_(std::move(rows)), tuples_(std::move(tuples)) {}
  std::shared_ptr<const runtime::StreamOperatorFactory> operatorFactory() const override {
    return makeValuesSourceFactory(rows_);
  }
  bool isBounded() const override { return true; }
  std::string summary() const override { return tuples_; }
  bool applyProjection(const std::vector<int>& fields) override {
    auto projected = std::make_shared<types::RowBatch>();
    for (int f : fields) projected->columns().push_back(rows_->column(static_cast<size_t>(f)));
    projected->kinds() = rows_->kinds();
    rows_ = std::move(projected);
    return true;
  }

 private:
  std::shared_ptr<const types::RowBatch> rows_;
  std::string tuples_;
};

}  // namespace

RelNodePtr SqlToRelConverter::Impl::makeValues(const std::vector<std::vector<ExprPtr>>& rows,
                                               std::vector<std::string> names, const std::vector<sql::SourcePos>& at) {
  const size_t width = names.size();
  std::vector<LogicalType> types(width, LogicalType());
  for (size_t c = 0; c < width; ++c) {
    std::optional<LogicalType> t = rows[0][c]->type;
    for (size_t r = 1; r < rows.size() && t; ++r) t = leastRestrictive(*t, rows[r][c]->type);
    if (!t)
      fail(at[c], fmt::format("Values passed to VALUES must have compatible types: column {} mixes {} and others",
                              c + 1, rows[0][c]->type.toString()));
    if (t->id == TypeId::kNull) fail(at[c], fmt::format("Illegal use of 'NULL' in column {} of VALUES", c + 1));
    types[c] = *t;
  }
  // Each row is evaluated once, now, over a one-row input of no columns the expressions can see.
  RowType dummy{{"ZERO"}, {LogicalType::integer(false)}};
  types::RowBatch one(dummy);
  one.column(0).appendLong(0);
  one.kinds().push_back(types::RowKind::kInsert);
  auto batch = std::make_shared<types::RowBatch>(RowType{names, types});
  std::vector<std::string> tuples;
  for (const auto& row : rows) {
    std::vector<ExprPtr> cells;
    std::vector<std::string> text;
    for (size_t c = 0; c < width; ++c) {
      cells.push_back(row[c]->type == types[c] ? row[c] : makeCast(row[c], types[c]));
      text.push_back(row[c]->toString());
    }
    CalcProgram program(dummy, nullptr, cells, names);
    types::RowBatch in = one;
    types::RowBatch out = program.apply(std::move(in));
    batch->appendRow(out, 0);
    tuples.push_back(fmt::format("{{ {} }}", fmt::join(text, ", ")));
  }
  auto rel = std::make_shared<RelNode>();
  rel->kind = RelKind::kTableSourceScan;
  rel->is_values = true;
  rel->table_name = "Values";
  rel->row_type = RowType{std::move(names), std::move(types)};
  rel->rowtime.assign(width, false);
  rel->parallelism = 1;
  rel->source = std::make_shared<ValuesTableSource>(batch, fmt::format("[{}]", fmt::join(tuples, ", ")));
  return rel;
}

RelNodePtr SqlToRelConverter::Impl::convertValues(const sql::SelectStmt& s) {
  Scope none;
  std::vector<std::vector<ExprPtr>> rows;
  std::vector<sql::SourcePos> at;
  for (const auto& row : s.values) {
    std::vector<ExprPtr> cells;
    for (const auto& e : row) {
      if (const sql::Expr* a = findAggregate(*e)) fail(a->pos, "Aggregate functions are not allowed in VALUES");
      cells.push_back(convert(*e, none));
    }
    rows.push_back(std::move(cells));
  }
  for (const auto& e : s.values[0]) at.push_back(e->pos);
  std::vector<std::string> names;
  for (size_t c = 0; c < rows[0].size(); ++c) names.push_back("EXPR$" + std::to_string(c));
  return makeValues(rows, std::move(names), at);
}

FromResult SqlToRelConverter::Impl::oneRowFrom() {
  FromResult out;
  out.rel = makeValues({{makeIntegerLiteral("0")}}, {"ZERO"}, {sql::SourcePos{}});
  return out;  // the scope stays empty: SELECT without FROM sees no column
}

const sql::WithItem* SqlToRelConverter::Impl::findWithItem(const sql::QualifiedName& name, size_t& visible) const {
  if (name.size() != 1) return nullptr;
  for (size_t i = with_items.size(); i-- > 0;) {
    if (with_items[i]->name == name[0]) {
      visible = i;
      return with_items[i];
    }
  }
  return nullptr;
}

RelNodePtr SqlToRelConverter::Impl::convertWithItem(const sql::WithItem& item, size_t visible, sql::SourcePos pos) {
  if (++view_depth > 64) fail(pos, "Views nest too deeply");
  // The item sees the items before it (and the enclosing queries' ones), not itself or later ones.
  std::vector<const sql::WithItem*> saved = with_items;
  with_items.resize(visible);
  RelNodePtr rel = convertQueryRel(*item.query);
  with_items = std::move(saved);
  --view_depth;
  if (!item.columns.empty()) {
    if (item.columns.size() != rel->row_type.size())
      fail(item.pos, fmt::format("List of column aliases of '{}' has {} names but its query has {} columns", item.name,
                                 item.columns.size(), rel->row_type.size()));
    auto copy = std::make_shared<RelNode>(*rel);
    copy->row_type.names = item.columns;
    rel = copy;
  }
  return rel;
}

void SqlToRelConverter::Impl::applyColumnAliases(FromResult& from, const sql::TableRef& ref) const {
  if (ref.column_aliases.empty()) return;
  std::vector<ScopeColumn*> visible;
  for (auto& c : from.scope.columns)
    if (!c.window_property && c.nested.empty()) visible.push_back(&c);
  if (visible.size() != ref.column_aliases.size()) {
    std::vector<std::string> have;
    for (const ScopeColumn* c : visible) have.push_back(c->name);
    fail(ref.pos, fmt::format("List of column aliases must have same degree as table; table has {} columns ({}), "
                              "whereas alias list has {} columns",
                              have.size(), fmt::join(have, ", "), ref.column_aliases.size()));
  }
  for (size_t i = 0; i < visible.size(); ++i) {
    const std::string old = visible[i]->name;
    visible[i]->name = ref.column_aliases[i];
    // Flattened ROW fields follow their column's new name.
    for (auto& c : from.scope.columns)
      if (!c.nested.empty() && c.name == old && c.qualifier == visible[i]->qualifier) c.name = ref.column_aliases[i];
  }
}

std::vector<RelNodePtr> SqlToRelConverter::Impl::unifyBranches(std::vector<RelNodePtr> branches,
                                                               const std::vector<sql::SourcePos>& at,
                                                               const char* what) {
  const RelNodePtr& first = branches[0];
  std::vector<LogicalType> common = first->row_type.types;
  for (size_t b = 1; b < branches.size(); ++b) {
    if (branches[b]->row_type.size() != common.size())
      fail(at[b], fmt::format("Column count mismatch in {}: {} vs {}", what, common.size(), branches[b]->row_type.size()));
    for (size_t c = 0; c < common.size(); ++c) {
      std::optional<LogicalType> t = leastRestrictive(common[c], branches[b]->row_type.types[c]);
      if (!t)
        fail(at[b], fmt::format("Type mismatch in {} column {} ('{}'): {} vs {}", what, c + 1, first->row_type.names[c],
                                common[c].toString(), branches[b]->row_type.types[c].toString()));
      common[c] = *t;
    }
  }
  const std::vector<std::string> names = first->row_type.names;
  for (RelNodePtr& br : branches) {
    bool needs_cast = false;
    std::vector<ExprPtr> casts;
    for (size_t c = 0; c < common.size(); ++c) {
      ExprPtr ref = makeInputRef(static_cast<int>(c), br->row_type.types[c]);
      if (!(br->row_type.types[c] == common[c])) {
        needs_cast = true;
        ref = makeCast(ref, common[c]);
      }
      casts.push_back(ref);
    }
    if (needs_cast) br = makeCalc(br, nullptr, casts, names);
  }
  return branches;
}

RelNodePtr SqlToRelConverter::Impl::makeUnionAll(std::vector<RelNodePtr> branches) {
  auto u = std::make_shared<RelNode>();
  u->kind = RelKind::kUnion;
  u->row_type = branches[0]->row_type;
  // A column is a row time attribute when it is one in every branch (Flink keeps the time attribute of a
  // UNION ALL whose inputs agree on it; unifyBranches already made the types equal).
  u->rowtime.assign(u->row_type.size(), true);
  for (const RelNodePtr& br : branches)
    for (size_t c = 0; c < u->rowtime.size(); ++c)
      if (c >= br->rowtime.size() || !br->rowtime[c]) u->rowtime[c] = false;
  for (RelNodePtr& br : branches) {
    if (br->producesUpdates() && u->changelog != ChangelogMode::kAll) u->changelog = br->changelog;
    u->inputs.push_back(std::move(br));
  }
  return u;
}

RelNodePtr SqlToRelConverter::Impl::groupByAll(RelNodePtr input, size_t keys, std::vector<AggregateCall> calls) {
  auto agg = std::make_shared<RelNode>();
  agg->kind = RelKind::kGroupAggregate;
  agg->changelog = ChangelogMode::kAll;
  finalInBatch(*agg);
  for (size_t i = 0; i < keys; ++i) {
    agg->group_keys.push_back(static_cast<int>(i));
    agg->row_type.names.push_back(input->row_type.names[i]);
    agg->row_type.types.push_back(input->row_type.types[i]);
  }
  for (size_t i = 0; i < calls.size(); ++i) {
    agg->row_type.names.push_back("EXPR$" + std::to_string(i));
    agg->row_type.types.push_back(calls[i].result_type);
  }
  agg->rowtime.assign(agg->row_type.size(), false);
  agg->aggregates = std::move(calls);
  agg->inputs = {std::move(input)};
  return agg;
}

RelNodePtr SqlToRelConverter::Impl::distinctOver(RelNodePtr input) {
  const size_t n = input->row_type.size();
  return groupByAll(std::move(input), n, {});
}

RelNodePtr SqlToRelConverter::Impl::convertSetOperation(const sql::SelectStmt& s) {
  const sql::SetOperation& op = *s.set_op;
  const char* what = op.kind == sql::SetOpKind::kUnion       ? "UNION"
                     : op.kind == sql::SetOpKind::kIntersect ? "INTERSECT"
                                                             : "EXCEPT";
  std::vector<RelNodePtr> sides = unifyBranches({convertQueryRel(*op.left), convertQueryRel(*op.right)},
                                                {op.left->pos, op.right->pos}, what);
  const size_t width = sides[0]->row_type.size();
  const std::vector<std::string> names = sides[0]->row_type.names;
  if (op.kind == sql::SetOpKind::kUnion) return distinctOver(makeUnionAll(std::move(sides)));
  // Tag each side's rows (1 in its own column, NULL in the other's), count the tags per distinct row:
  // INTERSECT keeps rows seen on both sides, EXCEPT rows seen on the left only.
  std::vector<std::string> tagged_names = names;
  tagged_names.push_back("$left");
  tagged_names.push_back("$right");
  for (size_t side = 0; side < 2; ++side) {
    std::vector<ExprPtr> p;
    for (size_t c = 0; c < width; ++c) p.push_back(makeInputRef(static_cast<int>(c), sides[side]->row_type.types[c]));
    ExprPtr one = makeIntegerLiteral("1");
    ExprPtr null = makeCast(makeNullLiteral(), LogicalType::integer(true));
    p.push_back(side == 0 ? makeCast(one, LogicalType::integer(true)) : null);
    p.push_back(side == 1 ? makeCast(one, LogicalType::integer(true)) : null);
    sides[side] = makeCalc(sides[side], nullptr, p, tagged_names);
  }
  std::vector<AggregateCall> calls;
  for (int tag = 0; tag < 2; ++tag) {
    AggregateCall c;
    c.kind = AggKind::kCount;
    c.arg_index = static_cast<int>(width) + tag;
    c.arg_type = LogicalType::integer(true);
    c.result_type = AggregateCall::resultType(AggKind::kCount, c.arg_type);
    c.name = tag == 0 ? "COUNT($left)" : "COUNT($right)";
    calls.push_back(c);
  }
  RelNodePtr agg = groupByAll(makeUnionAll(std::move(sides)), width, std::move(calls));
  const LogicalType count_type = agg->row_type.types[width];
  ExprPtr zero = makeCast(makeIntegerLiteral("0"), count_type);
  ExprPtr left_seen = makeCall(ScalarOp::kGreaterThan, {makeInputRef(static_cast<int>(width), count_type), zero});
  ExprPtr right_count = makeInputRef(static_cast<int>(width) + 1, count_type);
  ExprPtr right_cond = op.kind == sql::SetOpKind::kIntersect ? makeCall(ScalarOp::kGreaterThan, {right_count, zero})
                                                             : makeCall(ScalarOp::kEquals, {right_count, zero});
  std::vector<ExprPtr> out;
  for (size_t c = 0; c < width; ++c) out.push_back(makeInputRef(static_cast<int>(c), agg->row_type.types[c]));
  if (!op.all) return makeCalc(agg, makeCall(ScalarOp::kAnd, {left_seen, right_cond}), out, names);
  // ALL: each distinct row min(l, r) (INTERSECT) or l - r (EXCEPT) times, Calcite's rules with a
  // replicate-rows table function after the aggregate.
  ExprPtr left_count = makeInputRef(static_cast<int>(width), count_type);
  ExprPtr times = op.kind == sql::SetOpKind::kIntersect
                      ? makeCall(ScalarOp::kCase, {makeCall(ScalarOp::kGreaterThan, {left_count, right_count}),
                                                   right_count, left_count})
                      : makeCall(ScalarOp::kMinus, {left_count, right_count});
  std::vector<ExprPtr> counted = {times};
  std::vector<std::string> counted_names = {"$times"};
  for (size_t c = 0; c < width; ++c) {
    counted.push_back(out[c]);
    counted_names.push_back(names[c]);
  }
  RelNodePtr calc = makeCalc(agg, makeCall(ScalarOp::kGreaterThan, {times, zero}), counted, counted_names);
  auto rep = std::make_shared<RelNode>();
  rep->kind = RelKind::kReplicateRows;
  rep->inputs = {calc};
  rep->row_type = ReplicateRowsOperator::outputType(calc->row_type);
  rep->rowtime.assign(rep->row_type.size(), false);
  rep->changelog = calc->changelog;
  return rep;
}

}  // namespace sluice::table
