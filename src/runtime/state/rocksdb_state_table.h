#pragma once
/// The RocksDB tables behind the keyed state handles of keyed_state.h when the backend is RocksDB
/// (Flink's RocksDBValueState, RocksDBListState, RocksDBMapState, ..., flink-checkpointing.md §3.6).
/// Internal to runtime/state: operators use the handles, never these tables.
///
/// Key layout, one column family per state:
///   key group (1 byte big-endian when maxParallelism <= 128, else 2) | esc(key) | esc(namespace)
///   [| user key bytes, MapState only]
/// where esc() is an order-preserving escape (0x00 -> 0x00 0xFF, then the terminator 0x00 0x01).
/// Flink appends length suffixes instead; the escape keeps keys unambiguous *and* makes bytewise
/// RocksDB order equal the (key, namespace) order of the canonical snapshot, so a snapshot streams each
/// key group's range without sorting. Every key group is one contiguous range. Values are in the
/// state's serializer form (a whole list for ListState, one user value per MapState entry), so the
/// canonical snapshot copies bytes.
///
/// Write-back cache: Flink's RocksDB state needs update() after a change; the heap contract here is that
/// value()/get() return a pointer changed in place. So each table caches the deserialized value of one
/// (key group, key, namespace): the first access loads it, later accesses to the same address use it,
/// and it is written back (Put when its serialized bytes changed, Delete when it was cleared) when an
/// access names another address, and before size(), forEach and any snapshot. A pointer into the cache
/// is valid until the state is accessed under another key or namespace. ListState appends are
/// read-modify-write on the cached list (no merge operator: the cache already holds the list, and one
/// Put per key change replaces many merge operands). MapState loads the whole user map of the current
/// address into the cache (a prefix scan) and writes back only the user entries whose bytes changed.
///
/// Errors: bytes in RocksDB that do not decode are an InternalError (the backend wrote them); restored
/// entries that do not decode are an InputError without the place (the backend adds it).
/// Threading: the task thread only.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "common/error.h"
#include "runtime/state/key_group.h"
#include "runtime/state/keyed_state_internal.h"
#include "runtime/state/rocksdb_store.h"

namespace sluice::runtime::state::internal {

/// Encodes and decodes the composite keys of the layout above for one max parallelism.
class RocksDBKeyLayout {
 public:
  explicit RocksDBKeyLayout(int32_t max_parallelism) : prefix_bytes_(max_parallelism <= 128 ? 1 : 2) {}
  /// 1 or 2.
  int prefixBytes() const { return prefix_bytes_; }
  /// The key-group prefix alone: the first key of the group's range (and, for key_group + 1, its end).
  std::string groupPrefix(int32_t key_group) const {
    std::string out;
    if (prefix_bytes_ == 2) out.push_back(static_cast<char>((key_group >> 8) & 0xff));
    out.push_back(static_cast<char>(key_group & 0xff));
    return out;
  }
  /// key group | esc(key) | esc(ns).
  std::string compositeKey(int32_t key_group, std::string_view key, std::string_view ns) const {
    std::string out = groupPrefix(key_group);
    out.reserve(out.size() + key.size() + ns.size() + 4);
    appendEscaped(out, key);
    appendEscaped(out, ns);
    return out;
  }
  /// The first key after every key starting with `composite` (which ends with a terminator 0x00 0x01).
  static std::string successor(std::string composite) {
    composite.back() = '\x02';
    return composite;
  }
  /// Decodes (key group, key, namespace) of `composite`; returns the length of that part (where a
  /// MapState user key starts). InternalError when malformed.
  size_t parse(std::string_view composite, int32_t* key_group, std::string* key, std::string* ns) const {
    SLUICE_CHECK(composite.size() >= static_cast<size_t>(prefix_bytes_), "RocksDB state key too short");
    const auto* b = reinterpret_cast<const uint8_t*>(composite.data());
    *key_group = prefix_bytes_ == 2 ? (b[0] << 8) | b[1] : b[0];
    size_t pos = static_cast<size_t>(prefix_bytes_);
    readEscaped(composite, &pos, key);
    readEscaped(composite, &pos, ns);
    return pos;
  }

 private:
  static void appendEscaped(std::string& out, std::string_view bytes) {
    for (char c : bytes) {
      out.push_back(c);
      if (c == '\0') out.push_back('\xff');
    }
    out.push_back('\0');
    out.push_back('\x01');
  }
  static void readEscaped(std::string_view in, size_t* pos, std::string* out) {
    out->clear();
    for (;;) {
      SLUICE_CHECK(*pos < in.size(), "RocksDB state key truncated");
      const char c = in[(*pos)++];
      if (c != '\0') {
        out->push_back(c);
        continue;
      }
      SLUICE_CHECK(*pos < in.size(), "RocksDB state key truncated after an escape");
      const char e = in[(*pos)++];
      if (e == '\x01') return;
      SLUICE_CHECK(e == '\xff', "RocksDB state key has a bad escape byte");
      out->push_back('\0');
    }
  }

