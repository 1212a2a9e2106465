// The REST bodies of rest/messages.h against hand-written expectations: a job of two vertices (a source
// at parallelism 2 feeding a sink at parallelism 1), with counters chosen here, rendered and compared
// field by field with Flink's names.

#include "rest/messages.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace sluice::rest {
namespace {

using nlohmann::json;

cluster::SubtaskProgress subtask(int index, bool running, int64_t running_ms, int64_t in, int64_t out) {
  cluster::SubtaskProgress s;
  s.subtask = index;
  s.io.running = running;
  s.io.running_time_ms = running_ms;
  s.io.num_records_in = in;
  s.io.num_records_out = out;
  s.io.num_bytes_in = in * 10;
  s.io.num_bytes_out = out * 10;
  s.io.busy_time_ms = running_ms / 4;
  s.io.idle_time_ms = running_ms / 2;
  s.io.back_pressured_time_ms = running_ms / 4;
  s.busy_time_ms_per_second = 250;
  return s;
}

/// Started at 1000, seen at 5000: the source's subtask 0 finished after 1500 ms, subtask 1 runs (3000 ms);
/// the sink runs (4000 ms).
JobSnapshot runningJob() {
  JobSnapshot j;
  j.job_id = "00000000000000000000000000000001";
  j.name = "flights";
  j.state = "RUNNING";
  j.start_time_ms = 1000;
  j.now_ms = 5000;
  j.plan_json = R"({"jid":"00000000000000000000000000000001","name":"flights","type":"STREAMING","nodes":[]})";
  j.vertices = {VertexInfo{"aaaa", "Source: gen", 2, 128}, VertexInfo{"bbbb", "Sink: out", 1, 64}};
  cluster::VertexProgress src;
  src.vertex_id = "aaaa";
  src.parallelism = 2;
  src.finished_subtasks = 1;
  src.subtasks = {subtask(0, false, 1500, 0, 30), subtask(1, true, 3000, 0, 70)};
  cluster::VertexProgress sink;
  sink.vertex_id = "bbbb";
  sink.parallelism = 1;
  sink.subtasks = {subtask(0, true, 4000, 100, 0)};
  j.progress.vertices = {src, sink};
  return j;
}

TEST(RestMessagesTest, JobsOverviewCountsSubtasksByState) {
  ClusterSnapshot c;
  c.jobs = {runningJob()};
  const json body = json::parse(multipleJobsDetailsJson(c));
  ASSERT_EQ(body["jobs"].size(), 1u);
  const json& j = body["jobs"][0];
  EXPECT_EQ(j["jid"], "00000000000000000000000000000001");
  EXPECT_EQ(j["name"], "flights");
  EXPECT_EQ(j["state"], "RUNNING");
  EXPECT_EQ(j["start-time"], 1000);
  EXPECT_EQ(j["end-time"], -1);
  EXPECT_EQ(j["duration"], 4000);
  EXPECT_EQ(j["last-modification"], 1000);
  EXPECT_EQ(j["tasks"]["total"], 3);
  EXPECT_EQ(j["tasks"]["running"], 2);
  EXPECT_EQ(j["tasks"]["finished"], 1);
  EXPECT_EQ(j["tasks"]["canceled"], 0);
  EXPECT_EQ(j["tasks"].size(), 11u);  // total + Flink's 10 ExecutionStates
  EXPECT_EQ(j["pending-operators"], 0);
}

TEST(RestMessagesTest, JobDetailsHaveVerticesWithStatusTimesAndSummedMetrics) {
  const json d = json::parse(jobDetailsJson(runningJob()));
  EXPECT_EQ(d["jid"], "00000000000000000000000000000001");
  EXPECT_EQ(d["state"], "RUNNING");
  EXPECT_EQ(d["job-type"], "STREAMING");
  EXPECT_EQ(d["isStoppable"], false);
  EXPECT_EQ(d["maxParallelism"], 128);
  EXPECT_EQ(d["now"], 5000);
  EXPECT_EQ(d["duration"], 4000);
  EXPECT_EQ(d["timestamps"]["RUNNING"], 1000);
  EXPECT_EQ(d["timestamps"]["FINISHED"], 0);
  EXPECT_EQ(d["plan"]["name"], "flights");
  ASSERT_EQ(d["vertices"].size(), 2u);
  const json& src = d["vertices"][0];
  EXPECT_EQ(src["id"], "aaaa");
  EXPECT_EQ(src["parallelism"], 2);
  EXPECT_EQ(src["maxParallelism"], 128);
  EXPECT_EQ(src["slotSharingGroupId"], "default");
  EXPECT_EQ(src["status"], "RUNNING");  // one finished, one running
  // Start: the running subtask began 3000 ms before now (2000); the finished one counts from the job's
  // start (1000): the earlier wins.
  EXPECT_EQ(src["start-time"], 1000);
  EXPECT_EQ(src["end-time"], -1);
  EXPECT_EQ(src["duration"], 4000);
  EXPECT_EQ(src["tasks"]["RUNNING"], 1);
  EXPECT_EQ(src["tasks"]["FINISHED"], 1);
  EXPECT_EQ(src["metrics"]["write-records"], 100);   // 30 + 70
  EXPECT_EQ(src["metrics"]["write-bytes"], 1000);
  EXPECT_EQ(src["metrics"]["read-records"], 0);
  EXPECT_EQ(src["metrics"]["accumulated-idle-time"], 750 + 1500);  // 1500/2 + 3000/2
  EXPECT_EQ(d["vertices"][1]["metrics"]["read-records"], 100);
  EXPECT_EQ(d["vertices"][1]["start-time"], 1000);  // 5000 - 4000
  EXPECT_EQ(d["status-counts"]["RUNNING"], 2);
  EXPECT_EQ(d["status-counts"]["FINISHED"], 0);
}

TEST(RestMessagesTest, CancelledJobShowsEndStateOfUnfinishedSubtasks) {
  JobSnapshot j = runningJob();
  j.state = "CANCELED";
  j.end_time_ms = 6000;
  for (auto& v : j.progress.vertices)
    for (auto& s : v.subtasks) s.io.running = false;
  const json d = json::parse(jobDetailsJson(j));
  EXPECT_EQ(d["duration"], 5000);
  EXPECT_EQ(d["timestamps"]["CANCELED"], 6000);
  EXPECT_EQ(d["vertices"][0]["tasks"]["CANCELED"], 2);  // not every subtask of the vertex finished
  EXPECT_EQ(d["vertices"][0]["status"], "CANCELED");
  EXPECT_EQ(d["vertices"][1]["status"], "CANCELED");
}

TEST(RestMessagesTest, VertexDetailsListSubtasks) {
  const json v = json::parse(jobVertexDetailsJson(runningJob(), 0));
  EXPECT_EQ(v["id"], "aaaa");
  EXPECT_EQ(v["name"], "Source: gen");
  EXPECT_EQ(v["parallelism"], 2);
  ASSERT_EQ(v["subtasks"].size(), 2u);
  EXPECT_EQ(v["subtasks"][0]["subtask"], 0);
  EXPECT_EQ(v["subtasks"][0]["status"], "FINISHED");
  EXPECT_EQ(v["subtasks"][0]["start-time"], 1000);
  EXPECT_EQ(v["subtasks"][0]["end-time"], 2500);
  EXPECT_EQ(v["subtasks"][0]["duration"], 1500);
  EXPECT_EQ(v["subtasks"][1]["status"], "RUNNING");
  EXPECT_EQ(v["subtasks"][1]["start-time"], 2000);
  EXPECT_EQ(v["subtasks"][1]["end-time"], -1);
  EXPECT_EQ(v["subtasks"][1]["metrics"]["write-records"], 70);
  EXPECT_EQ(v["subtasks"][1]["attempt"], 0);
  EXPECT_EQ(v["subtasks"][1]["status-duration"]["RUNNING"], 3000);
  EXPECT_EQ(v["subtasks"][1]["status-duration"]["FAILED"], 0);
}

TEST(RestMessagesTest, VertexMetricsListNamesOrGiveRequestedValues) {
  const JobSnapshot j = runningJob();
  const json names = json::parse(vertexMetricsJson(j, 0, std::nullopt));
  ASSERT_TRUE(names.is_array());
  EXPECT_EQ(names[0], json({{"id", "0.numRecordsIn"}}));
  EXPECT_EQ(names[0].size(), 1u);  // ids only
  const json values = json::parse(vertexMetricsJson(
      j, 0, std::vector<std::string>{"1.numRecordsOut", "no.such.metric", "0.busyTimeMsPerSecond"}));
  EXPECT_EQ(values, json::parse(R"([{"id":"1.numRecordsOut","value":"70"},
                                     {"id":"0.busyTimeMsPerSecond","value":"250"}])"));
}

TEST(RestMessagesTest, OverviewCountsJobsAndSlots) {
  ClusterSnapshot c;
  c.task_managers = 2;
  c.slots_per_task_manager = 3;
  c.slots_in_use = 4;
  JobSnapshot failed = runningJob();
  failed.state = "FAILED";
  JobSnapshot finished = runningJob();
  finished.state = "FINISHED";
  c.jobs = {runningJob(), failed, finished, finished};
  const json o = json::parse(clusterOverviewJson(c));
  EXPECT_EQ(o["taskmanagers"], 2);
  EXPECT_EQ(o["slots-total"], 6);
  EXPECT_EQ(o["slots-available"], 2);
  EXPECT_EQ(o["jobs-running"], 1);
  EXPECT_EQ(o["jobs-finished"], 2);
  EXPECT_EQ(o["jobs-failed"], 1);
  EXPECT_EQ(o["jobs-cancelled"], 0);
  const json ids = json::parse(jobIdsWithStatusJson(c));
  EXPECT_EQ(ids["jobs"][1], json({{"id", "00000000000000000000000000000001"}, {"status", "FAILED"}}));
  // Slots 0..3 over 2 TaskManagers: slot s on TaskManager s mod 2, so two used on each.
  c.data_ports = {4100, 4101};
  const json tms = json::parse(taskManagersJson(c, Hardware{4, 8000, 1000, 0}, 9000));
  ASSERT_EQ(tms["taskmanagers"].size(), 2u);
  EXPECT_EQ(tms["taskmanagers"][1]["slotsNumber"], 3);
  EXPECT_EQ(tms["taskmanagers"][1]["freeSlots"], 1);
  EXPECT_EQ(tms["taskmanagers"][1]["dataPort"], 4101);
  EXPECT_EQ(tms["taskmanagers"][0]["hardware"]["cpuCores"], 4);
  EXPECT_EQ(tms["taskmanagers"][0]["totalResource"]["extendedResources"], json::object());
}

TEST(RestMessagesTest, CheckpointStatisticsFromTheLatestCompletedCheckpoint) {
  JobSnapshot j = runningJob();
  runtime::checkpoint::CheckpointStats s;
  s.number_of_completed_checkpoints = 3;
  s.number_of_failed_checkpoints = 1;
  s.number_of_in_progress_checkpoints = 1;
  s.last_checkpoint_id = 4;
  s.last_checkpoint_size = 512;
  s.last_checkpoint_full_size = 2048;
  s.last_checkpoint_duration_ms = 35;
  s.last_checkpoint_external_path = "/ck/job/chk-4/_metadata";
  j.progress.checkpoints = s;
  const json c = json::parse(checkpointingStatisticsJson(j));
  EXPECT_EQ(c["counts"], json::parse(R"({"restored":0,"total":5,"in_progress":1,"completed":3,"failed":1})"));
  const json& latest = c["latest"]["completed"];
  EXPECT_EQ(latest["id"], 4);
  EXPECT_EQ(latest["status"], "COMPLETED");
  EXPECT_EQ(latest["checkpointed_size"], 512);
  EXPECT_EQ(latest["state_size"], 2048);
  EXPECT_EQ(latest["end_to_end_duration"], 35);
  EXPECT_EQ(latest["num_subtasks"], 3);
  EXPECT_EQ(latest["external_path"], "/ck/job/chk-4");
  EXPECT_EQ(c["summary"]["end_to_end_duration"]["max"], 35);
  EXPECT_EQ(c["history"].size(), 1u);
  EXPECT_TRUE(c["latest"]["failed"].is_null());
}

TEST(RestMessagesTest, ExceptionsOfAFailedJob) {
  JobSnapshot j = runningJob();
  EXPECT_TRUE(json::parse(jobExceptionsJson(j))["root-exception"].is_null());
  j.state = "FAILED";
  j.failure = "Job 'flights' failed: boom";
  j.failure_class = "sluice::UserError";
  j.failure_time_ms = 7000;
  const json e = json::parse(jobExceptionsJson(j));
  EXPECT_EQ(e["root-exception"], "Job 'flights' failed: boom");
  EXPECT_EQ(e["timestamp"], 7000);
  ASSERT_EQ(e["exceptionHistory"]["entries"].size(), 1u);
  EXPECT_EQ(e["exceptionHistory"]["entries"][0]["exceptionName"], "sluice::UserError");
  EXPECT_EQ(e["exceptionHistory"]["entries"][0]["timestamp"], 7000);
}

TEST(RestMessagesTest, SavepointOperationsAndErrors) {
  EXPECT_EQ(json::parse(savepointStatusJson(SavepointOperation{})),
            json::parse(R"({"status":{"id":"IN_PROGRESS"},"operation":null})"));
  SavepointOperation done{SavepointOperation::Status::kCompleted, "/sp/savepoint-1", ""};
  EXPECT_EQ(json::parse(savepointStatusJson(done)),
            json::parse(R"({"status":{"id":"COMPLETED"},"operation":{"location":"/sp/savepoint-1"}})"));
  SavepointOperation failed{SavepointOperation::Status::kFailed, "", "no directory"};
  EXPECT_EQ(json::parse(savepointStatusJson(failed))["operation"]["failure-cause"]["stack-trace"], "no directory");
  EXPECT_EQ(json::parse(triggerResponseJson("abc")), json::parse(R"({"request-id":"abc"})"));
  EXPECT_EQ(json::parse(errorJson({"a", "b"})), json::parse(R"({"errors":["a","b"]})"));
  EXPECT_EQ(json::parse(jobPlanJson(runningJob()))["plan"]["type"], "STREAMING");
  EXPECT_EQ(json::parse(dashboardConfigurationJson("CET", 3600000))["timezone-offset"], 3600000);
}

}  // namespace
}  // namespace sluice::rest
