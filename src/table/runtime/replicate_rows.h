#pragma once
/// Flink's ReplicateRowsFunction, the table function its planner puts after INTERSECT ALL / EXCEPT ALL
/// (Calcite's IntersectToDistinct / MinusToDistinct rules with `all`): each input row [n, c1, ..., ck]
/// becomes n rows [c1, ..., ck] of the input row's kind (n <= 0 or NULL: none). Stateless; a changelog
/// passes through as one (a -U of n copies followed by a +U of m copies retracts and adds copies).
/// Threading: task thread only.

#include <memory>

#include "runtime/operators/stream_operator.h"
#include "types/row_batch.h"

namespace sluice::table {

class ReplicateRowsOperator : public runtime::StreamOperator {
 public:
  /// `input_type`: a BIGINT count column first, then the columns to copy. Throws UserError otherwise.
  explicit ReplicateRowsOperator(types::RowType input_type);
  void processBatch(types::RowBatch&& batch) override;
  static types::RowType outputType(const types::RowType& input_type);

 private:
  types::RowType output_type_;
};

std::shared_ptr<const runtime::StreamOperatorFactory> makeReplicateRowsFactory(types::RowType input_type);

}  // namespace sluice::table
