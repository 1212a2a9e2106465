#pragma once
/// The keyed state backend of one operator subtask: heap (Flink's HeapKeyedStateBackend /
/// HashMapStateBackend) or RocksDB (Flink's RocksDBKeyedStateBackend / EmbeddedRocksDBStateBackend),
/// chosen by StateBackendOptions (flink-checkpointing.md §3.3–3.6). It owns the states registered by the
/// operator, scoped to a current key set by the caller, and the timer services, all partitioned by key
/// group. Both backends hand out the same state handle types (keyed_state.h).
///
/// RocksDB: one database per backend in a fresh directory under StateBackendOptions::local_directory
/// (io.tmp.dirs), removed by the destructor; one column family per state, keys laid out as key group |
/// key | namespace (rocksdb_state_table.h). Timers stay in heap queues on both backends (Flink's
/// state.backend.rocksdb.timer-service.factory: HEAP) and are snapshotted the same way.
///
/// Keys and namespaces are bytes. snapshot() writes one blob per key group holding every
/// state of that group (the canonical format below); a backend restored from such blobs (of one or
/// several old subtasks) decodes a state lazily when the operator registers it, since only then is its
/// serializer known. Restored states the operator never registers are written back unchanged.
///
/// The blobs are the same for both backends (canonical savepoints, backend-independent since Flink 1.13):
/// restore a heap snapshot into RocksDB and back. A checkpoint's snapshot has a synchronous part on the
/// task thread, snapshotAsync(), and an asynchronous one, KeyedStateSnapshot::write() on another thread
/// while the task goes on (Flink's SnapshotStrategy: syncPrepareResources, then asyncSnapshot):
/// - heap (HeapSnapshotStrategy): every state frozen copy-on-write in O(key groups) (HeapStateTable),
///   serialized in write(); timers are serialized in the synchronous part;
/// - RocksDB incremental (RocksIncrementalSnapshotStrategy, incremental_snapshot.h): the native RocksDB
///   checkpoint (memtables flushed, SST files hard-linked) is taken in the synchronous part, the upload of
///   the SST files earlier checkpoints did not upload runs in write(); timers stay canonical blobs;
/// - RocksDB full (RocksFullSnapshotStrategy; checkpoints, savepoints, snapshot()): the synchronous part
///   writes the write-back caches back and takes a RocksDBSnapshot (a native checkpoint: memtables
///   flushed, SST files hard-linked; timers are serialized); write() opens that copy and iterates each
///   column family in key-group order into canonical blobs.
/// Restoring incremental handles (Flink's
/// RocksDBIncrementalRestoreOperation): one handle of exactly this range opens the downloaded database;
/// otherwise each overlapping old database is opened temporarily and the entries of this range are
/// copied (key-group prefix range scans); the heap backend converts them into canonical blobs by
/// iterating. Restored column families no operator registered stay in the database and in snapshots.
/// Threading: the task thread only, except KeyedStateSnapshot (see there).
///
/// Blob format of one key group: u8 version (1), varint number of states, then per state: name
/// (varint length + bytes), u8 StateKind, varint number of entries, then per entry key, namespace and
/// value, each varint length + bytes (value in the state's serializer form; a timer's value is its int64
/// time).

#include <atomic>
#include <cstdint>
#include <list>
#include <map>
#include <optional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/checkpoint/checkpoint_types.h"
#include "runtime/state/incremental_snapshot.h"
#include "runtime/state/internal_timer_service.h"
#include "runtime/state/keyed_state.h"
#include "runtime/state/rocksdb_store.h"
#include "runtime/state/state_backend_options.h"

