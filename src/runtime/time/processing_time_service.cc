#include "runtime/time/processing_time_service.h"

#include <chrono>

namespace sluice::runtime {

ProcessingTimeService::ProcessingTimeService()
    : clock_([] {
        return std::chrono::duration_cast<std::chrono::milliseconds>(
                   std::chrono::system_clock::now().time_since_epoch())
            .count();
      }) {}

void ProcessingTimeService::registerTimer(int64_t timestamp, Callback callback) {
  timers_.emplace(timestamp, std::move(callback));
}

size_t ProcessingTimeService::fireDue() {
  if (timers_.empty()) return 0;
  size_t n = 0;
  int64_t now = clock_();
  while (!timers_.empty() && timers_.begin()->first <= now) {
    auto it = timers_.begin();
    const int64_t ts = it->first;
    Callback cb = std::move(it->second);
    timers_.erase(it);
    cb(ts);
    ++n;
  }
  return n;
}

size_t ProcessingTimeService::fireAll() {
  size_t n = 0;
  while (!timers_.empty()) {
    auto it = timers_.begin();
    const int64_t ts = it->first;
    Callback cb = std::move(it->second);
    timers_.erase(it);
    cb(ts);
    ++n;
  }
  return n;
}

std::optional<int64_t> ProcessingTimeService::nextTimer() const {
  if (timers_.empty()) return std::nullopt;
  return timers_.begin()->first;
}

}  // namespace sluice::runtime
