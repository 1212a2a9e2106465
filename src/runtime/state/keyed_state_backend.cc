#include "runtime/state/keyed_state_backend.h"

#include <algorithm>
#include <filesystem>

namespace sluice::runtime::state {

namespace {

constexpr uint8_t kKeyedBlobVersion = 1;
constexpr std::string_view kTimerStatePrefix = "_timer_state/";

/// Reads the structure of a blob, handing out views into it. Throws InputError on truncation.
class BlobReader {
 public:
  explicit BlobReader(std::string_view blob) : blob_(blob) {}
  uint8_t readU8() {
    need(1);
    return static_cast<uint8_t>(blob_[pos_++]);
  }
  uint64_t readVarUint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      const uint8_t b = readU8();
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return v;
    }
    throw InputError(fmt::format("malformed varint at offset {}", pos_));
  }
  /// A count of items taking at least `min_bytes` each, checked against the bytes left.
  size_t readCount(size_t min_bytes) {
    const uint64_t n = readVarUint();
    if (n > (blob_.size() - pos_) / min_bytes) {
      throw InputError(fmt::format("count {} at offset {} exceeds the {} bytes left", n, pos_, blob_.size() - pos_));
    }
    return static_cast<size_t>(n);
  }
  std::string_view readField() {
    const uint64_t n = readVarUint();
    need(n);
    std::string_view field = blob_.substr(pos_, n);
    pos_ += n;
    return field;
  }
  bool atEnd() const { return pos_ == blob_.size(); }
  size_t left() const { return blob_.size() - pos_; }

 private:
  void need(uint64_t n) const {
    if (n > blob_.size() - pos_) {
      throw InputError(fmt::format("truncated: need {} bytes at offset {}, {} left", n, pos_, blob_.size() - pos_));
    }
  }
  std::string_view blob_;
  size_t pos_ = 0;
};

}  // namespace

const char* stateKindName(StateKind kind) {
  switch (kind) {
    case StateKind::kValue: return "VALUE";
    case StateKind::kList: return "LIST";
    case StateKind::kMap: return "MAP";
    case StateKind::kReducing: return "REDUCING";
    case StateKind::kAggregating: return "AGGREGATING";
    case StateKind::kEventTimers: return "EVENT_TIMERS";
    case StateKind::kProcessingTimers: return "PROCESSING_TIMERS";
  }
  return "UNKNOWN";
}

namespace internal {
void writeBytesField(DataOutputView& out, std::string_view bytes) {
  out.writeVarUint(bytes.size());
  out.writeBytes(bytes.data(), bytes.size());
}
}  // namespace internal

KeyedStateBackend::KeyedStateBackend(KeyGroupRange range, int32_t max_parallelism,
                                     std::map<int32_t, std::string> restored, const StateBackendOptions& options,
                                     std::vector<checkpoint::IncrementalKeyedStateHandle> incremental)
    : range_(range), max_parallelism_(max_parallelism) {
  SLUICE_CHECK(max_parallelism >= 1 && max_parallelism <= KeyGroupRangeAssignment::kUpperBoundMaxParallelism,
               "max parallelism {}", max_parallelism);
  SLUICE_CHECK(range.empty() || (range.start >= 0 && range.end < max_parallelism),
               "key group range [{}, {}] outside max parallelism {}", range.start, range.end, max_parallelism);
  for (auto& [group, blob] : restored) {
    if (range_.contains(group)) restored_blobs_.emplace(group, std::move(blob));
  }
  for (const auto& [group, blob] : restored_blobs_) parseRestoredBlob(group, blob);
  // Only the handles overlapping the range, in key-group order (restored entries stay in group order).
  std::erase_if(incremental, [&](const checkpoint::IncrementalKeyedStateHandle& h) {
    return h.key_group_end < range_.start || h.key_group_start > range_.end;
  });
  std::sort(incremental.begin(), incremental.end(),
            [](const auto& a, const auto& b) { return a.key_group_start < b.key_group_start; });
  if (options.type == StateBackendType::kRocksDB) {
    openRocksDB(options, incremental);
  } else if (!incremental.empty()) {
    convertIncremental(options, incremental);
  }
}

