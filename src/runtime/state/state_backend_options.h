#pragma once
/// Which keyed state backend an operator subtask uses and how it is sized (Flink's StateBackendOptions
/// `state.backend.type` and the RocksDB backend's local directory and memory options,
/// flink-checkpointing.md §3.5–3.6). Plain values; any thread.

#include <cstdint>
#include <string>

namespace sluice {
class Configuration;
}

namespace sluice::runtime::state {

/// `state.backend.type`: hashmap (C++ objects on the heap) or rocksdb (serialized bytes in an embedded
/// RocksDB on local disk).
enum class StateBackendType : uint8_t { kHashMap, kRocksDB };

/// Options of the keyed state backend of one operator subtask. The default is the heap backend.
struct StateBackendOptions {
  StateBackendType type = StateBackendType::kHashMap;
  /// Parent directory of the RocksDB working directory (`io.tmp.dirs`; empty: the system temp
  /// directory). Each backend creates a fresh subdirectory and removes it when destroyed.
  std::string local_directory;
  /// Names the working directory (the operator's uid and subtask; '/' and spaces are replaced).
  std::string instance_name = "state";
  /// Bytes of one memtable per column family; RocksDB keeps at most two per column family, then flushes
  /// to an SST file (Flink's state.backend.rocksdb.writebuffer.size; RocksDB clips it to >= 64 KiB).
  uint64_t write_buffer_size = 4ull << 20;
  /// Bytes of the LRU block cache shared by the column families of one backend (Flink's
  /// state.backend.rocksdb.block.cache-size = 8 mb).
  uint64_t block_cache_size = 8ull << 20;

  /// The options from `state.backend.type` and `io.tmp.dirs` of `config`. With several directories in
  /// io.tmp.dirs (separated by ','), subtask `subtask_index` takes directory index % count, as Flink
  /// spreads subtasks over its local directories. ConfigError naming the key when a value is invalid.
  static StateBackendOptions fromConfiguration(const Configuration& config, int32_t subtask_index = 0);
};

}  // namespace sluice::runtime::state
