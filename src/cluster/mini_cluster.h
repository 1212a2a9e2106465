#pragma once
/// MiniCluster: runs a JobGraph inside this process, one thread per subtask (Flink's MiniCluster), deployed
/// region by region by the scheduler (scheduler/region_scheduler.h, Flink's PipelinedRegionSchedulingStrategy).
///
/// Slots: the cluster has `taskmanager.numberOfTaskSlots` x `local.number-taskmanager` slots. When
/// `taskmanager.numberOfTaskSlots` is not set, each TaskManager gets ceil(required / TaskManagers) slots,
/// so the job fits (as Flink's PerJobMiniClusterFactory sizes a local cluster to the job); when it is set,
/// it is enforced. Subtasks of one slot sharing group with the same index share a slot. In STREAMING all
/// regions run at once (a job needs, summed over its slot sharing groups, the largest parallelism in the
/// group); in BATCH each region has its own default group and regions run one after another as their
/// blocking inputs are produced, reusing the slots of finished regions. A region that cannot get its slots
/// within `slot.request.timeout` fails the job with a UserError naming required and available slots.
/// Blocking results are buffered completely in the consumer's input channels (memory) before the consumer
/// is deployed.
///
/// Failover: a task failure that the restart strategy allows restarts, with
/// `jobmanager.execution.failover-strategy` = region (default), only the regions scheduler::regionsToRestart
/// names (Flink's RestartPipelinedRegionFailoverStrategy), restored from the latest completed checkpoint
/// while the other regions run on, on one TaskManager or several (their TCP channels are released and
/// requested again; the connections stay up); otherwise (full, every region affected, or a failed data
/// connection) the whole job. wait() rethrows the final failure as "Job '<name>' (<id>) failed:
/// <task> (i/n) failed: <error>" with its original type.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/config.h"
#include "graph/job_graph.h"
#include "runtime/checkpoint/checkpoint_coordinator.h"
#include "runtime/task/task_io_metrics.h"
#include "scheduler/region_scheduler.h"

