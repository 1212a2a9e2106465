#pragma once
/// StreamTask: one subtask of a JobVertex, run on its own thread (Flink's StreamTask with its
/// MailboxProcessor). A source task loops SourceOperator::emitNext(); other tasks read their InputGate and
/// feed batches, advanced watermarks and watermark status changes (StatusWatermarkValve: idle channels
/// do not hold event time back) to the chain head. Mails and due processing-time timers run between two
/// default actions. A two-input head (StreamOperatorFactory::
/// numFirstInputEdges() >= 0) gets the batches of its first input edges through processBatch /
/// processObjects and the rest through processBatch2 (runtime::TwoInputRowOperator) / processObjects2;
/// its watermark is the minimum over the channels of both inputs.

#include <atomic>
#include <chrono>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "graph/job_graph.h"
#include "runtime/checkpoint/checkpoint_responder.h"
#include "runtime/network/buffer_debloater.h"
#include "runtime/network/input_gate.h"
#include "runtime/network/record_writer.h"
#include "runtime/operators/stream_operator.h"
#include "runtime/task/async_checkpoint_runner.h"
#include "runtime/task/mailbox.h"
#include "runtime/task/operator_chain.h"
#include "runtime/task/record_attributes_combiner.h"
#include "runtime/task/task_io_metrics.h"
#include "runtime/time/processing_time_service.h"

namespace sluice {
class Configuration;
}

namespace sluice::runtime {

class SortingBacklogDataInput;
class StatusWatermarkValve;
struct ValveOutput;

using checkpoint::ChannelReplay;

/// What a task needs from its cluster. Pointers must outlive the task.
struct StreamTaskSetup {
  const graph::JobGraph* job = nullptr;
  int vertex_index = 0;
  int subtask_index = 0;
  const Configuration* config = nullptr;
  InputGate* input_gate = nullptr;            ///< null for source vertices
  std::vector<ResultPartition> partitions;    ///< one per JobVertex::outputs entry, same order
  /// The subtask's restored state by operator uid (null: a fresh start). Outlives the task.
  const checkpoint::TaskStateSnapshot* restore = nullptr;
  /// Where checkpoints and savepoints are acknowledged (null: the job takes none, e.g. BATCH). Outlives the
  /// task.
  checkpoint::CheckpointResponder* checkpoint_responder = nullptr;
  /// The coordinator triggers checkpoints periodically (execution.checkpointing.interval set). Only then
  /// does a task wait at its end of input for a final checkpoint (FLIP-147) and its operators see
  /// OperatorContext::checkpointing; without it the job still takes savepoints through
  /// `checkpoint_responder`, and a finished task reports its final state at once.
  bool periodic_checkpointing = false;
  /// A failure to inject (tests; see FailureInjection). Default: none.
  FailureInjection failure;
  /// Channel state to replay after open, before the first record (null or empty: none). Outlives the task.
  const ChannelReplay* replay = nullptr;
};

/// One subtask. `invoke` runs on the task's thread; `cancel`, `mailbox().put` and the metric getters may be
/// called from any thread.
class StreamTask {
 public:
  /// Reads `sluice.batch.size` and `execution.buffer-timeout` from the config (buffer timeout 0: no output
  /// coalescing; -1: flush only when full, on watermarks and at the end).
  explicit StreamTask(StreamTaskSetup setup);
  ~StreamTask();
  StreamTask(const StreamTask&) = delete;
  StreamTask& operator=(const StreamTask&) = delete;

