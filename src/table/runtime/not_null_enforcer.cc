#include "table/runtime/not_null_enforcer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.h"

namespace sluice::table {

const ConfigOption<std::string> kSinkNotNullEnforcer(
    "table.exec.sink.not-null-enforcer", ConfigType::kEnum, "ERROR",
    "What a sink does with a NULL value for a NOT NULL column: ERROR fails the job, DROP drops the row.",
    {"ERROR", "DROP"});

void NotNullEnforcerOperator::processBatch(types::RowBatch&& batch) {
  if (batch.empty()) return;
  const NotNullConstraint& c = *constraint_;
  std::vector<uint32_t> keep;
  bool any_bad = false;
  for (size_t row = 0; row < batch.numRows(); ++row) {
    int bad = -1;
    for (size_t k = 0; k < c.columns.size() && bad < 0; ++k)
      if (batch.column(static_cast<size_t>(c.columns[k])).isNull(row)) bad = static_cast<int>(k);
    if (bad < 0) {
      if (any_bad) keep.push_back(static_cast<uint32_t>(row));
      continue;
    }
    if (!c.drop)
      throw UserError(fmt::format(
          "Column '{}' of table '{}' is NOT NULL, but a NULL value is being written into it. Set "
          "'table.exec.sink.not-null-enforcer' = 'DROP' to drop such rows instead of failing the job.",
          c.names[static_cast<size_t>(bad)], c.table_name));
    if (!any_bad) {
      // First bad row: keep the good rows before it.
      any_bad = true;
      for (size_t r = 0; r < row; ++r) keep.push_back(static_cast<uint32_t>(r));
    }
  }
  if (!any_bad) {
    output_->collect(std::move(batch));
    return;
  }
  if (keep.empty()) return;
  output_->collect(batch.select(keep));
}

std::shared_ptr<const runtime::StreamOperatorFactory> makeNotNullEnforcerFactory(
    std::shared_ptr<const NotNullConstraint> constraint) {
  return runtime::makeOperatorFactory([constraint]() -> std::unique_ptr<runtime::StreamOperator> {
    return std::make_unique<NotNullEnforcerOperator>(constraint);
  });
}

std::string notNullEnforcerName(const NotNullConstraint& constraint) {
  return fmt::format("ConstraintEnforcer[NotNullEnforcer(fields=[{}])]", fmt::join(constraint.names, ", "));
}

}  // namespace sluice::table