void KeyedStateBackend::noteDatabaseState(const std::string& name, uint8_t kind) {
  if (kind > static_cast<uint8_t>(StateKind::kAggregating)) {
    throw InputError(fmt::format("RocksDB incremental state '{}' has kind {}, not a keyed state kind", name, kind));
  }
  const auto k = static_cast<StateKind>(kind);
  auto [it, inserted] = database_states_.try_emplace(name, k);
  if (!inserted && it->second != k) {
    throw InputError(fmt::format("RocksDB incremental state '{}' is a {} state in one handle and a {} state in another",
                                 name, stateKindName(it->second), stateKindName(k)));
  }
  if (restored_.count(name) != 0) {
    throw InputError(fmt::format("state '{}' is both in canonical blobs and in a RocksDB incremental handle", name));
  }
}

void KeyedStateBackend::openRocksDB(const StateBackendOptions& options,
                                    const std::vector<checkpoint::IncrementalKeyedStateHandle>& incremental) {
  for (const auto& h : incremental) {
    for (const auto& [name, kind] : h.states) noteDatabaseState(name, kind);
  }
  if (incremental.size() == 1 && incremental[0].key_group_start == range_.start &&
      incremental[0].key_group_end == range_.end) {
    // The same key groups: the downloaded database is this backend's.
    db_ = std::make_unique<RocksDBStore>(options, [&](const std::string& dir) { downloadIncrementalFiles(incremental[0], dir); });
    return;
  }
  db_ = std::make_unique<RocksDBStore>(options);
  const internal::RocksDBKeyLayout layout(max_parallelism_);
  for (const auto& h : incremental) {
    StateBackendOptions temporary = options;
    temporary.instance_name += "-restore";
    RocksDBStore old(temporary, [&](const std::string& dir) { downloadIncrementalFiles(h, dir); });
    const int32_t first = std::max(h.key_group_start, range_.start);
    const int32_t last = std::min(h.key_group_end, range_.end);
    db_->copyRange(old, layout.groupPrefix(first), layout.groupPrefix(last + 1));
  }
  for (const auto& [name, kind] : database_states_) db_->columnFamily(name);
}

void KeyedStateBackend::convertIncremental(const StateBackendOptions& options,
                                           const std::vector<checkpoint::IncrementalKeyedStateHandle>& incremental) {
  for (const auto& h : incremental) {
    for (const auto& [name, kind] : h.states) noteDatabaseState(name, kind);
  }
  const internal::RocksDBKeyLayout layout(max_parallelism_);
  for (const auto& h : incremental) {
    StateBackendOptions temporary = options;
    temporary.type = StateBackendType::kRocksDB;
    temporary.instance_name += "-convert";
    RocksDBStore old(temporary, [&](const std::string& dir) { downloadIncrementalFiles(h, dir); });
    const std::vector<std::string> cf_names = old.columnFamilyNames();
    std::map<std::string, StateKind> kinds;
    for (const auto& [name, kind] : h.states) {
      if (std::binary_search(cf_names.begin(), cf_names.end(), name)) kinds.emplace(name, static_cast<StateKind>(kind));
    }
    const int32_t first = std::max(h.key_group_start, range_.start);
    const int32_t last = std::min(h.key_group_end, range_.end);
    for (int32_t g = first; g <= last; ++g) {
      std::string blob;
      DataOutputView w(blob);
      w.writeBytes(&kKeyedBlobVersion, 1);
      std::string states;
      DataOutputView sw(states);
      size_t num_states = 0;
      std::string part;
      for (const auto& [name, kind] : kinds) {
        part.clear();
        DataOutputView pw(part);
        const size_t n = internal::writeRawGroup(old.columnFamily(name), layout, kind == StateKind::kMap, g, pw);
        if (n == 0) continue;
        ++num_states;
        internal::writeBytesField(sw, name);
        const auto k = static_cast<uint8_t>(kind);
        sw.writeBytes(&k, 1);
        sw.writeVarUint(n);
        sw.writeBytes(part.data(), part.size());
      }
      if (num_states == 0) continue;
      w.writeVarUint(num_states);
      w.writeBytes(states.data(), states.size());
      converted_blobs_.push_back(std::move(blob));
      parseRestoredBlob(g, converted_blobs_.back());
    }
  }
  // On the heap they are ordinary restored states now.
  database_states_.clear();
}

