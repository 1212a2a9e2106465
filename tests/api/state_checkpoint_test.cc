// Keyed DataStream operators keep their state and timers in the keyed state backend: a snapshot taken
// between any two inputs restores into a fresh operator (the same subtask, or rescaled into two key-group
// ranges) that continues exactly as an uninterrupted run.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

#include "common/hash.h"
#include "harness.h"
#include "runtime/checkpoint/checkpoint_types.h"
#include "runtime/serialization/key_hash.h"
#include "runtime/state/keyed_state_backend.h"
#include "runtime/state/stream_operator_state_context.h"
#include "test_util.h"

namespace sluice::api {
namespace {

using runtime::state::KeyGroupRange;
using runtime::state::StreamOperatorStateContext;
using OperatorSubtaskState = runtime::checkpoint::OperatorSubtaskState;
using P = std::pair<std::string, int64_t>;  // (key, value)

constexpr int kMaxParallelism = 128;

// The subtask of 2 that owns `key`: its key group by the HASH exchange's rule, then Flink's range split.
int ownerOf(const std::string& key) {
  const int32_t group = assignToKeyGroup(runtime::keyHash(key), kMaxParallelism);
  return operatorIndexForKeyGroup(kMaxParallelism, 2, group);
}
KeyGroupRange rangeOf(int subtask) {
  return runtime::state::KeyGroupRangeAssignment::computeKeyGroupRangeForOperatorIndex(kMaxParallelism, 2, subtask);
}

// One operator subtask over its own StreamOperatorStateContext (restored from `restored` when given),
// driven by hand with a manual processing-time clock.
class Subtask {
 public:
  template <typename S>
  Subtask(const S& stream, KeyGroupRange range, const OperatorSubtaskState* restored, int64_t now = 0) : now_(now) {
    const auto* factory = dynamic_cast<const runtime::StreamOperatorFactory*>(stream.getTransformation()->factory.get());
    EXPECT_NE(factory, nullptr);
    op_ = factory->createOperator();
    state_ = std::make_unique<StreamOperatorStateContext>("keyed-op", range, kMaxParallelism, restored);
    runtime::OperatorContext ctx;
    ctx.operator_name = stream.getTransformation()->name;
    ctx.task_name = ctx.operator_name + " (1/1)";
    ctx.max_parallelism = kMaxParallelism;
    ctx.uid = "keyed-op";
    ctx.config = &config_;
    ctx.metrics = &metrics_;
    ctx.processing_time_service = &timers_;
    ctx.state = state_.get();
    op_->open(ctx, &out);
  }
  ~Subtask() { op_->close(); }

  template <typename T>
  void record(const T& value, int64_t ts) {
    auto b = runtime::makeObjectBatch<T>();
    b->add(value, ts);
    op_->processObjects(std::move(b));
  }
  void watermark(int64_t ts) { op_->processWatermark(runtime::Watermark{ts}); }
  void setProcessingTime(int64_t now) {
    now_ = now;
    timers_.fireDue();
  }
  /// The end of a bounded input: the final watermark, then endInput.
  void finish() {
    watermark(runtime::Watermark::kMaxTimestamp);
    op_->endInput();
  }
  /// A checkpoint as the task takes it: the operator hooks, then the backends' snapshot.
  OperatorSubtaskState snapshot() {
    op_->prepareSnapshotPreBarrier(1);
    op_->snapshotState(1);
    return state_->snapshot();
  }

  testing::CollectingOutput out;

