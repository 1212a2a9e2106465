#include "runtime/network/input_channel.h"

#include "common/error.h"

namespace sluice::runtime {

using network::Buffer;

InputChannel::~InputChannel() = default;

int64_t InputChannel::drain(int channel, std::deque<InputEntry>& out) {
  checkError();
  try {
    return readBuffers(channel, out);
  } catch (const InputError& e) {
    // Corrupt bytes: say where they came from.
    throw InputError(fmt::format("{}: {}", describe(), e.what()));
  }
}

int64_t InputChannel::readBuffers(int channel, std::deque<InputEntry>& out) {
  int64_t bytes = 0;
  int32_t data_buffers = 0;
  // One drain reads a bounded number of buffers (a local channel also at most its credit, which comes
  // back only after the loop); the gate calls again while buffers remain (hasAvailable).
  bool barrier = false;
  for (int32_t n = 0; n < kMaxBuffersPerDrain && !barrier; ++n) {
    Buffer buffer = nextBuffer();
    if (!buffer.valid()) break;
    bytes += buffer.size();
    const bool data = buffer.isBuffer();
    elements_.read(std::move(buffer), [&](StreamElement&& e) {
      const bool is_barrier = std::holds_alternative<CheckpointBarrier>(e);
      barrier = barrier || is_barrier;
      out.push_back(InputEntry{channel, std::move(e), is_barrier && elements_.hasUnfinishedData()});
    });
    if (data) ++data_buffers;
  }
  // Nothing after a barrier is read in the same drain: an aligned checkpoint blocks the channel there
  // (Flink's CheckpointedInputGate), so the records after it stay in the channel and hold its credit.
  if (data_buffers > 0) onBuffersConsumed(data_buffers);
  bytes_read_.fetch_add(bytes, std::memory_order_relaxed);
  return bytes;
}

LocalInputChannel::LocalInputChannel(std::shared_ptr<PipelinedSubpartition> subpartition)
    : InputChannel(subpartition->objectSerializer()), subpartition_(std::move(subpartition)) {
  SLUICE_CHECK(!subpartition_->isRemote(), "local input channel over the remote subpartition {}",
               subpartition_->name());
  if (subpartition_->localObjects()) setLocalObjects(subpartition_->localObjects());
}

void LocalInputChannel::setAvailabilityListener(std::function<void()> listener) {
  subpartition_->view().setAvailabilityListener(std::move(listener));
}

Buffer LocalInputChannel::nextBuffer() {
  std::optional<network::BufferAndBacklog> next = subpartition_->view().pollNext();
  return next ? std::move(next->buffer) : Buffer();
}

void LocalInputChannel::onBuffersConsumed(int32_t data_buffers) {
  // The buffers are read and recycled: their credit goes back to the producer (Flink's AddCredit).
  subpartition_->view().addCredit(data_buffers);
}

}  // namespace sluice::runtime
