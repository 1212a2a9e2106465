#include "runtime/state/rocksdb_store.h"

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <vector>

#include <rocksdb/cache.h>
#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/table.h>
#include <rocksdb/utilities/checkpoint.h>
#include <rocksdb/write_batch.h>
#include <rocksdb/write_buffer_manager.h>

#include "common/config.h"
#include "common/error.h"

namespace sluice::runtime::state {

namespace {

rocksdb::Slice slice(std::string_view s) { return rocksdb::Slice(s.data(), s.size()); }

rocksdb::ColumnFamilyHandle* handleOf(void* h) { return static_cast<rocksdb::ColumnFamilyHandle*>(h); }

std::string sanitized(const std::string& name) {
  std::string out;
  for (char c : name) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                       c == '_' || c == '.';
    out.push_back(plain ? c : '_');
  }
  return out.empty() ? std::string("state") : out;
}

}  // namespace

StateBackendOptions StateBackendOptions::fromConfiguration(const Configuration& config, int32_t subtask_index) {
  StateBackendOptions o;
  const std::string type = config.get(options::kStateBackend);
  if (type == "rocksdb") {
    o.type = StateBackendType::kRocksDB;
  } else if (type == "hashmap") {
    o.type = StateBackendType::kHashMap;
  } else {
    throw ConfigError(fmt::format("configuration key '{}': unknown state backend '{}' (hashmap or rocksdb)",
                                  options::kStateBackend.key(), type));
  }
  std::vector<std::string> dirs;
  const std::string configured = config.get(options::kTmpDirs);
  for (size_t start = 0; start <= configured.size();) {
    const size_t end = std::min(configured.find(',', start), configured.size());
    std::string dir = configured.substr(start, end - start);
    dir.erase(0, dir.find_first_not_of(' '));
    dir.erase(dir.find_last_not_of(' ') + 1);
    if (!dir.empty()) dirs.push_back(std::move(dir));
    start = end + 1;
  }
  if (!dirs.empty()) o.local_directory = dirs[static_cast<size_t>(std::max(subtask_index, 0)) % dirs.size()];

  o.write_buffer_size = static_cast<uint64_t>(config.get(options::kRocksDBWriteBufferSize));
  o.max_write_buffer_number = config.get(options::kRocksDBMaxWriteBufferNumber);
  o.block_cache_size = static_cast<uint64_t>(config.get(options::kRocksDBBlockCacheSize));
  o.use_bloom_filter = config.get(options::kRocksDBUseBloomFilter);
  o.incremental_checkpoints = config.get(options::kIncrementalCheckpoints);
  o.bloom_filter_bits_per_key = config.get(options::kRocksDBBloomFilterBitsPerKey);
  const auto ratio = [&](const ConfigOption<double>& key, bool allow_zero) {
    const double v = config.get(key);
    if (!(v < 1.0 && (allow_zero ? v >= 0.0 : v > 0.0))) {
      throw ConfigError(fmt::format("configuration key '{}': {} is outside {}0, 1)", key.key(), v, allow_zero ? "[" : "("));
    }
    return v;
  };
  o.write_buffer_ratio = ratio(options::kRocksDBWriteBufferRatio, false);
  o.high_prio_pool_ratio = ratio(options::kRocksDBHighPriorityPoolRatio, true);
  const int32_t slots = std::max(config.get(options::kNumberOfTaskSlots), 1);
  o.memory_scope = fmt::format("slot-{}", std::max(subtask_index, 0) % slots);
  if (const std::optional<int64_t> fixed = config.getOptional(options::kRocksDBFixedMemoryPerSlot)) {
    if (*fixed <= 0) {
      throw ConfigError(fmt::format("configuration key '{}': must be positive", options::kRocksDBFixedMemoryPerSlot.key()));
    }
    o.shared_memory_bytes = static_cast<uint64_t>(*fixed);
    o.memory_scope += "-fixed";
  } else if (config.get(options::kRocksDBMemoryManaged)) {
    // TaskExecutorResourceUtils.adjustForLocalExecution: 128 mb of managed memory when nothing sizes it.
    int64_t managed = 128ll << 20;
    if (const std::optional<int64_t> size = config.getOptional(options::kManagedMemorySize)) {
      managed = *size;
    } else if (const std::optional<int64_t> total = config.getOptional(options::kTotalFlinkMemory)) {
      const double fraction = ratio(options::kManagedMemoryFraction, true);
      managed = static_cast<int64_t>(fraction * static_cast<double>(*total));
    }
    if (managed <= 0) {
      throw ConfigError(fmt::format("configuration key '{}': the RocksDB backend with '{}' = true needs managed "
                                    "memory, got {} bytes",
                                    options::kManagedMemorySize.key(), options::kRocksDBMemoryManaged.key(), managed));
    }
    o.shared_memory_bytes = static_cast<uint64_t>(managed) / static_cast<uint64_t>(slots);
    o.memory_scope += fmt::format("-managed-{}", o.shared_memory_bytes);
  }
  return o;
}

