#pragma once
/// Keyed state handles of the heap backend (Flink's ValueState, ListState, MapState, ReducingState,
/// AggregatingState over HashMapStateBackend's state tables, flink-checkpointing.md §3.5). A state is
/// scoped to the backend's current key and to the state's current namespace (empty = Flink's
/// VoidNamespace). Values are kept as C++ objects, one hash map per key group: reads and writes never
/// serialize; the descriptor's serializer runs only in snapshots and restores.
///
/// Pointers returned by value()/get() stay valid until the next write to the same state (Flink's rule:
/// no references to state objects across calls). Threading: the task thread only.

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
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
#include "runtime/state/state_descriptor.h"

namespace sluice::runtime::state {

/// The key the backend's states are scoped to: key bytes and their key group (-1: none set yet).
struct CurrentKey {
  std::string bytes;
  int32_t key_group = -1;
};

namespace internal {

/// (key, namespace) of a heap entry, owned; looked up through StateKeyView without allocating.
struct StateKey {
  std::string key;
  std::string ns;
};
struct StateKeyView {
  std::string_view key;
  std::string_view ns;
};
struct StateKeyHash {
  using is_transparent = void;
  size_t operator()(const StateKeyView& k) const { return hashCombine(hashBytes(k.key), hashBytes(k.ns)); }
  size_t operator()(const StateKey& k) const { return (*this)(StateKeyView{k.key, k.ns}); }
};
struct StateKeyEq {
  using is_transparent = void;
  static StateKeyView view(const StateKey& k) { return StateKeyView{k.key, k.ns}; }
  static StateKeyView view(const StateKeyView& k) { return k; }
  template <typename A, typename B>
  bool operator()(const A& a, const B& b) const {
    return view(a).key == view(b).key && view(a).ns == view(b).ns;
  }
};

/// Serializes a std::vector<V> with an element serializer: varint count, then the elements.
template <typename V, typename Ser>
struct ListSerializer {
  static void serialize(const std::vector<V>& v, DataOutputView& out) {
    out.writeVarUint(v.size());
    for (const auto& e : v) Ser::serialize(e, out);
  }
  static std::vector<V> deserialize(DataInputView& in) {
    const size_t n = in.readLength(1);
    std::vector<V> v;
    v.reserve(n);
    for (size_t i = 0; i < n; ++i) v.push_back(Ser::deserialize(in));
    return v;
  }
};

template <typename T, typename = void>
struct IsStdHashable : std::false_type {};
template <typename T>
struct IsStdHashable<T, std::void_t<decltype(std::hash<T>{}(std::declval<const T&>()))>> : std::true_type {};

/// The user map of a MapState: a hash map when std::hash<UK> exists, else an ordered map (UK needs <).
template <typename UK, typename UV>
using UserMap = std::conditional_t<IsStdHashable<UK>::value, std::unordered_map<UK, UV>, std::map<UK, UV>>;

/// Serializes a user map: varint count, then key and value of each entry.
template <typename UK, typename UV, typename KeySer, typename ValueSer>
struct UserMapSerializer {
  static void serialize(const UserMap<UK, UV>& m, DataOutputView& out) {
    out.writeVarUint(m.size());
    for (const auto& [k, v] : m) {
      KeySer::serialize(k, out);
      ValueSer::serialize(v, out);
    }
  }
  static UserMap<UK, UV> deserialize(DataInputView& in) {
    const size_t n = in.readLength(1);
    UserMap<UK, UV> m;
    for (size_t i = 0; i < n; ++i) {
      UK k = KeySer::deserialize(in);
      m.insert_or_assign(std::move(k), ValueSer::deserialize(in));
    }
    return m;
  }
};

/// Writes a length-prefixed byte string (the snapshot format's strings).
void writeBytesField(DataOutputView& out, std::string_view bytes);

}  // namespace internal

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
  /// Adds one restored entry. Throws InputError (without the place; the caller adds it) when `value`
  /// does not decode exactly.
  virtual void restoreEntry(int32_t key_group, std::string_view key, std::string_view ns, std::string_view value) = 0;

 private:
  std::string name_;
  StateKind kind_;
};

/// The heap table of one state: (key, namespace) -> S, one hash map per key group of the range.
template <typename S>
class HeapStateTable {
 public:
  using Map = std::unordered_map<internal::StateKey, S, internal::StateKeyHash, internal::StateKeyEq>;

  explicit HeapStateTable(KeyGroupRange range) : range_(range), groups_(static_cast<size_t>(range.size())) {}

  S* find(int32_t key_group, std::string_view key, std::string_view ns) {
    Map* m = group(key_group);
    if (m == nullptr) return nullptr;
    auto it = m->find(internal::StateKeyView{key, ns});
    return it == m->end() ? nullptr : &it->second;
  }
  /// The entry, inserted as `make()` when absent.
  template <typename Make>
  S& findOrInsert(int32_t key_group, std::string_view key, std::string_view ns, Make&& make) {
    auto& slot = groups_[index(key_group)];
    if (!slot) slot = std::make_unique<Map>();
    auto it = slot->find(internal::StateKeyView{key, ns});
    if (it != slot->end()) return it->second;
    ++size_;
    return slot->emplace(internal::StateKey{std::string(key), std::string(ns)}, make()).first->second;
  }
  void erase(int32_t key_group, std::string_view key, std::string_view ns) {
    Map* m = group(key_group);
    if (m == nullptr) return;
    auto it = m->find(internal::StateKeyView{key, ns});
    if (it == m->end()) return;
    m->erase(it);
    --size_;
  }
  size_t size() const { return size_; }
  /// The map of a key group, nullptr when it never held an entry.
  Map* group(int32_t key_group) const { return groups_[index(key_group)].get(); }
  const KeyGroupRange& range() const { return range_; }

