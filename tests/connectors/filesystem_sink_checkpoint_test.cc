// The filesystem sink's two-phase commit: part files become visible only when their checkpoint
// completes, and a restore commits the pending files of its state and removes those of the failed attempt.

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/config.h"
#include "connectors/filesystem_connector.h"
#include "runtime/state/state_redistribution.h"
#include "runtime/state/stream_operator_state_context.h"
#include "test_util.h"

namespace sluice::connectors {
namespace {

using runtime::checkpoint::OperatorSubtaskState;
using runtime::state::KeyGroupRange;
using runtime::state::StreamOperatorStateContext;
using testing::TempDir;
using types::LogicalType;
using types::RowType;

RowType idName() { return RowType{{"id", "name"}, {LogicalType::bigint(), LogicalType::string()}}; }

types::RowBatch rows(const std::vector<std::pair<int64_t, std::string>>& values) {
  types::RowBatch b(idName());
  for (const auto& v : values) {
    b.column(0).appendLong(v.first);
    b.column(1).appendString(v.second);
    b.kinds().push_back(types::RowKind::kInsert);
  }
  return b;
}

std::vector<std::string> listDir(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// The contents of the visible files (names not starting with '.'), in name order.
std::string visibleContent(const std::string& dir) {
  std::string all;
  for (const std::string& name : listDir(dir))
    if (name[0] != '.') all += testing::readFile(dir + "/" + name);
  return all;
}

std::vector<std::string> hiddenFiles(const std::string& dir) {
  std::vector<std::string> out;
  for (const std::string& name : listDir(dir))
    if (name[0] == '.') out.push_back(name);
  return out;
}

/// One sink subtask with its own state context.
struct SinkSubtask {
  std::unique_ptr<StreamOperatorStateContext> state;
  std::unique_ptr<runtime::StreamOperator> op;
  FileSystemSinkOperator& fs() { return dynamic_cast<FileSystemSinkOperator&>(*op); }
  OperatorSubtaskState checkpoint(int64_t id) {
    op->snapshotState(id);
    return state->snapshot();
  }
};

/// Opens subtask `index` of `parallelism`, restored from `restored` when given.
SinkSubtask openSink(const table::DynamicTableSink& sink, int index, int parallelism,
                     const OperatorSubtaskState* restored = nullptr) {
  SinkSubtask s;
  s.state = std::make_unique<StreamOperatorStateContext>("sink", KeyGroupRange::of(0, 127), 128, restored);
  s.op = sink.operatorFactory()->createOperator();
  runtime::OperatorContext ctx;
  ctx.subtask_index = index;
  ctx.parallelism = parallelism;
  ctx.state = s.state.get();
  s.op->open(ctx, nullptr);
  return s;
}

/// The state of subtask `index` of `parallelism` restored from the old subtasks' snapshots.
OperatorSubtaskState assign(const std::vector<OperatorSubtaskState>& old, int parallelism, int index) {
  std::vector<const OperatorSubtaskState*> ptrs;
  for (const auto& s : old) ptrs.push_back(&s);
  OperatorSubtaskState out;
  out.operator_state = runtime::state::redistributeOperatorState(ptrs, parallelism)[static_cast<size_t>(index)];
  return out;
}

std::unique_ptr<table::DynamicTableSink> csvSink(const std::string& dir) {
  table::ResolvedTable t;
  t.name = "out";
  t.physical_type = idName();
  t.options = {{"connector", "filesystem"}, {"path", dir}, {"format", "csv"}};
  Configuration conf;
  return FileSystemTableFactory().createSink(t, conf);
}

TEST(FileSystemSinkCheckpointTest, RowsBecomeVisibleOnlyWhenTheirCheckpointCompletes) {
  TempDir dir;
  const std::string out = dir.path() + "/out";
  auto sink = csvSink(out);
  SinkSubtask s = openSink(*sink, 0, 1);
  s.op->processBatch(rows({{1, "a"}, {2, "b"}}));
  s.checkpoint(1);
  EXPECT_EQ(visibleContent(out), "");
  s.op->processBatch(rows({{3, "c"}}));
  s.checkpoint(2);
  s.op->processBatch(rows({{4, "d"}}));
  EXPECT_EQ(visibleContent(out), "");
  // Checkpoint 1 completes: its part file only.
  s.op->notifyCheckpointComplete(1);
  EXPECT_EQ(visibleContent(out), "1,a\n2,b\n");
  EXPECT_EQ(listDir(out)[2], std::filesystem::path(s.fs().partFilePath(0)).filename().string());
  // An aborted checkpoint commits nothing; a later completion commits every earlier pending file.
  s.op->processBatch(rows({{5, "e"}}));
  s.checkpoint(3);
  s.op->notifyCheckpointAborted(3);
  EXPECT_EQ(visibleContent(out), "1,a\n2,b\n");
  s.op->notifyCheckpointComplete(4);
  EXPECT_EQ(visibleContent(out), "1,a\n2,b\n3,c\n4,d\n5,e\n");
  // Rows after the last checkpoint: committed at the end of a bounded input.
  s.op->processBatch(rows({{6, "f"}}));
  EXPECT_EQ(visibleContent(out), "1,a\n2,b\n3,c\n4,d\n5,e\n");
  s.op->endInput();
  s.op->close();
  EXPECT_EQ(visibleContent(out), "1,a\n2,b\n3,c\n4,d\n5,e\n6,f\n");
  EXPECT_EQ(hiddenFiles(out), std::vector<std::string>{});
}

TEST(FileSystemSinkCheckpointTest, AFailureKeepsPendingFilesHiddenAndDropsTheRest) {
  TempDir dir;
  const std::string out = dir.path() + "/out";
  auto sink = csvSink(out);
  SinkSubtask s = openSink(*sink, 0, 1);
  s.op->processBatch(rows({{1, "a"}}));
  s.checkpoint(1);
  s.op->processBatch(rows({{2, "b"}}));
  const std::string pending = std::filesystem::path(s.fs().inProgressPath(0)).filename().string();
  s.op->close();  // a failure before checkpoint 1 completed
  s.op.reset();
  EXPECT_EQ(visibleContent(out), "");
  // Row 2 (not in any checkpoint) is gone; row 1 waits, hidden, for a restore.
  EXPECT_EQ(hiddenFiles(out), std::vector<std::string>{pending});
  EXPECT_EQ(testing::readFile(out + "/" + pending), "1,a\n");
}

TEST(FileSystemSinkCheckpointTest, RestoreCommitsPendingFilesAndRemovesTheFailedAttempt) {
  TempDir dir;
  const std::string out = dir.path() + "/out";
  auto sink = csvSink(out);
  std::vector<OperatorSubtaskState> snapshot;
  std::string stray_0, stray_1;
  {
    SinkSubtask s0 = openSink(*sink, 0, 2);
    SinkSubtask s1 = openSink(*sink, 1, 2);
    s0.op->processBatch(rows({{1, "a"}}));
    s1.op->processBatch(rows({{2, "b"}}));
    s0.checkpoint(1);
    s1.checkpoint(1);
    s0.op->notifyCheckpointComplete(1);
    s1.op->notifyCheckpointComplete(1);
    s0.op->processBatch(rows({{3, "c"}}));
    s1.op->processBatch(rows({{4, "d"}}));
    snapshot = {s0.checkpoint(2), s1.checkpoint(2)};
    // Checkpoint 2 completed on the coordinator, but the process died before any notification, leaving
    // the in-progress files of rows written after it (the destructors here would remove them).
    stray_0 = std::filesystem::path(s0.fs().inProgressPath(2)).filename().string();
    stray_1 = std::filesystem::path(s1.fs().inProgressPath(2)).filename().string();
  }
  std::ofstream(out + "/" + stray_0) << "5,e\n";
  std::ofstream(out + "/" + stray_1) << "6,f\n";
  std::ofstream(out + "/.part-other-sink-0-0.csv.inprogress") << "9,z\n";
  EXPECT_EQ(visibleContent(out), "1,a\n2,b\n");

  // Restored at parallelism 1: rows 3 and 4 (checkpoint 2) are committed, both subtasks' strays removed,
  // another sink's hidden file is left alone.
  OperatorSubtaskState restored = assign(snapshot, 1, 0);
  SinkSubtask r = openSink(*sink, 0, 1, &restored);
  std::string committed;
  for (const std::string& name : listDir(out))
    if (name[0] != '.') committed += testing::readFile(out + "/" + name);
  EXPECT_EQ(committed.size(), std::string("1,a\n2,b\n3,c\n4,d\n").size());
  for (const char* row : {"1,a\n", "2,b\n", "3,c\n", "4,d\n"})
    EXPECT_NE(committed.find(row), std::string::npos) << row;
  EXPECT_EQ(hiddenFiles(out), std::vector<std::string>{".part-other-sink-0-0.csv.inprogress"});

  // The restored subtask continues after its highest part (0 and 1 are committed): nothing is overwritten.
  r.op->processBatch(rows({{7, "g"}}));
  r.op->endInput();
  r.op->close();
  EXPECT_EQ(testing::readFile(r.fs().partFilePath(2)), "7,g\n");
  EXPECT_EQ(testing::readFile(r.fs().partFilePath(0)), "1,a\n");
  EXPECT_EQ(testing::readFile(r.fs().partFilePath(1)), "3,c\n");

  // Restoring the same checkpoint again (a second failure) finds its files committed already: fine.
  OperatorSubtaskState again = assign(snapshot, 2, 1);
  SinkSubtask r2 = openSink(*sink, 1, 2, &again);
  r2.op->close();
  EXPECT_EQ(testing::readFile(r2.fs().partFilePath(1)), "4,d\n");
  EXPECT_EQ(testing::readFile(r2.fs().partFilePath(0)), "2,b\n");
}

}  // namespace
}  // namespace sluice::connectors