namespace sluice::runtime::state {

class KeyedStateBackend;

/// The result of a keyed snapshot: canonical blobs (key group -> blob) and, for a RocksDB incremental
/// checkpoint, the handle of the uploaded database files (none when the database holds no state).
struct KeyedSnapshotResult {
  std::map<int32_t, std::string> keyed;
  std::optional<checkpoint::IncrementalKeyedStateHandle> handle;
};

/// One keyed snapshot after its synchronous part (Flink's SnapshotResources plus the async part of
/// FullSnapshotAsyncWriter / RocksDBIncrementalSnapshotOperation): it holds no reference to the backend,
/// which may go on changing or be destroyed meanwhile (frozen heap versions, restored blobs and the
/// uploader are shared). write() may run on any thread, once; destroying the object (any thread) releases
/// the frozen versions, so the backend stops copying on write, and removes a native checkpoint not
/// uploaded.
class KeyedStateSnapshot {
 public:
  ~KeyedStateSnapshot();
  KeyedStateSnapshot(const KeyedStateSnapshot&) = delete;
  KeyedStateSnapshot& operator=(const KeyedStateSnapshot&) = delete;

  /// The state at snapshotAsync() time. Throws what a state's serializer throws; InputError naming the
  /// paths when an incremental file cannot be uploaded. When `cancelled` becomes true it stops between key
  /// groups and returns nullopt.
  std::optional<KeyedSnapshotResult> write(const std::atomic<bool>* cancelled = nullptr);

 private:
  friend class KeyedStateBackend;
  struct RestoredEntry {
    int32_t key_group;
    std::string_view key;
    std::string_view ns;
    std::string_view value;
  };
  struct Pending {
    std::string name;
    StateKind kind;
    std::vector<RestoredEntry> entries;  ///< views into the restored blobs, key-group order
  };
  struct Part {
    std::string name;
    StateKind kind;
    std::unique_ptr<FrozenKeyedState> state;
  };
  /// The owner of restored blobs: the backend until every restored state is registered, and snapshots.
  struct RestoredBlobs {
    std::map<int32_t, std::string> blobs;
    std::list<std::string> converted;  ///< converted from incremental handles (heap backend)
  };
  /// A native RocksDB checkpoint to upload in write().
  struct Upload {
    std::string local_directory;
    IncrementalCheckpointTarget target;
    std::map<std::string, uint8_t> states;
    std::shared_ptr<IncrementalSnapshotUploader> uploader;
  };
  KeyedStateSnapshot() = default;

  KeyGroupRange range_;
  std::vector<Part> parts_;                  ///< by name
  std::vector<Pending> pending_;             ///< restored states not registered yet
  std::shared_ptr<const RestoredBlobs> restored_blobs_;
  std::optional<Upload> upload_;
};

/// Keyed state and timers of one operator subtask over a KeyGroupRange.
class KeyedStateBackend {
 public:
  /// A backend for `range` out of `max_parallelism` key groups, restored from `restored` (key group ->
  /// blob; groups outside the range are ignored), of the type in `options` (default: heap). Throws
  /// InputError naming the key group (and state) when a blob is malformed, ConfigError naming io.tmp.dirs
  /// when the RocksDB directory cannot be created.
  /// `incremental`: RocksDB incremental handles to restore (those overlapping the range are used); a
  /// missing or damaged file throws InputError naming its path.
  KeyedStateBackend(KeyGroupRange range, int32_t max_parallelism, std::map<int32_t, std::string> restored = {},
                    const StateBackendOptions& options = {},
                    std::vector<checkpoint::IncrementalKeyedStateHandle> incremental = {});
  ~KeyedStateBackend();
  KeyedStateBackend(const KeyedStateBackend&) = delete;
  KeyedStateBackend& operator=(const KeyedStateBackend&) = delete;

