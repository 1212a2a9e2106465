#pragma once
/// The heap table of one keyed state (internal to runtime/state; keyed_state.h builds the state handles on
/// it): (key, namespace) -> S per key group, with copy-on-write snapshots for asynchronous checkpoints
/// (flink-checkpointing.md §3.5, the rule of Flink's CopyOnWriteStateMap: versioned entries, a snapshot
/// shares every entry, a write copies only the entry it changes).
///
/// Layout: per key group one flat open-addressing table (linear probing, power-of-two slots, at most 3/4
/// full, backward-shift erase, so no tombstones) of slots {entry pointer, hash}; an entry is a node
/// {key, namespace, S, version}. Groups are held by shared_ptr and carry the table version they were made
/// at. freeze() (a checkpoint's synchronous part) copies the group pointers — O(key groups), no entry is
/// touched — registers the snapshot version and bumps the table's. After it:
/// - a write to an entry whose version is not newer than the highest live snapshot copies that entry
///   (value copied with Copy) and points the slot at the copy; an entry made after the snapshot changes in
///   place;
/// - the first change of a group's slots (a copied entry, an insert, an erase, a resize) copies the
///   group's slot array (pointers only) when a live snapshot shares it.
/// So a snapshot costs, on the task thread, one slot-array copy per group written and one entry copy per
/// entry written while it is being written out. Entries the live table dropped while a snapshot may still
/// read them are retired (freed once every snapshot that could read them is released); the retired list
/// is shared with the snapshots, so a snapshot may outlive the table.
///
/// Every accessor handing out a mutable S& or S* counts as a write. Threading: the task thread, except
/// Frozen (one other thread at a time) and the destruction of Frozen (any thread).

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <new>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/error.h"
#include "runtime/state/key_group.h"
#include "runtime/state/keyed_state_internal.h"

namespace sluice::runtime::state {

namespace internal {

/// The snapshot versions of one heap table still being written out (Flink's CopyOnWriteStateMap
/// snapshotVersions). add() on the task thread; release() on the thread that drops the snapshot;
/// highestLive()/lowestLive() on the task thread, acquire, so an entry it then changes in place or frees is
/// one no live snapshot reads any more.
class SnapshotVersions {
 public:
  /// 0 when no snapshot is live.
  uint64_t highestLive() const { return highest_.load(std::memory_order_acquire); }
  /// UINT64_MAX when no snapshot is live.
  uint64_t lowestLive() const { return lowest_.load(std::memory_order_acquire); }
  void add(uint64_t version);
  void release(uint64_t version);

 private:
  void publish();
  std::mutex mu_;
  std::multiset<uint64_t> live_;
  std::atomic<uint64_t> highest_{0};
  std::atomic<uint64_t> lowest_{std::numeric_limits<uint64_t>::max()};
};

}  // namespace internal

template <typename S, typename Copy>
class HeapStateTable {
 public:
  struct Entry {
    internal::StateKey key;
    S value;
    uint64_t version;  ///< the table version when made: shared with the snapshots of versions >= it
  };
  struct Slot {
    Entry* entry = nullptr;  ///< null: free
    uint64_t hash = 0;
  };
  struct Group {
    uint64_t version = 0;
    size_t size = 0;
    std::vector<Slot> slots;  ///< a power of two (>= 8), at most 3/4 used
  };

 private:
  /// Entries no live group reaches that a snapshot may still read, with the highest snapshot version
  /// that can (the table's last handed-out version when retired). Owned jointly by the table and its
  /// snapshots: the last one frees what is left.
  struct Retired {
    std::vector<std::pair<uint64_t, Entry*>> entries;
    Retired() = default;
    Retired(const Retired&) = delete;
    Retired& operator=(const Retired&) = delete;
    ~Retired() {
      for (auto& [v, e] : entries) destroyEntry(e);
    }
  };

