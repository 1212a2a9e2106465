// FLIP-327 for two-input keyed operators through the DataStream API: connect().keyBy().process() over
// sources whose watermarks lag the wall clock past pipeline.backlog.watermark-lag-threshold (backlog). With
// interval-during-backlog = 0 both inputs are sorted while either is backlog and merged by key (then
// timestamp, then the first input) when both have left it (MultiInputSortingDataInput's order). Expected
// sequences and sums are worked out in the test from the inputs, not from the engine.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "api/datastream.h"
#include "tagged_numbers.h"
#include "test_util.h"
#include "two_input_running_sum.h"

namespace sluice::api {
namespace {

using test_functions::A;
using test_functions::B;
using test_functions::Out;
using test_functions::RunningSum;

constexpr int64_t kKeys = 5;

int64_t wallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

struct Inputs {
  std::vector<A> a;  // value i, key i % kKeys
  std::vector<B> b;  // value 1000 + j, key j % kKeys
};

Inputs makeInputs(int64_t na, int64_t nb) {
  Inputs in;
  for (int64_t i = 0; i < na; ++i) in.a.emplace_back(i % kKeys, i);
  for (int64_t j = 0; j < nb; ++j) in.b.emplace_back(std::to_string(j % kKeys), 1000 + j);
  return in;
}

// `stamp_a(i)` / `stamp_b(j)`: the event time of record i of A / j of B. `one_source`: A and B are split
// off one source task (a single backlog status reaching both inputs, its attributes before any record),
// so both inputs are sorted in the same phase. Otherwise each has its own source, and one may enter and
// leave backlog before the other's attributes are read (each input is not backlog until they are).
template <typename SA, typename SB>
std::vector<Out> run(const Inputs& in, int parallelism, bool mixed_mode, SA stamp_a, SB stamp_b, bool one_source) {
  Configuration config;
  config.set("parallelism.default", std::to_string(parallelism));
  config.set("sluice.batch.size", "4");
  config.set("pipeline.backlog.watermark-lag-threshold", "1 min");
  if (mixed_mode) config.set("execution.checkpointing.interval-during-backlog", "0");
  StreamExecutionEnvironment env(std::move(config));
  const auto process = [](const DataStream<A>& a, const DataStream<B>& b) {
    return a.connect(b)
        .keyBy([](const A& r) { return r.first; }, [](const B& r) { return static_cast<int64_t>(std::stoll(r.first)); })
        .process(RunningSum{})
        .collect();
  };
  std::shared_ptr<CollectedValues<Out>> out;
  if (one_source) {
    using Tagged = std::tuple<int64_t, int64_t, int64_t, int64_t>;  // (timestamp, input, index, key)
    std::vector<Tagged> all;
    for (size_t i = 0; i < in.a.size(); ++i)
      all.emplace_back(stamp_a(in.a[i].second), 1, static_cast<int64_t>(i), in.a[i].first);
    for (size_t j = 0; j < in.b.size(); ++j)
      all.emplace_back(stamp_b(in.b[j].second - 1000), 2, static_cast<int64_t>(j), std::stoll(in.b[j].first));
    std::sort(all.begin(), all.end());  // monotonous timestamps
    auto tagged = env.fromCollection(all).assignTimestampsAndWatermarks(
        WatermarkStrategy<Tagged>::forMonotonousTimestamps().withTimestampAssigner(
            [](const Tagged& t) { return std::get<0>(t); }));
    tagged.setParallelism(1);
    auto a = tagged.filter([](const Tagged& t) { return std::get<1>(t) == 1; })
                 .map([&in](const Tagged& t) { return in.a[static_cast<size_t>(std::get<2>(t))]; });
    auto b = tagged.filter([](const Tagged& t) { return std::get<1>(t) == 2; })
                 .map([&in](const Tagged& t) { return in.b[static_cast<size_t>(std::get<2>(t))]; });
    out = process(a.setParallelism(1), b.setParallelism(1));
  } else {
    auto a = env.fromCollection(in.a).assignTimestampsAndWatermarks(
        WatermarkStrategy<A>::forMonotonousTimestamps().withTimestampAssigner([stamp_a](const A& r) {
          return stamp_a(r.second);
        }));
    auto b = env.fromCollection(in.b).assignTimestampsAndWatermarks(
        WatermarkStrategy<B>::forMonotonousTimestamps().withTimestampAssigner([stamp_b](const B& r) {
          return stamp_b(r.second - 1000);
        }));
    out = process(a, b);
  }
  env.execute();
  return out->values();
}

// Per subtask, its outputs in order.
std::map<int64_t, std::vector<Out>> bySubtask(const std::vector<Out>& out) {
  std::map<int64_t, std::vector<Out>> m;
  for (const Out& o : out) m[std::get<0>(o)].push_back(o);
  return m;
}

// Each key's records form one contiguous run.
bool groupedByKey(const std::vector<Out>& out) {
  std::vector<int64_t> runs;
  for (const Out& o : out) {
    if (runs.empty() || runs.back() != std::get<2>(o)) runs.push_back(std::get<2>(o));
  }
  return std::set<int64_t>(runs.begin(), runs.end()).size() == runs.size();
}

// The largest running sum per key (values are positive: the final total).
std::map<int64_t, int64_t> totals(const std::vector<Out>& out) {
  std::map<int64_t, int64_t> m;
  for (const Out& o : out) m[std::get<2>(o)] = std::max(m[std::get<2>(o)], std::get<4>(o));
  return m;
}

std::map<int64_t, int64_t> expectedTotals(const Inputs& in) {
  std::map<int64_t, int64_t> m;
  for (const A& r : in.a) m[r.first] += r.second;
  for (const B& r : in.b) m[std::stoll(r.first)] += r.second;
  return m;
}

TEST(TwoInputBacklogSortingTest, TwoBacklogInputsReachTheFunctionGroupedByKeyInTimestampOrder) {
  // Stamped in 1970: both inputs are backlog to their end, so everything is sorted and flushed at the end.
  const Inputs in = makeInputs(200, 100);
  const auto stamp = [](int64_t i) { return i; };
  const std::vector<Out> got = run(in, 1, true, stamp, stamp, /*one_source=*/true);
  ASSERT_EQ(got.size(), 300u);
  EXPECT_TRUE(groupedByKey(got));
  // Within a key: (timestamp, input) ascending, as Flink merges the heads of sorted inputs. A's record i
  // has timestamp i, B's record j timestamp j.
  std::map<int64_t, std::vector<std::pair<int64_t, int64_t>>> want;  // key -> (input, value)
  for (int64_t k = 0; k < kKeys; ++k) {
    std::vector<std::tuple<int64_t, int64_t, int64_t>> merged;  // (timestamp, input, value)
    for (const A& r : in.a)
      if (r.first == k) merged.emplace_back(r.second, 1, r.second);
    for (const B& r : in.b)
      if (std::stoll(r.first) == k) merged.emplace_back(r.second - 1000, 2, r.second);
    std::sort(merged.begin(), merged.end());
    for (const auto& [ts, input, v] : merged) want[k].emplace_back(input, v);
  }
  std::map<int64_t, std::vector<std::pair<int64_t, int64_t>>> seen;
  for (const Out& o : got) {
    seen[std::get<2>(o)].emplace_back(std::get<1>(o), std::get<3>(o));
    EXPECT_EQ(std::get<5>(o), 1) << "a record after the watermark advanced";
  }
  EXPECT_EQ(seen, want);
  EXPECT_EQ(totals(got), expectedTotals(in));
}

TEST(TwoInputBacklogSortingTest, AtParallelismTwoEverySubtaskSeesItsKeysGroupedAndTheTotalsAreTheStreamingOnes) {
  const Inputs in = makeInputs(300, 150);
  const auto stamp = [](int64_t i) { return i; };
  const std::vector<Out> mixed = run(in, 2, true, stamp, stamp, /*one_source=*/true);
  ASSERT_EQ(mixed.size(), 450u);
  for (const auto& [subtask, out] : bySubtask(mixed)) EXPECT_TRUE(groupedByKey(out)) << "subtask " << subtask;
  EXPECT_EQ(totals(mixed), expectedTotals(in));
  // Plain streaming (no sorting): the same totals, and records of different keys interleave.
  const std::vector<Out> plain = run(in, 2, false, stamp, stamp, /*one_source=*/true);
  EXPECT_EQ(totals(plain), expectedTotals(in));
  bool interleaved = false;
  for (const auto& [subtask, out] : bySubtask(plain)) interleaved = interleaved || !groupedByKey(out);
  EXPECT_TRUE(interleaved) << "the streaming run is already grouped: the test shows nothing";
}

TEST(TwoInputBacklogSortingTest, TheSortedBacklogOfBothInputsComesFirstThenTheOperatorContinuesInStreaming) {
  // A: i < 40 two hours old (backlog), then an hour ahead (live). B: j < 20 old, then ahead.
  const Inputs in = makeInputs(60, 30);
  const int64_t now = wallMs();
  const int64_t past = now - 2 * 3600 * 1000;
  const int64_t future = now + 3600 * 1000;
  const std::vector<Out> got = run(
      in, 1, true, [=](int64_t i) { return i < 40 ? past + i : future + i; },
      [=](int64_t j) { return j < 20 ? past + j : future + j; }, /*one_source=*/false);
  ASSERT_EQ(got.size(), 90u);
  // Each input is not backlog until its first RecordAttributes arrives (Flink's default), so B may enter
  // and leave backlog before A's attributes are read: then B's backlog is flushed alone and A's in a later
  // phase. What holds in every interleaving: an input's backlog lies in one sorting phase, so that input's
  // records up to its last backlog record are grouped by key (live records that reached the sorter join
  // the flush); no watermark advanced before any backlog record (A's and B's watermarks are held while
  // sorting, and one input's watermark alone does not advance the combined one); once the watermark has
  // advanced, every flush is over and records stream in their input's order.
  const auto is_backlog = [](const Out& o) {
    return std::get<1>(o) == 1 ? std::get<3>(o) < 40 : std::get<3>(o) < 1020;
  };
  for (int64_t input = 1; input <= 2; ++input) {
    std::vector<Out> of_input;
    size_t sorted = 0;
    for (const Out& o : got) {
      if (std::get<1>(o) != input) continue;
      of_input.push_back(o);
      if (is_backlog(o)) sorted = of_input.size();
    }
    const std::vector<Out> prefix(of_input.begin(), of_input.begin() + static_cast<std::ptrdiff_t>(sorted));
    EXPECT_TRUE(groupedByKey(prefix)) << "input " << input;
    // Every backlog record of the input is in it: A 0..39, B 1000..1019.
    std::set<int64_t> in_prefix;
    for (const Out& o : prefix) in_prefix.insert(std::get<3>(o));
    const int64_t first = input == 1 ? 0 : 1000;
    const int64_t count = input == 1 ? 40 : 20;
    for (int64_t v = first; v < first + count; ++v) EXPECT_EQ(in_prefix.count(v), 1u) << "input " << input << " " << v;
  }
  size_t advanced = got.size();
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::get<5>(got[i]) == 0 && advanced == got.size()) advanced = i;
    if (i >= advanced) {
      EXPECT_EQ(std::get<5>(got[i]), 0) << "record " << i << ": the watermark went back";
    }
    if (is_backlog(got[i])) {
      EXPECT_LT(i, advanced) << "backlog record " << i << " after the watermark advanced";
    }
  }
  // After it: streaming, each input's records in their order, and some records came that way (each input's
  // records after its attributes turned not-backlog are not sorted).
  std::vector<int64_t> tail_a;
  std::vector<int64_t> tail_b;
  for (size_t i = advanced; i < got.size(); ++i) (std::get<1>(got[i]) == 1 ? tail_a : tail_b).push_back(std::get<3>(got[i]));
  EXPECT_TRUE(std::is_sorted(tail_a.begin(), tail_a.end()));
  EXPECT_TRUE(std::is_sorted(tail_b.begin(), tail_b.end()));
  EXPECT_FALSE(tail_a.empty() && tail_b.empty()) << "nothing was processed in streaming after the backlog";
  EXPECT_EQ(totals(got), expectedTotals(in));
}

}  // namespace
}  // namespace sluice::api
