// WindowAggregateOperator over the state layer: a snapshot between any two input events (rows and
// watermarks) restores into a fresh operator whose output continues the uninterrupted run exactly
// (window contents, firing order, keys in arrival order, late rows judged by the restored watermark),
// and the restored watermark is the minimum over the old subtasks' "watermark" union state.
// Times are ms; rows print window_start, window_end last. Expected output worked out by hand.

#include "table/runtime/window_aggregate.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <variant>

#include "runtime/time/processing_time_service.h"
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

AggregateCall call(AggKind kind, int arg) {
  AggregateCall c;
  c.kind = kind;
  c.arg_index = arg;
  return c;
}

// COUNT(*), SUM(v), MIN(k): MIN of a string keeps a value map even without retraction.
std::vector<AggregateCall> calls() {
  return {call(AggKind::kCountStar, -1), call(AggKind::kSum, 2), call(AggKind::kMin, 0)};
}

WindowSpec window(WindowSpec::Kind kind, int64_t size, int64_t slide) {
  WindowSpec w;
  w.kind = kind;
  w.time_index = 1;
  w.size_ms = size;
  w.slide_ms = slide;
  return w;
}

/// An input event: a row or a watermark.
using Event = std::variant<InputRow, int64_t>;

void feed(WindowAggregateOperator& op, const std::vector<Event>& events, size_t from, size_t to) {
  for (size_t i = from; i < to; ++i) {
    if (const auto* row = std::get_if<InputRow>(&events[i])) {
      op.processBatch(makeBatch(inputType(), {*row}));
    } else {
      op.processWatermark(runtime::Watermark{std::get<int64_t>(events[i])});
    }
  }
}

/// Runs `events` with a snapshot and restore after every event boundary and expects `expected` each time.
void checkRestoreAtEveryBoundary(const WindowSpec& w, const std::vector<Event>& events,
                                 const std::vector<std::string>& expected, int64_t expected_late) {
  for (size_t split = 0; split <= events.size(); ++split) {
    SCOPED_TRACE("split after event " + std::to_string(split));
    CollectingOutput out;
    runtime::OperatorMetrics metrics;
    auto state1 = testing::makeStateContext(nullptr);
    auto first = std::make_unique<WindowAggregateOperator>(inputType(), w, std::vector<int>{0}, calls());
    testing::openWithState(*first, out, metrics, *state1);
    feed(*first, events, 0, split);
    const runtime::checkpoint::OperatorSubtaskState snap = testing::takeSnapshot(*first, *state1);
    const int64_t late_before = first->numLateRecordsDropped();
    const int64_t watermark_before = first->currentWatermark();
    first.reset();
    state1.reset();

    auto state2 = testing::makeStateContext(&snap);
    WindowAggregateOperator second(inputType(), w, {0}, calls());
    testing::openWithState(second, out, metrics, *state2);
    EXPECT_EQ(second.currentWatermark(), watermark_before);
    feed(second, events, split, events.size());
    EXPECT_THAT(out.take(), ElementsAreArray(expected));
    EXPECT_EQ(late_before + second.numLateRecordsDropped(), expected_late);
    EXPECT_EQ(second.numPendingWindows(), 0u);
  }
}

TEST(WindowAggStateTest, TumbleRestoresAtEveryEventBoundary) {
  const std::vector<Event> events = {
      ins({"b", 3, 1}),  ins({"a", 5, 2}),  ins({"b", 12, 4}), int64_t{9},
      ins({"a", 8, 100}), ins({"c", 15, 5}), ins({"b", 17, 6}), ins({"a", 21, 7}),
      int64_t{25},       ins({"a", 22, 1}), int64_t{100},
  };
  const std::vector<std::string> expected = {
      // WM 9 fires [0,10) (10 - 1 <= 9): b came first, then a.
      "+I[b, 1, 1, b, 0, 10]", "+I[a, 1, 2, a, 0, 10]", "WM(9)",
      // a@8 is late: its only window fired. WM 25 fires [10,20): b (since ts 12), then c.
      "+I[b, 2, 10, b, 10, 20]", "+I[c, 1, 5, c, 10, 20]", "WM(25)",
      // [20,30) holds a@21 and a@22: 2 rows, 7 + 1.
      "+I[a, 2, 8, a, 20, 30]", "WM(100)",
  };
  checkRestoreAtEveryBoundary(window(WindowSpec::Kind::kTumble, 10, 10), events, expected, 1);
}

