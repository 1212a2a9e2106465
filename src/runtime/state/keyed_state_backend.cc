#include "runtime/state/keyed_state_backend.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <limits>

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
    : range_(range), max_parallelism_(max_parallelism), options_(options) {
  SLUICE_CHECK(max_parallelism >= 1 && max_parallelism <= KeyGroupRangeAssignment::kUpperBoundMaxParallelism,
               "max parallelism {}", max_parallelism);
  SLUICE_CHECK(range.empty() || (range.start >= 0 && range.end < max_parallelism),
               "key group range [{}, {}] outside max parallelism {}", range.start, range.end, max_parallelism);
  restored_blobs_ = std::make_shared<KeyedStateSnapshot::RestoredBlobs>();
  for (auto& [group, blob] : restored) {
    if (range_.contains(group)) restored_blobs_->blobs.emplace(group, std::move(blob));
  }
  for (const auto& [group, blob] : restored_blobs_->blobs) parseRestoredBlob(group, blob);
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
      restored_blobs_->converted.push_back(std::move(blob));
      parseRestoredBlob(g, restored_blobs_->converted.back());
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

void KeyedStateBackend::keyGroupOutsideRange(int32_t key_group) const {
  SLUICE_CHECK(false, "key group {} outside the backend's range [{}, {}]", key_group, range_.start, range_.end);
  std::abort();
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
      restored_blobs_.reset();  // snapshots still writing restored states keep theirs
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

namespace {

/// A registered state read live: only for a snapshot written before the task goes on.
class LiveState final : public FrozenKeyedState {
 public:
  explicit LiveState(const SnapshotableKeyedState& s) : s_(s) {}
  size_t groupSize(int32_t g) const override { return s_.groupSize(g); }
  void writeGroup(int32_t g, DataOutputView& out) const override { s_.writeGroup(g, out); }
  size_t writeGroupCounted(int32_t g, DataOutputView& out) const override { return s_.writeGroupCounted(g, out); }

 private:
  const SnapshotableKeyedState& s_;
};

/// A column family of a RocksDBSnapshot written raw by its kind, on the write-out thread: a registered
/// RocksDB state or a restored one nobody registered.
class RocksDBFrozenState final : public FrozenKeyedState {
 public:
  RocksDBFrozenState(std::shared_ptr<RocksDBSnapshot> at, std::string name, int32_t max_parallelism, StateKind kind)
      : at_(std::move(at)), name_(std::move(name)), layout_(max_parallelism), is_map_(kind == StateKind::kMap) {}
  size_t groupSize(int32_t g) const override {
    std::string ignored;
    DataOutputView out(ignored);
    return writeGroupCounted(g, out);
  }
  void writeGroup(int32_t g, DataOutputView& out) const override { writeGroupCounted(g, out); }
  size_t writeGroupCounted(int32_t g, DataOutputView& out) const override {
    return internal::writeRawGroup(at_->open().columnFamily(name_), layout_, is_map_, g, out);
  }

 private:
  std::shared_ptr<RocksDBSnapshot> at_;  ///< shared by the backend's column families
  std::string name_;
  internal::RocksDBKeyLayout layout_;
  bool is_map_;
};

/// Entries serialized in the synchronous part: per key group, the count and the bytes (timers).
class SerializedFrozenState final : public FrozenKeyedState {
 public:
  SerializedFrozenState(const SnapshotableKeyedState& s, const KeyGroupRange& range) {
    for (int32_t g = range.start; g <= range.end; ++g) {
      std::string bytes;
      DataOutputView out(bytes);
      const size_t n = s.writeGroupCounted(g, out);
      if (n > 0) groups_.emplace(g, std::make_pair(n, std::move(bytes)));
    }
  }
  size_t groupSize(int32_t g) const override {
    auto it = groups_.find(g);
    return it == groups_.end() ? 0 : it->second.first;
  }
  void writeGroup(int32_t g, DataOutputView& out) const override {
    auto it = groups_.find(g);
    if (it != groups_.end()) out.writeBytes(it->second.second.data(), it->second.second.size());
  }

 private:
  std::map<int32_t, std::pair<size_t, std::string>> groups_;
};

/// Removes a directory when it goes out of scope (errors ignored: the local copy is scratch).
struct RemoveDirectory {
  const std::string& dir;
  ~RemoveDirectory() {
    std::error_code e;
    std::filesystem::remove_all(dir, e);
  }
};

}  // namespace

std::unique_ptr<FrozenKeyedState> SnapshotableKeyedState::freeze(const KeyGroupRange& range, bool) const {
  return std::make_unique<SerializedFrozenState>(*this, range);
}

std::unique_ptr<KeyedStateSnapshot> KeyedStateBackend::newSnapshot() const {
  std::unique_ptr<KeyedStateSnapshot> snap(new KeyedStateSnapshot());
  snap->range_ = range_;
  snap->restored_blobs_ = restored_blobs_;
  for (const auto& [name, r] : restored_) snap->pending_.push_back(KeyedStateSnapshot::Pending{name, r.kind, r.entries});
  return snap;
}

std::map<int32_t, std::string> KeyedStateBackend::snapshot() const {
  if (db_) return std::move(fullRocksDBSnapshot()->write()->keyed);
  std::unique_ptr<KeyedStateSnapshot> snap = newSnapshot();
  for (const auto& [name, s] : states_) {
    snap->parts_.push_back(KeyedStateSnapshot::Part{name, s->kind(), std::make_unique<LiveState>(*s)});
  }
  return std::move(snap->write()->keyed);
}

std::unique_ptr<KeyedStateSnapshot> KeyedStateBackend::fullRocksDBSnapshot() const {
  for (const auto& [name, s] : states_) s->flushCache();
  std::shared_ptr<RocksDBSnapshot> at =
      RocksDBSnapshot::take(*db_, options_, fmt::format("full-{}", ++full_snapshots_));
  std::unique_ptr<KeyedStateSnapshot> snap = newSnapshot();
  for (const auto& [name, s] : states_) {
    snap->parts_.push_back(KeyedStateSnapshot::Part{
        name, s->kind(),
        s->storedInRocksDB() ? std::make_unique<RocksDBFrozenState>(at, name, max_parallelism_, s->kind())
                             : s->freeze(range_, true)});
  }
  for (const auto& [name, kind] : database_states_) {
    snap->parts_.push_back(
        KeyedStateSnapshot::Part{name, kind, std::make_unique<RocksDBFrozenState>(at, name, max_parallelism_, kind)});
  }
  // Registered and raw states merged in name order, so a restored database snapshots the same bytes as
  // the backend it came from.
  std::sort(snap->parts_.begin(), snap->parts_.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return snap;
}

std::unique_ptr<KeyedStateSnapshot> KeyedStateBackend::snapshotAsync(const IncrementalCheckpointTarget* incremental,
                                                                     bool sorted) {
  SLUICE_CHECK(incremental == nullptr || db_ != nullptr, "incremental snapshot of a heap keyed state backend");
  if (db_ && incremental == nullptr) return fullRocksDBSnapshot();
  for (const auto& [name, s] : states_) s->flushCache();
  std::unique_ptr<KeyedStateSnapshot> snap = newSnapshot();
  // Heap states copy-on-write; on RocksDB the timers (serialized now), the rest is in the native checkpoint.
  for (const auto& [name, s] : states_) {
    if (!s->storedInRocksDB()) snap->parts_.push_back(KeyedStateSnapshot::Part{name, s->kind(), s->freeze(range_, sorted)});
  }
  if (incremental == nullptr) return snap;
  std::map<std::string, uint8_t> kinds;
  for (const auto& [name, s] : states_) {
    if (s->storedInRocksDB()) kinds.emplace(name, static_cast<uint8_t>(s->kind()));
  }
  for (const auto& [name, kind] : database_states_) kinds.emplace(name, static_cast<uint8_t>(kind));
  if (kinds.empty()) return snap;
  if (!uploader_) uploader_ = std::make_shared<IncrementalSnapshotUploader>(newBackendId());
  // Next to the working directory: the same file system, so the SST files are hard links.
  KeyedStateSnapshot::Upload upload{fmt::format("{}.chk-{}", db_->directory(), incremental->checkpoint_id),
                                    *incremental, std::move(kinds), uploader_};
  std::error_code ec;
  std::filesystem::remove_all(upload.local_directory, ec);
  try {
    db_->createCheckpoint(upload.local_directory);
  } catch (...) {
    RemoveDirectory cleanup{upload.local_directory};
    throw;
  }
  snap->upload_ = std::move(upload);
  return snap;
}

KeyedStateBackend::IncrementalSnapshot KeyedStateBackend::snapshotIncremental(const IncrementalCheckpointTarget& target) {
  return std::move(*snapshotAsync(&target)->write());
}

KeyedStateSnapshot::~KeyedStateSnapshot() {
  if (upload_) RemoveDirectory cleanup{upload_->local_directory};
}

std::optional<KeyedSnapshotResult> KeyedStateSnapshot::write(const std::atomic<bool>* cancelled) {
  KeyedSnapshotResult result;
  std::vector<size_t> next(pending_.size(), 0);  // cursors over the pending states' entries
  // Per part: its entries of the group, written once (count and bytes in one pass).
  std::vector<std::string> bytes(parts_.size());
  std::vector<size_t> counts(parts_.size());
  for (int32_t g = range_.start; g <= range_.end; ++g) {
    if (cancelled != nullptr && cancelled->load(std::memory_order_relaxed)) return std::nullopt;
    size_t num_states = 0;
    for (size_t i = 0; i < parts_.size(); ++i) {
      bytes[i].clear();
      DataOutputView pw(bytes[i]);
      counts[i] = parts_[i].state->writeGroupCounted(g, pw);
      num_states += counts[i] > 0 ? 1 : 0;
    }
    for (size_t p = 0; p < pending_.size(); ++p) {
      const auto& entries = pending_[p].entries;
      if (next[p] < entries.size() && entries[next[p]].key_group == g) ++num_states;
    }
    if (num_states == 0) continue;
    std::string blob;
    DataOutputView w(blob);
    w.writeBytes(&kKeyedBlobVersion, 1);
    w.writeVarUint(num_states);
    for (size_t i = 0; i < parts_.size(); ++i) {
      if (counts[i] == 0) continue;
      internal::writeBytesField(w, parts_[i].name);
      const auto kind = static_cast<uint8_t>(parts_[i].kind);
      w.writeBytes(&kind, 1);
      w.writeVarUint(counts[i]);
      w.writeBytes(bytes[i].data(), bytes[i].size());
    }
    for (size_t p = 0; p < pending_.size(); ++p) {
      const auto& entries = pending_[p].entries;
      size_t end = next[p];
      while (end < entries.size() && entries[end].key_group == g) ++end;
      if (end == next[p]) continue;
      internal::writeBytesField(w, pending_[p].name);
      const auto kind = static_cast<uint8_t>(pending_[p].kind);
      w.writeBytes(&kind, 1);
      w.writeVarUint(end - next[p]);
      for (; next[p] < end; ++next[p]) {
        internal::writeBytesField(w, entries[next[p]].key);
        internal::writeBytesField(w, entries[next[p]].ns);
        internal::writeBytesField(w, entries[next[p]].value);
      }
    }
    result.keyed.emplace(g, std::move(blob));
  }
  // Release the frozen versions before the upload, so the task stops copying on write.
  parts_.clear();
  pending_.clear();
  restored_blobs_.reset();
  if (upload_) {
    if (cancelled != nullptr && cancelled->load(std::memory_order_relaxed)) return std::nullopt;
    Upload upload = std::move(*upload_);
    upload_.reset();
    RemoveDirectory cleanup{upload.local_directory};
    result.handle = upload.uploader->upload(upload.local_directory, upload.target, range_, std::move(upload.states));
  }
  return result;
}

namespace internal {
void SnapshotVersions::add(uint64_t version) {
  std::lock_guard<std::mutex> lock(mu_);
  live_.insert(version);
  publish();
}

void SnapshotVersions::release(uint64_t version) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = live_.find(version);
  if (it != live_.end()) live_.erase(it);
  publish();
}

void SnapshotVersions::publish() {
  highest_.store(live_.empty() ? 0 : *live_.rbegin(), std::memory_order_release);
  lowest_.store(live_.empty() ? std::numeric_limits<uint64_t>::max() : *live_.begin(), std::memory_order_release);
}
}  // namespace internal

}  // namespace sluice::runtime::state
