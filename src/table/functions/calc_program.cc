#include "table/functions/calc_program.h"

#include <fmt/format.h>

#include "common/error.h"

namespace sluice::table {

using types::Column;
using types::RowBatch;

namespace {
void collectInputTypes(const Expr& e, types::RowType& t) {
  if (e.kind == ExprKind::kInputRef) {
    const size_t i = static_cast<size_t>(e.input_index);
    if (t.types.size() <= i) {
      t.types.resize(i + 1);
      t.names.resize(i + 1);
    }
    t.types[i] = e.type;
    return;
  }
  for (const auto& a : e.args) collectInputTypes(*a, t);
}

types::RowType inferInputType(const ExprPtr& condition, const std::vector<ExprPtr>& projections) {
  types::RowType t;
  if (condition) collectInputTypes(*condition, t);
  for (const auto& p : projections) collectInputTypes(*p, t);
  return t;
}

std::vector<std::string> defaultNames(size_t n) {
  std::vector<std::string> names;
  for (size_t i = 0; i < n; ++i) names.push_back(fmt::format("EXPR${}", i));
  return names;
}

void markInputs(const Expr& e, std::vector<int>& uses) {
  if (e.kind == ExprKind::kInputRef) {
    if (e.input_index >= 0 && static_cast<size_t>(e.input_index) < uses.size()) ++uses[static_cast<size_t>(e.input_index)];
    return;
  }
  for (const auto& a : e.args) markInputs(*a, uses);
}
}  // namespace

CalcProgram::CalcProgram(types::RowType input_type, ExprPtr condition, std::vector<ExprPtr> projections,
                         std::vector<std::string> names)
    : input_type_(std::move(input_type)), condition_(std::move(condition)), projections_(std::move(projections)) {
  SLUICE_CHECK(names.size() == projections_.size(), "{} names for {} projections", names.size(), projections_.size());
  if (condition_) {
    SLUICE_USER_CHECK(condition_->type.id == types::TypeId::kBoolean || condition_->type.id == types::TypeId::kNull,
                      "The filter condition must be BOOLEAN, but is {}", condition_->type.toString());
    filter_ = std::make_unique<ExprEvaluator>(condition_);
  }
  std::vector<int> uses(input_type_.size(), 0);
  for (const auto& p : projections_) markInputs(*p, uses);
  used_columns_.resize(input_type_.size());
  for (size_t i = 0; i < uses.size(); ++i) used_columns_[i] = uses[i] > 0;
  evaluators_.reserve(projections_.size());
  for (size_t i = 0; i < projections_.size(); ++i) {
    evaluators_.emplace_back(projections_[i]);
    const int idx = evaluators_.back().inputIndex();
    movable_.push_back(idx >= 0 && static_cast<size_t>(idx) < uses.size() && uses[static_cast<size_t>(idx)] == 1);
    output_type_.names.push_back(names[i]);
    output_type_.types.push_back(projections_[i]->type);
  }
}

CalcProgram::CalcProgram(ExprPtr condition, std::vector<ExprPtr> projections)
    : CalcProgram(inferInputType(condition, projections), condition, projections, defaultNames(projections.size())) {}

RowBatch CalcProgram::apply(RowBatch&& in, CalcScratch* scratch) const {
  RowBatch out(output_type_);
  const size_t rows = in.numRows();
  if (rows == 0) return out;
  CalcScratch local;
  CalcScratch& s = scratch ? *scratch : local;
  if (s.projections.size() < evaluators_.size()) s.projections.resize(evaluators_.size());
  RowBatch compact;
  RowBatch* src = &in;
  if (filter_) {
    std::vector<uint32_t>& selected = s.selected;
    filter_->evaluateFilter(in, selected, &s.filter);
    if (selected.empty()) return out;
    if (selected.size() < rows) {
      // Gather only the columns the projections read; evaluating after the gather also keeps
      // per-row errors (1 / 0) away from rows the filter dropped, as in Flink.
      for (size_t c = 0; c < in.numColumns(); ++c) {
        if (c < used_columns_.size() && used_columns_[c]) compact.columns().push_back(gatherColumn(in.column(c), selected));
        else compact.columns().emplace_back(in.column(c).type());
      }
      compact.kinds().reserve(selected.size());
      for (uint32_t r : selected) compact.kinds().push_back(in.kind(r));
      src = &compact;
    }
  }
  for (size_t i = 0; i < evaluators_.size(); ++i) {
    const int idx = evaluators_[i].inputIndex();
    if (idx >= 0 && movable_[i]) {
      Column moved = std::move(src->column(static_cast<size_t>(idx)));
      // Keep the declared output type (e.g. the same column with a different name/nullability).
      out.column(i) = std::move(moved);
    } else {
      out.column(i) = evaluators_[i].evaluate(*src, &s.projections[i]);
    }
  }
  out.kinds() = std::move(src->kinds());
  return out;
}

std::string CalcProgram::toString() const {
  std::string select;
  for (size_t i = 0; i < projections_.size(); ++i) {
    if (i) select += ", ";
    const std::string expr = projections_[i]->toString(&input_type_.names);
    select += expr;
    if (expr != output_type_.names[i]) select += " AS " + output_type_.names[i];
  }
  std::string s = fmt::format("select=[{}]", select);
  if (condition_) s += fmt::format(", where=[{}]", condition_->toString(&input_type_.names));
  return s;
}

}  // namespace sluice::table
