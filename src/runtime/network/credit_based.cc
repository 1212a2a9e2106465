#include "runtime/network/credit_based.h"

#include <fmt/format.h>

#include "common/error.h"

namespace sluice::runtime::network {

CreditBasedSubpartitionView::CreditBasedSubpartitionView(int32_t initial_credit, int32_t starting_buffer_size)
    : credit_(initial_credit), buffer_size_(starting_buffer_size) {
  SLUICE_CHECK(initial_credit >= 0, "negative initial credit {}", initial_credit);
  SLUICE_CHECK(starting_buffer_size >= 0, "negative starting buffer size {}", starting_buffer_size);
}

bool CreditBasedSubpartitionView::availableLocked() const {
  if (queue_.empty()) return false;
  return !queue_.front().isBuffer() || credit_ > 0;
}

void CreditBasedSubpartitionView::add(Buffer buffer) {
  SLUICE_CHECK(buffer.valid(), "empty buffer added to a subpartition");
  std::function<void()> notify;
  std::function<void()> announce;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const bool was = availableLocked();
    if (buffer.isBuffer()) {
      if (data_buffers_ == 0 && credit_ == 0) announce = backlog_listener_;
      ++data_buffers_;
    }
    queue_.push_back(std::move(buffer));
    if (!was && availableLocked()) notify = availability_listener_;
  }
  if (notify) notify();
  if (announce) announce();
}

void CreditBasedSubpartitionView::addPriority(Buffer buffer, std::string& overtaken) {
  SLUICE_CHECK(buffer.valid() && !buffer.isBuffer(), "a priority element must be an event buffer");
  std::function<void()> notify;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const bool was = availableLocked();
    bool record_started = false;
    for (size_t i = static_cast<size_t>(priority_events_); i < queue_.size(); ++i) {
      const Buffer& b = queue_[i];
      if (!b.isBuffer()) continue;
      int32_t from = 0;
      if (!record_started) {
        if (b.firstRecordOffset() < 0) continue;
        from = b.firstRecordOffset();
        record_started = true;
      }
      overtaken.append(reinterpret_cast<const char*>(b.data()) + from, static_cast<size_t>(b.size() - from));
    }
    queue_.insert(queue_.begin() + priority_events_, std::move(buffer));
    ++priority_events_;
    if (!was && availableLocked()) notify = availability_listener_;
  }
  if (notify) notify();
}

void CreditBasedSubpartitionView::addCredit(int32_t credit) {
  if (credit <= 0) throw InputError(fmt::format("AddCredit with non-positive credit {}", credit));
  std::function<void()> notify;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const bool was = availableLocked();
    credit_ += credit;
    if (!was && availableLocked()) notify = availability_listener_;
  }
  if (notify) notify();
}

bool CreditBasedSubpartitionView::isAvailable() const {
  std::lock_guard<std::mutex> lock(mu_);
  return availableLocked();
}

std::optional<BufferAndBacklog> CreditBasedSubpartitionView::pollNext() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!availableLocked()) return std::nullopt;
  BufferAndBacklog out;
  out.buffer = std::move(queue_.front());
  queue_.pop_front();
  if (priority_events_ > 0) --priority_events_;
  if (out.buffer.isBuffer()) {
    --data_buffers_;
    --credit_;
  }
  out.backlog = data_buffers_;
  out.sequence_number = sequence_number_++;
  return out;
}

int32_t CreditBasedSubpartitionView::backlog() const {
  std::lock_guard<std::mutex> lock(mu_);
  return data_buffers_;
}

int32_t CreditBasedSubpartitionView::credit() const {
  std::lock_guard<std::mutex> lock(mu_);
  return credit_;
}

void CreditBasedSubpartitionView::notifyNewBufferSize(int32_t size) {
  if (size <= 0) throw InputError(fmt::format("announced buffer size must be positive, got {}", size));
  std::lock_guard<std::mutex> lock(mu_);
  buffer_size_ = size;
}

int32_t CreditBasedSubpartitionView::bufferSize() const {
  std::lock_guard<std::mutex> lock(mu_);
  return buffer_size_;
}

void CreditBasedSubpartitionView::setAvailabilityListener(std::function<void()> listener) {
  std::lock_guard<std::mutex> lock(mu_);
  availability_listener_ = std::move(listener);
}

void CreditBasedSubpartitionView::setBacklogListener(std::function<void()> listener) {
  std::lock_guard<std::mutex> lock(mu_);
  backlog_listener_ = std::move(listener);
}

CreditBasedReceiver::CreditBasedReceiver(std::string name, NetworkBufferPool& global, LocalBufferPool& floating_pool,
                                       int32_t exclusive_buffers)
    : name_(std::move(name)), global_(global), floating_pool_(floating_pool), initial_credit_(exclusive_buffers) {
  SLUICE_CHECK(exclusive_buffers >= 0, "negative exclusive buffers {}", exclusive_buffers);
}

CreditBasedReceiver::~CreditBasedReceiver() { releaseAllResources(); }

