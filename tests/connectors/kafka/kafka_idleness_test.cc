// Source idleness through a whole job: unbounded Kafka reads where one source subtask has no data (its
// partitions are empty) or no partition at all. Without idleness that subtask holds back the watermark of
// every window subtask, so the TUMBLE window below never fires; with `table.exec.source.idle-timeout` the
// subtask announces IDLE and the windows fire as soon as the watermark of the partition with data passes
// their end. The job is unbounded: the test waits for the expected rows, then cancels it, and checks that
// nothing else was emitted. Expected rows are worked out by hand next to the data.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <string>
#include <vector>

#include "connectors/kafka/kafka_source.h"
#include "kafka_test_util.h"

namespace sluice::connectors::kafka {
namespace {

// (k, v, ts) rows, in this order, all in one partition. The watermark is ts - 2 s, 10 s tumbling windows:
//   a,1 00:00:01   b,2 00:00:04   a,3 00:00:09   b,4 00:00:12   a,5 00:00:15   a,6 00:00:27
// The partition's watermark ends at 00:00:25 (27 - 2): [00:00, 00:00:10) and [00:00:10, 00:00:20) fire
// (end - 1 ms <= 00:00:25), [00:00:20, 00:00:30) does not (it holds a,6 only). No row is late (ascending).
//   [00:00, 00:00:10): a = 1 + 3 = 4 (2 rows), b = 2 (1 row)
//   [00:00:10, 00:00:20): a = 5 (1 row), b = 4 (1 row)
const std::vector<std::string> kRows = {"a,1,2015-01-01 00:00:01", "b,2,2015-01-01 00:00:04",
                                        "a,3,2015-01-01 00:00:09", "b,4,2015-01-01 00:00:12",
                                        "a,5,2015-01-01 00:00:15", "a,6,2015-01-01 00:00:27"};
const std::vector<std::string> kFired = {
    "+I[2015-01-01T00:00, 2015-01-01T00:00:10, a, 4, 2]",
    "+I[2015-01-01T00:00, 2015-01-01T00:00:10, b, 2, 1]",
    "+I[2015-01-01T00:00:10, 2015-01-01T00:00:20, a, 5, 1]",
    "+I[2015-01-01T00:00:10, 2015-01-01T00:00:20, b, 4, 1]",
};

void produceRows(MockKafkaCluster& c, const std::string& topic, int partition) {
  std::vector<KafkaRecord> records;
  for (const std::string& r : kRows) records.push_back(testing::valueRecord(r, partition));
  c.produce(topic, records);
}

std::string windowQuery(const MockKafkaCluster& c, const std::string& topic, int scan_parallelism) {
  return fmt::format(
      "SET 'table.exec.source.idle-timeout' = '300 ms';\n"
      "CREATE TABLE t (k STRING, v INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '2' SECOND) WITH ("
      "'connector' = 'kafka', 'topic' = '{}', 'properties.bootstrap.servers' = '{}', 'format' = 'csv', "
      "'scan.startup.mode' = 'earliest-offset', 'scan.parallelism' = '{}');\n"
      "SELECT window_start, window_end, k, SUM(v) AS s, COUNT(*) AS c "
      "FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY window_start, window_end, k;",
      topic, c.bootstrapServers(), scan_parallelism);
}

// Runs the unbounded `script` at `parallelism` on `task_managers` TaskManagers until it has emitted
// `expected` rows (or 60 s passed, a guard against a hang), cancels it, and returns every row it emitted,
// sorted.
std::vector<std::string> runUntilRows(const std::string& script, size_t expected, int parallelism,
                                      int task_managers = 1) {
  auto env = testing::newEnvironment(parallelism);
  env->config().set("local.number-taskmanager", std::to_string(task_managers));
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::string> lines;
  env->setCollectCallback([&](const types::RowType&, const types::RowBatch& batch) {
    std::lock_guard<std::mutex> lock(mu);
    testing::appendChangelog(batch, lines);
    cv.notify_all();
  });
  auto job = std::async(std::launch::async, [&] { env->executeScript(script); });
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait_for(lock, std::chrono::seconds(60), [&] { return lines.size() >= expected; });
  }
  env->cancel();
  job.get();
  std::lock_guard<std::mutex> lock(mu);
  std::vector<std::string> out = lines;
  std::sort(out.begin(), out.end());
  return out;
}

TEST(KafkaIdlenessTest, SubtaskWhosePartitionsAreEmptyDoesNotHoldBackTheWindows) {
  MockKafkaCluster c(1);
  c.createTopic("four", 4);
  // scan.parallelism 2: partitions 0 and 2 go to one subtask, 1 and 3 to the other.
  ASSERT_EQ(kafkaSplitOwner("four", 0, 2), kafkaSplitOwner("four", 2, 2));
  ASSERT_EQ(kafkaSplitOwner("four", 1, 2), kafkaSplitOwner("four", 3, 2));
  ASSERT_NE(kafkaSplitOwner("four", 0, 2), kafkaSplitOwner("four", 1, 2));
  produceRows(c, "four", 0);
  EXPECT_EQ(runUntilRows(windowQuery(c, "four", 2), kFired.size(), 2), kFired);
}

TEST(KafkaIdlenessTest, IdleStatusCrossesTaskManagers) {
  MockKafkaCluster c(1);
  c.createTopic("four", 4);
  produceRows(c, "four", 0);
  // Two TaskManagers: the source subtasks and the window subtasks talk over TCP (subtask i in
  // TaskManager i mod 2), so the IDLE of the subtask reading partitions 1 and 3 travels as a network event.
  EXPECT_EQ(runUntilRows(windowQuery(c, "four", 2), kFired.size(), 2, 2), kFired);
}

TEST(KafkaIdlenessTest, SubtaskWithoutPartitionStaysIdle) {
  MockKafkaCluster c(1);
  c.createTopic("one", 1);
  produceRows(c, "one", 0);
  // scan.parallelism 3 > 1 partition: two subtasks have no split; they stay (unbounded) and are idle.
  EXPECT_EQ(runUntilRows(windowQuery(c, "one", 3), kFired.size(), 1), kFired);
}

}  // namespace
}  // namespace sluice::connectors::kafka

