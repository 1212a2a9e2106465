// RowBatchSorter against std::stable_sort over the same rows: keys of an integral and a string column
// (with NULLs), key groups first, many spilled runs; rows come back whole with their RowKinds.

#include "runtime/sort/row_batch_sorter.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "common/error.h"

namespace sluice::runtime::sort {
namespace {

using types::LogicalType;
using types::RowBatch;
using types::RowKind;

struct Row {
  int32_t group;
  std::optional<int64_t> id;
  std::optional<std::string> name;
  double score;
  RowKind kind;
  int64_t arrival;
};

types::RowType schema() {
  types::RowType t;
  t.names = {"id", "name", "score", "arrival"};
  t.types = {LogicalType::bigint(), LogicalType::string(), LogicalType::doubleType(), LogicalType::bigint()};
  return t;
}

std::vector<Row> randomRows(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<Row> rows;
  const RowKind kinds[] = {RowKind::kInsert, RowKind::kUpdateBefore, RowKind::kUpdateAfter, RowKind::kDelete};
  for (size_t i = 0; i < n; ++i) {
    Row r;
    r.group = static_cast<int32_t>(rng() % 4);
    if (rng() % 10 != 0) r.id = static_cast<int64_t>(rng() % 9) - 4;  // negative ids too
    if (rng() % 10 != 0) r.name = std::string(rng() % 3, 'x') + static_cast<char>('a' + rng() % 3);
    r.score = static_cast<double>(rng() % 100) / 7.0;
    r.kind = kinds[rng() % 4];
    r.arrival = static_cast<int64_t>(i);
    rows.push_back(r);
  }
  return rows;
}

RowBatch toBatch(const std::vector<Row>& rows, size_t from, size_t to) {
  RowBatch b(schema());
  for (size_t i = from; i < to; ++i) {
    const Row& r = rows[i];
    if (r.id) b.column(0).appendLong(*r.id);
    else b.column(0).appendNull();
    if (r.name) b.column(1).appendString(*r.name);
    else b.column(1).appendNull();
    b.column(2).appendDouble(r.score);
    b.column(3).appendLong(r.arrival);
    b.kinds().push_back(r.kind);
  }
  return b;
}

// The documented key order: key group, then per column NULL first, integers ascending, strings by
// (length, bytes); ties in arrival order.
auto keyOf(const Row& r, bool with_name) {
  return std::make_tuple(r.group, r.id.has_value(), r.id.value_or(0), with_name && r.name.has_value(),
                         with_name && r.name ? r.name->size() : 0, with_name && r.name ? *r.name : std::string());
}

void runAndCompare(bool with_name, int64_t memory, size_t n, uint32_t seed) {
  const std::vector<Row> rows = randomRows(n, seed);
  SorterOptions o;
  o.memory_bytes = memory;
  o.owner = "rows";
  RowBatchSorter sorter(schema(), with_name ? std::vector<int>{0, 1} : std::vector<int>{0}, true, o);
  for (size_t from = 0; from < n; from += 100) {
    const size_t to = std::min(n, from + 100);
    std::vector<int32_t> groups;
    for (size_t i = from; i < to; ++i) groups.push_back(rows[i].group);
    sorter.add(toBatch(rows, from, to), groups.data());
  }
  sorter.finish();
  std::vector<Row> want = rows;
  std::stable_sort(want.begin(), want.end(),
                   [&](const Row& a, const Row& b) { return keyOf(a, with_name) < keyOf(b, with_name); });
  size_t at = 0;
  RowBatch out;
  while (sorter.next(out, 64)) {
    ASSERT_LE(out.numRows(), 64u);
    for (size_t r = 0; r < out.numRows(); ++r, ++at) {
      ASSERT_LT(at, want.size());
      const Row& w = want[at];
      ASSERT_EQ(out.column(3).getLong(r), w.arrival) << "at " << at;
      EXPECT_EQ(out.kind(r), w.kind);
      EXPECT_EQ(out.column(0).isNull(r), !w.id.has_value());
      if (w.id) {
        EXPECT_EQ(out.column(0).getLong(r), *w.id);
      }
      EXPECT_EQ(out.column(1).isNull(r), !w.name.has_value());
      if (w.name) {
        EXPECT_EQ(out.column(1).getString(r), *w.name);
      }
      EXPECT_EQ(out.column(2).getDouble(r), w.score);
    }
  }
  EXPECT_EQ(at, n);
  if (memory < 10000) {
    EXPECT_GT(sorter.sorter().numSpilledRuns(), 10);
  }
  sorter.close();
}

TEST(RowBatchSorterTest, FixedLengthKeysMatchStableSort) { runAndCompare(false, 4096, 5000, 1); }
TEST(RowBatchSorterTest, StringKeysMatchStableSort) { runAndCompare(true, 4096, 5000, 2); }
TEST(RowBatchSorterTest, InMemory) { runAndCompare(true, 64 << 20, 3000, 3); }

TEST(RowBatchSorterTest, KeyColumnOutOfRangeIsAUserError) {
  EXPECT_THROW(RowBatchSorter(schema(), {7}, false, SorterOptions{}), sluice::UserError);
}

}  // namespace
}  // namespace sluice::runtime::sort
