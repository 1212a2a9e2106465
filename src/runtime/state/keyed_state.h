#pragma once
/// Keyed state handles (Flink's ValueState, ListState, MapState, ReducingState, AggregatingState,
/// flink-checkpointing.md §3.5–3.6). A state is scoped to the backend's current key and to the state's
/// current namespace (empty = Flink's VoidNamespace). The same handle types serve both backends:
/// - heap (HashMapStateBackend): values are C++ objects, one hash map per key group; reads and writes
///   never serialize; the descriptor's serializer runs only in snapshots and restores;
/// - RocksDB (EmbeddedRocksDBStateBackend): values are serialized in one column family per state, and a
///   write-back cache of the current (key, namespace) keeps the in-place contract below
///   (rocksdb_state_table.h has the layout and the cache rules).
///
/// Pointers returned by value()/get() stay valid until the next write to the same state (Flink's rule:
/// no references to state objects across calls), and never across a snapshot (a heap snapshot is
/// copy-on-write: the next access after it may move the entry to a copy); on RocksDB, until the state is
/// next used under another key or namespace. Threading: the task thread only, except FrozenKeyedState and
/// HeapStateTable::Frozen (read on a snapshot thread).

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/error.h"
#include "common/hash.h"
#include "runtime/serialization/type_serializer.h"
#include "runtime/state/key_group.h"
#include "runtime/state/keyed_state_internal.h"
#include "runtime/state/rocksdb_state_table.h"
#include "runtime/state/state_descriptor.h"

namespace sluice::runtime::state {


/// A keyed state's entries as of one snapshot, frozen: readable on any thread (one at a time) while the
/// task thread goes on changing the state. Destroying it releases the snapshot (any thread).
class FrozenKeyedState {
 public:
  virtual ~FrozenKeyedState() = default;
  /// Number of entries in `key_group` at snapshot time.
  virtual size_t groupSize(int32_t key_group) const = 0;
  /// Writes the group's entries as SnapshotableKeyedState::writeGroup did at snapshot time. Throws what
  /// the state's serializer throws.
  virtual void writeGroup(int32_t key_group, DataOutputView& out) const = 0;
  /// writeGroup, returning the number of entries written (0: nothing written).
  virtual size_t writeGroupCounted(int32_t key_group, DataOutputView& out) const {
    const size_t n = groupSize(key_group);
    if (n > 0) writeGroup(key_group, out);
    return n;
  }
};

/// A keyed state as the backend snapshots and restores it, whatever its value type (each registered
/// state and each timer queue). Snapshot entries are (key bytes, namespace bytes, value bytes), written
/// in byte order of (key, namespace[, time]).
class SnapshotableKeyedState {
 public:
  SnapshotableKeyedState(std::string name, StateKind kind) : name_(std::move(name)), kind_(kind) {}
  virtual ~SnapshotableKeyedState() = default;
  const std::string& name() const { return name_; }
  StateKind kind() const { return kind_; }
  /// Number of entries in `key_group`.
  virtual size_t groupSize(int32_t key_group) const = 0;
  /// Writes the groupSize(key_group) entries of the group: key, namespace and value, each length-prefixed.
  virtual void writeGroup(int32_t key_group, DataOutputView& out) const = 0;
  /// writeGroup, returning the number of entries written (0: nothing written). One pass over RocksDB
  /// instead of a count and a write.
  virtual size_t writeGroupCounted(int32_t key_group, DataOutputView& out) const {
    const size_t n = groupSize(key_group);
    if (n > 0) writeGroup(key_group, out);
    return n;
  }
  /// Adds one restored entry. Throws InputError (without the place; the caller adds it) when `value`
  /// does not decode exactly.
  virtual void restoreEntry(int32_t key_group, std::string_view key, std::string_view ns, std::string_view value) = 0;
  /// Writes cached values back to the storage that groupSize/writeGroup read (RocksDB's write-back
  /// cache); called by the backend before a snapshot. No-op for heap states.
  virtual void flushCache() {}
  /// True when the entries live in a RocksDB column family (they are then part of a native RocksDB
  /// checkpoint; heap states and timers are written canonically).
  virtual bool storedInRocksDB() const { return false; }
  /// The synchronous part of an asynchronous snapshot (task thread): the entries of the groups in `range`
  /// as they are now. Heap tables freeze copy-on-write in O(key groups) and serialize later, in
  /// FrozenKeyedState::writeGroup; this default serializes every group now (timers).
  virtual std::unique_ptr<FrozenKeyedState> freeze(const KeyGroupRange& range) const;

