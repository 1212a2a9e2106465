#include "runtime/state/keyed_state_backend.h"

#include <algorithm>

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
                                     std::map<int32_t, std::string> restored, const StateBackendOptions& options)
    : range_(range), max_parallelism_(max_parallelism) {
  SLUICE_CHECK(max_parallelism >= 1 && max_parallelism <= KeyGroupRangeAssignment::kUpperBoundMaxParallelism,
               "max parallelism {}", max_parallelism);
  SLUICE_CHECK(range.empty() || (range.start >= 0 && range.end < max_parallelism),
               "key group range [{}, {}] outside max parallelism {}", range.start, range.end, max_parallelism);
  for (auto& [group, blob] : restored) {
    if (range_.contains(group)) restored_blobs_.emplace(group, std::move(blob));
  }
  for (const auto& [group, blob] : restored_blobs_) parseRestoredBlob(group, blob);
  if (options.type == StateBackendType::kRocksDB) db_ = std::make_unique<RocksDBStore>(options);
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
    if (restored_.empty()) restored_blobs_.clear();
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

std::map<int32_t, std::string> KeyedStateBackend::snapshot() const {
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

  std::map<int32_t, std::string> out;
  // Per state: its entries of the group, written once (count and bytes in one pass).
  std::vector<std::string> parts;
  std::vector<size_t> counts;
  for (int32_t g = range_.start; g <= range_.end; ++g) {
    size_t num_states = 0;
    parts.resize(states_.size());
    counts.assign(states_.size(), 0);
    size_t i = 0;
    for (const auto& entry : states_) {
      const auto& s = entry.second;
      parts[i].clear();
      DataOutputView part(parts[i]);
      counts[i] = s->writeGroupCounted(g, part);
      num_states += counts[i] > 0 ? 1 : 0;
      ++i;
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
    i = 0;
    for (const auto& [name, s] : states_) {
      const size_t n = counts[i];
      const std::string& bytes = parts[i++];
      if (n == 0) continue;
      internal::writeBytesField(w, name);
      const auto kind = static_cast<uint8_t>(s->kind());
      w.writeBytes(&kind, 1);
      w.writeVarUint(n);
      w.writeBytes(bytes.data(), bytes.size());
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

}  // namespace sluice::runtime::state
