#include "runtime/state/internal_timer_service.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "runtime/state/keyed_state_backend.h"

namespace sluice::runtime::state {

namespace {

/// The bytes of a timer, key then namespace (inline in the common case: registering allocates nothing).
using TimerBytes = internal::StateKey;

/// The first 8 key bytes as a big-endian number (zero-padded): comparing two of them orders two keys as
/// their bytes do whenever they differ, so most ties in time need no byte comparison.
uint64_t keyPrefix(std::string_view key) {
  uint64_t p = 0;
  const size_t n = std::min<size_t>(key.size(), 8);
  for (size_t i = 0; i < n; ++i) p |= static_cast<uint64_t>(static_cast<unsigned char>(key[i])) << (56 - 8 * i);
  return p;
}

uint64_t timerHash(int64_t time, std::string_view key, std::string_view ns) {
  return internal::fastBytesHash(ns, internal::fastBytesHash(key, static_cast<uint64_t>(time)));
}

/// Timer order: time, then key bytes, then namespace bytes (a total order, so firing is deterministic).
/// `pa`/`pb`: the keyPrefix of each key.
bool timerLess(int64_t ta, uint64_t pa, const TimerBytes& a, int64_t tb, uint64_t pb, const TimerBytes& b) {
  if (ta != tb) return ta < tb;
  if (pa != pb) return pa < pb;
  const int c = a.key().compare(b.key());
  if (c != 0) return c < 0;
  return a.ns() < b.ns();
}

}  // namespace

/// One key group's timers (Flink's HeapPriorityQueueSet): a binary heap of (time, key prefix, slot
/// number) plus an open-addressing hash set of the same slots, which deduplicates and finds a timer to
/// delete. A timer is a slot of one flat vector (reused through a free list), so neither structure holds
/// a node per timer; a dense array records each slot's heap position, so removal is O(log n).
class KeyGroupPartitionedTimerQueue::GroupQueue {
 public:
  /// Adds a timer; false when it is queued already. `became_head`: the new timer is now the earliest.
  bool add(std::string_view key, std::string_view ns, int64_t time, bool& became_head) {
    const uint64_t h = timerHash(time, key, ns);
    if (findSlot(h, time, key, ns) != kNone) return false;
    if ((count_ + 1) * 2 > index_.size()) grow();
    uint32_t s;
    if (!free_.empty()) {
      s = free_.back();
      free_.pop_back();
      slots_[s].bytes.assign(key, ns);
    } else {
      s = static_cast<uint32_t>(slots_.size());
      slots_.push_back(Slot{time, h, TimerBytes(key, ns)});
      heap_pos_.push_back(0);
    }
    Slot& slot = slots_[s];
    slot.time = time;
    slot.hash = h;
    insertIndex(s);
    ++count_;
    heap_.push_back(HeapItem{time, keyPrefix(key), s});
    siftUp(heap_.size() - 1);
    became_head = heap_.front().slot == s;
    return true;
  }
  /// Removes a timer; false when it was not queued. `was_head`: it was the earliest.
  bool remove(std::string_view key, std::string_view ns, int64_t time, bool& was_head) {
    const uint32_t s = findSlot(timerHash(time, key, ns), time, key, ns);
    if (s == kNone) return false;
    was_head = heap_pos_[s] == 0;
    removeSlot(s);
    return true;
  }
  bool empty() const { return heap_.empty(); }
  /// Time of the earliest timer; the queue must not be empty.
  int64_t headTime() const { return heap_.front().time; }
  uint64_t headPrefix() const { return heap_.front().prefix; }
  const TimerBytes& headBytes() const { return slots_[heap_.front().slot].bytes; }
  /// Removes the earliest timer, copying it into `out` (its strings keep their capacity).
  void pollHead(TimerEntry& out) {
    const uint32_t s = heap_.front().slot;
    const Slot& slot = slots_[s];
    out.time = slot.time;
    out.key.assign(slot.bytes.key());
    out.ns.assign(slot.bytes.ns());
    removeSlot(s);
  }
  size_t size() const { return heap_.size(); }
  /// Calls fn(time, key, ns) for every timer, in no particular order.
  template <typename Fn>
  void forEach(Fn&& fn) const {
    for (const HeapItem& i : heap_) fn(i.time, slots_[i.slot].bytes.key(), slots_[i.slot].bytes.ns());
  }

 private:
  static constexpr uint32_t kNone = UINT32_MAX;
  struct Slot {
    int64_t time = 0;
    uint64_t hash = 0;
    TimerBytes bytes;
  };
  /// A heap element carries what orders it, so sifting reads the slots only on a tie of time and key
  /// prefix (the slots are five times larger and scattered).
  struct HeapItem {
    int64_t time;
    uint64_t prefix;  ///< keyPrefix(key)
    uint32_t slot;
  };