void CreditBasedReceiver::setup() {
  std::vector<MemorySegment*> segments = global_.requestExclusiveSegments(initial_credit_, name_);
  std::lock_guard<std::mutex> lock(mu_);
  SLUICE_CHECK(!set_up_, "channel {} set up twice", name_);
  set_up_ = true;
  for (MemorySegment* s : segments) exclusive_.emplace_back(s, this);
  required_ = initial_credit_;
}

Buffer CreditBasedReceiver::requestBuffer() {
  std::lock_guard<std::mutex> lock(mu_);
  if (released_) return Buffer();
  std::deque<Buffer>& from = !floating_.empty() ? floating_ : exclusive_;
  if (from.empty()) return Buffer();
  Buffer b = std::move(from.front());
  from.pop_front();
  // Without exclusive buffers the one taken is not replaced before the next backlog says it is needed.
  if (initial_credit_ == 0 && required_ > 0) --required_;
  return b;
}

void CreditBasedReceiver::onBuffer(Buffer buffer, int32_t sequence_number, int32_t backlog) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (released_) return;
    if (sequence_number != expected_sequence_) {
      throw InputError(fmt::format("channel {}: buffer with sequence number {} arrived, expected {}", name_,
                                   sequence_number, expected_sequence_));
    }
    ++expected_sequence_;
    received_.push_back(std::move(buffer));
  }
  if (backlog >= 0) onSenderBacklog(backlog);
}

void CreditBasedReceiver::addCredit(int32_t n, std::unique_lock<std::mutex>& lock) {
  if (n <= 0) return;
  const bool was_zero = unannounced_credit_ == 0;
  unannounced_credit_ += n;
  std::function<void()> notify = was_zero ? credit_listener_ : nullptr;
  lock.unlock();
  if (notify) notify();
}

void CreditBasedReceiver::onSenderBacklog(int32_t backlog) {
  std::unique_lock<std::mutex> lock(mu_);
  if (released_) return;
  required_ = backlog + initial_credit_;
  int32_t gained = 0;
  // Lock order channel -> pool; the pool calls back into notifyBufferAvailable without its lock.
  while (availableLocked() < required_ && !waiting_for_floating_) {
    Buffer b = floating_pool_.requestBufferOrListen(this);
    if (!b.valid()) {
      waiting_for_floating_ = true;
      break;
    }
    floating_.push_back(std::move(b));
    ++gained;
  }
  addCredit(gained, lock);
}

bool CreditBasedReceiver::notifyBufferAvailable(Buffer buffer) {
  std::unique_lock<std::mutex> lock(mu_);
  waiting_for_floating_ = false;
  if (released_ || availableLocked() >= required_) {
    lock.unlock();
    return false;  // `buffer` goes back to the pool when it leaves scope
  }
  floating_.push_back(std::move(buffer));
  const bool more = availableLocked() < required_;
  waiting_for_floating_ = more;
  addCredit(1, lock);
  return more;
}

void CreditBasedReceiver::recycle(MemorySegment* segment) {
  Buffer surplus;
  std::unique_lock<std::mutex> lock(mu_);
  if (released_) {
    lock.unlock();
    global_.recycle(segment);
    return;
  }
  exclusive_.emplace_back(segment, this);
  // Flink's AvailableBufferQueue.addExclusiveBuffer: a floating buffer beyond the need goes back to the
  // pool instead of counting as new credit.
  if (availableLocked() > required_ && !floating_.empty()) {
    surplus = std::move(floating_.front());
    floating_.pop_front();
    lock.unlock();
    return;  // `surplus` is recycled to the pool here, outside the lock
  }
  addCredit(1, lock);
}

Buffer CreditBasedReceiver::pollNext() {
  std::lock_guard<std::mutex> lock(mu_);
  if (received_.empty()) return Buffer();
  Buffer b = std::move(received_.front());
  received_.pop_front();
  return b;
}

int32_t CreditBasedReceiver::getAndResetUnannouncedCredit() {
  std::lock_guard<std::mutex> lock(mu_);
  return std::exchange(unannounced_credit_, 0);
}

int32_t CreditBasedReceiver::unannouncedCredit() const {
  std::lock_guard<std::mutex> lock(mu_);
  return unannounced_credit_;
}

void CreditBasedReceiver::setCreditListener(std::function<void()> listener) {
  std::lock_guard<std::mutex> lock(mu_);
  credit_listener_ = std::move(listener);
}

int32_t CreditBasedReceiver::numRequiredBuffers() const {
  std::lock_guard<std::mutex> lock(mu_);
  return required_;
}

int32_t CreditBasedReceiver::availableBuffers() const {
  std::lock_guard<std::mutex> lock(mu_);
  return availableLocked();
}

int32_t CreditBasedReceiver::floatingBuffers() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int32_t>(floating_.size());
}

int32_t CreditBasedReceiver::queuedBuffers() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int32_t>(received_.size());
}

void CreditBasedReceiver::releaseAllResources() {
  std::deque<Buffer> exclusive, floating, received;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (released_) return;
    released_ = true;
    exclusive.swap(exclusive_);
    floating.swap(floating_);
    received.swap(received_);
  }
  floating_pool_.removeListener(this);
  // Exclusive buffers recycle into this channel, which now forwards them to the NetworkBufferPool.
  exclusive.clear();
  floating.clear();
  received.clear();
}

}  // namespace sluice::runtime::network