 private:
  std::string name_;
  StateKind kind_;
};

namespace internal {

/// The snapshot versions of one heap table still being written out (Flink's CopyOnWriteStateMap
/// snapshotVersions). add() on the task thread; release() on the thread that drops the snapshot;
/// highestLive() on the task thread, acquire, so a node it then changes in place is one no live snapshot
/// reads any more.
class SnapshotVersions {
 public:
  uint64_t highestLive() const { return highest_.load(std::memory_order_acquire); }
  void add(uint64_t version);
  void release(uint64_t version);

 private:
  std::mutex mu_;
  std::multiset<uint64_t> live_;
  std::atomic<uint64_t> highest_{0};
};

/// Copies a state value for copy-on-write: SSer::copy(v) when the serializer has one (values without a
/// copy constructor, Flink's TypeSerializer.copy), else the copy constructor. Either must copy deep
/// whatever may be changed in place (no shared mutable parts), or a snapshot would see later changes.
template <typename S, typename SSer>
struct StateCopy {
  S operator()(const S& v) const {
    if constexpr (requires { SSer::copy(v); }) {
      return SSer::copy(v);
    } else {
      return S(v);
    }
  }
};

}  // namespace internal

/// The heap table of one state: (key, namespace) -> S per key group, copy-on-write for asynchronous
/// snapshots (flink-checkpointing.md §3.5, the role of Flink's CopyOnWriteStateMap with another layout).
///
/// Layout: each key group is a node holding 2^k shards (hash maps of about kShardTarget entries; a group
/// doubles its shards as it grows); groups and shards are held by shared_ptr and carry the table version
/// they were created at. freeze() (the synchronous part) copies the group pointers — O(key groups), no
/// entry is touched — registers the snapshot version and bumps the table's. A write (find, findOrInsert,
/// erase, forEachMutable) to a node whose version is not newer than the highest snapshot still live first
/// replaces the node by a copy (a group node: its shard pointers; a shard: its entries, values copied with
/// Copy); nodes no snapshot shares are changed in place. So the extra memory of a snapshot is the shards
/// written while it is being written out (each copied once), and a released snapshot costs nothing more.
/// Every accessor handing out a mutable S& or S* counts as a write. Threading: the task thread, except
/// Frozen (below).
template <typename S, typename Copy = internal::StateCopy<S, void>>
class HeapStateTable {
 public:
  using Map = std::unordered_map<internal::StateKey, S, internal::StateKeyHash, internal::StateKeyEq>;
  /// Average entries per shard above which a group doubles its shards.
  static constexpr size_t kShardTarget = 64;

  struct Shard {
    uint64_t version = 0;
    Map map;
  };
  struct Group {
    uint64_t version = 0;
    size_t size = 0;
    std::vector<std::shared_ptr<Shard>> shards;  ///< a power of two; null: no entry there yet
  };

  /// The table as of one freeze(): read on any one thread while the task goes on; destroying it releases
  /// the snapshot version (after dropping the nodes, so the task may then change them in place).
  class Frozen {
   public:
    Frozen(KeyGroupRange range, std::vector<std::shared_ptr<const Group>> groups,
           std::shared_ptr<internal::SnapshotVersions> versions, uint64_t version)
        : range_(range), groups_(std::move(groups)), versions_(std::move(versions)), version_(version) {}
    ~Frozen() {
      groups_.clear();
      versions_->release(version_);
    }
    Frozen(const Frozen&) = delete;
    Frozen& operator=(const Frozen&) = delete;
    size_t groupSize(int32_t key_group) const {
      const Group* g = group(key_group);
      return g == nullptr ? 0 : g->size;
    }
    /// Calls fn(const StateKey&, const S&) for every entry of the group, in no particular order.
    template <typename Fn>
    void forEach(int32_t key_group, Fn&& fn) const {
      const Group* g = group(key_group);
      if (g == nullptr) return;
      for (const auto& shard : g->shards) {
        if (shard) {
          for (const auto& [k, v] : shard->map) fn(k, v);
        }
      }
    }