  int prefix_bytes_;
};

/// Writes the canonical entries of key group `key_group` of `cf` without knowing the state's serializers
/// (the bytes already are their forms) and returns their number: (key, namespace, value) per RocksDB
/// entry, or, for MapState (`is_map`), one entry per (key, namespace) whose value is varint count, then
/// each user key and user value, in bytewise user-key order (= UserMapSerializer's). Used by the typed
/// tables and for restored column families no operator registered yet.
inline size_t writeRawGroup(const RocksDBColumnFamily& cf, const RocksDBKeyLayout& layout, bool is_map,
                            int32_t key_group, DataOutputView& out) {
  int32_t g;
  std::string key, ns, run, value;
  size_t n = 0;
  size_t run_entries = 0;
  std::string run_bytes;
  const auto endRun = [&] {
    if (run.empty()) return;
    value.clear();
    DataOutputView v(value);
    v.writeVarUint(run_entries);
    v.writeBytes(run_bytes.data(), run_bytes.size());
    writeBytesField(out, key);
    writeBytesField(out, ns);
    writeBytesField(out, value);
    ++n;
  };
  auto it = cf.newIterator(layout.groupPrefix(key_group), layout.groupPrefix(key_group + 1));
  for (; it->valid(); it->next()) {
    const std::string_view k = it->key();
    if (!is_map) {
      layout.parse(k, &g, &key, &ns);
      writeBytesField(out, key);
      writeBytesField(out, ns);
      writeBytesField(out, it->value());
      ++n;
      continue;
    }
    if (run.empty() || k.substr(0, run.size()) != run) {
      endRun();
      const size_t len = layout.parse(k, &g, &key, &ns);
      run.assign(k.substr(0, len));
      run_entries = 0;
      run_bytes.clear();
    }
    run_bytes.append(k.substr(run.size()));
    run_bytes.append(it->value());
    ++run_entries;
  }
  endRun();
  return n;
}

/// The cache of one address and the addressing shared by both tables.
template <typename S>
class RocksDBStateTableBase {
 public:
  RocksDBStateTableBase(RocksDBColumnFamily& cf, KeyGroupRange range, int32_t max_parallelism)
      : cf_(&cf), range_(range), layout_(max_parallelism) {}
  virtual ~RocksDBStateTableBase() = default;

  S* find(int32_t key_group, std::string_view key, std::string_view ns) {
    select(key_group, key, ns);
    return value_ ? &*value_ : nullptr;
  }
  template <typename Make>
  S& findOrInsert(int32_t key_group, std::string_view key, std::string_view ns, Make&& make) {
    bool inserted = false;
    return findOrInsert(key_group, key, ns, std::forward<Make>(make), inserted);
  }
  /// The same; `inserted` says whether `make()` was called.
  template <typename Make>
  S& findOrInsert(int32_t key_group, std::string_view key, std::string_view ns, Make&& make, bool& inserted) {
    select(key_group, key, ns);
    inserted = !value_;
    if (inserted) value_.emplace(make());
    return *value_;
  }
  void erase(int32_t key_group, std::string_view key, std::string_view ns) {
    select(key_group, key, ns);
    value_.reset();
  }
  /// Writes the cached entry back; it stays cached.
  void flush() {
    if (cached_) writeBack();
  }
  /// Writes the cached entry back and drops it (before the table is changed behind the cache).
  void invalidate() {
    flush();
    cached_ = false;
    value_.reset();
  }
  const KeyGroupRange& range() const { return range_; }

 protected:
  void select(int32_t key_group, std::string_view key, std::string_view ns) {
    if (cached_ && key_group == key_group_ && key == key_ && ns == ns_) return;
    SLUICE_CHECK(range_.contains(key_group), "key group {} outside the backend's range [{}, {}]", key_group,
                 range_.start, range_.end);
    flush();
    cached_ = false;
    value_.reset();
    key_group_ = key_group;
    key_.assign(key);
    ns_.assign(ns);
    composite_ = layout_.compositeKey(key_group, key, ns);
    load();
    cached_ = true;
  }
  /// Loads the entry at composite_ into value_ (left empty when absent).
  virtual void load() = 0;
  /// Makes RocksDB hold value_ at composite_.
  virtual void writeBack() = 0;

