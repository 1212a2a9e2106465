// IntervalJoinOperator driven by hand: INNER / LEFT / RIGHT / FULL interval joins on event time with
// watermarks between the rows, a late row, a residual condition, bounds that match nothing, processing
// time on a hand-driven clock, the state emptied once the watermark passes every row, and snapshots at
// every step boundary restored on both state backends. Expected changelogs worked out by hand from
// Flink's TimeIntervalJoin (see the walk-through above kSteps).

#include "table/runtime/interval_join.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/error.h"
#include "runtime/time/processing_time_service.h"
#include "state_test_util.h"

namespace sluice::table {
namespace {

using ::testing::ElementsAreArray;
using testing::CollectingOutput;
using testing::InputRow;
using testing::ins;
using testing::kNull;
using testing::makeBatch;
using types::LogicalType;
using types::RowType;

/// A row of one side, or a watermark (both inputs' minimum, as the task passes it).
struct Step {
  enum Kind { kLeft, kRight, kWatermark } kind;
  InputRow row;
  int64_t watermark = 0;
};
Step L(int64_t id, int64_t ts, int64_t v) { return {Step::kLeft, ins({id, ts, v})}; }
Step R(int64_t id, int64_t ts, int64_t w) { return {Step::kRight, ins({id, ts, w})}; }
Step WM(int64_t t) { return {Step::kWatermark, {}, t}; }

const RowType kLeft{{"id", "ts", "v"}, {LogicalType::bigint(), LogicalType::timestamp(3), LogicalType::bigint()}};
const RowType kRight{{"id", "ts", "w"}, {LogicalType::bigint(), LogicalType::timestamp(3), LogicalType::bigint()}};

/// l.id = r.id AND l.ts BETWEEN r.ts - 2 AND r.ts + 3 (ms): left - right in [-2, 3], so a left row waits
/// for right rows up to 2 ms after it and a right row for left rows up to 3 ms after it; the output
/// watermark is held back by max(2, 3) = 3.
JoinSpec joinSpec(FlinkJoinType type, bool residual = false) {
  JoinSpec s;
  s.type = type;
  s.left_keys = {0};
  s.right_keys = {0};
  if (residual)  // v < w over left ++ right
    s.non_equi_condition =
        makeCall(ScalarOp::kLessThan, {makeInputRef(2, LogicalType::bigint()), makeInputRef(5, LogicalType::bigint())});
  return s;
}
IntervalJoinBounds bounds(int64_t lower = -2, int64_t upper = 3, bool event_time = true) {
  IntervalJoinBounds b;
  b.is_event_time = event_time;
  b.left_lower_bound = lower;
  b.left_upper_bound = upper;
  b.left_time_index = 1;
  b.right_time_index = 1;
  return b;
}

// Walk-through (key 1 unless noted; T = watermark):
//  L(1,10,a=1)  T=MIN: no right row; cached (T < 10 + 2), cleanup timer at 13.
//  R(1,8,x=10)  left rows in [8-2, 8+3] = [6, 11]: joins 10; cached, timer at 12.
//  R(1,14,y=1)  left rows in [12, 17]: none; cached, timer at 18.
//  WM(12)       timer 12: right rows with t + 3 < 12 leave (8); out WM(12 - 3 = 9).
//  L(1,12,b=2)  right rows in [12-3, 12+2] = [9, 14]: joins 14; cached (12 < 14), timer at 15.
//  L(1,9,c=3)   late: right rows in [6, 11] are gone (8 left at WM 12); not cached (12 >= 9 + 2): an
//               outer left side pads it at once.
//  R(2,11,z=30) key 2: no left row; cached (12 < 14), timer at 15.
//  L(3,15,d=4)  key 3: no right row; cached (12 < 17), timer at 18.
//  WM(20)       timers 13, 15, 15, 18, 18: every row leaves; never joined: z (right), d (left); out WM(17).
const std::vector<Step> kSteps = {L(1, 10, 1), R(1, 8, 10), R(1, 14, 1), WM(12), L(1, 12, 2),
                                  L(1, 9, 3),  R(2, 11, 30), L(3, 15, 4), WM(20)};

void feed(IntervalJoinOperator& op, const std::vector<Step>& steps, size_t from, size_t to) {
  for (size_t i = from; i < to; ++i) {
    const Step& s = steps[i];
    if (s.kind == Step::kLeft) op.processBatch(makeBatch(kLeft, {s.row}));
    else if (s.kind == Step::kRight) op.processBatch2(makeBatch(kRight, {s.row}));
    else op.processWatermark(runtime::Watermark{s.watermark});
  }
}

std::vector<std::string> run(FlinkJoinType type, bool residual, const std::vector<Step>& steps,
                             const IntervalJoinBounds& b = bounds()) {
  CollectingOutput out;
  runtime::OperatorMetrics metrics;
  IntervalJoinOperator op(kLeft, kRight, joinSpec(type, residual), b);
  testing::openOperator(op, out, metrics);
  feed(op, steps, 0, steps.size());
  EXPECT_EQ(op.numCachedRows(true), 0u);
  EXPECT_EQ(op.numCachedRows(false), 0u);
  EXPECT_EQ(op.numTimers(), 0u);
  return out.take();
}

TEST(IntervalJoinTest, InnerJoinsWithinTheBoundsAndDropsTheLateRow) {
  EXPECT_THAT(run(FlinkJoinType::kInner, false, kSteps),
              ElementsAreArray({"+I[1, 10, 1, 1, 8, 10]", "WM(9)", "+I[1, 12, 2, 1, 14, 1]", "WM(17)"}));
}

TEST(IntervalJoinTest, LeftJoinPadsTheLateRowAtOnceAndTheUnmatchedOneAtTheWatermark) {
  EXPECT_THAT(run(FlinkJoinType::kLeft, false, kSteps),
              ElementsAreArray({"+I[1, 10, 1, 1, 8, 10]", "WM(9)", "+I[1, 12, 2, 1, 14, 1]",
                                "+I[1, 9, 3, null, null, null]", "+I[3, 15, 4, null, null, null]", "WM(17)"}));
}

TEST(IntervalJoinTest, RightJoinPadsRightRowsThatNeverJoined) {
  EXPECT_THAT(run(FlinkJoinType::kRight, false, kSteps),
              ElementsAreArray({"+I[1, 10, 1, 1, 8, 10]", "WM(9)", "+I[1, 12, 2, 1, 14, 1]",
                                "+I[null, null, null, 2, 11, 30]", "WM(17)"}));
}

TEST(IntervalJoinTest, FullJoinPadsBothSides) {
  EXPECT_THAT(run(FlinkJoinType::kFull, false, kSteps),
              ElementsAreArray({"+I[1, 10, 1, 1, 8, 10]", "WM(9)", "+I[1, 12, 2, 1, 14, 1]",
                                "+I[1, 9, 3, null, null, null]", "+I[null, null, null, 2, 11, 30]",
                                "+I[3, 15, 4, null, null, null]", "WM(17)"}));
}

// With v < w only (a=1, x=10) joins: b=2 and y=1 stay unjoined and are padded when their timers fire
// (b with key 1's left timer at 13, y with its right timer at 18).
const std::vector<std::string> kFullResidual = {
    "+I[1, 10, 1, 1, 8, 10]",          "WM(9)",
    "+I[1, 9, 3, null, null, null]",   "+I[1, 12, 2, null, null, null]",
    "+I[null, null, null, 2, 11, 30]", "+I[null, null, null, 1, 14, 1]",
    "+I[3, 15, 4, null, null, null]",  "WM(17)"};

TEST(IntervalJoinTest, ResidualConditionDecidesWhichPairsJoin) {
  EXPECT_THAT(run(FlinkJoinType::kFull, true, kSteps), ElementsAreArray(kFullResidual));
}

TEST(IntervalJoinTest, StateIsEmptyOnceTheWatermarkPassesEveryRow) {
  CollectingOutput out;
  runtime::OperatorMetrics metrics;
  IntervalJoinOperator op(kLeft, kRight, joinSpec(FlinkJoinType::kFull), bounds());
  testing::openOperator(op, out, metrics);
  feed(op, kSteps, 0, 8);
  // Before WM(20): left 10, 12, 15 and right 14, 11 are cached (8 left at WM 12), one timer each.
  EXPECT_EQ(op.numCachedRows(true), 3u);
  EXPECT_EQ(op.numCachedRows(false), 2u);
  EXPECT_EQ(op.numTimers(), 5u);  // key 1: left 13 and 15, right 18; key 2: right 15; key 3: left 18
  op.processWatermark(runtime::Watermark{16});
  // Timers 13 and 15 fired: left rows with t + 2 < 16 (10, 12), right rows with t + 3 < 16 (11) left.
  EXPECT_EQ(op.numCachedRows(true), 1u);
  EXPECT_EQ(op.numCachedRows(false), 1u);
  op.processWatermark(runtime::Watermark{18});
  EXPECT_EQ(op.numCachedRows(true), 0u);
  EXPECT_EQ(op.numCachedRows(false), 0u);
  EXPECT_EQ(op.numTimers(), 0u);
}

TEST(IntervalJoinTest, MaxWatermarkFlushesEverythingAndPassesUnchanged) {
  const std::vector<Step> steps = {L(1, 10, 1), R(2, 11, 5), WM(INT64_MAX)};
  EXPECT_THAT(run(FlinkJoinType::kFull, false, steps),
              ElementsAreArray(std::vector<std::string>{"+I[1, 10, 1, null, null, null]",
                                                        "+I[null, null, null, 2, 11, 5]",
                                                        "WM(" + std::to_string(INT64_MAX) + ")"}));
}

TEST(IntervalJoinTest, BoundsThatMatchNothingPadOuterRowsAtOnce) {
  // left - right in [5, 2]: empty. No state, no delay.
  const std::vector<Step> steps = {L(1, 10, 1), R(1, 7, 5), WM(12)};
  EXPECT_THAT(run(FlinkJoinType::kLeft, false, steps, bounds(5, 2)),
              ElementsAreArray({"+I[1, 10, 1, null, null, null]", "WM(12)"}));
  EXPECT_THAT(run(FlinkJoinType::kInner, false, steps, bounds(5, 2)),
              ElementsAreArray(std::vector<std::string>{"WM(12)"}));
}

TEST(IntervalJoinTest, NullKeysMatchNothing) {
  const std::vector<Step> steps = {{Step::kLeft, ins({kNull, int64_t{10}, int64_t{1}})},
                                   {Step::kRight, ins({kNull, int64_t{10}, int64_t{2}})}, WM(30)};
  EXPECT_THAT(run(FlinkJoinType::kFull, false, steps),
              ElementsAreArray({"+I[null, 10, 1, null, null, null]", "+I[null, null, null, null, 10, 2]", "WM(27)"}));
}

TEST(IntervalJoinTest, RefusesUpdatesAndNullRowTimes) {
  CollectingOutput out;
  runtime::OperatorMetrics metrics;
  IntervalJoinOperator op(kLeft, kRight, joinSpec(FlinkJoinType::kInner), bounds());
  testing::openOperator(op, out, metrics);
  EXPECT_THROW(op.processBatch(makeBatch(kLeft, {testing::del({int64_t{1}, int64_t{1}, int64_t{1}})})), UserError);
  EXPECT_THROW(op.processBatch2(makeBatch(kRight, {ins({int64_t{1}, kNull, int64_t{1}})})), UserError);
  JoinSpec semi = joinSpec(FlinkJoinType::kSemi);
  EXPECT_THROW(IntervalJoinOperator(kLeft, kRight, semi, bounds()), UserError);
}

TEST(IntervalJoinTest, ProcessingTimeJoinsRowsArrivingWithinTheBounds) {
  int64_t now = 100;
  runtime::ProcessingTimeService clock([&] { return now; });
  CollectingOutput out;
  runtime::OperatorMetrics metrics;
  // Processing time: a pair joins when the right row arrives at most 5 ms before or after the left one.
  IntervalJoinOperator op(kLeft, kRight, joinSpec(FlinkJoinType::kFull), bounds(-5, 5, false));
  testing::openOperator(op, out, metrics, nullptr, &clock);
  op.processBatch(makeBatch(kLeft, {ins({int64_t{1}, int64_t{0}, int64_t{1}})}));  // at 100, kept to 105
  now = 103;
  op.processBatch2(makeBatch(kRight, {ins({int64_t{1}, int64_t{0}, int64_t{2}})}));  // joins; kept to 108
  now = 104;
  op.processBatch2(makeBatch(kRight, {ins({int64_t{2}, int64_t{0}, int64_t{3}})}));  // key 2: alone
  op.processWatermark(runtime::Watermark{7});  // passes unchanged
  now = 106;
  clock.fireDue();  // the left row leaves (joined)
  EXPECT_EQ(op.numCachedRows(true), 0u);
  now = 120;
  op.processBatch(makeBatch(kLeft, {ins({int64_t{1}, int64_t{0}, int64_t{4}})}));  // the right row of 103 is gone
  clock.fireDue();  // right rows leave: key 2's padded
  EXPECT_EQ(op.numCachedRows(false), 0u);
  op.endInput();  // the left row of 120 never joined
  EXPECT_EQ(op.numTimers(), 0u);
  EXPECT_THAT(out.take(), ElementsAreArray({"+I[1, 0, 1, 1, 0, 2]", "WM(7)", "+I[null, null, null, 2, 0, 3]",
                                            "+I[1, 0, 4, null, null, null]"}));
}

class IntervalJoinStateTest : public ::testing::TestWithParam<runtime::state::StateBackendType> {
 protected:
  std::unique_ptr<runtime::state::StreamOperatorStateContext> context(
      const runtime::checkpoint::OperatorSubtaskState* restored) const {
    runtime::state::StateBackendOptions o;
    o.type = GetParam();
    o.local_directory = ::testing::TempDir();
    o.instance_name = "IntervalJoinStateTest";
    return std::make_unique<runtime::state::StreamOperatorStateContext>("op", testing::subtaskRange(1, 0),
                                                                        testing::kMaxParallelism, restored, o);
  }
};

TEST_P(IntervalJoinStateTest, RestoreAtEveryStepBoundaryContinuesTheChangelog) {
  // Cached rows, joined flags and cleanup timers survive: the restored operator pads and cleans the same.
  for (size_t split = 0; split <= kSteps.size(); ++split) {
    SCOPED_TRACE("split after step " + std::to_string(split));
    CollectingOutput out;
    runtime::OperatorMetrics metrics;
    auto state1 = context(nullptr);
    auto first = std::make_unique<IntervalJoinOperator>(kLeft, kRight, joinSpec(FlinkJoinType::kFull, true), bounds());
    testing::openWithState(*first, out, metrics, *state1);
    feed(*first, kSteps, 0, split);
    const runtime::checkpoint::OperatorSubtaskState snap = testing::takeSnapshot(*first, *state1);
    first.reset();
    state1.reset();
    auto state2 = context(&snap);
    IntervalJoinOperator second(kLeft, kRight, joinSpec(FlinkJoinType::kFull, true), bounds());
    testing::openWithState(second, out, metrics, *state2);
    feed(second, kSteps, split, kSteps.size());
    EXPECT_THAT(out.take(), ElementsAreArray(kFullResidual));
    EXPECT_EQ(second.numCachedRows(true) + second.numCachedRows(false) + second.numTimers(), 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, IntervalJoinStateTest,
                         ::testing::Values(runtime::state::StateBackendType::kHashMap,
                                           runtime::state::StateBackendType::kRocksDB),
                         [](const auto& info) {
                           return std::string(info.param == runtime::state::StateBackendType::kRocksDB ? "RocksDB"
                                                                                                       : "HashMap");
                         });

}  // namespace
}  // namespace sluice::table