KeyedStateBackend::~KeyedStateBackend() = default;

void KeyedStateBackend::parseRestoredBlob(int32_t key_group, std::string_view blob) {
  std::string state_name;
  try {
    BlobReader in(blob);
    const uint8_t version = in.readU8();
    if (version != kKeyedBlobVersion) {
      throw InputError(fmt::format("unknown format version {} (expected {})", version, kKeyedBlobVersion));
    }
    const size_t num_states = in.readCount(1);
    for (size_t s = 0; s < num_states; ++s) {
      state_name.clear();
      state_name = std::string(in.readField());
      const uint8_t kind_byte = in.readU8();
      if (kind_byte > static_cast<uint8_t>(StateKind::kProcessingTimers)) {
        throw InputError(fmt::format("unknown state kind {}", kind_byte));
      }
      const auto kind = static_cast<StateKind>(kind_byte);
      auto [it, inserted] = restored_.try_emplace(state_name, RestoredState{kind, {}});
      if (it->second.kind != kind) {
        throw InputError(fmt::format("kind {} differs from kind {} in another key group", stateKindName(kind),
                                     stateKindName(it->second.kind)));
      }
      if (!inserted && !it->second.entries.empty() && it->second.entries.back().key_group == key_group) {
        throw InputError("the state appears twice in the key group");
      }
      const size_t num_entries = in.readCount(3);
      for (size_t e = 0; e < num_entries; ++e) {
        RestoredEntry entry{key_group, {}, {}, {}};
        entry.key = in.readField();
        entry.ns = in.readField();
        entry.value = in.readField();
        it->second.entries.push_back(entry);
      }
    }
    if (!in.atEnd()) throw InputError(fmt::format("{} trailing bytes", in.left()));
  } catch (const InputError& e) {
    throw InputError(fmt::format("restored keyed state of key group {}{}: {}", key_group,
                                 state_name.empty() ? std::string() : fmt::format(", state '{}'", state_name),
                                 e.what()));
  }
}

void KeyedStateBackend::setCurrentKey(std::string_view key_bytes, int32_t key_group) {
  SLUICE_CHECK(range_.contains(key_group), "key group {} outside the backend's range [{}, {}]", key_group,
               range_.start, range_.end);
  current_.bytes.assign(key_bytes);
  current_.key_group = key_group;
}

SnapshotableKeyedState* KeyedStateBackend::findState(const std::string& name, StateKind kind) const {
  auto it = states_.find(name);
  if (it == states_.end()) return nullptr;
  SLUICE_USER_CHECK(it->second->kind() == kind, "keyed state '{}' is already registered as a {} state, not {}",
                    name, stateKindName(it->second->kind()), stateKindName(kind));
  return it->second.get();
}

void KeyedStateBackend::checkNewStateName(const std::string& name, StateKind kind) const {
  const bool timers = kind == StateKind::kEventTimers || kind == StateKind::kProcessingTimers;
  SLUICE_USER_CHECK(timers || name.rfind(kTimerStatePrefix, 0) != 0,
                    "keyed state name '{}': the prefix '{}' is reserved for timers", name, kTimerStatePrefix);
  SLUICE_USER_CHECK(!name.empty(), "a keyed state needs a name");
  auto in_db = database_states_.find(name);
  SLUICE_USER_CHECK(in_db == database_states_.end() || in_db->second == kind,
                    "keyed state '{}' was restored as a {} state but is registered as a {} state", name,
                    stateKindName(in_db == database_states_.end() ? kind : in_db->second), stateKindName(kind));
  auto it = restored_.find(name);
  SLUICE_USER_CHECK(it == restored_.end() || it->second.kind == kind,
                    "keyed state '{}' was restored as a {} state but is registered as a {} state", name,
                    stateKindName(it == restored_.end() ? kind : it->second.kind), stateKindName(kind));
}

