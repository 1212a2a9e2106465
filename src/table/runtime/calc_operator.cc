#include "table/runtime/calc_operator.h"

namespace sluice::table {

void CalcOperator::processBatch(types::RowBatch&& batch) {
  // Record counts are kept by the operator chain's outputs.
  if (batch.empty()) return;
  types::RowBatch out = program_->apply(std::move(batch), &scratch_);
  if (out.empty()) return;
  output_->collect(std::move(out));
}

std::shared_ptr<const runtime::StreamOperatorFactory> makeCalcOperatorFactory(std::shared_ptr<const CalcProgram> program) {
  return runtime::makeOperatorFactory([program]() -> std::unique_ptr<runtime::StreamOperator> {
    return std::make_unique<CalcOperator>(program);
  });
}

}  // namespace sluice::table
