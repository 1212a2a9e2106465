// Asynchronous snapshots of both backends (heap: copy-on-write; RocksDB full: a RocksDB snapshot pinned
// in the synchronous part, iterated by write()): the written blobs hold the state as of snapshotAsync(),
// whatever the task does to the state before and during the write-out. Expected state comes from a
// plain std::map model kept beside the backend.
#include <atomic>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "common/hash.h"
#include "runtime/state/keyed_state_backend.h"

namespace sluice::runtime::state {
namespace {

constexpr int32_t kMaxP = 128;
const KeyGroupRange kAll = KeyGroupRange::of(0, kMaxP - 1);

StateBackendOptions optionsFor(const std::string& backend) {
  StateBackendOptions o;
  if (backend == "rocksdb") {
    o.type = StateBackendType::kRocksDB;
    o.local_directory = ::testing::TempDir();
    o.instance_name = "async-snapshot";
  }
  return o;
}

/// The tests both backends pass, parametrized by `state.backend.type`.
class AsyncSnapshotTest : public ::testing::TestWithParam<std::string> {
 protected:
  StateBackendOptions options() const { return optionsFor(GetParam()); }
};

INSTANTIATE_TEST_SUITE_P(Backends, AsyncSnapshotTest, ::testing::Values("hashmap", "rocksdb"),
                         [](const auto& info) { return info.param; });

// The canonical blobs of a snapshot's write-out (heap: no incremental handle).
std::optional<std::map<int32_t, std::string>> writeBlobs(KeyedStateSnapshot& snap,
                                                         const std::atomic<bool>* cancelled = nullptr) {
  std::optional<KeyedSnapshotResult> r = snap.write(cancelled);
  if (!r) return std::nullopt;
  EXPECT_FALSE(r->handle.has_value());
  return std::move(r->keyed);
}

void setKey(KeyedStateBackend& b, const std::string& key) { b.setCurrentKey(key, assignToKeyGroup(hashBytes(key), kMaxP)); }

std::string keyName(int i) {
  std::string s = "k";
  s += std::to_string(i);
  return s;
}

/// What the test expects, kept apart from the engine: value, list and map state per key.
struct Model {
  std::map<std::string, int64_t> values;
  std::map<std::string, std::vector<std::string>> lists;
  std::map<std::string, std::map<std::string, int64_t>> maps;
};

/// The three states of the tests, on one backend.
struct States {
  explicit States(KeyedStateBackend& backend)
      : b(backend),
        value(b.getValueState(ValueStateDescriptor<int64_t>{"value"})),
        list(b.getListState(ListStateDescriptor<std::string>{"list"})),
        map(b.getMapState(MapStateDescriptor<std::string, int64_t>{"map"})) {}
  void put(Model& m, const std::string& key, int64_t v) {
    setKey(b, key);
    value.update(v);
    list.add(std::to_string(v));
    map.put("a" + std::to_string(v % 3), v);
    m.values[key] = v;
    m.lists[key].push_back(std::to_string(v));
    m.maps[key]["a" + std::to_string(v % 3)] = v;
  }
  void erase(Model& m, const std::string& key) {
    setKey(b, key);
    value.clear();
    list.clear();
    map.clear();
    m.values.erase(key);
    m.lists.erase(key);
    m.maps.erase(key);
  }
  /// Changes in place, through the pointers the handles give out.
  void bumpInPlace(Model& m, const std::string& key) {
    setKey(b, key);
    if (int64_t* v = value.value()) {
      *v += 1000;
      m.values[key] += 1000;
    }
    if (auto* l = list.get()) {
      l->front() += "!";
      m.lists[key].front() += "!";
    }
    if (int64_t* v = map.get("a0")) {
      *v = -*v;
      m.maps[key]["a0"] = -m.maps[key]["a0"];
    }
  }
  KeyedStateBackend& b;
  ValueState<int64_t>& value;
  ListState<std::string>& list;
  MapState<std::string, int64_t>& map;
};

/// Every entry of `blobs` restored into a fresh backend equals `expected`, and nothing else is there.
void expectHolds(const std::map<int32_t, std::string>& blobs, const Model& expected,
                 const StateBackendOptions& into = {}) {
  KeyedStateBackend restored(kAll, kMaxP, blobs, into);
  States s(restored);
  EXPECT_EQ(s.value.size(), expected.values.size());
  EXPECT_EQ(s.list.size(), expected.lists.size());
  EXPECT_EQ(s.map.size(), expected.maps.size());
  for (const auto& [key, v] : expected.values) {
    setKey(restored, key);
    ASSERT_NE(s.value.value(), nullptr) << key;
    EXPECT_EQ(*s.value.value(), v) << key;
  }
  for (const auto& [key, l] : expected.lists) {
    setKey(restored, key);
    ASSERT_NE(s.list.get(), nullptr) << key;
    EXPECT_EQ(*s.list.get(), l) << key;
  }
  for (const auto& [key, m] : expected.maps) {
    setKey(restored, key);
    ASSERT_NE(s.map.entries(), nullptr) << key;
    const std::map<std::string, int64_t> got(s.map.entries()->begin(), s.map.entries()->end());
    EXPECT_EQ(got, m) << key;
  }
}

/// The mutations made while a snapshot is live: in-place changes, overwrites, erases and inserts of new
/// keys (enough to make groups grow their shards), in the snapshot's groups and others.
void mutate(States& s, Model& m, int round, int num_keys) {
  for (int i = round % 3; i < num_keys; i += 3) s.bumpInPlace(m, keyName(i));
  for (int i = round % 5; i < num_keys; i += 5) s.put(m, keyName(i), i * 7 + round);
  for (int i = round % 4; i < num_keys; i += 4) s.erase(m, keyName(i));
  for (int i = 0; i < num_keys; ++i) s.put(m, keyName(num_keys * (round + 1) + i), i);
}

TEST_P(AsyncSnapshotTest, WrittenBlobsHoldTheStateAtSnapshotTime) {
  KeyedStateBackend b(kAll, kMaxP, {}, options());
  States s(b);
  Model live;
  constexpr int kKeys = 20000;  // about 150 per key group: groups have split into several shards
  for (int i = 0; i < kKeys; ++i) s.put(live, keyName(i), i);
  const Model at_snapshot = live;
  std::unique_ptr<KeyedStateSnapshot> snap = b.snapshotAsync();
  mutate(s, live, 0, kKeys);
  // forEachKey changes every value in place.
  s.value.forEachKey([&](std::string_view key, int32_t, std::string_view, int64_t& v) {
    v *= 2;
    live.values[std::string(key)] *= 2;
  });
  const std::optional<std::map<int32_t, std::string>> blobs = writeBlobs(*snap);
  ASSERT_TRUE(blobs.has_value());
  expectHolds(*blobs, at_snapshot);
  expectHolds(*blobs, at_snapshot, options());  // round trip into the same backend
  snap.reset();
  expectHolds(b.snapshot(), live);  // the writes during the snapshot were all kept
}

TEST_P(AsyncSnapshotTest, OverlappingSnapshotsEachKeepTheirVersion) {
  KeyedStateBackend b(kAll, kMaxP, {}, options());
  States s(b);
  Model live;
  for (int i = 0; i < 3000; ++i) s.put(live, keyName(i), i);
  const Model first_model = live;
  auto first = b.snapshotAsync();
  mutate(s, live, 1, 3000);
  const Model second_model = live;
  auto second = b.snapshotAsync();
  mutate(s, live, 2, 3000);
  // Written in the other order, and the first one released before the second is written.
  auto first_blobs = writeBlobs(*first);
  first.reset();
  mutate(s, live, 3, 3000);
  expectHolds(*first_blobs, first_model);
  expectHolds(*writeBlobs(*second), second_model);
  second.reset();
  expectHolds(b.snapshot(), live);
}

TEST(HeapSnapshotTest, AReleasedSnapshotStopsTheCopying) {
  KeyedStateBackend b(kAll, kMaxP);
  auto& v = b.getValueState(ValueStateDescriptor<int64_t>{"value"});
  setKey(b, "a");
  v.update(1);
  int64_t* before = v.value();
  EXPECT_EQ(v.value(), before);  // no snapshot: in place
  auto snap = b.snapshotAsync();
  int64_t* during = v.value();  // a live snapshot shares the entry: the write got a copy
  EXPECT_NE(during, before);
  *during = 2;
  EXPECT_EQ(v.value(), during);  // copied once, then in place
  const auto blobs = *writeBlobs(*snap);
  snap.reset();
  EXPECT_EQ(v.value(), during);  // released: no more copies
  Model m;
  m.values["a"] = 1;
  KeyedStateBackend restored(kAll, kMaxP, blobs);
  auto& rv = restored.getValueState(ValueStateDescriptor<int64_t>{"value"});
  setKey(restored, "a");
  ASSERT_NE(rv.value(), nullptr);
  EXPECT_EQ(*rv.value(), 1);
}

TEST_P(AsyncSnapshotTest, TimersAndRestoredStatesAreSnapshotToo) {
  KeyedStateBackend b(kAll, kMaxP, {}, options());
  States s(b);
  Model m;
  s.put(m, "a", 1);
  InternalTimerService& timers = b.getInternalTimerService("t");
  setKey(b, "a");
  timers.registerEventTimeTimer("", 10);
  const std::map<int32_t, std::string> before = b.snapshot();
  auto snap = b.snapshotAsync();
  setKey(b, "a");
  timers.registerEventTimeTimer("", 20);
  timers.deleteEventTimeTimer("", 10);
  EXPECT_TRUE(*writeBlobs(*snap) == before);

  // A restored state nobody registered is passed on, even when it is registered during the write-out.
  KeyedStateBackend restored(kAll, kMaxP, before, options());
  auto pending = restored.snapshotAsync();
  States registered(restored);
  setKey(restored, "a");
  registered.value.update(5);
  restored.getInternalTimerService("t");
  EXPECT_TRUE(*writeBlobs(*pending) == before);
}

TEST_P(AsyncSnapshotTest, ConcurrentWriteOutWhileTheTaskMutates) {
  KeyedStateBackend b(kAll, kMaxP, {}, options());
  States s(b);
  Model live;
  constexpr int kKeys = 4000;
  for (int i = 0; i < kKeys; ++i) s.put(live, keyName(i), i);
  for (int round = 0; round < 4; ++round) {
    const Model at_snapshot = live;
    std::shared_ptr<KeyedStateSnapshot> snap = b.snapshotAsync();
    std::optional<std::map<int32_t, std::string>> blobs;
    std::thread writer([&] {
      blobs = writeBlobs(*snap);
      snap.reset();  // released on the writer thread, as the task's async thread does
    });
    mutate(s, live, round, kKeys / 4);
    writer.join();
    ASSERT_TRUE(blobs.has_value());
    expectHolds(*blobs, at_snapshot);
  }
  expectHolds(b.snapshot(), live);
}

TEST_P(AsyncSnapshotTest, CancelledWriteOutStopsAndReleases) {
  KeyedStateBackend b(kAll, kMaxP, {}, options());
  States s(b);
  Model m;
  for (int i = 0; i < 100; ++i) s.put(m, keyName(i), i);
  auto snap = b.snapshotAsync();
  std::atomic<bool> cancelled{true};
  EXPECT_FALSE(writeBlobs(*snap, &cancelled).has_value());
}

// A full RocksDB snapshot is a native checkpoint of its own: a write-out still running after the task
// tore its backend down (a cancelled or failed task) reads the state of its barrier, and the files go
// with the snapshot, written or not (an aborted checkpoint's write-out never starts).
TEST(RocksDBAsyncSnapshotTest, AWriteOutOutlivesItsBackendAndLeavesNoFiles) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "sluice-async-snapshot-files";
  std::filesystem::remove_all(dir);
  StateBackendOptions o = optionsFor("rocksdb");
  o.local_directory = dir.string();
  std::unique_ptr<KeyedStateSnapshot> written;
  std::unique_ptr<KeyedStateSnapshot> dropped;
  Model at_snapshot;
  {
    KeyedStateBackend b(kAll, kMaxP, {}, o);
    States s(b);
    Model live;
    for (int i = 0; i < 2000; ++i) s.put(live, keyName(i), i);
    at_snapshot = live;
    written = b.snapshotAsync(nullptr, false);
    dropped = b.snapshotAsync(nullptr, false);
    mutate(s, live, 0, 2000);
  }
  EXPECT_FALSE(std::filesystem::is_empty(dir));
  const std::optional<std::map<int32_t, std::string>> blobs = writeBlobs(*written);
  ASSERT_TRUE(blobs.has_value());
  expectHolds(*blobs, at_snapshot);
  written.reset();
  dropped.reset();
  EXPECT_TRUE(std::filesystem::is_empty(dir));
  std::filesystem::remove_all(dir);
}

// The synchronous part of a full RocksDB snapshot writes the current key's cached value back first: a
// value changed through its pointer and not yet written back is in the snapshot, a change after it not.
TEST(RocksDBAsyncSnapshotTest, TheCachedCurrentValueIsInTheSnapshot) {
  KeyedStateBackend b(kAll, kMaxP, {}, optionsFor("rocksdb"));
  auto& v = b.getValueState(ValueStateDescriptor<int64_t>{"value"});
  setKey(b, "a");
  v.update(1);
  *v.value() = 2;
  auto snap = b.snapshotAsync();
  *v.value() = 3;
  setKey(b, "b");  // writes 3 back to RocksDB
  v.update(4);
  KeyedStateBackend restored(kAll, kMaxP, *writeBlobs(*snap));
  auto& rv = restored.getValueState(ValueStateDescriptor<int64_t>{"value"});
  setKey(restored, "a");
  ASSERT_NE(rv.value(), nullptr);
  EXPECT_EQ(*rv.value(), 2);
  setKey(restored, "b");
  EXPECT_EQ(rv.value(), nullptr);
}

/// A serializer that fails while `fail` is set: the async part's failure.
struct FlakySerializer {
  static inline std::atomic<bool> fail{false};
  static void serialize(const int64_t& v, DataOutputView& out) {
    if (fail.load()) throw std::runtime_error("disk full");
    TypeSerializer<int64_t>::serialize(v, out);
  }
  static int64_t deserialize(DataInputView& in) { return TypeSerializer<int64_t>::deserialize(in); }
};

TEST(HeapSnapshotTest, ASerializerFailureSurfacesInTheAsyncPartOnly) {
  KeyedStateBackend b(kAll, kMaxP);
  auto& v = b.getValueState(ValueStateDescriptor<int64_t, FlakySerializer>{"flaky"});
  setKey(b, "a");
  v.update(7);
  FlakySerializer::fail = true;
  auto snap = b.snapshotAsync();  // the synchronous part serializes nothing
  EXPECT_THROW(writeBlobs(*snap), std::runtime_error);
  FlakySerializer::fail = false;
  snap.reset();
  *v.value() = 8;
  KeyedStateBackend restored(kAll, kMaxP, b.snapshot());
  auto& rv = restored.getValueState(ValueStateDescriptor<int64_t, FlakySerializer>{"flaky"});
  setKey(restored, "a");
  ASSERT_NE(rv.value(), nullptr);
  EXPECT_EQ(*rv.value(), 8);
}

}  // namespace
}  // namespace sluice::runtime::state
