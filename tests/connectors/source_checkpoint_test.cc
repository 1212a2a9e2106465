// The SQL sources in a checkpoint: a reader snapshotted after any batch and restored (at the same or
// another parallelism) emits every row of its input exactly once over both runs.

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/config.h"
#include "connectors/datagen_connector.h"
#include "connectors/filesystem_connector.h"
#include "connectors/operator_util.h"
#include "runtime/state/state_redistribution.h"
#include "runtime/state/stream_operator_state_context.h"
#include "test_util.h"

namespace sluice::connectors {
namespace {

using runtime::InputStatus;
using runtime::checkpoint::OperatorSubtaskState;
using runtime::state::KeyGroupRange;
using runtime::state::StreamOperatorStateContext;
using testing::CollectingOutput;
using testing::TempDir;
using types::LogicalType;
using types::RowType;

constexpr int32_t kMaxParallelism = 128;

/// The source subtasks of one execution: each with its own state context (restored or fresh).
struct Execution {
  std::vector<std::unique_ptr<StreamOperatorStateContext>> states;
  std::vector<std::unique_ptr<runtime::StreamOperator>> ops;
  std::vector<std::unique_ptr<CollectingOutput>> outs;

  runtime::SourceOperator& source(size_t i) { return dynamic_cast<runtime::SourceOperator&>(*ops[i]); }
  /// emitNext on subtask i up to `calls` times (fewer when it ends). Returns true when it ended.
  bool emit(size_t i, int calls) {
    for (int k = 0; k < calls; ++k)
      if (source(i).emitNext() == InputStatus::kEndOfInput) return true;
    return false;
  }
  void runToEnd(size_t i) {
    while (source(i).emitNext() != InputStatus::kEndOfInput) {
    }
  }
  /// snapshotState(id) on every subtask, then the snapshot of its state context.
  std::vector<OperatorSubtaskState> checkpoint(int64_t id) {
    std::vector<OperatorSubtaskState> out;
    for (size_t i = 0; i < ops.size(); ++i) {
      ops[i]->snapshotState(id);
      out.push_back(states[i]->snapshot());
    }
    return out;
  }
  /// Column 0 (BIGINT) of every row emitted by every subtask.
  std::multiset<int64_t> ids() const {
    std::multiset<int64_t> all;
    for (const auto& out : outs)
      for (const auto& b : out->batches)
        for (size_t r = 0; r < b.numRows(); ++r) all.insert(b.column(0).getLong(r));
    return all;
  }
};

/// Opens `parallelism` subtasks of `source`, restored from `old` (redistributed) when it is not empty.
Execution openExecution(const table::ScanTableSource& source, const Configuration& conf, int parallelism,
                        const std::vector<OperatorSubtaskState>& old = {}) {
  std::vector<std::map<std::string, runtime::checkpoint::OperatorListState>> assigned;
  if (!old.empty()) {
    std::vector<const OperatorSubtaskState*> ptrs;
    for (const auto& s : old) ptrs.push_back(&s);
    assigned = runtime::state::redistributeOperatorState(ptrs, parallelism);
  }
  Execution e;
  for (int i = 0; i < parallelism; ++i) {
    OperatorSubtaskState restored;
    if (!old.empty()) restored.operator_state = assigned[static_cast<size_t>(i)];
    e.states.push_back(std::make_unique<StreamOperatorStateContext>(
        "source", KeyGroupRange::of(0, kMaxParallelism - 1), kMaxParallelism, old.empty() ? nullptr : &restored));
    e.outs.push_back(std::make_unique<CollectingOutput>());
    e.ops.push_back(source.operatorFactory()->createOperator());
    runtime::OperatorContext ctx;
    ctx.subtask_index = i;
    ctx.parallelism = parallelism;
    ctx.max_parallelism = kMaxParallelism;
    ctx.config = &conf;
    ctx.operator_name = "source";
    ctx.state = e.states.back().get();
    e.ops.back()->open(ctx, e.outs.back().get());
  }
  return e;
}

/// Runs `old_p` subtasks for `calls` emitNext calls each, checkpoints, drops them (a failure), restores at
/// `new_p` and runs to the end. Returns the ids emitted by both executions together.
std::multiset<int64_t> failAndRestore(const table::ScanTableSource& source, const Configuration& conf, int old_p,
                                      int new_p, int calls) {
  Execution first = openExecution(source, conf, old_p);
  for (int i = 0; i < old_p; ++i) first.emit(static_cast<size_t>(i), calls);
  std::vector<OperatorSubtaskState> snapshot = first.checkpoint(1);
  std::multiset<int64_t> all = first.ids();
  for (auto& op : first.ops) op->close();
  Execution second = openExecution(source, conf, new_p, snapshot);
  for (int i = 0; i < new_p; ++i) second.runToEnd(static_cast<size_t>(i));
  for (int64_t id : second.ids()) all.insert(id);
  return all;
}

std::multiset<int64_t> range(int64_t from, int64_t to) {
  std::multiset<int64_t> out;
  for (int64_t v = from; v <= to; ++v) out.insert(v);
  return out;
}

table::ResolvedTable csvTable(const std::string& path) {
  table::ResolvedTable t;
  t.name = "t";
  t.physical_type = RowType{{"id", "name"}, {LogicalType::bigint(), LogicalType::string()}};
  t.options = {{"connector", "filesystem"}, {"path", path}, {"format", "csv"}};
  return t;
}

// Lines "k,<k % 4 + 1 letters>" for k = 1..11: different lengths, so the byte ranges of parallel readers
// cut lines in their middle as well.
std::string elevenLines() {
  std::string content;
  for (int k = 1; k <= 11; ++k) content += std::to_string(k) + "," + std::string(static_cast<size_t>(k % 4 + 1), 'n') + "\n";
  return content;
}

TEST(SourceCheckpointTest, CsvFileRestoredAfterEveryBatchEmitsEveryRowOnce) {
  TempDir dir;
  const std::string path = dir.write("rows.csv", elevenLines());
  Configuration conf;
  conf.set("sluice.batch.size", "3");
  auto source = FileSystemTableFactory().createSource(csvTable(path), conf);
  // 11 rows in batches of 3 take 4 batches plus the call that finds no more split: cuts 0..6 cover
  // every boundary, before the first row and after the last.
  const std::vector<std::pair<int, int>> rescales = {{1, 1}, {2, 2}, {2, 1}, {1, 2}, {3, 2}};
  for (const auto& [old_p, new_p] : rescales) {
    for (int calls = 0; calls <= 6; ++calls) {
      EXPECT_EQ(failAndRestore(*source, conf, old_p, new_p, calls), range(1, 11))
          << old_p << " -> " << new_p << " after " << calls << " calls";
    }
  }
}

TEST(SourceCheckpointTest, DirectoryOfFilesRestoredAtLowerParallelismSkipsFinishedFiles) {
  TempDir dir;
  dir.write("in/a.csv", "1,a\n2,b\n3,c\n");
  dir.write("in/b.csv", "4,d\n5,e\n");
  dir.write("in/c.csv", "6,f\n7,g\n8,h\n9,i\n");
  Configuration conf;
  conf.set("sluice.batch.size", "2");
  auto source = FileSystemTableFactory().createSource(csvTable(dir.path() + "/in"), conf);
  for (const auto& [old_p, new_p] : std::vector<std::pair<int, int>>{{2, 1}, {3, 1}, {1, 3}, {3, 2}}) {
    for (int calls = 0; calls <= 5; ++calls) {
      EXPECT_EQ(failAndRestore(*source, conf, old_p, new_p, calls), range(1, 9))
          << old_p << " -> " << new_p << " after " << calls << " calls";
    }
  }
}

TEST(SourceCheckpointTest, AFinishedBoundedReaderStaysFinishedAfterRestore) {
  TempDir dir;
  const std::string path = dir.write("rows.csv", "1,a\n2,b\n");
  Configuration conf;
  auto source = FileSystemTableFactory().createSource(csvTable(path), conf);
  Execution first = openExecution(*source, conf, 1);
  first.runToEnd(0);
  EXPECT_EQ(first.ids(), range(1, 2));
  auto snapshot = first.checkpoint(7);
  Execution second = openExecution(*source, conf, 1, snapshot);
  EXPECT_EQ(second.source(0).emitNext(), InputStatus::kEndOfInput);
  EXPECT_EQ(second.ids(), std::multiset<int64_t>{});
}

TEST(SourceCheckpointTest, ErrorLineNumbersStayRightAfterRestore) {
  TempDir dir;
  // Line 5 has no valid BIGINT.
  const std::string path = dir.write("rows.csv", "1,a\n2,b\n3,c\n4,d\nfive,e\n6,f\n");
  Configuration conf;
  conf.set("sluice.batch.size", "2");
  auto source = FileSystemTableFactory().createSource(csvTable(path), conf);
  Execution first = openExecution(*source, conf, 1);
  first.emit(0, 1);  // rows 1, 2
  EXPECT_EQ(first.ids(), range(1, 2));
  auto snapshot = first.checkpoint(1);
  Execution second = openExecution(*source, conf, 1, snapshot);
  second.emit(0, 1);  // rows 3, 4
  EXPECT_EQ(second.ids(), range(3, 4));
  try {
    second.emit(0, 1);
    FAIL() << "expected the bad row to fail the source";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find(path + ":5"), std::string::npos) << e.what();
  }
}

TEST(SourceCheckpointTest, EnumeratorSkipsClaimedSplitsIdempotently) {
  TempDir dir;
  dir.write("in/a.csv", "1,a\n");
  dir.write("in/b.csv", "2,b\n");
  dir.write("in/c.csv", "3,c\n");
  auto spec = std::make_shared<FileSystemSourceSpec>();
  spec->table_name = std::string("t");
  spec->path = dir.path() + "/in";
  spec->absolute_path = spec->path;
  spec->row_type = RowType{{"id", "name"}, {LogicalType::bigint(), LogicalType::string()}};
  FileSystemSource source(spec);
  runtime::EnumeratorCoordinator<FileSplit> coordinator(source.createEnumerator(1),
                                                        [](const FileSplit& s) { return s.splitId(); });
  const std::string a = spec->path + "/a.csv:0:-1";
  const std::string c = spec->path + "/c.csv:0:-1";
  coordinator.excludeSplits({a, c});
  coordinator.excludeSplits({c, a});
  auto first = coordinator.request(0);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->display_path, spec->path + "/b.csv");
  EXPECT_FALSE(coordinator.request(0).has_value());
}