namespace sluice::cluster {

/// Counters of one operator, summed over its subtasks.
struct OperatorProgress {
  int node_id = 0;
  std::string name;
  int64_t records_in = 0;
  int64_t records_out = 0;
  int64_t connection_outages = 0;  ///< sum over subtasks of OperatorMetrics::num_connection_outages
  int64_t late_records_dropped = 0;  ///< sum over subtasks of OperatorMetrics::num_late_records_dropped
  /// Sorted input (FLIP-327 backlog, BATCH): subtasks sorting or flushing now, records sorted, bytes spilled.
  int sorting_subtasks = 0;
  int64_t records_sorted = 0;
  int64_t bytes_spilled = 0;
  /// Subtasks whose records are backlog now (OperatorMetrics::backlog: sources and watermark assigners).
  int backlog_subtasks = 0;
};

/// Metrics of one subtask (Flink's task IO metrics). `io` holds cumulative values; the rates are averages
/// over a window: since the previous report for the progress callback, else over the subtask's running time.
struct SubtaskProgress {
  int subtask = 0;   ///< 0-based index
  std::string name;  ///< "Map (1/2)"
  /// Flink's attemptNumber: 0 for the first run, +1 each time a failover restarted this subtask (a region
  /// failover restarts only the subtasks of the regions it needs).
  int attempt = 0;
  runtime::TaskIOMetrics io;
  /// `busyTimeMsPerSecond`, `idleTimeMsPerSecond`, `backPressuredTimeMsPerSecond`: ms per second of the
  /// window; the three add up to 1000 (0 when the subtask did not run during the window).
  double busy_time_ms_per_second = 0;
  double idle_time_ms_per_second = 0;
  double back_pressured_time_ms_per_second = 0;
  double num_records_in_per_second = 0;   ///< `numRecordsInPerSecond`
  double num_records_out_per_second = 0;  ///< `numRecordsOutPerSecond`
  double num_bytes_in_per_second = 0;     ///< `numBytesInPerSecond`
  double num_bytes_out_per_second = 0;    ///< `numBytesOutPerSecond`
};

/// Counters of one vertex, summed over its subtasks (Flink's vertex metrics: records read by the head,
/// records written to the network; a sink vertex writes none).
struct VertexProgress {
  std::string vertex_id;
  std::string name;
  int parallelism = 1;
  int64_t records_in = 0;   ///< `numRecordsIn`: sum over subtasks
  int64_t records_out = 0;  ///< `numRecordsOut`: sum over subtasks
  int finished_subtasks = 0;
  /// `numConnectionOutages`: outages of external systems (Kafka brokers) its connectors reported, summed
  /// over operators and subtasks.
  int64_t connection_outages = 0;
  /// `numLateRecordsDropped`: rows its window operators dropped as late, summed over operators and subtasks.
  int64_t late_records_dropped = 0;
  std::vector<OperatorProgress> operators;  ///< chain order
  std::vector<SubtaskProgress> subtasks;    ///< subtask index order
  // Network metrics (Flink's names), over the subtasks' channels through network buffers only.
  double in_pool_usage = 0;    ///< `inPoolUsage`: max over subtasks, in [0, 1]
  double out_pool_usage = 0;   ///< `outPoolUsage`: max over subtasks, in [0, 1]
  int64_t num_bytes_in = 0;    ///< `numBytesIn`: sum over subtasks
  int64_t num_bytes_out = 0;   ///< `numBytesOut`: sum over subtasks
  /// Time metrics: the max over subtasks, as Flink's web UI shows a vertex (busy and back pressured of
  /// different subtasks, so the three need not add up to 1000 here).
  double busy_time_ms_per_second = 0;
  double idle_time_ms_per_second = 0;
  double back_pressured_time_ms_per_second = 0;
  double num_records_in_per_second = 0;   ///< sum over subtasks
  double num_records_out_per_second = 0;  ///< sum over subtasks
  double num_bytes_in_per_second = 0;     ///< sum over subtasks
  double num_bytes_out_per_second = 0;    ///< sum over subtasks
  int32_t debloated_buffer_size = 0;  ///< `debloatedBufferSize` (bytes): min over subtasks that debloat
  int64_t estimated_time_to_consume_buffers_ms = 0;  ///< `estimatedTimeToConsumeBuffersMs`: max over subtasks
};

/// A snapshot of a running (or finished) job.
struct JobProgress {
  int64_t elapsed_ms = 0;
  int num_restarts = 0;  ///< `numRestarts`: restarts after a failure (of the whole job or of regions)
  /// Checkpoint figures (Flink's names); nullopt without periodic checkpoints (no
  /// execution.checkpointing.interval, or BATCH) unless a checkpoint was taken anyway. Savepoints are not
  /// counted in them.
  std::optional<runtime::checkpoint::CheckpointStats> checkpoints;
  std::vector<VertexProgress> vertices;  ///< JobGraph vertex order
};

enum class JobStatus { kFinished, kCanceled, kFailed };

/// "FINISHED", "CANCELED", "FAILED" (Flink's JobStatus names).
const char* jobStatusName(JobStatus s);

/// The outcome of a job that ended without failure.
struct JobExecutionResult {
  std::string job_id;
  std::string job_name;
  JobStatus status = JobStatus::kFinished;
  int64_t wall_time_ms = 0;            ///< from start to the last task's end
  double wall_seconds = 0;             ///< the same in seconds
  int slots_required = 0;              ///< the job's minimum (ExecutionGraph::minimumRequiredSlots)
  int slots_configured = 0;            ///< slots of the cluster that ran the job (after sizing)
  int slots_peak = 0;                  ///< most slots in use at once
  std::vector<int> deployed_regions;   ///< scheduling region ids in deployment order
  int task_managers = 1;               ///< local.number-taskmanager
  int remote_channels = 0;             ///< input channels between TaskManagers (over TCP)
  std::vector<VertexProgress> vertices;
  int num_restarts = 0;  ///< `numRestarts`
  std::optional<runtime::checkpoint::CheckpointStats> checkpoints;  ///< as JobProgress::checkpoints
  /// Bytes of in-flight data (unaligned checkpoint channel state) replayed by restores, over all attempts.
  int64_t restored_in_flight_bytes = 0;
};

/// Called every `interval` from a cluster thread (never a task thread) while the job runs.
using ProgressCallback = std::function<void(const JobProgress&)>;

/// Options of one submission.
struct SubmitOptions {
  ProgressCallback on_progress;                          ///< optional
  std::chrono::milliseconds progress_interval{1000};
  /// Called on the cluster's thread before each attempt after the first (a restart), before its tasks
  /// are created (e.g. to give DataStream sources a fresh ExecutionScope).
  std::function<void()> on_new_attempt;
  /// Called on the cluster's thread before a region failover creates the new tasks of the restarted
  /// regions, with the stream node ids of their operators (e.g. to give just their DataStream sources
  /// fresh split enumerators); on_new_attempt is not called then.
  std::function<void(const std::vector<int>& node_ids)> on_region_restart;
};

/// A submitted job (Flink's JobClient). Thread-safe; destroying a running handle cancels and joins it.
class JobHandle {
 public:
  class State;
  explicit JobHandle(std::shared_ptr<State> state);
  ~JobHandle();
  JobHandle(const JobHandle&) = delete;
  JobHandle& operator=(const JobHandle&) = delete;

