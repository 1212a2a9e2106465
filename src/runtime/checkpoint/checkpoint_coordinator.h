#pragma once
/// CheckpointCoordinator: the JobManager side of checkpoints (Flink's CheckpointCoordinator with its
/// CheckpointRequestDecider, PendingCheckpoint and CheckpointFailureManager, flink-checkpointing.md §1).
///
/// A periodic trigger (every `interval_ms`, the first one `interval_ms` after start) starts checkpoint n
/// when fewer than `max_concurrent` are pending and `min_pause_ms` has passed since the last completion.
/// It triggers the tasks that have no running predecessor (the sources, or after some tasks finished the
/// running tasks whose inputs all finished: FLIP-147's DefaultCheckpointPlanCalculator) and waits for an
/// acknowledgement from every task that had not finished; a finished task takes part with its final state.
/// Once all acknowledged, the checkpoint is finalized on the coordinator's thread: stored (the `store`
/// hook, e.g. FsCheckpointStorage), older pending checkpoints are subsumed, and the tasks are notified.
/// A checkpoint expires after `timeout_ms`; expired and declined checkpoints count as failures, and more
/// than `tolerable_failures` in a row fail the job ("Exceeded checkpoint tolerable failure threshold.").
/// Savepoints are forced: they skip min-pause and the concurrency limit, are never subsumed and notify no
/// task (Flink 1.15+: intermediate savepoints do not commit), except the synchronous savepoint of
/// stop-with-savepoint (kSavepointSuspend / kSavepointTerminate), whose completion every task is told.
///
/// A task that ended its input asks for its final checkpoint (requestCheckpoint, FLIP-147): the periodic
/// trigger comes forward; behind `max_concurrent` pending checkpoints the request stays queued and starts
/// once one of them completes, is declined or expires (min-pause still applies); only a checkpoint, not a
/// savepoint, serves it.
///
/// Backlog (FLIP-309, flink-seed-spec.md §5): sources report through setIsProcessingBacklog. While any
/// source reports backlog and `interval_during_backlog_ms` is set, checkpoints follow that interval,
/// counted from the last periodic trigger; with 0 no checkpoint or savepoint starts at all, also not one
/// already scheduled or requested before backlog began (FLINK-39108). When the last source leaves backlog
/// the next checkpoint is triggered at once, then the regular interval applies. A source whose subtasks
/// have all reached the end of their input (reportEndOfInput) no longer counts as backlog, so a bounded
/// source that ends in backlog gets its final checkpoint (FLIP-147). Reports survive a failover: the restarted sources'
/// enumerators report again.
///
/// Threading: thread-safe. Acknowledgements come from task threads; finalization, storage and
/// notifications run on the coordinator's own thread, never on a task thread.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "runtime/checkpoint/checkpoint_responder.h"
#include "runtime/checkpoint/completed_checkpoint.h"

namespace sluice::graph {
struct JobGraph;
}