TEST(SourceCheckpointTest, RestoredEnumeratorHandsTheOldLayoutToTheNewReaders) {
  // A layout of 3 lists (one split each) served to 2 readers: reader 0 gets lists 0 and 2, reader 1 list 1.
  SubtaskSplitEnumerator<int> e({{10}, {11}, {12}}, 2);
  EXPECT_EQ(e.handleSplitRequest(1), std::optional<int>(11));
  EXPECT_EQ(e.handleSplitRequest(1), std::nullopt);
  EXPECT_EQ(e.handleSplitRequest(0), std::optional<int>(10));
  EXPECT_EQ(e.handleSplitRequest(0), std::optional<int>(12));
  EXPECT_EQ(e.handleSplitRequest(0), std::nullopt);
}

table::ResolvedTable sequenceTable(int64_t end) {
  table::ResolvedTable t;
  t.name = "gen";
  t.physical_type = RowType{{"id", "r"}, {LogicalType::bigint(), LogicalType::integer()}};
  t.options = {{"connector", "datagen"},        {"fields.id.kind", "sequence"}, {"fields.id.start", "1"},
               {"fields.id.end", std::to_string(end)}, {"rows-per-second", "100000000"}};
  return t;
}

TEST(SourceCheckpointTest, DatagenSequenceRestoredAfterEveryBatchEmitsEveryValueOnce) {
  Configuration conf;
  conf.set("sluice.batch.size", "4");
  auto source = DataGenTableFactory().createSource(sequenceTable(21), conf);
  // At parallelism 1, 21 values take 6 batches of at most 4 (the throttle may cut a batch shorter, so
  // cuts run past that).
  for (const auto& [old_p, new_p] : std::vector<std::pair<int, int>>{{1, 1}, {2, 2}, {2, 1}, {1, 2}, {3, 2}}) {
    for (int calls = 0; calls <= 8; ++calls) {
      EXPECT_EQ(failAndRestore(*source, conf, old_p, new_p, calls), range(1, 21))
          << old_p << " -> " << new_p << " after " << calls << " calls";
    }
  }
}

