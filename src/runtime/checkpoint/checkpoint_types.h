#pragma once
/// The data of a checkpoint as it travels between tasks, the coordinator and the storage (Flink's
/// CheckpointBarrier, CheckpointOptions, OperatorSubtaskState, TaskStateSnapshot). Plain values; no I/O.
///
/// State is kept in the canonical, backend-independent form (Flink's savepoint format since 1.13):
/// keyed state as one blob per key group, so a restore at another parallelism picks the key groups
/// of its range (flink-checkpointing.md §3.3, §4.4); operator state as named lists of elements,
/// redistributed by their mode (§3.2).

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "runtime/checkpoint/channel_state.h"

namespace sluice::runtime::checkpoint {

/// What a checkpoint is for (Flink's CheckpointType / SnapshotType).
enum class CheckpointKind : uint8_t {
  kCheckpoint = 0,  ///< periodic; subsumes older ones; notifies sinks on completion
  kSavepoint = 1,   ///< user-triggered, always aligned, never subsumed by checkpoints
  /// The synchronous savepoint of stop-with-savepoint (Flink's SavepointType.suspend(), `flink stop`):
  /// a savepoint whose completion is told to every task; each source emits nothing after its barrier and
  /// ends once it completes (resumes if it is aborted); tasks then end without endInput (EndOfData STOP).
  kSavepointSuspend = 2,
  /// The same with --drain (SavepointType.terminate()): each source emits the final watermark
  /// (MAX_WATERMARK) before its barrier, so every event-time window fires into the savepoint; tasks end
  /// with endInput.
  kSavepointTerminate = 3,
};

/// Any of the savepoint kinds: forced, aligned, never subsumed.
inline bool isSavepoint(CheckpointKind kind) { return kind != CheckpointKind::kCheckpoint; }
/// A savepoint that stops the job (stop-with-savepoint).
inline bool isStopSavepoint(CheckpointKind kind) {
  return kind == CheckpointKind::kSavepointSuspend || kind == CheckpointKind::kSavepointTerminate;
}

/// How barriers are handled at a task's input (Flink's CheckpointOptions.AlignmentType).
enum class AlignmentType : uint8_t {
  kAligned = 0,      ///< EXACTLY_ONCE: a channel that delivered the barrier is blocked until all did
  kAtLeastOnce = 1,  ///< AT_LEAST_ONCE: barriers are counted, nothing is blocked
  /// EXACTLY_ONCE unaligned (FLIP-76): the barrier overtakes in-flight data, the first one at an input
  /// starts the snapshot, and the overtaken data is stored as channel state; nothing is blocked.
  kUnaligned = 2,
  /// EXACTLY_ONCE aligned barrier of an unaligned or timeoutable checkpoint on an edge that does not support
  /// unaligned checkpoints (Flink's FORCED_ALIGNED, CheckpointOptions#withUnalignedUnsupported): aligned,
  /// never switches to unaligned; the receiving task's outputs that do support them get the checkpoint's
  /// own alignment back (withUnalignedSupported).
  kForcedAligned = 3,
};

/// The barrier injected at the sources and forwarded by every task (Flink's CheckpointBarrier with its
/// CheckpointOptions).
struct CheckpointBarrier {
  int64_t id = 0;
  int64_t timestamp_ms = 0;  ///< wall clock at trigger (ms since the epoch)
  CheckpointKind kind = CheckpointKind::kCheckpoint;
  AlignmentType alignment = AlignmentType::kAligned;
  /// An aligned barrier of an unaligned-capable checkpoint (execution.checkpointing.aligned-checkpoint-
  /// timeout > 0, Flink's CheckpointOptions.alignedCheckpointTimeout): a task whose alignment is still not
  /// done this long after the trigger switches to unaligned. 0: never (Flink's NO_ALIGNED_CHECKPOINT_TIME_OUT).
  int64_t aligned_timeout_ms = 0;
};

/// How a named operator list state is redistributed on restore (Flink's OperatorStateHandle.Mode).
enum class OperatorStateMode : uint8_t {
  kSplitDistribute = 0,  ///< getListState: elements of all subtasks cut into contiguous chunks
  kUnion = 1,            ///< getUnionListState: every subtask gets every element
  kBroadcast = 2,        ///< one copy per subtask; restored from the first subtask's copy
};

/// One named operator (non-keyed) list state of one subtask.
struct OperatorListState {
  OperatorStateMode mode = OperatorStateMode::kSplitDistribute;
  std::vector<std::string> elements;  ///< each element in its TypeSerializer form
};

/// One file of a RocksDB incremental checkpoint (Flink's HandleAndLocalPath: the uploaded copy and its
/// name in the database directory).
struct IncrementalStateFile {
  std::string local_name;  ///< "000012.sst", "MANIFEST-000005", "CURRENT", "OPTIONS-000007"
  std::string path;        ///< absolute path of the uploaded copy (`<job>/shared/` or `<job>/taskowned/`)
  uint64_t size = 0;       ///< bytes
  uint32_t crc32 = 0;      ///< zlib CRC32 of the contents

