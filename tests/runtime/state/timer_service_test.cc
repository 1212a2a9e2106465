#include <algorithm>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "common/hash.h"
#include "runtime/state/keyed_state_backend.h"

namespace sluice::runtime::state {
namespace {

constexpr int32_t kMaxP = 128;
int32_t groupOf(std::string_view key) { return assignToKeyGroup(hashBytes(key), kMaxP); }
void setKey(KeyedStateBackend& b, std::string_view key) { b.setCurrentKey(key, groupOf(key)); }

using Fired = std::vector<std::tuple<int64_t, std::string, std::string>>;

// The suite runs on both backends: every state kind behaves the same on the heap and on RocksDB.
class TimerServiceTest : public ::testing::TestWithParam<StateBackendType> {
 protected:
  StateBackendOptions opts() const {
    StateBackendOptions o;
    o.type = GetParam();
    o.local_directory = ::testing::TempDir();
    o.instance_name = "TimerServiceTest";
    return o;
  }
};

TEST_P(TimerServiceTest, EventTimersFireInTimeOrderDeduplicated) {
  KeyedStateBackend b(KeyGroupRange::of(0, 127), kMaxP, {}, opts());
  auto& timers = b.getInternalTimerService("window");
  EXPECT_EQ(&timers, &b.getInternalTimerService("window"));
  setKey(b, "a");
  timers.registerEventTimeTimer("", 30);
  timers.registerEventTimeTimer("", 10);
  timers.registerEventTimeTimer("", 10);  // duplicate
  timers.registerEventTimeTimer("w", 10);
  setKey(b, "b");
  timers.registerEventTimeTimer("", 20);
  timers.registerEventTimeTimer("", 10);
  timers.registerEventTimeTimer("", 40);
  timers.deleteEventTimeTimer("", 40);
  timers.deleteEventTimeTimer("", 99);  // absent: no-op
  EXPECT_EQ(timers.numEventTimeTimers(), 5u);

  Fired fired;
  auto record = [&](std::string_view key, int32_t kg, std::string_view ns, int64_t time) {
    EXPECT_EQ(b.currentKey(), key);
    EXPECT_EQ(b.currentKeyGroup(), kg);
    EXPECT_EQ(kg, groupOf(key));
    fired.emplace_back(time, std::string(key), std::string(ns));
  };
  timers.advanceWatermark(20, record);
  // Equal times fire by key bytes, then namespace.
  EXPECT_EQ(fired, (Fired{{10, "a", ""}, {10, "a", "w"}, {10, "b", ""}, {20, "b", ""}}));
  EXPECT_EQ(timers.currentWatermark(), 20);
  fired.clear();
  timers.advanceWatermark(100, record);
  EXPECT_EQ(fired, (Fired{{30, "a", ""}}));
  EXPECT_EQ(timers.numEventTimeTimers(), 0u);
}

TEST_P(TimerServiceTest, TimersRegisteredWhileFiringFireInTheSameAdvance) {
  KeyedStateBackend b(KeyGroupRange::of(0, 127), kMaxP, {}, opts());
  auto& timers = b.getInternalTimerService("t");
  setKey(b, "x");
  timers.registerEventTimeTimer("", 5);
  Fired fired;
  timers.advanceWatermark(10, [&](std::string_view key, int32_t, std::string_view ns, int64_t time) {
    fired.emplace_back(time, std::string(key), std::string(ns));
    // The current key is the timer's: these register for "x".
    if (time == 5) timers.registerEventTimeTimer("", 8);
    if (time == 8) timers.registerEventTimeTimer("", 11);  // after the watermark: stays
  });
  EXPECT_EQ(fired, (Fired{{5, "x", ""}, {8, "x", ""}}));
  EXPECT_EQ(timers.numEventTimeTimers(), 1u);
}

TEST_P(TimerServiceTest, ProcessingTimers) {
  KeyedStateBackend b(KeyGroupRange::of(0, 127), kMaxP, {}, opts());
  auto& timers = b.getInternalTimerService("t");
  EXPECT_FALSE(timers.nextProcessingTime().has_value());
  setKey(b, "p");
  timers.registerProcessingTimeTimer("", 1000);
  timers.registerProcessingTimeTimer("", 500);
  setKey(b, "q");
  timers.registerProcessingTimeTimer("", 700);
  timers.deleteProcessingTimeTimer("", 700);
  EXPECT_EQ(timers.nextProcessingTime(), 500);
  Fired fired;
  auto record = [&](std::string_view key, int32_t, std::string_view ns, int64_t time) {
    fired.emplace_back(time, std::string(key), std::string(ns));
  };
  timers.advanceProcessingTime(999, record);
  EXPECT_EQ(fired, (Fired{{500, "p", ""}}));
  EXPECT_EQ(timers.nextProcessingTime(), 1000);
  EXPECT_EQ(timers.numEventTimeTimers(), 0u);
}

TEST_P(TimerServiceTest, ManyKeysAcrossGroupsFireInGlobalOrder) {
  KeyedStateBackend b(KeyGroupRange::of(0, 127), kMaxP, {}, opts());
  auto& timers = b.getInternalTimerService("t");
  // Key i gets timers at (i * 37) % 101 and 200 + i: times unique per key, spread over the groups.
  for (int i = 0; i < 300; ++i) {
    setKey(b, fmt::format("key{}", i));
    timers.registerEventTimeTimer("", (i * 37) % 101);
    timers.registerEventTimeTimer("", 1000 + i);
  }
  for (int i = 0; i < 300; i += 3) {
    setKey(b, fmt::format("key{}", i));
    timers.deleteEventTimeTimer("", 1000 + i);
  }
  std::vector<int64_t> times;
  timers.advanceWatermark(INT64_MAX, [&](std::string_view, int32_t, std::string_view, int64_t t) { times.push_back(t); });
  EXPECT_EQ(times.size(), 300u + 200u);
  EXPECT_TRUE(std::is_sorted(times.begin(), times.end()));
  EXPECT_EQ(times.front(), 0);
  EXPECT_EQ(times.back(), 1299);  // 299 % 3 != 0, so its timer stayed
}

TEST_P(TimerServiceTest, TimersSurviveSnapshotAndRestore) {
  KeyedStateBackend b(KeyGroupRange::of(0, 127), kMaxP, {}, opts());
  auto& timers = b.getInternalTimerService("t");
  setKey(b, "a");
  timers.registerEventTimeTimer("w1", 15);
  timers.registerProcessingTimeTimer("", 300);
  setKey(b, "b");
  timers.registerEventTimeTimer("", 5);
  auto blobs = b.snapshot();

  // Into two subtasks: each gets the timers of its keys only.
  Fired all;
  size_t processing = 0;
  for (int s = 0; s < 2; ++s) {
    const auto range = KeyGroupRangeAssignment::computeKeyGroupRangeForOperatorIndex(kMaxP, 2, s);
    std::map<int32_t, std::string> mine;
    for (const auto& [g, blob] : blobs) {
      if (range.contains(g)) mine.emplace(g, blob);
    }
    KeyedStateBackend r(range, kMaxP, mine, opts());
    auto& rt = r.getInternalTimerService("t");
    processing += rt.numProcessingTimeTimers();
    rt.advanceWatermark(100, [&](std::string_view key, int32_t kg, std::string_view ns, int64_t time) {
      EXPECT_TRUE(range.contains(kg));
      all.emplace_back(time, std::string(key), std::string(ns));
    });
  }
  std::sort(all.begin(), all.end());
  EXPECT_EQ(all, (Fired{{5, "b", ""}, {15, "a", "w1"}}));
  EXPECT_EQ(processing, 1u);

  // An unregistered timer service survives a snapshot of the restored backend.
  KeyedStateBackend untouched(KeyGroupRange::of(0, 127), kMaxP, blobs, opts());
  EXPECT_TRUE(untouched.snapshot() == blobs);
}

// Many timers of one time (a bucket sorted by key prefix, then by the whole bytes where prefixes tie):
// keys sharing their first 8 bytes, 8-byte binary keys, short keys and namespaces, in shuffled order,
// fire in (key bytes, namespace) order.
TEST_P(TimerServiceTest, OneTimeOrdersLongSharedPrefixAndBinaryKeys) {
  KeyedStateBackend b(KeyGroupRange::of(0, 127), kMaxP, {}, opts());
  auto& timers = b.getInternalTimerService("t");
  std::vector<std::pair<std::string, std::string>> all;
  for (int i = 0; i < 150; ++i) {
    all.emplace_back(fmt::format("sharedpre-{:03}", (i * 61) % 150), i % 3 == 0 ? "w" : "");
    std::string binary(8, '\0');
    const uint64_t v = static_cast<uint64_t>(i) * 0x0101010101ull;
    std::memcpy(binary.data(), &v, 8);
    all.emplace_back(binary, "");
    all.emplace_back(fmt::format("s{}", i), i % 2 == 0 ? "ab" : "a");
  }
  std::mt19937 rng(11);
  std::shuffle(all.begin(), all.end(), rng);
  for (const auto& [key, ns] : all) {
    setKey(b, key);
    timers.registerEventTimeTimer(ns, 42);
  }
  std::vector<std::pair<std::string, std::string>> fired;
  timers.advanceWatermark(42, [&](std::string_view key, int32_t, std::string_view ns, int64_t time) {
    EXPECT_EQ(time, 42);
    fired.emplace_back(std::string(key), std::string(ns));
  });
  std::sort(all.begin(), all.end());
  EXPECT_EQ(fired, all);
}

// Against a model (a std::set ordered by time, key bytes, namespace): random registers and deletes over
// few distinct times (buckets with many timers), timers registered while firing (at the firing time, which
// lands in the bucket being polled, and later), snapshots in between restored into a second backend.
TEST_P(TimerServiceTest, RandomOperationsMatchAnOrderedSetModel) {
  KeyedStateBackend b(KeyGroupRange::of(0, 127), kMaxP, {}, opts());
  auto& timers = b.getInternalTimerService("t");
  using Timer = std::tuple<int64_t, std::string, std::string>;
  std::set<Timer> model;
  std::mt19937 rng(7);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint32_t>(n)); };
  int64_t watermark = 0;
  for (int round = 0; round < 40; ++round) {
    for (int op = 0; op < 500; ++op) {
      const std::string key = fmt::format("k{}", pick(300));
      const std::string ns = pick(4) == 0 ? "w" : "";
      const int64_t time = watermark + 1 + 10 * pick(5);  // five distinct times ahead of the watermark
      setKey(b, key);
      if (pick(3) == 0) {
        timers.deleteEventTimeTimer(ns, time);
        model.erase(Timer{time, key, ns});
      } else {
        timers.registerEventTimeTimer(ns, time);
        model.insert(Timer{time, key, ns});
      }
    }
    ASSERT_EQ(timers.numEventTimeTimers(), model.size());
    if (round % 5 == 4) {
      // A restored copy holds the same timers: its snapshot is byte-equal.
      auto blobs = b.snapshot();
      KeyedStateBackend copy(KeyGroupRange::of(0, 127), kMaxP, blobs, opts());
      copy.getInternalTimerService("t");
      EXPECT_TRUE(copy.snapshot() == blobs) << "round " << round;
    }
    watermark += 10 + pick(30);
    Fired fired;
    Fired expected;
    int registered_while_firing = 0;
    timers.advanceWatermark(watermark, [&](std::string_view key, int32_t, std::string_view ns, int64_t time) {
      fired.emplace_back(time, std::string(key), std::string(ns));
      // The model's earliest timer is the one that must fire now.
      ASSERT_FALSE(model.empty());
      expected.push_back(*model.begin());
      model.erase(model.begin());
      if (registered_while_firing < 20 && pick(4) == 0) {
        ++registered_while_firing;
        // Same time (its bucket is being polled) or later; a new key sorts anywhere among the pending.
        const std::string other = fmt::format("k{}", pick(300));
        const int64_t t = pick(2) == 0 ? time : time + pick(20);
        b.setCurrentKey(other, groupOf(other));
        timers.registerEventTimeTimer(ns, t);
        model.insert(Timer{t, other, std::string(ns)});
        b.setCurrentKey(key, groupOf(key));
      }
    });
    EXPECT_EQ(fired, expected) << "round " << round;
    ASSERT_TRUE(model.empty() || std::get<0>(*model.begin()) > watermark);
    ASSERT_EQ(timers.numEventTimeTimers(), model.size());
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, TimerServiceTest, ::testing::Values(StateBackendType::kHashMap, StateBackendType::kRocksDB),
                         [](const ::testing::TestParamInfo<StateBackendType>& info) {
                           return std::string(info.param == StateBackendType::kRocksDB ? "RocksDB" : "HashMap");
                         });

}  // namespace
}  // namespace sluice::runtime::state
