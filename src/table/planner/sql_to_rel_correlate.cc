// LATERAL TABLE(f(...)): a user-defined table function joined to the rows to its left, as Flink's
// Correlate (FlinkLogicalCorrelate over a table function scan).

#include <fmt/format.h>

#include "common/error.h"
#include "table/catalog/catalog.h"
#include "table/functions/user_function.h"
#include "table/planner/sql_to_rel_internal.h"

namespace sluice::table {

FromResult SqlToRelConverter::Impl::convertLateral(const sql::TableRef& ref, const Scope& left, LateralCall& call) {
  const sql::Expr& e = *ref.call;
  call.pos = e.pos;
  const CatalogFunction* f = catalog.findFunction(e.name, /*system=*/true);
  if (!f) f = catalog.findFunction(e.name, /*system=*/false);
  if (!f) fail(e.pos, fmt::format("No match found for function signature {}(...)", e.name));
  call.function = std::dynamic_pointer_cast<const TableFunction>(f->function);
  if (!call.function) fail(e.pos, fmt::format("{} is a scalar function: LATERAL TABLE needs a table function", f->name));
  call.name = f->name;
  std::vector<types::LogicalType> types;
  for (const auto& child : e.children) {
    call.args.push_back(convert(*child, left));
    types.push_back(call.args.back()->type);
  }
  try {
    call.output = call.function->inferType(types);
  } catch (const UserError& err) {
    fail(e.pos, fmt::format("Invalid function call {}: {}", call.name, err.what()));
  }
  SLUICE_CHECK(types.size() == call.args.size(), "{}: inferType changed the number of arguments", call.name);
  try {
    castUserFunctionArguments(call.args, types);
  } catch (const UserError& err) {
    fail(e.pos, err.what());
  }
  FromResult out;
  const std::string qualifier = ref.alias ? *ref.alias : call.name;
  for (size_t i = 0; i < call.output.size(); ++i) {
    ScopeColumn c;
    c.qualifier = qualifier;
    c.name = call.output.names[i];
    c.index = static_cast<int>(i);
    c.type = call.output.types[i];
    out.scope.columns.push_back(c);
  }
  applyColumnAliases(out, ref);
  return out;
}

RelNodePtr SqlToRelConverter::Impl::makeCorrelate(RelNodePtr left, const LateralCall& call, int left_lo, int left_hi,
                                                  bool left_outer, const std::vector<ExprPtr>& conditions,
                                                  sql::SourcePos pos) {
  auto rel = std::make_shared<RelNode>();
  rel->kind = RelKind::kCorrelate;
  rel->correlate.function_name = call.name;
  rel->correlate.function = call.function;
  rel->correlate.left_outer = left_outer;
  for (const auto& a : call.args) {
    int lo = INT32_MAX, hi = -1;
    refRange(a, lo, hi);
    if (hi >= 0 && (lo < left_lo || hi >= left_hi))
      fail(call.pos, "LATERAL TABLE can only read the columns of the tables joined to its left");
    rel->correlate.args.push_back(shiftRefs(a, 0, -left_lo));
  }
  rel->row_type = left->row_type;
  rel->rowtime = left->rowtime;
  for (size_t i = 0; i < call.output.size(); ++i) {
    rel->row_type.names.push_back(call.output.names[i]);
    // LEFT: a row without results is padded with NULLs.
    rel->row_type.types.push_back(left_outer ? call.output.types[i].withNullable(true) : call.output.types[i]);
    rel->rowtime.push_back(false);
  }
  rel->changelog = left->changelog;
  rel->inputs = {left};
  std::vector<ExprPtr> filters;
  for (const auto& c : conditions) {
    const bool is_true = c->kind == ExprKind::kLiteral && c->type.id == types::TypeId::kBoolean &&
                         std::holds_alternative<int64_t>(c->literal) && std::get<int64_t>(c->literal) != 0;
    if (!is_true) filters.push_back(c);
  }
  if (filters.empty()) return rel;
  if (left_outer) fail(pos, "A LEFT JOIN with a table function (LATERAL TABLE) supports only ON TRUE");
  std::vector<ExprPtr> all;
  for (size_t i = 0; i < rel->row_type.size(); ++i)
    all.push_back(makeInputRef(static_cast<int>(i), rel->row_type.types[i]));
  return makeCalc(rel, andOf(filters), all, rel->row_type.names);
}

}  // namespace sluice::table
