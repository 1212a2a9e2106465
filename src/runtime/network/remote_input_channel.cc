#include "runtime/network/remote_input_channel.h"

#include <fmt/format.h>

#include "common/error.h"
#include "runtime/network/record_serializer.h"

namespace sluice::runtime {

using network::Buffer;

RemoteInputChannel::RemoteInputChannel(std::string name, network::InputChannelId id, std::string partition_id,
                                       int32_t subpartition, std::shared_ptr<PartitionRequestClient> client,
                                       network::NetworkBufferPool& global, network::LocalBufferPool& floating_pool,
                                       int32_t exclusive_buffers, std::shared_ptr<const ObjectBatchSerializer> objects)
    : InputChannel(std::move(objects)),
      name_(std::move(name)),
      id_(id),
      partition_id_(std::move(partition_id)),
      subpartition_(subpartition),
      client_(std::move(client)),
      floating_owner_(floating_pool.weak_from_this().lock()),
      receiver_(name_, global, floating_pool, exclusive_buffers) {
  SLUICE_CHECK(exclusive_buffers >= 0, "remote channel {} with {} exclusive buffers", name_, exclusive_buffers);
  SLUICE_CHECK(client_ != nullptr, "remote channel {} without a connection", name_);
  // Credit gained on any thread (a recycled exclusive buffer, a floating buffer granted) goes out as
  // AddCredit from the I/O thread.
  receiver_.setCreditListener([this] { client_->notifyCreditAvailable(id_); });
}

RemoteInputChannel::~RemoteInputChannel() = default;

void RemoteInputChannel::setup() { receiver_.setup(); }

void RemoteInputChannel::requestSubpartition(const std::shared_ptr<RemoteInputChannel>& self) {
  SLUICE_CHECK(self.get() == this, "requestSubpartition of {} with another channel", name_);
  client_->requestSubpartition(self);
}

void RemoteInputChannel::onBuffer(Buffer buffer, int32_t sequence_number, int32_t backlog) {
  bytes_received_.fetch_add(buffer.size(), std::memory_order_relaxed);
  receiver_.onBuffer(std::move(buffer), sequence_number, backlog);
  notifyAvailable();
}

void RemoteInputChannel::onEvent(std::string_view bytes, int32_t sequence_number, int32_t backlog) {
  const network::NetworkEvent event = network::EventSerializer::deserialize(bytes);
  // Events arrive without credit, so they do not take the channel's buffers: each gets its own segment.
  Buffer buffer = network::unpooledBuffer(static_cast<int32_t>(std::max<size_t>(1, bytes.size())),
                                          network::BufferDataType::kEvent);
  buffer.append(reinterpret_cast<const uint8_t*>(bytes.data()), static_cast<int32_t>(bytes.size()));
  bytes_received_.fetch_add(buffer.size(), std::memory_order_relaxed);
  receiver_.onBuffer(std::move(buffer), sequence_number, backlog);
  if (event.type == network::NetworkEventType::kEndOfPartition) finished_.store(true, std::memory_order_release);
  notifyAvailable();
}

void RemoteInputChannel::onSenderBacklog(int32_t backlog) { receiver_.onSenderBacklog(backlog); }

Buffer RemoteInputChannel::nextBuffer() {
  Buffer b = receiver_.pollNext();
  if (!b.valid() && !released_ && isFinished() && receiver_.queuedBuffers() == 0) {
    // Everything up to the end of partition has been read: nothing more arrives on this channel.
    released_ = true;
    receiver_.releaseAllResources();
  }
  return b;
}

void RemoteInputChannel::onError(std::exception_ptr error) {
  if (isFinished()) return;  // everything arrived: a later connection failure does not concern the channel
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (error_) return;
    error_ = std::move(error);
  }
  failed_.store(true, std::memory_order_release);
  notifyAvailable();
}

void RemoteInputChannel::notifyAvailable() {
  std::function<void()> listener;
  {
    std::lock_guard<std::mutex> lock(mu_);
    listener = listener_;
  }
  if (listener) listener();
}

void RemoteInputChannel::setAvailabilityListener(std::function<void()> listener) {
  std::lock_guard<std::mutex> lock(mu_);
  listener_ = std::move(listener);
}

bool RemoteInputChannel::hasAvailable() const {
  return failed_.load(std::memory_order_acquire) || receiver_.queuedBuffers() > 0;
}

void RemoteInputChannel::announceBufferSize(int32_t bytes) {
  if (!isFinished()) client_->notifyNewBufferSize(id_, bytes);
}

std::string RemoteInputChannel::describe() const {
  return fmt::format("remote channel {} from {}", name_, client_->peerName());
}

void RemoteInputChannel::checkError() const {
  if (!failed_.load(std::memory_order_acquire)) return;
  std::exception_ptr error;
  {
    std::lock_guard<std::mutex> lock(mu_);
    error = error_;
  }
  std::rethrow_exception(error);
}

}  // namespace sluice::runtime
