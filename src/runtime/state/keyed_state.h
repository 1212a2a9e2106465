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
#include <cstdlib>
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
#include "runtime/state/heap_state_table.h"
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
  /// FrozenKeyedState::writeGroup; this default serializes every group now (timers). `sorted` false: a
  /// heap table writes a group's entries in table order, not sorted (checkpoints: restore reads any
  /// order; savepoints and final states stay canonical).
  virtual std::unique_ptr<FrozenKeyedState> freeze(const KeyGroupRange& range, bool sorted = true) const;

 private:
  std::string name_;
  StateKind kind_;
};

namespace internal {

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
  void setCurrentNamespace(std::string_view ns) {
    ns_.assign(ns);
    hash_valid_ = false;
  }
  std::string_view currentNamespace() const { return ns_.view(); }
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
        fn(k.key(), g, k.ns(), v);
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
  std::unique_ptr<FrozenKeyedState> freeze(const KeyGroupRange& range, bool sorted) const override {
    if (rocks_) return SnapshotableKeyedState::freeze(range, sorted);
    return std::make_unique<Frozen>(table_.freeze(), sorted);
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
    if (current_->key_group < 0) [[unlikely]] noCurrentKey();
    return current_->key_group;
  }
  [[noreturn, gnu::noinline, gnu::cold]] void noCurrentKey() const {
    SLUICE_CHECK(false, "state '{}' used before the backend's current key was set", name());
    std::abort();
  }
  /// The heap slot hash of the current (key, namespace), remembered until the namespace changes or a key
  /// of another hash becomes current (the slot hash depends on the key only through its hash).
  uint64_t currentHash() const {
    if (!hash_valid_ || hash_key_ != current_->hash) {
      hash_ = internal::stateKeyHashFrom(current_->hash, ns_.view());
      hash_key_ = current_->hash;
      hash_valid_ = true;
    }
    return hash_;
  }
  S* currentEntry() {
    if (rocks_) return rocks_->find(keyGroup(), current_->bytes(), ns_.view());
    return table_.find(keyGroup(), current_->bytes(), ns_.view(), currentHash());
  }
  template <typename Make>
  S& currentEntryOrInsert(Make&& make, bool& inserted) {
    if (rocks_) {
      return rocks_->findOrInsert(keyGroup(), current_->bytes(), ns_.view(), std::forward<Make>(make), inserted);
    }
    return table_.findOrInsertHashed(keyGroup(), current_->bytes(), ns_.view(), currentHash(),
                                     std::forward<Make>(make), inserted);
  }
  template <typename Make>
  S& currentEntryOrInsert(Make&& make) {
    if (rocks_) return rocks_->findOrInsert(keyGroup(), current_->bytes(), ns_.view(), std::forward<Make>(make));
    bool inserted = false;
    return table_.findOrInsertHashed(keyGroup(), current_->bytes(), ns_.view(), currentHash(),
                                     std::forward<Make>(make), inserted);
  }
  void eraseCurrent() {
    if (rocks_) {
      rocks_->erase(keyGroup(), current_->bytes(), ns_.view());
      return;
    }
    table_.erase(keyGroup(), current_->bytes(), ns_.view(), currentHash());
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
      return a.first->key() != b.first->key() ? a.first->key() < b.first->key() : a.first->ns() < b.first->ns();
    });
    std::string scratch;
    for (const auto& [k, v] : entries) writeEntry(*k, *v, scratch, out);
  }
  static void writeEntry(const internal::StateKey& k, const S& v, std::string& scratch, DataOutputView& out) {
    internal::writeBytesField(out, k.key());
    internal::writeBytesField(out, k.ns());
    scratch.clear();
    DataOutputView value_out(scratch);
    SSer::serialize(v, value_out);
    internal::writeBytesField(out, scratch);
  }

  /// A heap table's frozen view, serialized with SSer.
  class Frozen final : public FrozenKeyedState {
   public:
    Frozen(std::unique_ptr<typename Table::Frozen> table, bool sorted) : table_(std::move(table)), sorted_(sorted) {}
    size_t groupSize(int32_t key_group) const override { return table_->groupSize(key_group); }
    void writeGroup(int32_t key_group, DataOutputView& out) const override {
      if (sorted_) {
        writeSorted(table_->groupSize(key_group), [&](auto&& fn) { table_->forEach(key_group, fn); }, out);
        return;
      }
      table_->forEach(key_group, [&](const internal::StateKey& k, const S& v) { writeEntry(k, v, scratch_, out); });
    }

   private:
    std::unique_ptr<typename Table::Frozen> table_;
    bool sorted_;
    mutable std::string scratch_;  ///< the write-out thread's value buffer
  };

  Table table_;
  std::unique_ptr<RocksTable> rocks_;  ///< null: heap
  const CurrentKey* current_;
  SmallBytes ns_;
  mutable uint64_t hash_ = 0;      ///< currentHash() of (a key hashing to hash_key_, ns_)
  mutable uint64_t hash_key_ = 0;
  mutable bool hash_valid_ = false;
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
  /// The current value, inserted as `make()` when absent (one lookup); `inserted` says which.
  template <typename Make>
  V& valueOrInsertWith(Make&& make, bool& inserted) {
    return this->currentEntryOrInsert(std::forward<Make>(make), inserted);
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
