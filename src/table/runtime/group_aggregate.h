#pragma once
/// GROUP BY aggregation over an unbounded changelog (Flink's GroupAggFunction inside a
/// KeyedProcessFunction, and MiniBatchGroupAggFunction under mini-batch).

#include <memory>
#include <vector>

#include "runtime/operators/stream_operator.h"
#include "table/runtime/aggregate_call.h"

namespace sluice::table {

/// Mini-batch aggregation (Flink's `table.exec.mini-batch.*`): input rows are buffered up to `size` rows or
/// `latency_ms` of processing time, then each key's rows are applied to its accumulators at once and only
/// the key's net change is emitted (MiniBatchGroupAggFunction.finishBundle). `size` 0 = off.
struct MiniBatchSpec {
  int64_t size = 0;        ///< rows per bundle (table.exec.mini-batch.size)
  int64_t latency_ms = 0;  ///< a bundle is flushed this long after its first row (allow-latency); 0 = by size only
  bool enabled() const { return size > 0; }
};

/// Keeps one set of accumulators per group key and emits the changelog of the aggregate result.
///
/// Output row: the group key columns (in the order given), then one column per aggregate call (types
/// from AggregateCall::resultType). Per input row, in order (GroupAggFunction.processElement):
///  - no state for the key and the row retracts (-U/-D): ignored;
///  - otherwise +I/+U accumulate, -U/-D retract; then
///  - first row of the key: emit +I(new result);
///  - record count of the key is 0: emit -D(previous result) and drop the key's state;
///  - new result equals the previous one: emit nothing;
///  - else emit -U(previous) (only when `generate_update_before`) and +U(new).
/// Rows produced by one input batch leave as one output batch. endInput emits nothing (every update
/// was emitted when it happened), except with `emit_empty_group` (a global aggregate in BATCH mode): an
/// aggregate without GROUP BY has one row even over no input (COUNT 0, SUM NULL, ...), so the empty group's
/// +I leaves at the end when the group has no state then. Watermarks are forwarded.
///
/// With a MiniBatchSpec the rows wait in a bundle (in arrival order per key); the bundle is finished when it
/// holds `size` rows, `latency_ms` after its first row (a processing-time timer), before a watermark is
/// forwarded, before a checkpoint barrier (prepareSnapshotPreBarrier, so no row is in flight in a snapshot)
/// and at the end of the input. Finishing applies each key's rows in order and emits, per key, what the
/// rules above give for the whole run of rows: +I when the key was new, -U/+U when the result changed,
/// -D when the key's count dropped to 0, nothing when the result is unchanged.
///
/// State (flink-checkpointing.md §6): the keyed ValueState "accState" of the accumulators, keyed by the
/// KeyCodec bytes of the group key in the key group of runtime::hashKey over the group key columns (the
/// hash of the HASH exchange in front; a global aggregate has one key, the empty bytes, hashed over zero
/// columns, and runs in one subtask fed by a GLOBAL exchange). Nothing is kept outside the backend, so a
/// snapshot of `ctx.state` at any batch boundary restores, also at another parallelism.
///
/// `state_ttl_ms` > 0 (table.exec.state.ttl): a key's accumulators are dropped once the key had no row
/// for that long (state_retention.h); its next row then counts as the key's first (+I), and retractions
/// for it are dropped, as GroupAggFunction does with a StateTtlConfig.
/// Threading: task thread only.
class GroupAggregateOperator : public runtime::StreamOperator {
 public:
  /// `group_keys`: input column indexes; may be empty (a global aggregate: one group).
  /// Throws UserError on an out-of-range column or an unsupported aggregate argument type.
  GroupAggregateOperator(types::RowType input_type, std::vector<int> group_keys,
                         std::vector<AggregateCall> calls, bool generate_update_before = true,
                         MiniBatchSpec mini_batch = {}, int64_t state_ttl_ms = 0, bool emit_empty_group = false);
  ~GroupAggregateOperator() override;

  /// The output row type: key columns (names and types of the input) then the aggregates (named by
  /// AggregateCall::name, or "EXPR$<i>" when empty). Throws like the constructor.
  static types::RowType outputType(const types::RowType& input_type, const std::vector<int>& group_keys,
                                   const std::vector<AggregateCall>& calls);
  const types::RowType& outputType() const { return output_type_; }

  /// Registers "accState" in `ctx.state` (or a private context when null, see operator_state_internal.h).
  /// Throws InputError naming the operator, state and key group when restored accumulators do not match
  /// the aggregate calls (a checkpoint of another query) or do not decode.
  void open(const runtime::OperatorContext& ctx, runtime::Output* output) override;
  void processBatch(types::RowBatch&& batch) override;
  void processWatermark(runtime::Watermark mark) override;
  void endInput() override;
  void prepareSnapshotPreBarrier(int64_t checkpoint_id) override;

  /// Number of keys with state in this subtask (for tests and metrics); 0 before open().
  size_t numKeys() const;

 private:
  struct Impl;  // accumulators and state handles (accumulators_internal.h stays out of this header)
  /// Applies `batch` row by row (mini-batch off), or the buffered bundle key by key.
  void applyRows(const types::RowBatch& batch);
  void finishBundle();
  types::RowType output_type_;
  std::unique_ptr<Impl> impl_;
};

/// Factory for GroupAggregateOperator (see its constructor). Validates the arguments now, so errors
/// surface at plan time (UserError).
std::shared_ptr<const runtime::StreamOperatorFactory> makeGroupAggregateFactory(
    types::RowType input_type, std::vector<int> group_keys, std::vector<AggregateCall> calls,
    bool generate_update_before = true, MiniBatchSpec mini_batch = {}, int64_t state_ttl_ms = 0,
    bool emit_empty_group = false);

}  // namespace sluice::table
