#pragma once
/// ChangelogNormalize (Flink's StreamPhysicalChangelogNormalize / ProcTimeDeduplicateKeepLastRowFunction
/// on a changelog, with the DropUpdateBefore Flink puts in front of it): turns the changelog of a source
/// with a primary key into a normalized retract changelog by keeping the last row per key.

#include <memory>
#include <vector>

#include "runtime/operators/stream_operator.h"
#include "types/row_batch.h"

namespace sluice::table {

/// Keeps the last row of each primary key and emits, per input row, in order:
///  - -U: ignored (DropUpdateBefore: the stored row is what gets retracted);
///  - +I/+U, no row stored for the key: +I(row);
///  - +I/+U equal to the stored row (a duplicated event): nothing;
///  - +I/+U otherwise: -U(stored row), +U(row);
///  - -D: -D(stored row) and the key is forgotten; nothing when no row is stored.
/// Output rows have the input's type. Watermarks are forwarded. Threading: task thread only. The input
/// must be hash-partitioned on the key columns.
///
/// State (flink-checkpointing.md §6): the keyed ValueState "deduplicate-state" of the last full row per
/// key (all columns in the KeyCodec form of accumulators_internal.h), keyed by the KeyCodec bytes of the
/// primary key in the key group of runtime::hashKey over the key columns. Nothing is kept outside it.
/// `state_ttl_ms` > 0 (table.exec.state.ttl): a key's row is dropped once the key had no change for that
/// long (state_retention.h); its next row is then emitted as +I, and a -D for it is dropped.
class ChangelogNormalizeOperator : public runtime::StreamOperator {
 public:
  /// `key_columns`: the primary key as indexes into `row_type` (non-empty). Throws UserError on an
  /// out-of-range index.
  ChangelogNormalizeOperator(types::RowType row_type, std::vector<int> key_columns, int64_t state_ttl_ms = 0);
  ~ChangelogNormalizeOperator() override;
  /// Registers "deduplicate-state" in `ctx.state` (a private context when null). Throws InputError
  /// naming the operator, state and key group when a restored row does not decode for this row type.
  void open(const runtime::OperatorContext& ctx, runtime::Output* output) override;
  void processBatch(types::RowBatch&& batch) override;
  /// Keys with a stored row in this subtask (tests); 0 before open().
  size_t numKeys() const;

 private:
  struct Impl;
  types::RowType row_type_;
  std::unique_ptr<Impl> impl_;
};

/// Factory for ChangelogNormalizeOperator; validates the arguments now (UserError).
std::shared_ptr<const runtime::StreamOperatorFactory> makeChangelogNormalizeFactory(types::RowType row_type,
                                                                                    std::vector<int> key_columns,
                                                                                    int64_t state_ttl_ms = 0);

}  // namespace sluice::table
