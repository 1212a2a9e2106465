#include "runtime/state/internal_timer_service.h"

#include <algorithm>
#include <unordered_map>
#include <utility>

#include "runtime/state/keyed_state_backend.h"

namespace sluice::runtime::state {

namespace {

struct TimerKey {
  int64_t time;
  std::string key;
  std::string ns;
};
struct TimerKeyView {
  int64_t time;
  std::string_view key;
  std::string_view ns;
};
TimerKeyView view(const TimerKey& k) { return TimerKeyView{k.time, k.key, k.ns}; }
TimerKeyView view(const TimerKeyView& k) { return k; }

struct TimerKeyHash {
  using is_transparent = void;
  template <typename K>
  size_t operator()(const K& k) const {
    const TimerKeyView v = view(k);
    return hashCombine(hashCombine(mix64(static_cast<uint64_t>(v.time)), hashBytes(v.key)), hashBytes(v.ns));
  }
};
struct TimerKeyEq {
  using is_transparent = void;
  template <typename A, typename B>
  bool operator()(const A& a, const B& b) const {
    const TimerKeyView x = view(a);
    const TimerKeyView y = view(b);
    return x.time == y.time && x.key == y.key && x.ns == y.ns;
  }
};

/// Timer order: time, then key bytes, then namespace bytes (a total order, so firing is deterministic).
bool timerLess(const TimerKey& a, const TimerKey& b) {
  if (a.time != b.time) return a.time < b.time;
  if (a.key != b.key) return a.key < b.key;
  return a.ns < b.ns;
}

}  // namespace

/// One key group's timers: a binary heap of nodes of a hash map (Flink's HeapPriorityQueueSet). The map
/// deduplicates and holds each node's heap position, so removal is O(log n).
class KeyGroupPartitionedTimerQueue::GroupQueue {
 public:
  using Index = std::unordered_map<TimerKey, size_t, TimerKeyHash, TimerKeyEq>;
  using Node = Index::value_type;

  bool add(std::string_view key, std::string_view ns, int64_t time) {
    if (index_.find(TimerKeyView{time, key, ns}) != index_.end()) return false;
    auto it = index_.emplace(TimerKey{time, std::string(key), std::string(ns)}, heap_.size()).first;
    heap_.push_back(&*it);
    siftUp(heap_.size() - 1);
    return true;
  }
  bool remove(std::string_view key, std::string_view ns, int64_t time) {
    auto it = index_.find(TimerKeyView{time, key, ns});
    if (it == index_.end()) return false;
    removeAt(it->second);
    return true;
  }
  const TimerKey* head() const { return heap_.empty() ? nullptr : &heap_.front()->first; }
  TimerKey pollHead() {
    Node* node = heap_.front();
    TimerKey out{node->first.time, node->first.key, node->first.ns};
    removeAt(0);
    return out;
  }
  size_t size() const { return heap_.size(); }
  const Index& entries() const { return index_; }

 private:
  void removeAt(size_t pos) {
    Node* node = heap_[pos];
    const size_t last = heap_.size() - 1;
    if (pos != last) {
      place(heap_[last], pos);
      heap_.pop_back();
      siftDown(pos);
      siftUp(pos);
    } else {
      heap_.pop_back();
    }
    // Erase through an iterator: the key argument would live in the node being erased.
    index_.erase(index_.find(TimerKeyView{node->first.time, node->first.key, node->first.ns}));
  }
  void place(Node* node, size_t pos) {
    heap_[pos] = node;
    node->second = pos;
  }
  void siftUp(size_t pos) {
    Node* node = heap_[pos];
    while (pos > 0) {
      const size_t parent = (pos - 1) / 2;
      if (!timerLess(node->first, heap_[parent]->first)) break;
      place(heap_[parent], pos);
      pos = parent;
    }
    place(node, pos);
  }
  void siftDown(size_t pos) {
    Node* node = heap_[pos];
    const size_t n = heap_.size();
    while (true) {
      size_t child = 2 * pos + 1;
      if (child >= n) break;
      if (child + 1 < n && timerLess(heap_[child + 1]->first, heap_[child]->first)) ++child;
      if (!timerLess(heap_[child]->first, node->first)) break;
      place(heap_[child], pos);
      pos = child;
    }
    place(node, pos);
  }

  Index index_;
  std::vector<Node*> heap_;
};

KeyGroupPartitionedTimerQueue::KeyGroupPartitionedTimerQueue(std::string name, StateKind kind, KeyGroupRange range)
    : SnapshotableKeyedState(std::move(name), kind),
      range_(range),
      groups_(static_cast<size_t>(range.size())),
      head_heap_(static_cast<size_t>(range.size())),
      head_pos_(static_cast<size_t>(range.size())) {
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
  const TimerKey* ha = groups_[a] ? groups_[a]->head() : nullptr;
  const TimerKey* hb = groups_[b] ? groups_[b]->head() : nullptr;
  if (ha == nullptr) return false;  // an empty group sorts last
  if (hb == nullptr) return true;
  if (timerLess(*ha, *hb)) return true;
  if (timerLess(*hb, *ha)) return false;
  return a < b;
}

void KeyGroupPartitionedTimerQueue::fixHead(int32_t local_group) {
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
  if (!q.add(key, ns, time)) return false;
  ++size_;
  fixHead(key_group - range_.start);
  return true;
}

bool KeyGroupPartitionedTimerQueue::remove(int32_t key_group, std::string_view key, std::string_view ns,
                                           int64_t time) {
  GroupQueue& q = groupQueue(key_group);
  if (!q.remove(key, ns, time)) return false;
  --size_;
  fixHead(key_group - range_.start);
  return true;
}

std::optional<int64_t> KeyGroupPartitionedTimerQueue::peekTime() const {
  if (size_ == 0) return std::nullopt;
  return groups_[head_heap_.front()]->head()->time;
}

TimerEntry KeyGroupPartitionedTimerQueue::poll() {
  SLUICE_CHECK(size_ > 0, "poll of the empty timer queue '{}'", name());
  const int32_t local = head_heap_.front();
  TimerKey k = groups_[local]->pollHead();
  --size_;
  fixHead(local);
  return TimerEntry{k.time, std::move(k.key), std::move(k.ns), local + range_.start};
}

size_t KeyGroupPartitionedTimerQueue::groupSize(int32_t key_group) const {
  const auto& q = groups_[key_group - range_.start];
  return q ? q->size() : 0;
}

void KeyGroupPartitionedTimerQueue::writeGroup(int32_t key_group, DataOutputView& out) const {
  const auto& q = groups_[key_group - range_.start];
  if (!q) return;
  std::vector<const TimerKey*> timers;
  timers.reserve(q->size());
  for (const auto& [k, pos] : q->entries()) timers.push_back(&k);
  std::sort(timers.begin(), timers.end(), [](const TimerKey* a, const TimerKey* b) {
    if (a->key != b->key) return a->key < b->key;
    if (a->ns != b->ns) return a->ns < b->ns;
    return a->time < b->time;
  });
  for (const TimerKey* k : timers) {
    internal::writeBytesField(out, k->key);
    internal::writeBytesField(out, k->ns);
    out.writeVarUint(sizeof(int64_t));
    TypeSerializer<int64_t>::serialize(k->time, out);
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
  while (true) {
    const std::optional<int64_t> next = queue.peekTime();
    if (!next || *next > time) return;
    TimerEntry t = queue.poll();
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