  /// Cancels every task (any thread; returns at once). Tasks blocked on input or backpressure end promptly.
  void cancel();
  /// Blocks until every task thread has stopped. Returns the result (status FINISHED or CANCELED) or
  /// rethrows the first task failure with its original type and message (a UserError stays a UserError).
  /// May be called more than once (same outcome).
  JobExecutionResult wait();
  /// Like wait, with a limit; returns false when the job is still running after `timeout`.
  bool waitFor(std::chrono::milliseconds timeout);
  bool isDone() const;
  /// Current counters (any thread).
  JobProgress progress() const;
  const std::string& jobId() const;
  /// The data port on 127.0.0.1 of each TaskManager's TCP transport (Flink's `taskmanager.data.port`,
  /// here chosen by the OS), in TaskManager order; empty with one TaskManager.
  std::vector<uint16_t> dataPorts() const;
  /// `<execution.checkpointing.dir>/<job-id>`, where the job's checkpoints go; empty without periodic
  /// checkpoints or when they are kept in memory (no directory set).
  std::string checkpointDirectory() const;
  /// Takes a savepoint of the running job into `target_dir` (empty: execution.checkpointing.savepoint-dir;
  /// ConfigError when neither names one) and returns the path of its `_metadata`. Any STREAMING job, also
  /// without execution.checkpointing.interval or a checkpoint directory (Flink's `flink savepoint`). Throws
  /// UserError when the job is a BATCH job ("is not a streaming job", as Flink), has finished, or the
  /// savepoint fails or takes longer than `timeout`.
  std::string triggerSavepoint(const std::string& target_dir, std::chrono::milliseconds timeout);
  /// Stop-with-savepoint (Flink's `flink stop`, JobClient#stopWithSavepoint): a synchronous savepoint into
  /// `target_dir` (as triggerSavepoint), after whose barrier the sources emit nothing; once it completed
  /// they end and the job ends FINISHED. `drain`: the sources emit the final watermark (MAX_WATERMARK)
  /// before the barrier so event-time windows fire, and operators are ended (endInput); without it
  /// nothing fires and the state stays in the savepoint. Returns the `_metadata` path once the savepoint
  /// completed (the job may still be ending: wait() for it). Throws UserError as triggerSavepoint; a
  /// failed savepoint leaves the job running.
  std::string stopWithSavepoint(const std::string& target_dir, bool drain, std::chrono::milliseconds timeout);

 private:
  std::shared_ptr<State> state_;
};

/// The embedded cluster.
class MiniCluster {
 public:
  /// `config` provides the slot settings (and is the default job configuration).
  explicit MiniCluster(Configuration config = Configuration());

  /// Starts `job` (copied) with `config` (copied; tasks read it); the slot settings come from the cluster's
  /// configuration. Throws UserError/ConfigError when the job cannot be deployed (e.g. an unsupported
  /// partitioner); task failures and slot request timeouts surface in wait().
  std::unique_ptr<JobHandle> start(const graph::JobGraph& job, const Configuration& config,
                                   SubmitOptions options = {});
  /// start + wait: runs the job to its end and returns the result; rethrows the first task failure
  /// (original type) after all task threads stopped.
  JobExecutionResult execute(const graph::JobGraph& job, const Configuration& config, SubmitOptions options = {});
  /// Same, with the cluster's configuration.
  JobExecutionResult execute(const graph::JobGraph& job) { return execute(job, config_); }

  /// Slots `job` needs at least (scheduler::ExecutionGraph::minimumRequiredSlots): STREAMING, summed over
  /// slot sharing groups, the max parallelism in the group; BATCH, the most one region needs.
  static int requiredSlots(const graph::JobGraph& job);
  /// numberOfTaskSlots x number-taskmanager of `config`.
  static int configuredSlots(const Configuration& config);
  /// The slot pool of a cluster with `config` running a job that needs `required_slots`: TaskManagers,
  /// slots per TaskManager (sized to the job when `taskmanager.numberOfTaskSlots` is not set) and
  /// `slot.request.timeout`. Throws ConfigError on values < 1 (or a negative timeout).
  static scheduler::SlotPoolSettings slotPoolSettings(const Configuration& config, int required_slots);

 private:
  Configuration config_;
};

}  // namespace sluice::cluster
