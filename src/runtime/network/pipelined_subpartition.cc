#include "runtime/network/pipelined_subpartition.h"

#include <chrono>

#include "common/error.h"

namespace sluice::runtime {

using network::Buffer;

PipelinedSubpartition::PipelinedSubpartition(std::shared_ptr<network::LocalBufferPool> pool, int32_t initial_credit,
                                             bool remote, std::string name,
                                             std::shared_ptr<const ObjectBatchSerializer> objects, int32_t index,
                                             int32_t starting_buffer_size)
    : pool_(std::move(pool)),
      view_(initial_credit, starting_buffer_size),
      remote_(remote),
      index_(index),
      name_(std::move(name)),
      objects_(objects),
      elements_(std::move(objects)) {
  if (!remote_ && objects_ != nullptr) local_objects_ = std::make_shared<network::LocalObjectQueue>();
  serializer_ =
      std::make_unique<network::SpanningRecordSerializer>([this] { return requestBuffer(); },
                                                          [this](Buffer b) {
                                                            bytes_out_.fetch_add(b.size(), std::memory_order_relaxed);
                                                            view_.add(std::move(b));
                                                          });
}

PipelinedSubpartition::~PipelinedSubpartition() = default;

Buffer PipelinedSubpartition::requestBuffer() {
  Buffer b = index_ >= 0 ? pool_->requestBuffer(index_) : pool_->requestBuffer();
  if (b.valid()) return b;
  const auto start = std::chrono::steady_clock::now();
  try {
    b = index_ >= 0 ? pool_->requestBufferBlocking(index_) : pool_->requestBufferBlocking();
    back_pressured_ns_.fetch_add(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count(),
        std::memory_order_relaxed);
    return b;
  } catch (const InternalError&) {
    // The cluster destroys the pools of a cancelled job to release producers waiting for a buffer.
    throw CancelTaskException();
  }
}

void PipelinedSubpartition::applyBufferSize() {
  const int32_t size = view_.bufferSize();
  if (size != serializer_->bufferSizeLimit()) serializer_->setBufferSizeLimit(size);
}

void PipelinedSubpartition::write(StreamElement&& element) {
  applyBufferSize();
  if (local_objects_) {
    if (auto* batch = std::get_if<ObjectBatchPtr>(&element)) {
      // The handle goes out in a buffer of its own at once: the batch is ready, and holds a credit.
      local_objects_->push(std::move(*batch), handle_);
      serializer_->writeRecord(handle_);
      serializer_->flush();
      pending_bytes_ = false;
      return;
    }
  }
  pending_bytes_ = elements_.write(element, *serializer_);
}

void PipelinedSubpartition::flush() {
  if (!pending_bytes_) return;
  serializer_->flush();
  pending_bytes_ = false;
}

void PipelinedSubpartition::writePriorityBarrier(const CheckpointBarrier& barrier, std::string& overtaken) {
  flush();
  const std::string bytes = network::EventSerializer::serialize(network::barrierEvent(barrier));
  Buffer b = network::unpooledBuffer(static_cast<int32_t>(bytes.size()), network::BufferDataType::kEvent);
  b.append(reinterpret_cast<const uint8_t*>(bytes.data()), static_cast<int32_t>(bytes.size()));
  bytes_out_.fetch_add(b.size(), std::memory_order_relaxed);
  if (!local_objects_) {
    view_.addPriority(std::move(b), overtaken);
    return;
  }
  // The overtaken buffers hold handles: their batches, serialized, are the channel state. The lock keeps
  // the consumer from taking one of them between the capture and the resolution.
  std::lock_guard<std::mutex> lock(local_objects_->mutex());
  std::string raw;
  view_.addPriority(std::move(b), raw);
  local_objects_->resolve(raw, *objects_, overtaken);
}

}  // namespace sluice::runtime