namespace {

/// The block cache and write buffer manager of the RocksDB backends of one slot (Flink's
/// SharedResources of RocksDBSharedResources), alive while a backend uses them.
struct SharedRocksDBMemory {
  std::shared_ptr<rocksdb::Cache> cache;
  std::shared_ptr<rocksdb::WriteBufferManager> write_buffer_manager;
};

std::shared_ptr<SharedRocksDBMemory> sharedMemoryFor(const StateBackendOptions& o) {
  static std::mutex mu;
  static std::map<std::string, std::weak_ptr<SharedRocksDBMemory>> scopes;
  std::lock_guard<std::mutex> lock(mu);
  if (auto existing = scopes[o.memory_scope].lock()) return existing;
  auto m = std::make_shared<SharedRocksDBMemory>();
  const double total = static_cast<double>(o.shared_memory_bytes);
  // RocksDBMemoryControllerUtils.calculateActualCacheCapacity / calculateWriteBufferManagerCapacity.
  const auto cache_bytes = static_cast<size_t>((3.0 - o.write_buffer_ratio) * total / 3.0);
  const auto write_buffer_bytes = static_cast<size_t>(2.0 * total * o.write_buffer_ratio / 3.0);
  m->cache = rocksdb::NewLRUCache(cache_bytes, -1, /*strict_capacity_limit=*/false, o.high_prio_pool_ratio);
  m->write_buffer_manager = std::make_shared<rocksdb::WriteBufferManager>(write_buffer_bytes, m->cache);
  scopes[o.memory_scope] = m;
  return m;
}

}  // namespace

struct RocksDBIterator::Impl {
  std::string upper;
  rocksdb::Slice upper_slice;
  std::unique_ptr<rocksdb::Iterator> it;
  std::string where;  ///< for messages
};