  /// An iterator over the whole range of `key_group`, or of the backend's range when key_group < 0.
  std::unique_ptr<RocksDBIterator> iterate(int32_t key_group) const {
    const int32_t first = key_group < 0 ? range_.start : key_group;
    const int32_t last = key_group < 0 ? range_.end : key_group;
    return cf_->newIterator(layout_.groupPrefix(first), layout_.groupPrefix(last + 1));
  }

  RocksDBColumnFamily* cf_;
  KeyGroupRange range_;
  RocksDBKeyLayout layout_;
  bool cached_ = false;
  int32_t key_group_ = -1;
  std::string key_;
  std::string ns_;
  std::string composite_;
  std::optional<S> value_;
};

/// One serialized S per (key, namespace): ValueState, ListState, ReducingState, AggregatingState.
template <typename S, typename SSer>
class RocksDBValueTable : public RocksDBStateTableBase<S> {
  using Base = RocksDBStateTableBase<S>;

 public:
  using Base::Base;

  /// Entries over the whole range; the caller flushed the cache.
  size_t size() const { return count(-1); }
  size_t groupSize(int32_t key_group) const { return count(key_group); }
  /// Writes the group's entries; returns their number.
  size_t writeGroup(int32_t key_group, DataOutputView& out) const {
    return writeRawGroup(*this->cf_, this->layout_, false, key_group, out);
  }
  void restoreEntry(int32_t key_group, std::string_view key, std::string_view ns, std::string_view value) {
    DataInputView in(value);
    SSer::deserialize(in);
    if (!in.atEnd()) throw InputError(fmt::format("{} trailing bytes after the value", value.size() - in.position()));
    this->invalidate();
    this->cf_->put(this->layout_.compositeKey(key_group, key, ns), value);
  }
  /// fn(key, key_group, ns, S&) per entry in key order; changed values are written back. fn must not
  /// access this state by key meanwhile (its cache would race the iteration's writes).
  template <typename Fn>
  void forEach(Fn&& fn) {
    this->invalidate();
    int32_t g;
    std::string key, ns, bytes;
    for (auto it = this->iterate(-1); it->valid(); it->next()) {
      this->layout_.parse(it->key(), &g, &key, &ns);
      S v = decode(it->value());
      fn(std::string_view(key), g, std::string_view(ns), v);
      bytes.clear();
      DataOutputView out(bytes);
      SSer::serialize(v, out);
      if (bytes != it->value()) this->cf_->put(it->key(), bytes);
    }
  }

 private:
  static S decode(std::string_view bytes) {
    try {
      DataInputView in(bytes);
      return SSer::deserialize(in);
    } catch (const InputError& e) {
      throw InternalError(fmt::format("RocksDB state value does not decode: {}", e.what()));
    }
  }
  size_t count(int32_t key_group) const {
    size_t n = 0;
    for (auto it = this->iterate(key_group); it->valid(); it->next()) ++n;
    return n;
  }
  void load() override {
    present_ = this->cf_->get(this->composite_, &stored_);
    if (present_) this->value_.emplace(decode(stored_));
  }
  void writeBack() override {
    if (!this->value_) {
      if (present_) this->cf_->remove(this->composite_);
      present_ = false;
      return;
    }
    scratch_.clear();
    DataOutputView out(scratch_);
    SSer::serialize(*this->value_, out);
    if (present_ && scratch_ == stored_) return;
    this->cf_->put(this->composite_, scratch_);
    stored_.swap(scratch_);
    present_ = true;
  }

  bool present_ = false;
  std::string stored_;   ///< bytes in RocksDB for the cached address, when present_
  std::string scratch_;
};

/// One RocksDB entry per user key: MapState.
template <typename UK, typename UV, typename KeySer, typename ValueSer>
class RocksDBMapTable : public RocksDBStateTableBase<UserMap<UK, UV>> {
  using Map = UserMap<UK, UV>;
  using Base = RocksDBStateTableBase<Map>;
  using Bytes = std::map<std::string, std::string>;  ///< user key bytes -> user value bytes

 public:
  using Base::Base;

