#pragma once
/// State that lives for one execution of a DataStream job and is shared by its subtasks: merged
/// accumulators and the split enumerators of FLIP-27 sources (which Flink keeps on the JobManager).
/// Operator factories hold an ExecutionScopeSlot; the client puts a fresh ExecutionScope into it before
/// each execution, and operators take the current one when they open.

#include <functional>
#include <map>
#include <memory>
#include <mutex>

#include "runtime/operators/functions.h"

namespace sluice::runtime {

/// One execution's shared objects. Thread-safe.
class ExecutionScope {
 public:
  AccumulatorRegistry& accumulators() { return accumulators_; }
  /// The object registered under `key` (e.g. a source's node id), created by `create` on first use.
  /// The returned object must be thread-safe itself.
  template <typename T>
  std::shared_ptr<T> shared(int key, const std::function<std::shared_ptr<T>()>& create) {
    std::lock_guard<std::mutex> lock(mu_);
    std::shared_ptr<void>& slot = objects_[key];
    if (!slot) slot = create();
    return std::static_pointer_cast<T>(slot);
  }
  /// Drops the object under `key`: the next `shared` creates a new one (a region failover restarts the
  /// tasks that used it; the tasks still running keep theirs).
  void forget(int key) {
    std::lock_guard<std::mutex> lock(mu_);
    objects_.erase(key);
  }

 private:
  AccumulatorRegistry accumulators_;
  std::mutex mu_;
  std::map<int, std::shared_ptr<void>> objects_;
};

/// Where the current execution's scope is found (thread-safe).
class ExecutionScopeSlot {
 public:
  /// The scope of the running execution (created on first use when none was set).
  std::shared_ptr<ExecutionScope> current() {
    std::lock_guard<std::mutex> lock(mu_);
    if (!scope_) scope_ = std::make_shared<ExecutionScope>();
    return scope_;
  }
  /// Starts a new execution: a fresh scope. Returns it.
  std::shared_ptr<ExecutionScope> reset() {
    std::lock_guard<std::mutex> lock(mu_);
    scope_ = std::make_shared<ExecutionScope>();
    return scope_;
  }

 private:
  std::mutex mu_;
  std::shared_ptr<ExecutionScope> scope_;
};

}  // namespace sluice::runtime