RocksDBIterator::RocksDBIterator(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RocksDBIterator::~RocksDBIterator() = default;

bool RocksDBIterator::valid() const {
  if (impl_->it->Valid()) return true;
  const rocksdb::Status s = impl_->it->status();
  SLUICE_CHECK(s.ok(), "RocksDB iteration over {}: {}", impl_->where, s.ToString());
  return false;
}
std::string_view RocksDBIterator::key() const {
  const rocksdb::Slice k = impl_->it->key();
  return std::string_view(k.data(), k.size());
}
std::string_view RocksDBIterator::value() const {
  const rocksdb::Slice v = impl_->it->value();
  return std::string_view(v.data(), v.size());
}
void RocksDBIterator::next() { impl_->it->Next(); }

struct RocksDBStore::Impl {
  std::shared_ptr<SharedRocksDBMemory> shared_memory;  ///< null without managed or fixed memory
  std::shared_ptr<rocksdb::Cache> block_cache;
  rocksdb::ColumnFamilyOptions cf_options;
  rocksdb::WriteOptions write_options;
  std::unique_ptr<rocksdb::DB> db;
  std::map<std::string, std::unique_ptr<RocksDBColumnFamily>> families;

  void check(const rocksdb::Status& s, const std::string& dir, const std::string& what) const {
    SLUICE_CHECK(s.ok(), "RocksDB state in {}: {}: {}", dir, what, s.ToString());
  }
  /// As check(), the message built only on failure (the per-record paths).
  void check(const rocksdb::Status& s, const std::string& dir, const char* what, const std::string& state) const {
    if (!s.ok()) check(s, dir, fmt::format("{} in state '{}'", what, state));
  }
};

RocksDBStore::RocksDBStore(const StateBackendOptions& options,
                           const std::function<void(const std::string& directory)>& populate)
    : impl_(std::make_unique<Impl>()) {
  std::error_code ec;
  const std::filesystem::path parent = options.local_directory.empty()
                                           ? std::filesystem::temp_directory_path(ec)
                                           : std::filesystem::path(options.local_directory);
  std::filesystem::create_directories(parent, ec);
  std::string pattern = (parent / ("sluice-rocksdb-" + sanitized(options.instance_name) + "-XXXXXX")).string();
  if (ec || ::mkdtemp(pattern.data()) == nullptr) {
    throw ConfigError(fmt::format("configuration key '{}': cannot create the RocksDB working directory under '{}': {}",
                                  options::kTmpDirs.key(), parent.string(),
                                  ec ? ec.message() : std::string(std::strerror(errno))));
  }
  directory_ = pattern;

  rocksdb::BlockBasedTableOptions table;
  rocksdb::DBOptions db_options;
  if (options.shared_memory_bytes > 0) {
    // Flink's RocksDBResourceContainer with shared resources: index and filter blocks live in the
    // cache (charged to the budget) at high priority, L0's pinned, memtables charged to the cache.
    impl_->shared_memory = sharedMemoryFor(options);
    impl_->block_cache = impl_->shared_memory->cache;
    table.cache_index_and_filter_blocks = true;
    table.cache_index_and_filter_blocks_with_high_priority = true;
    table.pin_l0_filter_and_index_blocks_in_cache = true;
    table.pin_top_level_index_and_filter = true;
    db_options.write_buffer_manager = impl_->shared_memory->write_buffer_manager;
  } else {
    impl_->block_cache = rocksdb::NewLRUCache(options.block_cache_size);
  }
  table.block_cache = impl_->block_cache;
  if (options.use_bloom_filter) {
    table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(options.bloom_filter_bits_per_key, false));
  }
  impl_->cf_options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  impl_->cf_options.write_buffer_size = options.write_buffer_size;
  impl_->cf_options.max_write_buffer_number = std::max(options.max_write_buffer_number, 1);
  impl_->write_options.disableWAL = true;
  impl_->write_options.sync = false;
  // Each record rewrites its key's value (an accumulator of the same size, mostly): update the
  // memtable entry in place instead of stacking versions that every Get, scan and flush walks past.
  // Sound here because snapshots are synchronous on the only writing thread (no reader needs an
  // older version while a write happens).
  impl_->cf_options.inplace_update_support = true;

  db_options.create_if_missing = true;
  // Flink's PredefinedOptions.DEFAULT: no fsync of data files (the working copy is disposable), no
  // statistics dumps.
  db_options.use_fsync = false;
  db_options.stats_dump_period_sec = 0;
  db_options.allow_concurrent_memtable_write = false;  // required by inplace_update_support
  // A working copy removed with the backend: one info log file is enough.
  db_options.keep_log_file_num = 1;
  db_options.max_open_files = -1;
  std::vector<std::string> names = {rocksdb::kDefaultColumnFamilyName};
  if (populate) {
    try {
      populate(directory_);
    } catch (...) {
      std::filesystem::remove_all(directory_, ec);
      throw;
    }
    names.clear();
    const rocksdb::Status listed = rocksdb::DB::ListColumnFamilies(db_options, directory_, &names);
    if (!listed.ok()) {
      std::filesystem::remove_all(directory_, ec);
      throw InputError(fmt::format("restored RocksDB files in '{}' do not open: {}", directory_, listed.ToString()));
    }
  }
  std::vector<rocksdb::ColumnFamilyDescriptor> families;
  for (const std::string& name : names) families.emplace_back(name, impl_->cf_options);
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* db = nullptr;
  const rocksdb::Status s = rocksdb::DB::Open(db_options, directory_, families, &handles, &db);
  if (!s.ok()) {
    std::filesystem::remove_all(directory_, ec);
    if (populate) throw InputError(fmt::format("restored RocksDB files in '{}' do not open: {}", directory_, s.ToString()));
    impl_->check(s, directory_, "open");
  }
  impl_->db.reset(db);
  for (size_t i = 0; i < handles.size(); ++i) {
    // The default column family stays unused; its handle is owned by the DB.
    if (names[i] == rocksdb::kDefaultColumnFamilyName) {
      impl_->db->DestroyColumnFamilyHandle(handles[i]);
      continue;
    }
    auto cf = std::unique_ptr<RocksDBColumnFamily>(new RocksDBColumnFamily(this, names[i], handles[i]));
    impl_->families.emplace(names[i], std::move(cf));
  }
}