void KeyedStateBackend::addState(std::unique_ptr<SnapshotableKeyedState> state) {
  SnapshotableKeyedState& s = *state;
  const std::string name = s.name();
  auto restored = restored_.find(name);
  if (restored != restored_.end()) {
    size_t index = 0;
    for (const RestoredEntry& e : restored->second.entries) {
      try {
        s.restoreEntry(e.key_group, e.key, e.ns, e.value);
      } catch (const InputError& err) {
        throw InputError(fmt::format("restored keyed state '{}', key group {}, entry {}: {}", name, e.key_group,
                                     index, err.what()));
      }
      ++index;
    }
    restored_.erase(restored);
    if (restored_.empty()) {
      restored_blobs_.clear();
      converted_blobs_.clear();
    }
  }
  states_.emplace(name, std::move(state));
}

InternalTimerService& KeyedStateBackend::getInternalTimerService(const std::string& name) {
  auto it = timer_services_.find(name);
  if (it != timer_services_.end()) return *it->second;
  SLUICE_USER_CHECK(!name.empty(), "a timer service needs a name");
  const std::string event_name = std::string(kTimerStatePrefix) + "event_" + name;
  const std::string processing_name = std::string(kTimerStatePrefix) + "processing_" + name;
  SLUICE_CHECK(states_.count(event_name) == 0 && states_.count(processing_name) == 0, "timer states of '{}'", name);
  checkNewStateName(event_name, StateKind::kEventTimers);
  checkNewStateName(processing_name, StateKind::kProcessingTimers);
  auto event = std::make_unique<KeyGroupPartitionedTimerQueue>(event_name, StateKind::kEventTimers, range_);
  auto processing =
      std::make_unique<KeyGroupPartitionedTimerQueue>(processing_name, StateKind::kProcessingTimers, range_);
  auto service = std::make_unique<InternalTimerService>(this, event.get(), processing.get());
  addState(std::move(event));
  addState(std::move(processing));
  return *timer_services_.emplace(name, std::move(service)).first->second;
}

std::vector<std::string> KeyedStateBackend::registeredStateNames() const {
  std::vector<std::string> names;
  for (const auto& [name, s] : states_) names.push_back(name);
  return names;
}