 private:
  Configuration config_;
  runtime::OperatorMetrics metrics_;
  int64_t now_;
  runtime::ProcessingTimeService timers_{[this] { return now_; }};
  std::unique_ptr<StreamOperatorStateContext> state_;
  std::unique_ptr<runtime::StreamOperator> op_;
};

// An input step: a record with its timestamp, or a watermark.
template <typename T>
struct Step {
  std::optional<T> value;
  int64_t ts = 0;
};
template <typename T>
Step<T> rec(T v, int64_t ts) {
  return Step<T>{std::move(v), ts};
}
template <typename T>
Step<T> wm(int64_t ts) {
  return Step<T>{std::nullopt, ts};
}

template <typename T>
void feed(Subtask& s, const std::vector<Step<T>>& steps, size_t from, size_t to) {
  for (size_t i = from; i < to; ++i) {
    if (steps[i].value) s.record(*steps[i].value, steps[i].ts);
    else s.watermark(steps[i].ts);
  }
}

template <typename Out>
std::vector<std::pair<Out, int64_t>> concat(std::vector<std::pair<Out, int64_t>> a,
                                            const std::vector<std::pair<Out, int64_t>>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}
template <typename Out, typename KeyOf>
std::vector<std::pair<Out, int64_t>> ownedBy(const std::vector<std::pair<Out, int64_t>>& v, int subtask, KeyOf key_of) {
  std::vector<std::pair<Out, int64_t>> out;
  for (const auto& r : v) {
    if (ownerOf(key_of(r.first)) == subtask) out.push_back(r);
  }
  return out;
}

// Runs `steps` uninterrupted, then cut at every step boundary: the first part into one subtask, its
// snapshot restored (a) into one fresh subtask over all key groups and (b) into two subtasks over half
// the key groups each, every record sent to the subtask owning its key and every watermark to both.
// The output before the cut followed by the output after it must be `expected` (per owning subtask in
// case (b), where the two subtasks' outputs have no order between them).
template <typename T, typename Out, typename S, typename KeyOfIn, typename KeyOfOut>
void checkEverySplit(const S& stream, const std::vector<Step<T>>& steps,
                     const std::vector<std::pair<Out, int64_t>>& expected, KeyOfIn key_of_in, KeyOfOut key_of_out) {
  const KeyGroupRange all = KeyGroupRange::of(0, kMaxParallelism - 1);
  {
    Subtask whole(stream, all, nullptr);
    feed(whole, steps, 0, steps.size());
    whole.finish();
    ASSERT_EQ(whole.out.records<Out>(), expected) << "uninterrupted run";
  }
  bool both_halves[2] = {false, false};
  for (const auto& s : steps) {
    if (s.value) both_halves[ownerOf(key_of_in(*s.value))] = true;
  }
  ASSERT_TRUE(both_halves[0] && both_halves[1]) << "the input's keys must fall into both halves";

  for (size_t cut = 0; cut <= steps.size(); ++cut) {
    SCOPED_TRACE("cut before step " + std::to_string(cut));
    std::vector<std::pair<Out, int64_t>> before;
    OperatorSubtaskState snap;
    {
      Subtask first(stream, all, nullptr);
      feed(first, steps, 0, cut);
      before = first.out.records<Out>();
      snap = first.snapshot();
    }
    {
      Subtask same(stream, all, &snap);
      feed(same, steps, cut, steps.size());
      same.finish();
      EXPECT_EQ(concat(before, same.out.records<Out>()), expected) << "restored into the same key groups";
    }
    {
      Subtask half0(stream, rangeOf(0), &snap);
      Subtask half1(stream, rangeOf(1), &snap);
      Subtask* halves[2] = {&half0, &half1};
      for (size_t i = cut; i < steps.size(); ++i) {
        if (steps[i].value) {
          halves[ownerOf(key_of_in(*steps[i].value))]->record(*steps[i].value, steps[i].ts);
        } else {
          half0.watermark(steps[i].ts);
          half1.watermark(steps[i].ts);
        }
      }
      half0.finish();
      half1.finish();
      for (int h = 0; h < 2; ++h) {
        EXPECT_EQ(concat(ownedBy(before, h, key_of_out), halves[h]->out.records<Out>()), ownedBy(expected, h, key_of_out))
            << "rescaled: subtask " << h << " of 2";
      }
    }
  }
}

TEST(StateCheckpointTest, KeyedReduceContinuesAfterRestore) {
  auto env = testing::makeEnv(1);
  auto stream = env.fromElements(P{"x", 0})
                    .keyBy([](const P& p) { return p.first; })
                    .reduce([](const P& a, const P& b) { return P{a.first, a.second + b.second}; });
  const std::vector<Step<P>> steps = {rec(P{"a", 1}, 10), rec(P{"b", 10}, 20), rec(P{"a", 2}, 30),
                                      rec(P{"c", 100}, 40), rec(P{"b", 20}, 50), rec(P{"a", 3}, 60)};
  // Running sums per key, each with its record's timestamp: a 1, 3, 6; b 10, 30; c 100.
  const std::vector<std::pair<P, int64_t>> expected = {{{"a", 1}, 10}, {{"b", 10}, 20}, {{"a", 3}, 30},
                                                       {{"c", 100}, 40}, {{"b", 30}, 50}, {{"a", 6}, 60}};
  auto key = [](const P& p) { return p.first; };
  checkEverySplit(stream, steps, expected, key, key);
}

using Summary = std::tuple<std::string, int64_t, int64_t>;  // (key, count, sum of the timestamps seen)

// Flink's CountWithTimeout with keyed state of three kinds: a count (ValueState), the timestamps seen
// (ListState) and the last timestamp (ValueState); emits (key, count, sum of timestamps) when a key saw
// nothing for 10 ms of event time.
struct CountWithTimeout : KeyedProcessFunction<std::string, P, Summary> {
  ValueState<int64_t>* count = nullptr;
  ValueState<int64_t>* last = nullptr;
  ListState<int64_t>* seen = nullptr;
  void open() override {
    count = &getRuntimeContext().getState(ValueStateDescriptor<int64_t>("count"));
    last = &getRuntimeContext().getState(ValueStateDescriptor<int64_t>("last"));
    seen = &getRuntimeContext().getListState(ListStateDescriptor<int64_t>("seen"));
  }
  void processElement(const P& v, Context& ctx, Collector<Summary>&) override {
    EXPECT_EQ(ctx.getCurrentKey(), v.first);
    count->update(count->value().value_or(0) + 1);
    last->update(*ctx.timestamp());
    seen->add(*ctx.timestamp());
    ctx.timerService().registerEventTimeTimer(*ctx.timestamp() + 10);
  }
  void onTimer(int64_t timestamp, OnTimerContext& ctx, Collector<Summary>& out) override {
    if (timestamp != *last->value() + 10) return;
    int64_t sum = 0;
    for (int64_t ts : seen->get()) sum += ts;
    out.collect(Summary{ctx.getCurrentKey(), *count->value(), sum});
  }
};

TEST(StateCheckpointTest, KeyedProcessStateAndEventTimeTimersContinueAfterRestore) {
  auto env = testing::makeEnv(1);
  auto stream = env.fromElements(P{"x", 0}).keyBy([](const P& p) { return p.first; }).process(CountWithTimeout{});
  const std::vector<Step<P>> steps = {rec(P{"a", 0}, 1),  rec(P{"b", 0}, 3),  wm<P>(5),          rec(P{"a", 0}, 8),
                                      wm<P>(14),          rec(P{"c", 0}, 20), rec(P{"b", 0}, 21), wm<P>(100)};
  // Timers: a 11, b 13, a 18, c 30, b 31. Watermark 14 fires a@11 (a's last is 8: nothing) and b@13
  // (b's last is 3: (b, 1, 3)). Watermark 100 fires a@18 -> (a, 2, 1+8), c@30 -> (c, 1, 20),
  // b@31 -> (b, 2, 3+21). Each result carries its timer's time.
  const std::vector<std::pair<Summary, int64_t>> expected = {
      {{"b", 1, 3}, 13}, {{"a", 2, 9}, 18}, {{"c", 1, 20}, 30}, {{"b", 2, 24}, 31}};
  checkEverySplit(stream, steps, expected, [](const P& p) { return p.first; },
                  [](const Summary& s) { return std::get<0>(s); });
}

using CountMax = std::pair<int64_t, int64_t>;                   // (count, max)
using WindowResult = std::tuple<std::string, int64_t, int64_t, int64_t>;  // (key, window start, count, max)

struct CountMaxAggregate : AggregateFunction<P, CountMax, CountMax> {
  CountMax createAccumulator() override { return {0, INT64_MIN}; }
  CountMax add(const P& v, CountMax acc) override { return {acc.first + 1, std::max(acc.second, v.second)}; }
  CountMax getResult(const CountMax& acc) override { return acc; }
  CountMax merge(CountMax a, CountMax b) override { return {a.first + b.first, std::max(a.second, b.second)}; }
};
struct WithKeyAndWindow : ProcessWindowFunction<CountMax, WindowResult, std::string> {
  void process(const std::string& key, Context& ctx, const std::vector<CountMax>& in,
               Collector<WindowResult>& out) override {
    out.collect(WindowResult{key, ctx.window().getStart(), in[0].first, in[0].second});
  }
};

TEST(StateCheckpointTest, TumblingWindowContentsAndTimersContinueAfterRestore) {
  auto env = testing::makeEnv(1);
  auto stream = env.fromElements(P{"x", 0})
                    .keyBy([](const P& p) { return p.first; })
                    .window(TumblingEventTimeWindows::of(10))
                    .aggregate(CountMaxAggregate{}, WithKeyAndWindow{});
  const std::vector<Step<P>> steps = {rec(P{"a", 5}, 1),  rec(P{"b", 7}, 2),  rec(P{"a", 3}, 4),  wm<P>(9),
                                      rec(P{"a", 1}, 12), rec(P{"c", 9}, 15), rec(P{"a", 4}, 19), wm<P>(25),
                                      rec(P{"b", 2}, 27)};
  // [0, 10) fires at watermark 9: a (5, 3) -> count 2, max 5; b (7) -> 1, 7. [10, 20) at watermark 25:
  // a (1, 4) -> 2, 4; c (9) -> 1, 9. [20, 30) at the final watermark: b (2) -> 1, 2. Results carry the
  // window's max timestamp; windows ending together fire in key order.
  const std::vector<std::pair<WindowResult, int64_t>> expected = {{{"a", 0, 2, 5}, 9},
                                                                  {{"b", 0, 1, 7}, 9},
                                                                  {{"a", 10, 2, 4}, 19},
                                                                  {{"c", 10, 1, 9}, 19},
                                                                  {{"b", 20, 1, 2}, 29}};
  checkEverySplit(stream, steps, expected, [](const P& p) { return p.first; },
                  [](const WindowResult& r) { return std::get<0>(r); });
}

// MapState, ReducingState and AggregatingState through the RuntimeContext, across a restore.
struct AllStates : KeyedProcessFunction<std::string, P, std::string> {
  MapState<int64_t, int64_t>* per_value = nullptr;  // value -> how often seen
  ReducingState<int64_t>* total = nullptr;
  AggregatingState<P, CountMax>* count_max = nullptr;
  void open() override {
    auto& rc = getRuntimeContext();
    per_value = &rc.getMapState(MapStateDescriptor<int64_t, int64_t>("per-value"));
    total = &rc.getReducingState(
        ReducingStateDescriptor<int64_t>("total", [](const int64_t& a, const int64_t& b) { return a + b; }));
    count_max = &rc.getAggregatingState(AggregatingStateDescriptor<P, CountMax, CountMax>("count-max", CountMaxAggregate{}));
  }
  void processElement(const P& v, Context&, Collector<std::string>& out) override {
    per_value->put(v.second, per_value->get(v.second).value_or(0) + 1);
    total->add(v.second);
    count_max->add(v);
    const CountMax cm = *count_max->get();
    out.collect(fmt::format("{}: seen({})={} distinct={} total={} count={} max={}", v.first, v.second,
                            *per_value->get(v.second), per_value->keys().size(), *total->get(), cm.first, cm.second));
  }
};

TEST(StateCheckpointTest, MapReducingAndAggregatingStateContinueAfterRestore) {
  auto env = testing::makeEnv(1);
  auto stream = env.fromElements(P{"x", 0}).keyBy([](const P& p) { return p.first; }).process(AllStates{});
  const std::vector<Step<P>> steps = {rec(P{"a", 4}, 1), rec(P{"c", 2}, 2), rec(P{"a", 4}, 3),
                                      rec(P{"a", 1}, 4), rec(P{"c", 5}, 5)};
  const std::vector<std::pair<std::string, int64_t>> expected = {
      {"a: seen(4)=1 distinct=1 total=4 count=1 max=4", 1},
      {"c: seen(2)=1 distinct=1 total=2 count=1 max=2", 2},
      {"a: seen(4)=2 distinct=1 total=8 count=2 max=4", 3},
      {"a: seen(1)=1 distinct=2 total=9 count=3 max=4", 4},
      {"c: seen(5)=1 distinct=2 total=7 count=2 max=5", 5}};
  checkEverySplit(stream, steps, expected, [](const P& p) { return p.first; },
                  [](const std::string& s) { return s.substr(0, 1); });
}

// Emits "key@time" when a processing-time timer 10 ms after the element fires.
struct ProcessingTimeout : KeyedProcessFunction<std::string, P, std::string> {
  void processElement(const P&, Context& ctx, Collector<std::string>&) override {
    ctx.timerService().registerProcessingTimeTimer(ctx.timerService().currentProcessingTime() + 10);
  }
  void onTimer(int64_t timestamp, OnTimerContext& ctx, Collector<std::string>& out) override {
    out.collect(ctx.getCurrentKey() + "@" + std::to_string(timestamp));
  }
};

TEST(StateCheckpointTest, RestoredProcessingTimersFireOnceDue) {
  auto env = testing::makeEnv(1);
  auto stream = env.fromElements(P{"x", 0}).keyBy([](const P& p) { return p.first; }).process(ProcessingTimeout{});
  const KeyGroupRange all = KeyGroupRange::of(0, kMaxParallelism - 1);
  OperatorSubtaskState snap;
  {
    Subtask first(stream, all, nullptr, /*now=*/100);
    first.record(P{"a", 0}, 0);  // timer at 110
    first.setProcessingTime(105);
    first.record(P{"b", 0}, 0);  // timer at 115
    snap = first.snapshot();
    EXPECT_TRUE(first.out.values<std::string>().empty());
  }
  // Restored at 112: a's timer (110) is already due and fires at the first timer round; b's at 115.
  Subtask restored(stream, all, &snap, /*now=*/112);
  EXPECT_TRUE(restored.out.values<std::string>().empty());
  restored.setProcessingTime(112);
  EXPECT_EQ(restored.out.values<std::string>(), (std::vector<std::string>{"a@110"}));
  restored.setProcessingTime(114);
  EXPECT_EQ(restored.out.values<std::string>(), (std::vector<std::string>{"a@110"}));
  restored.setProcessingTime(115);
  EXPECT_EQ(restored.out.values<std::string>(), (std::vector<std::string>{"a@110", "b@115"}));
  // FLINK-14231: processing-time timers pending at the end of input are not fired.
  restored.record(P{"c", 0}, 0);  // timer at 125
  restored.finish();
  EXPECT_EQ(restored.out.values<std::string>(), (std::vector<std::string>{"a@110", "b@115"}));
}

struct NoSerializer {
  int64_t n = 0;
};
struct CountNoSerializer : AggregateFunction<P, NoSerializer, int64_t> {
  NoSerializer createAccumulator() override { return {}; }
  NoSerializer add(const P&, NoSerializer acc) override { return {acc.n + 1}; }
  int64_t getResult(const NoSerializer& acc) override { return acc.n; }
  NoSerializer merge(NoSerializer a, NoSerializer b) override { return {a.n + b.n}; }
};

TEST(StateCheckpointTest, AnAccumulatorWithoutSerializerWorksUntilItIsCheckpointed) {
  auto env = testing::makeEnv(1);
  auto stream = env.fromElements(P{"x", 0})
                    .keyBy([](const P& p) { return p.first; })
                    .window(TumblingEventTimeWindows::of(10))
                    .aggregate(CountNoSerializer{});
  Subtask s(stream, KeyGroupRange::of(0, kMaxParallelism - 1), nullptr);
  s.snapshot();  // nothing held yet: nothing to serialize
  s.record(P{"a", 0}, 1);
  try {
    s.snapshot();
    ADD_FAILURE() << "the snapshot of an accumulator without TypeSerializer succeeded";
  } catch (const UserError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("NoSerializer"), std::string::npos) << msg;
    EXPECT_NE(msg.find("SLUICE_TYPE"), std::string::npos) << msg;
  }
  s.watermark(9);  // the window still fires: count 1
  EXPECT_EQ(s.out.values<int64_t>(), (std::vector<int64_t>{1}));
}

TEST(StateCheckpointTest, AStateNameTakenByAnotherTypeIsAUserError) {
  struct TwoTypes : KeyedProcessFunction<std::string, P, P> {
    void open() override {
      getRuntimeContext().getState(ValueStateDescriptor<int64_t>("s"));
      getRuntimeContext().getState(ValueStateDescriptor<std::string>("s"));
    }
    void processElement(const P&, Context&, Collector<P>&) override {}
  };
  auto env = testing::makeEnv(1);
  auto stream = env.fromElements(P{"x", 0}).keyBy([](const P& p) { return p.first; }).process(TwoTypes{});
  EXPECT_THROW(Subtask(stream, KeyGroupRange::of(0, kMaxParallelism - 1), nullptr), UserError);
}

}  // namespace
}  // namespace sluice::api
