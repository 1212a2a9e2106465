#pragma once
/// The RocksDB instance behind the RocksDB keyed state backend of one operator subtask (Flink's
/// EmbeddedRocksDBStateBackend / RocksDBKeyedStateBackend, flink-checkpointing.md §3.6): one database in
/// a fresh local working directory, one column family per state, byte keys and values. The RocksDB
/// headers stay inside rocksdb_store.cc; this header is light.
///
/// Writes skip the write-ahead log, as Flink's do: the database is a working copy rebuilt from the last
/// checkpoint after a failure, never recovered from its own files. Memory is bounded by
/// StateBackendOptions: with shared_memory_bytes (managed memory or fixed-per-slot, Flink's default) the
/// backends of one memory_scope share one LRU block cache and a WriteBufferManager charged to it, so
/// memtables, index/filter blocks and data blocks together stay near the slot's budget; otherwise each
/// column family keeps at most max_write_buffer_number memtables of `write_buffer_size` bytes and the
/// backend has its own block cache of `block_cache_size` bytes. Memtable entries are updated in place
/// (inplace_update_support): the only writer is the task thread, so no reader needs the versions a
/// per-record rewrite would otherwise stack up. RocksDB gives no snapshots (GetSnapshot) under in-place
/// updates, so a consistent view for a write-out on another thread is a native checkpoint
/// (RocksDBSnapshot).
///
/// Errors: IO failures of RocksDB throw InternalError naming the directory and column family (the local
/// working directory is the engine's, not the user's); a directory that cannot be created throws
/// ConfigError naming io.tmp.dirs. Threading: the owning task thread only.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/state/state_backend_options.h"

namespace sluice::runtime::state {

class RocksDBStore;

/// An iterator over the keys of one column family in [begin, end), in bytewise order. It sees the data
/// as of its creation (RocksDB's implicit snapshot): writes made while it is open are not visible to it.
class RocksDBIterator {
 public:
  ~RocksDBIterator();
  RocksDBIterator(const RocksDBIterator&) = delete;
  RocksDBIterator& operator=(const RocksDBIterator&) = delete;
  bool valid() const;
  /// The current key and value; views valid until next().
  std::string_view key() const;
  std::string_view value() const;
  void next();

 private:
  friend class RocksDBColumnFamily;
  struct Impl;
  explicit RocksDBIterator(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// One column family (one keyed state) of a RocksDBStore; owned by the store, valid while it lives.
class RocksDBColumnFamily {
 public:
  const std::string& name() const { return name_; }
  /// The value of `key` into *value; false when absent.
  bool get(std::string_view key, std::string* value) const;
  void put(std::string_view key, std::string_view value);
  void remove(std::string_view key);
  /// Iterates [begin, end) (an empty `end`: to the last key).
  std::unique_ptr<RocksDBIterator> newIterator(std::string_view begin, std::string_view end) const;

 private:
  friend class RocksDBStore;
  RocksDBColumnFamily(RocksDBStore* store, std::string name, void* handle)
      : store_(store), name_(std::move(name)), handle_(handle) {}
  RocksDBStore* store_;
  std::string name_;
  void* handle_;  ///< rocksdb::ColumnFamilyHandle*, owned by the store
};

/// A RocksDB database in its own fresh directory, removed (with its files) by the destructor.
class RocksDBStore {
 public:
  /// Creates the directory `<dir>/sluice-rocksdb-<name>-XXXXXX` (dir: options.local_directory, or the
  /// system temp directory when empty; name: options.instance_name with '/' and spaces replaced) and
  /// opens a database there. With `populate`, it is first called with the directory to place the files
  /// of a database there (a restored RocksDB checkpoint), which is then opened with all its column
  /// families; what `populate` throws propagates (the directory is removed). ConfigError naming
  /// io.tmp.dirs when the directory cannot be created; InputError naming the directory when the
  /// placed files do not open as a database.
  explicit RocksDBStore(const StateBackendOptions& options,
                        const std::function<void(const std::string& directory)>& populate = {});
  ~RocksDBStore();
  RocksDBStore(const RocksDBStore&) = delete;
  RocksDBStore& operator=(const RocksDBStore&) = delete;

  /// The column family `name`, created on first use; the same object for the same name.
  RocksDBColumnFamily& columnFamily(const std::string& name);
  /// Flushes every memtable to SST files.
  void flush();
  /// Flushes the memtables, then writes a native RocksDB checkpoint into `directory` (which must not exist; same file
  /// system: SST files are hard links): the live SST files plus MANIFEST, CURRENT and OPTIONS (Flink's
  /// RocksIncrementalSnapshotStrategy.takeDBNativeCheckpoint). InternalError when RocksDB fails.
  void createCheckpoint(const std::string& directory);
  /// Names of the column families (one per state), sorted; the default family is not listed.
  std::vector<std::string> columnFamilyNames() const;
  /// Copies the entries of `source`'s column families in [begin, end) into the same-named families of
  /// this store, in write batches (Flink's RocksDBIncrementalRestoreOperation on a rescale: key-group
  /// prefix range scans of each overlapping old database).
  void copyRange(const RocksDBStore& source, std::string_view begin, std::string_view end);
  /// Bytes in use, for tests and diagnostics: the block cache's capacity and usage (shared by the slot's
  /// backends when the memory is managed, memtables charged to it then) and this database's memtables; and,
  /// on disk, the live SST files (RocksDB's own count: listing the directory races with compactions).
  struct MemoryUsage {
    uint64_t block_cache_capacity = 0;
    uint64_t block_cache_usage = 0;
    uint64_t memtable_bytes = 0;
    uint64_t live_sst_bytes = 0;
  };
  MemoryUsage memoryUsage() const;
  /// The database directory.
  const std::string& directory() const { return directory_; }

 private:
  friend class RocksDBColumnFamily;
  struct Impl;
  std::string directory_;
  std::unique_ptr<Impl> impl_;
};

/// A frozen copy of a RocksDBStore for the asynchronous part of a full snapshot (Flink's
/// RocksFullSnapshotStrategy: resources taken synchronously, key-group ordered iteration written out
/// asynchronously). take() runs on the task thread: a native checkpoint (memtables flushed, SST files
/// hard-linked) into a directory next to the store's. open() (the write-out thread) opens that copy as
/// a RocksDBStore of its own, with the options given to take() (the slot's shared memory, if any), which
/// the task's later writes never touch. Destroying the object (any thread) closes the copy and removes
/// its files. Threading: take() on the store's thread; the object is used by one thread at a time.
class RocksDBSnapshot {
 public:
  /// `name` distinguishes concurrent snapshots of one store. InternalError when RocksDB fails.
  static std::unique_ptr<RocksDBSnapshot> take(RocksDBStore& store, const StateBackendOptions& options,
                                               const std::string& name);
  ~RocksDBSnapshot();
  RocksDBSnapshot(const RocksDBSnapshot&) = delete;
  RocksDBSnapshot& operator=(const RocksDBSnapshot&) = delete;
  /// The copy, opened on first use. InputError naming the directory when it does not open.
  RocksDBStore& open();

 private:
  RocksDBSnapshot(std::string checkpoint_directory, StateBackendOptions options)
      : checkpoint_directory_(std::move(checkpoint_directory)), options_(std::move(options)) {}
  std::string checkpoint_directory_;  ///< the native checkpoint until open() moves it into the copy
  StateBackendOptions options_;
  std::unique_ptr<RocksDBStore> opened_;
};

}  // namespace sluice::runtime::state
