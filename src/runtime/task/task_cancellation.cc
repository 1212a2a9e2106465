#include "runtime/task/task_cancellation.h"

#include "runtime/network/pipelined_subpartition.h"

namespace sluice::runtime {

namespace {
thread_local const std::atomic<bool>* current_flag = nullptr;
}

TaskCancellationScope::TaskCancellationScope(const std::atomic<bool>* flag) : previous_(current_flag) {
  current_flag = flag;
}

TaskCancellationScope::~TaskCancellationScope() { current_flag = previous_; }

bool taskCancelled() { return current_flag != nullptr && current_flag->load(std::memory_order_relaxed); }

void throwIfTaskCancelled() {
  if (taskCancelled()) throw CancelTaskException();
}

}  // namespace sluice::runtime