namespace sluice::connectors::kafka {
namespace {

std::string explain(const std::string& script) { return testing::newEnvironment()->explainScript(script, false); }

// The watermark pushed into the kafka source shows on the scan, inside the table's brackets as in Flink's
// digest; a datagen table keeps its WatermarkAssigner and a scan without one. Planning needs no broker.
TEST(KafkaIdlenessTest, ExplainShowsTheWatermarkPushedIntoTheScan) {
  const std::string kafka = explain(
      "CREATE TABLE t (k STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '2' SECOND) WITH ("
      "'connector' = 'kafka', 'topic' = 'x', 'properties.bootstrap.servers' = '127.0.0.1:1', 'format' = 'csv', "
      "'scan.startup.mode' = 'earliest-offset');\n"
      "SELECT k FROM t;");
  EXPECT_NE(kafka.find("TableSourceScan(table=[[default_catalog, default_database, t, watermark=["), std::string::npos)
      << kafka;
  EXPECT_EQ(kafka.find("WatermarkAssigner"), std::string::npos) << kafka;
  const std::string files = explain(
      "CREATE TABLE f (k STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '2' SECOND) WITH ("
      "'connector' = 'datagen', 'number-of-rows' = '1');\n"
      "SELECT k FROM f;");
  EXPECT_NE(files.find("TableSourceScan(table=[[default_catalog, default_database, f]]"), std::string::npos) << files;
  EXPECT_NE(files.find("WatermarkAssigner"), std::string::npos) << files;
}

}  // namespace
}  // namespace sluice::connectors::kafka
