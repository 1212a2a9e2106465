#pragma once
/// LocalChannel: one subpartition of a pipelined result and the input channel that reads it, in the same
/// process, over network buffers (Flink's `PipelinedSubpartition` + `CreditBasedSubpartitionView` on the
/// producer side and `LocalInputChannel` on the consumer side).
///
/// The producer serializes every element into buffers of its partition's LocalBufferPool
/// (StreamElementSerializer: a RowBatch or an object batch as one record, a watermark and the end of the
/// partition as events). Finished buffers go to a CreditBasedSubpartitionView. The consumer takes data
/// buffers only against credit (the channel's exclusive buffers), deserializes them
/// (StreamElementDeserializer) and hands the credit back once a buffer is read and recycled. Backpressure
/// is the producer waiting for a free buffer of its pool.
///
/// Buffer debloating: the consumer announces a size with `announceBufferSize` (a direct call, FLIP-183's
/// local path); the producer limits the buffers it starts afterwards to that size.
///
/// Threading: `write`, `flush`, `hasPendingBytes` on the producer's task thread; `drain` on the consumer's
/// task thread; `announceBufferSize`, `queuedBuffers`, `bytesOut` from any thread.

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>

#include "runtime/network/buffer_pool.h"
#include "runtime/network/credit_based.h"
#include "runtime/network/input_gate.h"
#include "runtime/network/record_serializer.h"
#include "runtime/network/stream_element_codec.h"
#include "runtime/stream_element.h"

namespace sluice::runtime {

/// One local producer→consumer channel over network buffers (see the file comment).
class LocalChannel {
 public:
  /// `pool`: the producing partition's buffers (shared by its subpartitions). `exclusive_credit` (>= 1):
  /// data buffers the consumer may hold unread (taskmanager.network.memory.buffers-per-channel).
  /// `objects`: the edge's object batch serializer (network::edgeRecordSerializer; nullptr for rows).
  LocalChannel(std::shared_ptr<network::LocalBufferPool> pool, int32_t exclusive_credit,
               std::shared_ptr<const ObjectBatchSerializer> objects = nullptr);
  ~LocalChannel();
  LocalChannel(const LocalChannel&) = delete;
  LocalChannel& operator=(const LocalChannel&) = delete;

  /// Producer: serializes `element` (watermarks and the end of partition flush the partial buffer).
  /// Blocks while the pool has no free buffer; throws CancelTaskException when the pool is destroyed
  /// (cancellation).
  void write(StreamElement&& element);
  /// Producer: hands over the partially filled buffer, if any (the output flusher).
  void flush();
  /// Producer: true when a partially filled buffer holds bytes not yet handed over.
  bool hasPendingBytes() const { return pending_bytes_; }

  /// Consumer: calls `listener` (without locks) when buffers become available to `drain`.
  void setAvailabilityListener(std::function<void()> listener);
  /// Consumer: moves every element that can be read now, in order, to `out` tagged with `channel`.
  /// Returns the bytes read (data and event buffers). Throws InputError on corrupt bytes.
  int64_t drain(int channel, std::deque<InputGate::Entry>& out);

  /// Consumer: true when `drain` would read something now.
  bool hasAvailable() const { return view_.isAvailable(); }

  /// Any thread: buffers the producer starts from now on hold at most `bytes` (> 0).
  void announceBufferSize(int32_t bytes) { view_.notifyNewBufferSize(bytes); }
  /// Any thread: finished buffers queued for the consumer (Flink's backlog, data buffers only).
  int32_t queuedBuffers() const { return view_.backlog(); }
  /// Any thread: bytes of finished buffers handed to the consumer side.
  int64_t bytesOut() const { return bytes_out_.load(std::memory_order_relaxed); }
  /// Any thread: nanoseconds the producer waited for a free buffer (backpressure).
  int64_t backPressuredNanos() const { return back_pressured_ns_.load(std::memory_order_relaxed); }

 private:
  static constexpr int32_t kMaxEventsPerDrain = 64;
  network::Buffer requestBuffer();
  void applyBufferSize();

  std::shared_ptr<network::LocalBufferPool> pool_;  // first: outlives every buffer below
  network::CreditBasedSubpartitionView view_;
  std::unique_ptr<network::SpanningRecordSerializer> serializer_;
  network::StreamElementSerializer elements_out_;
  network::StreamElementDeserializer elements_in_;
  bool pending_bytes_ = false;
  std::atomic<int64_t> bytes_out_{0};
  std::atomic<int64_t> back_pressured_ns_{0};
};

}  // namespace sluice::runtime
