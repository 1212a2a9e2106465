// Keyed ValueState and event-/processing-time timers of KeyedProcessFunction.
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "harness.h"
#include "test_util.h"

namespace sluice::api {
namespace {

using P = std::pair<std::string, int64_t>;  // (key, timestamp)

// Flink's "CountWithTimeout" example: counts per key; emits (key, count) when a key saw no element for
// 10 ms of event time.
struct CountWithTimeout : KeyedProcessFunction<std::string, P, P> {
  ValueState<int64_t>* count = nullptr;
  ValueState<int64_t>* last = nullptr;
  void open() override {
    count = &getRuntimeContext().getState(ValueStateDescriptor<int64_t>("count"));
    last = &getRuntimeContext().getState(ValueStateDescriptor<int64_t>("last"));
  }
  void processElement(const P& v, Context& ctx, Collector<P>&) override {
    count->update(count->value().value_or(0) + 1);
    last->update(*ctx.timestamp());
    ctx.timerService().registerEventTimeTimer(*ctx.timestamp() + 10);
    EXPECT_EQ(ctx.getCurrentKey(), v.first);
  }
  void onTimer(int64_t timestamp, OnTimerContext& ctx, Collector<P>& out) override {
    EXPECT_EQ(ctx.timeDomain(), TimeDomain::kEventTime);
    if (timestamp == *last->value() + 10) out.collect(P{ctx.getCurrentKey(), *count->value()});
  }
};

class StateTimerTest : public ::testing::TestWithParam<int> {};

TEST_P(StateTimerTest, EventTimeTimersFireOnWatermarks) {
  Configuration config;
  config.set("parallelism.default", std::to_string(GetParam()));
  config.set("sluice.batch.size", "1");  // one record per batch: a watermark after every record
  StreamExecutionEnvironment env(config);
  auto out = env.fromElements(P{"a", 1}, P{"a", 5}, P{"b", 3}, P{"a", 30})
                 .assignTimestampsAndWatermarks(WatermarkStrategy<P>::forMonotonousTimestamps().withTimestampAssigner(
                     [](const P& p) { return p.second; }))
                 .setParallelism(1)  // one channel into the keyed operator keeps the records in order
                 .keyBy([](const P& p) { return p.first; })
                 .process(CountWithTimeout{})
                 .collect();
  env.execute();
  // a@1 (timer 11), a@5 (timer 15), b@3 (timer 13), a@30 (timer 40; watermark 29 fires 11, 13, 15):
  // 11 and 15 see a's last = 30 -> nothing; 13 sees b's last = 3 -> (b, 1) at 13.
  // The final watermark fires 40: a's last = 30 -> (a, 3) at 40.
  auto values = out->values();
  auto stamps = out->timestamps();
  std::vector<std::pair<P, int64_t>> got;
  for (size_t i = 0; i < values.size(); ++i) got.emplace_back(values[i], stamps[i]);
  EXPECT_EQ(testing::sorted(got), (std::vector<std::pair<P, int64_t>>{{{"a", 3}, 40}, {{"b", 1}, 13}}));
}

INSTANTIATE_TEST_SUITE_P(Parallelism, StateTimerTest, ::testing::Values(1, 2, 4));

// Emits the key when a processing-time timer 10 ms after the element fires.
struct ProcessingTimeout : KeyedProcessFunction<std::string, P, std::string> {
  void processElement(const P&, Context& ctx, Collector<std::string>&) override {
    ctx.timerService().registerProcessingTimeTimer(ctx.timerService().currentProcessingTime() + 10);
  }
  void onTimer(int64_t timestamp, OnTimerContext& ctx, Collector<std::string>& out) override {
    EXPECT_EQ(ctx.timeDomain(), TimeDomain::kProcessingTime);
    out.collect(ctx.getCurrentKey() + "@" + std::to_string(timestamp));
  }
};

TEST(StateTimerTest, ProcessingTimeTimersFireWhenTheClockPasses) {
  auto env = testing::makeEnv(1);
  auto stream = env.fromElements(P{"x", 0}).keyBy([](const P& p) { return p.first; }).process(ProcessingTimeout{});
  testing::Harness h(stream);
  h.setProcessingTime(100);
  h.push<P>({{P{"a", 0}, 0}, {P{"b", 0}, 0}});  // timers at 100 + 10 = 110 for a and b
  h.setProcessingTime(109);
  EXPECT_TRUE(h.out.values<std::string>().empty());
  h.setProcessingTime(110);
  // Same time: timers fire ordered by their key bytes (the timer service's order).
  EXPECT_EQ(h.out.values<std::string>(), (std::vector<std::string>{"a@110", "b@110"}));
}

TEST(StateTimerTest, DeletedTimerDoesNotFire) {
  struct DeleteSecond : KeyedProcessFunction<std::string, P, std::string> {
    void processElement(const P& v, Context& ctx, Collector<std::string>&) override {
      if (v.second == 1) ctx.timerService().registerEventTimeTimer(50);
      else ctx.timerService().deleteEventTimeTimer(50);
    }
    void onTimer(int64_t ts, OnTimerContext& ctx, Collector<std::string>& out) override {
      out.collect(ctx.getCurrentKey() + "@" + std::to_string(ts));
    }
  };
  auto env = testing::makeEnv(1);
  auto stream = env.fromElements(P{"x", 0}).keyBy([](const P& p) { return p.first; }).process(DeleteSecond{});
  testing::Harness h(stream);
  // a registers 50 then deletes it; b registers 50 only.
  h.push<P>({{P{"a", 1}, 1}, {P{"b", 1}, 1}, {P{"a", 2}, 2}});
  h.watermark(60);
  EXPECT_EQ(h.out.values<std::string>(), (std::vector<std::string>{"b@50"}));
  EXPECT_EQ(h.out.watermarks, (std::vector<int64_t>{60}));
}

TEST(StateTimerTest, ValueStateIsPerKey) {
  struct RunningMax : KeyedProcessFunction<std::string, P, P> {
    ValueState<int64_t>* max = nullptr;
    void open() override { max = &getRuntimeContext().getState(ValueStateDescriptor<int64_t>("max")); }
    void processElement(const P& v, Context&, Collector<P>& out) override {
      if (!max->value() || v.second > *max->value()) max->update(v.second);
      out.collect(P{v.first, *max->value()});
      if (v.second == 0) max->clear();
    }
  };
  auto env = testing::makeEnv(1);
  auto stream = env.fromElements(P{"x", 0}).keyBy([](const P& p) { return p.first; }).process(RunningMax{});
  testing::Harness h(stream);
  h.push<P>({{P{"a", 3}, 0}, {P{"b", 1}, 0}, {P{"a", 2}, 0}, {P{"b", 0}, 0}, {P{"b", 0}, 0}, {P{"a", 7}, 0}});
  // a: 3, max(3,2)=3, max(3,7)=7; b: 1, max(1,0)=1 then cleared, 0 (fresh) then cleared.
  EXPECT_EQ(h.out.values<P>(), (std::vector<P>{{"a", 3}, {"b", 1}, {"a", 3}, {"b", 1}, {"b", 0}, {"a", 7}}));
}

TEST(StateTimerTest, TimersAndStateNeedAKeyedStream) {
  struct Timer : ProcessFunction<int64_t, int64_t> {
    void processElement(const int64_t& v, Context& ctx, Collector<int64_t>&) override {
      ctx.timerService().registerEventTimeTimer(v);
    }
  };
  auto env = testing::makeEnv(1);
  env.fromSequence(1, 3).process(Timer{}).collect();
  EXPECT_THROW(env.execute(), UserError);

  struct State : MapFunction<int64_t, int64_t> {
    int64_t map(const int64_t& v) override {
      getRuntimeContext().getState(ValueStateDescriptor<int64_t>("s"));
      return v;
    }
  };
  env.fromSequence(1, 3).map(State{}).collect();
  EXPECT_THROW(env.execute(), UserError);
}

TEST(StateTimerTest, AccumulatorsAreMergedOverSubtasks) {
  struct Count : MapFunction<int64_t, int64_t> {
    int64_t map(const int64_t& v) override {
      getRuntimeContext().getLongCounter("seen").add(1);
      if (v % 2 == 0) getRuntimeContext().getLongCounter("even").add(1);
      return v;
    }
  };
  auto env = testing::makeEnv(3);
  env.fromSequence(1, 10).map(Count{}).collect();
  const JobExecutionResult r = env.execute("acc");
  // 10 records over 3 subtasks; 5 of them even.
  EXPECT_EQ(r.getAccumulatorResult("seen"), 10);
  EXPECT_EQ(r.getAccumulatorResult("even"), 5);
  EXPECT_EQ(r.getJobName(), "acc");
  EXPECT_GE(r.getNetRuntime(), 0);
  EXPECT_THROW(r.getAccumulatorResult("missing"), UserError);
}

}  // namespace
}  // namespace sluice::api
