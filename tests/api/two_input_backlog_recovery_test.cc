// A failure during backlog in a job with a two-input keyed operator (connect().keyBy().process(), FLIP-327
// mixed mode: interval-during-backlog 0, so both inputs are sorted while the source is backlog and no
// checkpoint is taken then). The source (FLIP-309 enumerator) is live for 1-30, backlog for 31-60 and live
// again for 61-90; its reader finishes 1-30 only once a checkpoint completed, so one precedes the backlog.
// The restart must resume from that checkpoint and end with the failure-free totals, which the test sums
// by hand over 1..90.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>
#include <memory>
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

using test_sources::TaggedNumbers;

using test_functions::A;
using test_functions::B;
using test_functions::Out;  // (subtask, input, key, value, running sum, held)
using test_functions::RunningSum;

constexpr int64_t kKeys = 5;

// Value v goes to the first input unless v % 3 == 0; its key is v % kKeys.
bool toFirst(int64_t v) { return v % 3 != 0; }

struct JobRun {
  std::vector<Out> out;              // every attempt's output, in the order collected
  std::vector<int64_t> split_starts;  // where each split a reader was given started
};

// `fail`: the sluice.test.fail-* options of the run (none: the failure-free run).
JobRun run(int parallelism, const std::map<std::string, std::string>& fail) {
  Configuration config;
  config.set("parallelism.default", std::to_string(parallelism));
  config.set("sluice.batch.size", "4");
  config.set("execution.checkpointing.interval", "20ms");
  config.set("execution.checkpointing.interval-during-backlog", "0");
  config.set("restart-strategy.fixed-delay.delay", "0ms");
  for (const auto& [key, value] : fail) config.set(key, value);
  StreamExecutionEnvironment env(std::move(config));
  auto source = std::make_shared<TaggedNumbers>(
      std::vector<std::pair<int, RangeSplit>>{
          {0, {1, 30, std::nullopt}}, {0, {31, 60, std::nullopt}}, {0, {61, 90, std::nullopt}}},
      31, 61);
  // 200 ms at the end of 31-60, ten checkpoint intervals: a checkpoint taken during the backlog (with the
  // operator's records in its sorters, not in its state) would complete then and be restored from.
  source->pauseAtTheEndOfTheBacklog(200);
  // One source task feeds both inputs (filters and maps chained to it, so each input is one channel in
  // source order), so both get its backlog status; the tag bit is dropped.
  auto tagged = env.fromSource(source, WatermarkStrategy<int64_t>::noWatermarks(), "tagged").setParallelism(1);
  auto a = tagged.filter([](int64_t t) { return toFirst(t / 2); })
               .setParallelism(1)
               .map([](int64_t t) { return A{(t / 2) % kKeys, t / 2}; })
               .setParallelism(1);
  auto b = tagged.filter([](int64_t t) { return !toFirst(t / 2); })
               .setParallelism(1)
               .map([](int64_t t) { return B{std::to_string((t / 2) % kKeys), t / 2}; })
               .setParallelism(1);
  auto out = a.connect(b)
                 .keyBy([](const A& r) { return r.first; },
                        [](const B& r) { return static_cast<int64_t>(std::stoll(r.first)); })
                 .process(RunningSum{})
                 .collect();
  env.execute();
  return JobRun{out->values(), source->splitStarts()};
}

// By hand: the sum of v over 1..90 with v % kKeys == k.
std::map<int64_t, int64_t> expectedTotals() {
  std::map<int64_t, int64_t> m;
  for (int64_t v = 1; v <= 90; ++v) m[v % kKeys] += v;
  return m;
}

// The last running sum each key emitted: what the job's final state says.
std::map<int64_t, int64_t> finalSums(const std::vector<Out>& out) {
  std::map<int64_t, int64_t> m;
  for (const Out& o : out) m[std::get<2>(o)] = std::get<4>(o);
  return m;
}

// The (input, key, value) of the last `n` records: the restarted attempt emits each of 31..90 once.
std::multiset<std::tuple<int64_t, int64_t, int64_t>> tailRecords(const std::vector<Out>& out, size_t n) {
  std::multiset<std::tuple<int64_t, int64_t, int64_t>> s;
  for (size_t i = out.size() - n; i < out.size(); ++i) {
    s.emplace(std::get<1>(out[i]), std::get<2>(out[i]), std::get<3>(out[i]));
  }
  return s;
}

std::multiset<std::tuple<int64_t, int64_t, int64_t>> expectedRecords(int64_t from, int64_t to) {
  std::multiset<std::tuple<int64_t, int64_t, int64_t>> s;
  for (int64_t v = from; v <= to; ++v) s.emplace(toFirst(v) ? 1 : 2, v % kKeys, v);
  return s;
}