  /// Runs the subtask to completion: instantiate and open the chain, process input until every input
  /// channel ended (or the source reported kEndOfInput: then the final Watermark::kMaxTimestamp), endInput
  /// head first, EndOfPartition downstream, close. A stop savepoint (CheckpointKind::kSavepointSuspend /
  /// kSavepointTerminate) ends a source after its barrier once the savepoint completed; tasks that took
  /// part in it then end without the final checkpoint, and without endInput unless it drains. Rethrows an operator's exception unchanged (after
  /// closing the operators); throws CancelTaskException when cancelled.
  void invoke();
  /// Asks the task to stop promptly (any thread): the loop throws CancelTaskException at its next check;
  /// the task's input gate is cancelled so a blocked read returns. A producer blocked on a full
  /// downstream channel is released by cancelling that channel's gate (the cluster does it for all gates).
  void cancel();
  bool isCancelled() const { return cancelled_.load(std::memory_order_relaxed); }

  Mailbox& mailbox() { return mailbox_; }
  /// Any thread: starts checkpoint `barrier.id` at this task as a mail (Flink's triggerCheckpointAsync):
  /// sources and tasks whose inputs all ended snapshot and emit the barrier between two records.
  void triggerCheckpoint(const CheckpointBarrier& barrier);
  /// Any thread: checkpoint `id` completed / was aborted; runs the operators' notifications as a mail.
  void notifyCheckpointComplete(int64_t id);
  void notifyCheckpointAborted(int64_t id);
  /// "Source: a -> Calc (2/4)" (Flink's task name with subtask index + 1 and parallelism).
  const std::string& name() const { return name_; }
  const graph::JobVertex& vertex() const { return *vertex_; }
  int subtaskIndex() const { return setup_.subtask_index; }
  /// Counters of operator `i` of the chain (any thread).
  const OperatorMetrics& operatorMetrics(size_t i) const { return metrics_[i]; }
  /// The task's processing-time timers (task thread only). Replace the clock before invoke() to drive
  /// processing time by hand in tests.
  ProcessingTimeService& processingTimeService() { return timers_; }
  /// Records this subtask handed to its network outputs (any thread).
  int64_t networkRecordsOut() const;
  /// A snapshot of the IO metrics: busy/idle/back-pressured time, records, bytes, pool usage and the
  /// debloater's values, per gate and per partition (any thread; see task_io_metrics.h).
  TaskIOMetrics ioMetrics() const;

