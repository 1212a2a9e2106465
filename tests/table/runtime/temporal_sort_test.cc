// TemporalSortOperator driven by hand: the order, late rows and ties worked out from Flink's
// RowTimeSortOperator / ProcTimeSortOperator, and a snapshot at every input boundary restored into a fresh
// operator (heap and RocksDB, also across backends) that continues the output exactly.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <variant>

#include "runtime/time/processing_time_service.h"
#include "state_test_util.h"
#include "table/runtime/temporal_sort.h"

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

// k STRING, v BIGINT, ts TIMESTAMP(3)
RowType inputType() {
  return RowType{{"k", "v", "ts"}, {LogicalType::string(), LogicalType::bigint(), LogicalType::timestamp(3)}};
}

InputRow row(const char* k, int64_t v, int64_t ts_s) { return ins({std::string(k), v, ts_s * 1000}); }

// ORDER BY ts (column 2) [, v DESC].
std::vector<SortField> byTime(bool then_v_desc) {
  std::vector<SortField> order = {SortField{2, true, true}};
  if (then_v_desc) order.push_back(SortField{1, false, false});
  return order;
}

// A row or a watermark (ms).
using Event = std::variant<InputRow, int64_t>;

// A watermark 2 s behind the largest row time after each row that advances it:
//  a@3 (wm 1 s: nothing buffered at or before 1 s); b@1, c@2 wait; d@5 (wm 3 s fires 1, 2, 3: b, c, a;
//  the last fired time is 3 s); e@3 is late (3 s <= 3 s); f@9 (wm 7 s fires 5: d); g@4 is late
//  (4 s <= 5 s); h@8 waits; the end (MAX) fires 8 and 9: h, f.
const std::vector<Event> kLate = {row("a", 1, 3), int64_t{1000}, row("b", 2, 1), row("c", 3, 2), row("d", 4, 5),
                                  int64_t{3000}, row("e", 5, 3), row("f", 6, 9), int64_t{7000}, row("g", 7, 4),
                                  row("h", 8, 8), kMax};
const std::vector<std::string> kLateSorted = {
    "WM(1000)", "+I[b, 2, 1000]", "+I[c, 3, 2000]", "+I[a, 1, 3000]", "WM(3000)", "+I[d, 4, 5000]", "WM(7000)",
    "+I[h, 8, 8000]", "+I[f, 6, 9000]", "WM(9223372036854775807)"};

// Rows of two times, ties broken by v DESC (NULL last, as Flink's default for DESC), equal v in arrival order.
const std::vector<Event> kTies = {row("x", 1, 1), row("y", 3, 1), ins({std::string("n"), testing::kNull, int64_t{1000}}),
                                  row("z", 2, 1), row("w", 5, 2), row("x2", 1, 1), row("u", 4, 2), kMax};
const std::vector<std::string> kTiesSorted = {"+I[y, 3, 1000]", "+I[z, 2, 1000]", "+I[x, 1, 1000]",
                                              "+I[x2, 1, 1000]", "+I[n, null, 1000]", "+I[w, 5, 2000]",
                                              "+I[u, 4, 2000]", "WM(9223372036854775807)"};

void feed(TemporalSortOperator& op, const Event& e) {
  if (const auto* r = std::get_if<InputRow>(&e)) op.processBatch(makeBatch(inputType(), {*r}));
  else op.processWatermark(runtime::Watermark{std::get<int64_t>(e)});
}

TEST(TemporalSortTest, RowTimeReleasesTimesAsTheWatermarkPassesAndDropsLateRows) {
  TemporalSortOperator op(inputType(), byTime(false), /*rowtime=*/true);
  CollectingOutput out;
  runtime::OperatorMetrics metrics;
  testing::openOperator(op, out, metrics);
  for (const Event& e : kLate) feed(op, e);
  op.endInput();
  EXPECT_THAT(out.take(), ElementsAreArray(kLateSorted));
  EXPECT_EQ(op.numLateRecordsDropped(), 2);
  EXPECT_EQ(metrics.num_late_records_dropped.load(), 2);
  EXPECT_EQ(op.numBufferedRows(), 0u);
}

TEST(TemporalSortTest, RowTimeSortsTiesByTheOtherColumns) {
  TemporalSortOperator op(inputType(), byTime(true), /*rowtime=*/true);
  CollectingOutput out;
  runtime::OperatorMetrics metrics;
  testing::openOperator(op, out, metrics);
  for (const Event& e : kTies) feed(op, e);
  EXPECT_THAT(out.take(), ElementsAreArray(kTiesSorted));
}

TEST(TemporalSortTest, RowsAtOrBeforeTheEpochAreLate) {
  // Flink's lastTriggeringTsState starts at 0: a row time <= 0 is never buffered.
  TemporalSortOperator op(inputType(), byTime(false), /*rowtime=*/true);
  CollectingOutput out;
  runtime::OperatorMetrics metrics;
  testing::openOperator(op, out, metrics);
  feed(op, row("early", 1, -5));
  feed(op, row("epoch", 2, 0));
  feed(op, ins({std::string("one"), int64_t{3}, int64_t{1}}));
  feed(op, kMax);
  EXPECT_THAT(out.take(), ElementsAreArray({"+I[one, 3, 1]", "WM(9223372036854775807)"}));
  EXPECT_EQ(op.numLateRecordsDropped(), 2);
}

