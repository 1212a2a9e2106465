#pragma once
/// Operators of SQL jobs in `execution.runtime-mode` BATCH that emit only at the end of their input, so a
/// BATCH job delivers final results (+I rows only, as Flink's batch operators do).
///
/// - FinalResultOperator: chained behind a streaming operator that would emit a changelog for this plan
///   (GroupAggregate, Rank, Deduplicate keeping the last row, outer and anti joins). It folds that
///   changelog into a multiset of rows (+I/+U add one, -U/-D remove one) and emits what is left as +I
///   rows at endInput, in first-seen order. The operator in front computes the same final value as a
///   batch operator would (Flink's BatchExecHashAggregate / SortAggregate, BatchExecSortMergeJoin ...);
///   only the intermediate changes are dropped. A retraction of a row never added is an InternalError.
/// - BatchSortOperator: ORDER BY (Flink's BatchPhysicalSort: any column, no time attribute needed) and
///   ORDER BY ... LIMIT / OFFSET (BatchPhysicalSortLimit) over insert-only input in one subtask: rows are
///   kept (with LIMIT, only the best offset + fetch of them) and emitted sorted at endInput; ties stay in
///   arrival order.
///
/// Watermarks: both hold the largest watermark back and emit it after their rows at endInput, so nothing
/// downstream sees its rows as late. Neither keeps checkpointed state: a BATCH job has no checkpoints
/// (a failed region reruns from its blocking inputs). Threading: task thread only.

#include <memory>
#include <optional>

#include "runtime/operators/stream_operator.h"
#include "table/runtime/rank_spec.h"
#include "types/row_batch.h"

namespace sluice::table {

class FinalResultOperator : public runtime::StreamOperator {
 public:
  explicit FinalResultOperator(types::RowType type);
  ~FinalResultOperator() override;
  void processBatch(types::RowBatch&& batch) override;
  void processWatermark(runtime::Watermark mark) override;
  /// Throws InternalError when the changelog retracted a row it did not add.
  void endInput() override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

class BatchSortOperator : public runtime::StreamOperator {
 public:
  /// `order`: the ORDER BY columns; `offset` rows are skipped; `fetch` < 0 = no LIMIT. Throws UserError
  /// when a column is out of range or offset < 0.
  BatchSortOperator(types::RowType type, std::vector<SortField> order, int64_t offset, int64_t fetch);
  ~BatchSortOperator() override;
  /// Throws UserError on a -U/-D row (the planner sorts insert-only rows only).
  void processBatch(types::RowBatch&& batch) override;
  void processWatermark(runtime::Watermark mark) override;
  void endInput() override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Factories; validate the arguments now (UserError).
std::shared_ptr<const runtime::StreamOperatorFactory> makeFinalResultFactory(types::RowType type);
std::shared_ptr<const runtime::StreamOperatorFactory> makeBatchSortFactory(types::RowType type,
                                                                           std::vector<SortField> order,
                                                                           int64_t offset, int64_t fetch);

}  // namespace sluice::table