  /// Scopes every state and timer call to `key_bytes`, whose key group the caller computed with
  /// assignToKeyGroup(hash, maxParallelism()). InternalError when the group is outside the range.
  void setCurrentKey(std::string_view key_bytes, int32_t key_group) {
    if (!range_.contains(key_group)) [[unlikely]] keyGroupOutsideRange(key_group);
    current_.assign(key_bytes);
    current_.key_group = key_group;
  }
  std::string_view currentKey() const { return current_.bytes(); }
  /// internal::fastBytesHash of currentKey() (the first half of the heap tables' and timers' slot hashes).
  uint64_t currentKeyHash() const { return current_.hash; }
  /// -1 before the first setCurrentKey.
  int32_t currentKeyGroup() const { return current_.key_group; }
  const KeyGroupRange& keyGroupRange() const { return range_; }
  int32_t maxParallelism() const { return max_parallelism_; }
  StateBackendType backendType() const { return db_ ? StateBackendType::kRocksDB : StateBackendType::kHashMap; }
  /// The RocksDB database (its directory, flush), nullptr for the heap backend.
  RocksDBStore* rocksDBStore() const { return db_.get(); }

  /// The state named by the descriptor, created (and restored) on first use; the same object for the
  /// same name. UserError when the name is taken by a state of another kind or value type, or was
  /// restored as another kind; InputError when its restored values do not decode (naming the state and
  /// key group).
  template <typename V, typename Ser>
  ValueState<V, Ser>& getValueState(const ValueStateDescriptor<V, Ser>& desc) {
    return getOrCreate<ValueState<V, Ser>>(desc.name, StateKind::kValue, [&] {
      return std::make_unique<ValueState<V, Ser>>(desc.name, range_, &current_);
    });
  }
  template <typename V, typename Ser>
  ListState<V, Ser>& getListState(const ListStateDescriptor<V, Ser>& desc) {
    return getOrCreate<ListState<V, Ser>>(desc.name, StateKind::kList, [&] {
      return std::make_unique<ListState<V, Ser>>(desc.name, range_, &current_);
    });
  }
  template <typename UK, typename UV, typename KS, typename VS>
  MapState<UK, UV, KS, VS>& getMapState(const MapStateDescriptor<UK, UV, KS, VS>& desc) {
    return getOrCreate<MapState<UK, UV, KS, VS>>(desc.name, StateKind::kMap, [&] {
      return std::make_unique<MapState<UK, UV, KS, VS>>(desc.name, range_, &current_);
    });
  }
  template <typename V, typename Ser>
  ReducingState<V, Ser>& getReducingState(const ReducingStateDescriptor<V, Ser>& desc) {
    return getOrCreate<ReducingState<V, Ser>>(desc.name, StateKind::kReducing, [&] {
      return std::make_unique<ReducingState<V, Ser>>(desc.name, range_, &current_, desc.reduce);
    });
  }
  template <typename IN, typename ACC, typename OUT, typename AS>
  AggregatingState<IN, ACC, OUT, AS>& getAggregatingState(const AggregatingStateDescriptor<IN, ACC, OUT, AS>& desc) {
    return getOrCreate<AggregatingState<IN, ACC, OUT, AS>>(desc.name, StateKind::kAggregating, [&] {
      return std::make_unique<AggregatingState<IN, ACC, OUT, AS>>(desc.name, range_, &current_, desc);
    });
  }

  /// The timer service `name` (Flink's InternalTimeServiceManager.getInternalTimerService), created and
  /// restored on first use; the same object for the same name.
  InternalTimerService& getInternalTimerService(const std::string& name);

  /// Names of the registered states (timer queues included), sorted.
  std::vector<std::string> registeredStateNames() const;

  /// The canonical snapshot: key group -> blob, only groups holding state. Synchronous, full; the same
  /// bytes on both backends for the same state. RocksDB: snapshotAsync()->write() on the calling thread.
  std::map<int32_t, std::string> snapshot() const;

  /// The synchronous part of a checkpoint's snapshot (see the file comment); the result's write() gives
  /// the rest on any thread. `incremental` (RocksDB only): a native checkpoint uploaded there by write();
  /// null: canonical blobs, as snapshot(). InternalError for an incremental snapshot on the heap.
  /// `sorted` false: the heap states' entries are written in table order instead of sorted by (key,
  /// namespace) — the same state, restorable alike, without a sort (checkpoints); true: the canonical
  /// bytes of snapshot() (savepoints).
  std::unique_ptr<KeyedStateSnapshot> snapshotAsync(const IncrementalCheckpointTarget* incremental = nullptr,
                                                    bool sorted = true);