namespace sluice::runtime::checkpoint {

/// The coordinator's settings (Flink's CheckpointCoordinatorConfiguration; keys in common/config.h).
struct CheckpointCoordinatorConfiguration {
  int64_t interval_ms = 0;           ///< execution.checkpointing.interval; <= 0: no periodic checkpoints
  int64_t timeout_ms = 600000;       ///< execution.checkpointing.timeout
  int64_t min_pause_ms = 0;          ///< execution.checkpointing.min-pause
  int32_t max_concurrent = 1;        ///< execution.checkpointing.max-concurrent-checkpoints
  int32_t tolerable_failures = 0;    ///< execution.checkpointing.tolerable-failed-checkpoints
  AlignmentType alignment = AlignmentType::kAligned;  ///< execution.checkpointing.mode
  /// execution.checkpointing.unaligned.enabled (only with kAligned): checkpoints (not savepoints) start
  /// unaligned, or aligned with `aligned_checkpoint_timeout_ms` when that is > 0.
  bool unaligned = false;
  int64_t aligned_checkpoint_timeout_ms = 0;  ///< execution.checkpointing.aligned-checkpoint-timeout
  /// execution.checkpointing.interval-during-backlog (ms): unset = interval_ms; 0 = no checkpoints while
  /// a source reports backlog; otherwise >= interval_ms (the cluster checks it).
  std::optional<int64_t> interval_during_backlog_ms;
};

/// Figures of the coordinator with Flink's checkpoint metric names.
struct CheckpointStats {
  int64_t number_of_completed_checkpoints = 0;   ///< numberOfCompletedCheckpoints
  int64_t number_of_failed_checkpoints = 0;      ///< numberOfFailedCheckpoints
  int64_t number_of_in_progress_checkpoints = 0; ///< numberOfInProgressCheckpoints
  int64_t last_checkpoint_id = 0;                ///< id of the last completed checkpoint (0: none)
  int64_t last_checkpoint_duration_ms = 0;       ///< lastCheckpointDuration: trigger to completion
  int64_t last_checkpoint_size = 0;              ///< lastCheckpointSize (bytes)
  int64_t last_checkpoint_full_size = 0;         ///< lastCheckpointFullSize (bytes; = size without incremental)
  std::string last_checkpoint_external_path;     ///< lastCheckpointExternalPath (empty: kept in memory)
  int64_t last_checkpoint_max_alignment_ns = 0;  ///< the largest alignment time of a subtask
  int64_t last_checkpoint_max_start_delay_ns = 0;///< the largest checkpointStartDelayNanos of a subtask
  bool last_checkpoint_unaligned = false;        ///< some subtask took the last checkpoint unaligned
  int64_t last_checkpoint_persisted_in_flight_bytes = 0;  ///< its channel state bytes (Flink's persistedData)
  /// Per subtask of the last completed checkpoint, by vertex then subtask (Flink's subtask checkpoint
  /// statistics: alignmentDurationNanos, checkpointStartDelayNanos, unaligned, persisted data). A finished
  /// subtask that took part with its final state has zeros.
  std::vector<std::vector<CheckpointMetrics>> last_checkpoint_subtasks;
  /// The largest synchronous / asynchronous part of a subtask's snapshot (ms; Flink's checkpoint
  /// statistics "Sync Duration" / "Async Duration"). The async part is the heap backend's write-out.
  int64_t last_checkpoint_max_sync_duration_ms = 0;
  int64_t last_checkpoint_max_async_duration_ms = 0;
};

/// See the file comment.
class CheckpointCoordinator final : public CheckpointResponder {
 public:
  /// What the coordinator asks of its cluster. Called on the coordinator's thread without its lock.
  struct Hooks {
    /// Starts `barrier` at subtask (vertex, subtask) (StreamTask::triggerCheckpoint).
    std::function<void(int vertex, int subtask, const CheckpointBarrier& barrier)> trigger_task;
    /// Checkpoint `id` completed / was aborted: tell every running task.
    std::function<void(int64_t id)> notify_complete;
    std::function<void(int64_t id)> notify_aborted;
    /// Persists a completed checkpoint (or a savepoint into `target_dir`) and returns its external path
    /// ("" when kept in memory). An exception declines the checkpoint (counted as a failure).
    std::function<std::string(const CompletedCheckpoint& checkpoint, const std::string& target_dir)> store;
    /// More failed checkpoints in a row than tolerated: fail the job with `reason`.
    std::function<void(const std::string& reason)> fail_job;
    /// The coordinator's clock (null: std::chrono::steady_clock). With a clock of its own the coordinator
    /// does not wait for deadlines: it acts on the clock's time when awaitClockTick() is called (tests).
    std::function<std::chrono::steady_clock::time_point()> clock;
  };

  /// `job` must outlive the coordinator; its vertices and edges give the tasks and their predecessors.
  CheckpointCoordinator(const graph::JobGraph& job, std::string job_id, CheckpointCoordinatorConfiguration config,
                        Hooks hooks);
  ~CheckpointCoordinator() override;

  /// Starts the coordinator's thread (periodic checkpoints when interval_ms > 0).
  void start();
  /// Stops the thread; pending checkpoints are dropped. Idempotent.
  void stop();
  /// A new execution attempt starts (after a failover): pending checkpoints are aborted, finished states
  /// forgotten; ids keep increasing; the first periodic trigger comes one interval later.
  void restartAttempt();
  /// A region failover restarted the tasks of `vertices` (JobGraph indexes) from the latest completed
  /// checkpoint (Flink's restoreLatestCheckpointedStateToSubtasks): pending checkpoints are aborted (not
  /// failures), the restarted tasks' final states forgotten while the other tasks keep theirs (FLIP-147:
  /// a finished task of a running region still takes part with its final state), and triggering resumes
  /// (suspended since the failure) one interval later.
  void restartTasks(const std::vector<int>& vertices);
  /// Stops triggering and finalizing until restartAttempt (the job is failing over); waits for a
  /// finalization in progress, so latestCompletedCheckpoint() then covers every completion a task was told.
  void suspend();
  /// The next checkpoint gets this id (a restore from checkpoint n continues with n + 1).
  void setNextCheckpointId(int64_t id);

  /// Triggers a checkpoint now (or a savepoint into `target_dir`, which is forced). Returns its id, or
  /// nullopt when it cannot start (every task finished, suspended, or too many pending and not forced).
  std::optional<int64_t> triggerCheckpoint(CheckpointKind kind = CheckpointKind::kCheckpoint,
                                           const std::string& target_dir = "");
  /// Waits until checkpoint `id` completed (returns its external path) or failed (throws UserError with
  /// the reason), `timeout` passes or the coordinator stops (the job ended; both throw UserError).
  std::string awaitCheckpoint(int64_t id, std::chrono::milliseconds timeout);

  /// Hooks::clock moved on: wakes the coordinator's thread and returns once it has done everything due at
  /// the clock's current time (periodic triggers, expiries, finalizations). Any thread but the hooks'.
  void awaitClockTick();

  /// Source `source_uid` (its operator uid) is or is no longer processing backlog (Flink's
  /// CheckpointCoordinator.setIsProcessingBacklog, FLIP-309). The last report of a source counts; sources
  /// that never report are not backlogged. Returns after any checkpoint that started before it has been
  /// handed to its tasks, so a reader told of backlog after this call sees that barrier first.
  void setIsProcessingBacklog(const std::string& source_uid, bool backlog) override;
  /// True while some source reports backlog.
  bool isProcessingBacklog() const;

