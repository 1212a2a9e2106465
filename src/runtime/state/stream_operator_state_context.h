#pragma once
/// The state of one operator instance in one subtask (Flink's StreamOperatorStateContext): its keyed
/// backend (heap or RocksDB by StateBackendOptions, i.e. `state.backend.type`; created on first use), its
/// operator state backend (always on the heap, as in Flink), and the snapshot of both: a synchronous part
/// on the task thread (operator state serialized; keyed state as KeyedStateBackend::snapshotAsync takes
/// it) and an asynchronous one (OperatorSnapshotFutures::write: heap serialization, RocksDB full snapshot
/// iteration or incremental upload) on any thread. Threading: the task thread only, except OperatorSnapshotFutures.

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "runtime/checkpoint/checkpoint_types.h"
#include "runtime/state/key_group.h"
#include "runtime/state/state_backend_options.h"

namespace sluice::runtime::state {

class KeyedStateBackend;
class KeyedStateSnapshot;
class OperatorStateBackend;

/// One operator's checkpoint after its synchronous part (Flink's OperatorSnapshotFutures): holds no
/// reference to the operator or its backends. write() runs the asynchronous part on any thread, once.
class OperatorSnapshotFutures {
 public:
  OperatorSnapshotFutures(checkpoint::OperatorSubtaskState done, std::unique_ptr<KeyedStateSnapshot> keyed);
  OperatorSnapshotFutures(OperatorSnapshotFutures&&) noexcept;
  OperatorSnapshotFutures& operator=(OperatorSnapshotFutures&&) noexcept;
  ~OperatorSnapshotFutures();
  /// The operator's state; nullopt when `cancelled` became true meanwhile. Throws what a keyed state's
  /// serializer throws, InputError naming a path when an incremental upload fails.
  std::optional<checkpoint::OperatorSubtaskState> write(const std::atomic<bool>* cancelled = nullptr);

 private:
  checkpoint::OperatorSubtaskState done_;       ///< operator state (and keyed state not in keyed_)
  std::unique_ptr<KeyedStateSnapshot> keyed_;  ///< null: done_ is complete
};

/// Owns an operator's state backends, restored from the operator's part of a checkpoint.
class StreamOperatorStateContext {
 public:
  /// `uid`: the operator's identity in checkpoints (for messages). `range`: the key groups of this
  /// subtask. `restored`: this subtask's already redistributed state, or nullptr for a fresh start (it is
  /// copied; the pointer need not outlive the call). `backend`: which keyed backend to create
  /// (StateBackendOptions::fromConfiguration reads state.backend.type and io.tmp.dirs); when its
  /// instance_name is left at the default, the RocksDB directory is named after `uid` and the range.
  StreamOperatorStateContext(std::string uid, KeyGroupRange range, int32_t max_parallelism,
                             const checkpoint::OperatorSubtaskState* restored, StateBackendOptions backend = {});
  ~StreamOperatorStateContext();
  StreamOperatorStateContext(const StreamOperatorStateContext&) = delete;
  StreamOperatorStateContext& operator=(const StreamOperatorStateContext&) = delete;

  /// The keyed backend, created (and restored) on first use. InputError when restored blobs are malformed.
  KeyedStateBackend& keyedStateBackend();
  OperatorStateBackend& operatorStateBackend();
  /// True when constructed from a checkpoint (Flink's isRestored), even an empty one.
  bool isRestored() const { return restored_; }
  const std::string& uid() const { return uid_; }
  const KeyGroupRange& keyGroupRange() const { return range_; }
  int32_t maxParallelism() const { return max_parallelism_; }
  const StateBackendOptions& backendOptions() const { return backend_; }

  /// Synchronous canonical snapshot of both backends (restored state never touched is passed on
  /// unchanged; restored RocksDB incremental handles are converted, which creates the keyed backend).
  checkpoint::OperatorSubtaskState snapshot();
  /// The snapshot of checkpoint `checkpoint_id`: incremental (RocksDB files uploaded into the job's
  /// shared/ and taskowned/) when the options ask for it, the backend is RocksDB and `canonical` is false
  /// (savepoints and final states are canonical); otherwise snapshot() (heap entries of a non-canonical
  /// snapshot in table order, not sorted: the same state in other bytes). InputError naming a path when
  /// an upload fails.
  checkpoint::OperatorSubtaskState snapshot(int64_t checkpoint_id, bool canonical);
  /// The synchronous part of snapshot(checkpoint_id, canonical); its write() gives the same state.
  OperatorSnapshotFutures snapshotAsync(int64_t checkpoint_id, bool canonical);

 private:
  std::string uid_;
  KeyGroupRange range_;
  int32_t max_parallelism_;
  bool restored_;
  StateBackendOptions backend_;
  checkpoint::OperatorSubtaskState restored_state_;  ///< consumed when a backend is created
  std::unique_ptr<KeyedStateBackend> keyed_;
  std::unique_ptr<OperatorStateBackend> operator_;
};

}  // namespace sluice::runtime::state
