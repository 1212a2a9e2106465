#pragma once
/// InputChannel: the consumer side of one channel of an InputGate (Flink's `InputChannel`), reading the
/// buffers of one producer subpartition, with two implementations:
///
/// - `LocalInputChannel` (this file): the producer is in the same TaskManager; buffers are taken directly
///   from its PipelinedSubpartition's credit-based view, no copy, no socket (Flink's `LocalInputChannel`);
///   object batches come as the producer's objects through its LocalObjectQueue, not serialized.
/// - `RemoteInputChannel` (remote_input_channel.h): buffers arrive over TCP into the consumer's own buffers
///   (Flink's `RemoteInputChannel`).
///
/// Both turn buffers back into StreamElements the same way (network::StreamElementDeserializer with the
/// edge's object batch serializer): events (watermark, end of partition) from event buffers, RowBatches and
/// object batches from data buffers. A data buffer is recycled as soon as it is read, which returns its
/// credit to the producer.
///
/// Threading: `drain` only on the consumer's task thread; `setAvailabilityListener` before the consumer
/// starts; the rest from any thread.

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>

#include "runtime/network/buffer.h"
#include "runtime/network/pipelined_subpartition.h"
#include "runtime/network/stream_element_codec.h"
#include "runtime/stream_element.h"

namespace sluice::runtime {

/// An element and the gate channel it arrived on.
struct InputEntry {
  int channel;
  StreamElement element;
  /// For an unaligned barrier: it arrived while part of a record was read (it overtook the record's last
  /// buffers at the producer), so that record, completed later, still belongs before the barrier.
  bool mid_record = false;
};

/// One input channel of a gate (see the file comment).
class InputChannel {
 public:
  /// `objects`: the edge's object batch serializer (network::edgeRecordSerializer; nullptr for rows).
  explicit InputChannel(std::shared_ptr<const ObjectBatchSerializer> objects = nullptr)
      : elements_(std::move(objects)) {}
  virtual ~InputChannel();

  /// Calls `listener` (without locks, on any thread) when buffers become available to `drain`.
  virtual void setAvailabilityListener(std::function<void()> listener) = 0;
  /// Consumer: moves the elements that can be read now, in order, to `out` tagged with `channel` (at most
  /// a bounded number of buffers per call; call again while `hasAvailable`). Returns the bytes read (data
  /// and event buffers). Throws InputError on corrupt bytes, and the channel's failure (e.g. a broken
  /// connection, naming the peer) when it failed.
  int64_t drain(int channel, std::deque<InputEntry>& out);
  /// True when `drain` would read something (or throw) now.
  virtual bool hasAvailable() const = 0;
  /// Any thread: the producer should start buffers of at most `bytes` (> 0) from now on (FLIP-183).
  virtual void announceBufferSize(int32_t bytes) = 0;
  /// Any thread: data buffers waiting for this consumer (queued at a local producer or received).
  virtual int32_t queuedBuffers() const = 0;
  /// The channel in error messages (producer and consumer subtask; the peer for a remote channel).
  virtual std::string describe() const = 0;
  /// Any thread: bytes `drain` has read so far (data and event buffers).
  int64_t bytesRead() const { return bytes_read_.load(std::memory_order_relaxed); }
  /// Any thread: bytes of the buffers waiting for this consumer, the in-flight data FLIP-183 sizes; 0 when
  /// the channel cannot tell.
  virtual int64_t queuedBytes() const { return 0; }

 protected:
  static constexpr int32_t kMaxBuffersPerDrain = 64;
  /// The next buffer to read, or an empty Buffer.
  virtual network::Buffer nextBuffer() = 0;
  /// `data_buffers` data buffers were read and recycled by the last drain.
  virtual void onBuffersConsumed(int32_t data_buffers) { (void)data_buffers; }
  /// Throws the channel's failure, if any.
  virtual void checkError() const {}
  /// Releases the buffer the deserializer holds; a channel that recycles buffers itself calls it first
  /// in its destructor (the base's members are destroyed after the derived class).
  void releaseBuffers() { elements_.clear(); }
  /// Handle records are read as the batches of `queue` (a local channel).
  void setLocalObjects(std::shared_ptr<network::LocalObjectQueue> queue) { elements_.setLocalObjects(std::move(queue)); }

 private:
  int64_t readBuffers(int channel, std::deque<InputEntry>& out);

  network::StreamElementDeserializer elements_;
  std::atomic<int64_t> bytes_read_{0};
};

/// A channel whose producer is in the same TaskManager (Flink's `LocalInputChannel`).
class LocalInputChannel : public InputChannel {
 public:
  explicit LocalInputChannel(std::shared_ptr<PipelinedSubpartition> subpartition);

  void setAvailabilityListener(std::function<void()> listener) override;
  bool hasAvailable() const override { return subpartition_->view().isAvailable(); }
  void announceBufferSize(int32_t bytes) override { subpartition_->view().notifyNewBufferSize(bytes); }
  int32_t queuedBuffers() const override { return subpartition_->queuedBuffers(); }
  std::string describe() const override { return "local channel " + subpartition_->name(); }
  /// Bytes the producer handed over minus those read (read first, so never below the true value).
  int64_t queuedBytes() const override {
    const int64_t read = bytesRead();
    return std::max<int64_t>(0, subpartition_->bytesOut() - read);
  }

 protected:
  network::Buffer nextBuffer() override;
  void onBuffersConsumed(int32_t data_buffers) override;

 private:
  std::shared_ptr<PipelinedSubpartition> subpartition_;
};

}  // namespace sluice::runtime
