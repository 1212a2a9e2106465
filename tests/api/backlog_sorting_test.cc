// FLIP-327 + FLIP-328 through the DataStream API: records stamped two hours in the past make the source's
// watermark lag the wall clock by more than pipeline.backlog.watermark-lag-threshold (backlog); records an
// hour in the future bring the lag below it (not backlog). With interval-during-backlog = 0 the keyed
// operator sees the backlog grouped by key; the expected orders are worked out by hand below.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <utility>
#include <vector>

#include "api/datastream.h"
#include "test_util.h"

namespace sluice::api {
namespace {

using Rec = std::pair<int64_t, int64_t>;  // (key, i)

// Emits each record as it is processed, so the output order is the operator's input order.
class Echo final : public KeyedProcessFunction<int64_t, Rec, Rec> {
 public:
  void processElement(const Rec& r, Context&, Collector<Rec>& out) override { out.collect(r); }
};

int64_t wallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Records i = 0..49, key i % 3; i < 40 two hours old, i >= 40 an hour ahead. Batches of 4 records.
std::vector<Rec> run(bool mixed_mode, const std::string& backend = "hashmap") {
  Configuration config;
  config.set("parallelism.default", "1");
  config.set("sluice.batch.size", "4");
  config.set("state.backend.type", backend);
  config.set("pipeline.backlog.watermark-lag-threshold", "1 min");
  if (mixed_mode) config.set("execution.checkpointing.interval-during-backlog", "0");
  StreamExecutionEnvironment env(std::move(config));
  std::vector<Rec> in;
  for (int64_t i = 0; i < 50; ++i) in.emplace_back(i % 3, i);
  const int64_t now = wallMs();
  const int64_t past = now - 2 * 3600 * 1000;
  const int64_t future = now + 3600 * 1000;
  auto out = env.fromCollection(in)
                 .assignTimestampsAndWatermarks(WatermarkStrategy<Rec>::forMonotonousTimestamps().withTimestampAssigner(
                     [past, future](const Rec& r) { return r.second < 40 ? past + r.second : future + r.second; }))
                 .keyBy([](const Rec& r) { return r.first; })
                 .process(Echo{})
                 .collect();
  env.execute();
  return out->values();
}

std::vector<Rec> range(const std::vector<Rec>& v, size_t from, size_t to) {
  return std::vector<Rec>(v.begin() + static_cast<std::ptrdiff_t>(from), v.begin() + static_cast<std::ptrdiff_t>(to));
}

TEST(BacklogSortingApiTest, TheLaggingPartIsSortedByKeyAndTheRestPassesInOrder) {
  const std::vector<Rec> got = run(true);
  ASSERT_EQ(got.size(), 50u);
  // The first batch (0..3) goes out before the first watermark, but that watermark lags by two hours: it
  // is backlog already (before the fix it passed in arrival order). Batches 0..39 and the batch 40..43
  // whose watermark ends the backlog are sorted: each key's records in one run, in arrival order.
  std::map<int64_t, std::vector<int64_t>> runs;
  int64_t last_key = -1;
  int switches = 0;
  for (const auto& [k, i] : range(got, 0, 44)) {
    if (k != last_key) ++switches;
    last_key = k;
    runs[k].push_back(i);
  }
  EXPECT_EQ(switches, 3) << "each key in one run";
  std::map<int64_t, std::vector<int64_t>> want;
  for (int64_t i = 0; i < 44; ++i) want[i % 3].push_back(i);
  EXPECT_EQ(runs, want);
  // Realtime again: 44..49 in arrival order.
  EXPECT_EQ(range(got, 44, 50), (std::vector<Rec>{{2, 44}, {0, 45}, {1, 46}, {2, 47}, {0, 48}, {1, 49}}));
}

TEST(BacklogSortingApiTest, OnRocksDbTheSortedRunGivesTheSameRecords) {
  const std::vector<Rec> got = run(true, "rocksdb");
  ASSERT_EQ(got.size(), 50u);
  EXPECT_EQ(range(got, 44, 50), (std::vector<Rec>{{2, 44}, {0, 45}, {1, 46}, {2, 47}, {0, 48}, {1, 49}}));
  EXPECT_EQ(testing::sorted(got), testing::sorted(run(false, "rocksdb")));
}

// Key k of 0..6 holds i = k, k + 7, ..., below 300: n_k = 43 for k <= 5 (7 * 42 + 5 = 299), 42 for k = 6;
// its sum is n_k * k + 7 * n_k * (n_k - 1) / 2.
int64_t sumOfKey(int64_t k) {
  const int64_t n = k <= 5 ? 43 : 42;
  return n * k + 7 * n * (n - 1) / 2;
}

// Before the fix the job was refused with a ConfigError (its source would have waited for a final
// checkpoint that the backlog never let start). A finished source processes no backlog (FLIP-147): the
// job ends with the final sums. 300 records stamped in 1970 (backlog to the end), a keyed reduce at -p 2.
TEST(BacklogSortingApiTest, ASourceThatEndsInBacklogFinishesWithAFinalCheckpointWhileCheckpointing) {
  Configuration config;
  config.set("parallelism.default", "2");
  config.set("execution.checkpointing.interval", "1 s");
  config.set("pipeline.backlog.watermark-lag-threshold", "1 min");
  config.set("execution.checkpointing.interval-during-backlog", "0");
  StreamExecutionEnvironment env(std::move(config));
  std::vector<Rec> in;
  for (int64_t i = 0; i < 300; ++i) in.emplace_back(i % 7, i);
  auto out = env.fromCollection(in)
                 .assignTimestampsAndWatermarks(WatermarkStrategy<Rec>::forMonotonousTimestamps().withTimestampAssigner(
                     [](const Rec& r) { return r.second; }))
                 .keyBy([](const Rec& r) { return r.first; })
                 .reduce([](const Rec& a, const Rec& b) { return Rec{a.first, a.second + b.second}; })
                 .collect();
  env.execute();
  std::map<int64_t, int64_t> last;
  for (const auto& [k, s] : out->values()) last[k] = std::max(last[k], s);
  ASSERT_EQ(last.size(), 7u);
  for (int64_t k = 0; k < 7; ++k) EXPECT_EQ(last.at(k), sumOfKey(k)) << "key " << k;
}

TEST(BacklogSortingApiTest, WithoutIntervalDuringBacklogZeroTheBacklogIsNotSorted) {
  const std::vector<Rec> got = run(false);
  std::vector<Rec> want;
  for (int64_t i = 0; i < 50; ++i) want.emplace_back(i % 3, i);
  EXPECT_EQ(got, want);
}

TEST(BacklogSortingApiTest, AKeyedReduceDuringBacklogEndsWithTheStreamingSums) {
  // Rolling sums per key: stream and mixed mode emit one value per record; the last value per key is the
  // sum of i over the key's records.
  auto job = [](bool mixed) {
    Configuration config;
    config.set("parallelism.default", "2");
    config.set("pipeline.backlog.watermark-lag-threshold", "1 min");
    if (mixed) config.set("execution.checkpointing.interval-during-backlog", "0");
    StreamExecutionEnvironment env(std::move(config));
    std::vector<Rec> in;
    for (int64_t i = 0; i < 300; ++i) in.emplace_back(i % 7, i);
    auto out = env.fromCollection(in)
                   .assignTimestampsAndWatermarks(WatermarkStrategy<Rec>::forMonotonousTimestamps().withTimestampAssigner(
                       [](const Rec& r) { return r.second; }))  // 1970: backlog to the end
                   .keyBy([](const Rec& r) { return r.first; })
                   .reduce([](const Rec& a, const Rec& b) { return Rec{a.first, a.second + b.second}; })
                   .collect();
    env.execute();
    return testing::sorted(out->values());
  };
  // At -p 2 a key's records reach its subtask from two channels in either order, so only what does not
  // depend on that order is compared: one emitted value per record, and the largest (the final sum).
  auto summary = [](const std::vector<Rec>& out) {
    std::map<int64_t, std::pair<int64_t, int64_t>> m;  // key -> (values emitted, largest)
    for (const auto& [k, s] : out) {
      ++m[k].first;
      m[k].second = std::max(m[k].second, s);
    }
    return m;
  };
  const auto mixed = summary(job(true));
  EXPECT_EQ(mixed, summary(job(false)));
  std::map<int64_t, int64_t> last;
  for (const auto& [k, cs] : mixed) last[k] = cs.second;
  for (int64_t k = 0; k < 7; ++k) EXPECT_EQ(last[k], sumOfKey(k)) << "key " << k;
}

}  // namespace
}  // namespace sluice::api
