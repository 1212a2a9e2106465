#pragma once
/// The second input of a two-input SQL operator (Flink's TwoInputStreamOperator.processElement2 for
/// RowData): a StreamOperator that also derives from TwoInputRowOperator gets the batches of its first
/// input edges through processBatch and the rest through processBatch2 (see
/// StreamOperatorFactory::numFirstInputEdges). Threading: the owning task's thread only.

#include "types/row_batch.h"

namespace sluice::runtime {

class TwoInputRowOperator {
 public:
  virtual ~TwoInputRowOperator() = default;
  /// Processes a batch of rows (with their RowKinds) of the second input, in order.
  virtual void processBatch2(types::RowBatch&& batch) = 0;
};

}  // namespace sluice::runtime
