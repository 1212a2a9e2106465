#include "runtime/network/local_channel.h"

#include <chrono>
#include <string_view>

#include "common/error.h"

namespace sluice::runtime {

using network::Buffer;
using network::EventSerializer;
using network::NetworkEvent;
using network::NetworkEventType;
using network::SpanningRecordDeserializer;

LocalChannel::LocalChannel(std::shared_ptr<network::LocalBufferPool> pool, int32_t exclusive_credit)
    : pool_(std::move(pool)), view_(exclusive_credit) {
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
  if (auto* batch = std::get_if<types::RowBatch>(&element)) {
    scratch_.clear();
    batch->serialize(scratch_);
    serializer_->writeRecord(scratch_);
    pending_bytes_ = true;
  } else if (auto* objects = std::get_if<ObjectBatchPtr>(&element)) {
    {
      std::lock_guard<std::mutex> lock(objects_mu_);
      objects_.push_back(std::move(*objects));
    }
    serializer_->writeEvent(NetworkEvent{NetworkEventType::kObjectBatch, 0, {}});
    pending_bytes_ = false;
  } else if (const auto* mark = std::get_if<Watermark>(&element)) {
    serializer_->writeEvent(NetworkEvent{NetworkEventType::kWatermark, mark->timestamp, {}});
    pending_bytes_ = false;
  } else {
    serializer_->writeEvent(NetworkEvent{NetworkEventType::kEndOfPartition, 0, {}});
    pending_bytes_ = false;
  }
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
    if (!buffer.isBuffer()) {
      ++events;
      const NetworkEvent event = EventSerializer::fromBuffer(buffer);
      buffer.recycle();
      switch (event.type) {
        case NetworkEventType::kWatermark: out.push_back(InputGate::Entry{channel, Watermark{event.value}}); break;
        case NetworkEventType::kEndOfPartition: out.push_back(InputGate::Entry{channel, EndOfPartition{}}); break;
        case NetworkEventType::kObjectBatch: {
          std::lock_guard<std::mutex> lock(objects_mu_);
          SLUICE_CHECK(!objects_.empty(), "object batch marker without an object batch");
          out.push_back(InputGate::Entry{channel, std::move(objects_.front())});
          objects_.pop_front();
          break;
        }
        default: throw InputError("unexpected network event on a local channel");
      }
      continue;
    }
    deserializer_.setNextBuffer(std::move(buffer));
    for (;;) {
      const SpanningRecordDeserializer::Result r = deserializer_.getNextRecord(record_);
      if (r == SpanningRecordDeserializer::Result::kPartialRecord) break;
      std::string_view data(record_);
      out.push_back(InputGate::Entry{channel, types::RowBatch::deserialize(data)});
      if (r == SpanningRecordDeserializer::Result::kLastRecordFromBuffer) break;
    }
    // The buffer is read and recycled: its credit goes back to the producer (Flink's AddCredit).
    ++credit_back;
  }
  if (credit_back > 0) view_.addCredit(credit_back);
  return bytes;
}

}  // namespace sluice::runtime