  /// snapshotAsync(&target)->write(), on the calling thread.
  using IncrementalSnapshot = KeyedSnapshotResult;
  IncrementalSnapshot snapshotIncremental(const IncrementalCheckpointTarget& target);

 private:
  [[noreturn, gnu::noinline, gnu::cold]] void keyGroupOutsideRange(int32_t key_group) const;
  using RestoredEntry = KeyedStateSnapshot::RestoredEntry;
  struct RestoredState {
    StateKind kind;
    std::vector<RestoredEntry> entries;  ///< in key-group order
  };

  template <typename State, typename Make>
  State& getOrCreate(const std::string& name, StateKind kind, Make&& make) {
    if (SnapshotableKeyedState* existing = findState(name, kind)) {
      auto* typed = dynamic_cast<State*>(existing);
      SLUICE_USER_CHECK(typed != nullptr, "keyed state '{}' is already registered with another value type", name);
      return *typed;
    }
    checkNewStateName(name, kind);
    auto owned = make();
    if (db_) owned->attachRocksDB(db_->columnFamily(name), max_parallelism_);
    database_states_.erase(name);
    State& ref = *owned;
    addState(std::move(owned));
    return ref;
  }
  /// The registered state `name` (UserError when its kind differs), nullptr when not registered.
  SnapshotableKeyedState* findState(const std::string& name, StateKind kind) const;
  /// UserError when a restored state of that name has another kind, or the name is reserved.
  void checkNewStateName(const std::string& name, StateKind kind) const;
  /// Registers a new state and decodes its restored entries.
  void addState(std::unique_ptr<SnapshotableKeyedState> state);
  void parseRestoredBlob(int32_t key_group, std::string_view blob);
  /// A snapshot holding the restored states not registered yet (and their blobs), no part yet.
  std::unique_ptr<KeyedStateSnapshot> newSnapshot() const;
  /// The synchronous part of a full RocksDB snapshot (canonical, key-group order).
  std::unique_ptr<KeyedStateSnapshot> fullRocksDBSnapshot() const;
  /// Opens the RocksDB database, restored from `incremental` when given.
  void openRocksDB(const StateBackendOptions& options,
                   const std::vector<checkpoint::IncrementalKeyedStateHandle>& incremental);
  /// Heap backend: the entries of `incremental` in the range as canonical blobs, parsed as restored.
  void convertIncremental(const StateBackendOptions& options,
                          const std::vector<checkpoint::IncrementalKeyedStateHandle>& incremental);
  /// Records a restored column family's kind (InputError when two handles disagree).
  void noteDatabaseState(const std::string& name, uint8_t kind);

  KeyGroupRange range_;
  int32_t max_parallelism_;
  StateBackendOptions options_;
  /// Full RocksDB snapshots taken (names their native checkpoints).
  mutable uint64_t full_snapshots_ = 0;
  CurrentKey current_;
  /// Declared before the states, which hold its column families, so it is destroyed after them.
  std::unique_ptr<RocksDBStore> db_;
  std::map<std::string, std::unique_ptr<SnapshotableKeyedState>> states_;
  std::map<std::string, std::unique_ptr<InternalTimerService>> timer_services_;
  /// Restored blobs (shared with snapshots; restored_ views into them; null once every restored state is
  /// registered) and the restored states not registered yet.
  std::shared_ptr<KeyedStateSnapshot::RestoredBlobs> restored_blobs_;
  std::map<std::string, RestoredState> restored_;
  /// Restored column families not registered by the operator yet (snapshotted raw by their kind).
  std::map<std::string, StateKind> database_states_;
  /// Used by the snapshots' write(), one at a time (the task's checkpoints are written in order).
  std::shared_ptr<IncrementalSnapshotUploader> uploader_;
};

}  // namespace sluice::runtime::state