TEST(SourceCheckpointTest, DatagenNumberOfRowsIsKeptAcrossARestore) {
  table::ResolvedTable t;
  t.name = "gen";
  t.physical_type = RowType{{"v"}, {LogicalType::bigint()}};
  t.options = {{"connector", "datagen"}, {"number-of-rows", "10"}, {"rows-per-second", "100000000"}};
  Configuration conf;
  conf.set("sluice.batch.size", "3");
  auto source = DataGenTableFactory().createSource(t, conf);
  for (const auto& [old_p, new_p] : std::vector<std::pair<int, int>>{{1, 1}, {2, 1}, {1, 2}}) {
    for (int calls = 0; calls <= 4; ++calls) {
      Execution first = openExecution(*source, conf, old_p);
      for (int i = 0; i < old_p; ++i) first.emit(static_cast<size_t>(i), calls);
      auto snapshot = first.checkpoint(1);
      size_t rows = 0;
      for (const auto& out : first.outs) rows += out->rows();
      Execution second = openExecution(*source, conf, new_p, snapshot);
      for (int i = 0; i < new_p; ++i) second.runToEnd(static_cast<size_t>(i));
      for (const auto& out : second.outs) rows += out->rows();
      EXPECT_EQ(rows, 10u) << old_p << " -> " << new_p << " after " << calls << " calls";
    }
  }
}

}  // namespace
}  // namespace sluice::connectors
