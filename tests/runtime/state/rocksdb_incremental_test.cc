// RocksDB incremental checkpoints at the backend level: round trip, reuse of unchanged SST files with
// only changed data uploaded, restore at another parallelism and into the heap backend, restored
// states nobody registers, and missing, torn or corrupt files.
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "common/error.h"
#include "common/hash.h"
#include "runtime/state/keyed_state_backend.h"

namespace sluice::runtime::state {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using checkpoint::IncrementalKeyedStateHandle;

constexpr int32_t kMaxP = 128;
const KeyGroupRange kAll = KeyGroupRange::of(0, kMaxP - 1);

int32_t groupOf(std::string_view key) { return assignToKeyGroup(hashBytes(key), kMaxP); }
KeyGroupRange rangeOf(int p, int i) { return KeyGroupRangeAssignment::computeKeyGroupRangeForOperatorIndex(kMaxP, p, i); }

/// A job directory with shared/ and taskowned/ (FsCheckpointStorage creates them in a job).
class JobDir {
 public:
  JobDir() {
    root_ = fs::path(::testing::TempDir()) / fmt::format("sluice-incr-{}", ::getpid());
    fs::remove_all(root_);
    fs::create_directories(root_ / "shared");
    fs::create_directories(root_ / "taskowned");
  }
  ~JobDir() {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  IncrementalCheckpointTarget target(int64_t id) const {
    return IncrementalCheckpointTarget{(root_ / "shared").string(), (root_ / "taskowned").string(), id};
  }
  fs::path root_;
};

StateBackendOptions rocks() {
  StateBackendOptions o;
  o.type = StateBackendType::kRocksDB;
  o.local_directory = ::testing::TempDir();
  o.instance_name = "incr";
  return o;
}

using Sum = ReducingStateDescriptor<int64_t>;
Sum sumDesc() { return Sum{"sum", [](const int64_t& a, const int64_t& b) { return a + b; }}; }

// Key "k<i>" (only those in the backend's range): value i * mult, map {i: 1, i + 1: 2}, sum i in ns "w".
void write(KeyedStateBackend& b, int from, int to, int64_t mult) {
  auto& value = b.getValueState(ValueStateDescriptor<int64_t>{"value"});
  auto& map = b.getMapState(MapStateDescriptor<int32_t, int64_t>{"map"});
  auto& sum = b.getReducingState(sumDesc());
  sum.setCurrentNamespace("w");
  for (int i = from; i < to; ++i) {
    const std::string key = "k" + std::to_string(i);
    if (!b.keyGroupRange().contains(groupOf(key))) continue;
    b.setCurrentKey(key, groupOf(key));
    value.update(i * mult);
    map.put(i, 1);
    map.put(i + 1, 2);
    sum.clear();
    sum.add(i);
  }
}

// What write(0, n, 1) then write(0, changed, mult) leaves, for the keys in the range.
void check(KeyedStateBackend& b, int n, int changed, int64_t mult) {
  auto& value = b.getValueState(ValueStateDescriptor<int64_t>{"value"});
  auto& map = b.getMapState(MapStateDescriptor<int32_t, int64_t>{"map"});
  auto& sum = b.getReducingState(sumDesc());
  sum.setCurrentNamespace("w");
  size_t expected = 0;
  for (int i = 0; i < n; ++i) {
    const std::string key = "k" + std::to_string(i);
    if (!b.keyGroupRange().contains(groupOf(key))) continue;
    ++expected;
    b.setCurrentKey(key, groupOf(key));
    ASSERT_NE(value.value(), nullptr) << key;
    ASSERT_EQ(*value.value(), i < changed ? i * mult : i) << key;
    ASSERT_EQ(*map.get(i + 1), 2) << key;
    ASSERT_EQ(*sum.get(), i) << key;
  }
  EXPECT_EQ(value.size(), expected);
  EXPECT_EQ(map.size(), expected);
}

std::set<std::string> sharedPaths(const IncrementalKeyedStateHandle& h) {
  std::set<std::string> out;
  for (const auto& f : h.shared_files) out.insert(f.path);
  return out;
}

TEST(RocksDBIncrementalTest, SecondCheckpointReusesUnchangedSstFilesAndUploadsOnlyTheChange) {
  JobDir job;
  KeyedStateBackend b(kAll, kMaxP, {}, rocks());
  constexpr int kKeys = 20000;
  write(b, 0, kKeys, 1);
  const auto first = b.snapshotIncremental(job.target(1));
  ASSERT_TRUE(first.handle.has_value());
  const IncrementalKeyedStateHandle& h1 = *first.handle;
  EXPECT_TRUE(first.keyed.empty());  // no timers, nothing canonical
  EXPECT_EQ(h1.key_group_start, 0);
  EXPECT_EQ(h1.key_group_end, kMaxP - 1);
  EXPECT_FALSE(h1.shared_files.empty());
  EXPECT_EQ(h1.checkpointed_size, h1.fullSize());  // everything is new
  for (const auto& f : h1.shared_files) {
    EXPECT_EQ(fs::path(f.path).parent_path(), job.root_ / "shared");
    EXPECT_EQ(fs::file_size(f.path), f.size);
  }
  std::set<std::string> private_names;
  for (const auto& f : h1.private_files) private_names.insert(f.local_name.substr(0, f.local_name.find('-')));
  for (const char* name : {"CURRENT", "MANIFEST", "OPTIONS"}) EXPECT_EQ(private_names.count(name), 1u) << name;

  write(b, 0, 100, 3);  // 100 of 20000 keys change
  const auto second = b.snapshotIncremental(job.target(2));
  const IncrementalKeyedStateHandle& h2 = *second.handle;
  const std::set<std::string> p1 = sharedPaths(h1);
  uint64_t reused = 0, uploaded = 0;
  for (const auto& f : h2.shared_files) (p1.count(f.path) != 0 ? reused : uploaded) += f.size;
  for (const auto& f : h2.private_files) uploaded += f.size;
  EXPECT_GT(reused, 0u) << "no SST file of checkpoint 1 is referenced by checkpoint 2";
  EXPECT_EQ(h2.checkpointed_size, uploaded);
  EXPECT_LT(uploaded * 10, h2.fullSize()) << uploaded << " of " << h2.fullSize();

  // Each checkpoint restores to its own state.
  KeyedStateBackend r1(kAll, kMaxP, {}, rocks(), {h1});
  check(r1, kKeys, 0, 1);
  KeyedStateBackend r2(kAll, kMaxP, {}, rocks(), {h2});
  check(r2, kKeys, 100, 3);
  EXPECT_TRUE(r2.snapshot() == b.snapshot());
}

TEST(RocksDBIncrementalTest, RestoreAtAnotherParallelismAndIntoTheHeap) {
  JobDir job;
  constexpr int kKeys = 3000;
  std::vector<IncrementalKeyedStateHandle> two;
  std::map<int32_t, std::string> canonical;
  for (int s = 0; s < 2; ++s) {
    KeyedStateBackend b(rangeOf(2, s), kMaxP, {}, rocks());
    write(b, 0, kKeys, 1);
    write(b, 0, 500, 5);
    two.push_back(*b.snapshotIncremental(job.target(1)).handle);
    for (auto& [g, blob] : b.snapshot()) canonical.emplace(g, std::move(blob));
  }
  // 2 -> 1 and 2 -> 3 on RocksDB: the overlapping old databases are copied by key-group range.
  KeyedStateBackend one(kAll, kMaxP, {}, rocks(), two);
  check(one, kKeys, 500, 5);
  EXPECT_TRUE(one.snapshot() == canonical);
  size_t total = 0;
  for (int s = 0; s < 3; ++s) {
    KeyedStateBackend third(rangeOf(3, s), kMaxP, {}, rocks(), two);
    check(third, kKeys, 500, 5);
    total += third.getValueState(ValueStateDescriptor<int64_t>{"value"}).size();
  }
  EXPECT_EQ(total, static_cast<size_t>(kKeys));
  // Into the heap backend: converted by iterating, the same canonical bytes.
  KeyedStateBackend heap(kAll, kMaxP, {}, StateBackendOptions{}, two);
  check(heap, kKeys, 500, 5);
  EXPECT_TRUE(heap.snapshot() == canonical);
  // 1 -> 2 from the merged database's own incremental checkpoint.
  const IncrementalKeyedStateHandle merged = *one.snapshotIncremental(job.target(2)).handle;
  for (int s = 0; s < 2; ++s) {
    KeyedStateBackend half(rangeOf(2, s), kMaxP, {}, rocks(), {merged});
    check(half, kKeys, 500, 5);
  }
}

TEST(RocksDBIncrementalTest, RestoredStatesNobodyRegistersStayInSnapshots) {
  JobDir job;
  KeyedStateBackend b(kAll, kMaxP, {}, rocks());
  write(b, 0, 500, 1);
  const IncrementalKeyedStateHandle h = *b.snapshotIncremental(job.target(1)).handle;
  EXPECT_EQ(h.states, (std::map<std::string, uint8_t>{{"map", static_cast<uint8_t>(StateKind::kMap)},
                                                      {"sum", static_cast<uint8_t>(StateKind::kReducing)},
                                                      {"value", static_cast<uint8_t>(StateKind::kValue)}}));
  KeyedStateBackend r(kAll, kMaxP, {}, rocks(), {h});
  r.getValueState(ValueStateDescriptor<int64_t>{"value"});  // only one of the three
  EXPECT_TRUE(r.snapshot() == b.snapshot());
  const IncrementalKeyedStateHandle again = *r.snapshotIncremental(job.target(2)).handle;
  EXPECT_EQ(again.states, h.states);
  // Registered as another kind: the operator's error.
  KeyedStateBackend wrong(kAll, kMaxP, {}, rocks(), {h});
  EXPECT_THROW(wrong.getListState(ListStateDescriptor<int64_t>{"value"}), UserError);
}

std::string restoreError(const IncrementalKeyedStateHandle& h, StateBackendOptions o) {
  try {
    KeyedStateBackend r(kAll, kMaxP, {}, o, {h});
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no InputError";
  return "";
}

TEST(RocksDBIncrementalTest, MissingTornOrCorruptFileIsAnInputErrorNamingThePath) {
  JobDir job;
  KeyedStateBackend b(kAll, kMaxP, {}, rocks());
  write(b, 0, 2000, 1);
  const IncrementalKeyedStateHandle h = *b.snapshotIncremental(job.target(1)).handle;
  const std::string sst = h.shared_files.at(0).path;
  const std::string saved = sst + ".saved";
  fs::copy_file(sst, saved);
  for (const StateBackendOptions& o : {rocks(), StateBackendOptions{}}) {
    fs::resize_file(sst, h.shared_files[0].size / 2);
    EXPECT_THAT(restoreError(h, o), HasSubstr(sst));
    EXPECT_THAT(restoreError(h, o), HasSubstr("torn"));
    fs::remove(sst);
    EXPECT_THAT(restoreError(h, o), HasSubstr("'" + sst + "'"));
    EXPECT_THAT(restoreError(h, o), HasSubstr("missing"));
    fs::copy_file(saved, sst);
    {
      std::fstream f(sst, std::ios::in | std::ios::out | std::ios::binary);
      f.seekg(10);
      const char c = static_cast<char>(f.get());
      f.seekp(10);
      f.put(static_cast<char>(c ^ 0x5a));
    }
    EXPECT_THAT(restoreError(h, o), HasSubstr("corrupt"));
    fs::remove(sst);
    fs::copy_file(saved, sst);
  }
  KeyedStateBackend fine(kAll, kMaxP, {}, rocks(), {h});
  check(fine, 2000, 0, 1);
}

}  // namespace
}  // namespace sluice::runtime::state