 private:
  size_t index(int32_t key_group) const {
    SLUICE_CHECK(range_.contains(key_group), "key group {} outside the backend's range [{}, {}]", key_group,
                 range_.start, range_.end);
    return static_cast<size_t>(key_group - range_.start);
  }

  KeyGroupRange range_;
  std::vector<std::unique_ptr<Map>> groups_;
  size_t size_ = 0;
};

/// What every heap keyed state shares: namespace, clear, entry count, iteration, snapshot of S with SSer.
template <typename S, typename SSer>
class AbstractHeapState : public SnapshotableKeyedState {
 public:
  AbstractHeapState(std::string name, StateKind kind, KeyGroupRange range, const CurrentKey* current)
      : SnapshotableKeyedState(std::move(name), kind), table_(range), current_(current) {}

  /// Scopes the following calls to namespace `ns` (bytes; empty = VoidNamespace). Stays until changed.
  void setCurrentNamespace(std::string_view ns) { ns_.assign(ns); }
  const std::string& currentNamespace() const { return ns_; }
  /// Removes the current key's entry in the current namespace.
  void clear() { table_.erase(keyGroup(), current_->bytes, ns_); }
  /// Number of (key, namespace) entries over all keys and namespaces.
  size_t size() const { return table_.size(); }
  /// Calls fn(key_bytes, key_group, namespace_bytes, S& value) for every entry, key group by key group.
  /// fn may change the value in place and may set the backend's current key, but must not add or remove
  /// entries of this state.
  template <typename Fn>
  void forEachKey(Fn&& fn) {
    const KeyGroupRange& r = table_.range();
    for (int32_t g = r.start; g <= r.end; ++g) {
      if (auto* m = table_.group(g)) {
        for (auto& [k, v] : *m) fn(std::string_view(k.key), g, std::string_view(k.ns), v);
      }
    }
  }

  size_t groupSize(int32_t key_group) const override {
    auto* m = table_.group(key_group);
    return m == nullptr ? 0 : m->size();
  }
  void writeGroup(int32_t key_group, DataOutputView& out) const override {
    auto* m = table_.group(key_group);
    if (m == nullptr) return;
    // Sorted by (key, namespace) bytes, so equal state gives equal bytes whatever the insertion history.
    std::vector<const typename HeapStateTable<S>::Map::value_type*> entries;
    entries.reserve(m->size());
    for (const auto& e : *m) entries.push_back(&e);
    std::sort(entries.begin(), entries.end(), [](const auto* a, const auto* b) {
      return a->first.key != b->first.key ? a->first.key < b->first.key : a->first.ns < b->first.ns;
    });
    std::string scratch;
    for (const auto* e : entries) {
      internal::writeBytesField(out, e->first.key);
      internal::writeBytesField(out, e->first.ns);
      scratch.clear();
      DataOutputView value_out(scratch);
      SSer::serialize(e->second, value_out);
      internal::writeBytesField(out, scratch);
    }
  }
  void restoreEntry(int32_t key_group, std::string_view key, std::string_view ns, std::string_view value) override {
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
  S* currentEntry() { return table_.find(keyGroup(), current_->bytes, ns_); }
  template <typename Make>
  S& currentEntryOrInsert(Make&& make) {
    return table_.findOrInsert(keyGroup(), current_->bytes, ns_, std::forward<Make>(make));
  }
  void eraseCurrent() { table_.erase(keyGroup(), current_->bytes, ns_); }

  HeapStateTable<S> table_;
  const CurrentKey* current_;
  std::string ns_;
};

/// One value per (key, namespace) (Flink's ValueState).
template <typename V, typename Ser = TypeSerializer<V>>
class ValueState : public AbstractHeapState<V, Ser> {
 public:
  ValueState(std::string name, KeyGroupRange range, const CurrentKey* current)
      : AbstractHeapState<V, Ser>(std::move(name), StateKind::kValue, range, current) {}
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
class ListState : public AbstractHeapState<std::vector<V>, internal::ListSerializer<V, Ser>> {
  using Base = AbstractHeapState<std::vector<V>, internal::ListSerializer<V, Ser>>;

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
    : public AbstractHeapState<internal::UserMap<UK, UV>, internal::UserMapSerializer<UK, UV, KeySer, ValueSer>> {
  using Base = AbstractHeapState<internal::UserMap<UK, UV>, internal::UserMapSerializer<UK, UV, KeySer, ValueSer>>;

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
class ReducingState : public AbstractHeapState<V, Ser> {
 public:
  ReducingState(std::string name, KeyGroupRange range, const CurrentKey* current,
                std::function<V(const V&, const V&)> reduce)
      : AbstractHeapState<V, Ser>(std::move(name), StateKind::kReducing, range, current), reduce_(std::move(reduce)) {
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
class AggregatingState : public AbstractHeapState<ACC, AccSer> {
 public:
  AggregatingState(std::string name, KeyGroupRange range, const CurrentKey* current,
                   AggregatingStateDescriptor<IN, ACC, OUT, AccSer> desc)
      : AbstractHeapState<ACC, AccSer>(std::move(name), StateKind::kAggregating, range, current),
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