   private:
    const Group* group(int32_t key_group) const {
      if (!range_.contains(key_group)) return nullptr;
      return groups_[static_cast<size_t>(key_group - range_.start)].get();
    }
    KeyGroupRange range_;
    std::vector<std::shared_ptr<const Group>> groups_;
    std::shared_ptr<internal::SnapshotVersions> versions_;
    uint64_t version_;
  };

  explicit HeapStateTable(KeyGroupRange range)
      : range_(range), groups_(static_cast<size_t>(range.size())),
        versions_(std::make_shared<internal::SnapshotVersions>()) {}

  /// The entry for writing (copied first when a live snapshot shares it), nullptr when absent.
  S* find(int32_t key_group, std::string_view key, std::string_view ns) {
    const internal::StateKeyView k{key, ns};
    const size_t h = internal::StateKeyHash{}(k);
    Group* g = groups_[index(key_group)].get();
    if (g == nullptr) return nullptr;
    Shard* s = g->shards[shardIndex(h, g->shards.size())].get();
    if (s == nullptr) return nullptr;
    auto it = s->map.find(k);
    if (it == s->map.end()) return nullptr;
    const uint64_t live = versions_->highestLive();
    if (g->version > live && s->version > live) return &it->second;
    Shard& w = writableShard(key_group, h, live);
    return &w.map.find(k)->second;
  }
  /// The entry, inserted as `make()` when absent.
  template <typename Make>
  S& findOrInsert(int32_t key_group, std::string_view key, std::string_view ns, Make&& make) {
    const internal::StateKeyView k{key, ns};
    const size_t h = internal::StateKeyHash{}(k);
    const uint64_t live = versions_->highestLive();
    Shard* s = &writableShard(key_group, h, live);
    auto it = s->map.find(k);
    if (it != s->map.end()) return it->second;
    Group& g = *groups_[index(key_group)];
    if (g.size + 1 > g.shards.size() * kShardTarget && g.shards.size() < kMaxShards) {
      split(key_group, live);
      s = &writableShard(key_group, h, live);
    }
    ++groups_[index(key_group)]->size;
    ++size_;
    return s->map.emplace(internal::StateKey{std::string(key), std::string(ns)}, make()).first->second;
  }
  void erase(int32_t key_group, std::string_view key, std::string_view ns) {
    if (find(key_group, key, ns) == nullptr) return;  // makes the shard writable when present
    const internal::StateKeyView k{key, ns};
    const size_t h = internal::StateKeyHash{}(k);
    Shard& s = writableShard(key_group, h, versions_->highestLive());
    s.map.erase(s.map.find(k));
    --groups_[index(key_group)]->size;
    --size_;
  }
  size_t size() const { return size_; }
  size_t groupSize(int32_t key_group) const {
    const Group* g = groups_[index(key_group)].get();
    return g == nullptr ? 0 : g->size;
  }
  /// Calls fn(const StateKey&, const S&) for every entry of the group, in no particular order (a read:
  /// nothing is copied).
  template <typename Fn>
  void forEach(int32_t key_group, Fn&& fn) const {
    const Group* g = groups_[index(key_group)].get();
    if (g == nullptr) return;
    for (const auto& shard : g->shards) {
      if (shard) {
        for (const auto& [k, v] : shard->map) fn(k, v);
      }
    }
  }
  /// Calls fn(const StateKey&, S&) for every entry of the group; every shard is made writable first.
  template <typename Fn>
  void forEachMutable(int32_t key_group, Fn&& fn) {
    if (groups_[index(key_group)] == nullptr) return;
    const uint64_t live = versions_->highestLive();
    Group& g = writableGroup(key_group, live);
    for (auto& shard : g.shards) {
      if (!shard) continue;
      if (shard->version <= live) shard = copyShard(*shard);
      for (auto& [k, v] : shard->map) fn(k, v);
    }
  }
  /// The synchronous part of a snapshot: O(key groups). See the class comment.
  std::unique_ptr<Frozen> freeze() const {
    std::vector<std::shared_ptr<const Group>> groups(groups_.begin(), groups_.end());
    const uint64_t v = version_++;
    versions_->add(v);
    return std::make_unique<Frozen>(range_, std::move(groups), versions_, v);
  }
  const KeyGroupRange& range() const { return range_; }