TEST(TemporalSortTest, ProcessingTimeSortsWhatArrivedByTheOtherColumnsOneMillisecondLater) {
  int64_t now = 1000;
  runtime::ProcessingTimeService timers([&] { return now; });
  TemporalSortOperator op(inputType(), byTime(true), /*rowtime=*/false);
  CollectingOutput out;
  runtime::OperatorMetrics metrics;
  testing::openOperator(op, out, metrics, nullptr, &timers);
  op.processBatch(makeBatch(inputType(), {row("a", 1, 0), row("b", 3, 0)}));
  now = 1000;
  timers.fireDue();
  EXPECT_TRUE(out.take().empty());  // the timer is at 1001
  op.processBatch(makeBatch(inputType(), {row("c", 2, 0)}));
  now = 1001;
  timers.fireDue();
  EXPECT_THAT(out.take(), ElementsAreArray({"+I[b, 3, 0]", "+I[c, 2, 0]", "+I[a, 1, 0]"}));
  EXPECT_EQ(op.numBufferedRows(), 0u);
  // Rows still buffered when the input ends are emitted.
  now = 2000;
  op.processBatch(makeBatch(inputType(), {row("d", 1, 0), row("e", 9, 0)}));
  op.endInput();
  EXPECT_THAT(out.take(), ElementsAreArray({"+I[e, 9, 0]", "+I[d, 1, 0]"}));
}

TEST(TemporalSortTest, ProcessingTimeAloneKeepsArrivalOrder) {
  TemporalSortOperator op(inputType(), byTime(false), /*rowtime=*/false);
  CollectingOutput out;
  runtime::OperatorMetrics metrics;
  testing::openOperator(op, out, metrics);
  op.processBatch(makeBatch(inputType(), {row("b", 2, 0), row("a", 1, 0)}));
  EXPECT_THAT(out.take(), ElementsAreArray({"+I[b, 2, 0]", "+I[a, 1, 0]"}));
}

runtime::state::StateBackendOptions backend(bool rocksdb) {
  runtime::state::StateBackendOptions o;
  o.type = rocksdb ? runtime::state::StateBackendType::kRocksDB : runtime::state::StateBackendType::kHashMap;
  return o;
}

// Snapshot after every event, restore (heap/RocksDB, and across them), continue: the same output.
void checkEveryBoundary(const std::vector<SortField>& order, bool rowtime, const std::vector<Event>& events,
                        const std::vector<std::string>& expected) {
  for (int from = 0; from < 2; ++from) {
    for (int to = 0; to < 2; ++to) {
      for (size_t split = 0; split <= events.size(); ++split) {
        SCOPED_TRACE(::testing::Message() << "backend " << from << " -> " << to << ", split after event " << split);
        CollectingOutput out;
        runtime::OperatorMetrics metrics;
        auto state1 = std::make_unique<runtime::state::StreamOperatorStateContext>(
            "op", testing::subtaskRange(1, 0), testing::kMaxParallelism, nullptr, backend(from == 1));
        auto first = std::make_unique<TemporalSortOperator>(inputType(), order, rowtime);
        testing::openWithState(*first, out, metrics, *state1);
        for (size_t i = 0; i < split; ++i) feed(*first, events[i]);
        const auto snap = testing::takeSnapshot(*first, *state1);
        first.reset();
        state1.reset();
        auto state2 = std::make_unique<runtime::state::StreamOperatorStateContext>(
            "op", testing::subtaskRange(1, 0), testing::kMaxParallelism, &snap, backend(to == 1));
        auto second = std::make_unique<TemporalSortOperator>(inputType(), order, rowtime);
        testing::openWithState(*second, out, metrics, *state2);
        for (size_t i = split; i < events.size(); ++i) feed(*second, events[i]);
        second->endInput();
        EXPECT_THAT(out.take(), ElementsAreArray(expected));
      }
    }
  }
}

TEST(TemporalSortStateTest, RowTimeRestoresAtEveryBoundary) {
  // The last fired time is state: e and g stay late after a restore.
  checkEveryBoundary(byTime(false), true, kLate, kLateSorted);
  checkEveryBoundary(byTime(true), true, kTies, kTiesSorted);
}

TEST(TemporalSortStateTest, ProcessingTimeRestoresAtEveryBoundary) {
  // Without a timer service every buffered row waits for the end of input, across restores too.
  const std::vector<Event> events = {row("a", 1, 0), row("b", 3, 0), row("c", 2, 0)};
  checkEveryBoundary(byTime(true), false, events, {"+I[b, 3, 0]", "+I[c, 2, 0]", "+I[a, 1, 0]"});
}

TEST(TemporalSortTest, RefusesUpdatesNullRowTimeAndADescendingTime) {
  TemporalSortOperator op(inputType(), byTime(false), /*rowtime=*/true);
  CollectingOutput out;
  runtime::OperatorMetrics metrics;
  testing::openOperator(op, out, metrics);
  EXPECT_THROW(op.processBatch(makeBatch(inputType(), {testing::del({std::string("a"), int64_t{1}, int64_t{1000}})})),
               UserError);
  EXPECT_THROW(op.processBatch(makeBatch(inputType(), {ins({std::string("a"), int64_t{1}, testing::kNull})})),
               UserError);
  EXPECT_THROW(TemporalSortOperator(inputType(), {SortField{2, false, false}}, true), UserError);
}

}  // namespace
}  // namespace sluice::table
