#pragma once
/// Processing-time timers of one task (Flink's ProcessingTimeService), run on the task thread: the task
/// loop calls fireDue() between two default actions and sleeps no longer than the next timer, so timer
/// callbacks never race with element processing (no locks in operators).

#include <cstdint>
#include <functional>
#include <map>
#include <optional>

namespace sluice::runtime {

/// Task-thread timer queue over a wall clock in ms since the epoch. Not thread-safe: every method is
/// called from the owning task's thread only.
class ProcessingTimeService {
 public:
  using Callback = std::function<void(int64_t timestamp)>;
  using Clock = std::function<int64_t()>;

  /// Uses the system clock (ms since the epoch).
  ProcessingTimeService();
  /// Uses `clock` instead (tests drive time by hand).
  explicit ProcessingTimeService(Clock clock) : clock_(std::move(clock)) {}

  /// Current processing time in ms.
  int64_t currentProcessingTime() const { return clock_(); }
  /// Runs `callback(timestamp)` on the task thread once the clock reaches `timestamp` (ms). Timers with the
  /// same timestamp run in registration order.
  void registerTimer(int64_t timestamp, Callback callback);
  /// Runs every timer whose time has come, in time order (timers a callback registers for a time already
  /// reached run too). Returns how many ran. Exceptions from a callback propagate.
  size_t fireDue();
  /// Runs every pending timer regardless of the clock, in time order (used nowhere on the hot path; for
  /// operators that drain timers at the end of a bounded input). Returns how many ran.
  size_t fireAll();
  /// Time (ms) of the earliest pending timer.
  std::optional<int64_t> nextTimer() const;
  bool empty() const { return timers_.empty(); }

 private:
  Clock clock_;
  std::multimap<int64_t, Callback> timers_;
};

}  // namespace sluice::runtime
