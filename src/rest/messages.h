#pragma once
/// The REST API's response bodies: pure functions from registry snapshots to JSON text with Flink's field
/// names and shapes (the *Info classes of flink-runtime's org.apache.flink.runtime.rest.messages). Any
/// thread. Timestamps are epoch ms, durations ms, sizes bytes; -1 where Flink puts -1 for "not known".

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "rest/job_registry.h"

namespace sluice::rest {

/// The Flink version whose REST API this follows (reported as "flink-version").
inline constexpr const char* kFlinkVersion = "2.0.0";

/// Flink's ErrorResponseBody: {"errors": [...]}.
std::string errorJson(const std::vector<std::string>& errors);

/// GET /config (DashboardConfiguration): refresh-interval, timezone-name/-offset, flink-version,
/// flink-revision, features. `timezone_offset_ms` is the local zone's offset from UTC.
std::string dashboardConfigurationJson(const std::string& timezone_name, int64_t timezone_offset_ms);

/// GET /overview (ClusterOverviewWithVersion): taskmanagers, slots-total, slots-available, jobs-running
/// (RUNNING and CANCELLING), jobs-finished, jobs-cancelled, jobs-failed, flink-version, flink-commit.
std::string clusterOverviewJson(const ClusterSnapshot& cluster);

/// GET /jobs (JobIdsWithStatusOverview): {"jobs": [{"id", "status"}]}.
std::string jobIdsWithStatusJson(const ClusterSnapshot& cluster);

/// GET /jobs/overview (MultipleJobsDetails): {"jobs": [{"jid", "name", "start-time", "end-time",
/// "duration", "state", "last-modification", "pending-operators", "tasks": {"total", "created", ...,
/// "running", "finished", ...}}]}: subtask counts by ExecutionState, lower case.
std::string multipleJobsDetailsJson(const ClusterSnapshot& cluster);

/// GET /jobs/:jobid (JobDetailsInfo): jid, name, isStoppable, state, job-type, start-time, end-time,
/// duration, maxParallelism, now, pending-operators, timestamps (per JobStatus), vertices (id, name,
/// maxParallelism, parallelism, slotSharingGroupId (the group's name), status, start-time, end-time,
/// duration, tasks, metrics), status-counts, plan.
std::string jobDetailsJson(const JobSnapshot& job);

/// GET /jobs/:jobid/plan (JobPlanInfo): {"plan": {...}}.
std::string jobPlanJson(const JobSnapshot& job);

/// GET /jobs/:jobid/exceptions (JobExceptionsInfoWithHistory): root-exception, timestamp,
/// all-exceptions, truncated, exceptionHistory {entries, truncated}. Only the failure that ended the job
/// is known (not those a restart recovered from).
std::string jobExceptionsJson(const JobSnapshot& job);

/// GET /jobs/:jobid/checkpoints (CheckpointingStatistics): counts, summary, latest {completed,
/// savepoint, failed, restored}, history. The cluster keeps the latest completed checkpoint only, so
/// history holds at most that one and the summary is over it. Call only when job.progress.checkpoints
/// is set.
std::string checkpointingStatisticsJson(const JobSnapshot& job);

/// GET /jobs/:jobid/vertices/:vertexid (JobVertexDetailsInfo): id, name, parallelism, maxParallelism,
/// now, subtasks [{subtask, status, attempt, endpoint, start-time, end-time, duration, metrics,
/// taskmanager-id, status-duration}]. `vertex` indexes job.vertices.
std::string jobVertexDetailsJson(const JobSnapshot& job, size_t vertex);

/// The metric names of a vertex: "<subtask>.<metric>" with Flink's task metric names (numRecordsIn,
/// numRecordsOutPerSecond, busyTimeMsPerSecond, buffers.inPoolUsage, ...), and their values as strings.
std::vector<std::pair<std::string, std::string>> vertexMetrics(const JobSnapshot& job, size_t vertex);

/// GET /jobs/:jobid/vertices/:vertexid/metrics (MetricCollectionResponseBody): without `get`,
/// [{"id"}] for every metric; with it, [{"id", "value"}] for the requested ones that exist (in the order
/// asked; unknown names are left out, as Flink does).
std::string vertexMetricsJson(const JobSnapshot& job, size_t vertex, const std::optional<std::vector<std::string>>& get);

/// The machine a TaskManager runs on (Flink's HardwareDescription).
struct Hardware {
  int cpu_cores = 1;
  int64_t physical_memory = -1;  ///< bytes
  int64_t free_memory = -1;      ///< bytes
  int64_t managed_memory = 0;    ///< bytes
};

/// GET /taskmanagers (TaskManagersInfo): {"taskmanagers": [{"id", "path", "dataPort", "jmxPort",
/// "timeSinceLastHeartbeat", "slotsNumber", "freeSlots", "totalResource", "freeResource" (zeros: slots
/// are not sized by resources), "hardware", "blocked"}]}; no "memoryConfiguration" yet. Subtask slot s sits in
/// TaskManager s mod N (cluster/README.md), which gives each TaskManager's free slots.
std::string taskManagersJson(const ClusterSnapshot& cluster, const Hardware& hardware, int64_t now_ms);

/// POST /jobs/:jobid/savepoints (TriggerResponse): {"request-id": id}.
std::string triggerResponseJson(const std::string& trigger_id);

/// GET /jobs/:jobid/savepoints/:triggerid (AsynchronousOperationResult<SavepointInfo>):
/// {"status": {"id": "IN_PROGRESS"|"COMPLETED"}, "operation": {"location"} | {"failure-cause": {...}}}.
std::string savepointStatusJson(const SavepointOperation& op);

/// ExecutionState of one subtask: RUNNING (CANCELING once its job is cancelling), FINISHED when it
/// ended in a job that is running or finished and every subtask of the vertex finished, SCHEDULED when
/// it has not started in a running job (a later region), else the job's end state (CANCELED, FAILED).
std::string subtaskStatus(const JobSnapshot& job, const cluster::VertexProgress& vertex,
                          const cluster::SubtaskProgress& subtask);

}  // namespace sluice::rest