std::map<int32_t, std::string> KeyedStateBackend::snapshotGroups(bool with_rocksdb) const {
  // One consistent view for the whole snapshot: caches written back first, then a RocksDB snapshot that
  // every column family's iteration reads.
  for (const auto& [name, s] : states_) s->flushCache();
  struct SnapshotScope {
    RocksDBStore* db;
    explicit SnapshotScope(RocksDBStore* d) : db(d) {
      if (db != nullptr) db->beginSnapshot();
    }
    ~SnapshotScope() {
      if (db != nullptr) db->endSnapshot();
    }
  } scope(db_.get());
  // Cursors over the restored states not registered yet; their entries are in key-group order.
  struct Pending {
    const std::string* name;
    const RestoredState* state;
    size_t next = 0;
  };
  std::vector<Pending> pending;
  for (const auto& [name, r] : restored_) pending.push_back(Pending{&name, &r});

  // Restored column families nobody registered: written raw by their kind.
  struct Raw {
    const std::string* name;
    StateKind kind;
    RocksDBColumnFamily* cf;
  };
  std::vector<Raw> raw;
  if (with_rocksdb && db_) {
    for (const auto& [name, kind] : database_states_) raw.push_back(Raw{&name, kind, &db_->columnFamily(name)});
  }
  const internal::RocksDBKeyLayout layout(max_parallelism_);
  std::map<int32_t, std::string> out;
  // Per state, in name order (registered and raw ones merged, so a restored database snapshots the same
  // bytes as the backend it came from): its entries of the group, written once (count and bytes in one
  // pass).
  struct Part {
    const std::string* name;
    StateKind kind;
    const SnapshotableKeyedState* state;  ///< null: raw column family `cf`
    RocksDBColumnFamily* cf;
    size_t count = 0;
    std::string bytes;
  };
  std::vector<Part> parts;
  for (const auto& [name, s] : states_) {
    if (with_rocksdb || !s->storedInRocksDB()) parts.push_back(Part{&name, s->kind(), s.get(), nullptr});
  }
  for (const Raw& r : raw) parts.push_back(Part{r.name, r.kind, nullptr, r.cf});
  std::sort(parts.begin(), parts.end(), [](const Part& a, const Part& b) { return *a.name < *b.name; });
  for (int32_t g = range_.start; g <= range_.end; ++g) {
    size_t num_states = 0;
    for (Part& part : parts) {
      part.bytes.clear();
      DataOutputView pw(part.bytes);
      part.count = part.state != nullptr ? part.state->writeGroupCounted(g, pw)
                                         : internal::writeRawGroup(*part.cf, layout, part.kind == StateKind::kMap, g, pw);
      num_states += part.count > 0 ? 1 : 0;
    }
    for (Pending& p : pending) {
      const auto& entries = p.state->entries;
      if (p.next < entries.size() && entries[p.next].key_group == g) ++num_states;
    }
    if (num_states == 0) continue;
    std::string blob;
    DataOutputView w(blob);
    w.writeBytes(&kKeyedBlobVersion, 1);
    w.writeVarUint(num_states);
    for (const Part& part : parts) {
      if (part.count == 0) continue;
      internal::writeBytesField(w, *part.name);
      const auto kind = static_cast<uint8_t>(part.kind);
      w.writeBytes(&kind, 1);
      w.writeVarUint(part.count);
      w.writeBytes(part.bytes.data(), part.bytes.size());
    }
    for (Pending& p : pending) {
      const auto& entries = p.state->entries;
      size_t end = p.next;
      while (end < entries.size() && entries[end].key_group == g) ++end;
      if (end == p.next) continue;
      internal::writeBytesField(w, *p.name);
      const auto kind = static_cast<uint8_t>(p.state->kind);
      w.writeBytes(&kind, 1);
      w.writeVarUint(end - p.next);
      for (; p.next < end; ++p.next) {
        internal::writeBytesField(w, entries[p.next].key);
        internal::writeBytesField(w, entries[p.next].ns);
        internal::writeBytesField(w, entries[p.next].value);
      }
    }
    out.emplace(g, std::move(blob));
  }
  return out;
}

KeyedStateBackend::IncrementalSnapshot KeyedStateBackend::snapshotIncremental(const IncrementalCheckpointTarget& target) {
  SLUICE_CHECK(db_ != nullptr, "incremental snapshot of a heap keyed state backend");
  for (const auto& [name, s] : states_) s->flushCache();
  IncrementalSnapshot out;
  out.keyed = snapshotGroups(false);
  std::map<std::string, uint8_t> kinds;
  for (const auto& [name, s] : states_) {
    if (s->storedInRocksDB()) kinds.emplace(name, static_cast<uint8_t>(s->kind()));
  }
  for (const auto& [name, kind] : database_states_) kinds.emplace(name, static_cast<uint8_t>(kind));
  if (kinds.empty()) return out;
  if (!uploader_) uploader_ = std::make_unique<IncrementalSnapshotUploader>(newBackendId());
  // Next to the working directory: the same file system, so the SST files are hard links.
  const std::string local = fmt::format("{}.chk-{}", db_->directory(), target.checkpoint_id);
  std::error_code ec;
  std::filesystem::remove_all(local, ec);
  struct Cleanup {
    const std::string& dir;
    ~Cleanup() {
      std::error_code e;
      std::filesystem::remove_all(dir, e);
    }
  } cleanup{local};
  db_->createCheckpoint(local);
  out.handle = uploader_->upload(local, target, range_, std::move(kinds));
  return out;
}

}  // namespace sluice::runtime::state
