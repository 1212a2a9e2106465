#pragma once
/// Regular (unbounded) INNER / LEFT / RIGHT / FULL OUTER, semi and anti joins over two changelogs (Flink's
/// StreamingJoinOperator and StreamingSemiAntiJoinOperator with AbstractStreamingJoinOperator,
/// JoinRecordStateViews and OuterJoinRecordStateViews; no state TTL, no mini-batch).

#include <memory>
#include <vector>

#include "runtime/operators/stream_operator.h"
#include "runtime/operators/two_input_row_operator.h"
#include "table/runtime/join_spec.h"

namespace sluice::table {

/// Joins its first input (the left side, processBatch) with its second (the right side, processBatch2).
/// Both inputs must be hash-partitioned on their join keys (runtime::hashKey over the key columns, equal
/// key types on both sides) so that rows of one key meet in one subtask.
///
/// Output row: the left columns, then the right columns (the padded side of an outer join NULL).
/// Per input row, as Flink's StreamingJoinOperator.processElement (the "other side" is the other input's
/// rows of the same join key that satisfy the non-equi condition; a NULL join key matches nothing, but
/// the row is still kept and an outer row with it still padded):
///  - accumulate (+I/+U), outer input side: no match → +I[row + nulls], stored with 0 associations;
///    else per match (an outer other side whose count of associations is 0 first emits -D[nulls + other],
///    and its count goes up by one when it was 0 or the row is an additional match) +I[row + other], and
///    the row is stored with the number of matches;
///  - accumulate, inner input side: stored; per match as above, but +I/+U (the input's kind) when the
///    other side is not outer;
///  - retract (-U/-D): removed from the state first; no match → -D[row + nulls] when the input side is
///    outer; else per match -D[row + other] (outer input side) or -U/-D (the input's kind); an outer other
///    side whose count was 1 then emits +I[nulls + other], and its count goes down by one.
/// Semi / anti joins (FlinkJoinType kSemi / kAnti, Flink's StreamingSemiAntiJoinOperator) output left rows
/// only: a left row passes with its own kind when it has a match (semi) or none (anti) and is stored with
/// its number of matches; a right row changes that count of each matching left row, and the first match
/// lets it pass (semi: with the right row's kind) or retracts it (anti: -D), losing the last match
/// retracts it (semi: the right row's kind) or lets it pass again (anti: +I).
/// "Additional match" (Flink's isAdditionalMatch): the other side is outer, the join key does not contain
/// the input's unique key, and no row with the same unique key is stored (an input without unique key:
/// always), so replacing a row of a unique key without retracting it first does not count twice.
/// Changelog: an inner join of insert-only inputs emits only +I; otherwise +I/-U/+U/-D (outer joins only
/// +I/-D, as Flink, FLINK-17337). Rows produced by one input batch leave as one output batch; watermarks
/// are forwarded (the task passes the minimum of both inputs).
///
/// State (flink-checkpointing.md §6), per side "left-records" / "right-records", keyed by the KeyCodec
/// bytes of the join key in the key group of runtime::hashKey over the key columns, shaped by the side's
/// JoinInputSideSpec as Flink's JoinRecordStateViews:
///  - the join key contains a unique key: ValueState of one JoinRecord (the row; its associations);
///  - a unique key not in the join key: MapState unique key bytes → JoinRecord;
///  - no unique key: MapState row bytes → JoinRecord (appearance count; associations per copy).
/// The count of associations is kept only for outer sides and the left side of a semi / anti join (-1
/// otherwise). Nothing is kept outside the backend, so a snapshot at any batch boundary restores, also at
/// another parallelism.
/// Threading: task thread only.
class StreamingJoinOperator : public runtime::StreamOperator, public runtime::TwoInputRowOperator {
 public:
  /// Throws UserError when key lists differ in length, are empty, index out of range, or the
  /// condition is not BOOLEAN.
  StreamingJoinOperator(types::RowType left_type, types::RowType right_type, JoinSpec spec);
  ~StreamingJoinOperator() override;

  /// Left columns then right columns; the padded side of an outer join is nullable; a semi / anti join:
  /// the left columns.
  static types::RowType outputType(const types::RowType& left, const types::RowType& right, FlinkJoinType type);

  /// Registers the two states in `ctx.state` (or a private context when null, see
  /// operator_state_internal.h). Throws InputError naming the operator, state and key group when restored
  /// records do not decode as rows of the inputs.
  void open(const runtime::OperatorContext& ctx, runtime::Output* output) override;
  /// Left input.
  void processBatch(types::RowBatch&& batch) override;
  /// Right input (runtime::TwoInputRowOperator).
  void processBatch2(types::RowBatch&& batch) override;

  /// Stored join keys of a side (for tests); 0 before open().
  size_t numKeys(bool left) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Factory of a two-input StreamingJoinOperator. `num_first_input_edges`: how many input edges of the
/// operator's task feed its left input (StreamOperatorFactory::numFirstInputEdges). Validates the
/// arguments now (UserError), so errors surface at plan time.
std::shared_ptr<const runtime::StreamOperatorFactory> makeStreamingJoinFactory(types::RowType left_type,
                                                                               types::RowType right_type,
                                                                               JoinSpec spec,
                                                                               int num_first_input_edges);

}  // namespace sluice::table
