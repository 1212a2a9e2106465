// map / filter / flatMap / keyBy + reduce and sum / print / execute, at several parallelisms.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <utility>

#include "test_util.h"

namespace sluice::api {
namespace {

using testing::makeEnv;
using testing::sorted;

class BasicTest : public ::testing::TestWithParam<int> {};

TEST_P(BasicTest, MapFilterOnSequence) {
  auto env = makeEnv(GetParam());
  // 1..10 -> x*x -> keep even: 4, 16, 36, 64, 100.
  auto out = env.fromSequence(1, 10).map([](int64_t x) { return x * x; }).filter([](int64_t x) { return x % 2 == 0; });
  EXPECT_EQ(sorted(out.executeAndCollect()), (std::vector<int64_t>{4, 16, 36, 64, 100}));
}

TEST_P(BasicTest, FlatMapSplitsWords) {
  auto env = makeEnv(GetParam());
  auto words = env.fromElements(std::string("a b"), std::string("c"), std::string(""))
                   .flatMap<std::string>([](const std::string& line, Collector<std::string>& out) {
                     size_t start = 0;
                     while (start < line.size()) {
                       size_t end = line.find(' ', start);
                       if (end == std::string::npos) end = line.size();
                       out.collect(line.substr(start, end - start));
                       start = end + 1;
                     }
                   });
  EXPECT_EQ(sorted(words.executeAndCollect()), (std::vector<std::string>{"a", "b", "c"}));
}

TEST_P(BasicTest, KeyedReduceEmitsRunningValues) {
  auto env = makeEnv(GetParam());
  using P = std::pair<std::string, int64_t>;
  auto out = env.fromElements(P{"a", 1}, P{"b", 10}, P{"a", 2}, P{"a", 3}, P{"b", 20})
                 .keyBy([](const P& p) { return p.first; })
                 .reduce([](const P& x, const P& y) { return P{x.first, x.second + y.second}; });
  // STREAMING: one update per record. a: 1, 1+2=3, 3+3=6; b: 10, 10+20=30.
  EXPECT_EQ(sorted(out.executeAndCollect()), (std::vector<P>{{"a", 1}, {"a", 3}, {"a", 6}, {"b", 10}, {"b", 30}}));
}

TEST_P(BasicTest, KeyedSumInBatchModeEmitsFinalValues) {
  auto env = makeEnv(GetParam());
  env.setRuntimeMode(RuntimeExecutionMode::BATCH);
  using P = std::pair<std::string, int64_t>;
  // Keys k0..k4 for 1..100 by x % 5; sum of x per key: k0: 5+10+...+100 = 5*(1+..+20) = 1050,
  // k1: 1+6+...+96 = 20*1 + 5*(0+..+19) = 20 + 950 = 970, k2: 990, k3: 1010, k4: 1030.
  auto out = env.fromSequence(1, 100)
                 .map([](int64_t x) { return P{"k" + std::to_string(x % 5), x}; })
                 .keyBy([](const P& p) { return p.first; })
                 .sum(&P::second);
  EXPECT_EQ(sorted(out.executeAndCollect()),
            (std::vector<P>{{"k0", 1050}, {"k1", 970}, {"k2", 990}, {"k3", 1010}, {"k4", 1030}}));
}

TEST_P(BasicTest, MinMaxByField) {
  auto env = makeEnv(GetParam());
  env.setRuntimeMode(RuntimeExecutionMode::BATCH);
  using P = std::pair<int64_t, int64_t>;
  auto src = env.fromElements(P{1, 5}, P{1, 3}, P{2, 7}, P{1, 9}, P{2, 1});
  auto key = [](const P& p) { return p.first; };
  // key 1: values 5, 3, 9 -> min 3, max 9; key 2: 7, 1 -> min 1, max 7.
  auto mins = src.keyBy(key).min(&P::second).collect();
  auto maxs = src.keyBy(key).max(&P::second).collect();
  env.execute("min-max");
  EXPECT_EQ(sorted(mins->values()), (std::vector<P>{{1, 3}, {2, 1}}));
  EXPECT_EQ(sorted(maxs->values()), (std::vector<P>{{1, 9}, {2, 7}}));
}

INSTANTIATE_TEST_SUITE_P(Parallelism, BasicTest, ::testing::Values(1, 2, 4));

TEST(BasicTest, KeyedSumOverTwoTaskManagers) {
  // Subtasks 1 and 3 run in one TaskManager, 2 and 4 in the other: the keyBy exchange crosses TCP with the
  // records serialized in network buffers.
  Configuration config;
  config.set("parallelism.default", "4");
  config.set("local.number-taskmanager", "2");
  StreamExecutionEnvironment env(std::move(config));
  using P = std::pair<std::string, int64_t>;
  auto out = env.fromSequence(1, 1000)
                 .map([](int64_t x) { return P{"k" + std::to_string(x % 5), x}; })
                 .keyBy([](const P& p) { return p.first; })
                 .sum(&P::second);
  const std::vector<P> updates = out.executeAndCollect();
  // STREAMING: one running sum per record; all values are positive, so a key's largest is its final sum.
  // k0: 5 * (1 + ... + 200) = 100500; k r (1..4): 200 r + 5 * (0 + ... + 199) = 200 r + 99500.
  EXPECT_EQ(updates.size(), 1000u);
  std::map<std::string, int64_t> last;
  for (const auto& [k, v] : updates) last[k] = std::max(last[k], v);
  EXPECT_EQ(last, (std::map<std::string, int64_t>{
                      {"k0", 100500}, {"k1", 99700}, {"k2", 99900}, {"k3", 100100}, {"k4", 100300}}));
}

TEST(BasicTest, PrintUsesFlinkPrefix) {
  auto env = makeEnv(2);
  // Parallelism 2 sink: every line starts with "1> " or "2> ".
  env.fromElements<int64_t>(7, 8, 9).rebalance().print().setParallelism(2);
  ::testing::internal::CaptureStdout();
  env.execute();
  const std::string text = ::testing::internal::GetCapturedStdout();
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  // Round robin from the single source subtask 0 starting at channel 0: 7 -> 1>, 8 -> 2>, 9 -> 1>.
  EXPECT_EQ(sorted(lines), (std::vector<std::string>{"1> 7", "1> 9", "2> 8"}));
}

TEST(BasicTest, PrintWithoutPrefixAtParallelismOne) {
  auto env = makeEnv(1);
  env.fromElements(std::pair<std::string, int>{"x", 1}).print();
  ::testing::internal::CaptureStdout();
  env.execute();
  // Flink's Tuple2 toString: "(x,1)", no prefix at parallelism 1.
  EXPECT_EQ(::testing::internal::GetCapturedStdout(), "(x,1)\n");
}

TEST(BasicTest, ExecuteWithoutSinkFails) {
  auto env = makeEnv(1);
  env.fromSequence(1, 3).map([](int64_t x) { return x; });
  EXPECT_THROW(env.execute(), UserError);
}

TEST(BasicTest, UserFunctionErrorFailsTheJob) {
  auto env = makeEnv(2);
  env.fromSequence(1, 100)
      .map([](int64_t x) -> int64_t {
        if (x == 42) throw InputError("bad record 42 at input.csv:42");
        return x;
      })
      .collect();
  try {
    env.execute();
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("input.csv:42"), std::string::npos);
  }
}

}  // namespace
}  // namespace sluice::api