 private:
  void runSource();
  /// Whether every output can take a record without waiting for a buffer; charges `waited_ns` of
  /// backpressure to the first that cannot.
  bool outputsAvailable(int64_t waited_ns) const;
  void runInput();
  void dispatch(InputGate::Entry& entry);
  /// Dispatches inbox_ front to back, stopping early when a sorted input starts flushing.
  void dispatchInbox();
  /// Hands what the valve emitted to the chain head (ACTIVE, watermark, IDLE in that order).
  void emitValveOutput(const ValveOutput& out);
  /// The head's keyed input (both inputs of a two-input head) sorted in BATCH mode and during backlog
  /// (FLIP-327), when its factory has a KeyedInputSorter for each: sorted_input_ then sits between the
  /// channels and the head.
  void createSortedInput();
  /// A watermark / status of the first input to the head, through sorted_input_ when there is one.
  void headWatermark(Watermark mark);
  void headWatermarkStatus(WatermarkStatus status);
  /// The combined attributes of input `input` (0: a one-input head's only input; 1 / 2 of a two-input head).
  void headRecordAttributes(RecordAttributes attributes, int input);
  void endOfInput();
  bool anyPending() const;
  void flushAll();
  /// Flushes when the buffer timeout passed since data became pending; returns the next deadline.
  std::optional<std::chrono::steady_clock::time_point> checkFlush();
  /// Runs due processing-time timers; returns the steady-clock deadline of the next one.
  std::optional<std::chrono::steady_clock::time_point> fireTimers();
  /// Every debloat period (when enabled): recalculates the input gate's buffer size from its throughput
  /// and announces a new size to the producers of its local channels; returns the next deadline.
  std::optional<std::chrono::steady_clock::time_point> checkDebloat();
  /// Marks which input (0 or 1) each gate channel feeds, for two-input heads.
  void computeChannelInputs();
  /// Builds attribute_combiners_ and channel_in_input_ from channel_input_ (after computeChannelInputs).
  void setUpAttributeCombiners(int channels);
  /// A barrier arrived on a gate channel (Flink's SingleCheckpointBarrierHandler /
  /// AlternatingCheckpointBarrierHandler / CheckpointBarrierTracker): aligned checkpoints block the
  /// channel until every open channel delivered the barrier; at-least-once ones only count; an unaligned
  /// barrier (or an aligned one whose aligned-checkpoint timeout passed) snapshots at once and records
  /// the other channels' records until their barriers come (startUnaligned).
  void processBarrier(const InputGate::Entry& entry);
  /// A channel ended during an alignment: it counts as aligned (FLIP-147).
  void checkAlignmentComplete();
  /// Snapshots the chain and forwards the barrier, then hands the write-out and the acknowledgement to
  /// the async thread (Flink's SubtaskCheckpointCoordinatorImpl.checkpointState).
  void performCheckpoint(const CheckpointBarrier& barrier);
  /// prepareSnapshotPreBarrier, the barrier to every output (unaligned: ahead of the queued buffers, the
  /// overtaken records into `channel`), the chain's snapshot; fills the start-delay and sync metrics.
  /// The snapshot is the synchronous part (frozen, to be written out by submitAsyncPart).
  AsyncCheckpointRunner::Futures takeSnapshot(const CheckpointBarrier& barrier, checkpoint::CheckpointMetrics& metrics,
                                              checkpoint::SubtaskChannelState& channel);
  /// Hands checkpoint `id`'s synchronous part to the async thread, which writes it out and acknowledges
  /// with `metrics` and, for an unaligned checkpoint, `channel` in the head's entry. Nothing without a
  /// responder.
  void submitAsyncPart(int64_t id, AsyncCheckpointRunner::Futures futures, const checkpoint::CheckpointMetrics& metrics,
                       std::optional<checkpoint::SubtaskChannelState> channel);
  /// The barrier for output `k` (Flink's RecordWriterOutput with CheckpointOptions#withUnalignedUnsupported /
  /// withUnalignedSupported): kForcedAligned towards a consumer that cannot take unaligned barriers
  /// (checkpoint::supportsUnalignedCheckpoints), the checkpoint's own alignment back after such an edge.
  CheckpointBarrier outputBarrier(const CheckpointBarrier& barrier, size_t k) const;
  /// The pending checkpoint turns unaligned at this task: unblocks the channels, snapshots, forwards the
  /// barrier as unaligned and starts recording the channels whose barrier has not come.
  void startUnaligned();
  /// Submits the unaligned checkpoint once every open channel delivered its barrier and the records
  /// begun before a barrier are recorded.
  void checkChannelStateComplete();
  /// Gives up the pending checkpoint (a newer barrier overtook it).
  void abortPendingCheckpoint();
  void resumeBlockedChannels();
  /// Per gate channel: the input edge and producer subtask it reads, and its record serializer.
  void computeChannelOrigins();
  /// Sends the restored channel state (setup_.replay) before any new record.
  void replayChannelState();
  /// Idle-time accounting (Flink's idle timer): the task thread waits for input between the two calls.
  void beginIdle();
  void endIdle();
  void throwIfCancelled() const {
    if (cancelled_.load(std::memory_order_relaxed)) throw CancelTaskException();
  }

