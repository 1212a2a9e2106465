#pragma once
// Waiting on a running job's state in cluster tests.

#include <chrono>
#include <functional>

#include "cluster/mini_cluster.h"

namespace sluice::testing {

// Polls the job's progress until `pred` holds (a state condition, checked every millisecond); false after
// 20 s or when the job ended.
inline bool waitForProgress(cluster::JobHandle& handle, const std::function<bool(const cluster::JobProgress&)>& pred) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < give_up) {
    if (pred(handle.progress())) return true;
    if (handle.waitFor(std::chrono::milliseconds(1))) return pred(handle.progress());
  }
  return false;
}

}  // namespace sluice::testing
