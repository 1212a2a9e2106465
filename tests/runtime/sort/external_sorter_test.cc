// ExternalSorter against std::stable_sort over the same records: random keys, a memory budget of a few
// kilobytes so that many runs spill (and, with a fan of 3, merge in passes); corrupt and truncated run
// files give an InputError naming the file; spill files are gone after close.

#include "runtime/sort/external_sorter.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "common/error.h"
#include "runtime/sort/object_sorter.h"

namespace sluice::runtime::sort {
namespace {

namespace fs = std::filesystem;

class ExternalSorterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / fmt::format("sluice-sort-test-{}", std::random_device{}());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  SorterOptions options(int64_t memory, int32_t fixed = -1, int32_t fan = 128) const {
    SorterOptions o;
    o.memory_bytes = memory;
    o.spill_dirs = {dir_.string()};
    o.fixed_key_length = fixed;
    o.max_fan = fan;
    o.owner = "test";
    return o;
  }
  // Files left under the test directory (the sorter's own directory and its runs).
  size_t filesLeft() const {
    size_t n = 0;
    for (const auto& e : fs::recursive_directory_iterator(dir_)) n += e.is_regular_file() ? 1 : 0;
    return n;
  }

  fs::path dir_;
};

using Record = std::pair<std::string, std::string>;

std::vector<Record> randomRecords(size_t n, bool fixed, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<Record> out;
  for (size_t i = 0; i < n; ++i) {
    std::string key;
    if (fixed) {
      // 10 bytes (as a key group and an 8-byte key), few distinct values so keys repeat.
      const uint32_t k = rng() % 97;
      key.assign(10, '\0');
      key[1] = static_cast<char>(k % 7);
      key[9] = static_cast<char>(k);
    } else {
      // 0..40 bytes over a small alphabet, including prefixes of each other and bytes >= 0x80.
      const size_t len = rng() % 41;
      for (size_t j = 0; j < len; ++j) key.push_back(static_cast<char>("ab\x00\xff"[rng() % 4]));
    }
    out.emplace_back(key, "v" + std::to_string(i));  // the value names the arrival: stability is visible
  }
  return out;
}

std::vector<Record> reference(std::vector<Record> in) {
  std::stable_sort(in.begin(), in.end(), [](const Record& a, const Record& b) {
    // Unsigned bytes, a prefix first: std::string's compare with char_traits<char> compares as unsigned char.
    return a.first.compare(b.first) < 0;
  });
  return in;
}

std::vector<Record> drain(ExternalSorter& s) {
  std::vector<Record> out;
  std::string_view k;
  std::string_view v;
  while (s.next(k, v)) out.emplace_back(std::string(k), std::string(v));
  return out;
}

void expectSorted(ExternalSorter& s, const std::vector<Record>& in) {
  for (const Record& r : in) s.add(r.first, r.second);
  s.finish();
  const std::vector<Record> got = drain(s);
  const std::vector<Record> want = reference(in);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(got[i], want[i]) << "at " << i;
  }
}

TEST_F(ExternalSorterTest, InMemoryMatchesStableSort) {
  ExternalSorter s(options(64 << 20));
  expectSorted(s, randomRecords(5000, false, 1));
  EXPECT_EQ(s.numSpilledRuns(), 0);
  EXPECT_EQ(s.bytesSpilled(), 0);
  EXPECT_EQ(s.numRecords(), 5000);
}

TEST_F(ExternalSorterTest, VariableKeysSpillManyRuns) {
  ExternalSorter s(options(4096));
  expectSorted(s, randomRecords(20000, false, 2));
  EXPECT_GT(s.numSpilledRuns(), 50);
  EXPECT_GT(s.bytesSpilled(), 0);
}

TEST_F(ExternalSorterTest, FixedKeysSpillManyRuns) {
  ExternalSorter s(options(4096, 10));
  expectSorted(s, randomRecords(20000, true, 3));
  EXPECT_GT(s.numSpilledRuns(), 50);
}

TEST_F(ExternalSorterTest, LongFixedKeysCompareTheirTail) {
  // Fixed keys of 24 bytes that differ only after byte 16.
  std::vector<Record> in;
  std::mt19937 rng(4);
  for (int i = 0; i < 3000; ++i) {
    std::string key(24, 'k');
    key[20] = static_cast<char>(rng() % 5);
    in.emplace_back(key, std::to_string(i));
  }
  ExternalSorter s(options(2048, 24));
  expectSorted(s, in);
}

