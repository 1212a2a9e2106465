#pragma once
/// JobRegistry: the jobs of the embedded cluster as the REST handlers see them (the role of Flink's
/// Dispatcher with its running jobs and its ExecutionGraphInfoStore of finished ones), fed as a
/// cluster::JobListener by the client that runs the jobs.
///
/// Threading: every method may be called from any thread. The registry keeps, per job, the facts known at
/// submission (name, plan, vertices, start time) and, once it ended, its final result, all under one
/// mutex. While a job runs, a snapshot asks its JobHandle for progress() (which copies the tasks' metric
/// counters under the cluster's own locks; no task thread is called or waited for). Savepoints run on a
/// thread of their own per request; the registry keeps the job's shared JobHandle alive meanwhile.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cluster/job_listener.h"
#include "cluster/mini_cluster.h"
#include "common/config.h"

namespace sluice::rest {

/// One JobVertex (Flink's JobVertexID, name, parallelism, maxParallelism).
struct VertexInfo {
  std::string id;
  std::string name;
  int parallelism = 1;
  int max_parallelism = 128;
  std::string slot_sharing_group = "default";
};

/// A copy of what the REST API shows of one job, taken at `now_ms`.
struct JobSnapshot {
  std::string job_id;
  std::string name;
  /// Flink's JobStatus name: RUNNING, CANCELLING (cancel requested, tasks still stopping), FINISHED,
  /// CANCELED or FAILED.
  std::string state;
  bool streaming = true;        ///< job-type STREAMING, else BATCH
  int64_t start_time_ms = 0;    ///< epoch ms of the submission
  int64_t end_time_ms = -1;     ///< epoch ms of the end; -1 while running
  int64_t now_ms = 0;           ///< epoch ms of the snapshot
  std::string plan_json;        ///< graph::jobGraphToJson with this job's id
  std::vector<VertexInfo> vertices;
  /// Counters per vertex, in `vertices` order (JobHandle::progress while running, the final result after).
  cluster::JobProgress progress;
  std::string failure;          ///< the error of a FAILED job; empty otherwise
  std::string failure_class;    ///< its C++ class ("sluice::UserError")
  int64_t failure_time_ms = 0;  ///< epoch ms of the failure
};

/// The TaskManagers of the embedded cluster: those of the running job's MiniCluster, else those the
/// configuration describes (local.number-taskmanager x taskmanager.numberOfTaskSlots).
struct ClusterSnapshot {
  int task_managers = 1;
  int slots_per_task_manager = 1;
  int slots_in_use = 0;               ///< the running job's required slots (0: none runs)
  std::vector<uint16_t> data_ports;   ///< per TaskManager (empty with one TaskManager)
  std::vector<JobSnapshot> jobs;      ///< every job, in submission order
};

/// A savepoint triggered through the REST API (Flink's asynchronous operation result).
struct SavepointOperation {
  enum class Status { kInProgress, kCompleted, kFailed };
  Status status = Status::kInProgress;
  std::string location;  ///< the savepoint's directory, once completed
  std::string failure;   ///< why it failed
};

class JobRegistry final : public cluster::JobListener {
 public:
  /// `cluster_config`: the session configuration (TaskManagers and slots when no job runs).
  explicit JobRegistry(Configuration cluster_config);
  /// Waits for the savepoint threads (they end when their savepoint completes, fails, times out or the
  /// job ends).
  ~JobRegistry() override;
  JobRegistry(const JobRegistry&) = delete;
  JobRegistry& operator=(const JobRegistry&) = delete;

  void onJobSubmitted(const graph::JobGraph& job, const Configuration& config,
                      const std::shared_ptr<cluster::JobHandle>& handle) override;
  void onJobExecuted(const std::string& job_id, const cluster::JobExecutionResult* result,
                     std::exception_ptr failure) override;

  /// Every job (submission order) and the TaskManagers.
  ClusterSnapshot snapshot() const;
  /// One job; nullopt when no job has that id.
  std::optional<JobSnapshot> job(const std::string& job_id) const;

  enum class CancelOutcome { kAccepted, kNotFound, kAlreadyTerminal };
  /// Cancels a running job (returns at once; its tasks stop on their threads).
  CancelOutcome cancel(const std::string& job_id);

  /// Starts a savepoint of a running job into `target_dir` (empty: the job's
  /// execution.checkpointing.savepoint-dir) and returns its trigger id (32 hex digits). nullopt: no such
  /// job. Any STREAMING job, with or without execution.checkpointing.interval. Throws ConfigError when
  /// neither names a directory (Flink's 400), UserError when the job is not running or is a BATCH job
  /// ("Job <id> is not a streaming job", Flink's words).
  std::optional<std::string> triggerSavepoint(const std::string& job_id, const std::string& target_dir);
  /// Stop-with-savepoint (POST /jobs/:jobid/stop, JobHandle::stopWithSavepoint): like triggerSavepoint,
  /// and the job then ends FINISHED. The operation completes once the savepoint completed and the job
  /// ended (Flink's stop completes with the job's termination). `drain`: MAX_WATERMARK first.
  std::optional<std::string> stopWithSavepoint(const std::string& job_id, const std::string& target_dir, bool drain);
  /// Waits, at most `timeout`, until the final result (completed or failed) of every stop-with-savepoint
  /// triggered so far has been read through savepoint(); true when it has, false on timeout. A stop counts
  /// from its trigger on, so a job that ended before the savepoint thread recorded its result still waits.
  /// `sluice run` calls it before its server goes, since a stopped job ends the script at once and the
  /// client polling for the savepoint's path would find nobody there.
  bool awaitResultsRead(std::chrono::milliseconds timeout);
  /// The state of a savepoint started by triggerSavepoint or stopWithSavepoint; nullopt for an unknown job
  /// or trigger id.
  std::optional<SavepointOperation> savepoint(const std::string& job_id, const std::string& trigger_id) const;

 private:
  struct Record;
  JobSnapshot snapshotLocked(const Record& r, int64_t now_ms) const;
  /// triggerSavepoint and stopWithSavepoint: checks the job, starts the thread that runs `take` on the
  /// job's handle (returning the _metadata path) and records its outcome under a new trigger id.
  std::optional<std::string> startSavepoint(
      const std::string& job_id, const std::string& target_dir, const char* target_field, bool stop,
      std::function<std::string(cluster::JobHandle&, std::chrono::milliseconds)> take);

  const Configuration cluster_config_;
  mutable std::mutex mu_;
  mutable std::condition_variable read_cv_;  // a stop result was read
  std::vector<std::shared_ptr<Record>> jobs_;  // submission order
  std::vector<std::thread> savepoint_threads_;
};

/// The epoch time in ms (the REST API's timestamps).
int64_t currentTimeMillis();

}  // namespace sluice::rest