  bool less(const HeapItem& a, const HeapItem& b) const {
    if (a.time != b.time) return a.time < b.time;
    if (a.prefix != b.prefix) return a.prefix < b.prefix;
    return timerLess(a.time, a.prefix, slots_[a.slot].bytes, b.time, b.prefix, slots_[b.slot].bytes);
  }
  size_t mask() const { return index_.size() - 1; }
  // index_ entries: slot + 1, 0 = empty; linear probing, deletion by backward shift (no tombstones).
  uint32_t findSlot(uint64_t h, int64_t time, std::string_view key, std::string_view ns) const {
    if (index_.empty()) return kNone;
    for (size_t i = h & mask();; i = (i + 1) & mask()) {
      const uint32_t e = index_[i];
      if (e == 0) return kNone;
      const Slot& slot = slots_[e - 1];
      if (slot.hash == h && slot.time == time && slot.bytes.equals(key, ns)) return e - 1;
    }
  }
  void insertIndex(uint32_t s) {
    size_t i = slots_[s].hash & mask();
    while (index_[i] != 0) i = (i + 1) & mask();
    index_[i] = s + 1;
  }
  void eraseIndex(uint32_t s) {
    size_t i = slots_[s].hash & mask();
    while (index_[i] != s + 1) i = (i + 1) & mask();
    // Backward shift: move later entries of the probe run into the hole when their home allows it.
    for (size_t j = (i + 1) & mask(); index_[j] != 0; j = (j + 1) & mask()) {
      const size_t home = slots_[index_[j] - 1].hash & mask();
      const bool movable = i <= j ? (home <= i || home > j) : (home <= i && home > j);
      if (movable) {
        index_[i] = index_[j];
        i = j;
      }
    }
    index_[i] = 0;
  }
  void grow() {
    std::vector<uint32_t> old;
    old.swap(index_);
    index_.assign(std::max<size_t>(16, old.size() * 2), 0);
    for (uint32_t e : old) {
      if (e != 0) insertIndex(e - 1);
    }
  }
  void removeSlot(uint32_t s) {
    eraseIndex(s);
    --count_;
    const size_t pos = heap_pos_[s];
    const size_t last = heap_.size() - 1;
    if (pos != last) {
      place(heap_[last], pos);
      heap_.pop_back();
      siftDown(pos);
      siftUp(pos);
    } else {
      heap_.pop_back();
    }
    free_.push_back(s);
  }
  void place(const HeapItem& item, size_t pos) {
    heap_[pos] = item;
    heap_pos_[item.slot] = static_cast<uint32_t>(pos);
  }
  void siftUp(size_t pos) {
    const HeapItem s = heap_[pos];
    while (pos > 0) {
      const size_t parent = (pos - 1) / 2;
      if (!less(s, heap_[parent])) break;
      place(heap_[parent], pos);
      pos = parent;
    }
    place(s, pos);
  }
  void siftDown(size_t pos) {
    const HeapItem s = heap_[pos];
    const size_t n = heap_.size();
    while (true) {
      size_t child = 2 * pos + 1;
      if (child >= n) break;
      if (child + 1 < n && less(heap_[child + 1], heap_[child])) ++child;
      if (!less(heap_[child], s)) break;
      place(heap_[child], pos);
      pos = child;
    }
    place(s, pos);
  }

