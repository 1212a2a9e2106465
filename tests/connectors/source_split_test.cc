// The SQL sources on the FLIP-27 interface: the splits their enumerators hand out.

#include <map>
#include <set>

#include <gtest/gtest.h>

#include "common/config.h"
#include "connectors/datagen_connector.h"
#include "connectors/filesystem_connector.h"
#include "test_util.h"

namespace sluice::connectors {
namespace {

using testing::TempDir;
using types::LogicalType;
using types::RowType;

std::shared_ptr<FileSystemSourceSpec> csvSpec(const std::string& path) {
  auto spec = std::make_shared<FileSystemSourceSpec>();
  spec->table_name = std::string("t");  // not operator=(const char*): GCC 12 warns falsely (-Wrestrict)
  spec->path = path;
  spec->absolute_path = path;
  spec->row_type = RowType{{"id", "name"}, {LogicalType::bigint(), LogicalType::string()}};
  return spec;
}

/// Every split of every subtask, in enumeration order, as the enumerator hands them out.
std::vector<std::vector<FileSplit>> enumerate(const FileSystemSource& source, int parallelism) {
  auto e = source.createEnumerator(parallelism);
  std::vector<std::vector<FileSplit>> out(static_cast<size_t>(parallelism));
  for (int i = 0; i < parallelism; ++i)
    while (auto s = e->handleSplitRequest(i)) out[static_cast<size_t>(i)].push_back(*s);
  return out;
}

// Lines "k,xxx" for k = 1..500 with k % 11 letters, so lines have different lengths and the byte
// boundaries size*i/p fall inside lines as well as on line starts.
TEST(SourceSplitTest, FileSplitsAtParallelismOneToFourCoverEveryLineOnce) {
  TempDir dir;
  std::string content;
  std::vector<int64_t> line_starts;  // byte offset of line k at index k - 1
  for (int k = 1; k <= 500; ++k) {
    line_starts.push_back(static_cast<int64_t>(content.size()));
    content += std::to_string(k) + "," + std::string(static_cast<size_t>(k % 11), 'x') + "\n";
  }
  const std::string path = dir.write("lines.csv", content);
  const FileSystemSource source(csvSpec(path));
  for (int p = 1; p <= 4; ++p) {
    auto splits = enumerate(source, p);
    ASSERT_EQ(splits.size(), static_cast<size_t>(p));
    // Each line start lies in exactly one split's range [from, to) (a whole-file split covers all).
    for (int64_t s : line_starts) {
      int owners = 0;
      for (const auto& mine : splits)
        for (const FileSplit& f : mine) owners += (f.to < 0 || (f.from <= s && s < f.to)) ? 1 : 0;
      EXPECT_EQ(owners, 1) << "line at byte " << s << ", parallelism " << p;
    }
    // Reading the splits, each subtask its own, yields ids 1..500 once each.
    std::multiset<int64_t> ids;
    for (int i = 0; i < p; ++i) {
      ASSERT_EQ(splits[static_cast<size_t>(i)].size(), 1u) << "one split per subtask, parallelism " << p;
      runtime::SourceReaderContext ctx{i, p, nullptr};
      auto reader = source.createReader(ctx);
      struct Collect final : runtime::ReaderOutput<types::RowBatch> {
        std::multiset<int64_t>* ids;
        explicit Collect(std::multiset<int64_t>* s) : ids(s) {}
        void collect(types::RowBatch b) override {
          for (size_t r = 0; r < b.numRows(); ++r) ids->insert(b.column(0).getLong(r));
        }
        void collect(types::RowBatch b, int64_t) override { collect(std::move(b)); }
      } out(&ids);
      reader->addSplit(splits[static_cast<size_t>(i)][0]);
      while (reader->pollNext(out) != runtime::InputStatus::kEndOfInput) {
      }
    }
    ASSERT_EQ(ids.size(), 500u) << "parallelism " << p;
    int64_t expected = 1;
    for (int64_t id : ids) EXPECT_EQ(id, expected++) << "parallelism " << p;
  }
}

TEST(SourceSplitTest, FileSplitRangesAreContiguousByteShares) {
  TempDir dir;
  const std::string path = dir.write("ten.csv", "1,a\n2,b\n3,c\n");  // 12 bytes
  const FileSystemSource source(csvSpec(path));
  auto splits = enumerate(source, 4);
  // 12 bytes over 4 subtasks: [0,3) [3,6) [6,9) [9,12).
  const int64_t bounds[] = {0, 3, 6, 9, 12};
  for (int i = 0; i < 4; ++i) {
    ASSERT_EQ(splits[static_cast<size_t>(i)].size(), 1u);
    EXPECT_EQ(splits[static_cast<size_t>(i)][0].from, bounds[i]);
    EXPECT_EQ(splits[static_cast<size_t>(i)][0].to, bounds[i + 1]);
  }
}

TEST(SourceSplitTest, JsonFileIsOneWholeSplitForSubtaskZero) {
  TempDir dir;
  const std::string path = dir.write("a.json", "{\"id\":1}\n");
  auto spec = csvSpec(path);
  spec->format = "json";
  auto splits = enumerate(FileSystemSource(spec), 3);
  ASSERT_EQ(splits[0].size(), 1u);
  EXPECT_LT(splits[0][0].to, 0);
  EXPECT_TRUE(splits[1].empty());
  EXPECT_TRUE(splits[2].empty());
}

TEST(SourceSplitTest, DataGenSplitsShareRowsAndRate) {
  auto spec = std::make_shared<DataGenSpec>();
  spec->rows_per_second = 10;
  spec->number_of_rows = 7;
  const DataGenSource source(spec);
  auto e = source.createEnumerator(3);
  // 7 rows over 3: 3, 2, 2; 10 rows/s over 3: 4, 3, 3.
  const int64_t rows[] = {3, 2, 2};
  const int64_t rate[] = {4, 3, 3};
  for (int i = 0; i < 3; ++i) {
    auto s = e->handleSplitRequest(i);
    ASSERT_TRUE(s.has_value());
    EXPECT_EQ(s->index, i);
    EXPECT_EQ(s->count, 3);
    EXPECT_EQ(s->rows, rows[i]);
    EXPECT_EQ(s->rate, rate[i]);
    EXPECT_FALSE(e->handleSplitRequest(i).has_value()) << "one split per subtask";
  }
}

}  // namespace
}  // namespace sluice::connectors
