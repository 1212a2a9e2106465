#include "runtime/network/input_gate.h"

#include "common/error.h"
#include "runtime/network/blocking_subpartition.h"

namespace sluice::runtime {

InputGate::InputGate(int num_channels) : num_channels_(num_channels) {
  SLUICE_CHECK(num_channels >= 0, "negative channel count {}", num_channels);
}

InputGate::~InputGate() = default;

void InputGate::attachChannel(int channel, std::shared_ptr<InputChannel> input) {
  SLUICE_CHECK(channel >= 0 && channel < numChannels(), "input channel {} outside the gate's {}", channel,
               numChannels());
  input->setAvailabilityListener([this] {
    {
      std::lock_guard<std::mutex> lock(mu_);
      channel_signal_ = true;
      if (!consumer_waiting_) return;
      consumer_waiting_ = false;
    }
    consumer_cv_.notify_one();
  });
  channels_.push_back(std::move(input));
  channel_index_.push_back(channel);
  blocked_.push_back(0);
}

void InputGate::setChannelBlocked(int channel, bool blocked) {
  for (size_t i = 0; i < channels_.size(); ++i) {
    if (channel_index_[i] != channel) continue;
    blocked_[i] = blocked ? 1 : 0;
    if (!blocked && channels_[i]->hasAvailable()) {
      // No availability callback comes for buffers that arrived while the channel was blocked.
      std::lock_guard<std::mutex> lock(mu_);
      channel_signal_ = true;
    }
  }
}

int32_t InputGate::queuedBuffers() const {
  int32_t n = 0;
  for (const auto& l : channels_) n += l->queuedBuffers();
  return n;
}

InputGate::PollResult InputGate::pollAll(std::deque<Entry>& out,
                                         std::optional<std::chrono::steady_clock::time_point> deadline) {
  std::unique_lock<std::mutex> lock(mu_);
  bool paused = false;
  while (!channel_signal_) {
    if (cancelled_.load(std::memory_order_relaxed)) return PollResult::kCancelled;
    if (wakeup_) {
      wakeup_ = false;
      return PollResult::kWakeup;
    }
    if (!paused && !channels_.empty()) {
      // Waiting with nothing to read is idle time, which the debloater's throughput excludes.
      throughput_.pauseMeasurement();
      paused = true;
    }
    consumer_waiting_ = true;
    if (deadline) {
      if (consumer_cv_.wait_until(lock, *deadline) == std::cv_status::timeout && !channel_signal_ &&
          !wakeup_ && !cancelled_.load(std::memory_order_relaxed)) {
        consumer_waiting_ = false;
        return PollResult::kTimeout;
      }
    } else {
      consumer_cv_.wait(lock);
    }
    consumer_waiting_ = false;
  }
  if (cancelled_.load(std::memory_order_relaxed)) return PollResult::kCancelled;
  const bool drain_channels = channel_signal_;
  channel_signal_ = false;
  lock.unlock();
  if (drain_channels) {
    int64_t bytes = 0;
    bool more = false;
    for (size_t i = 0; i < channels_.size(); ++i) {
      if (blocked_[i]) continue;
      bytes += channels_[i]->drain(channel_index_[i], out);
      more = more || channels_[i]->hasAvailable();
    }
    if (more) {
      // No availability callback comes for buffers already queued: look again at the next poll.
      std::lock_guard<std::mutex> relock(mu_);
      channel_signal_ = true;
    }
    if (bytes > 0) {
      throughput_.incomingDataSize(bytes);
      bytes_in_.fetch_add(bytes, std::memory_order_relaxed);
    }
  }
  return out.empty() ? PollResult::kWakeup : PollResult::kData;
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
}

}  // namespace sluice::runtime

namespace sluice::runtime {

void ResultPartition::emit(size_t i, StreamElement&& element) {
  Subpartition& sp = subpartitions[i];
  if (sp.pipelined) {
    sp.pipelined->write(std::move(element));
  } else {
    SLUICE_CHECK(sp.blocking != nullptr, "subpartition {} of a result partition has no channel", i);
    sp.blocking->write(std::move(element));
  }
}

void ResultPartition::flushBuffers() {
  for (auto& sp : subpartitions) {
    if (sp.pipelined) sp.pipelined->flush();
  }
}

bool ResultPartition::hasPendingBytes() const {
  for (const auto& sp : subpartitions) {
    if (sp.pipelined && sp.pipelined->hasPendingBytes()) return true;
  }
  return false;
}

int64_t ResultPartition::bytesOut() const {
  int64_t n = 0;
  for (const auto& sp : subpartitions) {
    if (sp.pipelined) n += sp.pipelined->bytesOut();
    if (sp.blocking) n += sp.blocking->bytesOut();
  }
  return n;
}

bool ResultPartition::isAvailable(int64_t waited_ns) const {
  for (const auto& sp : subpartitions) {
    if (sp.pipelined && !sp.pipelined->isAvailable()) {
      if (waited_ns > 0) sp.pipelined->addBackPressuredNanos(waited_ns);
      return false;
    }
  }
  return true;
}

int64_t ResultPartition::backPressuredNanos() const {
  int64_t n = 0;
  for (const auto& sp : subpartitions) {
    if (sp.pipelined) n += sp.pipelined->backPressuredNanos();
  }
  return n;
}

}  // namespace sluice::runtime
