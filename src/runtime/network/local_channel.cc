#include "runtime/network/local_channel.h"

#include <chrono>

#include "common/error.h"

namespace sluice::runtime {

using network::Buffer;

LocalChannel::LocalChannel(std::shared_ptr<network::LocalBufferPool> pool, int32_t exclusive_credit,
                           std::shared_ptr<const ObjectBatchSerializer> objects)
    : pool_(std::move(pool)), view_(exclusive_credit), elements_out_(objects), elements_in_(objects) {
  SLUICE_CHECK(exclusive_credit >= 1, "local channel needs at least one credit, got {}", exclusive_credit);
  serializer_ = std::make_unique<network::SpanningRecordSerializer>(
      [this] { return requestBuffer(); },
      [this](Buffer b) {
        bytes_out_.fetch_add(b.size(), std::memory_order_relaxed);
        view_.add(std::move(b));
      });
}

LocalChannel::~LocalChannel() = default;

Buffer LocalChannel::requestBuffer() {
  Buffer b = pool_->requestBuffer();
  if (b.valid()) return b;
  const auto start = std::chrono::steady_clock::now();
  try {
    b = pool_->requestBufferBlocking();
    back_pressured_ns_.fetch_add(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count(),
        std::memory_order_relaxed);
    return b;
  } catch (const InternalError&) {
    // The cluster destroys the pools of a cancelled job to release producers waiting for a buffer.
    throw CancelTaskException();
  }
}

void LocalChannel::applyBufferSize() {
  const int32_t size = view_.bufferSize();
  if (size != serializer_->bufferSizeLimit()) serializer_->setBufferSizeLimit(size);
}

void LocalChannel::write(StreamElement&& element) {
  applyBufferSize();
  pending_bytes_ = elements_out_.write(element, *serializer_);
}

void LocalChannel::flush() {
  if (!pending_bytes_) return;
  serializer_->flush();
  pending_bytes_ = false;
}

void LocalChannel::setAvailabilityListener(std::function<void()> listener) {
  view_.setAvailabilityListener(std::move(listener));
}

int64_t LocalChannel::drain(int channel, std::deque<InputGate::Entry>& out) {
  int64_t bytes = 0;
  int32_t credit_back = 0;
  int32_t events = 0;
  // Credit comes back only after the loop, so one drain reads at most the channel's credit in data
  // buffers; events need no credit, so their number per drain is capped as well. The gate calls again
  // while buffers remain (hasAvailable).
  while (events < kMaxEventsPerDrain) {
    std::optional<network::BufferAndBacklog> next = view_.pollNext();
    if (!next) break;
    Buffer buffer = std::move(next->buffer);
    bytes += buffer.size();
    const bool data = buffer.isBuffer();
    elements_in_.read(std::move(buffer),
                      [&](StreamElement&& element) { out.push_back(InputGate::Entry{channel, std::move(element)}); });
    // A data buffer is read and recycled: its credit goes back to the producer (Flink's AddCredit).
    if (data) {
      ++credit_back;
    } else {
      ++events;
    }
  }
  if (credit_back > 0) view_.addCredit(credit_back);
  return bytes;
}

}  // namespace sluice::runtime
