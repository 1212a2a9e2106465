// The kafka source in checkpoints: splits with their next offsets in operator state, restored (at the
// same or another parallelism) so every record reaches downstream once over all runs; offsets committed
// to the group when a checkpoint completes; and whole jobs restarted after an injected failure into the
// exactly-once filesystem sink. Expected values come from the records the test produced.

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "cluster/mini_cluster.h"
#include "common/config.h"
#include "connectors/kafka/kafka_source.h"
#include "kafka_test_util.h"
#include "runtime/state/state_redistribution.h"
#include "runtime/state/stream_operator_state_context.h"
#include "table/catalog/table_factory.h"

namespace sluice::connectors::kafka {
namespace {

using runtime::InputStatus;
using runtime::checkpoint::OperatorSubtaskState;
using runtime::state::KeyGroupRange;
using runtime::state::StreamOperatorStateContext;

constexpr int kPartitions = 4;
constexpr int kRecords = 40;
constexpr int32_t kMaxParallelism = 128;

// Records "i,n<i>" for i in [0, kRecords): record i in partition i % kPartitions at offset i / kPartitions.
void produceNumbered(MockKafkaCluster& c, const std::string& topic) {
  c.createTopic(topic, kPartitions);
  std::vector<KafkaRecord> records;
  for (int i = 0; i < kRecords; ++i) records.push_back(testing::valueRecord(fmt::format("{},n{}", i, i), i % kPartitions));
  c.produce(topic, records);
}

std::shared_ptr<const KafkaTableSpec> numberedSpec(const MockKafkaCluster& c, const std::string& topic,
                                                   const std::string& group) {
  table::ResolvedTable t;
  t.name = "t";
  t.physical_type = types::RowType{{"id", "name"}, {types::LogicalType::integer(), types::LogicalType::string()}};
  t.options = {{"connector", "kafka"},
               {"topic", topic},
               {"properties.bootstrap.servers", c.bootstrapServers()},
               {"properties.group.id", group},
               {"format", "csv"},
               {"scan.startup.mode", "earliest-offset"},
               {"scan.bounded.mode", "latest-offset"}};
  return std::make_shared<KafkaTableSpec>(parseKafkaTable(t, false, true));
}

struct CollectingOutput : runtime::Output {
  void collect(types::RowBatch&& batch) override {
    for (size_t r = 0; r < batch.numRows(); ++r) ids.push_back(static_cast<int32_t>(batch.column(0).getLong(r)));
  }
  void emitWatermark(runtime::Watermark) override {}
  std::vector<int32_t> ids;
};

/// The source subtasks of one execution, each with its own state context (fresh or restored).
struct Execution {
  Configuration conf;
  std::vector<std::unique_ptr<StreamOperatorStateContext>> states;
  std::vector<std::unique_ptr<KafkaSourceOperator>> ops;
  std::vector<std::unique_ptr<CollectingOutput>> outs;

  /// emitNext on subtask i until it has emitted at least `rows` rows in this execution or ended; a bounded
  /// loop (records arrive asynchronously), failing the test when it runs out.
  void emitAtLeast(size_t i, size_t rows) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (outs[i]->ids.size() < rows) {
      if (ops[i]->emitNext() == InputStatus::kEndOfInput) return;
      ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "subtask " << i << " emitted too little";
    }
  }
  void runToEnd(size_t i) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (ops[i]->emitNext() != InputStatus::kEndOfInput)
      ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "subtask " << i << " did not end";
  }
  std::vector<OperatorSubtaskState> checkpoint(int64_t id) {
    std::vector<OperatorSubtaskState> out;
    for (size_t i = 0; i < ops.size(); ++i) {
      ops[i]->snapshotState(id);
      out.push_back(states[i]->snapshot());
    }
    return out;
  }
  void notify(int64_t id) {
    for (auto& op : ops) op->notifyCheckpointComplete(id);
  }
  void close() {
    for (auto& op : ops) op->close();
  }
  std::multiset<int32_t> ids() const {
    std::multiset<int32_t> all;
    for (const auto& o : outs) all.insert(o->ids.begin(), o->ids.end());
    return all;
  }
};

