#include "runtime/network/buffer_pool.h"

#include <algorithm>

#include <fmt/format.h>

#include "common/error.h"

namespace sluice::runtime::network {

NetworkBufferPool::NetworkBufferPool(int32_t num_segments, int32_t segment_size)
    : total_(num_segments), segment_size_(segment_size) {
  if (num_segments < 1) {
    throw ConfigError(fmt::format(
        "The network memory holds {} segments of {} bytes; at least one is needed. Raise "
        "'taskmanager.memory.network.min' / 'taskmanager.memory.network.max' / 'taskmanager.memory.network.fraction'.",
        num_segments, segment_size));
  }
  SLUICE_CHECK(segment_size > 0, "segment size must be positive, got {}", segment_size);
  segments_.reserve(static_cast<size_t>(num_segments));
  free_.reserve(static_cast<size_t>(num_segments));
  for (int32_t i = 0; i < num_segments; ++i) {
    segments_.push_back(std::make_unique<MemorySegment>(segment_size));
    free_.push_back(segments_.back().get());
  }
}

NetworkBufferPool::~NetworkBufferPool() = default;

int32_t NetworkBufferPool::availableSegments() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int32_t>(free_.size());
}

int32_t NetworkBufferPool::committedSegments() const {
  std::lock_guard<std::mutex> lock(mu_);
  return committed_;
}

void NetworkBufferPool::insufficient(int32_t required, const std::string& owner) const {
  throw ConfigError(fmt::format(
      "Insufficient number of network buffers for {}: required {}, but only {} of {} segments ({} bytes each) "
      "are available. Raise 'taskmanager.memory.network.fraction', 'taskmanager.memory.network.min' and "
      "'taskmanager.memory.network.max', or lower 'taskmanager.network.memory.buffers-per-channel' and "
      "'taskmanager.network.memory.floating-buffers-per-gate'.",
      owner, required, static_cast<int32_t>(free_.size()) - unfulfilled_reserved_, total_, segment_size_));
}

std::vector<MemorySegment*> NetworkBufferPool::requestExclusiveSegments(int32_t n, const std::string& owner) {
  SLUICE_CHECK(n >= 0, "negative segment request {}", n);
  std::lock_guard<std::mutex> lock(mu_);
  // Free segments beyond the unfulfilled reservations are the only ones nobody was promised.
  if (committed_ + n > total_ || static_cast<int32_t>(free_.size()) - unfulfilled_reserved_ < n) insufficient(n, owner);
  committed_ += n;
  std::vector<MemorySegment*> out(free_.end() - n, free_.end());
  free_.resize(free_.size() - static_cast<size_t>(n));
  return out;
}

void NetworkBufferPool::recycleExclusiveSegments(const std::vector<MemorySegment*>& segments) {
  for (MemorySegment* s : segments) recycle(s);
}

std::shared_ptr<LocalBufferPool> NetworkBufferPool::createBufferPool(int32_t min_buffers, int32_t max_buffers,
                                                                    const std::string& owner) {
  SLUICE_CHECK(min_buffers >= 0 && max_buffers >= std::max(1, min_buffers), "bad buffer pool bounds [{}, {}]",
               min_buffers, max_buffers);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (committed_ + min_buffers > total_ ||
        static_cast<int32_t>(free_.size()) - unfulfilled_reserved_ < min_buffers) {
      insufficient(min_buffers, owner);
    }
    committed_ += min_buffers;
    unfulfilled_reserved_ += min_buffers;
  }
  return std::make_shared<LocalBufferPool>(*this, min_buffers, max_buffers, owner);
}

void NetworkBufferPool::recycle(MemorySegment* segment) {
  std::shared_ptr<LocalBufferPool> wake;
  {
    std::lock_guard<std::mutex> lock(mu_);
    free_.push_back(segment);
    --committed_;
    while (!waiters_.empty() && !wake) {
      wake = waiters_.front().lock();
      waiters_.pop_front();
    }
  }
  if (wake) wake->onGlobalSegmentAvailable();
}

MemorySegment* NetworkBufferPool::requestForPool(int32_t held, int32_t min) {
  std::lock_guard<std::mutex> lock(mu_);
  if (held < min) {
    // Reserved at creation: free_.size() >= unfulfilled_reserved_ always holds.
    SLUICE_CHECK(!free_.empty() && unfulfilled_reserved_ > 0, "reserved network segment missing");
    --unfulfilled_reserved_;
  } else if (static_cast<int32_t>(free_.size()) <= unfulfilled_reserved_) {
    return nullptr;
  }
  MemorySegment* s = free_.back();
  free_.pop_back();
  return s;
}

void NetworkBufferPool::returnFromPool(MemorySegment* segment, int32_t held_before, int32_t min) {
  std::shared_ptr<LocalBufferPool> wake;
  {
    std::lock_guard<std::mutex> lock(mu_);
    free_.push_back(segment);
    if (held_before <= min) ++unfulfilled_reserved_;
    while (!waiters_.empty() && !wake) {
      wake = waiters_.front().lock();
      waiters_.pop_front();
    }
  }
  if (wake) wake->onGlobalSegmentAvailable();
}