TEST(WindowAggStateTest, HopRestoresAtEveryEventBoundary) {
  // HOP(slide 5, size 10): t joins [s, s + 10) for s = t - t mod 5 and s - 5.
  const std::vector<Event> events = {
      ins({"x", 7, 1}), ins({"y", 3, 2}), int64_t{9}, ins({"x", 4, 3}), ins({"y", 12, 4}), int64_t{30},
  };
  const std::vector<std::string> expected = {
      // x@7 -> [0,10), [5,15); y@3 -> [-5,5), [0,10). WM 9 fires [-5,5) (y) and [0,10) (x first, then y).
      "+I[y, 1, 2, y, -5, 5]", "+I[x, 1, 1, x, 0, 10]", "+I[y, 1, 2, y, 0, 10]", "WM(9)",
      // x@4 belongs to [-5,5) and [0,10), both fired: late. y@12 -> [5,15), [10,20).
      // WM 30 fires [5,15) (x, then y) and [10,20) (y).
      "+I[x, 1, 1, x, 5, 15]", "+I[y, 1, 4, y, 5, 15]", "+I[y, 1, 4, y, 10, 20]", "WM(30)",
  };
  checkRestoreAtEveryBoundary(window(WindowSpec::Kind::kHop, 10, 5), events, expected, 1);
}

TEST(WindowAggStateTest, RestoredWatermarkIsTheMinimumOverTheOldSubtasks) {
  const WindowSpec w = window(WindowSpec::Kind::kTumble, 10, 10);
  runtime::OperatorMetrics metrics;
  // Two old subtasks saw watermarks 9 and 25.
  runtime::checkpoint::OperatorSubtaskState snaps[2];
  const int64_t marks[2] = {9, 25};
  for (int i = 0; i < 2; ++i) {
    CollectingOutput out;
    auto state = testing::makeStateContext(nullptr, 2, i);
    WindowAggregateOperator op(inputType(), w, {0}, calls());
    testing::openWithState(op, out, metrics, *state, 2, i);
    op.processWatermark(runtime::Watermark{marks[i]});
    snaps[i] = testing::takeSnapshot(op, *state);
  }
  // Scale in to one subtask: every old "watermark" element reaches it; the smallest wins.
  const auto merged = testing::rescaled({&snaps[0], &snaps[1]}, 1, 0);
  auto state = testing::makeStateContext(&merged);
  CollectingOutput out;
  WindowAggregateOperator op(inputType(), w, {0}, calls());
  testing::openWithState(op, out, metrics, *state);
  EXPECT_EQ(op.currentWatermark(), 9);
  // A row in [10,20) is on time at watermark 9 (it would be late at 25).
  op.processBatch(makeBatch(inputType(), {ins({"a", 15, 3})}));
  EXPECT_EQ(op.numLateRecordsDropped(), 0);
  op.processWatermark(runtime::Watermark{19});
  EXPECT_THAT(out.take(), ElementsAre("+I[a, 1, 3, a, 10, 20]", "WM(19)"));
}

// Processing time: the windows' timers are in the snapshot, and the restored operator re-arms them on its
// clock, so a window begun before the checkpoint fires at its end after the restore.
TEST(WindowAggStateTest, ProcessingTimeWindowsFireAfterARestore) {
  WindowSpec w = window(WindowSpec::Kind::kTumble, 10, 10);
  w.proctime = true;
  int64_t now = 3;
  runtime::OperatorMetrics metrics;
  CollectingOutput out;
  auto open = [&](WindowAggregateOperator& op, runtime::state::StreamOperatorStateContext& state,
                  runtime::ProcessingTimeService& clock) {
    runtime::OperatorContext ctx;
    ctx.task_name = ctx.operator_name = "test";
    ctx.uid = "op";
    ctx.max_parallelism = testing::kMaxParallelism;
    ctx.metrics = &metrics;
    ctx.state = &state;
    ctx.processing_time_service = &clock;
    op.open(ctx, &out);
  };
  runtime::checkpoint::OperatorSubtaskState snap;
  {
    runtime::ProcessingTimeService clock([&] { return now; });
    auto state = testing::makeStateContext(nullptr);
    WindowAggregateOperator first(inputType(), w, {0}, calls());
    open(first, *state, clock);
    first.processBatch(makeBatch(inputType(), {ins({"b", 0, 1}), ins({"a", 0, 2})}));  // at 3: [0,10)
    snap = testing::takeSnapshot(first, *state);
  }
  now = 5;
  runtime::ProcessingTimeService clock([&] { return now; });
  auto state = testing::makeStateContext(&snap);
  WindowAggregateOperator second(inputType(), w, {0}, calls());
  open(second, *state, clock);
  second.processBatch(makeBatch(inputType(), {ins({"a", 0, 4})}));  // at 5: [0,10)
  now = 9;
  clock.fireDue();
  // b 1 row (1), a 2 rows (2 + 4), in arrival order.
  EXPECT_THAT(out.take(), ElementsAre("+I[b, 1, 1, b, 0, 10]", "+I[a, 2, 6, a, 0, 10]"));
  second.endInput();
  EXPECT_THAT(out.take(), ::testing::IsEmpty());
  EXPECT_EQ(second.numPendingWindows(), 0u);
}

}  // namespace
}  // namespace sluice::table
