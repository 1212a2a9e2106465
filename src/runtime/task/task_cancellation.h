#pragma once
/// The running task's cancellation flag, for operator loops that run long between two records (a HOP
/// window assigning thousands of windows to one row, a watermark firing thousands of timers). Flink
/// interrupts the task thread; here a StreamTask publishes its `cancelled` flag for its thread and such a
/// loop calls `throwIfTaskCancelled()` every few hundred iterations, so a cancel (Ctrl-C, a failover)
/// ends the task within about a millisecond of work instead of after the whole loop.
/// Threading: the scope and the check are per thread; the flag itself is set from any thread.

#include <atomic>
#include <cstdint>

namespace sluice::runtime {

/// Publishes `flag` as the current thread's cancellation flag while it lives (StreamTask::invoke; tests).
class TaskCancellationScope {
 public:
  explicit TaskCancellationScope(const std::atomic<bool>* flag);
  ~TaskCancellationScope();
  TaskCancellationScope(const TaskCancellationScope&) = delete;
  TaskCancellationScope& operator=(const TaskCancellationScope&) = delete;

 private:
  const std::atomic<bool>* previous_;
};

/// True when the current thread runs a task that is being cancelled (false outside a task).
bool taskCancelled();

/// Throws CancelTaskException when taskCancelled() (a relaxed load; cheap enough for every iteration,
/// meant for every few hundred).
void throwIfTaskCancelled();

/// Calls throwIfTaskCancelled() on every `Every`-th call: the counter of a long loop.
template <uint32_t Every = 256>
class CancellationCheck {
 public:
  void tick() {
    if (++n_ % Every == 0) throwIfTaskCancelled();
  }

 private:
  uint32_t n_ = 0;
};

}  // namespace sluice::runtime