 private:
  static constexpr size_t kMaxShards = size_t{1} << 16;
  static size_t shardIndex(size_t hash, size_t num_shards) { return (hash >> 24) & (num_shards - 1); }

  size_t index(int32_t key_group) const {
    SLUICE_CHECK(range_.contains(key_group), "key group {} outside the backend's range [{}, {}]", key_group,
                 range_.start, range_.end);
    return static_cast<size_t>(key_group - range_.start);
  }
  std::shared_ptr<Shard> copyShard(const Shard& from) const {
    auto s = std::make_shared<Shard>();
    s->version = version_;
    s->map.reserve(from.map.size());
    for (const auto& [k, v] : from.map) s->map.emplace(k, Copy{}(v));
    return s;
  }
  Group& writableGroup(int32_t key_group, uint64_t live) {
    auto& g = groups_[index(key_group)];
    if (!g) {
      g = std::make_shared<Group>();
      g->version = version_;
      g->shards.resize(1);
    } else if (g->version <= live) {
      g = std::make_shared<Group>(*g);
      g->version = version_;
    }
    return *g;
  }
  Shard& writableShard(int32_t key_group, size_t hash, uint64_t live) {
    Group& g = writableGroup(key_group, live);
    auto& s = g.shards[shardIndex(hash, g.shards.size())];
    if (!s) {
      s = std::make_shared<Shard>();
      s->version = version_;
    } else if (s->version <= live) {
      s = copyShard(*s);
    }
    return *s;
  }
  /// Doubles the group's shards: entries of a private shard move, those of a shared one are copied.
  void split(int32_t key_group, uint64_t live) {
    Group& g = writableGroup(key_group, live);
    const size_t n = g.shards.size();
    std::vector<std::shared_ptr<Shard>> shards(2 * n);
    for (size_t i = 0; i < n; ++i) {
      std::shared_ptr<Shard>& old = g.shards[i];
      if (!old) continue;
      for (size_t half : {i, i + n}) {
        shards[half] = std::make_shared<Shard>();
        shards[half]->version = version_;
        shards[half]->map.reserve(old->map.size() / 2 + 1);
      }
      const internal::StateKeyHash hasher;
      if (old->version <= live) {
        for (const auto& [k, v] : old->map) shards[shardIndex(hasher(k), 2 * n)]->map.emplace(k, Copy{}(v));
      } else {
        while (!old->map.empty()) {
          auto node = old->map.extract(old->map.begin());
          shards[shardIndex(hasher(node.key()), 2 * n)]->map.insert(std::move(node));
        }
      }
    }
    g.shards = std::move(shards);
  }

  KeyGroupRange range_;
  std::vector<std::shared_ptr<Group>> groups_;
  std::shared_ptr<internal::SnapshotVersions> versions_;
  /// Version given to nodes created now; freeze() hands out the current one and bumps it.
  mutable uint64_t version_ = 1;
  size_t size_ = 0;
};

/// What every keyed state shares: namespace, clear, entry count, iteration, snapshot of S with SSer.
/// The entries live in a HeapStateTable, or, once attachRocksDB() was called (by a RocksDB backend when
/// it registers the state), in a RocksDB column family behind a write-back cache of the current
/// address (rocksdb_state_table.h).
template <typename S, typename SSer>
class AbstractKeyedState : public SnapshotableKeyedState {
  using RocksTable = typename internal::RocksDBTableFor<S, SSer>::type;

 public:
  AbstractKeyedState(std::string name, StateKind kind, KeyGroupRange range, const CurrentKey* current)
      : SnapshotableKeyedState(std::move(name), kind), table_(range), current_(current) {}

