#pragma once
/// Timers kept in keyed state (Flink's InternalTimerServiceImpl over KeyGroupPartitionedPriorityQueue of
/// HeapPriorityQueueSet, flink-checkpointing.md §3.4). A timer is (key, namespace, time), deduplicated;
/// each key group has a binary heap plus a hash set, and a heap of the groups' heads yields the earliest
/// timer overall. Timers are snapshotted with the keyed state as the states `_timer_state/event_<name>`
/// and `_timer_state/processing_<name>`. Timers of equal time fire ordered by key bytes, then namespace.
/// Threading: the task thread only.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/state/keyed_state.h"

namespace sluice::runtime::state {

class KeyedStateBackend;

/// A timer as it fires.
struct TimerEntry {
  int64_t time = 0;  ///< ms (event time or processing time, by queue)
  std::string key;   ///< key bytes
  std::string ns;    ///< namespace bytes
  int32_t key_group = 0;
};

/// The deduplicating timer queue of one time domain, partitioned by key group.
class KeyGroupPartitionedTimerQueue : public SnapshotableKeyedState {
 public:
  KeyGroupPartitionedTimerQueue(std::string name, StateKind kind, KeyGroupRange range);
  ~KeyGroupPartitionedTimerQueue() override;

  /// Adds a timer; false when the same (key, namespace, time) is already queued.
  bool add(int32_t key_group, std::string_view key, std::string_view ns, int64_t time);
  /// Removes a timer; false when it was not queued.
  bool remove(int32_t key_group, std::string_view key, std::string_view ns, int64_t time);
  /// Time of the earliest timer, nullopt when empty.
  std::optional<int64_t> peekTime() const;
  /// Removes and returns the earliest timer. The queue must not be empty.
  TimerEntry poll();
  /// poll() into `out`, reusing its strings' capacity.
  void poll(TimerEntry& out);
  size_t size() const { return size_; }

  size_t groupSize(int32_t key_group) const override;
  void writeGroup(int32_t key_group, DataOutputView& out) const override;
  void restoreEntry(int32_t key_group, std::string_view key, std::string_view ns, std::string_view value) override;

 private:
  class GroupQueue;
  bool headLess(int32_t a, int32_t b) const;
  void fixHead(int32_t local_group);
  GroupQueue& groupQueue(int32_t key_group);

  KeyGroupRange range_;
  std::vector<std::unique_ptr<GroupQueue>> groups_;  ///< by key group - range.start; null when never used
  std::vector<int32_t> head_heap_;                   ///< local group indices, earliest head first
  std::vector<int32_t> head_pos_;                    ///< position of each local group in head_heap_
  /// Each local group's earliest timer as head_heap_ compares it (time and key prefix; set by fixHead).
  struct Head {
    bool empty = true;
    int64_t time = 0;
    uint64_t prefix = 0;
  };
  std::vector<Head> heads_;
  size_t size_ = 0;
};

/// The event-time and processing-time timers of one timer service name, for the backend's current key
/// (Flink's InternalTimerService). Obtained from KeyedStateBackend::getInternalTimerService.
class InternalTimerService {
 public:
  /// Called for each firing timer with the backend's current key already set to the timer's key.
  using Callback = std::function<void(std::string_view key, int32_t key_group, std::string_view ns, int64_t time)>;

  InternalTimerService(KeyedStateBackend* backend, KeyGroupPartitionedTimerQueue* event_timers,
                       KeyGroupPartitionedTimerQueue* processing_timers);

  /// Registers an event-time timer at `time` (ms) in namespace `ns` for the current key (no-op when it
  /// exists).
  void registerEventTimeTimer(std::string_view ns, int64_t time);
  void registerProcessingTimeTimer(std::string_view ns, int64_t time);
  void deleteEventTimeTimer(std::string_view ns, int64_t time);
  void deleteProcessingTimeTimer(std::string_view ns, int64_t time);

  /// The last watermark passed to advanceWatermark; INT64_MIN before the first.
  int64_t currentWatermark() const { return current_watermark_; }
  /// Sets the watermark to `watermark` and fires every event-time timer with time <= watermark in time
  /// order, timers registered by `fn` included.
  void advanceWatermark(int64_t watermark, const Callback& fn);
  /// Time of the earliest processing-time timer, nullopt when none.
  std::optional<int64_t> nextProcessingTime() const { return processing_->peekTime(); }
  /// Fires every processing-time timer with time <= now (ms), in time order, timers registered by `fn`
  /// included.
  void advanceProcessingTime(int64_t now, const Callback& fn);

  size_t numEventTimeTimers() const { return event_->size(); }
  size_t numProcessingTimeTimers() const { return processing_->size(); }

 private:
  void fireUpTo(KeyGroupPartitionedTimerQueue& queue, int64_t time, const Callback& fn);

  KeyedStateBackend* backend_;
  KeyGroupPartitionedTimerQueue* event_;
  KeyGroupPartitionedTimerQueue* processing_;
  int64_t current_watermark_ = INT64_MIN;
};

}  // namespace sluice::runtime::state