  bool operator==(const IncrementalStateFile&) const = default;
};

/// The keyed state of one RocksDB backend as the files of a native RocksDB checkpoint (Flink's
/// IncrementalRemoteKeyedStateHandle, RocksIncrementalSnapshotStrategy). SST files are immutable and
/// shared by the checkpoints that reference them (the SharedStateRegistry rule: deleted when no retained
/// checkpoint references them); MANIFEST, CURRENT and OPTIONS are this checkpoint's own. Heap parts of
/// the keyed state (timers) stay canonical in OperatorSubtaskState::keyed.
struct IncrementalKeyedStateHandle {
  std::string backend_id;  ///< unique per RocksDB instance (Flink's backendIdentifier)
  int64_t checkpoint_id = 0;
  int32_t key_group_start = 0;  ///< the backend's key group range, inclusive
  int32_t key_group_end = -1;
  /// The states in the database: column family name -> state kind (runtime/state's StateKind as u8).
  std::map<std::string, uint8_t> states;
  std::vector<IncrementalStateFile> shared_files;   ///< SST files
  std::vector<IncrementalStateFile> private_files;  ///< MANIFEST, CURRENT, OPTIONS
  /// Bytes uploaded by this checkpoint (new SST files and the private files; Flink's
  /// persistedSizeOfThisCheckpoint): the incremental size, against the full size of all files.
  uint64_t checkpointed_size = 0;

  uint64_t fullSize() const {
    uint64_t n = 0;
    for (const auto& f : shared_files) n += f.size;
    for (const auto& f : private_files) n += f.size;
    return n;
  }

  bool operator==(const IncrementalKeyedStateHandle&) const = default;
};

/// The state of one operator in one subtask (Flink's OperatorSubtaskState), canonical form.
struct OperatorSubtaskState {
  /// Keyed state, key group -> bytes of every state of that group (runtime/state's canonical format).
  /// Only groups holding state appear.
  std::map<int32_t, std::string> keyed;
  /// Operator state by state name.
  std::map<std::string, OperatorListState> operator_state;
  /// RocksDB incremental checkpoints (execution.checkpointing.incremental): the database files of the
  /// backend; on restore at another parallelism, every old backend whose range overlaps the new one.
  std::vector<IncrementalKeyedStateHandle> incremental;

  /// In-flight data of an unaligned checkpoint; only the head operator of a task holds it.
  SubtaskChannelState channel;

  bool empty() const { return keyed.empty() && operator_state.empty() && incremental.empty() && channel.empty(); }
};

/// The state of all operators of one subtask, by operator uid (Flink's TaskStateSnapshot keyed by
/// OperatorID). Stateless operators are absent.
using TaskStateSnapshot = std::map<std::string, OperatorSubtaskState>;

}  // namespace sluice::runtime::checkpoint
