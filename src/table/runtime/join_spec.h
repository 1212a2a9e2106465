#pragma once
/// The description of a regular (unbounded) streaming join as plain data, shared by the planner's Join
/// node and the StreamingJoinOperator it becomes (Flink's FlinkJoinType, JoinSpec and JoinInputSideSpec).
/// Plain values; any thread.

#include <cstdint>
#include <string>
#include <vector>

#include "table/functions/expression.h"

namespace sluice::table {

/// Flink's FlinkJoinType for regular joins; kSemi / kAnti keep the left rows with / without a match (the
/// joins of `x IN (SELECT ...)` and `x NOT IN (SELECT ...)`).
enum class FlinkJoinType { kInner, kLeft, kRight, kFull, kSemi, kAnti };

/// "InnerJoin", "LeftOuterJoin", "RightOuterJoin", "FullOuterJoin", "LeftSemiJoin", "LeftAntiJoin" as Flink's
/// explain prints joinType.
const char* joinTypeName(FlinkJoinType t);

/// How one input's rows are identified, which decides the shape of its join state (Flink's
/// JoinInputSideSpec): a unique key of the input (a primary key, or the group keys of an aggregation)
/// as column indexes of that input, and whether the join key contains it.
struct JoinInputSideSpec {
  std::vector<int> unique_key;  ///< empty: the input has no unique key
  bool join_key_contains_unique_key = false;

  bool hasUniqueKey() const { return !unique_key.empty(); }
  /// "JoinKeyContainsUniqueKey", "HasUniqueKey", "NoUniqueKey" as Flink's explain prints an input spec.
  std::string toString() const;
};

/// A regular join: equi-join keys (pairwise, left column i = right column i, NULL never equal) and an
/// optional non-equi condition over the joined row (left columns, then right columns).
struct JoinSpec {
  FlinkJoinType type = FlinkJoinType::kInner;
  std::vector<int> left_keys;
  std::vector<int> right_keys;
  ExprPtr non_equi_condition;  ///< may be null; BOOLEAN over left ++ right columns
  JoinInputSideSpec left_spec;
  JoinInputSideSpec right_spec;
  /// table.exec.state.ttl (ms, 0 = never) of a regular join: a side's rows of a join key are dropped once
  /// that side had no new row of the key for this long (state_retention.h). Set when the plan is translated;
  /// interval, window and temporal joins clean their state by time and ignore it.
  int64_t state_ttl_ms = 0;

  bool leftIsOuter() const { return type == FlinkJoinType::kLeft || type == FlinkJoinType::kFull; }
  bool rightIsOuter() const { return type == FlinkJoinType::kRight || type == FlinkJoinType::kFull; }
  bool isSemiOrAnti() const { return type == FlinkJoinType::kSemi || type == FlinkJoinType::kAnti; }
};

/// The time bounds of an interval join (Flink's IntervalJoinSpec.WindowBounds): a pair matches when
/// left.time - right.time lies in [left_lower_bound, left_upper_bound] (ms, both inclusive), the times
/// being the row time attributes (`is_event_time`) or the processing time each row arrives at.
/// `left_time_index` / `right_time_index` index the inputs' rows (the row time columns; kept for explain
/// on processing time). A lower bound above the upper one matches nothing.
struct IntervalJoinBounds {
  bool is_event_time = true;
  int64_t left_lower_bound = 0;
  int64_t left_upper_bound = 0;
  int left_time_index = -1;
  int right_time_index = -1;

  /// "isRowTime=true, leftLowerBound=-5000, leftUpperBound=5000, leftTimeIndex=2, rightTimeIndex=2".
  std::string toString() const;
};

}  // namespace sluice::table
