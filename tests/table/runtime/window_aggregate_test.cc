// WindowAggregateOperator: window assignment, firing and lateness computed by hand from Flink's
// SliceAssigners / TimeWindowUtil rules. Times are ms; rows print window_start, window_end last.

#include "table/runtime/window_aggregate.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/error.h"
#include "runtime/network/pipelined_subpartition.h"
#include "runtime/task/task_cancellation.h"
#include "runtime/time/processing_time_service.h"
#include "operator_test_util.h"

namespace sluice::table {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing::CollectingOutput;
using testing::ins;
using testing::kNull;
using testing::makeBatch;
using types::LogicalType;
using types::RowType;

// Input: k STRING, ts TIMESTAMP(3), v INT.
RowType inputType() {
  return RowType{{"k", "ts", "v"}, {LogicalType::string(), LogicalType::timestamp(3), LogicalType::integer()}};
}

AggregateCall call(AggKind kind, int arg) {
  AggregateCall c;
  c.kind = kind;
  c.arg_index = arg;
  return c;
}

WindowSpec tumble(int64_t size, int64_t offset = 0) {
  WindowSpec w;
  w.kind = WindowSpec::Kind::kTumble;
  w.time_index = 1;
  w.size_ms = size;
  w.slide_ms = size;
  w.offset_ms = offset;
  return w;
}

WindowSpec hop(int64_t slide, int64_t size) {
  WindowSpec w;
  w.kind = WindowSpec::Kind::kHop;
  w.time_index = 1;
  w.size_ms = size;
  w.slide_ms = slide;
  return w;
}

class WindowAggTest : public ::testing::Test {
 protected:
  void start(WindowSpec w, std::vector<int> keys, std::vector<AggregateCall> calls) {
    op_ = std::make_unique<WindowAggregateOperator>(inputType(), w, std::move(keys), std::move(calls));
    testing::openOperator(*op_, out_, metrics_);
  }
  void feed(const std::vector<testing::InputRow>& rows) { op_->processBatch(makeBatch(inputType(), rows)); }
  std::vector<std::string> watermark(int64_t w) {
    op_->processWatermark(runtime::Watermark{w});
    return out_.take();
  }

