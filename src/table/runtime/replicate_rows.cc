#include "table/runtime/replicate_rows.h"

#include "common/error.h"

namespace sluice::table {

types::RowType ReplicateRowsOperator::outputType(const types::RowType& input_type) {
  SLUICE_USER_CHECK(input_type.size() >= 2 && input_type.types[0].isIntegral(),
                    "ReplicateRows needs a count column and at least one column to copy");
  types::RowType out;
  out.names.assign(input_type.names.begin() + 1, input_type.names.end());
  out.types.assign(input_type.types.begin() + 1, input_type.types.end());
  return out;
}

ReplicateRowsOperator::ReplicateRowsOperator(types::RowType input_type) : output_type_(outputType(input_type)) {}

void ReplicateRowsOperator::processBatch(types::RowBatch&& batch) {
  if (batch.empty()) return;
  types::RowBatch out(output_type_);
  const types::Column& count = batch.column(0);
  for (size_t row = 0; row < batch.numRows(); ++row) {
    if (count.isNull(row)) continue;
    const int64_t n = count.getLong(row);
    for (int64_t i = 0; i < n; ++i) {
      for (size_t c = 0; c < output_type_.size(); ++c) out.column(c).appendFrom(batch.column(c + 1), row);
      out.kinds().push_back(batch.kind(row));
    }
  }
  if (!out.empty()) output_->collect(std::move(out));
}

std::shared_ptr<const runtime::StreamOperatorFactory> makeReplicateRowsFactory(types::RowType input_type) {
  ReplicateRowsOperator probe(input_type);
  return runtime::makeOperatorFactory([input_type = std::move(input_type)]() -> std::unique_ptr<runtime::StreamOperator> {
    return std::make_unique<ReplicateRowsOperator>(input_type);
  });
}

}  // namespace sluice::table
