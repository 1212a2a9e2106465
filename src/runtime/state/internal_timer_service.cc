#include "runtime/state/internal_timer_service.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <utility>

#include "runtime/state/keyed_state_backend.h"

namespace sluice::runtime::state {

namespace {

/// The bytes of a timer, key then namespace (inline in the common case: registering allocates nothing).
using TimerBytes = internal::StateKey;

/// The first 8 key bytes as a big-endian number (zero-padded): comparing two of them orders two keys as
/// their bytes do whenever they differ, so most ties in time need no byte comparison.
uint64_t keyPrefix(std::string_view key) {
  if (key.size() >= 8) {
    uint64_t w;
    std::memcpy(&w, key.data(), 8);
    return __builtin_bswap64(w);  // the first byte most significant (x86 is little-endian)
  }
  uint64_t p = 0;
  const size_t n = key.size();
  for (size_t i = 0; i < n; ++i) p |= static_cast<uint64_t>(static_cast<unsigned char>(key[i])) << (56 - 8 * i);
  return p;
}

/// A timer's hash within its time's bucket, from its key's fastBytesHash.
uint64_t timerHash(uint64_t key_hash, std::string_view ns) { return internal::stateKeyHashFrom(key_hash, ns); }

/// Sorts (prefix, id) pairs by prefix (stable LSD radix sort, one byte per pass; passes over a byte
/// every prefix shares are skipped, so small integer keys take two). O(n) where a comparison sort of a
/// bucket's thousands of timers took a fifth of a windowed job.
void radixSortByPrefix(std::vector<std::pair<uint64_t, uint32_t>>& v, std::vector<std::pair<uint64_t, uint32_t>>& tmp) {
  const size_t n = v.size();
  if (n < 64) {
    std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    return;
  }
  std::vector<std::array<uint32_t, 256>> counts(8);
  for (auto& c : counts) c.fill(0);
  for (const auto& e : v) {
    for (int d = 0; d < 8; ++d) ++counts[static_cast<size_t>(d)][(e.first >> (8 * d)) & 0xff];
  }
  tmp.resize(n);
  for (int d = 0; d < 8; ++d) {
    auto& c = counts[static_cast<size_t>(d)];
    if (c[(v[0].first >> (8 * d)) & 0xff] == n) continue;  // every prefix has this byte
    uint32_t sum = 0;
    for (auto& x : c) {
      const uint32_t k = x;
      x = sum;
      sum += k;
    }
    for (const auto& e : v) tmp[c[(e.first >> (8 * d)) & 0xff]++] = e;
    v.swap(tmp);
  }
}

/// Order of timers of one time: key bytes, then namespace bytes. `pa`/`pb`: the keyPrefix of each key.
bool bytesLess(uint64_t pa, const TimerBytes& a, uint64_t pb, const TimerBytes& b) {
  if (pa != pb) return pa < pb;
  const int c = a.key().compare(b.key());
  if (c != 0) return c < 0;
  return a.ns() < b.ns();
}

/// The timers of one time. `slots` only grows while the bucket lives (ids are stable: the index and
/// `order` refer to them); a removed or polled timer is marked dead, and the slots are compacted when the
/// dead ones outnumber the live ones. `order` lists the ids not polled yet from `next` on (dead ones
/// skipped when met), sorted by bytesLess once `sorted` is set (the first poll of the bucket); adds after
/// that insert in order.
struct Bucket {
  struct Slot {
    uint64_t hash = 0;
    uint64_t prefix = 0;  ///< keyPrefix(key)
    TimerBytes bytes;
    int32_t key_group = 0;
    bool alive = false;
  };
  int64_t time = 0;
  std::vector<Slot> slots;
  std::vector<uint32_t> order;
  size_t next = 0;
  bool sorted = false;
  size_t alive = 0;
  std::vector<uint32_t> index;  ///< live slot id + 1, 0 = empty; linear probing, backward-shift deletion
  std::vector<std::pair<uint64_t, uint32_t>> sort_scratch;  ///< head()'s sort buffers
  std::vector<std::pair<uint64_t, uint32_t>> radix_scratch;

  static constexpr uint32_t kNone = UINT32_MAX;

