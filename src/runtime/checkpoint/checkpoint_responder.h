#pragma once
/// What a task reports to the checkpoint coordinator (Flink's CheckpointResponder, the task side of the
/// JobMaster's acknowledgeCheckpoint / declineCheckpoint RPCs).

#include <cstdint>
#include <string>

#include "runtime/checkpoint/checkpoint_types.h"

namespace sluice::runtime::checkpoint {

/// Per-subtask checkpoint facts that travel with an acknowledgement (Flink's CheckpointMetrics).
struct CheckpointMetrics {
  int64_t alignment_duration_ns = 0;      ///< first barrier to last barrier at this task (0 for sources)
  int64_t checkpoint_start_delay_ns = 0;  ///< trigger time to the first barrier at this task
  int64_t sync_duration_ms = 0;           ///< the synchronous part of the snapshot, on the task thread
  int64_t async_duration_ms = 0;          ///< the asynchronous part (AsyncCheckpointRunner), write-out to ack
  bool unaligned = false;                 ///< the subtask took it unaligned (FLIP-76)
  int64_t persisted_in_flight_bytes = 0;  ///< bytes of its channel state (Flink's persistedData)
};

/// The reason a task that sorts its backlog declines a checkpoint (FLIP-327 mixed mode; Flink's
/// SortingBacklogDataInput message). Not counted as a failed checkpoint: the task is not ready, as a
/// source whose backlog report was on its way.
inline constexpr const char* kDeclinedDuringBacklog = "Checkpoints are not supported during backlog.";

/// Where sources report backlog (FLIP-309: the enumerator context's setIsProcessingBacklog reaches the
/// checkpoint coordinator). Called from any thread; must be thread-safe.
class BacklogStatusListener {
 public:
  virtual ~BacklogStatusListener() = default;
  /// Source `source_uid` (its operator uid) is, or is no longer, processing backlog. A status of one
  /// subtask (FLIP-328's watermark lag) comes as "<uid>#<subtask>".
  virtual void setIsProcessingBacklog(const std::string& source_uid, bool backlog) {
    (void)source_uid;
    (void)backlog;
  }
};

/// Implemented by the coordinator's side. Called from task threads; must be thread-safe.
class CheckpointResponder : public BacklogStatusListener {
 public:
  ~CheckpointResponder() override = default;
  /// Subtask (`vertex`, `subtask`) took its snapshot of checkpoint `id`.
  virtual void acknowledgeCheckpoint(int vertex, int subtask, int64_t id, TaskStateSnapshot state,
                                     const CheckpointMetrics& metrics) = 0;
  /// Subtask (`vertex`, `subtask`) could not take checkpoint `id` (e.g. a newer barrier overtook it).
  virtual void declineCheckpoint(int vertex, int subtask, int64_t id, const std::string& reason) = 0;
  /// The subtask consumed all its input and finished; `state` is its state from then on, which every
  /// checkpoint still pending or triggered later uses for it (FLIP-147: finished tasks take part in
  /// checkpoints with their final state). `metrics`: what taking the final state cost (its synchronous
  /// snapshot), the subtask's figures in the checkpoints still pending that it acknowledges.
  virtual void reportFinalState(int vertex, int subtask, TaskStateSnapshot state,
                                const CheckpointMetrics& metrics = {}) = 0;
  /// The subtask reached the end of its input and waits for a checkpoint to complete (its final one): a
  /// checkpoint should start as soon as min-pause and the concurrency limit allow. Default: none.
  virtual void requestCheckpoint() {}
  /// The subtask (`vertex`, `subtask`) reached the end of its input, before its final checkpoint: a
  /// source whose subtasks have all ended processes no backlog, so its backlog reports (FLIP-309) no
  /// longer hold checkpoints back, and its final checkpoint can start. Default: nothing.
  virtual void reportEndOfInput(int vertex, int subtask) {
    (void)vertex;
    (void)subtask;
  }
};

}  // namespace sluice::runtime::checkpoint
