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
  /// Names the working directory (job, operator uid and subtask; '/' and spaces are replaced).
  std::string instance_name = "state";
  /// Bytes of one memtable per column family (Flink's state.backend.rocksdb.writebuffer.size = 64 mb;
  /// RocksDB clips it to >= 64 KiB). With shared memory a write buffer manager flushes earlier.
  uint64_t write_buffer_size = 64ull << 20;
  /// Memtables per column family before writes stall (state.backend.rocksdb.writebuffer.count = 2).
  int32_t max_write_buffer_number = 2;
  /// Bytes of the LRU block cache of one backend when shared_memory_bytes is 0 (Flink's
  /// state.backend.rocksdb.block.cache-size = 8 mb).
  uint64_t block_cache_size = 8ull << 20;
  /// Memory shared by the RocksDB backends of one slot (`memory_scope`), from managed memory
  /// (`state.backend.rocksdb.memory.managed`) or `state.backend.rocksdb.memory.fixed-per-slot`; 0: each
  /// backend sizes itself with the two values above. Flink's RocksDBMemoryControllerUtils: a block cache
  /// of (3 - r) / 3 of it with a high-priority pool for index and filter blocks, and a write buffer
  /// manager of 2r / 3 of it charged to that cache (r = write_buffer_ratio).
  uint64_t shared_memory_bytes = 0;
  double write_buffer_ratio = 0.5;     ///< state.backend.rocksdb.memory.write-buffer-ratio
  double high_prio_pool_ratio = 0.1;   ///< state.backend.rocksdb.memory.high-prio-pool-ratio
  /// Backends with the same scope share the memory above (the slot: one subtask of each operator).
  std::string memory_scope = "slot-0";
  /// Bloom filters in SST files (state.backend.rocksdb.use-bloom-filter, bits-per-key).
  bool use_bloom_filter = false;
  double bloom_filter_bits_per_key = 10.0;
  /// execution.checkpointing.incremental with a checkpoint directory: checkpoints of the RocksDB backend
  /// upload SST files into `<checkpoint_job_directory>/shared` (savepoints stay canonical).
  bool incremental_checkpoints = false;
  /// `<execution.checkpointing.dir>/<job id>`; empty: no file storage, checkpoints are full.
  std::string checkpoint_job_directory;

  /// The options from `state.backend.type`, `io.tmp.dirs`, execution.checkpointing.incremental and the
  /// RocksDB memory keys of `config` (checkpoint_job_directory is left to the caller, who knows the job). With
  /// several directories in io.tmp.dirs (separated by ','), subtask `subtask_index` takes directory
  /// index % count, as Flink spreads subtasks over its local directories. Managed memory per slot is
  /// taskmanager.memory.managed.size (or its fraction of taskmanager.memory.flink.size, else 128 mb)
  /// divided by taskmanager.numberOfTaskSlots; subtask i runs in slot i % slots (slot sharing).
  /// ConfigError naming the key when a value is invalid.
  static StateBackendOptions fromConfiguration(const Configuration& config, int32_t subtask_index = 0);
};

}  // namespace sluice::runtime::state