  void reset(int64_t t) {
    time = t;
    slots.clear();
    order.clear();
    std::fill(index.begin(), index.end(), 0);  // keeps its size: no regrowing rebuilds in a reused bucket
    next = 0;
    sorted = false;
    alive = 0;
  }
  size_t mask() const { return index.size() - 1; }
  uint32_t find(uint64_t h, std::string_view key, std::string_view ns) const {
    if (index.empty()) return kNone;
    for (size_t i = h & mask();; i = (i + 1) & mask()) {
      const uint32_t e = index[i];
      if (e == 0) return kNone;
      const Slot& s = slots[e - 1];
      if (s.hash == h && s.bytes.equals(key, ns)) return e - 1;
    }
  }
  void insertIndex(uint32_t id) {
    size_t i = slots[id].hash & mask();
    while (index[i] != 0) i = (i + 1) & mask();
    index[i] = id + 1;
  }
  void eraseIndex(uint32_t id) {
    size_t i = slots[id].hash & mask();
    while (index[i] != id + 1) i = (i + 1) & mask();
    for (size_t j = (i + 1) & mask(); index[j] != 0; j = (j + 1) & mask()) {
      const size_t home = slots[index[j] - 1].hash & mask();
      const bool movable = i <= j ? (home <= i || home > j) : (home <= i && home > j);
      if (movable) {
        index[i] = index[j];
        i = j;
      }
    }
    index[i] = 0;
  }
  void rebuildIndex(size_t capacity) {
    index.assign(capacity, 0);
    for (uint32_t id = 0; id < slots.size(); ++id) {
      if (slots[id].alive) insertIndex(id);
    }
  }
  bool less(uint32_t a, uint32_t b) const {
    return bytesLess(slots[a].prefix, slots[a].bytes, slots[b].prefix, slots[b].bytes);
  }
  /// Adds a live timer not queued yet (the caller checked find()).
  void add(uint64_t h, std::string_view key, std::string_view ns, int32_t key_group) {
    if (slots.size() >= 64 && slots.size() > 2 * alive) compact();
    if ((alive + 1) * 2 > index.size()) rebuildIndex(std::max<size_t>(16, index.size() * 2));
    const auto id = static_cast<uint32_t>(slots.size());
    slots.push_back(Slot{h, keyPrefix(key), TimerBytes(key, ns), key_group, true});
    insertIndex(id);
    ++alive;
    if (!sorted) {
      order.push_back(id);
      return;
    }
    const auto pos = std::upper_bound(order.begin() + static_cast<std::ptrdiff_t>(next), order.end(), id,
                                      [this](uint32_t a, uint32_t b) { return less(a, b); });
    order.insert(pos, id);
  }
  void kill(uint32_t id) {
    eraseIndex(id);
    slots[id].alive = false;
    --alive;
  }
  /// The next live timer in order (sorting first if needed); the bucket must hold one.
  uint32_t head() {
    if (!sorted) {
      // Sorted as (key prefix, id) pairs side by side, the slots read only for equal prefixes.
      std::vector<std::pair<uint64_t, uint32_t>>& keyed = sort_scratch;
      keyed.clear();
      keyed.reserve(order.size() - next);
      for (size_t i = next; i < order.size(); ++i) keyed.emplace_back(slots[order[i]].prefix, order[i]);
      radixSortByPrefix(keyed, radix_scratch);
      // Equal prefixes (keys sharing their first 8 bytes): ordered by the whole bytes.
      for (size_t i = 0; i < keyed.size();) {
        size_t j = i + 1;
        while (j < keyed.size() && keyed[j].first == keyed[i].first) ++j;
        if (j - i > 1) {
          std::sort(keyed.begin() + static_cast<std::ptrdiff_t>(i), keyed.begin() + static_cast<std::ptrdiff_t>(j),
                    [this](const auto& a, const auto& b) { return less(a.second, b.second); });
        }
        i = j;
      }
      for (size_t i = 0; i < keyed.size(); ++i) order[next + i] = keyed[i].second;
      sorted = true;
    }
    while (!slots[order[next]].alive) ++next;
    return order[next];
  }
  /// Drops the dead slots, renumbering the live ones (order keeps its order).
  void compact() {
    std::vector<uint32_t> renumber(slots.size(), kNone);
    std::vector<Slot> live;
    live.reserve(alive);
    for (uint32_t id = 0; id < slots.size(); ++id) {
      if (!slots[id].alive) continue;
      renumber[id] = static_cast<uint32_t>(live.size());
      live.push_back(std::move(slots[id]));
    }
    std::vector<uint32_t> new_order;
    new_order.reserve(alive);
    for (size_t i = next; i < order.size(); ++i) {
      if (renumber[order[i]] != kNone) new_order.push_back(renumber[order[i]]);
    }
    slots = std::move(live);
    order = std::move(new_order);
    next = 0;
    rebuildIndex(std::max<size_t>(16, index.size()));
  }
};

}  // namespace

struct KeyGroupPartitionedTimerQueue::Impl {
  explicit Impl(KeyGroupRange r) : range(r), group_sizes(static_cast<size_t>(r.size()), 0) {}

