// HeapStateTable (the heap backend's flat, versioned copy-on-write table) against a std::map model:
// random inserts, in-place writes, erases and iterations, with snapshots frozen, read and released while
// the table changes; a snapshot must hold exactly the model as of its freeze.
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/state/heap_state_table.h"
#include "runtime/state/keyed_state.h"

namespace sluice::runtime::state {
namespace {

/// (key group, key, namespace) -> value: the model.
using Model = std::map<std::tuple<int32_t, std::string, std::string>, int64_t>;

/// Counts the copies copy-on-write makes.
struct CountingCopy {
  static inline int64_t copies = 0;
  int64_t operator()(const int64_t& v) const {
    ++copies;
    return v;
  }
};
using Table = HeapStateTable<int64_t, CountingCopy>;

constexpr int32_t kGroups = 4;
const KeyGroupRange kRange = KeyGroupRange::of(10, 10 + kGroups - 1);

template <typename View>
Model contents(const View& t) {
  Model m;
  for (int32_t g = kRange.start; g <= kRange.end; ++g) {
    size_t n = 0;
    t.forEach(g, [&](const internal::StateKey& k, const int64_t& v) {
      EXPECT_TRUE(m.emplace(std::make_tuple(g, std::string(k.key()), std::string(k.ns())), v).second)
          << "entry seen twice: " << k.key();
      ++n;
    });
    EXPECT_EQ(n, t.groupSize(g));
  }
  return m;
}

struct Snapshot {
  std::unique_ptr<Table::Frozen> frozen;
  Model at_freeze;
};

TEST(HeapStateTableTest, RandomOperationsAgainstAModelWithSnapshots) {
  std::mt19937_64 rng(20261202);
  Table table(kRange);
  Model model;
  std::vector<Snapshot> snapshots;
  auto randomKey = [&](int keys) {
    const int32_t g = kRange.start + static_cast<int32_t>(rng() % kGroups);
    std::string key = "k" + std::to_string(rng() % static_cast<uint64_t>(keys));
    std::string ns = rng() % 4 == 0 ? std::string("ns") + std::to_string(rng() % 3) : std::string();
    return std::make_tuple(g, std::move(key), std::move(ns));
  };
  for (int step = 0; step < 60000; ++step) {
    // The key space grows and shrinks, so groups grow and their probe runs are erased through.
    const int keys = step % 20000 < 10000 ? 3000 : 300;
    const auto id = randomKey(keys);
    const int32_t g = std::get<0>(id);
    const std::string& key = std::get<1>(id);
    const std::string& ns = std::get<2>(id);
    const uint64_t op = rng() % 100;
    if (op < 40) {
      const auto v = static_cast<int64_t>(rng() % 1000);
      table.findOrInsert(g, key, ns, [] { return int64_t{0}; }) = v;
      model[id] = v;
    } else if (op < 65) {
      int64_t* got = table.find(g, key, ns);
      auto it = model.find(id);
      ASSERT_EQ(got != nullptr, it != model.end()) << key;
      if (got != nullptr) {
        ASSERT_EQ(*got, it->second);
        *got += 1;
        it->second += 1;
      }
    } else if (op < 95) {
      table.erase(g, key, ns);
      model.erase(id);
    } else if (op < 96) {
      // Changes every value of a group in place.
      table.forEachMutable(g, [&](const internal::StateKey& k, int64_t& v) {
        v = v % 1000 + 1;
        model[std::make_tuple(g, std::string(k.key()), std::string(k.ns()))] = v;
      });
    } else if (op < 97 && snapshots.size() < 3 && rng() % 8 == 0) {
      snapshots.push_back(Snapshot{table.freeze(), model});
    } else if (op >= 99 && rng() % 4 == 0 && !snapshots.empty()) {
      // Check and release a random live snapshot.
      const size_t i = rng() % snapshots.size();
      ASSERT_EQ(contents(*snapshots[i].frozen), snapshots[i].at_freeze) << "step " << step;
      snapshots.erase(snapshots.begin() + static_cast<std::ptrdiff_t>(i));
    }
    ASSERT_EQ(table.size(), model.size()) << "step " << step;
    if (step % 10000 == 0) {
      ASSERT_EQ(contents(table), model) << "step " << step;
    }
  }
  ASSERT_EQ(contents(table), model);
  for (auto& s : snapshots) ASSERT_EQ(contents(*s.frozen), s.at_freeze);
  snapshots.clear();
  // Released: the next freeze frees every retired entry.
  auto last = table.freeze();
  EXPECT_EQ(table.retiredForTesting(), 0u);
}

TEST(HeapStateTableTest, AWriteCopiesOnlyTheEntryItChanges) {
  Table table(kRange);
  for (int i = 0; i < 5000; ++i) table.findOrInsert(kRange.start, "k" + std::to_string(i), "", [] { return int64_t{1}; });
  CountingCopy::copies = 0;
  auto snap = table.freeze();
  EXPECT_EQ(CountingCopy::copies, 0);  // the synchronous part copies no entry
  *table.find(kRange.start, "k7", "") = 70;
  EXPECT_EQ(CountingCopy::copies, 1);
  *table.find(kRange.start, "k7", "") = 71;  // the copy is private: in place
  table.findOrInsert(kRange.start, "k8", "", [] { return int64_t{0}; }) = 80;
  table.erase(kRange.start, "k9", "");
  table.findOrInsert(kRange.start, "new", "", [] { return int64_t{5}; });
  EXPECT_EQ(CountingCopy::copies, 2);
  Model frozen = contents(*snap);
  EXPECT_EQ(frozen.size(), 5000u);
  EXPECT_EQ((frozen[std::make_tuple(kRange.start, std::string("k7"), std::string())]), 1);
  EXPECT_EQ((frozen[std::make_tuple(kRange.start, std::string("k9"), std::string())]), 1);
  EXPECT_EQ(frozen.count(std::make_tuple(kRange.start, std::string("new"), std::string())), 0u);
  snap.reset();
  CountingCopy::copies = 0;
  *table.find(kRange.start, "k10", "") = 3;
  EXPECT_EQ(CountingCopy::copies, 0);  // released: no more copies
}

TEST(HeapStateTableTest, ASnapshotReadOnAnotherThreadWhileTheTableChanges) {
  Table table(kRange);
  Model model;
  for (int i = 0; i < 20000; ++i) {
    const int32_t g = kRange.start + i % kGroups;
    table.findOrInsert(g, "k" + std::to_string(i), "", [] { return int64_t{0}; }) = i;
    model[std::make_tuple(g, "k" + std::to_string(i), std::string())] = i;
  }
  for (int round = 0; round < 4; ++round) {
    std::unique_ptr<Table::Frozen> snap = table.freeze();
    const Model expected = model;
    Model seen;
    std::thread reader([&] {
      seen = contents(*snap);
      snap.reset();  // released on the reading thread, as the checkpoint thread does
    });
    for (int i = round; i < 30000; i += 3) {
      const int32_t g = kRange.start + i % kGroups;
      const std::string key = "k" + std::to_string(i);
      if (i % 2 == 0) {
        table.erase(g, key, "");
        model.erase(std::make_tuple(g, key, std::string()));
      } else {
        table.findOrInsert(g, key, "", [] { return int64_t{0}; }) += 7;
        model[std::make_tuple(g, key, std::string())] += 7;
      }
    }
    reader.join();
    EXPECT_EQ(seen, expected) << "round " << round;
  }
  EXPECT_EQ(contents(table), model);
}

TEST(HeapStateTableTest, ASnapshotOutlivesItsTable) {
  auto table = std::make_unique<Table>(kRange);
  table->findOrInsert(kRange.start, "a", "", [] { return int64_t{1}; });
  table->findOrInsert(kRange.start, "b", "", [] { return int64_t{2}; });
  auto snap = table->freeze();
  *table->find(kRange.start, "a", "") = 10;
  table->erase(kRange.start, "b", "");
  table.reset();
  const Model m = contents(*snap);
  EXPECT_EQ(m.size(), 2u);
  EXPECT_EQ((m.at(std::make_tuple(kRange.start, std::string("a"), std::string()))), 1);
  EXPECT_EQ((m.at(std::make_tuple(kRange.start, std::string("b"), std::string()))), 2);
}

}  // namespace
}  // namespace sluice::runtime::state
