#include "runtime/state/keyed_state_backend.h"

#include <functional>
#include <set>

#include <gtest/gtest.h>

#include "common/hash.h"
#include "runtime/state/state_redistribution.h"
#include "runtime/state/stream_operator_state_context.h"

namespace sluice::runtime::state {
namespace {

constexpr int32_t kMaxP = 128;

int32_t groupOf(std::string_view key) { return assignToKeyGroup(hashBytes(key), kMaxP); }

KeyGroupRange rangeOf(int p, int i) {
  return KeyGroupRangeAssignment::computeKeyGroupRangeForOperatorIndex(kMaxP, p, i);
}

void setKey(KeyedStateBackend& b, std::string_view key) { b.setCurrentKey(key, groupOf(key)); }

// Built with append: `"k" + std::to_string(i)` trips a false -Wrestrict of GCC 12 (GCC bug 105329).
std::string keyName(int i) {
  std::string s = "k";
  s += std::to_string(i);
  return s;
}
std::string valueName(int i) {
  std::string s = "v";
  s += std::to_string(i);
  return s;
}

// The suite runs on both backends: every state kind behaves the same on the heap and on RocksDB.
class KeyedStateTest : public ::testing::TestWithParam<StateBackendType> {
 protected:
  StateBackendOptions opts() const {
    StateBackendOptions o;
    o.type = GetParam();
    o.local_directory = ::testing::TempDir();
    o.instance_name = "KeyedStateTest";
    return o;
  }
};

TEST_P(KeyedStateTest, ValueStatePutGetClearAndNamespaces) {
  KeyedStateBackend b(KeyGroupRange::of(0, 127), kMaxP, {}, opts());
  auto& count = b.getValueState(ValueStateDescriptor<int64_t>{"count"});
  EXPECT_EQ(&count, &b.getValueState(ValueStateDescriptor<int64_t>{"count"}));
  setKey(b, "a");
  EXPECT_EQ(count.value(), nullptr);
  count.update(5);
  setKey(b, "b");
  EXPECT_EQ(count.value(), nullptr);
  count.valueOrInsert(10) += 1;
  ++*count.value();
  setKey(b, "a");
  ASSERT_NE(count.value(), nullptr);
  EXPECT_EQ(*count.value(), 5);
  count.setCurrentNamespace("w1");
  EXPECT_EQ(count.value(), nullptr);
  count.update(7);
  count.setCurrentNamespace("");
  EXPECT_EQ(*count.value(), 5);
  EXPECT_EQ(count.size(), 3u);
  count.clear();
  EXPECT_EQ(count.value(), nullptr);
  count.setCurrentNamespace("w1");
  EXPECT_EQ(*count.value(), 7);
  setKey(b, "b");
  count.setCurrentNamespace("");
  EXPECT_EQ(*count.value(), 12);
  EXPECT_EQ(count.size(), 2u);

  std::set<std::tuple<std::string, std::string, int64_t>> seen;
  count.forEachKey([&](std::string_view key, int32_t kg, std::string_view ns, int64_t& v) {
    EXPECT_EQ(kg, groupOf(key));
    seen.emplace(std::string(key), std::string(ns), v);
  });
  EXPECT_EQ(seen, (std::set<std::tuple<std::string, std::string, int64_t>>{{"a", "w1", 7}, {"b", "", 12}}));
}

TEST_P(KeyedStateTest, ListMapReducingAggregating) {
  KeyedStateBackend b(KeyGroupRange::of(0, 127), kMaxP, {}, opts());
  auto& list = b.getListState(ListStateDescriptor<std::string>{"list"});
  auto& map = b.getMapState(MapStateDescriptor<std::string, int32_t>{"map"});
  auto& sum = b.getReducingState(
      ReducingStateDescriptor<int64_t>{"sum", [](const int64_t& a, const int64_t& b) { return a + b; }});
  AggregatingStateDescriptor<int64_t, std::pair<int64_t, int64_t>, double> avg_desc{
      "avg", [] { return std::pair<int64_t, int64_t>{0, 0}; },
      [](std::pair<int64_t, int64_t>& acc, const int64_t& v) {
        acc.first += v;
        acc.second += 1;
      },
      [](const std::pair<int64_t, int64_t>& acc) { return static_cast<double>(acc.first) / acc.second; }};
  auto& avg = b.getAggregatingState(avg_desc);

  setKey(b, "k");
  EXPECT_EQ(list.get(), nullptr);
  list.add("x");
  list.addAll({"y", "z"});
  EXPECT_EQ(*list.get(), (std::vector<std::string>{"x", "y", "z"}));
  list.update({});
  EXPECT_EQ(list.get(), nullptr);
  list.update({"q"});

  EXPECT_TRUE(map.isEmpty());
  map.put("one", 1);
  map.put("two", 2);
  map.put("one", 11);
  EXPECT_EQ(*map.get("one"), 11);
  EXPECT_EQ(map.get("three"), nullptr);
  map.remove("two");
  EXPECT_FALSE(map.contains("two"));
  EXPECT_EQ(map.entries()->size(), 1u);
  map.remove("one");
  EXPECT_TRUE(map.isEmpty());
  EXPECT_EQ(map.size(), 0u);
  map.put("three", 3);

  EXPECT_EQ(sum.get(), nullptr);
  sum.add(4);
  sum.add(6);
  EXPECT_EQ(*sum.get(), 10);

  EXPECT_FALSE(avg.get().has_value());
  avg.add(1);
  avg.add(2);
  avg.add(6);
  EXPECT_DOUBLE_EQ(*avg.get(), 3.0);

  setKey(b, "other");
  EXPECT_EQ(list.get(), nullptr);
  EXPECT_TRUE(map.isEmpty());
  EXPECT_EQ(sum.get(), nullptr);
  EXPECT_FALSE(avg.get().has_value());
  sum.setCurrentNamespace("n");
  sum.add(1);
  setKey(b, "k");
  EXPECT_EQ(sum.get(), nullptr);  // ("k", "n") is empty
  sum.setCurrentNamespace("");
  ASSERT_NE(sum.get(), nullptr);
  EXPECT_EQ(*sum.get(), 10);
  sum.clear();
  avg.clear();
  EXPECT_EQ(sum.get(), nullptr);
  EXPECT_FALSE(avg.get().has_value());
  EXPECT_EQ(sum.size(), 1u);
}

TEST_P(KeyedStateTest, NameWithAnotherKindOrTypeIsAUserError) {
  KeyedStateBackend b(KeyGroupRange::of(0, 127), kMaxP, {}, opts());
  b.getValueState(ValueStateDescriptor<int64_t>{"s"});
  EXPECT_THROW(b.getListState(ListStateDescriptor<int64_t>{"s"}), UserError);
  EXPECT_THROW(b.getValueState(ValueStateDescriptor<std::string>{"s"}), UserError);
  EXPECT_THROW(b.getValueState(ValueStateDescriptor<int64_t>{"_timer_state/x"}), UserError);
}

TEST_P(KeyedStateTest, KeyGroupOutsideTheRangeIsAnInternalError) {
  KeyedStateBackend b(KeyGroupRange::of(0, 63), kMaxP, {}, opts());
  EXPECT_THROW(b.setCurrentKey("x", 64), InternalError);
}

// Writes every state kind for keys k0..k{n-1} into `b`: value = i, list = [i, i+1], map {i: "v<i>"},
// reducing sum of i and 2i, aggregating count of three adds; plus value i*10 in namespace "ns".
void writeAll(KeyedStateBackend& b, int from, int to) {
  auto& value = b.getValueState(ValueStateDescriptor<int64_t>{"value"});
  auto& list = b.getListState(ListStateDescriptor<int32_t>{"list"});
  auto& map = b.getMapState(MapStateDescriptor<int32_t, std::string>{"map"});
  auto& sum = b.getReducingState(
      ReducingStateDescriptor<int64_t>{"sum", [](const int64_t& a, const int64_t& c) { return a + c; }});
  auto& count = b.getAggregatingState(AggregatingStateDescriptor<int32_t, int64_t, int64_t>{
      "count", [] { return int64_t{0}; }, [](int64_t& acc, const int32_t&) { ++acc; },
      [](const int64_t& acc) { return acc; }});
  for (int i = from; i < to; ++i) {
    const std::string key = keyName(i);
    b.setCurrentKey(key, groupOf(key));
    value.update(i);
    value.setCurrentNamespace("ns");
    value.update(i * 10);
    value.setCurrentNamespace("");
    list.add(i);
    list.add(i + 1);
    map.put(i, valueName(i));
    sum.add(i);
    sum.add(2 * i);
    count.add(0);
    count.add(0);
    count.add(0);
  }
}

// Checks the states of `b` hold exactly the keys of [from, to) whose group is in the backend's range.
void checkAll(KeyedStateBackend& b, int from, int to) {
  auto& value = b.getValueState(ValueStateDescriptor<int64_t>{"value"});
  auto& list = b.getListState(ListStateDescriptor<int32_t>{"list"});
  auto& map = b.getMapState(MapStateDescriptor<int32_t, std::string>{"map"});
  auto& sum = b.getReducingState(
      ReducingStateDescriptor<int64_t>{"sum", [](const int64_t& a, const int64_t& c) { return a + c; }});
  auto& count = b.getAggregatingState(AggregatingStateDescriptor<int32_t, int64_t, int64_t>{
      "count", [] { return int64_t{0}; }, [](int64_t& acc, const int32_t&) { ++acc; },
      [](const int64_t& acc) { return acc; }});
  size_t expected_keys = 0;
  for (int i = from; i < to; ++i) {
    const std::string key = keyName(i);
    if (!b.keyGroupRange().contains(groupOf(key))) continue;
    ++expected_keys;
    b.setCurrentKey(key, groupOf(key));
    ASSERT_NE(value.value(), nullptr) << key;
    EXPECT_EQ(*value.value(), i);
    value.setCurrentNamespace("ns");
    EXPECT_EQ(*value.value(), i * 10);
    value.setCurrentNamespace("");
    EXPECT_EQ(*list.get(), (std::vector<int32_t>{i, i + 1}));
    EXPECT_EQ(*map.get(i), valueName(i));
    EXPECT_EQ(map.entries()->size(), 1u);
    EXPECT_EQ(*sum.get(), 3 * i);
    EXPECT_EQ(*count.get(), 3);
  }
  EXPECT_EQ(value.size(), 2 * expected_keys);
  EXPECT_EQ(list.size(), expected_keys);
  EXPECT_EQ(map.size(), expected_keys);
  EXPECT_EQ(sum.size(), expected_keys);
  EXPECT_EQ(count.size(), expected_keys);
}

TEST_P(KeyedStateTest, SnapshotRestoreRoundTrip) {
  KeyedStateBackend b(KeyGroupRange::of(0, 127), kMaxP, {}, opts());
  writeAll(b, 0, 50);
  const auto blobs = b.snapshot();
  std::set<int32_t> groups;
  for (int i = 0; i < 50; ++i) groups.insert(groupOf(keyName(i)));
  EXPECT_EQ(blobs.size(), groups.size());

  KeyedStateBackend restored(KeyGroupRange::of(0, 127), kMaxP, blobs, opts());
  checkAll(restored, 0, 50);
  EXPECT_TRUE(restored.snapshot() == blobs);
}

TEST_P(KeyedStateTest, UnregisteredRestoredStateSurvivesTheNextSnapshot) {
  KeyedStateBackend b(KeyGroupRange::of(0, 127), kMaxP, {}, opts());
  writeAll(b, 0, 20);
  KeyedStateBackend restored(KeyGroupRange::of(0, 127), kMaxP, b.snapshot(), opts());
  restored.getValueState(ValueStateDescriptor<int64_t>{"value"});  // only one state registered
  KeyedStateBackend again(KeyGroupRange::of(0, 127), kMaxP, restored.snapshot(), opts());
  checkAll(again, 0, 20);
}

TEST_P(KeyedStateTest, RescaleTwoSubtasksIntoOneAndFour) {
  // Keys k0..k199 written by the two subtasks of parallelism 2, each only the keys it owns.
  checkpoint::OperatorSubtaskState old_states[2];
  std::set<int> keys_written;
  for (int s = 0; s < 2; ++s) {
    KeyedStateBackend b(rangeOf(2, s), kMaxP, {}, opts());
    std::vector<int> mine;
    for (int i = 0; i < 200; ++i) {
      if (rangeOf(2, s).contains(groupOf(keyName(i)))) mine.push_back(i);
    }
    for (int i : mine) {
      writeAll(b, i, i + 1);
      keys_written.insert(i);
    }
    old_states[s].keyed = b.snapshot();
  }
  EXPECT_EQ(keys_written.size(), 200u);
  const std::vector<const checkpoint::OperatorSubtaskState*> old = {&old_states[0], &old_states[1]};

  for (int new_p : {1, 4}) {
    size_t total = 0;
    for (int s = 0; s < new_p; ++s) {
      const KeyGroupRange range = rangeOf(new_p, s);
      auto selected = selectKeyGroups(old, range);
      for (const auto& [g, blob] : selected) EXPECT_TRUE(range.contains(g));
      KeyedStateBackend b(range, kMaxP, std::move(selected), opts());
      checkAll(b, 0, 200);
      total += b.getValueState(ValueStateDescriptor<int64_t>{"value"}).size() / 2;
      // The backend holds no key outside its range.
      b.getListState(ListStateDescriptor<int32_t>{"list"})
          .forEachKey([&](std::string_view key, int32_t kg, std::string_view, std::vector<int32_t>&) {
            EXPECT_TRUE(range.contains(kg));
            EXPECT_EQ(kg, groupOf(key));
          });
    }
    EXPECT_EQ(total, 200u) << new_p;
  }
}

TEST_P(KeyedStateTest, BackendIgnoresRestoredGroupsOutsideItsRange) {
  KeyedStateBackend b(KeyGroupRange::of(0, 127), kMaxP, {}, opts());
  writeAll(b, 0, 40);
  KeyedStateBackend half(rangeOf(2, 1), kMaxP, b.snapshot(), opts());
  checkAll(half, 0, 40);
}

TEST_P(KeyedStateTest, SelectKeyGroupsRejectsAGroupInTwoOldSubtasks) {
  checkpoint::OperatorSubtaskState a, c;
  a.keyed[3] = "x";
  c.keyed[3] = "y";
  EXPECT_THROW(selectKeyGroups({&a, &c}, KeyGroupRange::of(0, 127)), InputError);
  EXPECT_EQ(selectKeyGroups({&a, &c}, KeyGroupRange::of(4, 127)).size(), 0u);
}

std::string errorOf(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const InputError& e) {
    return e.what();
  }
  return "no InputError";
}

TEST_P(KeyedStateTest, TruncatedBlobIsAnInputErrorNamingTheGroupAndState) {
  KeyedStateBackend b(KeyGroupRange::of(0, 127), kMaxP, {}, opts());
  writeAll(b, 0, 1);
  auto blobs = b.snapshot();
  ASSERT_EQ(blobs.size(), 1u);
  const int32_t g = blobs.begin()->first;
  for (size_t cut : {size_t{0}, size_t{1}, size_t{5}, blobs.begin()->second.size() - 1}) {
    auto broken = blobs;
    broken.begin()->second.resize(cut);
    const std::string msg = errorOf([&] { KeyedStateBackend r(KeyGroupRange::of(0, 127), kMaxP, broken, opts()); });
    EXPECT_NE(msg.find(fmt::format("key group {}", g)), std::string::npos) << msg;
    if (cut > 20) {
      EXPECT_NE(msg.find("state '"), std::string::npos) << msg;
    }
  }
}

TEST_P(KeyedStateTest, ValueBytesThatDoNotDecodeAreAnInputErrorNamingTheState) {
  // A hand-built blob: version 1, one state "count" of kind VALUE with one entry: key "a", namespace "",
  // value of 3 bytes (an int64 needs 8).
  std::string blob;
  blob += '\x01';
  blob += '\x01';
  blob += '\x05';
  blob += "count";
  blob += '\x00';  // VALUE
  blob += '\x01';  // one entry
  blob += '\x01';
  blob += 'a';
  blob += '\x00';
  blob += '\x03';
  blob += "abc";
  KeyedStateBackend b(KeyGroupRange::of(0, 127), kMaxP, {{7, blob}}, opts());
  const std::string msg = errorOf([&] { b.getValueState(ValueStateDescriptor<int64_t>{"count"}); });
  EXPECT_NE(msg.find("'count'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("key group 7"), std::string::npos) << msg;
  // Registering the restored name as another kind is a UserError.
  KeyedStateBackend c(KeyGroupRange::of(0, 127), kMaxP, {{7, blob}}, opts());
  EXPECT_THROW(c.getListState(ListStateDescriptor<int64_t>{"count"}), UserError);
}

TEST_P(KeyedStateTest, OperatorStateContextSnapshotsBothBackends) {
  StreamOperatorStateContext fresh("op", KeyGroupRange::of(0, 127), kMaxP, nullptr, opts());
  EXPECT_FALSE(fresh.isRestored());
  writeAll(fresh.keyedStateBackend(), 0, 10);
  auto snap = fresh.snapshot();
  EXPECT_FALSE(snap.keyed.empty());

  // A context that never opens its keyed backend passes the restored groups of its range on unchanged.
  StreamOperatorStateContext idle("op", rangeOf(2, 0), kMaxP, &snap, opts());
  EXPECT_TRUE(idle.isRestored());
  const auto idle_snap = idle.snapshot();
  for (const auto& [g, blob] : idle_snap.keyed) {
    EXPECT_TRUE(rangeOf(2, 0).contains(g));
    EXPECT_EQ(blob, snap.keyed.at(g));
  }
  StreamOperatorStateContext restored("op", KeyGroupRange::of(0, 127), kMaxP, &snap, opts());
  checkAll(restored.keyedStateBackend(), 0, 10);
}

INSTANTIATE_TEST_SUITE_P(Backends, KeyedStateTest, ::testing::Values(StateBackendType::kHashMap, StateBackendType::kRocksDB),
                         [](const ::testing::TestParamInfo<StateBackendType>& info) {
                           return std::string(info.param == StateBackendType::kRocksDB ? "RocksDB" : "HashMap");
                         });

}  // namespace
}  // namespace sluice::runtime::state