  /// Moves this state's storage to `cf` (empty; called once, before any use, by the backend).
  void attachRocksDB(RocksDBColumnFamily& cf, int32_t max_parallelism) {
    SLUICE_CHECK(table_.size() == 0 && !rocks_, "state '{}' attached to RocksDB after use", name());
    rocks_ = std::make_unique<RocksTable>(cf, table_.range(), max_parallelism);
  }
  bool usesRocksDB() const { return rocks_ != nullptr; }

  /// Scopes the following calls to namespace `ns` (bytes; empty = VoidNamespace). Stays until changed.
  void setCurrentNamespace(std::string_view ns) { ns_.assign(ns); }
  const std::string& currentNamespace() const { return ns_; }
  /// Removes the current key's entry in the current namespace.
  void clear() { eraseCurrent(); }
  /// Number of (key, namespace) entries over all keys and namespaces. RocksDB: a scan of the column
  /// family (O(entries)), for tests and diagnostics.
  size_t size() const {
    if (!rocks_) return table_.size();
    rocks_->flush();
    return rocks_->size();
  }
  /// Calls fn(key_bytes, key_group, namespace_bytes, S& value) for every entry, key group by key group
  /// (RocksDB: in (key, namespace) byte order within a group). fn may change the value in place and may
  /// set the backend's current key, but must not add or remove entries of this state (nor, on RocksDB,
  /// read this state by key: changed values are written back as the iteration passes them).
  template <typename Fn>
  void forEachKey(Fn&& fn) {
    if (rocks_) {
      rocks_->forEach(std::forward<Fn>(fn));
      return;
    }
    const KeyGroupRange& r = table_.range();
    for (int32_t g = r.start; g <= r.end; ++g) {
      table_.forEachMutable(g, [&](const internal::StateKey& k, S& v) {
        fn(std::string_view(k.key), g, std::string_view(k.ns), v);
      });
    }
  }

  void flushCache() override {
    if (rocks_) rocks_->flush();
  }
  bool storedInRocksDB() const override { return rocks_ != nullptr; }
  size_t groupSize(int32_t key_group) const override {
    if (rocks_) return rocks_->groupSize(key_group);
    return table_.groupSize(key_group);
  }
  size_t writeGroupCounted(int32_t key_group, DataOutputView& out) const override {
    if (rocks_) return rocks_->writeGroup(key_group, out);
    return SnapshotableKeyedState::writeGroupCounted(key_group, out);
  }
  void writeGroup(int32_t key_group, DataOutputView& out) const override {
    if (rocks_) {
      rocks_->writeGroup(key_group, out);
      return;
    }
    writeSorted(table_.groupSize(key_group), [&](auto&& fn) { table_.forEach(key_group, fn); }, out);
  }
  /// Heap: copy-on-write, O(key groups) (HeapStateTable::freeze); RocksDB: serialized now.
  std::unique_ptr<FrozenKeyedState> freeze(const KeyGroupRange& range) const override {
    if (rocks_) return SnapshotableKeyedState::freeze(range);
    return std::make_unique<Frozen>(table_.freeze());
  }
  void restoreEntry(int32_t key_group, std::string_view key, std::string_view ns, std::string_view value) override {
    if (rocks_) {
      rocks_->restoreEntry(key_group, key, ns, value);
      return;
    }
    DataInputView in(value);
    S v = SSer::deserialize(in);
    if (!in.atEnd()) {
      throw InputError(fmt::format("{} trailing bytes after the value", value.size() - in.position()));
    }
    table_.findOrInsert(key_group, key, ns, [] { return S(); }) = std::move(v);
  }

 protected:
  int32_t keyGroup() const {
    SLUICE_CHECK(current_->key_group >= 0, "state '{}' used before the backend's current key was set", name());
    return current_->key_group;
  }
  S* currentEntry() {
    if (rocks_) return rocks_->find(keyGroup(), current_->bytes, ns_);
    return table_.find(keyGroup(), current_->bytes, ns_);
  }
  template <typename Make>
  S& currentEntryOrInsert(Make&& make) {
    if (rocks_) return rocks_->findOrInsert(keyGroup(), current_->bytes, ns_, std::forward<Make>(make));
    return table_.findOrInsert(keyGroup(), current_->bytes, ns_, std::forward<Make>(make));
  }
  void eraseCurrent() {
    if (rocks_) {
      rocks_->erase(keyGroup(), current_->bytes, ns_);
      return;
    }
    table_.erase(keyGroup(), current_->bytes, ns_);
  }