  /// The newest completed checkpoint (not savepoint), or null.
  std::shared_ptr<const CompletedCheckpoint> latestCompletedCheckpoint() const;
  CheckpointStats stats() const;

  // CheckpointResponder (task threads).
  void acknowledgeCheckpoint(int vertex, int subtask, int64_t id, TaskStateSnapshot state,
                             const CheckpointMetrics& metrics) override;
  void declineCheckpoint(int vertex, int subtask, int64_t id, const std::string& reason) override;
  void reportFinalState(int vertex, int subtask, TaskStateSnapshot state,
                        const CheckpointMetrics& metrics = {}) override;
  void requestCheckpoint() override;
  void reportEndOfInput(int vertex, int subtask) override;

 private:
  struct Pending;
  using Clock = std::chrono::steady_clock;

  void run();
  Clock::time_point now() const { return hooks_.clock ? hooks_.clock() : Clock::now(); }
  /// Caller holds mu_. The periodic interval in force (ms; <= 0: no periodic checkpoints now).
  int64_t currentIntervalLocked() const;
  /// Caller holds mu_. Task (`vertex`, `subtask`) ended its input: once every subtask of `vertex` has,
  /// the backlog reports of its operators go (a finished source processes no backlog).
  void endInputLocked(int vertex, int subtask);
  /// Caller holds mu_. True while no checkpoint may start (backlog with interval-during-backlog 0).
  bool backlogBlocksLocked() const;
  /// Caller holds mu_. The next periodic trigger comes `interval_ms` after `from`.
  void scheduleFromLocked(Clock::time_point from, int64_t interval_ms);
  /// Caller holds mu_. Starts a checkpoint; returns the tasks to trigger with its barrier.
  std::optional<int64_t> startLocked(CheckpointKind kind, const std::string& target_dir, Clock::time_point now,
                                     std::vector<std::pair<int, int>>& to_trigger, CheckpointBarrier& barrier);
  /// Caller holds mu_. Records one subtask's state for a pending checkpoint.
  void ackLocked(Pending& p, int vertex, int subtask, TaskStateSnapshot state);
  /// Records a subtask's figures for checkpoint `p` (the slowest sync/async part over its subtasks).
  void noteMetricsLocked(Pending& p, int vertex, int subtask, const CheckpointMetrics& metrics);
  /// Caller holds mu_. Aborts a pending checkpoint; counts it as a failure when `count`.
  void abortLocked(int64_t id, const std::string& reason, bool count);
  CompletedCheckpoint assemble(const Pending& p) const;
  /// Caller holds mu_. True when every producer subtask of `vertex` has finished.
  bool inputsFinishedLocked(int vertex) const;
  size_t taskIndex(int vertex, int subtask) const { return static_cast<size_t>(task_offset_[static_cast<size_t>(vertex)] + subtask); }

  const graph::JobGraph& job_;
  const std::string job_id_;
  const CheckpointCoordinatorConfiguration config_;
  const Hooks hooks_;
  std::vector<int> task_offset_;  ///< first task index of each vertex
  int num_tasks_ = 0;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::thread thread_;
  bool running_ = false;
  bool suspended_ = false;
  bool poked_ = false;  ///< wakes the run loop to recompute its deadlines
  bool finalizing_ = false;  ///< a completed checkpoint is being stored and notified (lock released)
  /// requestCheckpoint was called and no checkpoint has started since (FLIP-147's final checkpoint).
  bool requested_ = false;
  int64_t next_id_ = 1;
  std::map<int64_t, std::unique_ptr<Pending>> pending_;
  std::vector<std::optional<TaskStateSnapshot>> final_states_;  ///< by task index; set once finished
  std::vector<char> input_ended_;  ///< by task index; 1 once the task reached its end of input
  std::vector<int64_t> completed_ready_;  ///< ids fully acknowledged, to be finalized
  std::map<int64_t, std::string> outcomes_;  ///< id -> "ok:<path>" or "failed:<reason>", for awaitCheckpoint
  std::shared_ptr<const CompletedCheckpoint> latest_;
  std::optional<Clock::time_point> last_completion_;
  Clock::time_point next_trigger_;
  Clock::time_point last_scheduled_;  ///< the time the next periodic trigger was counted from
  std::set<std::string> backlog_sources_;  ///< uids of the sources reporting backlog
  std::map<std::string, int> vertex_of_uid_;  ///< operator uid -> JobGraph vertex
  int dispatching_ = 0;  ///< checkpoints started whose barriers are being handed to the tasks
  uint64_t ticks_requested_ = 0;  ///< awaitClockTick calls
  uint64_t ticks_done_ = 0;       ///< the run loop went idle having seen this many
  int consecutive_failures_ = 0;
  int64_t last_success_id_ = 0;
  CheckpointStats stats_;
  std::vector<int64_t> to_notify_aborted_;
};

}  // namespace sluice::runtime::checkpoint