void NetworkBufferPool::waitFor(const std::weak_ptr<LocalBufferPool>& pool) {
  std::lock_guard<std::mutex> lock(mu_);
  waiters_.push_back(pool);
}

void NetworkBufferPool::releasePool(int32_t min, int32_t held) {
  std::lock_guard<std::mutex> lock(mu_);
  committed_ -= min;
  unfulfilled_reserved_ -= std::max(0, min - held);
}

LocalBufferPool::LocalBufferPool(NetworkBufferPool& global, int32_t min_buffers, int32_t max_buffers, std::string owner)
    : global_(global), min_(min_buffers), max_(max_buffers), owner_(std::move(owner)) {}

LocalBufferPool::~LocalBufferPool() {
  // Every buffer must have been recycled before the pool goes (documented contract).
  while (!available_.empty()) {
    MemorySegment* s = available_.front();
    available_.pop_front();
    global_.returnFromPool(s, requested_, min_);
    --requested_;
  }
  global_.releasePool(min_, requested_);
}

int32_t LocalBufferPool::requestedSegments() const {
  std::lock_guard<std::mutex> lock(mu_);
  return requested_;
}

int32_t LocalBufferPool::buffersInUse() const {
  std::lock_guard<std::mutex> lock(mu_);
  return in_use_;
}

int32_t LocalBufferPool::peakBuffersInUse() const {
  std::lock_guard<std::mutex> lock(mu_);
  return peak_in_use_;
}

bool LocalBufferPool::isAvailable(int32_t subpartition) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (destroyed_) return true;
  if (subpartition >= 0 && static_cast<size_t>(subpartition) < subpartition_buffers_.size() &&
      subpartition_buffers_[static_cast<size_t>(subpartition)] >= max_per_channel_) {
    return false;
  }
  return !available_.empty() || requested_ < max_;
}

bool LocalBufferPool::hasWaitingRequester() const {
  std::lock_guard<std::mutex> lock(mu_);
  return blocked_ > 0;
}

void LocalBufferPool::countTakenLocked() {
  ++in_use_;
  peak_in_use_ = std::max(peak_in_use_, in_use_);
}

MemorySegment* LocalBufferPool::takeLocked() {
  if (destroyed_) return nullptr;
  if (!available_.empty()) {
    MemorySegment* s = available_.front();
    available_.pop_front();
    return s;
  }
  if (requested_ >= max_) return nullptr;  // a local recycle will wake us
  MemorySegment* s = global_.requestForPool(requested_, min_);
  if (s != nullptr) {
    ++requested_;
    return s;
  }
  if (!waiting_on_global_) {
    waiting_on_global_ = true;
    global_.waitFor(weak_from_this());
  }
  return nullptr;
}

Buffer LocalBufferPool::requestBuffer() {
  std::lock_guard<std::mutex> lock(mu_);
  MemorySegment* s = takeLocked();
  if (s == nullptr) return Buffer();
  countTakenLocked();
  return Buffer(s, this);
}

Buffer LocalBufferPool::requestBufferOrListen(BufferListener* listener) {
  std::lock_guard<std::mutex> lock(mu_);
  MemorySegment* s = takeLocked();
  if (s == nullptr) {
    if (!destroyed_ && std::find(listeners_.begin(), listeners_.end(), listener) == listeners_.end())
      listeners_.push_back(listener);
    return Buffer();
  }
  countTakenLocked();
  return Buffer(s, this);
}

void LocalBufferPool::removeListener(BufferListener* listener) {
  std::lock_guard<std::mutex> lock(mu_);
  listeners_.erase(std::remove(listeners_.begin(), listeners_.end(), listener), listeners_.end());
}

Buffer LocalBufferPool::requestBufferBlocking() {
  std::unique_lock<std::mutex> lock(mu_);
  ++blocked_;
  for (;;) {
    if (destroyed_) {
      --blocked_;
      throw InternalError(fmt::format("buffer pool of {} was destroyed while waiting for a buffer", owner_));
    }
    MemorySegment* s = takeLocked();
    if (s != nullptr) {
      --blocked_;
      countTakenLocked();
      return Buffer(s, this);
    }
    available_cv_.wait(lock);
  }
}

void LocalBufferPool::destroy() {
  std::lock_guard<std::mutex> lock(mu_);
  destroyed_ = true;
  listeners_.clear();
  available_cv_.notify_all();
}