  using Table = HeapStateTable<S, internal::StateCopy<S, SSer>>;

  /// Writes the `n` entries `for_each(fn)` visits, sorted by (key, namespace) bytes, so equal state gives
  /// equal bytes whatever the insertion history.
  template <typename ForEach>
  static void writeSorted(size_t n, ForEach&& for_each, DataOutputView& out) {
    std::vector<std::pair<const internal::StateKey*, const S*>> entries;
    entries.reserve(n);
    for_each([&](const internal::StateKey& k, const S& v) { entries.emplace_back(&k, &v); });
    std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
      return a.first->key != b.first->key ? a.first->key < b.first->key : a.first->ns < b.first->ns;
    });
    std::string scratch;
    for (const auto& [k, v] : entries) {
      internal::writeBytesField(out, k->key);
      internal::writeBytesField(out, k->ns);
      scratch.clear();
      DataOutputView value_out(scratch);
      SSer::serialize(*v, value_out);
      internal::writeBytesField(out, scratch);
    }
  }

  /// A heap table's frozen view, serialized with SSer.
  class Frozen final : public FrozenKeyedState {
   public:
    explicit Frozen(std::unique_ptr<typename Table::Frozen> table) : table_(std::move(table)) {}
    size_t groupSize(int32_t key_group) const override { return table_->groupSize(key_group); }
    void writeGroup(int32_t key_group, DataOutputView& out) const override {
      writeSorted(table_->groupSize(key_group), [&](auto&& fn) { table_->forEach(key_group, fn); }, out);
    }

   private:
    std::unique_ptr<typename Table::Frozen> table_;
  };

  Table table_;
  std::unique_ptr<RocksTable> rocks_;  ///< null: heap
  const CurrentKey* current_;
  std::string ns_;
};

/// The former name, kept for code written against the heap-only layer.
template <typename S, typename SSer>
using AbstractHeapState = AbstractKeyedState<S, SSer>;

/// One value per (key, namespace) (Flink's ValueState).
template <typename V, typename Ser = TypeSerializer<V>>
class ValueState : public AbstractKeyedState<V, Ser> {
 public:
  ValueState(std::string name, KeyGroupRange range, const CurrentKey* current)
      : AbstractKeyedState<V, Ser>(std::move(name), StateKind::kValue, range, current) {}
  /// The current value, nullptr when absent (Flink's null). Mutable: change it in place, no copy.
  V* value() { return this->currentEntry(); }
  /// The current value, inserted as `init` when absent; change it in place.
  V& valueOrInsert(V init = V()) {
    return this->currentEntryOrInsert([&] { return std::move(init); });
  }
  /// Sets the current value.
  void update(V v) {
    this->currentEntryOrInsert([] { return V(); }) = std::move(v);
  }
};

/// A list per (key, namespace) (Flink's ListState). An empty list is no entry.
template <typename V, typename Ser = TypeSerializer<V>>
class ListState : public AbstractKeyedState<std::vector<V>, internal::ListSerializer<V, Ser>> {
  using Base = AbstractKeyedState<std::vector<V>, internal::ListSerializer<V, Ser>>;

 public:
  ListState(std::string name, KeyGroupRange range, const CurrentKey* current)
      : Base(std::move(name), StateKind::kList, range, current) {}
  /// The current list, nullptr when empty. Mutable in place; do not leave it empty (use clear()).
  std::vector<V>* get() { return this->currentEntry(); }
  void add(V v) {
    this->currentEntryOrInsert([] { return std::vector<V>(); }).push_back(std::move(v));
  }
  void addAll(std::vector<V> values) {
    if (values.empty()) return;
    auto& list = this->currentEntryOrInsert([] { return std::vector<V>(); });
    for (auto& v : values) list.push_back(std::move(v));
  }
  /// Replaces the current list (an empty one clears it).
  void update(std::vector<V> values) {
    if (values.empty()) {
      this->eraseCurrent();
      return;
    }
    this->currentEntryOrInsert([] { return std::vector<V>(); }) = std::move(values);
  }
};

