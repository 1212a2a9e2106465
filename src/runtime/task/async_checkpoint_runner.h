#pragma once
/// The asynchronous part of a task's checkpoints (Flink's AsyncCheckpointRunnable on the StreamTask's
/// asyncOperationsThreadPool, flink-checkpointing.md §3.5): after the task thread took the synchronous
/// part (OperatorChain::snapshotStateAsync), one thread of the task writes every operator's frozen state
/// (OperatorSnapshotFutures::write: heap serialization, RocksDB full snapshot iteration or incremental
/// upload) in checkpoint order, adds the channel state of an unaligned checkpoint (captured on the task thread), and then acknowledges
/// the checkpoint to the CheckpointResponder, or declines it when a write throws (the coordinator counts
/// it as a failed checkpoint; tolerable-failed-checkpoints applies). A declined or cancelled write-out
/// never fails the task.
///
/// Threading: submit/drain/cancel from the task thread; the thread starts on the first submit. The
/// destructor cancels and joins, so a task torn down during a write-out waits for it to stop (between two
/// key groups) and nothing outlives the task.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "runtime/checkpoint/checkpoint_responder.h"
#include "runtime/state/stream_operator_state_context.h"

namespace sluice::runtime {

class AsyncCheckpointRunner {
 public:
  using Futures = std::vector<std::pair<std::string, state::OperatorSnapshotFutures>>;
  /// An unaligned checkpoint's channel state, acknowledged in the entry of the chain's head `uid`.
  struct HeadChannelState {
    std::string uid;
    checkpoint::SubtaskChannelState state;
  };
  /// Called on the async thread before the write-out of checkpoint `id` of subtask (vertex, subtask)
  /// starts: tests block or fail it there, deterministically. Set while no task runs.
  using WriteHook = std::function<void(int vertex, int subtask, int64_t id)>;
  static void setWriteHookForTesting(WriteHook hook);

  /// Acknowledges as subtask (`vertex`, `subtask`) to `responder` (not null; outlives the runner).
  AsyncCheckpointRunner(checkpoint::CheckpointResponder* responder, int vertex, int subtask);
  ~AsyncCheckpointRunner();
  AsyncCheckpointRunner(const AsyncCheckpointRunner&) = delete;
  AsyncCheckpointRunner& operator=(const AsyncCheckpointRunner&) = delete;

  /// Queues the asynchronous part of checkpoint `id`: write `futures` (operators by uid), add `channel`,
  /// set `metrics.async_duration_ms`, acknowledge. `metrics` carries the synchronous part's figures.
  void submit(int64_t id, Futures futures, checkpoint::CheckpointMetrics metrics,
              std::optional<HeadChannelState> channel = std::nullopt);
  /// Waits until every queued checkpoint was acknowledged or declined.
  void drain();
  /// Drops the queued checkpoints (their frozen state is released, nothing is reported), stops the running
  /// write-out at its next key group (not reported either: the task's failover or cancellation ends the
  /// checkpoint) and waits for it. Later submits run.
  void cancel();
  /// Checkpoint `id` was aborted (Flink's SubtaskCheckpointCoordinatorImpl.notifyCheckpointAborted
  /// cancelling its AsyncCheckpointRunnable): its queued write-out is dropped, a running one stops at its
  /// next key group; neither is reported, and its frozen state and files are released. Does not wait.
  void abort(int64_t id);

 private:
  struct Job {
    int64_t id;
    Futures futures;
    checkpoint::CheckpointMetrics metrics;
    std::optional<HeadChannelState> channel;
  };
  void run();
  void execute(Job& job);

  checkpoint::CheckpointResponder* responder_;
  int vertex_;
  int subtask_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> queue_;
  bool busy_ = false;
  bool stop_ = false;
  int64_t running_id_ = -1;  ///< the checkpoint being written out while busy_
  /// Stops the running write-out: set by cancel() and by abort() of the running checkpoint, cleared when
  /// the next one starts.
  std::atomic<bool> cancelled_{false};
  std::thread thread_;
};

}  // namespace sluice::runtime
