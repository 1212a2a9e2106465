// Side outputs, union, connect / co-map / co-process (keyed too), partitioning strategies and the plan.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <utility>

#include "harness.h"
#include "test_util.h"

namespace sluice::api {
namespace {

using testing::makeEnv;
using testing::sorted;
using P = std::pair<std::string, int64_t>;

struct SplitOdd : ProcessFunction<int64_t, int64_t> {
  OutputTag<std::string> odd{"odd"};
  void processElement(const int64_t& v, Context& ctx, Collector<int64_t>& out) override {
    if (v % 2 == 0) out.collect(v * 10);
    else ctx.output(odd, "odd-" + std::to_string(v));
  }
};

class StreamOpsTest : public ::testing::TestWithParam<int> {};

TEST_P(StreamOpsTest, SideOutputsGoOnlyToTheirConsumers) {
  auto env = makeEnv(GetParam());
  auto main = env.fromSequence(1, 6).process(SplitOdd{});
  auto evens = main.collect();
  auto odds = main.getSideOutput(OutputTag<std::string>("odd")).map([](const std::string& s) { return s + "!"; }).collect();
  env.execute();
  // evens 2, 4, 6 times 10; odds 1, 3, 5 on the side.
  EXPECT_EQ(sorted(evens->values()), (std::vector<int64_t>{20, 40, 60}));
  EXPECT_EQ(sorted(odds->values()), (std::vector<std::string>{"odd-1!", "odd-3!", "odd-5!"}));
}

TEST_P(StreamOpsTest, SideOutputThroughTheNetwork) {
  auto env = makeEnv(GetParam());
  auto main = env.fromSequence(1, 6).process(SplitOdd{});
  auto odds = main.getSideOutput(OutputTag<std::string>("odd")).rebalance().map([](const std::string& s) { return s; });
  odds.setParallelism(3);
  auto got = odds.collect();
  env.execute();
  EXPECT_EQ(sorted(got->values()), (std::vector<std::string>{"odd-1", "odd-3", "odd-5"}));
}

TEST_P(StreamOpsTest, UnionMergesStreams) {
  auto env = makeEnv(GetParam());
  auto a = env.fromElements<int64_t>(1, 2);
  auto b = env.fromSequence(10, 12);
  auto c = env.fromElements<int64_t>(100);
  auto out = a.union_(b, c).map([](int64_t x) { return x + 1; }).executeAndCollect();
  EXPECT_EQ(sorted(out), (std::vector<int64_t>{2, 3, 11, 12, 13, 101}));
}

TEST_P(StreamOpsTest, ConnectCoMapWithTwoTypes) {
  auto env = makeEnv(GetParam());
  auto numbers = env.fromSequence(1, 3);
  auto words = env.fromElements(std::string("x"), std::string("yy"));
  auto out = numbers.connect(words)
                 .map([](const int64_t& n) { return fmt::format("n{}", n); },
                      [](const std::string& w) { return fmt::format("w{}", w.size()); })
                 .executeAndCollect();
  EXPECT_EQ(sorted(out), (std::vector<std::string>{"n1", "n2", "n3", "w1", "w2"}));
}

struct TagInputs : CoProcessFunction<int64_t, std::string, std::string> {
  void processElement1(const int64_t& v, Context&, Collector<std::string>& out) override {
    out.collect("1:" + std::to_string(v));
  }
  void processElement2(const std::string& v, Context&, Collector<std::string>& out) override { out.collect("2:" + v); }
};

TEST_P(StreamOpsTest, ConnectCoProcess) {
  auto env = makeEnv(GetParam());
  auto out = env.fromSequence(1, 2).connect(env.fromElements(std::string("a"))).process(TagInputs{}).executeAndCollect();
  EXPECT_EQ(sorted(out), (std::vector<std::string>{"1:1", "1:2", "2:a"}));
}

// Joins prices (input 1) with names (input 2) by id, whichever arrives first, in shared keyed state.
struct Join : KeyedCoProcessFunction<int64_t, P, P, std::string> {
  ValueState<std::string>* name = nullptr;
  ValueState<int64_t>* price = nullptr;
  void open() override {
    name = &getRuntimeContext().getState(ValueStateDescriptor<std::string>("name"));
    price = &getRuntimeContext().getState(ValueStateDescriptor<int64_t>("price"));
  }
  void processElement1(const P& p, Context& ctx, Collector<std::string>& out) override {
    if (auto n = name->value()) out.collect(*n + "=" + std::to_string(p.second) + "#" + std::to_string(ctx.getCurrentKey()));
    else price->update(p.second);
  }
  void processElement2(const P& n, Context& ctx, Collector<std::string>& out) override {
    if (auto p = price->value()) out.collect(n.first + "=" + std::to_string(*p) + "#" + std::to_string(ctx.getCurrentKey()));
    else name->update(n.first);
  }
};

TEST_P(StreamOpsTest, KeyedConnectSharesStateBetweenInputs) {
  auto env = makeEnv(GetParam());
  // prices: (id as string, price); names: (name, id)
  auto prices = env.fromElements(P{"1", 100}, P{"2", 200}, P{"3", 300});
  auto names = env.fromElements(P{"apple", 2}, P{"pear", 1}, P{"fig", 9});
  auto out = prices.connect(names)
                 .keyBy([](const P& p) { return static_cast<int64_t>(std::stoll(p.first)); }, [](const P& n) { return n.second; })
                 .process(Join{})
                 .executeAndCollect();
  // ids 1 and 2 meet; 3 (no name) and 9 (no price) do not.
  EXPECT_EQ(sorted(out), (std::vector<std::string>{"apple=200#2", "pear=100#1"}));
}

INSTANTIATE_TEST_SUITE_P(Parallelism, StreamOpsTest, ::testing::Values(1, 2, 4));

// (value, subtask that mapped it)
struct Where : MapFunction<int64_t, std::pair<int64_t, int>> {
  std::pair<int64_t, int> map(const int64_t& v) override { return {v, getRuntimeContext().getIndexOfThisSubtask()}; }
};

std::map<int, std::vector<int64_t>> bySubtask(const std::vector<std::pair<int64_t, int>>& v) {
  std::map<int, std::vector<int64_t>> m;
  for (const auto& [x, s] : sorted(v)) m[s].push_back(x);
  return m;
}

TEST(PartitionTest, RebalanceIsRoundRobinPerRecord) {
  auto env = makeEnv(3);
  auto out = env.fromElements<int64_t>(0, 1, 2, 3, 4, 5).rebalance().map(Where{}).executeAndCollect();
  // The single source subtask 0 starts at channel 0: 0,3 -> 0; 1,4 -> 1; 2,5 -> 2.
  EXPECT_EQ(bySubtask(out), (std::map<int, std::vector<int64_t>>{{0, {0, 3}}, {1, {1, 4}}, {2, {2, 5}}}));
}

TEST(PartitionTest, BroadcastReachesEverySubtask) {
  auto env = makeEnv(3);
  auto out = env.fromElements<int64_t>(7, 8).broadcast().map(Where{}).executeAndCollect();
  EXPECT_EQ(bySubtask(out), (std::map<int, std::vector<int64_t>>{{0, {7, 8}}, {1, {7, 8}}, {2, {7, 8}}}));
}

TEST(PartitionTest, GlobalSendsEverythingToSubtaskZero) {
  auto env = makeEnv(3);
  auto out = env.fromSequence(1, 9).global().map(Where{}).executeAndCollect();
  EXPECT_EQ(bySubtask(out), (std::map<int, std::vector<int64_t>>{{0, {1, 2, 3, 4, 5, 6, 7, 8, 9}}}));
}

TEST(PartitionTest, PartitionCustomUsesTheUserFunction) {
  auto env = makeEnv(3);
  auto out = env.fromSequence(1, 7)
                 .partitionCustom([](int64_t key, int n) { return static_cast<int>(key % n); },
                                  [](int64_t v) { return v * 10; })
                 .map(Where{})
                 .executeAndCollect();
  // key = 10v, subtask = 10v % 3 = v % 3: {3,6} -> 0, {1,4,7} -> 1, {2,5} -> 2.
  EXPECT_EQ(bySubtask(out), (std::map<int, std::vector<int64_t>>{{0, {3, 6}}, {1, {1, 4, 7}}, {2, {2, 5}}}));
}

TEST(PartitionTest, PartitionCustomOutOfRangeFails) {
  auto env = makeEnv(2);
  env.fromSequence(1, 3).partitionCustom([](int64_t, int n) { return n; }, [](int64_t v) { return v; }).map(Where{}).collect();
  EXPECT_THROW(env.execute(), UserError);
}

TEST(PartitionTest, KeyByFollowsKeyGroups) {
  auto env = makeEnv(4);
  env.setMaxParallelism(128);
  auto out = env.fromSequence(1, 200).keyBy([](int64_t v) { return v % 10; }).map(Where{}).executeAndCollect();
  ASSERT_EQ(out.size(), 200u);
  for (const auto& [v, s] : out) {
    // The owner of key k: operatorIndexForKeyGroup(128, 4, murmur(keyHash(k)) % 128).
    const int32_t kg = assignToKeyGroup(runtime::keyHash(v % 10), 128);
    EXPECT_EQ(s, operatorIndexForKeyGroup(128, 4, kg)) << "value " << v;
  }
}

TEST(PartitionTest, ShuffleKeepsEveryRecord) {
  auto env = makeEnv(3);
  auto out = env.fromSequence(1, 300).shuffle().map(Where{}).executeAndCollect();
  std::vector<int64_t> values;
  std::set<int> subtasks;
  for (const auto& [v, s] : out) {
    values.push_back(v);
    subtasks.insert(s);
  }
  std::vector<int64_t> want;
  for (int64_t i = 1; i <= 300; ++i) want.push_back(i);
  EXPECT_EQ(sorted(values), want);
  EXPECT_EQ(subtasks, (std::set<int>{0, 1, 2}));  // 300 random picks all land on 3 targets
}

TEST(PartitionTest, ForwardAndRescaleArePointwise) {
  auto env = makeEnv(2);
  auto tagged = env.fromSequence(1, 40).map(Where{});  // (value, upstream subtask), chained to the source
  auto forwarded = tagged.forward()
                       .map([](const std::pair<int64_t, int>& p) { return p; })
                       .disableChaining();
  struct Pair : MapFunction<std::pair<int64_t, int>, std::pair<int, int>> {
    std::pair<int, int> map(const std::pair<int64_t, int>& p) override {
      return {p.second, getRuntimeContext().getIndexOfThisSubtask()};
    }
  };
  auto fwd = forwarded.map(Pair{}).disableChaining().collect();
  auto rescaled = tagged.rescale().map(Pair{});
  rescaled.setParallelism(4);
  auto resc = rescaled.collect();
  env.execute();
  for (const auto& [up, down] : fwd->values()) EXPECT_EQ(up, down);
  // Rescale 2 -> 4: producer 0 feeds consumers {0, 1}, producer 1 feeds {2, 3}.
  std::set<std::pair<int, int>> links;
  for (const auto& l : resc->values()) links.insert(l);
  for (const auto& [up, down] : links) EXPECT_EQ(down / 2, up);
  EXPECT_EQ(resc->values().size(), 40u);
}

TEST(PlanTest, ChainingShowsInTheExecutionPlan) {
  auto env = makeEnv(2);
  env.fromSequence(1, 10)
      .map([](int64_t x) { return x; })
      .filter([](int64_t x) { return x > 0; })
      .keyBy([](int64_t x) { return x % 3; })
      .reduce([](int64_t a, int64_t b) { return a + b; })
      .print();
  const std::string plan = env.getExecutionPlan("plan");
  // Source -> Map -> Filter chain (forward, same parallelism); the HASH exchange starts a new vertex.
  EXPECT_NE(plan.find("\"Source: Sequence Source -> Map -> Filter\""), std::string::npos) << plan;
  EXPECT_NE(plan.find("\"Keyed Reduce -> Sink: Print to Std. Out\""), std::string::npos) << plan;
  EXPECT_NE(plan.find("\"HASH\""), std::string::npos) << plan;
}

TEST(PlanTest, DisableChainingAndStartNewChain) {
  auto env = makeEnv(1);
  auto m = env.fromSequence(1, 10).map([](int64_t x) { return x; });
  m.name("m1");
  auto n = m.map([](int64_t x) { return x; }).name("m2").startNewChain();
  n.filter([](int64_t) { return true; }).name("f").disableChaining().print();
  const std::string plan = env.getExecutionPlan();
  // m2 starts a new chain; f is alone; the sink chains to nothing after f (NEVER).
  EXPECT_NE(plan.find("\"Source: Sequence Source -> m1\""), std::string::npos) << plan;
  EXPECT_NE(plan.find("\"m2\""), std::string::npos) << plan;
  EXPECT_NE(plan.find("\"f\""), std::string::npos) << plan;
  EXPECT_NE(plan.find("\"Sink: Print to Std. Out\""), std::string::npos) << plan;

  auto env2 = makeEnv(1);
  env2.disableOperatorChaining();
  env2.fromSequence(1, 10).map([](int64_t x) { return x; }).print();
  const std::string plan2 = env2.getExecutionPlan();
  EXPECT_NE(plan2.find("\"Source: Sequence Source\""), std::string::npos) << plan2;
  EXPECT_NE(plan2.find("\"Map\""), std::string::npos) << plan2;
}

TEST(PlanTest, OperatorSettingsAreValidated) {
  auto env = makeEnv(1);
  auto elements = env.fromElements<int64_t>(1, 2);
  EXPECT_THROW(elements.setParallelism(2), UserError);  // non-parallel source
  EXPECT_THROW(elements.rebalance().name("x"), UserError);  // not an operator
  EXPECT_THROW(env.fromSequence(3, 1), UserError);
  EXPECT_THROW(env.setParallelism(0), ConfigError);
}

TEST(JobClientTest, ExecuteAsyncAndCancel) {
  // An unbounded source: cancel ends the job.
  struct Forever : Source<int64_t, int> {
    bool isBounded() const override { return false; }
    std::unique_ptr<SplitEnumerator<int>> createEnumerator(int) const override {
      struct E : SplitEnumerator<int> {
        bool given = false;
        std::optional<int> handleSplitRequest(int) override {
          if (given) return std::nullopt;
          given = true;
          return 0;
        }
      };
      return std::make_unique<E>();
    }
    std::unique_ptr<SourceReader<int64_t, int>> createReader(const SourceReaderContext&) const override {
      struct R : SourceReader<int64_t, int> {
        int64_t n = 0;
        void addSplit(int) override {}
        InputStatus pollNext(ReaderOutput<int64_t>& out) override {
          out.collect(n++);
          return InputStatus::kMoreAvailable;
        }
      };
      return std::make_unique<R>();
    }
  };
  auto env = makeEnv(1);
  auto seen = env.fromSource(std::make_shared<Forever>(), WatermarkStrategy<int64_t>::noWatermarks(), "forever")
                  .filter([](int64_t v) { return v % 1000 == 0; })
                  .collect();
  auto client = env.executeAsync("forever");
  EXPECT_FALSE(client->waitFor(std::chrono::milliseconds(20)));
  client->cancel();
  const JobExecutionResult r = client->getJobExecutionResult();
  EXPECT_TRUE(r.wasCancelled());
  EXPECT_TRUE(client->isDone());
}

}  // namespace
}  // namespace sluice::api