RocksDBStore::~RocksDBStore() {
  if (impl_->db) {
    for (auto& [name, cf] : impl_->families) impl_->db->DestroyColumnFamilyHandle(handleOf(cf->handle_));
    impl_->db->Close();
    impl_->db.reset();
  }
  std::error_code ec;
  std::filesystem::remove_all(directory_, ec);
}

RocksDBColumnFamily& RocksDBStore::columnFamily(const std::string& name) {
  auto it = impl_->families.find(name);
  if (it != impl_->families.end()) return *it->second;
  rocksdb::ColumnFamilyHandle* handle = nullptr;
  impl_->check(impl_->db->CreateColumnFamily(impl_->cf_options, name, &handle), directory_,
               fmt::format("create column family '{}'", name));
  auto cf = std::unique_ptr<RocksDBColumnFamily>(new RocksDBColumnFamily(this, name, handle));
  return *impl_->families.emplace(name, std::move(cf)).first->second;
}

std::unique_ptr<RocksDBSnapshot> RocksDBSnapshot::take(RocksDBStore& store, const StateBackendOptions& options,
                                                       const std::string& name) {
  std::string directory = fmt::format("{}.{}", store.directory(), name);
  std::error_code ec;
  std::filesystem::remove_all(directory, ec);
  try {
    store.createCheckpoint(directory);
  } catch (...) {
    std::filesystem::remove_all(directory, ec);
    throw;
  }
  StateBackendOptions copy = options;
  copy.type = StateBackendType::kRocksDB;
  copy.instance_name += "-snapshot";
  return std::unique_ptr<RocksDBSnapshot>(new RocksDBSnapshot(std::move(directory), std::move(copy)));
}

RocksDBSnapshot::~RocksDBSnapshot() {
  opened_.reset();
  std::error_code ec;
  if (!checkpoint_directory_.empty()) std::filesystem::remove_all(checkpoint_directory_, ec);
}

RocksDBStore& RocksDBSnapshot::open() {
  if (opened_) return *opened_;
  // Same file system (the store's parent directory): the checkpoint's files are moved, not copied.
  opened_ = std::make_unique<RocksDBStore>(options_, [&](const std::string& target) {
    for (const auto& entry : std::filesystem::directory_iterator(checkpoint_directory_)) {
      std::filesystem::rename(entry.path(), std::filesystem::path(target) / entry.path().filename());
    }
  });
  std::error_code ec;
  std::filesystem::remove_all(checkpoint_directory_, ec);
  checkpoint_directory_.clear();
  return *opened_;
}

void RocksDBStore::flush() {
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  for (auto& [name, cf] : impl_->families) handles.push_back(handleOf(cf->handle_));
  if (handles.empty()) return;
  impl_->check(impl_->db->Flush(rocksdb::FlushOptions(), handles), directory_, "flush");
}

