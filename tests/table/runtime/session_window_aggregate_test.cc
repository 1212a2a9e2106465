// SessionWindowAggregateOperator: sessions that merge (touching, overlapping and bridging two), lateness
// judged after merging, the state and timers freed with each fired session, and a snapshot between any
// two input events restored into a fresh operator (heap and RocksDB, also across backends) continuing
// the uninterrupted run exactly. Times are ms; rows print the key, COUNT(*), SUM(v), MIN(k),
// COUNT(DISTINCT v), window_start, window_end. Expected output worked out by hand.

#include "table/runtime/session_window_aggregate.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <variant>

#include "common/error.h"
#include "table/runtime/window_aggregate.h"
#include "state_test_util.h"

namespace sluice::table {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using testing::CollectingOutput;
using testing::InputRow;
using testing::ins;
using testing::makeBatch;
using types::LogicalType;
using types::RowType;

// k STRING, ts TIMESTAMP(3), v INT.
RowType inputType() {
  return RowType{{"k", "ts", "v"}, {LogicalType::string(), LogicalType::timestamp(3), LogicalType::integer()}};
}

AggregateCall call(AggKind kind, int arg, bool distinct = false) {
  AggregateCall c;
  c.kind = kind;
  c.arg_index = arg;
  c.distinct = distinct;
  return c;
}

// COUNT(*), SUM(v), MIN(k) (a value map even without retraction), COUNT(DISTINCT v) (a distinct view).
std::vector<AggregateCall> calls() {
  return {call(AggKind::kCountStar, -1), call(AggKind::kSum, 2), call(AggKind::kMin, 0),
          call(AggKind::kCount, 2, true)};
}

WindowSpec session(int64_t gap) {
  WindowSpec w;
  w.kind = WindowSpec::Kind::kSession;
  w.time_index = 1;
  w.size_ms = gap;
  return w;
}

using Event = std::variant<InputRow, int64_t>;  // a row or a watermark

void feed(SessionWindowAggregateOperator& op, const std::vector<Event>& events, size_t from, size_t to) {
  for (size_t i = from; i < to; ++i) {
    if (const auto* row = std::get_if<InputRow>(&events[i])) {
      op.processBatch(makeBatch(inputType(), {*row}));
    } else {
      op.processWatermark(runtime::Watermark{std::get<int64_t>(events[i])});
    }
  }
}

// Gap 10:
//   a@0 v1 -> a [0,10); a@15 v2 -> a [15,25) (apart: 10 < 15); b@5 v3 -> b [5,15)
//   a@10 v1 -> [10,20) touches [0,10) and overlaps [15,25): a [0,25), 3 rows, sum 4, distinct v {1, 2}
//   WM 14 fires b [5,15) (15 - 1 <= 14)
//   b@1 v9 -> [1,11): nothing of b pending and 11 - 1 <= 14: late
//   b@8 v4 -> [8,18) (behind the watermark, but 18 - 1 > 14)
//   WM 30 fires b [8,18), then a [0,25)
const std::vector<Event> kEvents = {
    ins({"a", 0, 1}), ins({"a", 15, 2}), ins({"b", 5, 3}), ins({"a", 10, 1}), int64_t{14},
    ins({"b", 1, 9}), ins({"b", 8, 4}),  int64_t{30},
};
const std::vector<std::string> kExpected = {
    "+I[b, 1, 3, b, 1, 5, 15]", "WM(14)", "+I[b, 1, 4, b, 1, 8, 18]", "+I[a, 3, 4, a, 2, 0, 25]", "WM(30)",
};

TEST(SessionWindowAggTest, MergesSessionsAndFreesTheirStateWhenTheyFire) {
  CollectingOutput out;
  runtime::OperatorMetrics metrics;
  auto state = testing::makeStateContext(nullptr);
  SessionWindowAggregateOperator op(inputType(), session(10), {0}, calls());
  testing::openWithState(op, out, metrics, *state);
  feed(op, kEvents, 0, 3);
  // a [0,10), a [15,25), b [5,15): one timer each, two keys.
  EXPECT_EQ(op.numPendingWindows(), 3u);
  EXPECT_EQ(op.numTimers(), 3u);
  EXPECT_EQ(op.numKeysWithState(), 2u);
  feed(op, kEvents, 3, 4);
  // The bridge leaves a [0,25) with the timer of [15,25) (same end); [0,10)'s timer is deleted.
  EXPECT_EQ(op.numPendingWindows(), 2u);
  EXPECT_EQ(op.numTimers(), 2u);
  feed(op, kEvents, 4, 5);
  EXPECT_EQ(op.numPendingWindows(), 1u);
  EXPECT_EQ(op.numKeysWithState(), 1u);
  EXPECT_EQ(op.numTimers(), 1u);
  feed(op, kEvents, 5, kEvents.size());
  EXPECT_THAT(out.take(), ElementsAreArray(kExpected));
  EXPECT_EQ(op.numLateRecordsDropped(), 1);
  EXPECT_EQ(metrics.num_late_records_dropped.load(), 1);
  EXPECT_EQ(op.numPendingWindows(), 0u);
  EXPECT_EQ(op.numKeysWithState(), 0u);
  EXPECT_EQ(op.numTimers(), 0u);
}

TEST(SessionWindowAggTest, ARowBehindTheWatermarkJoinsAPendingSession) {
  CollectingOutput out;
  runtime::OperatorMetrics metrics;
  auto state = testing::makeStateContext(nullptr);
  SessionWindowAggregateOperator op(inputType(), session(10), {}, {call(AggKind::kCountStar, -1)});
  testing::openWithState(op, out, metrics, *state);
  op.processBatch(makeBatch(inputType(), {ins({"a", 20, 1})}));  // [20,30)
  op.processWatermark(runtime::Watermark{25});
  // [12,22) is behind the watermark (22 - 1 <= 25) but overlaps [20,30): [12,30), on time.
  op.processBatch(makeBatch(inputType(), {ins({"a", 12, 1})}));
  // [0,10) merges with nothing and has fired: late.
  op.processBatch(makeBatch(inputType(), {ins({"a", 0, 1})}));
  op.processWatermark(runtime::Watermark{29});
  EXPECT_THAT(out.take(), ElementsAre("WM(25)", "+I[2, 12, 30]", "WM(29)"));
  EXPECT_EQ(op.numLateRecordsDropped(), 1);
}

TEST(SessionWindowAggTest, RejectsANonPositiveGap) {
  EXPECT_THROW(SessionWindowAggregateOperator(inputType(), session(0), {0}, calls()), UserError);
  // The window TVF factory hands a SESSION window to this operator, validating it the same way.
  EXPECT_THROW(makeWindowAggregateFactory(inputType(), session(-5), {0}, calls()), UserError);
}

runtime::state::StateBackendOptions backend(bool rocksdb) {
  runtime::state::StateBackendOptions o;
  o.type = rocksdb ? runtime::state::StateBackendType::kRocksDB : runtime::state::StateBackendType::kHashMap;
  return o;
}

TEST(SessionWindowAggStateTest, RestoresAtEveryEventBoundaryOnBothBackends) {
  for (int from_backend = 0; from_backend < 2; ++from_backend) {
    for (int to_backend = 0; to_backend < 2; ++to_backend) {
      for (size_t split = 0; split <= kEvents.size(); ++split) {
        SCOPED_TRACE(::testing::Message() << "backend " << from_backend << " -> " << to_backend << ", split after event "
                                          << split);
        CollectingOutput out;
        runtime::OperatorMetrics metrics;
        auto state1 = std::make_unique<runtime::state::StreamOperatorStateContext>(
            "op", testing::subtaskRange(1, 0), testing::kMaxParallelism, nullptr, backend(from_backend == 1));
        auto first = std::make_unique<SessionWindowAggregateOperator>(inputType(), session(10), std::vector<int>{0},
                                                                      calls());
        testing::openWithState(*first, out, metrics, *state1);
        feed(*first, kEvents, 0, split);
        const runtime::checkpoint::OperatorSubtaskState snap = testing::takeSnapshot(*first, *state1);
        const int64_t late_before = first->numLateRecordsDropped();
        first.reset();
        state1.reset();

        auto state2 = std::make_unique<runtime::state::StreamOperatorStateContext>(
            "op", testing::subtaskRange(1, 0), testing::kMaxParallelism, &snap, backend(to_backend == 1));
        SessionWindowAggregateOperator second(inputType(), session(10), {0}, calls());
        testing::openWithState(second, out, metrics, *state2);
        feed(second, kEvents, split, kEvents.size());
        EXPECT_THAT(out.take(), ElementsAreArray(kExpected));
        EXPECT_EQ(late_before + second.numLateRecordsDropped(), 1);
        EXPECT_EQ(second.numPendingWindows(), 0u);
        EXPECT_EQ(second.numTimers(), 0u);
      }
    }
  }
}

TEST(SessionWindowAggStateTest, RestoredSessionsOfAnotherQueryAreAnInputError) {
  CollectingOutput out;
  runtime::OperatorMetrics metrics;
  auto state1 = testing::makeStateContext(nullptr);
  SessionWindowAggregateOperator first(inputType(), session(10), {0}, calls());
  testing::openWithState(first, out, metrics, *state1);
  first.processBatch(makeBatch(inputType(), {ins({"a", 0, 1})}));
  const auto snap = testing::takeSnapshot(first, *state1);
  auto state2 = testing::makeStateContext(&snap);
  SessionWindowAggregateOperator second(inputType(), session(10), {0}, {call(AggKind::kCountStar, -1)});
  try {
    testing::openWithState(second, out, metrics, *state2);
    FAIL() << "restored accumulators of four calls into one";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("restored state 'session-windows'"));
  }
}

}  // namespace
}  // namespace sluice::table