namespace sluice::api {
namespace {

TEST(PlanTest, SlotSharingGroupAndBatchExchanges) {
  auto env = testing::makeEnv(2);
  env.fromSequence(1, 10)
      .map([](int64_t x) { return x; })
      .slotSharingGroup("maps")
      .uid("the-map")
      .keyBy([](int64_t x) { return x % 2; })
      .sum()
      .print();
  const std::string plan = env.getExecutionPlan();
  // The map leaves the source's "default" group, so it cannot chain to the source.
  EXPECT_NE(plan.find("\"slot_sharing_group\": \"maps\""), std::string::npos) << plan;
  EXPECT_NE(plan.find("\"Source: Sequence Source\""), std::string::npos) << plan;
  EXPECT_NE(plan.find("\"exchange\": \"pipelined_bounded\""), std::string::npos) << plan;

  env.setRuntimeMode(RuntimeExecutionMode::BATCH);
  EXPECT_NE(env.getExecutionPlan().find("\"exchange\": \"blocking\""), std::string::npos);
  // A BATCH run gives the final sums: odd 1+3+5+7+9 = 25, even 2+4+6+8+10 = 30.
  auto out = env.fromSequence(1, 10).keyBy([](int64_t x) { return x % 2; }).sum().collect();
  env.execute();
  EXPECT_EQ(testing::sorted(out->values()), (std::vector<int64_t>{25, 30}));
}

TEST(WindowBatchTest, EventTimeWindowsInBatchMode) {
  auto env = testing::makeEnv(2);
  env.setRuntimeMode(RuntimeExecutionMode::BATCH);
  // 1..20 with timestamp = value, windows of 5: [0,5) 1+2+3+4 = 10, [5,10) 35, [10,15) 60, [15,20) 85, [20,25) 20.
  auto out = env.fromSequence(1, 20)
                 .assignTimestampsAndWatermarks(WatermarkStrategy<int64_t>::forMonotonousTimestamps().withTimestampAssigner(
                     [](int64_t v) { return v; }))
                 .keyBy([](int64_t) { return 0; })
                 .window(TumblingEventTimeWindows::of(5))
                 .reduce([](int64_t a, int64_t b) { return a + b; })
                 .executeAndCollect();
  EXPECT_EQ(testing::sorted(out), (std::vector<int64_t>{10, 20, 35, 60, 85}));
}

}  // namespace
}  // namespace sluice::api
