#pragma once
/// Streaming Top-N (Flink's StreamExecRank / StreamExecSortLimit / StreamExecLimit): per partition, the
/// rows ranked rank_start..rank_end by ROW_NUMBER over the ORDER BY columns, kept up to date as rows
/// arrive (and, for an updating input, are retracted).
///
/// Rules, as Flink's operators (flink-table-runtime .../operators/rank/):
///  - Order: the sort key compares the ORDER BY columns in turn (strings by UTF-8 bytes, NULLs where
///    SortField says). Rows with equal sort keys (ties) rank in arrival order: a new row goes behind the
///    rows it ties with.
///  - AppendFastStrategy (AppendOnlyTopNFunction, insert-only input): a buffer per partition keeps at most
///    the top rank_end rows (plus ties of the last key while it fills); a row is taken when the buffer is
///    not full or its sort key is strictly better than the worst one. Without the rank number in the
///    output: +I(row) and, when the buffer overflows, -D(the row pushed out) before it. With the rank
///    number (or rank_start > 1): the new row's rank r; every buffered row behind it moves down one rank,
///    emitted as -U[old row, rank] +U[new occupant, rank] per rank from r on, and +I[last row, rank] when
///    the Top-N was not full; sort keys pushed below rank_end are dropped.
///  - RetractStrategy (RetractableTopNFunction, updating input): every row of the partition is kept. An
///    insert emits as above (without rank number: -D of the row that falls to rank_end + 1, then +I of the
///    new row when it ranks within the range); a retraction (-U/-D) of a row within the range emits, with the
///    rank number, -U[retracted, r] +U[next row, r] for each rank the rows behind it move up, then
///    -D[last row, rank] when the Top-N no longer has that many rows; without it, -D(row) and +I of the row
///    that moves up into rank_end. A retraction of a row outside the range emits nothing.
///  - Emitted ranks are limited to rank_start..rank_end (isInRankRange).
/// Output = the input columns, then the rank number (BIGINT NOT NULL) when spec.output_rank_number.
/// Watermarks are forwarded. Threading: task thread only. The input must be hash-partitioned on the
/// partition keys (or all in one subtask without keys).
///
/// State (flink-checkpointing.md §6): the keyed ValueState "topn-buffer" per partition key (KeyCodec bytes
/// of the partition columns in the key group of runtime::hashKey over them): a sorted map from the
/// order-preserving sort-key bytes to the rows with that key in arrival order (each row KeyCodec-encoded).
/// It plays the part of Flink's "data-state" MapState and "sorted-map" ValueState in one; nothing is kept
/// outside it, so a restore at any parallelism (and into the other backend) continues exactly.
#include <memory>

#include "runtime/operators/stream_operator.h"
#include "table/runtime/rank_spec.h"
#include "types/row_batch.h"

namespace sluice::table {

class RankOperator : public runtime::StreamOperator {
 public:
  /// Throws UserError when a column index is out of range, the range is not 1 <= start <= end, or the
  /// rank type is not ROW_NUMBER.
  RankOperator(types::RowType input_type, RankSpec spec);
  ~RankOperator() override;
  /// Registers "topn-buffer" in `ctx.state` (a private context when null). Throws InputError naming the
  /// operator, state and key group when restored bytes do not decode for this input type.
  void open(const runtime::OperatorContext& ctx, runtime::Output* output) override;
  /// Throws UserError on a -U/-D input row under AppendFastStrategy (the planner never plans that).
  void processBatch(types::RowBatch&& batch) override;
  /// Partitions with rows in this subtask (tests); 0 before open().
  size_t numPartitions() const;

  /// The output row type: `input` (+ "w0$o0" BIGINT NOT NULL when the rank number is output).
  static types::RowType outputType(const types::RowType& input, const RankSpec& spec);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Factory for RankOperator; validates the arguments now (UserError).
std::shared_ptr<const runtime::StreamOperatorFactory> makeRankFactory(types::RowType input_type, RankSpec spec);

}  // namespace sluice::table
