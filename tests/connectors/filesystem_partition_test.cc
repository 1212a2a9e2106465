// Partitioned filesystem tables: Flink's path escaping, the partition time extractor, and the partition
// commit (success files) of the sink across subtasks, checkpoints and a restore.

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/config.h"
#include "connectors/filesystem_connector.h"
#include "connectors/filesystem_partition.h"
#include "runtime/state/stream_operator_state_context.h"
#include "test_util.h"

namespace sluice::connectors {
namespace {

using runtime::state::KeyGroupRange;
using runtime::state::StreamOperatorStateContext;
using testing::TempDir;
using types::LogicalType;
using types::RowType;

TEST(PartitionPathTest, EscapesAsFlinkPartitionPathUtils) {
  // Flink's PartitionPathUtilsTest cases.
  EXPECT_EQ(escapePathName("[00"), "%5B00");
  EXPECT_EQ(escapePathName("00]"), "00%5D");
  EXPECT_EQ(escapePathName("00:00"), "00%3A00");
  EXPECT_EQ(escapePathName("[00:00]"), "%5B00%3A00%5D");
  EXPECT_EQ(escapePathName("0000"), "0000");
  EXPECT_EQ(escapePathName("{partName}"), "%7BpartName%7D");
  // Control characters and DEL; a blank, '-' and UTF-8 stay.
  EXPECT_EQ(escapePathName(std::string("a\x01\n\x7f") + "b"), "a%01%0A%7Fb");
  EXPECT_EQ(escapePathName("a b-\xc3\xa9"), "a b-\xc3\xa9");
  EXPECT_EQ(escapePathName("x/y=z%"), "x%2Fy%3Dz%25");
  for (const std::string s : {"[00:00]", "x/y=z%", "a\x01\n\x7f" "b", "{p}"}) EXPECT_EQ(unescapePathName(escapePathName(s)), s);
}

TEST(PartitionPathTest, SpecOfARelativePath) {
  auto spec = partitionSpecOf("dt=2024-01-02/hm=10%3A05/part-x.csv");
  ASSERT_EQ(spec.size(), 2u);
  EXPECT_EQ(spec[0], std::make_pair(std::string("dt"), std::string("2024-01-02")));
  EXPECT_EQ(spec[1], std::make_pair(std::string("hm"), std::string("10:05")));
  EXPECT_TRUE(partitionSpecOf("part-x.csv").empty());
  EXPECT_TRUE(partitionSpecOf("plain/part-x.csv").empty());
}

TEST(PartitionPathTest, TimeExtractor) {
  const int64_t day = 1704153600000;  // 2024-01-02 00:00:00 UTC
  std::vector<std::pair<std::string, std::string>> spec = {{"dt", "2024-01-02"}, {"hm", "10:05"}};
  EXPECT_EQ(extractPartitionTime("$dt $hm:00", spec), day + (10 * 60 + 5) * 60 * 1000);
  // No pattern: the first value, a date alone is its midnight.
  EXPECT_EQ(extractPartitionTime("", spec), day);
  EXPECT_EQ(extractPartitionTime("$hm", spec), std::nullopt);
  EXPECT_EQ(extractPartitionTime("", {{"k", "__DEFAULT_PARTITION__"}}), std::nullopt);
}

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

std::unique_ptr<table::DynamicTableSink> partitionedSink(const std::string& dir,
                                                         std::map<std::string, std::string> extra = {}) {
  table::ResolvedTable t;
  t.name = "out";
  t.physical_type = idName();
  t.partition_keys = {1};
  t.options = {{"connector", "filesystem"}, {"path", dir}, {"format", "csv"},
               {"sink.partition-commit.policy.kind", "success-file"}};
  for (auto& kv : extra) t.options[kv.first] = kv.second;
  Configuration conf;
  return FileSystemTableFactory().createSink(t, conf);
}

struct SinkSubtask {
  std::unique_ptr<StreamOperatorStateContext> state;
  std::unique_ptr<runtime::StreamOperator> op;
};

SinkSubtask openSink(const table::DynamicTableSink& sink, int index, int parallelism,
                     const runtime::checkpoint::OperatorSubtaskState* restored = nullptr) {
  SinkSubtask s;
  s.state = std::make_unique<StreamOperatorStateContext>("sink", KeyGroupRange::of(0, 127), 128, restored);
  s.op = sink.operatorFactory()->createOperator();
  runtime::OperatorContext ctx;
  ctx.subtask_index = index;
  ctx.parallelism = parallelism;
  ctx.checkpointing = true;
  ctx.state = s.state.get();
  s.op->open(ctx, nullptr);
  return s;
}

bool exists(const std::string& p) { return std::filesystem::exists(p); }

std::string visibleRows(const std::string& dir) {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().filename().string().rfind("part-", 0) == 0) files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  std::string all;
  for (const auto& f : files) all += testing::readFile(f);
  return all;
}

TEST(PartitionCommitTest, SuccessFileOnceEverySubtaskCommittedTheCheckpoint) {
  TempDir dir;
  const std::string out = dir.path() + "/out";
  auto sink = partitionedSink(out);
  SinkSubtask s0 = openSink(*sink, 0, 2);
  SinkSubtask s1 = openSink(*sink, 1, 2);
  s0.op->processBatch(rows({{1, "a"}, {2, "b:c"}}));
  s1.op->processBatch(rows({{3, "a"}}));
  s0.op->snapshotState(1);
  s1.op->snapshotState(1);
  // The partition columns name the directories and are not in the files.
  s0.op->notifyCheckpointComplete(1);
  EXPECT_EQ(visibleRows(out + "/name=a"), "1\n");
  EXPECT_EQ(visibleRows(out + "/name=b%3Ac"), "2\n");
  // Subtask 1 has not made its files of checkpoint 1 visible: no partition is committed yet.
  EXPECT_FALSE(exists(out + "/name=a/_SUCCESS"));
  EXPECT_FALSE(exists(out + "/name=b%3Ac/_SUCCESS"));
  s1.op->notifyCheckpointComplete(1);
  EXPECT_EQ(visibleRows(out + "/name=a"), "1\n3\n");
  EXPECT_TRUE(exists(out + "/name=a/_SUCCESS"));
  EXPECT_TRUE(exists(out + "/name=b%3Ac/_SUCCESS"));
  // A partition written after its commit is committed again with its next checkpoint; a new one likewise.
  std::filesystem::remove(out + "/name=a/_SUCCESS");
  s1.op->processBatch(rows({{4, "a"}, {5, "d"}}));
  s0.op->snapshotState(2);
  s1.op->snapshotState(2);
  s1.op->notifyCheckpointComplete(2);
  EXPECT_FALSE(exists(out + "/name=d/_SUCCESS"));
  s0.op->notifyCheckpointComplete(2);
  EXPECT_TRUE(exists(out + "/name=a/_SUCCESS"));
  EXPECT_TRUE(exists(out + "/name=d/_SUCCESS"));
  s0.op->close();
  s1.op->close();
}

TEST(PartitionCommitTest, PartitionTimeTriggerWaitsForTheWatermarkPastTimePlusDelay) {
  TempDir dir;
  const std::string out = dir.path() + "/out";
  auto sink = partitionedSink(out, {{"sink.partition-commit.trigger", "partition-time"},
                                    {"sink.partition-commit.delay", "1 h"}});
  SinkSubtask s = openSink(*sink, 0, 1);
  const int64_t t = 1704153600000;  // name = 2024-01-02: its midnight, UTC
  s.op->processBatch(rows({{1, "2024-01-02"}}));
  s.op->processWatermark(runtime::Watermark{t + 3600 * 1000});  // at time + delay: not past it
  s.op->snapshotState(1);
  s.op->notifyCheckpointComplete(1);
  EXPECT_EQ(visibleRows(out + "/name=2024-01-02"), "1\n");
  EXPECT_FALSE(exists(out + "/name=2024-01-02/_SUCCESS"));
  s.op->processWatermark(runtime::Watermark{t + 3600 * 1000 + 1});
  s.op->snapshotState(2);
  s.op->notifyCheckpointComplete(2);
  EXPECT_TRUE(exists(out + "/name=2024-01-02/_SUCCESS"));
  s.op->close();
}

TEST(PartitionCommitTest, ARestoreCommitsThePartitionsOfItsPendingFiles) {
  TempDir dir;
  const std::string out = dir.path() + "/out";
  auto sink = partitionedSink(out);
  runtime::checkpoint::OperatorSubtaskState snap;
  {
    SinkSubtask s = openSink(*sink, 0, 1);
    s.op->processBatch(rows({{1, "a"}}));
    s.op->snapshotState(1);
    snap = s.state->snapshot();
    // The job fails before checkpoint 1's notification: nothing visible, nothing committed.
    s.op->processBatch(rows({{2, "a"}}));
    s.op->close();
  }
  EXPECT_EQ(visibleRows(out + "/name=a"), "");
  SinkSubtask r = openSink(*sink, 0, 1, &snap);
  // Checkpoint 1 completed (the restore is from it): its file and its partition are committed.
  EXPECT_EQ(visibleRows(out + "/name=a"), "1\n");
  EXPECT_TRUE(exists(out + "/name=a/_SUCCESS"));
  r.op->endInput();
  r.op->snapshotState(2);
  r.op->notifyCheckpointComplete(2);
  // Nothing of the partition commit is left behind.
  for (const auto& e : std::filesystem::directory_iterator(out))
    EXPECT_NE(e.path().filename().string()[0], '.') << e.path();
  r.op->close();
}

}  // namespace
}  // namespace sluice::connectors
