#include "runtime/network/pipelined_subpartition.h"

#include <chrono>

#include "common/error.h"

namespace sluice::runtime {

using network::Buffer;
using network::NetworkEvent;
using network::NetworkEventType;

PipelinedSubpartition::PipelinedSubpartition(std::shared_ptr<network::LocalBufferPool> pool, int32_t initial_credit,
                                             bool remote, std::string name)
    : pool_(std::move(pool)), view_(initial_credit), remote_(remote), name_(std::move(name)) {
  serializer_ =
      std::make_unique<network::SpanningRecordSerializer>([this] { return requestBuffer(); },
                                                          [this](Buffer b) {
                                                            bytes_out_.fetch_add(b.size(), std::memory_order_relaxed);
                                                            view_.add(std::move(b));
                                                          });
}

PipelinedSubpartition::~PipelinedSubpartition() = default;

Buffer PipelinedSubpartition::requestBuffer() {
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

void PipelinedSubpartition::applyBufferSize() {
  const int32_t size = view_.bufferSize();
  if (size != serializer_->bufferSizeLimit()) serializer_->setBufferSizeLimit(size);
}

void PipelinedSubpartition::write(StreamElement&& element) {
  applyBufferSize();
  if (auto* batch = std::get_if<types::RowBatch>(&element)) {
    scratch_.clear();
    batch->serialize(scratch_);
    serializer_->writeRecord(scratch_);
    pending_bytes_ = true;
  } else if (auto* objects = std::get_if<ObjectBatchPtr>(&element)) {
    if (remote_) {
      throw UserError(
          fmt::format("{}: DataStream records cannot be sent to another TaskManager yet (they have no byte form on the "
                      "network); run the job with local.number-taskmanager: 1",
                      name_));
    }
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

void PipelinedSubpartition::flush() {
  if (!pending_bytes_) return;
  serializer_->flush();
  pending_bytes_ = false;
}

ObjectBatchPtr PipelinedSubpartition::takeObjectBatch() {
  std::lock_guard<std::mutex> lock(objects_mu_);
  SLUICE_CHECK(!objects_.empty(), "object batch marker without an object batch");
  ObjectBatchPtr b = std::move(objects_.front());
  objects_.pop_front();
  return b;
}

}  // namespace sluice::runtime
