// OverAggregateOperator driven by hand: changelogs worked out from Flink's over functions (late rows and the
// numLateRecordsDropped counter, processing-time RANGE frames on a hand-driven clock, state cleanup), and a
// snapshot at every input boundary restored into a fresh operator (heap and RocksDB, also across backends)
// that continues the changelog exactly.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <variant>

#include "runtime/time/processing_time_service.h"
#include "state_test_util.h"
#include "table/runtime/over_aggregate.h"

namespace sluice::table {
namespace {

using ::testing::ElementsAreArray;
using testing::CollectingOutput;
using testing::ins;
using testing::InputRow;
using testing::makeBatch;
using types::LogicalType;
using types::RowType;

constexpr int64_t kMax = runtime::Watermark::kMaxTimestamp;

// seq BIGINT, k STRING, v BIGINT, ts TIMESTAMP(3)
RowType inputType() {
  return RowType{{"seq", "k", "v", "ts"},
                 {LogicalType::bigint(), LogicalType::string(), LogicalType::bigint(), LogicalType::timestamp(3)}};
}

InputRow row(int64_t seq, int64_t v, int64_t ts_s) { return ins({seq, std::string("a"), v, ts_s * 1000}); }

OverSpec sumOver(bool rowtime, bool rows, bool unbounded, int64_t preceding) {
  OverSpec s;
  s.partition_keys = {1};
  s.time_column = 3;
  s.rowtime = rowtime;
  s.rows = rows;
  s.unbounded = unbounded;
  s.preceding = preceding;
  AggregateCall sum;
  sum.kind = AggKind::kSum;
  sum.arg_index = 2;
  sum.arg_type = LogicalType::bigint();
  AggregateCall count;
  count.kind = AggKind::kCountStar;
  count.arg_type = LogicalType::bigint(false);
  s.calls = {sum, count};
  return s;
}

// A row or a watermark (ms).
using Event = std::variant<InputRow, int64_t>;

// tests/sql/over/late.test as events: a watermark 1 s behind the largest row time after each row that advances it.
const std::vector<Event> kLate = {row(1, 1, 2), int64_t{1000}, row(2, 2, 5), int64_t{4000}, row(3, 3, 3),
                                  row(4, 4, 8), int64_t{7000}, row(5, 5, 4), row(6, 6, 9), int64_t{8000}, kMax};

void feed(OverAggregateOperator& op, const Event& e) {
  if (const auto* r = std::get_if<InputRow>(&e)) op.processBatch(makeBatch(inputType(), {*r}));
  else op.processWatermark(runtime::Watermark{std::get<int64_t>(e)});
}

std::vector<std::string> run(const OverSpec& spec, const std::vector<Event>& events, int64_t* late = nullptr) {
  OverAggregateOperator op(inputType(), spec);
  CollectingOutput out;
  runtime::OperatorMetrics metrics;
  testing::openOperator(op, out, metrics);
  for (const Event& e : events) feed(op, e);
  op.endInput();
  if (late != nullptr) {
    *late = op.numLateRecordsDropped();
    EXPECT_EQ(metrics.num_late_records_dropped.load(), *late);
  }
  return out.take();
}

// The sums of late.test; each row is followed by SUM(v) and COUNT(*) of its frame.
TEST(OverAggregateTest, UnboundedEventTimeDropsRowsBehindTheWatermark) {
  int64_t late = 0;
  // r3 @3 s <= wm 4 s and r5 @4 s <= wm 7 s are late.
  EXPECT_THAT(run(sumOver(true, true, true, 0), kLate, &late),
              ElementsAreArray({"WM(1000)", "+I[1, a, 1, 2000, 1, 1]", "WM(4000)", "+I[2, a, 2, 5000, 3, 2]",
                                "WM(7000)", "+I[4, a, 4, 8000, 7, 3]", "WM(8000)", "+I[6, a, 6, 9000, 13, 4]",
                                "WM(9223372036854775807)"}));
  EXPECT_EQ(late, 2);
}

TEST(OverAggregateTest, BoundedEventTimeJudgesLatenessByTheLastFiredTime) {
  int64_t late = 0;
  // r3 @3 s is after the last fired time (2 s) of key a: kept, fired with r2 at wm 7 s, in time order.
  // r5 @4 s is before the last fired time (5 s): late. ROWS 1 PRECEDING.
  EXPECT_THAT(run(sumOver(true, true, false, 1), kLate, &late),
              ElementsAreArray({"WM(1000)", "+I[1, a, 1, 2000, 1, 1]", "WM(4000)", "+I[3, a, 3, 3000, 4, 2]",
                                "+I[2, a, 2, 5000, 5, 2]", "WM(7000)", "+I[4, a, 4, 8000, 6, 2]", "WM(8000)",
                                "+I[6, a, 6, 9000, 10, 2]", "WM(9223372036854775807)"}));
  EXPECT_EQ(late, 1);
  // RANGE 2 s: frames [t - 2 s, t].
  EXPECT_THAT(run(sumOver(true, false, false, 2000), kLate, &late),
              ElementsAreArray({"WM(1000)", "+I[1, a, 1, 2000, 1, 1]", "WM(4000)", "+I[3, a, 3, 3000, 4, 2]",
                                "+I[2, a, 2, 5000, 5, 2]", "WM(7000)", "+I[4, a, 4, 8000, 4, 1]", "WM(8000)",
                                "+I[6, a, 6, 9000, 10, 2]", "WM(9223372036854775807)"}));
  EXPECT_EQ(late, 1);
}

TEST(OverAggregateTest, RowsAtOrBeforeTheEpochAreLateInBoundedFrames) {
  // Flink's lastTriggeringTs starts at 0: a row at 0 ms is late for a bounded frame, not for UNBOUNDED.
  const std::vector<Event> events = {ins({int64_t{1}, std::string("a"), int64_t{1}, int64_t{0}}), kMax};
  int64_t late = 0;
  EXPECT_THAT(run(sumOver(true, true, false, 3), events, &late), ElementsAreArray({"WM(9223372036854775807)"}));
  EXPECT_EQ(late, 1);
  EXPECT_THAT(run(sumOver(true, true, true, 0), events, &late),
              ElementsAreArray({"+I[1, a, 1, 0, 1, 1]", "WM(9223372036854775807)"}));
  EXPECT_EQ(late, 0);
}

TEST(OverAggregateTest, ProcessingTimeRangeFiresOneMillisecondLaterAndCleansUp) {
  int64_t now = 1000;
  runtime::ProcessingTimeService timers([&] { return now; });
  OverAggregateOperator op(inputType(), sumOver(false, false, false, 1000));  // RANGE 1 s on processing time
  CollectingOutput out;
  runtime::OperatorMetrics metrics;
  testing::openOperator(op, out, metrics, nullptr, &timers);
  auto at = [&](int64_t t, std::vector<InputRow> rows) {
    now = t;
    timers.fireDue();
    if (!rows.empty()) op.processBatch(makeBatch(inputType(), rows));
  };
  // Two rows at 1000 ms are peers: both emitted at 1001 with frame {r1, r2}.
  at(1000, {row(1, 1, 0), row(2, 2, 0)});
  EXPECT_TRUE(out.take().empty());
  at(1001, {});
  EXPECT_THAT(out.take(), ElementsAreArray({"+I[1, a, 1, 0, 3, 2]", "+I[2, a, 2, 0, 3, 2]"}));
  // 1500: frame [500, 1500] = {r1, r2, r3}.
  at(1500, {row(3, 3, 0)});
  at(1501, {});
  EXPECT_THAT(out.take(), ElementsAreArray({"+I[3, a, 3, 0, 6, 3]"}));
  // The cleanup timer at 1000 + 1.5 * 1000 + 1 = 2501 drops the key's state (the frame of any later row
  // excludes 1500).
  EXPECT_EQ(op.numBufferedTimes(), 2u);
  at(2501, {});
  EXPECT_EQ(op.numBufferedTimes(), 0u);
  EXPECT_EQ(op.numKeys(), 0u);
  at(2600, {row(4, 4, 0)});
  at(2601, {});
  EXPECT_THAT(out.take(), ElementsAreArray({"+I[4, a, 4, 0, 4, 1]"}));
  // Rows still buffered when the input ends are emitted (their timer at 2701 has not come).
  at(2700, {row(5, 5, 0)});
  op.endInput();
  EXPECT_THAT(out.take(), ElementsAreArray({"+I[5, a, 5, 0, 9, 2]"}));
}

runtime::state::StateBackendOptions backend(bool rocksdb) {
  runtime::state::StateBackendOptions o;
  o.type = rocksdb ? runtime::state::StateBackendType::kRocksDB : runtime::state::StateBackendType::kHashMap;
  return o;
}

// Snapshot after every event, restore (heap/RocksDB; across backends too when `cross`), continue: the same
// changelog.
void checkEveryBoundary(const OverSpec& spec, const std::vector<Event>& events, const std::vector<std::string>& expected,
                        bool cross = false) {
  for (int from = 0; from < 2; ++from) {
    for (int to = 0; to < 2; ++to) {
      if (!cross && from != to) continue;
      for (size_t split = 0; split <= events.size(); ++split) {
        SCOPED_TRACE(::testing::Message() << "backend " << from << " -> " << to << ", split after event " << split);
        CollectingOutput out;
        runtime::OperatorMetrics metrics;
        auto state1 = std::make_unique<runtime::state::StreamOperatorStateContext>(
            "op", testing::subtaskRange(1, 0), testing::kMaxParallelism, nullptr, backend(from == 1));
        auto first = std::make_unique<OverAggregateOperator>(inputType(), spec);
        testing::openWithState(*first, out, metrics, *state1);
        for (size_t i = 0; i < split; ++i) feed(*first, events[i]);
        const auto snap = testing::takeSnapshot(*first, *state1);
        first.reset();
        state1.reset();
        auto state2 = std::make_unique<runtime::state::StreamOperatorStateContext>(
            "op", testing::subtaskRange(1, 0), testing::kMaxParallelism, &snap, backend(to == 1));
        auto second = std::make_unique<OverAggregateOperator>(inputType(), spec);
        testing::openWithState(*second, out, metrics, *state2);
        for (size_t i = split; i < events.size(); ++i) feed(*second, events[i]);
        EXPECT_THAT(out.take(), ElementsAreArray(expected));
      }
    }
  }
}

TEST(OverAggregateStateTest, BoundedEventTimeFramesRestoreAtEveryBoundary) {
  // Lateness of bounded frames is per-key state, so the late rows of late.test stay late after a restore.
  checkEveryBoundary(sumOver(true, true, false, 1), kLate,
                     {"WM(1000)", "+I[1, a, 1, 2000, 1, 1]", "WM(4000)", "+I[3, a, 3, 3000, 4, 2]",
                      "+I[2, a, 2, 5000, 5, 2]", "WM(7000)", "+I[4, a, 4, 8000, 6, 2]", "WM(8000)",
                      "+I[6, a, 6, 9000, 10, 2]", "WM(9223372036854775807)"});
  checkEveryBoundary(sumOver(true, false, false, 2000), kLate,
                     {"WM(1000)", "+I[1, a, 1, 2000, 1, 1]", "WM(4000)", "+I[3, a, 3, 3000, 4, 2]",
                      "+I[2, a, 2, 5000, 5, 2]", "WM(7000)", "+I[4, a, 4, 8000, 4, 1]", "WM(8000)",
                      "+I[6, a, 6, 9000, 10, 2]", "WM(9223372036854775807)"},
                     /*cross=*/true);
}

TEST(OverAggregateStateTest, UnboundedEventTimeRangeRestoresAtEveryBoundary) {
  // No late rows (the watermark is not state: after a restore no row is late until the next watermark).
  // RANGE UNBOUNDED: rows of one time are peers. r1 @2 s, r2 and r3 @4 s, r4 @6 s.
  const std::vector<Event> events = {row(1, 1, 2), row(2, 2, 4), int64_t{3000}, row(3, 3, 4), row(4, 4, 6),
                                     int64_t{5000}, kMax};
  checkEveryBoundary(sumOver(true, false, true, 0), events,
                     {"+I[1, a, 1, 2000, 1, 1]", "WM(3000)", "+I[2, a, 2, 4000, 6, 3]", "+I[3, a, 3, 4000, 6, 3]",
                      "WM(5000)", "+I[4, a, 4, 6000, 10, 4]", "WM(9223372036854775807)"});
}

TEST(OverAggregateStateTest, ProcessingTimeRowsRestoreAtEveryBoundary) {
  // ROWS 1 PRECEDING on processing time: each row with the one before it (the clock does not matter).
  const std::vector<Event> events = {row(1, 1, 0), row(2, 2, 0), row(3, 3, 0), row(4, 4, 0)};
  checkEveryBoundary(sumOver(false, true, false, 1), events,
                     {"+I[1, a, 1, 0, 1, 1]", "+I[2, a, 2, 0, 3, 2]", "+I[3, a, 3, 0, 5, 2]", "+I[4, a, 4, 0, 7, 2]"});
}

TEST(OverAggregateTest, RefusesUpdatingInputAndNullRowTime) {
  OverAggregateOperator op(inputType(), sumOver(true, true, true, 0));
  CollectingOutput out;
  runtime::OperatorMetrics metrics;
  testing::openOperator(op, out, metrics);
  EXPECT_THROW(op.processBatch(makeBatch(inputType(), {testing::del({int64_t{1}, std::string("a"), int64_t{1},
                                                                     int64_t{1000}})})),
               UserError);
  EXPECT_THROW(op.processBatch(makeBatch(inputType(), {ins({int64_t{1}, std::string("a"), int64_t{1}, testing::kNull})})),
               UserError);
}

}  // namespace
}  // namespace sluice::table