  StreamTaskSetup setup_;
  const graph::JobVertex* vertex_;
  std::string name_;
  Mailbox mailbox_;
  std::atomic<bool> cancelled_{false};
  std::atomic<bool> waiting_for_output_{false};  ///< a source waits for an output buffer (isBackPressured)
  std::unique_ptr<OperatorMetrics[]> metrics_;
  std::vector<std::unique_ptr<RecordWriter>> writers_;
  std::unique_ptr<OperatorChain> chain_;
  std::unique_ptr<SortingBacklogDataInput> sorted_input_;  ///< see createSortedInput
  /// The checkpoints' asynchronous parts (created on the first checkpoint); destroyed before chain_ and
  /// the setup, it cancels and joins a running write-out.
  std::unique_ptr<AsyncCheckpointRunner> async_checkpoints_;
  size_t batch_size_ = 1024;
  int64_t buffer_timeout_ms_ = 100;
  std::optional<std::chrono::steady_clock::time_point> flush_deadline_;
  std::unique_ptr<StatusWatermarkValve> valve_;
  std::deque<InputGate::Entry> inbox_;
  std::vector<char> channel_ended_;
  std::vector<char> channel_input_;  ///< per channel: 1 when it feeds the head's second input
  /// Per input of the head (one, or two for a two-input head): the backlog status over its channels.
  std::vector<RecordAttributesCombiner> attribute_combiners_;
  std::vector<int> channel_in_input_;  ///< per channel: its index among the channels of its input
  ProcessingTimeService timers_;
  int channels_ended_ = 0;
  // Checkpoint alignment (task thread only).
  int64_t last_checkpoint_id_ = 0;         ///< the newest checkpoint this task snapshotted or declined
  int64_t last_completed_checkpoint_id_ = 0;  ///< the newest completed checkpoint this task took part in
  /// Stop-with-savepoint: the stop savepoint this task snapshotted (not aborted since), its kind, and
  /// whether its completion came. A source emits nothing while it is set and ends once it completed.
  std::optional<int64_t> stop_savepoint_id_;
  checkpoint::CheckpointKind stop_kind_ = checkpoint::CheckpointKind::kSavepointSuspend;
  bool stop_completed_ = false;
  std::optional<CheckpointBarrier> pending_barrier_;  ///< the checkpoint being aligned
  std::optional<CheckpointBarrier> deferred_trigger_;  ///< triggered before the last channel ended
  std::vector<char> barrier_seen_;         ///< per channel, for pending_barrier_
  int barriers_seen_ = 0;
  int64_t alignment_start_ns_ = 0;
  // Unaligned checkpoints (task thread only; FLIP-76).
  bool unaligned_ = false;  ///< pending_barrier_'s snapshot is taken; channel state is being recorded
  std::optional<std::chrono::steady_clock::time_point> alignment_deadline_;  ///< aligned-checkpoint timeout
  std::vector<char> recording_;  ///< per channel: its records are input channel state
  std::vector<char> one_more_;   ///< per channel: the record its barrier overtook is still to be recorded
  std::vector<std::string> input_state_;  ///< per channel
  AsyncCheckpointRunner::Futures unaligned_state_;  ///< taken at the first barrier, written out when complete
  checkpoint::SubtaskChannelState unaligned_channel_;
  checkpoint::CheckpointMetrics unaligned_metrics_;
  std::vector<std::pair<int, int>> channel_origin_;  ///< per channel: (input edge index, producer subtask)
  std::vector<std::shared_ptr<const ObjectBatchSerializer>> channel_objects_;  ///< per channel
  network::BufferDebloatConfiguration debloat_config_;
  int32_t buffers_per_channel_ = 2;
  std::unique_ptr<network::BufferDebloater> debloater_;
  std::optional<std::chrono::steady_clock::time_point> debloat_deadline_;
  std::atomic<int32_t> debloated_buffer_size_{0};
  std::atomic<int64_t> estimated_time_to_consume_ms_{0};
  std::atomic<int64_t> buffer_size_announcements_{0};
  // Steady-clock nanoseconds (0: not yet / none): written by the task thread, read by metric readers.
  std::atomic<int64_t> start_ns_{0};
  std::atomic<int64_t> end_ns_{0};
  mutable std::mutex idle_mu_;  ///< guards the two idle fields (taken once per wait, not per record)
  int64_t idle_ns_ = 0;         ///< finished idle waits
  int64_t idle_since_ns_ = 0;   ///< start of the idle wait in progress
};

}  // namespace sluice::runtime