std::unique_ptr<Execution> openExecution(std::shared_ptr<const KafkaTableSpec> spec, int parallelism,
                                         const std::vector<OperatorSubtaskState>& old = {}) {
  std::vector<std::map<std::string, runtime::checkpoint::OperatorListState>> assigned;
  if (!old.empty()) {
    std::vector<const OperatorSubtaskState*> ptrs;
    for (const auto& s : old) ptrs.push_back(&s);
    assigned = runtime::state::redistributeOperatorState(ptrs, parallelism);
  }
  auto e = std::make_unique<Execution>();
  e->conf.set("sluice.batch.size", "3");  // small polls, so a checkpoint cuts partitions in the middle
  for (int i = 0; i < parallelism; ++i) {
    OperatorSubtaskState restored;
    if (!old.empty()) restored.operator_state = assigned[static_cast<size_t>(i)];
    e->states.push_back(std::make_unique<StreamOperatorStateContext>(
        "source", KeyGroupRange::of(0, kMaxParallelism - 1), kMaxParallelism, old.empty() ? nullptr : &restored));
    e->outs.push_back(std::make_unique<CollectingOutput>());
    e->ops.push_back(std::make_unique<KafkaSourceOperator>(spec));
    runtime::OperatorContext ctx;
    ctx.subtask_index = i;
    ctx.parallelism = parallelism;
    ctx.max_parallelism = kMaxParallelism;
    ctx.config = &e->conf;
    ctx.operator_name = "source";
    ctx.state = e->states.back().get();
    e->ops.back()->open(ctx, e->outs.back().get());
  }
  return e;
}

// Next offset per partition after the records `ids` (each partition read from offset 0 in order).
std::map<int, int64_t> offsetsAfter(const std::multiset<int32_t>& ids) {
  std::map<int, int64_t> next;
  for (int p = 0; p < kPartitions; ++p) next[p] = 0;
  for (int32_t id : ids) next[id % kPartitions] = std::max<int64_t>(next[id % kPartitions], id / kPartitions + 1);
  return next;
}

std::multiset<int32_t> allIds() {
  std::multiset<int32_t> out;
  for (int i = 0; i < kRecords; ++i) out.insert(i);
  return out;
}

// A checkpoint after some rows, restored at another parallelism: every record once over both runs; the
// group's offsets after each completed checkpoint are those the checkpoint holds.
void checkRescale(int old_p, int new_p) {
  SCOPED_TRACE(fmt::format("{} -> {} subtasks", old_p, new_p));
  MockKafkaCluster c(1);
  const std::string group = fmt::format("g{}{}", old_p, new_p);
  produceNumbered(c, "numbers");
  auto spec = numberedSpec(c, "numbers", group);
  auto first = openExecution(spec, old_p);
  for (int i = 0; i < old_p; ++i) first->emitAtLeast(static_cast<size_t>(i), 5);
  const std::vector<OperatorSubtaskState> snapshot = first->checkpoint(7);
  const std::multiset<int32_t> before = first->ids();
  // Rows after the checkpoint are lost with the failure (the restored run reads them again).
  for (int i = 0; i < old_p; ++i) first->emitAtLeast(static_cast<size_t>(i), first->outs[static_cast<size_t>(i)]->ids.size() + 1);
  first->notify(7);
  first->close();  // waits for the commit (bounded)
  EXPECT_EQ(c.committedOffsets(group, "numbers"), offsetsAfter(before));

  auto second = openExecution(spec, new_p, snapshot);
  for (int i = 0; i < new_p; ++i) second->runToEnd(static_cast<size_t>(i));
  std::multiset<int32_t> all = before;
  for (int32_t id : second->ids()) all.insert(id);
  EXPECT_EQ(all, allIds());
  // The final checkpoint (FLIP-147): every split finished, the group at the end of each partition.
  second->checkpoint(8);
  second->notify(8);
  second->close();
  EXPECT_EQ(c.committedOffsets(group, "numbers"), offsetsAfter(allIds()));
}

TEST(KafkaCheckpointTest, SplitsRestoreAtTheSameParallelism) { checkRescale(2, 2); }
TEST(KafkaCheckpointTest, SplitsRestoreOnScaleIn) { checkRescale(2, 1); }
TEST(KafkaCheckpointTest, SplitsRestoreOnScaleOut) { checkRescale(2, 3); }

