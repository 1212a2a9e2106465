#include "rest/messages.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "runtime/checkpoint/checkpoint_storage.h"

namespace sluice::rest {

namespace {

using nlohmann::json;

// Flink's ExecutionState values, in its declaration order.
const std::vector<std::string>& executionStates() {
  static const std::vector<std::string> states = {"CREATED",  "SCHEDULED", "DEPLOYING", "RUNNING",     "FINISHED",
                                                  "CANCELING", "CANCELED", "FAILED",    "RECONCILING", "INITIALIZING"};
  return states;
}

// Flink's JobStatus values, in its declaration order.
const std::vector<std::string>& jobStatuses() {
  static const std::vector<std::string> states = {"INITIALIZING", "CREATED",  "RUNNING",    "FAILING",
                                                  "FAILED",       "CANCELLING", "CANCELED", "FINISHED",
                                                  "RESTARTING",   "SUSPENDED",  "RECONCILING"};
  return states;
}

bool terminal(const std::string& state) { return state == "FINISHED" || state == "CANCELED" || state == "FAILED"; }

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

int64_t duration(const JobSnapshot& job) {
  return (job.end_time_ms >= 0 ? job.end_time_ms : job.now_ms) - job.start_time_ms;
}

const cluster::VertexProgress* progressOf(const JobSnapshot& job, size_t vertex) {
  return vertex < job.progress.vertices.size() ? &job.progress.vertices[vertex] : nullptr;
}

/// Subtask counts by ExecutionState for one vertex (every state present, 0 when none).
std::map<std::string, int> vertexTaskCounts(const JobSnapshot& job, size_t vertex) {
  std::map<std::string, int> counts;
  for (const auto& s : executionStates()) counts[s] = 0;
  const cluster::VertexProgress* p = progressOf(job, vertex);
  int seen = 0;
  if (p != nullptr) {
    for (const auto& st : p->subtasks) {
      ++counts[subtaskStatus(job, *p, st)];
      ++seen;
    }
  }
  // Subtasks without progress (not built yet): created in a running job, else ended with the job.
  const int missing = std::max(0, job.vertices[vertex].parallelism - seen);
  if (missing > 0) counts[terminal(job.state) ? job.state : "CREATED"] += missing;
  return counts;
}

/// Flink's ExecutionJobVertex#getAggregateJobVertexState over the subtask counts.
std::string aggregateState(const std::map<std::string, int>& counts, int parallelism) {
  auto n = [&](const char* s) { return counts.at(s); };
  if (n("FAILED") > 0) return "FAILED";
  if (n("CANCELING") > 0) return "CANCELING";
  if (n("CANCELED") > 0) return "CANCELED";
  if (n("INITIALIZING") > 0) return "INITIALIZING";
  if (n("RUNNING") > 0) return "RUNNING";
  if (n("FINISHED") > 0) return n("FINISHED") == parallelism ? "FINISHED" : "RUNNING";
  if (n("SCHEDULED") > 0) return "SCHEDULED";
  return "CREATED";
}

/// Flink's IOMetricsInfo of one subtask (or summed over a vertex).
json ioMetrics(const runtime::TaskIOMetrics& io) {
  return json{{"read-bytes", io.num_bytes_in},
              {"read-bytes-complete", true},
              {"write-bytes", io.num_bytes_out},
              {"write-bytes-complete", true},
              {"read-records", io.num_records_in},
              {"read-records-complete", true},
              {"write-records", io.num_records_out},
              {"write-records-complete", true},
              {"accumulated-backpressured-time", io.back_pressured_time_ms},
              {"accumulated-idle-time", io.idle_time_ms},
              {"accumulated-busy-time", static_cast<double>(io.busy_time_ms)}};
}

runtime::TaskIOMetrics sumIo(const cluster::VertexProgress* p) {
  runtime::TaskIOMetrics sum;
  if (p == nullptr) return sum;
  for (const auto& s : p->subtasks) {
    sum.num_bytes_in += s.io.num_bytes_in;
    sum.num_bytes_out += s.io.num_bytes_out;
    sum.num_records_in += s.io.num_records_in;
    sum.num_records_out += s.io.num_records_out;
    sum.back_pressured_time_ms += s.io.back_pressured_time_ms;
    sum.idle_time_ms += s.io.idle_time_ms;
    sum.busy_time_ms += s.io.busy_time_ms;
  }
  return sum;
}

/// Start, end and duration of a subtask: a running one started running_time_ms ago; one that ended is
/// counted from the job's start (the cluster keeps no per-subtask start time).
struct Times {
  int64_t start = -1;
  int64_t end = -1;
  int64_t duration = -1;
};
Times subtaskTimes(const JobSnapshot& job, const cluster::SubtaskProgress& s) {
  Times t;
  if (s.io.running) {
    t.start = job.now_ms - s.io.running_time_ms;
    t.duration = s.io.running_time_ms;
  } else if (s.io.running_time_ms > 0) {
    t.start = job.start_time_ms;
    t.duration = s.io.running_time_ms;
    t.end = t.start + t.duration;
  }
  return t;
}

Times vertexTimes(const JobSnapshot& job, const cluster::VertexProgress* p) {
  Times v;
  if (p == nullptr) return v;
  bool all_ended = !p->subtasks.empty();
  for (const auto& s : p->subtasks) {
    const Times t = subtaskTimes(job, s);
    if (t.start >= 0 && (v.start < 0 || t.start < v.start)) v.start = t.start;
    if (t.end < 0) all_ended = false;
    v.end = std::max(v.end, t.end);
  }
  if (!all_ended) v.end = -1;
  if (v.start >= 0) v.duration = (v.end >= 0 ? v.end : job.now_ms) - v.start;
  return v;
}

/// Flink's status-duration: ms spent per ExecutionState; the cluster knows the running time only.
json statusDuration(const JobSnapshot& job, const cluster::SubtaskProgress& s) {
  json d;
  for (const auto& state : executionStates()) d[state] = 0;
  d["RUNNING"] = s.io.running_time_ms;
  if (!s.io.running && s.io.running_time_ms == 0 && !terminal(job.state)) d["SCHEDULED"] = job.now_ms - job.start_time_ms;
  return d;
}

json unknownResource() {
  return json{{"cpuCores", 0.0},       {"taskHeapMemory", 0}, {"taskOffHeapMemory", 0},
              {"managedMemory", 0},    {"networkMemory", 0},  {"extendedResources", json::object()}};
}

std::string number(double v) { return fmt::format("{}", v); }
std::string number(int64_t v) { return fmt::format("{}", v); }

json statistics(int64_t v) {
  return json{{"min", v}, {"max", v}, {"avg", v}, {"p50", v}, {"p90", v}, {"p95", v}, {"p99", v}, {"p999", v}};
}

}  // namespace

std::string subtaskStatus(const JobSnapshot& job, const cluster::VertexProgress& vertex,
                          const cluster::SubtaskProgress& subtask) {
  if (subtask.io.running) return job.state == "CANCELLING" ? "CANCELING" : "RUNNING";
  if (subtask.io.running_time_ms > 0) {
    if (!terminal(job.state) || job.state == "FINISHED" || vertex.finished_subtasks == vertex.parallelism) {
      return "FINISHED";
    }
    return job.state;
  }
  if (!terminal(job.state)) return job.state == "CANCELLING" ? "CANCELING" : "SCHEDULED";
  return job.state == "FINISHED" ? "FINISHED" : "CANCELED";
}

std::string errorJson(const std::vector<std::string>& errors) { return json{{"errors", errors}}.dump(); }

std::string dashboardConfigurationJson(const std::string& timezone_name, int64_t timezone_offset_ms) {
  return json{{"refresh-interval", 3000},
              {"timezone-name", timezone_name},
              {"timezone-offset", timezone_offset_ms},
              {"flink-version", kFlinkVersion},
              {"flink-revision", "sluice"},
              {"features",
               {{"web-submit", false}, {"web-cancel", true}, {"web-rescale", false}, {"web-history", false}}}}
      .dump();
}

std::string clusterOverviewJson(const ClusterSnapshot& cluster) {
  int running = 0, finished = 0, cancelled = 0, failed = 0;
  for (const auto& j : cluster.jobs) {
    if (j.state == "FINISHED") ++finished;
    else if (j.state == "CANCELED") ++cancelled;
    else if (j.state == "FAILED") ++failed;
    else ++running;
  }
  const int total = cluster.task_managers * cluster.slots_per_task_manager;
  return json{{"taskmanagers", cluster.task_managers},
              {"taskmanagers-blocked", 0},
              {"slots-total", total},
              {"slots-available", std::max(0, total - cluster.slots_in_use)},
              {"slots-free-and-blocked", 0},
              {"jobs-running", running},
              {"jobs-finished", finished},
              {"jobs-cancelled", cancelled},
              {"jobs-failed", failed},
              {"flink-version", kFlinkVersion},
              {"flink-commit", "sluice"}}
      .dump();
}

std::string jobIdsWithStatusJson(const ClusterSnapshot& cluster) {
  json jobs = json::array();
  for (const auto& j : cluster.jobs) jobs.push_back(json{{"id", j.job_id}, {"status", j.state}});
  return json{{"jobs", jobs}}.dump();
}

std::string multipleJobsDetailsJson(const ClusterSnapshot& cluster) {
  json jobs = json::array();
  for (const auto& j : cluster.jobs) {
    std::map<std::string, int> counts;
    for (const auto& s : executionStates()) counts[s] = 0;
    int total = 0;
    for (size_t v = 0; v < j.vertices.size(); ++v) {
      for (const auto& [state, n] : vertexTaskCounts(j, v)) counts[state] += n;
      total += j.vertices[v].parallelism;
    }
    json tasks{{"total", total}};
    for (const auto& [state, n] : counts) tasks[lower(state)] = n;
    jobs.push_back(json{{"jid", j.job_id},
                        {"name", j.name},
                        {"start-time", j.start_time_ms},
                        {"end-time", j.end_time_ms},
                        {"duration", duration(j)},
                        {"state", j.state},
                        {"last-modification", j.end_time_ms >= 0 ? j.end_time_ms : j.start_time_ms},
                        {"pending-operators", 0},
                        {"tasks", tasks}});
  }
  return json{{"jobs", jobs}}.dump();
}

std::string jobDetailsJson(const JobSnapshot& job) {
  json timestamps;
  for (const auto& s : jobStatuses()) timestamps[s] = 0;
  timestamps["INITIALIZING"] = job.start_time_ms;
  timestamps["CREATED"] = job.start_time_ms;
  timestamps["RUNNING"] = job.start_time_ms;
  if (job.end_time_ms >= 0) timestamps[job.state] = job.end_time_ms;
  json vertices = json::array();
  std::map<std::string, int> status_counts;
  for (const auto& s : executionStates()) status_counts[s] = 0;
  int max_parallelism = 0;
  for (size_t v = 0; v < job.vertices.size(); ++v) {
    const VertexInfo& info = job.vertices[v];
    const cluster::VertexProgress* p = progressOf(job, v);
    const std::map<std::string, int> counts = vertexTaskCounts(job, v);
    const std::string status = aggregateState(counts, info.parallelism);
    ++status_counts[status];
    max_parallelism = std::max(max_parallelism, info.max_parallelism);
    const Times t = vertexTimes(job, p);
    vertices.push_back(json{{"id", info.id},
                            {"name", info.name},
                            {"maxParallelism", info.max_parallelism},
                            {"parallelism", info.parallelism},
                            {"slotSharingGroupId", info.slot_sharing_group},
                            {"status", status},
                            {"start-time", t.start},
                            {"end-time", t.end},
                            {"duration", t.duration},
                            {"tasks", counts},
                            {"metrics", ioMetrics(sumIo(p))}});
  }
  return json{{"jid", job.job_id},
              {"name", job.name},
              {"isStoppable", false},
              {"state", job.state},
              {"job-type", job.streaming ? "STREAMING" : "BATCH"},
              {"start-time", job.start_time_ms},
              {"end-time", job.end_time_ms},
              {"duration", duration(job)},
              {"maxParallelism", max_parallelism},
              {"now", job.now_ms},
              {"pending-operators", 0},
              {"timestamps", timestamps},
              {"vertices", vertices},
              {"status-counts", status_counts},
              {"plan", json::parse(job.plan_json)}}
      .dump();
}

std::string jobPlanJson(const JobSnapshot& job) { return json{{"plan", json::parse(job.plan_json)}}.dump(); }

std::string jobExceptionsJson(const JobSnapshot& job) {
  json entries = json::array();
  json root = nullptr, timestamp = nullptr;
  if (!job.failure.empty()) {
    root = job.failure;
    timestamp = job.failure_time_ms;
    entries.push_back(json{{"exceptionName", job.failure_class},
                           {"stacktrace", job.failure},
                           {"timestamp", job.failure_time_ms},
                           {"taskName", nullptr},
                           {"endpoint", nullptr},
                           {"taskManagerId", nullptr},
                           {"failureLabels", json::object()},
                           {"concurrentExceptions", json::array()}});
  }
  return json{{"root-exception", root},
              {"timestamp", timestamp},
              {"all-exceptions", json::array()},
              {"truncated", false},
              {"exceptionHistory", {{"entries", entries}, {"truncated", false}}}}
      .dump();
}

std::string checkpointingStatisticsJson(const JobSnapshot& job) {
  const runtime::checkpoint::CheckpointStats& c = *job.progress.checkpoints;
  int num_subtasks = 0;
  for (const auto& v : job.vertices) num_subtasks += v.parallelism;
  json completed = nullptr;
  json history = json::array();
  const bool have_latest = c.last_checkpoint_id > 0;
  if (have_latest) {
    completed = json{{"className", "completed"},
                     {"id", c.last_checkpoint_id},
                     {"status", "COMPLETED"},
                     {"is_savepoint", false},
                     {"savepointFormat", nullptr},
                     {"trigger_timestamp", -1},
                     {"latest_ack_timestamp", -1},
                     {"checkpointed_size", c.last_checkpoint_size},
                     {"state_size", c.last_checkpoint_full_size},
                     {"end_to_end_duration", c.last_checkpoint_duration_ms},
                     {"alignment_buffered", 0},
                     {"processed_data", 0},
                     {"persisted_data", c.last_checkpoint_persisted_in_flight_bytes},
                     {"num_subtasks", num_subtasks},
                     {"num_acknowledged_subtasks", num_subtasks},
                     {"checkpoint_type", c.last_checkpoint_unaligned ? "UNALIGNED_CHECKPOINT" : "CHECKPOINT"},
                     {"tasks", json::object()},
                     {"external_path", c.last_checkpoint_external_path.empty()
                                           ? json("<checkpoint-not-externally-addressable>")
                                           : json(runtime::checkpoint::withoutMetadataFile(c.last_checkpoint_external_path))},
                     {"discarded", false}};
    history.push_back(completed);
  }
  auto stat = [&](int64_t v) { return statistics(have_latest ? v : 0); };
  return json{{"counts",
               {{"restored", 0},
                {"total", c.number_of_completed_checkpoints + c.number_of_failed_checkpoints +
                              c.number_of_in_progress_checkpoints},
                {"in_progress", c.number_of_in_progress_checkpoints},
                {"completed", c.number_of_completed_checkpoints},
                {"failed", c.number_of_failed_checkpoints}}},
              {"summary",
               {{"checkpointed_size", stat(c.last_checkpoint_size)},
                {"state_size", stat(c.last_checkpoint_full_size)},
                {"end_to_end_duration", stat(c.last_checkpoint_duration_ms)},
                {"alignment_buffered", stat(0)},
                {"processed_data", stat(0)},
                {"persisted_data", stat(c.last_checkpoint_persisted_in_flight_bytes)}}},
              {"latest", {{"completed", completed}, {"savepoint", nullptr}, {"failed", nullptr}, {"restored", nullptr}}},
              {"history", history}}
      .dump();
}

std::string jobVertexDetailsJson(const JobSnapshot& job, size_t vertex) {
  const VertexInfo& info = job.vertices[vertex];
  const cluster::VertexProgress* p = progressOf(job, vertex);
  json subtasks = json::array();
  if (p != nullptr) {
    for (const auto& s : p->subtasks) {
      const Times t = subtaskTimes(job, s);
      subtasks.push_back(json{{"subtask", s.subtask},
                              {"status", subtaskStatus(job, *p, s)},
                              {"attempt", s.attempt},
                              {"endpoint", "localhost"},
                              {"start-time", t.start},
                              {"end-time", t.end},
                              {"duration", t.duration},
                              {"metrics", ioMetrics(s.io)},
                              {"taskmanager-id", "localhost"},
                              {"status-duration", statusDuration(job, s)}});
    }
  }
  return json{{"id", info.id},
              {"name", info.name},
              {"parallelism", info.parallelism},
              {"maxParallelism", info.max_parallelism},
              {"now", job.now_ms},
              {"subtasks", subtasks}}
      .dump();
}

std::vector<std::pair<std::string, std::string>> vertexMetrics(const JobSnapshot& job, size_t vertex) {
  std::vector<std::pair<std::string, std::string>> out;
  const cluster::VertexProgress* p = progressOf(job, vertex);
  if (p == nullptr) return out;
  for (const auto& s : p->subtasks) {
    const std::string prefix = fmt::format("{}.", s.subtask);
    auto add = [&](const char* name, std::string value) { out.emplace_back(prefix + name, std::move(value)); };
    add("numRecordsIn", number(s.io.num_records_in));
    add("numRecordsOut", number(s.io.num_records_out));
    add("numBytesIn", number(s.io.num_bytes_in));
    add("numBytesOut", number(s.io.num_bytes_out));
    add("numRecordsInPerSecond", number(s.num_records_in_per_second));
    add("numRecordsOutPerSecond", number(s.num_records_out_per_second));
    add("numBytesInPerSecond", number(s.num_bytes_in_per_second));
    add("numBytesOutPerSecond", number(s.num_bytes_out_per_second));
    add("busyTimeMsPerSecond", number(s.busy_time_ms_per_second));
    add("idleTimeMsPerSecond", number(s.idle_time_ms_per_second));
    add("backPressuredTimeMsPerSecond", number(s.back_pressured_time_ms_per_second));
    add("accumulatedBusyTime", number(s.io.busy_time_ms));
    add("accumulatedIdleTime", number(s.io.idle_time_ms));
    add("accumulatedBackPressuredTime", number(s.io.back_pressured_time_ms));
    add("isBackPressured", s.io.is_back_pressured ? "true" : "false");
    add("buffers.inPoolUsage", number(s.io.in_pool_usage));
    add("buffers.outPoolUsage", number(s.io.out_pool_usage));
    add("debloatedBufferSize", number(static_cast<int64_t>(s.io.debloated_buffer_size)));
    add("estimatedTimeToConsumeBuffersMs", number(s.io.estimated_time_to_consume_buffers_ms));
  }
  return out;
}

std::string vertexMetricsJson(const JobSnapshot& job, size_t vertex,
                              const std::optional<std::vector<std::string>>& get) {
  const auto metrics = vertexMetrics(job, vertex);
  json out = json::array();
  if (!get) {
    for (const auto& [id, value] : metrics) out.push_back(json{{"id", id}});
    return out.dump();
  }
  for (const auto& want : *get) {
    for (const auto& [id, value] : metrics) {
      if (id == want) out.push_back(json{{"id", id}, {"value", value}});
    }
  }
  return out.dump();
}

std::string taskManagersJson(const ClusterSnapshot& cluster, const Hardware& hardware, int64_t now_ms) {
  json tms = json::array();
  for (int t = 0; t < cluster.task_managers; ++t) {
    int used = 0;
    for (int s = 0; s < cluster.slots_in_use; ++s) used += s % cluster.task_managers == t ? 1 : 0;
    const int port = static_cast<size_t>(t) < cluster.data_ports.size() ? cluster.data_ports[static_cast<size_t>(t)] : -1;
    tms.push_back(json{{"id", fmt::format("taskmanager-{}", t)},
                       {"path", fmt::format("embedded://taskmanager-{}", t)},
                       {"dataPort", port},
                       {"jmxPort", -1},
                       {"timeSinceLastHeartbeat", now_ms},
                       {"slotsNumber", cluster.slots_per_task_manager},
                       {"freeSlots", std::max(0, cluster.slots_per_task_manager - used)},
                       // Slots here are not sized by resources (Flink's ResourceProfile.UNKNOWN shows zeros).
                       {"totalResource", unknownResource()},
                       {"freeResource", unknownResource()},
                       {"hardware",
                        {{"cpuCores", hardware.cpu_cores},
                         {"physicalMemory", hardware.physical_memory},
                         {"freeMemory", hardware.free_memory},
                         {"managedMemory", hardware.managed_memory}}},
                       {"blocked", false}});
  }
  return json{{"taskmanagers", tms}}.dump();
}

std::string triggerResponseJson(const std::string& trigger_id) { return json{{"request-id", trigger_id}}.dump(); }

std::string savepointStatusJson(const SavepointOperation& op) {
  if (op.status == SavepointOperation::Status::kInProgress) {
    return json{{"status", {{"id", "IN_PROGRESS"}}}, {"operation", nullptr}}.dump();
  }
  json operation;
  if (op.status == SavepointOperation::Status::kCompleted) {
    operation = json{{"location", op.location}};
  } else {
    operation = json{{"failure-cause", {{"class", "sluice::UserError"}, {"stack-trace", op.failure}}}};
  }
  return json{{"status", {{"id", "COMPLETED"}}}, {"operation", operation}}.dump();
}

}  // namespace sluice::rest
