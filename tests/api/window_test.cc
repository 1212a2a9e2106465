// Keyed time windows: tumbling and sliding, event and processing time, reduce / aggregate / process,
// out-of-order data, allowed lateness and the late-data side output.
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <utility>

#include "harness.h"
#include "test_util.h"

namespace sluice::api {
namespace {

using P = std::pair<std::string, int64_t>;  // (key, value)

auto keyOf = [](const P& p) { return p.first; };
auto sumOf = [](const P& a, const P& b) { return P{a.first, a.second + b.second}; };

TEST(WindowTest, TumblingEventTimeOutOfOrderAndLate) {
  auto env = testing::makeEnv(1);
  OutputTag<P> late("late");
  WindowedStream<std::string, P> windowed =
      env.fromElements(P{"k", 0}).keyBy(keyOf).window(TumblingEventTimeWindows::of(std::chrono::milliseconds(10)));
  windowed.sideOutputLateData(late);
  auto stream = windowed.reduce(sumOf);
  testing::Harness h(stream);
  // 1@1, 2@12, 3@5: 3 is out of order but the watermark has not passed its window yet.
  h.push<P>({{P{"k", 1}, 1}, {P{"k", 2}, 12}, {P{"k", 3}, 5}});
  h.watermark(9);  // fires [0, 10): 1 + 3 = 4, stamped with the window's max timestamp 9
  EXPECT_EQ(h.out.records<P>(), (std::vector<std::pair<P, int64_t>>{{{"k", 4}, 9}}));
  h.push<P>({{P{"k", 4}, 7}});  // [0, 10) is late: 9 + 0 <= 9 -> dropped to the side output
  h.watermark(19);              // fires [10, 20): 2
  EXPECT_EQ(h.out.records<P>(), (std::vector<std::pair<P, int64_t>>{{{"k", 4}, 9}, {{"k", 2}, 19}}));
  EXPECT_EQ(h.out.records<P>(late.tag()), (std::vector<std::pair<P, int64_t>>{{{"k", 4}, 7}}));
  EXPECT_EQ(h.out.watermarks, (std::vector<int64_t>{9, 19}));
}

TEST(WindowTest, AllowedLatenessFiresAgainThenDrops) {
  auto env = testing::makeEnv(1);
  OutputTag<P> late("late-2");
  auto windowed = env.fromElements(P{"k", 0}).keyBy(keyOf).window(TumblingEventTimeWindows::of(10));
  windowed.allowedLateness(5).sideOutputLateData(late);
  testing::Harness h(windowed.reduce(sumOf));
  h.push<P>({{P{"k", 1}, 1}, {P{"k", 3}, 5}});
  h.watermark(9);                // on time: 1 + 3 = 4
  h.push<P>({{P{"k", 4}, 7}});   // late but 9 + 5 > 9: added and fired at once: 4 + 4 = 8
  h.watermark(14);               // cleanup time 9 + 5 = 14: state dropped
  h.push<P>({{P{"k", 5}, 8}});   // 9 + 5 <= 14: too late -> side output
  h.watermark(100);              // nothing left to fire
  EXPECT_EQ(h.out.values<P>(), (std::vector<P>{{"k", 4}, {"k", 8}}));
  EXPECT_EQ(h.out.values<P>(late.tag()), (std::vector<P>{{"k", 5}}));
}

// Without a late-data side output, a too-late element is dropped and counted (WindowOperator's
// numLateRecordsDropped); one within the allowed lateness is not.
TEST(WindowTest, LateElementsWithoutSideOutputAreCounted) {
  auto env = testing::makeEnv(1);
  auto windowed = env.fromElements(P{"k", 0}).keyBy(keyOf).window(TumblingEventTimeWindows::of(10));
  windowed.allowedLateness(5);
  testing::Harness h(windowed.reduce(sumOf));
  h.push<P>({{P{"k", 1}, 1}});
  h.watermark(12);               // [0, 10) fired (1), cleaned at 9 + 5 = 14: not yet
  h.push<P>({{P{"k", 2}, 3}});   // 9 + 5 > 12: within lateness, fires again: 1 + 2 = 3
  h.watermark(14);               // cleaned
  h.push<P>({{P{"k", 4}, 5}, {P{"k", 8}, 9}, {P{"k", 16}, 15}});  // 5 and 9: 9 + 5 <= 14, dropped; 15 on time
  h.watermark(100);              // [10, 20) fires: 16
  EXPECT_EQ(h.out.values<P>(), (std::vector<P>{{"k", 1}, {"k", 3}, {"k", 16}}));
  EXPECT_EQ(h.metrics().num_late_records_dropped.load(), 2);
}

// (window start, sum of values) per window.
struct StartAndSum : ProcessWindowFunction<P, std::pair<int64_t, int64_t>, std::string> {
  void process(const std::string&, Context& ctx, const std::vector<P>& elements,
               Collector<std::pair<int64_t, int64_t>>& out) override {
    int64_t sum = 0;
    for (const P& p : elements) sum += p.second;
    out.collect({ctx.window().getStart(), sum});
  }
};

class WindowJobTest : public ::testing::TestWithParam<int> {};

TEST_P(WindowJobTest, SlidingEventTimeWindowsProcess) {
  auto env = testing::makeEnv(GetParam());
  using E = std::tuple<std::string, int64_t, int64_t>;  // key, value, timestamp
  auto out = env.fromElements(E{"k", 1, 2}, E{"k", 2, 7}, E{"k", 4, 12})
                 .assignTimestampsAndWatermarks(WatermarkStrategy<E>::forBoundedOutOfOrderness(0).withTimestampAssigner(
                     [](const E& e) { return std::get<2>(e); }))
                 .map([](const E& e) { return P{std::get<0>(e), std::get<1>(e)}; })
                 .keyBy(keyOf)
                 .window(SlidingEventTimeWindows::of(10, 5))
                 .process(StartAndSum{})
                 .executeAndCollect();
  // Size 10, slide 5: ts 2 -> [-5,5) [0,10); ts 7 -> [0,10) [5,15); ts 12 -> [5,15) [10,20).
  // Sums: [-5,5): 1; [0,10): 1+2 = 3; [5,15): 2+4 = 6; [10,20): 4.
  EXPECT_EQ(testing::sorted(out), (std::vector<std::pair<int64_t, int64_t>>{{-5, 1}, {0, 3}, {5, 6}, {10, 4}}));
}

// Average of the values as (sum, count) -> double.
struct Average : AggregateFunction<P, std::pair<int64_t, int64_t>, double> {
  std::pair<int64_t, int64_t> createAccumulator() override { return {0, 0}; }
  std::pair<int64_t, int64_t> add(const P& v, std::pair<int64_t, int64_t> acc) override {
    return {acc.first + v.second, acc.second + 1};
  }
  double getResult(const std::pair<int64_t, int64_t>& acc) override {
    return static_cast<double>(acc.first) / static_cast<double>(acc.second);
  }
  std::pair<int64_t, int64_t> merge(std::pair<int64_t, int64_t> a, std::pair<int64_t, int64_t> b) override {
    return {a.first + b.first, a.second + b.second};
  }
};

TEST_P(WindowJobTest, TumblingAggregatePerKey) {
  auto env = testing::makeEnv(GetParam());
  using E = std::tuple<std::string, int64_t, int64_t>;
  auto out = env.fromElements(E{"a", 1, 100}, E{"b", 10, 150}, E{"a", 4, 900}, E{"a", 9, 1000}, E{"b", 20, 1999})
                 .assignTimestampsAndWatermarks(WatermarkStrategy<E>::forBoundedOutOfOrderness(std::chrono::seconds(1))
                                                    .withTimestampAssigner([](const E& e) { return std::get<2>(e); }))
                 .map([](const E& e) { return P{std::get<0>(e), std::get<1>(e)}; })
                 .keyBy(keyOf)
                 .window(TumblingEventTimeWindows::of(std::chrono::seconds(1)))
                 .aggregate(Average{})
                 .executeAndCollect();
  // [0,1000): a: (1+4)/2 = 2.5, b: 10; [1000,2000): a: 9, b: 20.
  EXPECT_EQ(testing::sorted(out), (std::vector<double>{2.5, 9.0, 10.0, 20.0}));
}

TEST_P(WindowJobTest, EventTimeWindowWithoutTimestampsFails) {
  auto env = testing::makeEnv(GetParam());
  env.fromElements(P{"a", 1}).keyBy(keyOf).window(TumblingEventTimeWindows::of(10)).reduce(sumOf).collect();
  EXPECT_THROW(env.execute(), UserError);
}

INSTANTIATE_TEST_SUITE_P(Parallelism, WindowJobTest, ::testing::Values(1, 2, 4));

TEST(WindowTest, TumblingProcessingTime) {
  auto env = testing::makeEnv(1);
  auto stream = env.fromElements(P{"k", 0}).keyBy(keyOf).window(TumblingProcessingTimeWindows::of(10)).reduce(sumOf);
  testing::Harness h(stream);
  h.setProcessingTime(3);
  h.push<P>({{P{"a", 1}, runtime::kNoTimestamp}, {P{"b", 5}, runtime::kNoTimestamp}});
  h.setProcessingTime(8);
  h.push<P>({{P{"a", 2}, runtime::kNoTimestamp}});
  h.setProcessingTime(9);  // [0, 10) closes at its max timestamp 9: a = 1 + 2, b = 5
  EXPECT_EQ(h.out.values<P>(), (std::vector<P>{{"a", 3}, {"b", 5}}));
  h.setProcessingTime(12);
  h.push<P>({{P{"a", 7}, runtime::kNoTimestamp}});
  h.setProcessingTime(19);
  EXPECT_EQ(h.out.values<P>(), (std::vector<P>{{"a", 3}, {"b", 5}, {"a", 7}}));
}

TEST(WindowTest, SlidingProcessingTimeAssignsToEveryOverlappingWindow) {
  auto env = testing::makeEnv(1);
  auto stream =
      env.fromElements(P{"k", 0}).keyBy(keyOf).window(SlidingProcessingTimeWindows::of(10, 5)).process(StartAndSum{});
  testing::Harness h(stream);
  h.setProcessingTime(7);  // 7 is in [0,10) and [5,15)
  h.push<P>({{P{"a", 1}, runtime::kNoTimestamp}});
  h.setProcessingTime(20);
  using R = std::pair<int64_t, int64_t>;
  EXPECT_EQ(h.out.values<R>(), (std::vector<R>{{0, 1}, {5, 1}}));
}

TEST(WindowTest, AssignerArgumentsAreChecked) {
  EXPECT_THROW(TumblingEventTimeWindows::of(0), UserError);
  EXPECT_THROW(SlidingEventTimeWindows::of(10, 5, 5), UserError);
  EXPECT_EQ(describeWindowAssigner(SlidingEventTimeWindows::of(10, 5)), "SlidingEventTimeWindows(10, 5)");
}

}  // namespace
}  // namespace sluice::api