/// A map per (key, namespace) (Flink's MapState). An empty map is no entry.
template <typename UK, typename UV, typename KeySer = TypeSerializer<UK>, typename ValueSer = TypeSerializer<UV>>
class MapState
    : public AbstractKeyedState<internal::UserMap<UK, UV>, internal::UserMapSerializer<UK, UV, KeySer, ValueSer>> {
  using Base = AbstractKeyedState<internal::UserMap<UK, UV>, internal::UserMapSerializer<UK, UV, KeySer, ValueSer>>;

 public:
  using Entries = internal::UserMap<UK, UV>;
  MapState(std::string name, KeyGroupRange range, const CurrentKey* current)
      : Base(std::move(name), StateKind::kMap, range, current) {}
  /// The value of `key` in the current map, nullptr when absent; mutable in place.
  UV* get(const UK& key) {
    Entries* m = this->currentEntry();
    if (m == nullptr) return nullptr;
    auto it = m->find(key);
    return it == m->end() ? nullptr : &it->second;
  }
  bool contains(const UK& key) { return get(key) != nullptr; }
  void put(UK key, UV value) {
    this->currentEntryOrInsert([] { return Entries(); }).insert_or_assign(std::move(key), std::move(value));
  }
  void remove(const UK& key) {
    Entries* m = this->currentEntry();
    if (m == nullptr) return;
    m->erase(key);
    if (m->empty()) this->eraseCurrent();
  }
  bool isEmpty() { return this->currentEntry() == nullptr; }
  /// The whole current map, nullptr when empty; values mutable in place (do not leave it empty).
  Entries* entries() { return this->currentEntry(); }
};

/// One value per (key, namespace) folded with the descriptor's reduce function (Flink's ReducingState).
template <typename V, typename Ser = TypeSerializer<V>>
class ReducingState : public AbstractKeyedState<V, Ser> {
 public:
  ReducingState(std::string name, KeyGroupRange range, const CurrentKey* current,
                std::function<V(const V&, const V&)> reduce)
      : AbstractKeyedState<V, Ser>(std::move(name), StateKind::kReducing, range, current), reduce_(std::move(reduce)) {
    SLUICE_USER_CHECK(static_cast<bool>(reduce_), "reducing state '{}' has no reduce function", this->name());
  }
  /// The reduced value, nullptr when nothing was added.
  V* get() { return this->currentEntry(); }
  /// Folds `v` in: reduce(current, v), or v when there is none.
  void add(V v) {
    if (V* cur = this->currentEntry()) {
      *cur = reduce_(*cur, v);
    } else {
      this->currentEntryOrInsert([&] { return std::move(v); });
    }
  }

 private:
  std::function<V(const V&, const V&)> reduce_;
};

/// An accumulator per (key, namespace) fed with IN and read as OUT (Flink's AggregatingState).
template <typename IN, typename ACC, typename OUT, typename AccSer = TypeSerializer<ACC>>
class AggregatingState : public AbstractKeyedState<ACC, AccSer> {
 public:
  AggregatingState(std::string name, KeyGroupRange range, const CurrentKey* current,
                   AggregatingStateDescriptor<IN, ACC, OUT, AccSer> desc)
      : AbstractKeyedState<ACC, AccSer>(std::move(name), StateKind::kAggregating, range, current),
        desc_(std::move(desc)) {
    SLUICE_USER_CHECK(desc_.create_accumulator && desc_.add && desc_.get_result,
                      "aggregating state '{}' lacks create_accumulator, add or get_result", this->name());
  }
  /// The aggregate of what was added, nullopt when nothing was.
  std::optional<OUT> get() {
    ACC* acc = this->currentEntry();
    if (acc == nullptr) return std::nullopt;
    return desc_.get_result(*acc);
  }
  /// Folds `in` into the current accumulator (created first when absent), in place.
  void add(const IN& in) { desc_.add(this->currentEntryOrInsert([&] { return desc_.create_accumulator(); }), in); }
  /// The current accumulator, nullptr when absent.
  ACC* accumulator() { return this->currentEntry(); }

 private:
  AggregatingStateDescriptor<IN, ACC, OUT, AccSer> desc_;
};

}  // namespace sluice::runtime::state
