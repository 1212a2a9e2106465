#pragma once
/// Deduplication (Flink's StreamExecDeduplicate): `ROW_NUMBER() OVER (PARTITION BY k ORDER BY t [DESC])`
/// filtered to rank 1, with `t` a time attribute and the rank number not in the output, keeps the first or
/// the last row of each key.
///
/// Rules, as Flink's functions (flink-table-runtime .../operators/deduplicate/), input insert-only:
///  - processing time, keep first (ProcTimeDeduplicateKeepFirstRowFunction): the first row of a key is
///    emitted as +I, later rows are dropped: an insert-only output.
///  - processing time, keep last (ProcTimeDeduplicateKeepLastRowFunction): the first row of a key is +I;
///    each later row emits -U(previous row) then +U(row).
///  - row time (RowTimeDeduplicateFunction, deduplicateOnRowTime): a row replaces the kept one when keep
///    last and its row time is >= the kept one's, or keep first and its row time is < the kept one's; then
///    +I(row) for the first row of the key, else -U(kept) +U(row); other rows are dropped. Rows are emitted
///    as they arrive, not on watermarks (no mini-batch).
/// Output rows have the input's type. Watermarks are forwarded. Threading: task thread only. The input
/// must be hash-partitioned on the key columns (or in one subtask without keys).
///
/// State (flink-checkpointing.md §6): the keyed ValueState "deduplicate-state" per key (KeyCodec bytes of
/// the key columns in the key group of runtime::hashKey over them): the kept row's row time (0 on
/// processing time) and the row itself (KeyCodec of all columns; empty for keep-first on processing time,
/// where only the key's presence matters, as Flink's ValueState<Boolean>).
#include <memory>

#include "runtime/operators/stream_operator.h"
#include "table/runtime/rank_spec.h"
#include "types/row_batch.h"

namespace sluice::table {

class DeduplicateOperator : public runtime::StreamOperator {
 public:
  /// `spec`: partition_keys, keep_last, rowtime and (for row time) order[0].column. Throws UserError on an
  /// out-of-range column or a row-time column that is not a TIMESTAMP.
  DeduplicateOperator(types::RowType input_type, RankSpec spec);
  ~DeduplicateOperator() override;
  /// Registers "deduplicate-state"; throws InputError naming operator, state and key group when restored
  /// bytes do not decode.
  void open(const runtime::OperatorContext& ctx, runtime::Output* output) override;
  /// Throws UserError on a -U/-D input row or a NULL row time.
  void processBatch(types::RowBatch&& batch) override;
  /// Keys with state in this subtask (tests); 0 before open().
  size_t numKeys() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Factory for DeduplicateOperator; validates the arguments now (UserError).
std::shared_ptr<const runtime::StreamOperatorFactory> makeDeduplicateFactory(types::RowType input_type, RankSpec spec);

}  // namespace sluice::table
