// The RocksDB keyed state backend beyond the shared suite: its write-back cache, canonical snapshots
// equal to the heap's, state larger than the write buffer, rescaling, and its local directory.
#include <filesystem>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "common/config.h"
#include "common/hash.h"
#include "runtime/state/keyed_state_backend.h"
#include "runtime/state/state_redistribution.h"
#include "runtime/state/stream_operator_state_context.h"

namespace sluice::runtime::state {
namespace {

constexpr int32_t kMaxP = 128;
const KeyGroupRange kAll = KeyGroupRange::of(0, kMaxP - 1);

int32_t groupOf(std::string_view key, int32_t max_p = kMaxP) { return assignToKeyGroup(hashBytes(key), max_p); }

std::string keyName(int i) {
  std::string s = "k";
  s += std::to_string(i);
  return s;
}

StateBackendOptions rocks(const std::string& name) {
  StateBackendOptions o;
  o.type = StateBackendType::kRocksDB;
  o.local_directory = ::testing::TempDir();
  o.instance_name = name;
  return o;
}

StateBackendOptions heap() { return StateBackendOptions{}; }

using Sum = ReducingStateDescriptor<int64_t>;
Sum sumDesc() { return Sum{"sum", [](const int64_t& a, const int64_t& b) { return a + b; }}; }

// Keys k0..k{n-1}: value i, list [i, -i], map {i: i*i, i+1000: 7} (two user keys, so the canonical map
// order matters), sum 2i in namespace "w".
void writeMixed(KeyedStateBackend& b, int n) {
  auto& value = b.getValueState(ValueStateDescriptor<int64_t>{"value"});
  auto& list = b.getListState(ListStateDescriptor<int32_t>{"list"});
  auto& map = b.getMapState(MapStateDescriptor<int32_t, int64_t>{"map"});
  auto& sum = b.getReducingState(sumDesc());
  sum.setCurrentNamespace("w");
  for (int i = 0; i < n; ++i) {
    const std::string key = keyName(i);
    b.setCurrentKey(key, groupOf(key, b.maxParallelism()));
    value.update(i);
    list.add(i);
    list.add(-i);
    map.put(i + 1000, 7);
    map.put(i, int64_t{i} * i);
    sum.add(i);
    sum.add(i);
  }
}

void checkMixed(KeyedStateBackend& b, int n) {
  auto& value = b.getValueState(ValueStateDescriptor<int64_t>{"value"});
  auto& list = b.getListState(ListStateDescriptor<int32_t>{"list"});
  auto& map = b.getMapState(MapStateDescriptor<int32_t, int64_t>{"map"});
  auto& sum = b.getReducingState(sumDesc());
  sum.setCurrentNamespace("w");
  size_t expected = 0;
  for (int i = 0; i < n; ++i) {
    const std::string key = keyName(i);
    const int32_t g = groupOf(key, b.maxParallelism());
    if (!b.keyGroupRange().contains(g)) continue;
    ++expected;
    b.setCurrentKey(key, g);
    ASSERT_NE(value.value(), nullptr) << key;
    EXPECT_EQ(*value.value(), i);
    EXPECT_EQ(*list.get(), (std::vector<int32_t>{i, -i}));
    EXPECT_EQ(*map.get(i), int64_t{i} * i);
    EXPECT_EQ(*map.get(i + 1000), 7);
    EXPECT_EQ(map.entries()->size(), 2u);
    EXPECT_EQ(*sum.get(), 2 * i);
  }
  EXPECT_EQ(value.size(), expected);
  EXPECT_EQ(map.size(), expected);
  EXPECT_EQ(sum.size(), expected);
}

TEST(RocksDBStateTest, ValuePointerChangedInPlaceIsWrittenBack) {
  KeyedStateBackend b(kAll, kMaxP, {}, rocks("inplace"));
  auto& count = b.getValueState(ValueStateDescriptor<int64_t>{"count"});
  b.setCurrentKey("a", groupOf("a"));
  count.update(5);
  *count.value() += 10;  // 15, only in the cache
  b.setCurrentKey("b", groupOf("b"));
  count.valueOrInsert(1) *= 3;  // 3
  b.setCurrentKey("a", groupOf("a"));
  ASSERT_NE(count.value(), nullptr);
  EXPECT_EQ(*count.value(), 15);
  *count.value() = 40;  // changed, still cached when the snapshot is taken
  count.setCurrentNamespace("w");
  EXPECT_EQ(count.value(), nullptr);
  count.setCurrentNamespace("");

  KeyedStateBackend restored(kAll, kMaxP, b.snapshot(), heap());
  auto& r = restored.getValueState(ValueStateDescriptor<int64_t>{"count"});
  restored.setCurrentKey("a", groupOf("a"));
  EXPECT_EQ(*r.value(), 40);
  restored.setCurrentKey("b", groupOf("b"));
  EXPECT_EQ(*r.value(), 3);

  // Cleared in the cache, then the key changes: the entry is deleted from RocksDB.
  b.setCurrentKey("a", groupOf("a"));
  count.clear();
  b.setCurrentKey("b", groupOf("b"));
  EXPECT_EQ(count.size(), 1u);
  b.setCurrentKey("a", groupOf("a"));
  EXPECT_EQ(count.value(), nullptr);
}

TEST(RocksDBStateTest, ForEachKeyWritesChangedValuesBack) {
  KeyedStateBackend b(kAll, kMaxP, {}, rocks("foreach"));
  auto& count = b.getValueState(ValueStateDescriptor<int64_t>{"count"});
  auto& map = b.getMapState(MapStateDescriptor<std::string, int32_t>{"map"});
  for (int i = 0; i < 10; ++i) {
    const std::string key = keyName(i);
    b.setCurrentKey(key, groupOf(key));
    count.update(i);
    map.put("x", i);
    map.put("y", 1);
  }
  int64_t seen_sum = 0;
  count.forEachKey([&](std::string_view key, int32_t kg, std::string_view ns, int64_t& v) {
    EXPECT_EQ(kg, groupOf(key));
    EXPECT_EQ(ns, "");
    seen_sum += v;
    v *= 2;
  });
  EXPECT_EQ(seen_sum, 45);
  map.forEachKey([&](std::string_view, int32_t, std::string_view, auto& entries) {
    entries.erase("y");
    entries["z"] = 9;
  });
  for (int i = 0; i < 10; ++i) {
    const std::string key = keyName(i);
    b.setCurrentKey(key, groupOf(key));
    EXPECT_EQ(*count.value(), 2 * i);
    EXPECT_EQ(*map.get("x"), i);
    EXPECT_FALSE(map.contains("y"));
    EXPECT_EQ(*map.get("z"), 9);
  }
}

TEST(RocksDBStateTest, SnapshotsAreTheSameBytesAsTheHeapsAndRestoreAcrossBackends) {
  KeyedStateBackend h(kAll, kMaxP, {}, heap());
  KeyedStateBackend r(kAll, kMaxP, {}, rocks("same-bytes"));
  writeMixed(h, 300);
  writeMixed(r, 300);
  const auto heap_blobs = h.snapshot();
  EXPECT_TRUE(r.snapshot() == heap_blobs);

  // heap -> RocksDB -> heap.
  KeyedStateBackend into_rocks(kAll, kMaxP, heap_blobs, rocks("from-heap"));
  checkMixed(into_rocks, 300);
  const auto rocks_blobs = into_rocks.snapshot();
  EXPECT_TRUE(rocks_blobs == heap_blobs);
  KeyedStateBackend back(kAll, kMaxP, rocks_blobs, heap());
  checkMixed(back, 300);
  EXPECT_TRUE(back.snapshot() == heap_blobs);
}

TEST(RocksDBStateTest, StateLargerThanTheWriteBufferIsFlushedToSstFilesAndReadBack) {
  StateBackendOptions o = rocks("large");
  o.write_buffer_size = 64 << 10;  // RocksDB's smallest
  o.block_cache_size = 256 << 10;
  KeyedStateBackend b(kAll, kMaxP, {}, o);
  auto& value = b.getValueState(ValueStateDescriptor<std::string>{"payload"});
  constexpr int kKeys = 20000;  // about 20000 * (8 + 64) bytes = 1.4 MB, 22 write buffers
  auto payload = [](int i) { return std::string(60, static_cast<char>('a' + i % 26)) + std::to_string(i % 1000); };
  for (int i = 0; i < kKeys; ++i) {
    const std::string key = keyName(i);
    b.setCurrentKey(key, groupOf(key));
    value.update(payload(i));
  }
  EXPECT_GT(b.rocksDBStore()->memoryUsage().live_sst_bytes, 0u);
  for (int i = 0; i < kKeys; i += 7) {
    const std::string key = keyName(i);
    b.setCurrentKey(key, groupOf(key));
    ASSERT_NE(value.value(), nullptr) << key;
    EXPECT_EQ(*value.value(), payload(i));
  }
  EXPECT_EQ(value.size(), static_cast<size_t>(kKeys));
  KeyedStateBackend restored(kAll, kMaxP, b.snapshot(), heap());
  auto& r = restored.getValueState(ValueStateDescriptor<std::string>{"payload"});
  EXPECT_EQ(r.size(), static_cast<size_t>(kKeys));
  restored.setCurrentKey(keyName(12345), groupOf(keyName(12345)));
  EXPECT_EQ(*r.value(), payload(12345));
}

TEST(RocksDBStateTest, StateMuchLargerThanTheSlotMemoryStaysWithinItsBudget) {
  // 2 MiB for the slot: a write buffer manager of 2 * 2 * 0.5 / 3 = 0.67 MiB charged to a block cache of
  // (3 - 0.5) / 3 * 2 = 1.67 MiB (Flink's RocksDBMemoryControllerUtils), against ~15 MB of state.
  StateBackendOptions o = rocks("bounded");
  o.shared_memory_bytes = 2u << 20;
  o.memory_scope = "test-bounded";
  o.use_bloom_filter = true;
  KeyedStateBackend b(kAll, kMaxP, {}, o);
  auto& value = b.getValueState(ValueStateDescriptor<std::string>{"payload"});
  constexpr int kKeys = 60000;
  // 240 incompressible bytes per key (~15 MB in all): SST files cannot compress it below the budget.
  auto payload = [](int i) {
    std::string p;
    uint64_t x = static_cast<uint64_t>(i) * 0x9E3779B97F4A7C15ull + 1;
    for (int j = 0; j < 240; ++j) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      p.push_back(static_cast<char>(x & 0xff));
    }
    return p;
  };
  uint64_t peak_memtables = 0;
  for (int i = 0; i < kKeys; ++i) {
    const std::string key = keyName(i);
    b.setCurrentKey(key, groupOf(key));
    value.update(payload(i));
    if (i % 1000 == 0) peak_memtables = std::max(peak_memtables, b.rocksDBStore()->memoryUsage().memtable_bytes);
  }
  const RocksDBStore::MemoryUsage m = b.rocksDBStore()->memoryUsage();
  EXPECT_EQ(m.block_cache_capacity, static_cast<uint64_t>((3.0 - 0.5) * (2u << 20) / 3.0));
  // The write buffer manager flushes at its limit; one memtable of headroom while a flush runs.
  EXPECT_LE(peak_memtables, 2u * (2u << 20)) << peak_memtables;
  // RocksDB's own count of the live SST files: a compaction deletes files while a directory listing runs.
  const uint64_t sst_bytes = b.rocksDBStore()->memoryUsage().live_sst_bytes;
  EXPECT_GT(sst_bytes, 5u * (2u << 20)) << "the state is not larger than the memory";
  for (int i = 0; i < kKeys; i += 97) {
    const std::string key = keyName(i);
    b.setCurrentKey(key, groupOf(key));
    ASSERT_NE(value.value(), nullptr) << key;
    ASSERT_EQ(*value.value(), payload(i));
  }
  // The cache is not strict (Flink's strict_capacity_limit false): pinned L0 index and filter blocks and
  // the memtables' reservations may pass its capacity a little, never by the size of the state.
  EXPECT_LE(b.rocksDBStore()->memoryUsage().block_cache_usage, 3u * (1u << 20));
  EXPECT_EQ(value.size(), static_cast<size_t>(kKeys));
}

TEST(RocksDBStateTest, MemoryOptionsFollowFlinksManagedMemoryRules) {
  Configuration c;
  c.set("state.backend.type", "rocksdb");
  // Unset: Flink's 128 mb of managed memory for local execution, one slot.
  EXPECT_EQ(StateBackendOptions::fromConfiguration(c).shared_memory_bytes, 128u << 20);
  c.set("taskmanager.memory.managed.size", "256 mb");
  c.set("taskmanager.numberOfTaskSlots", "2");
  const StateBackendOptions a = StateBackendOptions::fromConfiguration(c, 0);
  const StateBackendOptions b = StateBackendOptions::fromConfiguration(c, 3);
  EXPECT_EQ(a.shared_memory_bytes, 128u << 20);
  EXPECT_NE(a.memory_scope, b.memory_scope);  // slot 0 and slot 1
  EXPECT_EQ(a.memory_scope, StateBackendOptions::fromConfiguration(c, 2).memory_scope);
  c.set("state.backend.rocksdb.memory.fixed-per-slot", "10 mb");
  EXPECT_EQ(StateBackendOptions::fromConfiguration(c).shared_memory_bytes, 10u << 20);
  Configuration unmanaged;
  unmanaged.set("state.backend.rocksdb.memory.managed", "false");
  unmanaged.set("state.backend.rocksdb.block.cache-size", "1 mb");
  const StateBackendOptions u = StateBackendOptions::fromConfiguration(unmanaged);
  EXPECT_EQ(u.shared_memory_bytes, 0u);
  EXPECT_EQ(u.block_cache_size, 1u << 20);
  Configuration fraction;
  fraction.set("taskmanager.memory.flink.size", "1 gb");
  EXPECT_EQ(StateBackendOptions::fromConfiguration(fraction).shared_memory_bytes,
            static_cast<uint64_t>(0.4 * (1ull << 30)));
  Configuration bad;
  bad.set("state.backend.rocksdb.memory.write-buffer-ratio", "1.5");
  try {
    StateBackendOptions::fromConfiguration(bad);
    FAIL() << "no ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("state.backend.rocksdb.memory.write-buffer-ratio"), std::string::npos)
        << e.what();
  }
}

TEST(RocksDBStateTest, RescaleTwoToOneAndOneToTwo) {
  auto range = [](int p, int i) { return KeyGroupRangeAssignment::computeKeyGroupRangeForOperatorIndex(kMaxP, p, i); };
  // 2 -> 1: each old subtask writes only the keys it owns.
  checkpoint::OperatorSubtaskState two[2];
  for (int s = 0; s < 2; ++s) {
    KeyedStateBackend b(range(2, s), kMaxP, {}, rocks("two"));
    auto& value = b.getValueState(ValueStateDescriptor<int64_t>{"value"});
    for (int i = 0; i < 100; ++i) {
      const std::string key = keyName(i);
      if (!range(2, s).contains(groupOf(key))) continue;
      b.setCurrentKey(key, groupOf(key));
      value.update(i);
    }
    two[s].keyed = b.snapshot();
  }
  KeyedStateBackend one(kAll, kMaxP, selectKeyGroups({&two[0], &two[1]}, kAll), rocks("one"));
  auto& value = one.getValueState(ValueStateDescriptor<int64_t>{"value"});
  EXPECT_EQ(value.size(), 100u);
  int64_t sum = 0;
  value.forEachKey([&](std::string_view, int32_t, std::string_view, int64_t& v) { sum += v; });
  EXPECT_EQ(sum, 4950);

  // 1 -> 2: each new subtask gets exactly its own groups.
  writeMixed(one, 100);
  checkpoint::OperatorSubtaskState whole;
  whole.keyed = one.snapshot();
  size_t total = 0;
  for (int s = 0; s < 2; ++s) {
    KeyedStateBackend half(range(2, s), kMaxP, selectKeyGroups({&whole}, range(2, s)), rocks("half"));
    checkMixed(half, 100);
    total += half.getValueState(ValueStateDescriptor<int64_t>{"value"}).size();
  }
  EXPECT_EQ(total, 100u);
}

TEST(RocksDBStateTest, TwoBytePrefixAboveMaxParallelism128) {
  constexpr int32_t kBigMaxP = 1024;
  const KeyGroupRange upper = KeyGroupRange::of(512, 1023);
  KeyedStateBackend h(KeyGroupRange::of(0, kBigMaxP - 1), kBigMaxP, {}, heap());
  writeMixed(h, 400);
  const auto blobs = h.snapshot();
  KeyedStateBackend r(upper, kBigMaxP, blobs, rocks("big"));
  checkMixed(r, 400);
  std::map<int32_t, std::string> upper_blobs;
  for (const auto& [g, blob] : blobs) {
    if (upper.contains(g)) upper_blobs.emplace(g, blob);
  }
  EXPECT_TRUE(r.snapshot() == upper_blobs);
}

TEST(RocksDBStateTest, ContextChoosesTheBackendFromConfigurationAndRemovesItsDirectory) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "sluice-rocks-context";
  std::filesystem::remove_all(dir);
  Configuration config;
  config.set("state.backend.type", "rocksdb");
  config.set("io.tmp.dirs", "/nonexistent-a," + dir.string());
  const StateBackendOptions o = StateBackendOptions::fromConfiguration(config, 1);
  EXPECT_EQ(o.type, StateBackendType::kRocksDB);
  EXPECT_EQ(o.local_directory, dir.string());
  std::string db_dir;
  {
    StreamOperatorStateContext ctx("op/1", kAll, kMaxP, nullptr, o);
    KeyedStateBackend& b = ctx.keyedStateBackend();
    ASSERT_EQ(b.backendType(), StateBackendType::kRocksDB);
    db_dir = b.rocksDBStore()->directory();
    EXPECT_EQ(std::filesystem::path(db_dir).parent_path(), dir);
    EXPECT_EQ(std::filesystem::path(db_dir).filename().string().rfind("sluice-rocksdb-op_1-kg0-127-", 0), 0u)
        << db_dir;
    EXPECT_TRUE(std::filesystem::exists(db_dir));
  }
  EXPECT_FALSE(std::filesystem::exists(db_dir));

  Configuration defaults;
  EXPECT_EQ(StateBackendOptions::fromConfiguration(defaults).type, StateBackendType::kHashMap);
}

TEST(RocksDBStateTest, UnwritableLocalDirectoryIsAConfigErrorNamingTheKey) {
  StateBackendOptions o = rocks("bad");
  o.local_directory = "/proc/sluice-no-such-dir";
  try {
    KeyedStateBackend b(kAll, kMaxP, {}, o);
    FAIL() << "no ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("io.tmp.dirs"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("/proc/sluice-no-such-dir"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace sluice::runtime::state