 public:
  /// The table as of one freeze(): read on any one thread while the task goes on; destroying it releases
  /// the snapshot version (after dropping the groups, so the task may then change them in place).
  class Frozen {
   public:
    Frozen(KeyGroupRange range, std::vector<std::shared_ptr<const Group>> groups,
           std::shared_ptr<internal::SnapshotVersions> versions, std::shared_ptr<Retired> retired, uint64_t version)
        : range_(range), groups_(std::move(groups)), versions_(std::move(versions)), retired_(std::move(retired)),
          version_(version) {}
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
    /// Calls fn(const StateKey&, const S&) for every entry of the group, in slot order.
    template <typename Fn>
    void forEach(int32_t key_group, Fn&& fn) const {
      const Group* g = group(key_group);
      if (g == nullptr) return;
      for (const Slot& s : g->slots) {
        if (s.entry != nullptr) fn(static_cast<const internal::StateKey&>(s.entry->key), static_cast<const S&>(s.entry->value));
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
    std::shared_ptr<Retired> retired_;  ///< keeps the entries the groups point to alive
    uint64_t version_;
  };

  explicit HeapStateTable(KeyGroupRange range)
      : range_(range), groups_(static_cast<size_t>(range.size())),
        versions_(std::make_shared<internal::SnapshotVersions>()), retired_(std::make_shared<Retired>()) {}
  ~HeapStateTable() {
    for (void* p : free_entries_) ::operator delete(p);
    // A snapshot may still read the live entries: the retired list, shared with it, frees them last.
    for (auto& g : groups_) {
      if (!g) continue;
      for (Slot& s : g->slots) {
        if (s.entry != nullptr) retired_->entries.emplace_back(0, s.entry);
      }
    }
  }
  HeapStateTable(const HeapStateTable&) = delete;
  HeapStateTable& operator=(const HeapStateTable&) = delete;

  /// The entry for writing (copied first when a live snapshot shares it), nullptr when absent.
  S* find(int32_t key_group, std::string_view key, std::string_view ns) {
    return find(key_group, key, ns, hashOf(key, ns));
  }
  /// The same with the slot hash `h` = internal::stateKeyHash(key, ns) computed by the caller.
  S* find(int32_t key_group, std::string_view key, std::string_view ns, uint64_t h) {
    Group* g = groups_[index(key_group)].get();
    if (g == nullptr || g->size == 0) return nullptr;
    const size_t pos = probe(*g, h, key, ns);
    Entry* e = g->slots[pos].entry;
    if (e == nullptr) return nullptr;
    const uint64_t live = versions_->highestLive();
    // An entry made after the newest live snapshot is in no snapshot's group: change it in place.
    if (e->version > live) return &e->value;
    return &copyEntry(key_group, pos, live)->value;
  }
  /// The entry, inserted as `make()` when absent.
  template <typename Make>
  S& findOrInsert(int32_t key_group, std::string_view key, std::string_view ns, Make&& make) {
    bool inserted = false;
    return findOrInsert(key_group, key, ns, std::forward<Make>(make), inserted);
  }
  /// The same, one probe; `inserted` says whether `make()` was called.
  template <typename Make>
  S& findOrInsert(int32_t key_group, std::string_view key, std::string_view ns, Make&& make, bool& inserted) {
    return findOrInsertHashed(key_group, key, ns, hashOf(key, ns), std::forward<Make>(make), inserted);
  }
  /// findOrInsert with the slot hash `h` = internal::stateKeyHash(key, ns) computed by the caller.
  template <typename Make>
  S& findOrInsertHashed(int32_t key_group, std::string_view key, std::string_view ns, uint64_t h, Make&& make,
                        bool& inserted) {
    inserted = false;
    Group* g = groups_[index(key_group)].get();
    if (g != nullptr && g->size > 0) {
      const size_t pos = probe(*g, h, key, ns);
      if (Entry* e = g->slots[pos].entry) {
        const uint64_t live = versions_->highestLive();
        if (e->version > live) return e->value;
        return copyEntry(key_group, pos, live)->value;
      }
    }
    Group& w = writableGroup(key_group, versions_->highestLive());
    if ((w.size + 1) * 4 > w.slots.size() * 3) grow(w);
    const size_t pos = probe(w, h, key, ns);
    Entry* e = newEntry(internal::StateKey(key, ns), make());
    w.slots[pos] = Slot{e, h};
    ++w.size;
    ++size_;
    inserted = true;
    return e->value;
  }
  void erase(int32_t key_group, std::string_view key, std::string_view ns) { erase(key_group, key, ns, hashOf(key, ns)); }
  /// erase with the slot hash `h` = internal::stateKeyHash(key, ns) computed by the caller.
  void erase(int32_t key_group, std::string_view key, std::string_view ns, uint64_t h) {
    Group* g = groups_[index(key_group)].get();
    if (g == nullptr || g->size == 0) return;
    size_t pos = probe(*g, h, key, ns);
    if (g->slots[pos].entry == nullptr) return;
    const uint64_t live = versions_->highestLive();
    Group& w = writableGroup(key_group, live);
    retire(w.slots[pos].entry, live);
    removeSlot(w, pos);
    --w.size;
    --size_;
  }
  size_t size() const { return size_; }
  size_t groupSize(int32_t key_group) const {
    const Group* g = groups_[index(key_group)].get();
    return g == nullptr ? 0 : g->size;
  }
  /// Calls fn(const StateKey&, const S&) for every entry of the group, in slot order (a read: nothing is
  /// copied).
  template <typename Fn>
  void forEach(int32_t key_group, Fn&& fn) const {
    const Group* g = groups_[index(key_group)].get();
    if (g == nullptr) return;
    for (const Slot& s : g->slots) {
      if (s.entry != nullptr) fn(static_cast<const internal::StateKey&>(s.entry->key), static_cast<const S&>(s.entry->value));
    }
  }
  /// Calls fn(const StateKey&, S&) for every entry of the group; shared entries are copied first. fn must
  /// not add or remove entries of this table.
  template <typename Fn>
  void forEachMutable(int32_t key_group, Fn&& fn) {
    Group* g = groups_[index(key_group)].get();
    if (g == nullptr || g->size == 0) return;
    const uint64_t live = versions_->highestLive();
    for (size_t pos = 0; pos < g->slots.size(); ++pos) {
      Entry* e = g->slots[pos].entry;
      if (e == nullptr) continue;
      if (e->version <= live) {
        e = copyEntry(key_group, pos, live);
        g = groups_[index(key_group)].get();  // the group may have been copied
      }
      fn(static_cast<const internal::StateKey&>(e->key), e->value);
    }
  }
  /// The synchronous part of a snapshot: O(key groups). See the file comment.
  std::unique_ptr<Frozen> freeze() const {
    collectRetired();
    std::vector<std::shared_ptr<const Group>> groups(groups_.begin(), groups_.end());
    const uint64_t v = version_++;
    versions_->add(v);
    return std::make_unique<Frozen>(range_, std::move(groups), versions_, retired_, v);
  }
  const KeyGroupRange& range() const { return range_; }
  /// Retired entries not freed yet (tests).
  size_t retiredForTesting() const { return retired_->entries.size(); }

 private:
  static constexpr size_t kMinSlots = 8;
  static constexpr size_t kMaxFreeEntries = 4096;
  static_assert(alignof(Entry) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__, "entries use the default operator new");

  /// Entries live in raw operator-new memory (so freed ones can be reused): made by newEntry, freed by
  /// destroyEntry.
  template <typename V>
  Entry* newEntry(internal::StateKey key, V&& value) {
    void* p;
    if (free_entries_.empty()) {
      p = ::operator new(sizeof(Entry));
    } else {
      p = free_entries_.back();
      free_entries_.pop_back();
    }
    try {
      return new (p) Entry{std::move(key), std::forward<V>(value), version_};
    } catch (...) {
      free_entries_.push_back(p);
      throw;
    }
  }
  static void destroyEntry(Entry* e) {
    e->~Entry();
    ::operator delete(e);
  }

  static uint64_t hashOf(std::string_view key, std::string_view ns) {
    return internal::stateKeyHash(key, ns);
  }
  /// The slot holding (key, ns), or the free slot where it would go.
  static size_t probe(const Group& g, uint64_t h, std::string_view key, std::string_view ns) {
    const size_t mask = g.slots.size() - 1;
    for (size_t pos = static_cast<size_t>(h) & mask;; pos = (pos + 1) & mask) {
      const Slot& s = g.slots[pos];
      if (s.entry == nullptr) return pos;
      if (s.hash == h && s.entry->key.equals(key, ns)) return pos;
    }
  }
  size_t index(int32_t key_group) const {
    if (!range_.contains(key_group)) [[unlikely]] outsideRange(key_group);
    return static_cast<size_t>(key_group - range_.start);
  }
  [[noreturn, gnu::noinline, gnu::cold]] void outsideRange(int32_t key_group) const {
    SLUICE_CHECK(false, "key group {} outside the backend's range [{}, {}]", key_group, range_.start, range_.end);
    std::abort();
  }
  /// The live group, made first when absent and copied (slot array only) when a live snapshot shares it.
  Group& writableGroup(int32_t key_group, uint64_t live) {
    auto& g = groups_[index(key_group)];
    if (!g) {
      g = std::make_shared<Group>();
      g->version = version_;
      g->slots.resize(kMinSlots);
    } else if (g->version <= live) {
      g = std::make_shared<Group>(*g);
      g->version = version_;
    }
    return *g;
  }
  /// Replaces the shared entry at `pos` by a copy (the group made writable first); returns the copy.
  Entry* copyEntry(int32_t key_group, size_t pos, uint64_t live) {
    Group& w = writableGroup(key_group, live);
    Entry* old = w.slots[pos].entry;
    Entry* e = newEntry(old->key, Copy{}(old->value));
    w.slots[pos].entry = e;
    retire(old, live);
    return e;
  }
  /// An entry the live table no longer reaches: freed now when no live snapshot can hold it.
  void retire(Entry* e, uint64_t live) {
    if (e->version > live) {
      // Freed on the task thread: its memory is kept for the next entry (a window's contents come and go
      // with every window, and malloc/free of them took a tenth of a windowed job).
      e->~Entry();
      if (free_entries_.size() < kMaxFreeEntries) {
        free_entries_.push_back(e);
      } else {
        ::operator delete(e);
      }
      return;
    }
    retired_->entries.emplace_back(version_ - 1, e);
    if (retired_->entries.size() >= next_collect_) collectRetired();
  }
  /// Frees the retired entries no live snapshot can read any more.
  void collectRetired() const {
    auto& list = retired_->entries;
    if (list.empty()) return;
    const uint64_t lowest = versions_->lowestLive();
    size_t kept = 0;
    for (auto& item : list) {
      if (item.first < lowest) {
        destroyEntry(item.second);
      } else {
        list[kept++] = item;
      }
    }
    list.resize(kept);
    next_collect_ = std::max<size_t>(1024, 2 * kept);
  }
  /// Doubles the slots of a writable group (entry pointers move; entries stay where they are).
  static void grow(Group& g) {
    std::vector<Slot> old = std::move(g.slots);
    g.slots.assign(old.size() * 2, Slot{});
    const size_t mask = g.slots.size() - 1;
    for (const Slot& s : old) {
      if (s.entry == nullptr) continue;
      size_t pos = static_cast<size_t>(s.hash) & mask;
      while (g.slots[pos].entry != nullptr) pos = (pos + 1) & mask;
      g.slots[pos] = s;
    }
  }
  /// Frees slot `pos` of a writable group and shifts back the entries of its probe run (linear probing
  /// without tombstones).
  static void removeSlot(Group& g, size_t pos) {
    const size_t mask = g.slots.size() - 1;
    size_t hole = pos;
    for (size_t next = (hole + 1) & mask; g.slots[next].entry != nullptr; next = (next + 1) & mask) {
      const size_t home = static_cast<size_t>(g.slots[next].hash) & mask;
      // The entry at `next` stays when its home lies cyclically in (hole, next].
      if (((next - home) & mask) < ((next - hole) & mask)) continue;
      g.slots[hole] = g.slots[next];
      hole = next;
    }
    g.slots[hole] = Slot{};
  }

  KeyGroupRange range_;
  std::vector<std::shared_ptr<Group>> groups_;
  std::shared_ptr<internal::SnapshotVersions> versions_;
  std::shared_ptr<Retired> retired_;
  /// Version given to entries and groups made now; freeze() hands out the current one and bumps it.
  mutable uint64_t version_ = 1;
  size_t size_ = 0;
  mutable size_t next_collect_ = 1024;
  std::vector<void*> free_entries_;  ///< memory of entries freed on the task thread, for newEntry
};

}  // namespace sluice::runtime::state