TEST(KafkaCheckpointTest, RestoredOffsetsOverrideTheStartupMode) {
  MockKafkaCluster c(1);
  produceNumbered(c, "numbers");
  auto spec = numberedSpec(c, "numbers", "g");
  auto first = openExecution(spec, 1);
  first->emitAtLeast(0, 6);
  const auto snapshot = first->checkpoint(1);
  const std::multiset<int32_t> before = first->ids();
  first->close();
  // latest-offset would read nothing: the restored positions win.
  auto latest = std::make_shared<KafkaTableSpec>(*spec);
  latest->startup = StartupMode::kLatestOffset;
  auto second = openExecution(latest, 1, snapshot);
  second->runToEnd(0);
  std::multiset<int32_t> all = before;
  for (int32_t id : second->ids()) all.insert(id);
  EXPECT_EQ(all, allIds());
}

// The partitions of topic "numbers" with a committed offset for `group`.
std::map<int, int64_t> committedOnly(const MockKafkaCluster& c, const std::string& group) {
  std::map<int, int64_t> out;
  for (const auto& [p, o] : c.committedOffsets(group, "numbers"))
    if (o >= 0) out[p] = o;
  return out;
}

TEST(KafkaCheckpointTest, NoCommitWithoutTheOptionOrBeforeCompletion) {
  MockKafkaCluster c(1);
  produceNumbered(c, "numbers");
  auto spec = std::make_shared<KafkaTableSpec>(*numberedSpec(c, "numbers", "quiet"));
  spec->commit_on_checkpoint = false;
  auto off = openExecution(spec, 1);
  off->runToEnd(0);
  off->checkpoint(1);
  off->notify(1);
  off->close();
  EXPECT_EQ(committedOnly(c, "quiet"), (std::map<int, int64_t>{}));
  // With the option: a checkpoint that never completes commits nothing.
  auto on = openExecution(numberedSpec(c, "numbers", "pending"), 1);
  on->runToEnd(0);
  on->checkpoint(1);
  on->close();
  EXPECT_EQ(committedOnly(c, "pending"), (std::map<int, int64_t>{}));
}

TEST(KafkaCheckpointTest, ExplicitCommitOnCheckpointNeedsAGroup) {
  table::ResolvedTable t;
  t.name = "t";
  t.physical_type = types::RowType{{"id"}, {types::LogicalType::integer()}};
  t.options = {{"connector", "kafka"},
               {"topic", "x"},
               {"properties.bootstrap.servers", "127.0.0.1:1"},
               {"format", "csv"},
               {"properties.commit.offsets.on.checkpoint", "true"}};
  try {
    parseKafkaTable(t, false, true);
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("group.id is required"), std::string::npos) << e.what();
  }
  t.options["properties.commit.offsets.on.checkpoint"] = "maybe";
  EXPECT_THROW(parseKafkaTable(t, false, true), UserError);
}

// ---- whole jobs ---------------------------------------------------------------------------------------

// Every line of the visible (committed) part files of `dir`.
std::multiset<std::string> committedLines(const std::string& dir) {
  std::multiset<std::string> lines;
  if (!std::filesystem::exists(dir)) return lines;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name[0] == '.') continue;
    std::ifstream in(e.path());
    for (std::string line; std::getline(in, line);) lines.insert(line);
  }
  return lines;
}