  KeyGroupRange range;
  std::map<int64_t, std::unique_ptr<Bucket>> buckets;  ///< by time; every bucket holds a live timer
  Bucket* last = nullptr;                             ///< the bucket of the last add (most adds hit it)
  std::vector<std::unique_ptr<Bucket>> spare;         ///< emptied buckets, reused with their capacity
  std::vector<size_t> group_sizes;                    ///< live timers per key group - range.start

  /// writeGroup's view of every timer by key group, built on its first call after a change.
  struct View {
    int64_t time;
    std::string_view key;
    std::string_view ns;
  };
  mutable std::vector<std::vector<View>> by_group;
  mutable bool by_group_valid = false;

  size_t local(int32_t key_group) const {
    SLUICE_CHECK(range.contains(key_group), "timer key group {} outside [{}, {}]", key_group, range.start,
                 range.end);
    return static_cast<size_t>(key_group - range.start);
  }
  Bucket* bucketAt(int64_t time) {
    if (last != nullptr && last->time == time) return last;
    auto it = buckets.find(time);
    return it == buckets.end() ? nullptr : it->second.get();
  }
  Bucket& makeBucket(int64_t time) {
    std::unique_ptr<Bucket> b;
    if (spare.empty()) {
      b = std::make_unique<Bucket>();
    } else {
      b = std::move(spare.back());
      spare.pop_back();
    }
    b->reset(time);
    Bucket& ref = *b;
    buckets.emplace(time, std::move(b));
    return ref;
  }
  void dropIfEmpty(Bucket& b) {
    if (b.alive > 0) return;
    if (last == &b) last = nullptr;
    auto it = buckets.find(b.time);
    if (spare.size() < 16 && it->second->slots.capacity() <= 4096) spare.push_back(std::move(it->second));
    buckets.erase(it);
  }
};

KeyGroupPartitionedTimerQueue::KeyGroupPartitionedTimerQueue(std::string name, StateKind kind, KeyGroupRange range)
    : SnapshotableKeyedState(std::move(name), kind), impl_(std::make_unique<Impl>(range)) {}

KeyGroupPartitionedTimerQueue::~KeyGroupPartitionedTimerQueue() = default;

bool KeyGroupPartitionedTimerQueue::add(int32_t key_group, std::string_view key, std::string_view ns, int64_t time) {
  return addHashed(key_group, key, internal::fastBytesHash(key), ns, time);
}

bool KeyGroupPartitionedTimerQueue::addHashed(int32_t key_group, std::string_view key, uint64_t key_hash,
                                              std::string_view ns, int64_t time) {
  Impl& m = *impl_;
  const size_t g = m.local(key_group);
  const uint64_t h = timerHash(key_hash, ns);
  Bucket* b = m.bucketAt(time);
  if (b != nullptr && b->find(h, key, ns) != Bucket::kNone) return false;
  if (b == nullptr) b = &m.makeBucket(time);
  b->add(h, key, ns, key_group);
  m.last = b;
  ++m.group_sizes[g];
  ++size_;
  m.by_group_valid = false;
  return true;
}

bool KeyGroupPartitionedTimerQueue::remove(int32_t key_group, std::string_view key, std::string_view ns,
                                           int64_t time) {
  return removeHashed(key_group, key, internal::fastBytesHash(key), ns, time);
}

bool KeyGroupPartitionedTimerQueue::removeHashed(int32_t key_group, std::string_view key, uint64_t key_hash,
                                                 std::string_view ns, int64_t time) {
  Impl& m = *impl_;
  const size_t g = m.local(key_group);
  Bucket* b = m.bucketAt(time);
  if (b == nullptr) return false;
  const uint32_t id = b->find(timerHash(key_hash, ns), key, ns);
  if (id == Bucket::kNone) return false;
  b->kill(id);
  --m.group_sizes[g];
  --size_;
  m.by_group_valid = false;
  m.dropIfEmpty(*b);
  return true;
}

std::optional<int64_t> KeyGroupPartitionedTimerQueue::peekTime() const {
  if (size_ == 0) return std::nullopt;
  return impl_->buckets.begin()->first;
}

void KeyGroupPartitionedTimerQueue::poll(TimerEntry& out) {
  SLUICE_CHECK(size_ > 0, "poll of the empty timer queue '{}'", name());
  Impl& m = *impl_;
  Bucket& b = *m.buckets.begin()->second;
  const uint32_t id = b.head();
  const Bucket::Slot& s = b.slots[id];
  out.time = b.time;
  out.key.assign(s.bytes.key());
  out.ns.assign(s.bytes.ns());
  out.key_group = s.key_group;
  --m.group_sizes[m.local(s.key_group)];
  b.kill(id);
  ++b.next;
  --size_;
  m.by_group_valid = false;
  m.dropIfEmpty(b);
}

TimerEntry KeyGroupPartitionedTimerQueue::poll() {
  TimerEntry out;
  poll(out);
  return out;
}

size_t KeyGroupPartitionedTimerQueue::groupSize(int32_t key_group) const {
  return impl_->group_sizes[impl_->local(key_group)];
}

void KeyGroupPartitionedTimerQueue::writeGroup(int32_t key_group, DataOutputView& out) const {
  const Impl& m = *impl_;
  const size_t g = m.local(key_group);
  if (m.group_sizes[g] == 0) return;
  // A snapshot writes every group in turn with no change in between: one pass groups all timers.
  if (!m.by_group_valid) {
    m.by_group.assign(m.group_sizes.size(), {});
    for (size_t i = 0; i < m.group_sizes.size(); ++i) m.by_group[i].reserve(m.group_sizes[i]);
    for (const auto& [time, b] : m.buckets) {
      for (const Bucket::Slot& s : b->slots) {
        if (s.alive) m.by_group[m.local(s.key_group)].push_back(Impl::View{time, s.bytes.key(), s.bytes.ns()});
      }
    }
    m.by_group_valid = true;
  }
  std::vector<Impl::View>& timers = m.by_group[g];
  std::sort(timers.begin(), timers.end(), [](const Impl::View& a, const Impl::View& b) {
    if (a.key != b.key) return a.key < b.key;
    if (a.ns != b.ns) return a.ns < b.ns;
    return a.time < b.time;
  });
  for (const Impl::View& k : timers) {
    internal::writeBytesField(out, k.key);
    internal::writeBytesField(out, k.ns);
    out.writeVarUint(sizeof(int64_t));
    TypeSerializer<int64_t>::serialize(k.time, out);
  }
}

void KeyGroupPartitionedTimerQueue::restoreEntry(int32_t key_group, std::string_view key, std::string_view ns,
                                                 std::string_view value) {
  if (value.size() != sizeof(int64_t)) {
    throw InputError(fmt::format("a timer's time takes 8 bytes, not {}", value.size()));
  }
  DataInputView in(value);
  add(key_group, key, ns, TypeSerializer<int64_t>::deserialize(in));
}

InternalTimerService::InternalTimerService(KeyedStateBackend* backend, KeyGroupPartitionedTimerQueue* event_timers,
                                           KeyGroupPartitionedTimerQueue* processing_timers)
    : backend_(backend), event_(event_timers), processing_(processing_timers) {}

namespace {
int32_t currentGroup(const KeyedStateBackend& backend) {
  SLUICE_CHECK(backend.currentKeyGroup() >= 0, "a timer call before the backend's current key was set");
  return backend.currentKeyGroup();
}
}  // namespace

void InternalTimerService::registerEventTimeTimer(std::string_view ns, int64_t time) {
  event_->addHashed(currentGroup(*backend_), backend_->currentKey(), backend_->currentKeyHash(), ns, time);
}

void InternalTimerService::registerProcessingTimeTimer(std::string_view ns, int64_t time) {
  processing_->addHashed(currentGroup(*backend_), backend_->currentKey(), backend_->currentKeyHash(), ns, time);
}

void InternalTimerService::deleteEventTimeTimer(std::string_view ns, int64_t time) {
  event_->removeHashed(currentGroup(*backend_), backend_->currentKey(), backend_->currentKeyHash(), ns, time);
}

void InternalTimerService::deleteProcessingTimeTimer(std::string_view ns, int64_t time) {
  processing_->removeHashed(currentGroup(*backend_), backend_->currentKey(), backend_->currentKeyHash(), ns, time);
}

void InternalTimerService::fireUpTo(KeyGroupPartitionedTimerQueue& queue, int64_t time, const Callback& fn) {
  // One entry reused for every timer of the round: its strings keep their capacity. A copy, not a view
  // into the queue: fn may register timers, which moves the queue's slots.
  TimerEntry t;
  while (true) {
    const std::optional<int64_t> next = queue.peekTime();
    if (!next || *next > time) return;
    queue.poll(t);
    backend_->setCurrentKey(t.key, t.key_group);
    fn(t.key, t.key_group, t.ns, t.time);
  }
}

void InternalTimerService::advanceWatermark(int64_t watermark, const Callback& fn) {
  current_watermark_ = watermark;
  fireUpTo(*event_, watermark, fn);
}

void InternalTimerService::advanceProcessingTime(int64_t now, const Callback& fn) { fireUpTo(*processing_, now, fn); }

}  // namespace sluice::runtime::state