  runtime::OperatorMetrics metrics_;
  CollectingOutput out_;
  std::unique_ptr<WindowAggregateOperator> op_;
};

TEST_F(WindowAggTest, TumbleOutOfOrderFiresOnWatermarkAndDropsLateRows) {
  start(tumble(10), {0}, {call(AggKind::kCountStar, -1), call(AggKind::kSum, 2)});
  EXPECT_EQ(op_->outputType().names,
            (std::vector<std::string>{"k", "EXPR$0", "EXPR$1", "window_start", "window_end"}));
  EXPECT_EQ(op_->outputType().types[3], LogicalType::timestamp(3, false));
  // Windows: 3 -> [0,10); 12 -> [10,20); 7 -> [0,10); 15 -> [10,20).
  feed({ins({"a", 3, 1}), ins({"b", 12, 5}), ins({"a", 7, 2}), ins({"a", 15, 4})});
  EXPECT_THAT(out_.take(), IsEmpty());
  // [0,10) fires when 10 - 1 = 9 <= watermark; 8 is not enough.
  EXPECT_THAT(watermark(8), ElementsAre("WM(8)"));
  // a in [0,10): COUNT 2, SUM 1 + 2 = 3.
  EXPECT_THAT(watermark(9), ElementsAre("+I[a, 2, 3, 0, 10]", "WM(9)"));
  // 5 and 9 belong to the fired [0,10): late, dropped. 10 opens [10,20) for c with a NULL value.
  feed({ins({"a", 5, 100}), ins({"c", 10, kNull}), ins({"b", 9, 1})});
  EXPECT_EQ(op_->numLateRecordsDropped(), 2);
  // [10,20): keys by first arrival b (12), a (15), c (10 but arrived last): b 1/5, a 1/4, c 1/NULL.
  EXPECT_THAT(watermark(25),
              ElementsAre("+I[b, 1, 5, 10, 20]", "+I[a, 1, 4, 10, 20]", "+I[c, 1, null, 10, 20]", "WM(25)"));
  EXPECT_EQ(op_->numPendingWindows(), 0u);
}

TEST_F(WindowAggTest, OneWatermarkFiresWindowsInIncreasingEndOrder) {
  start(tumble(10), {0}, {call(AggKind::kCountStar, -1)});
  // Windows created in the order [20,30), [40,50), [0,10).
  feed({ins({"x", 25, 1}), ins({"y", 41, 1}), ins({"z", 5, 1}), ins({"x", 29, 1})});
  // Watermark 39 fires ends 10 and 30 (9 <= 39, 29 <= 39), not 50 (49 > 39).
  EXPECT_THAT(watermark(39), ElementsAre("+I[z, 1, 0, 10]", "+I[x, 2, 20, 30]", "WM(39)"));
  EXPECT_EQ(op_->numPendingWindows(), 1u);
  // A smaller watermark fires nothing and is forwarded.
  EXPECT_THAT(watermark(20), ElementsAre("WM(20)"));
  op_->endInput();
  EXPECT_THAT(out_.take(), IsEmpty());
  EXPECT_THAT(watermark(runtime::Watermark::kMaxTimestamp),
              ElementsAre("+I[y, 1, 40, 50]", "WM(9223372036854775807)"));
}

TEST_F(WindowAggTest, TumbleWithNegativeTimesAndOffset) {
  start(tumble(10, 3), {}, {call(AggKind::kCountStar, -1)});
  // offset 3: t = 2 -> (2 - 3) mod 10 = -1 -> 9 -> start 2 - 9 = -7, window [-7,3).
  //           t = 3 -> (3 - 3) mod 10 = 0 -> window [3,13).
  //           t = -8 -> (-8 - 3) mod 10 = -11 mod 10 = -1 -> 9 -> start -17, window [-17,-7).
  feed({ins({"a", 2, 1}), ins({"a", 3, 1}), ins({"a", -8, 1})});
  EXPECT_THAT(watermark(100), ElementsAre("+I[1, -17, -7]", "+I[1, -7, 3]", "+I[1, 3, 13]", "WM(100)"));

  CollectingOutput out;
  runtime::OperatorMetrics metrics;
  WindowAggregateOperator plain(inputType(), tumble(10), {}, {call(AggKind::kCountStar, -1)});
  testing::openOperator(plain, out, metrics);
  // No offset: t = -3 -> (-3) mod 10 = -3 -> 7 -> start -10, window [-10,0); t = -10 -> [-10,0) too.
  plain.processBatch(makeBatch(inputType(), {ins({"a", -3, 1}), ins({"a", -10, 1})}));
  plain.processWatermark(runtime::Watermark{-1});
  EXPECT_THAT(out.take(), ElementsAre("+I[2, -10, 0]", "WM(-1)"));
}

TEST_F(WindowAggTest, HopAssignsEveryContainingWindowAndKeepsPartlyLateRows) {
  start(hop(5, 10), {0}, {call(AggKind::kCountStar, -1), call(AggKind::kMax, 2)});
  // t = 7 -> windows [5,15), [0,10); t = 12 -> [10,20), [5,15).
  feed({ins({"a", 7, 70}), ins({"a", 12, 120})});
  EXPECT_THAT(watermark(9), ElementsAre("+I[a, 1, 70, 0, 10]", "WM(9)"));
  // t = 8: [0,10) fired, [5,15) open -> joins [5,15) only, not late.
  // t = 3: [0,10) and [-5,5) both fired -> late.
  feed({ins({"a", 8, 80}), ins({"a", 3, 30})});
  EXPECT_EQ(op_->numLateRecordsDropped(), 1);
  // [5,15): 7, 12, 8 -> COUNT 3, MAX 120.
  EXPECT_THAT(watermark(14), ElementsAre("+I[a, 3, 120, 5, 15]", "WM(14)"));
  // [10,20): 12 only.
  EXPECT_THAT(watermark(19), ElementsAre("+I[a, 1, 120, 10, 20]", "WM(19)"));
}

TEST_F(WindowAggTest, WindowWithOnlyNullValues) {
  start(tumble(10), {0},
        {call(AggKind::kCountStar, -1), call(AggKind::kCount, 2), call(AggKind::kSum, 2), call(AggKind::kAvg, 2),
         call(AggKind::kMin, 2), call(AggKind::kMax, 0)});
  feed({ins({"a", 1, kNull}), ins({"a", 2, kNull}), ins({"b", 3, 4})});
  // a: 2 rows, no non-NULL v: COUNT(v) 0, SUM/AVG/MIN NULL; MAX(k) = "a".
  // b: 1 row, v = 4: COUNT(v) 1, SUM 4, AVG 4 / 1 = 4, MIN 4, MAX(k) "b".
  EXPECT_THAT(watermark(9), ElementsAre("+I[a, 2, 0, null, null, null, a, 0, 10]",
                                        "+I[b, 1, 1, 4, 4, 4, b, 0, 10]", "WM(9)"));
}

TEST_F(WindowAggTest, MaxOfStringsWithoutKeys) {
  start(tumble(10), {}, {call(AggKind::kMin, 0), call(AggKind::kMax, 0)});
  feed({ins({"m", 1, 1}), ins({"b", 2, 1}), ins({"z", 3, 1}), ins({"c", 4, 1})});
  EXPECT_THAT(watermark(10), ElementsAre("+I[b, z, 0, 10]", "WM(10)"));
}

TEST_F(WindowAggTest, RejectsUpdatesNullRowTimeAndBadWindows) {
  start(tumble(10), {0}, {call(AggKind::kCountStar, -1)});
  EXPECT_THROW(feed({testing::del({"a", 1, 1})}), UserError);
  EXPECT_THROW(feed({testing::ua({"a", 1, 1})}), UserError);
  EXPECT_THROW(feed({ins({"a", kNull, 1})}), UserError);
  try {
    WindowAggregateOperator bad(inputType(), hop(4, 10), {0}, {call(AggKind::kCountStar, -1)});
    FAIL() << "HOP(4, 10) accepted";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("HOP window requires size must be an integral multiple of slide"));
  }
  EXPECT_THROW(WindowAggregateOperator(inputType(), tumble(0), {0}, {}), UserError);
  EXPECT_THROW(WindowAggregateOperator(inputType(), tumble(10, 10), {0}, {}), UserError);
  WindowSpec on_string = tumble(10);
  on_string.time_index = 0;  // k STRING is no row time
  EXPECT_THROW(WindowAggregateOperator(inputType(), on_string, {}, {}), UserError);
  EXPECT_THROW(makeWindowAggregateFactory(inputType(), hop(0, 10), {0}, {}), UserError);
  auto factory = makeWindowAggregateFactory(inputType(), hop(5, 10), {0}, {call(AggKind::kCountStar, -1)});
  EXPECT_NE(factory->createOperator(), nullptr);
}


