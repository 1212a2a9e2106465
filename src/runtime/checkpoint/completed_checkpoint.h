#pragma once
/// A checkpoint or savepoint that completed: every operator's state by subtask, plus where it is stored
/// (Flink's CompletedCheckpoint, with its OperatorState per OperatorID). Plain values; no I/O.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "runtime/checkpoint/checkpoint_types.h"

namespace sluice::runtime::checkpoint {

/// The state of one operator over all its subtasks (Flink's OperatorState). `subtasks[i]` is the state of
/// subtask i; its size equals `parallelism`. A subtask without state holds an empty OperatorSubtaskState.
struct OperatorState {
  int32_t parallelism = 1;       ///< subtasks when the checkpoint was taken (>= 1)
  int32_t max_parallelism = 1;   ///< number of key groups (pipeline.max-parallelism), >= parallelism
  std::vector<OperatorSubtaskState> subtasks;
};

/// A completed checkpoint or savepoint (Flink's CompletedCheckpoint). Stateless operators are absent.
struct CompletedCheckpoint {
  int64_t checkpoint_id = 0;
  std::string job_id;
  CheckpointKind kind = CheckpointKind::kCheckpoint;
  int64_t trigger_timestamp_ms = 0;     ///< wall clock at trigger (ms since the epoch)
  int64_t completion_timestamp_ms = 0;  ///< wall clock when the last acknowledgement arrived (ms)
  /// Operator uid (Flink's OperatorID) -> its state.
  std::map<std::string, OperatorState> operators;
  /// The directory holding `_metadata` (Flink's external pointer); empty until stored or loaded.
  std::string external_pointer;

  /// Bytes of state: keyed blobs plus operator state elements plus channel state plus every file of the
  /// RocksDB incremental handles, over all operators and subtasks (the metadata's own framing is not counted). Flink's
  /// getStateSize (lastCheckpointFullSize).
  int64_t stateSize() const { return sumSizes(false); }
  /// As stateSize(), counting of the incremental handles only what this checkpoint uploaded (Flink's
  /// getCheckpointedSize, lastCheckpointSize).
  int64_t checkpointedSize() const { return sumSizes(true); }

 private:
  int64_t sumSizes(bool incremental_only) const {
    int64_t bytes = 0;
    for (const auto& [uid, op] : operators) {
      for (const OperatorSubtaskState& s : op.subtasks) {
        for (const auto& [group, blob] : s.keyed) bytes += static_cast<int64_t>(blob.size());
        for (const auto& [name, list] : s.operator_state) {
          for (const std::string& e : list.elements) bytes += static_cast<int64_t>(e.size());
        }
        for (const IncrementalKeyedStateHandle& h : s.incremental) {
          bytes += static_cast<int64_t>(incremental_only ? h.checkpointed_size : h.fullSize());
        }
        bytes += s.channel.bytes();
      }
    }
    return bytes;
  }
};

}  // namespace sluice::runtime::checkpoint
