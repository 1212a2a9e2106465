#pragma once
/// Timers kept in keyed state (Flink's InternalTimerServiceImpl over KeyGroupPartitionedPriorityQueue of
/// HeapPriorityQueueSet, flink-checkpointing.md §3.4). A timer is (key, namespace, time), deduplicated
/// (see KeyGroupPartitionedTimerQueue for the layout). Timers are snapshotted with the keyed state as the states `_timer_state/event_<name>`
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

/// The deduplicating timer queue of one time domain, partitioned by key group: timers are bucketed by
/// time (windows and most process functions register many timers at few distinct times), each bucket a
/// flat vector with a hash index for deduplication and deletion, sorted by (key, namespace) once, when
/// its time comes up. So add and remove are O(1) expected, poll O(1) amortized plus one sort per time.
/// Snapshots group the timers by key group (groupSize / writeGroup).
class KeyGroupPartitionedTimerQueue : public SnapshotableKeyedState {
 public:
  KeyGroupPartitionedTimerQueue(std::string name, StateKind kind, KeyGroupRange range);
  ~KeyGroupPartitionedTimerQueue() override;

  /// Adds a timer; false when the same (key, namespace, time) is already queued.
  bool add(int32_t key_group, std::string_view key, std::string_view ns, int64_t time);
  /// Removes a timer; false when it was not queued.
  bool remove(int32_t key_group, std::string_view key, std::string_view ns, int64_t time);
  /// add / remove with `key_hash` = internal::fastBytesHash(key) computed by the caller (CurrentKey::hash).
  bool addHashed(int32_t key_group, std::string_view key, uint64_t key_hash, std::string_view ns, int64_t time);
  bool removeHashed(int32_t key_group, std::string_view key, uint64_t key_hash, std::string_view ns, int64_t time);
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
  struct Impl;
  std::unique_ptr<Impl> impl_;
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