void RocksDBStore::createCheckpoint(const std::string& directory) {
  rocksdb::Checkpoint* raw = nullptr;
  impl_->check(rocksdb::Checkpoint::Create(impl_->db.get(), &raw), directory_, "create a checkpoint object");
  std::unique_ptr<rocksdb::Checkpoint> checkpoint(raw);
  // log_size_for_flush 0: the memtables are always flushed first (the WAL is off, so that is where
  // the latest writes are).
  impl_->check(checkpoint->CreateCheckpoint(directory, 0), directory_, fmt::format("native checkpoint into '{}'", directory));
}

std::vector<std::string> RocksDBStore::columnFamilyNames() const {
  std::vector<std::string> names;
  for (const auto& [name, cf] : impl_->families) names.push_back(name);
  return names;
}

void RocksDBStore::copyRange(const RocksDBStore& source, std::string_view begin, std::string_view end) {
  constexpr size_t kBatchBytes = 4u << 20;
  for (const std::string& name : source.columnFamilyNames()) {
    const RocksDBColumnFamily& from = *source.impl_->families.at(name);
    RocksDBColumnFamily& to = columnFamily(name);
    rocksdb::WriteBatch batch;
    const auto commit = [&] {
      impl_->check(impl_->db->Write(impl_->write_options, &batch), directory_,
                   fmt::format("copy into state '{}'", name));
      batch.Clear();
    };
    for (auto it = from.newIterator(begin, end); it->valid(); it->next()) {
      impl_->check(batch.Put(handleOf(to.handle_), slice(it->key()), slice(it->value())), directory_,
                   fmt::format("batch for state '{}'", name));
      if (batch.GetDataSize() >= kBatchBytes) commit();
    }
    if (batch.Count() > 0) commit();
  }
}

RocksDBStore::MemoryUsage RocksDBStore::memoryUsage() const {
  MemoryUsage m;
  m.block_cache_capacity = impl_->block_cache->GetCapacity();
  m.block_cache_usage = impl_->block_cache->GetUsage();
  uint64_t v = 0;
  if (impl_->db->GetAggregatedIntProperty(rocksdb::DB::Properties::kCurSizeAllMemTables, &v)) m.memtable_bytes = v;
  if (impl_->db->GetAggregatedIntProperty(rocksdb::DB::Properties::kLiveSstFilesSize, &v)) m.live_sst_bytes = v;
  return m;
}

bool RocksDBColumnFamily::get(std::string_view key, std::string* value) const {
  rocksdb::ReadOptions ro;
  const rocksdb::Status s = store_->impl_->db->Get(ro, handleOf(handle_), slice(key), value);
  if (s.IsNotFound()) return false;
  store_->impl_->check(s, store_->directory_, "get", name_);
  return true;
}

void RocksDBColumnFamily::put(std::string_view key, std::string_view value) {
  store_->impl_->check(store_->impl_->db->Put(store_->impl_->write_options, handleOf(handle_), slice(key), slice(value)),
                       store_->directory_, "put", name_);
}

void RocksDBColumnFamily::remove(std::string_view key) {
  store_->impl_->check(store_->impl_->db->Delete(store_->impl_->write_options, handleOf(handle_), slice(key)),
                       store_->directory_, "delete", name_);
}

std::unique_ptr<RocksDBIterator> RocksDBColumnFamily::newIterator(std::string_view begin, std::string_view end) const {
  auto impl = std::make_unique<RocksDBIterator::Impl>();
  impl->where = fmt::format("state '{}' in {}", name_, store_->directory_);
  rocksdb::ReadOptions ro;
  if (!end.empty()) {
    impl->upper.assign(end);
    impl->upper_slice = rocksdb::Slice(impl->upper);
    ro.iterate_upper_bound = &impl->upper_slice;
  }
  // Scans read each block once: keep them from evicting the point lookups' blocks.
  ro.fill_cache = false;
  impl->it.reset(store_->impl_->db->NewIterator(ro, handleOf(handle_)));
  impl->it->Seek(slice(begin));
  return std::unique_ptr<RocksDBIterator>(new RocksDBIterator(std::move(impl)));
}

}  // namespace sluice::runtime::state