TEST_F(ExternalSorterTest, MergesInPassesAboveTheFan) {
  ExternalSorter s(options(2048, -1, 3));
  expectSorted(s, randomRecords(8000, false, 5));
  EXPECT_GT(s.numSpilledRuns(), 20);
}

TEST_F(ExternalSorterTest, ResetTakesANewPhaseAndRemovesFiles) {
  ExternalSorter s(options(2048));
  for (const Record& r : randomRecords(2000, false, 6)) s.add(r.first, r.second);
  EXPECT_GT(filesLeft(), 0u);
  s.reset();
  EXPECT_EQ(filesLeft(), 0u);
  EXPECT_EQ(s.numRecords(), 0);
  expectSorted(s, randomRecords(3000, false, 7));
  s.close();
  EXPECT_EQ(filesLeft(), 0u);
  EXPECT_TRUE(fs::is_empty(dir_));
}

TEST_F(ExternalSorterTest, DestructorRemovesFilesMidway) {
  {
    ExternalSorter s(options(2048));
    for (const Record& r : randomRecords(2000, false, 8)) s.add(r.first, r.second);
    s.finish();
    std::string_view k;
    std::string_view v;
    ASSERT_TRUE(s.next(k, v));
    EXPECT_GT(filesLeft(), 0u);
  }
  EXPECT_TRUE(fs::is_empty(dir_));
}

// Spills runs, changes the first run file with `damage`, and expects reading them back to fail with an
// InputError naming that file.
template <typename Damage>
void expectCorruptRunError(const SorterOptions& o, Damage damage, const std::string& what) {
  ExternalSorter s(o);
  for (const Record& r : randomRecords(3000, false, 9)) s.add(r.first, r.second);
  ASSERT_GT(s.numSpilledRuns(), 2);
  const std::string run = s.spillDirectory() + "/run-0.spill";
  ASSERT_TRUE(fs::exists(run));
  damage(run);
  try {
    s.finish();
    std::string_view k;
    std::string_view v;
    while (s.next(k, v)) {
    }
    FAIL() << "a damaged run was read without an error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("corrupt sort spill file '" + run + "'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
  }
}

TEST_F(ExternalSorterTest, ChangedSpillFileIsAClearError) {
  expectCorruptRunError(
      options(4096),
      [](const std::string& path) {
        std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(40);
        const char x = 0x5a;
        f.write(&x, 1);
      },
      "checksum mismatch");
}

TEST_F(ExternalSorterTest, TruncatedSpillFileIsAClearError) {
  expectCorruptRunError(
      options(4096), [](const std::string& path) { fs::resize_file(path, fs::file_size(path) - 5); }, "truncated");
}

TEST_F(ExternalSorterTest, UnwritableSpillDirectoryNamesIt) {
  SorterOptions o = options(1024);
  o.spill_dirs = {"/proc/no-such-dir"};
  ExternalSorter s(o);
  try {
    for (const Record& r : randomRecords(200, false, 10)) s.add(r.first, r.second);
    FAIL() << "spilling into /proc worked";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("/proc/no-such-dir/sluice-sort-test-"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("io.tmp.dirs"), std::string::npos) << e.what();
  }
}

TEST_F(ExternalSorterTest, ObjectSorterKeepsTimestampsAndValues) {
  ObjectSorter<std::pair<std::string, int64_t>> s(options(1024));
  std::vector<std::pair<std::string, std::pair<std::string, int64_t>>> in;
  std::mt19937 rng(11);
  for (int64_t i = 0; i < 2000; ++i) {
    const std::string key(1, static_cast<char>('a' + rng() % 13));
    in.push_back({key, {key, i}});
    s.add(key, {key, i}, i * 10);
  }
  s.finish();
  std::stable_sort(in.begin(), in.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::pair<std::string, int64_t>> values;
  std::vector<int64_t> ts;
  while (s.next(values, ts, 7)) {
  }
  ASSERT_EQ(values.size(), in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    EXPECT_EQ(values[i], in[i].second);
    EXPECT_EQ(ts[i], in[i].second.second * 10);
  }
  EXPECT_GT(s.sorter().numSpilledRuns(), 0);
}

}  // namespace
}  // namespace sluice::runtime::sort