// A HOP window of size 10000 ms sliding by 1 ms puts every row into 10000 windows. A cancelled task must
// leave that loop early (throwIfTaskCancelled every few hundred windows) rather than after all of them.
TEST_F(WindowAggTest, HopAssignmentLoopStopsWhenTheTaskIsCancelled) {
  std::atomic<bool> cancelled{false};
  const runtime::TaskCancellationScope scope(&cancelled);
  start(hop(1, 10000), {0}, {call(AggKind::kCountStar, -1)});
  feed({ins({"a", 5000, 1})});
  // Windows containing t = 5000: starts 5000, 4999, ..., -4999 (size / slide of them).
  EXPECT_EQ(op_->numPendingWindows(), 10000u);
  cancelled = true;  // as StreamTask::cancel sets it from another thread
  // t = 50000 lies in 10000 windows none of which exists yet.
  EXPECT_THROW(feed({ins({"a", 50000, 1})}), runtime::CancelTaskException);
  EXPECT_GT(op_->numPendingWindows(), 10000u);
  EXPECT_LT(op_->numPendingWindows(), 10000u + 1000u);  // stopped within the first thousand new windows
}

TEST_F(WindowAggTest, HopFiringLoopStopsWhenTheTaskIsCancelled) {
  std::atomic<bool> cancelled{false};
  const runtime::TaskCancellationScope scope(&cancelled);
  start(hop(1, 10000), {0}, {call(AggKind::kCountStar, -1)});
  feed({ins({"a", 5000, 1})});
  ASSERT_EQ(op_->numPendingWindows(), 10000u);
  cancelled = true;
  // Every window ends by 15000: without the check all 10000 would fire and none would stay.
  EXPECT_THROW(op_->processWatermark(runtime::Watermark{20000}), runtime::CancelTaskException);
  EXPECT_GT(op_->numPendingWindows(), 9000u);
  EXPECT_THAT(out_.take(), IsEmpty());
}

TEST_F(WindowAggTest, HopLoopsRunToTheEndOutsideACancelledTask) {
  start(hop(1, 10000), {0}, {call(AggKind::kCountStar, -1)});
  feed({ins({"a", 5000, 1})});
  const std::vector<std::string> events = watermark(20000);
  ASSERT_EQ(events.size(), 10000u + 1u);  // every window, then the watermark
  EXPECT_EQ(events.back(), "WM(20000)");
  EXPECT_EQ(op_->numPendingWindows(), 0u);
}