  /// Non-empty maps over the whole range; the caller flushed the cache.
  size_t size() const { return count(-1); }
  size_t groupSize(int32_t key_group) const { return count(key_group); }
  /// Entries in the canonical form: the value is varint count, then each user key and value, in
  /// bytewise user-key order (= UserMapSerializer's). Returns the number of entries (maps) written.
  size_t writeGroup(int32_t key_group, DataOutputView& out) const {
    return writeRawGroup(*this->cf_, this->layout_, true, key_group, out);
  }
  void restoreEntry(int32_t key_group, std::string_view key, std::string_view ns, std::string_view value) {
    this->invalidate();
    const std::string composite = this->layout_.compositeKey(key_group, key, ns);
    DataInputView in(value);
    const size_t n = in.readLength(1);
    std::string full;
    for (size_t i = 0; i < n; ++i) {
      const size_t k0 = in.position();
      KeySer::deserialize(in);
      const size_t v0 = in.position();
      ValueSer::deserialize(in);
      full = composite;
      full.append(value.substr(k0, v0 - k0));
      this->cf_->put(full, value.substr(v0, in.position() - v0));
    }
    if (!in.atEnd()) throw InputError(fmt::format("{} trailing bytes after the map", value.size() - in.position()));
  }
  /// fn(key, key_group, ns, Map&) per non-empty map in key order; changed entries are written back. fn
  /// must not access this state by key meanwhile.
  template <typename Fn>
  void forEach(Fn&& fn) {
    this->invalidate();
    forEachRun(-1, [&](const std::string& key, const std::string& ns, int32_t g, const Bytes& entries) {
      Map m = decode(entries);
      fn(std::string_view(key), g, std::string_view(ns), m);
      writeDiff(this->layout_.compositeKey(g, key, ns), entries, m);
    });
  }

 private:
  /// fn(key, ns, key_group, entries) per (key group, key, namespace) run of the range.
  template <typename Fn>
  void forEachRun(int32_t key_group, Fn&& fn) const {
    int32_t g = -1;
    std::string key, ns, run;
    Bytes entries;
    for (auto it = this->iterate(key_group); it->valid(); it->next()) {
      const std::string_view k = it->key();
      if (!run.empty() && k.substr(0, run.size()) == run) {
        entries.emplace(std::string(k.substr(run.size())), std::string(it->value()));
        continue;
      }
      if (!run.empty()) fn(key, ns, g, entries);
      entries.clear();
      const size_t len = this->layout_.parse(k, &g, &key, &ns);
      run.assign(k.substr(0, len));
      entries.emplace(std::string(k.substr(len)), std::string(it->value()));
    }
    if (!run.empty()) fn(key, ns, g, entries);
  }
  size_t count(int32_t key_group) const {
    size_t n = 0;
    forEachRun(key_group, [&](const std::string&, const std::string&, int32_t, const Bytes&) { ++n; });
    return n;
  }
  static Map decode(const Bytes& entries) {
    Map m;
    try {
      for (const auto& [uk, uv] : entries) {
        DataInputView kin(uk);
        DataInputView vin(uv);
        UK k = KeySer::deserialize(kin);
        m.insert_or_assign(std::move(k), ValueSer::deserialize(vin));
      }
    } catch (const InputError& e) {
      throw InternalError(fmt::format("RocksDB map state entry does not decode: {}", e.what()));
    }
    return m;
  }
  static Bytes encode(const Map& m) {
    Bytes out;
    for (const auto& [k, v] : m) {
      std::string kb, vb;
      DataOutputView ko(kb);
      DataOutputView vo(vb);
      KeySer::serialize(k, ko);
      ValueSer::serialize(v, vo);
      out.emplace(std::move(kb), std::move(vb));
    }
    return out;
  }
  /// Puts the entries of `now` whose bytes differ from `before` and deletes the ones gone; returns the
  /// new bytes.
  Bytes writeDiff(const std::string& composite, const Bytes& before, const Map& now) {
    Bytes after = encode(now);
    std::string full;
    for (const auto& [uk, uv] : after) {
      auto it = before.find(uk);
      if (it != before.end() && it->second == uv) continue;
      full = composite;
      full += uk;
      this->cf_->put(full, uv);
    }
    for (const auto& [uk, uv] : before) {
      if (after.count(uk) != 0) continue;
      full = composite;
      full += uk;
      this->cf_->remove(full);
    }
    return after;
  }
  void load() override {
    stored_.clear();
    auto it = this->cf_->newIterator(this->composite_, RocksDBKeyLayout::successor(this->composite_));
    for (; it->valid(); it->next()) {
      stored_.emplace(std::string(it->key().substr(this->composite_.size())), std::string(it->value()));
    }
    if (!stored_.empty()) this->value_.emplace(decode(stored_));
  }
  void writeBack() override {
    static const Map kEmpty;
    stored_ = writeDiff(this->composite_, stored_, this->value_ ? *this->value_ : kEmpty);
  }

  Bytes stored_;  ///< the user entries in RocksDB for the cached address
};

/// The RocksDB table for a heap state of S serialized by SSer: a map table for MapState, else a value table.
template <typename S, typename SSer>
struct RocksDBTableFor {
  using type = RocksDBValueTable<S, SSer>;
};
template <typename UK, typename UV, typename KeySer, typename ValueSer>
struct RocksDBTableFor<UserMap<UK, UV>, UserMapSerializer<UK, UV, KeySer, ValueSer>> {
  using type = RocksDBMapTable<UK, UV, KeySer, ValueSer>;
};

}  // namespace sluice::runtime::state::internal
