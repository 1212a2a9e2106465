#pragma once
/// Event-time temporal joins (`JOIN versioned FOR SYSTEM_TIME AS OF probe.rowtime`): Flink's
/// TemporalRowTimeJoinOperator (StreamExecTemporalJoin on row time). Each left row is joined, once the
/// watermark passes its time, with the version of the right (versioned) table that was valid at that time.

#include <cstdint>
#include <memory>
#include <vector>

#include "runtime/operators/stream_operator.h"
#include "runtime/operators/two_input_row_operator.h"
#include "table/functions/expression.h"
#include "table/runtime/join_spec.h"

namespace sluice::table {

/// The description of one event-time temporal join (plain data).
struct TemporalJoinSpec {
  FlinkJoinType type = FlinkJoinType::kInner;  ///< kInner or kLeft
  /// Equi keys, pairwise (left column i = right column i); the right keys contain its primary key.
  std::vector<int> left_keys;
  std::vector<int> right_keys;
  int left_time = -1;   ///< the left row time column (TIMESTAMP ms)
  int right_time = -1;  ///< the versioned table's row time column
  ExprPtr non_equi_condition;  ///< may be null; BOOLEAN over left ++ right columns
};

/// Joins its first input (the left / probe side, processBatch) with its second (the versioned table,
/// processBatch2). Both inputs must be hash-partitioned on their keys (runtime::hashKey over the key
/// columns) so that rows of one key meet in one subtask.
///
/// Rules (Flink's TemporalRowTimeJoinOperator and TemporalRowTimeJoinHelper):
///  - a left row (any RowKind) is buffered with its time; a right row is stored as the version of its
///    key starting at its row time (a later row of the same time replaces it; -U rows are dropped, as the
///    planner asks the versioned side for no UPDATE_BEFORE); each key keeps one event-time timer, at the
///    smallest time of a row it received since the timer last fired;
///  - when the timer fires (the combined watermark of both inputs passed it), the buffered left rows with
///    time <= watermark are emitted in arrival order, each joined with the latest version whose time is
///    <= the row's time: [left + right] with the left row's RowKind when that version is +I/+U and the
///    non-equi condition holds; otherwise (no version yet, a -D version, the condition FALSE, or a NULL
///    key) LEFT emits [left + NULLs] and INNER nothing;
///  - then the versions older than the one valid at the watermark are removed (the latest one is always
///    kept), and the timer is set again at the smallest time of the left rows still buffered;
///  - a left row behind the watermark (late) is not dropped: it fires with the next watermark and joins
///    the versions still kept.
/// Output: left columns then right columns (nullable for LEFT); insert-only when the left input is.
/// Watermarks are forwarded after the timers they fire.
///
/// State (keyed by the KeyCodec bytes of the join key in the key group of runtime::hashKey over the key
/// columns): ValueState "left" (the buffered left rows in arrival order, each with its time and kind),
/// ValueState "right" (the versions, ordered by time), ValueState<int64> "timer" (the registered timer),
/// and the timer service "timers" (Flink's names; one ordered value per key rather than Flink's MapStates,
/// whose RocksDB tombstones every scan of the key would pass). Everything restores on either backend and
/// at another parallelism; no state retention time (table.exec.state.ttl) yet.
/// Threading: task thread only.
class TemporalRowTimeJoinOperator : public runtime::StreamOperator, public runtime::TwoInputRowOperator {
 public:
  /// Throws UserError on key lists that are empty or differ in length, columns out of range, time
  /// columns that are not TIMESTAMP, or a condition that is not BOOLEAN.
  TemporalRowTimeJoinOperator(types::RowType left_type, types::RowType right_type, TemporalJoinSpec spec);
  ~TemporalRowTimeJoinOperator() override;

  /// Left columns then right columns (nullable for a LEFT join).
  static types::RowType outputType(const types::RowType& left, const types::RowType& right, FlinkJoinType type);

  /// Registers the states; restored rows that do not decode throw InputError naming the operator, state and
  /// key group.
  void open(const runtime::OperatorContext& ctx, runtime::Output* output) override;
  /// Left input. Throws UserError on a NULL row time.
  void processBatch(types::RowBatch&& batch) override;
  /// Right input (the versioned table). Throws UserError on a NULL row time.
  void processBatch2(types::RowBatch&& batch) override;
  void processWatermark(runtime::Watermark mark) override;

  /// Buffered left rows and stored versions over all keys (tests).
  size_t numLeftRows() const;
  size_t numVersions() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Factory of a two-input TemporalRowTimeJoinOperator; `num_first_input_edges` as for the streaming join.
/// Validates the arguments now (UserError).
std::shared_ptr<const runtime::StreamOperatorFactory> makeTemporalJoinFactory(types::RowType left_type,
                                                                              types::RowType right_type,
                                                                              TemporalJoinSpec spec,
                                                                              int num_first_input_edges);

}  // namespace sluice::table