struct TempDir {
  TempDir() {
    static int n = 0;
    path = (std::filesystem::temp_directory_path() / fmt::format("sluice_kafka_ck_{}_{}", ::getpid(), n++)).string();
    std::filesystem::remove_all(path);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string path;
};

// kafka (p = 2, bounded at offset 10 of each partition) -> filesystem sink, checkpoints every 10 ms. The
// first half of the records is produced, and the second only once the group's committed offsets show that
// a checkpoint holding the whole first half completed; source subtask 0 (two partitions, ten records of
// the first half) fails after `fail_after` records, so the failure hits while it reads the second half
// and the restart resumes from checkpointed offsets in the middle of the partitions. Each record once in
// the committed files, one restart, and the group's offsets those of completed checkpoints (see below).
void checkJobRecovery(int64_t fail_after) {
  SCOPED_TRACE(fmt::format("failure after {} records", fail_after));
  MockKafkaCluster c(1);
  c.createTopic("numbers", kPartitions);
  auto produceRange = [&](int from, int to) {
    std::vector<KafkaRecord> records;
    for (int i = from; i < to; ++i) records.push_back(testing::valueRecord(fmt::format("{},n{}", i, i), i % kPartitions));
    c.produce("numbers", records);
  };
  produceRange(0, kRecords / 2);
  TempDir dir;
  auto env = testing::newFailingEnvironment(2, "Source", fail_after);
  const std::string group = fmt::format("job{}", fail_after);
  std::string stops;
  for (int p = 0; p < kPartitions; ++p)
    stops += fmt::format("{}partition:{},offset:{}", p == 0 ? "" : ";", p, kRecords / kPartitions);
  const std::string script = fmt::format(
      "CREATE TABLE t (id INT, name STRING) WITH ('connector' = 'kafka', 'topic' = 'numbers', "
      "'properties.bootstrap.servers' = '{}', 'properties.group.id' = '{}', 'format' = 'csv', "
      "'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'specific-offsets', "
      "'scan.bounded.specific-offsets' = '{}');\n"
      "CREATE TABLE out (id INT, name STRING) WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv');\n"
      "INSERT INTO out SELECT id, name FROM t;\n",
      c.bootstrapServers(), group, stops, dir.path);
  auto job = std::async(std::launch::async, [&] { env->executeScript(script); });
  // Bounded polling on the group's offsets (a completed checkpoint's), 60 s at most.
  const std::map<int, int64_t> half = offsetsAfter([] {
    std::multiset<int32_t> ids;
    for (int i = 0; i < kRecords / 2; ++i) ids.insert(i);
    return ids;
  }());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (committedOnly(c, group) != half && std::chrono::steady_clock::now() < deadline &&
         job.wait_for(std::chrono::milliseconds(5)) != std::future_status::ready) {
  }
  ASSERT_EQ(committedOnly(c, group), half) << "no checkpoint of the first half completed";
  produceRange(kRecords / 2, kRecords);
  job.get();
  std::multiset<std::string> expected;
  for (int i = 0; i < kRecords; ++i) expected.insert(fmt::format("{},n{}", i, i));
  EXPECT_EQ(committedLines(dir.path), expected);
  ASSERT_EQ(env->jobs().size(), 1u);
  EXPECT_EQ(env->jobs()[0].execution->num_restarts, 1);
  // Flink commits a completed checkpoint's offsets on its notification, and a split that finished before
  // the restored checkpoint is in no later checkpoint (KafkaSourceReader's offsetsOfFinishedSplits are not
  // state): when the failed attempt read a partition to its end and failed before that checkpoint's
  // notification ran, the group keeps the partition's earlier commit. Committed offsets are for
  // monitoring; recovery uses the checkpointed ones (checked above: each record once). So: subtask 1
  // (never failed; its own region) ends at the end of partitions 1 and 3; a partition of subtask 0
  // (0 and 2: Flink's getSplitOwner for "numbers" at p = 2, from String.hashCode by hand) may lag only when
  // subtask 0 delivered all 5 of its second-half records before failing (fail_after >= 10 + 5), at most
  // one of them (7 < 10), and never below the first half's commit seen above.
  const std::map<int, int64_t> end = offsetsAfter(allIds());
  const std::map<int, int64_t> committed = committedOnly(c, group);
  ASSERT_EQ(committed.size(), end.size());
  int lagging = 0;
  for (const auto& [p, offset] : committed) {
    SCOPED_TRACE(fmt::format("partition {}", p));
    if (offset == end.at(p)) continue;
    ++lagging;
    EXPECT_EQ(p % 2, 0) << "a partition of the subtask that never failed lags";
    EXPECT_GE(offset, half.at(p));
    EXPECT_LT(offset, end.at(p));
  }
  const int64_t subtask0_first_half = kRecords / 4, partition_second_half = kRecords / kPartitions / 2;
  EXPECT_LE(lagging, fail_after >= subtask0_first_half + partition_second_half ? 1 : 0);
}

TEST(KafkaCheckpointTest, JobRecoversFromTheCheckpointedOffsetsEachRecordOnce) {
  // Subtask 0 fails at its first, third and eighth record of the second half.
  for (int64_t n : {10, 12, 17}) checkJobRecovery(n);
}

}  // namespace
}  // namespace sluice::connectors::kafka