  std::vector<Slot> slots_;
  std::vector<uint32_t> free_;
  std::vector<HeapItem> heap_;
  std::vector<uint32_t> heap_pos_;  ///< by slot: its position in heap_
  std::vector<uint32_t> index_;
  size_t count_ = 0;
};

KeyGroupPartitionedTimerQueue::KeyGroupPartitionedTimerQueue(std::string name, StateKind kind, KeyGroupRange range)
    : SnapshotableKeyedState(std::move(name), kind),
      range_(range),
      groups_(static_cast<size_t>(range.size())),
      head_heap_(static_cast<size_t>(range.size())),
      head_pos_(static_cast<size_t>(range.size())),
      heads_(static_cast<size_t>(range.size())) {
  // All groups are empty, so any order is a valid heap.
  for (int32_t i = 0; i < range.size(); ++i) {
    head_heap_[i] = i;
    head_pos_[i] = i;
  }
}

KeyGroupPartitionedTimerQueue::~KeyGroupPartitionedTimerQueue() = default;

KeyGroupPartitionedTimerQueue::GroupQueue& KeyGroupPartitionedTimerQueue::groupQueue(int32_t key_group) {
  SLUICE_CHECK(range_.contains(key_group), "timer key group {} outside [{}, {}]", key_group, range_.start,
               range_.end);
  auto& slot = groups_[key_group - range_.start];
  if (!slot) slot = std::make_unique<GroupQueue>();
  return *slot;
}

bool KeyGroupPartitionedTimerQueue::headLess(int32_t a, int32_t b) const {
  const Head& ha = heads_[a];
  const Head& hb = heads_[b];
  if (ha.empty) return false;  // an empty group sorts last
  if (hb.empty) return true;
  if (ha.time != hb.time) return ha.time < hb.time;
  if (ha.prefix != hb.prefix) return ha.prefix < hb.prefix;
  const GroupQueue& qa = *groups_[a];
  const GroupQueue& qb = *groups_[b];
  if (timerLess(ha.time, ha.prefix, qa.headBytes(), hb.time, hb.prefix, qb.headBytes())) return true;
  if (timerLess(hb.time, hb.prefix, qb.headBytes(), ha.time, ha.prefix, qa.headBytes())) return false;
  return a < b;
}

void KeyGroupPartitionedTimerQueue::fixHead(int32_t local_group) {
  const GroupQueue* q = groups_[local_group].get();
  Head& head = heads_[local_group];
  head.empty = q == nullptr || q->empty();
  if (!head.empty) {
    head.time = q->headTime();
    head.prefix = q->headPrefix();
  }
  size_t pos = static_cast<size_t>(head_pos_[local_group]);
  auto place = [&](int32_t g, size_t p) {
    head_heap_[p] = g;
    head_pos_[g] = static_cast<int32_t>(p);
  };
  while (pos > 0) {
    const size_t parent = (pos - 1) / 2;
    if (!headLess(local_group, head_heap_[parent])) break;
    place(head_heap_[parent], pos);
    pos = parent;
  }
  const size_t n = head_heap_.size();
  while (true) {
    size_t child = 2 * pos + 1;
    if (child >= n) break;
    if (child + 1 < n && headLess(head_heap_[child + 1], head_heap_[child])) ++child;
    if (!headLess(head_heap_[child], local_group)) break;
    place(head_heap_[child], pos);
    pos = child;
  }
  place(local_group, pos);
}

bool KeyGroupPartitionedTimerQueue::add(int32_t key_group, std::string_view key, std::string_view ns, int64_t time) {
  GroupQueue& q = groupQueue(key_group);
  bool became_head = false;
  if (!q.add(key, ns, time, became_head)) return false;
  ++size_;
  // The heap of heads changes only when the group's earliest timer does (new timers are mostly later).
  if (became_head) fixHead(key_group - range_.start);
  return true;
}

bool KeyGroupPartitionedTimerQueue::remove(int32_t key_group, std::string_view key, std::string_view ns,
                                           int64_t time) {
  GroupQueue& q = groupQueue(key_group);
  bool was_head = false;
  if (!q.remove(key, ns, time, was_head)) return false;
  --size_;
  if (was_head) fixHead(key_group - range_.start);
  return true;
}

std::optional<int64_t> KeyGroupPartitionedTimerQueue::peekTime() const {
  if (size_ == 0) return std::nullopt;
  return groups_[head_heap_.front()]->headTime();
}

void KeyGroupPartitionedTimerQueue::poll(TimerEntry& out) {
  SLUICE_CHECK(size_ > 0, "poll of the empty timer queue '{}'", name());
  const int32_t local = head_heap_.front();
  groups_[local]->pollHead(out);
  out.key_group = local + range_.start;
  --size_;
  fixHead(local);
}

TimerEntry KeyGroupPartitionedTimerQueue::poll() {
  TimerEntry out;
  poll(out);
  return out;
}

size_t KeyGroupPartitionedTimerQueue::groupSize(int32_t key_group) const {
  const auto& q = groups_[key_group - range_.start];
  return q ? q->size() : 0;
}

void KeyGroupPartitionedTimerQueue::writeGroup(int32_t key_group, DataOutputView& out) const {
  const auto& q = groups_[key_group - range_.start];
  if (!q) return;
  struct View {
    int64_t time;
    std::string_view key;
    std::string_view ns;
  };
  std::vector<View> timers;
  timers.reserve(q->size());
  q->forEach([&](int64_t time, std::string_view key, std::string_view ns) { timers.push_back(View{time, key, ns}); });
  std::sort(timers.begin(), timers.end(), [](const View& a, const View& b) {
    if (a.key != b.key) return a.key < b.key;
    if (a.ns != b.ns) return a.ns < b.ns;
    return a.time < b.time;
  });
  for (const View& k : timers) {
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
  event_->add(currentGroup(*backend_), backend_->currentKey(), ns, time);
}

void InternalTimerService::registerProcessingTimeTimer(std::string_view ns, int64_t time) {
  processing_->add(currentGroup(*backend_), backend_->currentKey(), ns, time);
}

void InternalTimerService::deleteEventTimeTimer(std::string_view ns, int64_t time) {
  event_->remove(currentGroup(*backend_), backend_->currentKey(), ns, time);
}

void InternalTimerService::deleteProcessingTimeTimer(std::string_view ns, int64_t time) {
  processing_->remove(currentGroup(*backend_), backend_->currentKey(), ns, time);
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