// The backlog (31..60) of each input among the last `n` records reached each subtask grouped by key (it
// was sorted); unsorted, its keys (v % kKeys) would cycle. Per input only: the operator may read one
// input's backlog and its end before the other input's first attributes, and then flushes the two
// inputs' backlogs in separate phases (an input counts as not backlog until it reports).
bool backlogGroupedByKey(const std::vector<Out>& out, size_t n) {
  // (subtask, input) -> keys of its backlog records, one per run
  std::map<std::pair<int64_t, int64_t>, std::vector<int64_t>> runs;
  for (size_t i = out.size() - n; i < out.size(); ++i) {
    const auto& [subtask, input, key, v, sum, held] = out[i];
    if (v < 31 || v > 60) continue;
    std::vector<int64_t>& keys = runs[{subtask, input}];
    if (keys.empty() || keys.back() != key) keys.push_back(key);
  }
  for (const auto& [where, keys] : runs) {
    if (std::set<int64_t>(keys.begin(), keys.end()).size() != keys.size()) return false;
  }
  return !runs.empty();
}

// The last `n` records as "subtask:input:key:value", for failure messages.
std::string describe(const std::vector<Out>& out, size_t n) {
  std::vector<std::string> parts;
  for (size_t i = out.size() - n; i < out.size(); ++i) {
    const auto& [subtask, input, key, v, sum, held] = out[i];
    parts.push_back(fmt::format("{}:{}:{}:{}", subtask, input, key, v));
  }
  return fmt::format("{}", fmt::join(parts, " "));
}

void expectFailureFreeResult(const JobRun& got, const JobRun& clean) {
  EXPECT_EQ(finalSums(got.out), expectedTotals());
  EXPECT_EQ(finalSums(got.out), finalSums(clean.out));
  ASSERT_GE(got.out.size(), 60u);
  EXPECT_EQ(tailRecords(got.out, 60), expectedRecords(31, 90));
  EXPECT_TRUE(backlogGroupedByKey(got.out, 60))
      << "the restarted attempt did not sort the backlog: " << describe(got.out, got.out.size()) << "; split starts "
      << fmt::format("{}", fmt::join(got.split_starts, ", "));
}

TEST(TwoInputBacklogRecoveryTest, TheFailureFreeRunSumsEveryValueOnce) {
  const JobRun clean = run(2, {});
  EXPECT_EQ(clean.split_starts, (std::vector<int64_t>{1, 31, 61}));
  ASSERT_EQ(clean.out.size(), 90u);
  EXPECT_EQ(tailRecords(clean.out, 90), expectedRecords(1, 90));
  EXPECT_EQ(finalSums(clean.out), expectedTotals());
  EXPECT_TRUE(backlogGroupedByKey(clean.out, 90)) << "the backlog was not sorted";
}

TEST(TwoInputBacklogRecoveryTest, ASourceFailureWhileBothInputsSortRestartsFromTheCheckpointBeforeTheBacklog) {
  // The source fails in the batch that takes it past 42 records (batches of 4: at 43-46), once the
  // checkpoint before the backlog completed: 31-42 are in the operator's sorters, not in its state.
  const JobRun got = run(2, {{"sluice.test.fail-operator", "tagged"}, {"sluice.test.fail-after-records", "42"}});
  // First attempt: 1-30, then 31-60 (fails inside); second: 31-60 from its start, then 61-90. A
  // checkpoint taken inside the backlog would resume 31-60 past 31.
  EXPECT_EQ(got.split_starts, (std::vector<int64_t>{1, 31, 31, 61}));
  expectFailureFreeResult(got, run(2, {}));
}

TEST(TwoInputBacklogRecoveryTest, AFailureOfTheTwoInputOperatorWhileItFlushesTheBacklogRestartsFromBeforeIt) {
  // At -p 1 the operator has received 1-30 when the backlog starts, and 31-60 reach it only in the flush
  // once the source left backlog (at 61): failing past 40 records fails it in the middle of that flush,
  // after some keys' state took their sorted records. The source paused 200 ms at the end of the backlog
  // before: a checkpoint completed then would be restored from, past 31-60, and lose them.
  const JobRun got =
      run(1, {{"sluice.test.fail-operator", "Co-Keyed-Process"}, {"sluice.test.fail-after-records", "40"}});
  // First attempt: 1-30, 31-60, then 61-90 is handed out with the end of the backlog (the reader may hear
  // the status before it has taken the split, so the split may not be logged before the failure); second:
  // from the checkpoint before the backlog, 31-60 from its start, then 61-90.
  const std::vector<int64_t>& starts = got.split_starts;
  ASSERT_TRUE(starts.size() == 4 || starts.size() == 5) << fmt::format("{}", fmt::join(starts, ", "));
  EXPECT_EQ(std::vector<int64_t>(starts.begin(), starts.begin() + 2), (std::vector<int64_t>{1, 31}));
  if (starts.size() == 5) {
    EXPECT_EQ(starts[2], 61);
  }
  EXPECT_EQ(std::vector<int64_t>(starts.end() - 2, starts.end()), (std::vector<int64_t>{31, 61}));
  expectFailureFreeResult(got, run(1, {}));
}

}  // namespace
}  // namespace sluice::api
