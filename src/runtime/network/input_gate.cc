#include "runtime/network/input_gate.h"

#include "common/error.h"

namespace sluice::runtime {

InputGate::InputGate(int num_channels, int capacity)
    : capacity_(capacity), queued_(static_cast<size_t>(num_channels), 0) {
  SLUICE_CHECK(capacity >= 1, "channel capacity must be at least 1, got {}", capacity);
}

void InputGate::push(int channel, StreamElement&& element) {
  std::unique_lock<std::mutex> lock(mu_);
  int& queued = queued_[static_cast<size_t>(channel)];
  if (queued >= capacity_ && !cancelled_.load(std::memory_order_relaxed)) {
    ++waiting_producers_;
    producer_cv_.wait(lock, [&] { return queued < capacity_ || cancelled_.load(std::memory_order_relaxed); });
    --waiting_producers_;
  }
  if (cancelled_.load(std::memory_order_relaxed)) throw CancelTaskException();
  queue_.push_back(Entry{channel, std::move(element)});
  ++queued;
  if (consumer_waiting_) {
    consumer_waiting_ = false;
    lock.unlock();
    consumer_cv_.notify_one();
  }
}

InputGate::PollResult InputGate::pollAll(std::deque<Entry>& out,
                                         std::optional<std::chrono::steady_clock::time_point> deadline) {
  std::unique_lock<std::mutex> lock(mu_);
  while (queue_.empty()) {
    if (cancelled_.load(std::memory_order_relaxed)) return PollResult::kCancelled;
    if (wakeup_) {
      wakeup_ = false;
      return PollResult::kWakeup;
    }
    consumer_waiting_ = true;
    if (deadline) {
      if (consumer_cv_.wait_until(lock, *deadline) == std::cv_status::timeout && queue_.empty() && !wakeup_ &&
          !cancelled_.load(std::memory_order_relaxed)) {
        consumer_waiting_ = false;
        return PollResult::kTimeout;
      }
    } else {
      consumer_cv_.wait(lock);
    }
    consumer_waiting_ = false;
  }
  if (cancelled_.load(std::memory_order_relaxed)) return PollResult::kCancelled;
  out.swap(queue_);
  for (int& q : queued_) q = 0;
  const bool notify = waiting_producers_ > 0;
  lock.unlock();
  if (notify) producer_cv_.notify_all();
  return PollResult::kData;
}

void InputGate::wakeup() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    wakeup_ = true;
  }
  consumer_cv_.notify_one();
}

void InputGate::cancel() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    cancelled_.store(true, std::memory_order_release);
  }
  consumer_cv_.notify_all();
  producer_cv_.notify_all();
}

}  // namespace sluice::runtime