void LocalBufferPool::setMaxBuffersPerChannel(int32_t num_subpartitions, int32_t max_per_channel) {
  SLUICE_CHECK(num_subpartitions >= 1 && max_per_channel >= 1, "bad per-channel cap {} for {} subpartitions",
               max_per_channel, num_subpartitions);
  std::lock_guard<std::mutex> lock(mu_);
  SLUICE_CHECK(max_per_channel_ == 0, "the per-channel cap of {} is already set", owner_);
  max_per_channel_ = max_per_channel;
  subpartition_buffers_.assign(static_cast<size_t>(num_subpartitions), 0);
  for (int32_t i = 0; i < num_subpartitions; ++i) {
    subpartition_recyclers_.push_back(std::make_unique<SubpartitionRecycler>(this, i));
  }
}

Buffer LocalBufferPool::requestBuffer(int32_t subpartition) {
  std::lock_guard<std::mutex> lock(mu_);
  SLUICE_CHECK(subpartition >= 0 && static_cast<size_t>(subpartition) < subpartition_buffers_.size(),
               "subpartition {} outside the {} of {}", subpartition, subpartition_buffers_.size(), owner_);
  int32_t& held = subpartition_buffers_[static_cast<size_t>(subpartition)];
  if (held >= max_per_channel_) return Buffer();
  MemorySegment* s = takeLocked();
  if (s == nullptr) return Buffer();
  countTakenLocked();
  ++held;
  return Buffer(s, subpartition_recyclers_[static_cast<size_t>(subpartition)].get());
}

Buffer LocalBufferPool::requestBufferBlocking(int32_t subpartition) {
  std::unique_lock<std::mutex> lock(mu_);
  SLUICE_CHECK(subpartition >= 0 && static_cast<size_t>(subpartition) < subpartition_buffers_.size(),
               "subpartition {} outside the {} of {}", subpartition, subpartition_buffers_.size(), owner_);
  int32_t& held = subpartition_buffers_[static_cast<size_t>(subpartition)];
  ++blocked_;
  for (;;) {
    if (destroyed_) {
      --blocked_;
      throw InternalError(fmt::format("buffer pool of {} was destroyed while waiting for a buffer", owner_));
    }
    if (held < max_per_channel_) {
      MemorySegment* s = takeLocked();
      if (s != nullptr) {
        --blocked_;
        countTakenLocked();
        ++held;
        return Buffer(s, subpartition_recyclers_[static_cast<size_t>(subpartition)].get());
      }
    }
    available_cv_.wait(lock);
  }
}

int32_t LocalBufferPool::subpartitionBuffers(int32_t subpartition) const {
  std::lock_guard<std::mutex> lock(mu_);
  return subpartition_buffers_.at(static_cast<size_t>(subpartition));
}

void LocalBufferPool::SubpartitionRecycler::recycle(MemorySegment* segment) {
  std::unique_lock<std::mutex> lock(pool_->mu_);
  // The subpartition may be below its cap again: wake every waiter (each checks its own subpartition).
  if (pool_->subpartition_buffers_[static_cast<size_t>(index_)]-- == pool_->max_per_channel_) {
    pool_->available_cv_.notify_all();
  }
  pool_->recycleLocked(segment, lock);
}

void LocalBufferPool::recycle(MemorySegment* segment) {
  std::unique_lock<std::mutex> lock(mu_);
  recycleLocked(segment, lock);
}

void LocalBufferPool::recycleLocked(MemorySegment* segment, std::unique_lock<std::mutex>& lock) {
  --in_use_;
  if (!listeners_.empty() && !destroyed_) {
    BufferListener* listener = listeners_.front();
    listeners_.pop_front();
    countTakenLocked();
    lock.unlock();
    const bool more = listener->notifyBufferAvailable(Buffer(segment, this));
    if (more) {
      std::lock_guard<std::mutex> relock(mu_);
      if (!destroyed_) listeners_.push_back(listener);
    }
    return;
  }
  if (blocked_ == 0 && requested_ > min_) {
    // Excess over the guaranteed minimum goes back so other pools can float it.
    const int32_t held_before = requested_--;
    lock.unlock();
    global_.returnFromPool(segment, held_before, min_);
    return;
  }
  available_.push_back(segment);
  // With per-subpartition caps a waiter may be waiting for its own subpartition: wake all to re-check.
  if (max_per_channel_ > 0) {
    available_cv_.notify_all();
  } else {
    available_cv_.notify_one();
  }
}

void LocalBufferPool::onGlobalSegmentAvailable() {
  std::unique_lock<std::mutex> lock(mu_);
  waiting_on_global_ = false;
  if (destroyed_) return;
  if (!listeners_.empty()) {
    MemorySegment* s = takeLocked();
    if (s == nullptr) return;
    BufferListener* listener = listeners_.front();
    listeners_.pop_front();
    countTakenLocked();
    lock.unlock();
    const bool more = listener->notifyBufferAvailable(Buffer(s, this));
    if (more) {
      std::lock_guard<std::mutex> relock(mu_);
      if (!destroyed_) listeners_.push_back(listener);
    }
    return;
  }
  if (blocked_ > 0) available_cv_.notify_all();
}

}  // namespace sluice::runtime::network