// Processing time: rows fall into the windows of the hand-driven clock when they arrive (the ts column is
// not read, NULL included), windows fire when the clock reaches window_end - 1, watermarks pass
// unchanged, and endInput fires what is left.
TEST(WindowAggProcTimeTest, TumbleFiresOnTheClockAndAtEndOfInput) {
  int64_t now = 3;
  runtime::ProcessingTimeService clock([&] { return now; });
  CollectingOutput out;
  runtime::OperatorMetrics metrics;
  WindowSpec w = tumble(10);
  w.proctime = true;
  WindowAggregateOperator op(inputType(), w, {0}, {call(AggKind::kCountStar, -1), call(AggKind::kSum, 2)});
  testing::openOperator(op, out, metrics, nullptr, &clock);
  op.processBatch(makeBatch(inputType(), {ins({"a", 500, 1}), ins({"b", kNull, 2})}));  // at 3: [0,10)
  now = 7;
  op.processBatch(makeBatch(inputType(), {ins({"a", -40, 4})}));  // at 7: [0,10)
  now = 8;
  EXPECT_EQ(clock.fireDue(), 0u);  // [0,10) fires at 9
  op.processWatermark(runtime::Watermark{100});
  EXPECT_THAT(out.take(), ElementsAre("WM(100)"));
  now = 9;
  clock.fireDue();
  // a: 2 rows, 1 + 4; b: 1 row, 2; keys in arrival order.
  EXPECT_THAT(out.take(), ElementsAre("+I[a, 2, 5, 0, 10]", "+I[b, 1, 2, 0, 10]"));
  now = 12;
  op.processBatch(makeBatch(inputType(), {ins({"a", 0, 8})}));  // at 12: [10,20)
  EXPECT_EQ(op.numPendingWindows(), 1u);
  op.endInput();
  EXPECT_THAT(out.take(), ElementsAre("+I[a, 1, 8, 10, 20]"));
  EXPECT_EQ(op.numPendingWindows(), 0u);
  EXPECT_EQ(op.numLateRecordsDropped(), 0);
}

TEST(WindowAggProcTimeTest, HopAndCumulateOnTheClock) {
  int64_t now = 7;
  runtime::ProcessingTimeService clock([&] { return now; });
  CollectingOutput out;
  runtime::OperatorMetrics metrics;
  WindowSpec w = hop(5, 10);
  w.proctime = true;
  WindowAggregateOperator op(inputType(), w, {}, {call(AggKind::kCountStar, -1)});
  testing::openOperator(op, out, metrics, nullptr, &clock);
  op.processBatch(makeBatch(inputType(), {ins({"a", 0, 1})}));  // at 7: [0,10), [5,15)
  now = 12;
  clock.fireDue();  // 9 <= 12: [0,10) with 1 row
  op.processBatch(makeBatch(inputType(), {ins({"a", 0, 1})}));  // at 12: [5,15), [10,20)
  now = 14;
  clock.fireDue();  // [5,15): 2 rows
  op.endInput();    // [10,20): 1 row
  EXPECT_THAT(out.take(), ElementsAre("+I[1, 0, 10]", "+I[2, 5, 15]", "+I[1, 10, 20]"));

  // CUMULATE(step 5, max 10) at 3: [0,5), [0,10); at 6: [0,10).
  now = 3;
  runtime::ProcessingTimeService clock2([&] { return now; });
  WindowSpec c;
  c.kind = WindowSpec::Kind::kCumulate;
  c.time_index = 1;
  c.slide_ms = 5;
  c.size_ms = 10;
  c.proctime = true;
  WindowAggregateOperator cum(inputType(), c, {}, {call(AggKind::kCountStar, -1)});
  testing::openOperator(cum, out, metrics, nullptr, &clock2);
  cum.processBatch(makeBatch(inputType(), {ins({"a", 0, 1})}));
  now = 6;
  clock2.fireDue();  // [0,5) fires at 4
  cum.processBatch(makeBatch(inputType(), {ins({"a", 0, 1})}));
  now = 9;
  clock2.fireDue();  // [0,10) fires at 9
  EXPECT_THAT(out.take(), ElementsAre("+I[1, 0, 5]", "+I[2, 0, 10]"));
}

}  // namespace
}  // namespace sluice::table
