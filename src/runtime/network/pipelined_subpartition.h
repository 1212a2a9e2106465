#pragma once
/// PipelinedSubpartition: the producer side of one channel (Flink's `PipelinedSubpartition` with its
/// `CreditBasedSubpartitionView`). Whoever reads it — a LocalInputChannel in the same TaskManager or the
/// TCP transport serving a RemoteInputChannel — takes finished buffers from `view()` against credit.
///
/// The producer serializes every element into buffers of its partition's LocalBufferPool
/// (network::StreamElementSerializer: a RowBatch or an object batch as one record, a watermark and the end
/// of the partition as events). Backpressure is the producer waiting for a free buffer of its pool.
/// Towards a consumer in the same TaskManager an object batch is not serialized: it goes through the
/// subpartition's LocalObjectQueue and a 9-byte handle record in a buffer of its own (local_object_queue.h),
/// so the consumer gets the producer's objects; each batch in flight holds one buffer.
///
/// Buffer debloating (FLIP-183): `view().notifyNewBufferSize` (a direct call for a local consumer, a
/// NewBufferSize message for a remote one) limits the buffers the producer starts afterwards; before the
/// first announcement they hold the starting size (`taskmanager.memory.starting-segment-size` with
/// debloating enabled, as Flink since FLINK-36556; the full segment without).
///
/// Threading: `write`, `flush`, `hasPendingBytes` on the producer's task thread; `view()` on the reading
/// side; metrics from any thread.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "runtime/network/buffer_pool.h"
#include "runtime/network/credit_based.h"
#include "runtime/network/local_object_queue.h"
#include "runtime/network/record_serializer.h"
#include "runtime/network/stream_element_codec.h"
#include "runtime/stream_element.h"

namespace sluice::runtime {

/// Thrown inside a task when its job is being cancelled (Flink's CancelTaskException). Never a failure.
class CancelTaskException : public std::exception {
 public:
  const char* what() const noexcept override { return "task cancelled"; }
};

/// The producer half of one pipelined channel (see the file comment).
class PipelinedSubpartition {
 public:
  /// `pool`: the producing partition's buffers (shared by its subpartitions). `initial_credit` (>= 0):
  /// data buffers the reader may take before it announces more credit (a local consumer's exclusive
  /// buffers; 0 for a remote one, whose PartitionRequest brings the credit). `remote`: the consumer is in
  /// another TaskManager. `name` appears in error messages. `objects`: the edge's object batch serializer
  /// (network::edgeRecordSerializer; nullptr when the edge carries SQL rows). `index`: this subpartition's
  /// index in a pool capped per channel (LocalBufferPool::setMaxBuffersPerChannel), or -1 for an uncapped
  /// pool. `starting_buffer_size`: bytes per buffer until the consumer announces a size
  /// (BufferDebloatConfiguration::initialBufferSize; 0 = the full segment).
  PipelinedSubpartition(std::shared_ptr<network::LocalBufferPool> pool, int32_t initial_credit, bool remote,
                        std::string name, std::shared_ptr<const ObjectBatchSerializer> objects = nullptr,
                        int32_t index = -1, int32_t starting_buffer_size = 0);
  ~PipelinedSubpartition();
  PipelinedSubpartition(const PipelinedSubpartition&) = delete;
  PipelinedSubpartition& operator=(const PipelinedSubpartition&) = delete;

  /// Producer: serializes `element` (watermarks and the end of partition flush the partial buffer).
  /// Blocks while the pool has no free buffer (or this subpartition holds max-buffers-per-channel); throws CancelTaskException when the pool is destroyed
  /// (cancellation).
  void write(StreamElement&& element);
  /// Producer: hands over the partially filled buffer, if any (the output flusher).
  void flush();
  /// Producer: an unaligned checkpoint barrier (FLIP-76). Hands over the partial buffer, then queues the
  /// barrier ahead of every queued buffer in an unpooled buffer, so it needs neither a free buffer nor
  /// credit and never waits for backpressure. Appends the overtaken records to `overtaken` (the
  /// subpartition's output channel state, CreditBasedSubpartitionView::addPriority).
  void writePriorityBarrier(const CheckpointBarrier& barrier, std::string& overtaken);
  /// Producer: true when a partially filled buffer holds bytes not yet handed over.
  bool hasPendingBytes() const { return pending_bytes_; }

  /// Reader: the credit-based queue of finished buffers.
  network::CreditBasedSubpartitionView& view() { return view_; }
  const network::CreditBasedSubpartitionView& view() const { return view_; }
  /// The serializer of the edge's object batches (nullptr: rows), for the reading channel.
  const std::shared_ptr<const ObjectBatchSerializer>& objectSerializer() const { return objects_; }
  /// The queue of object batches handed over without serialization (local consumer and an object edge),
  /// else nullptr; the reading LocalInputChannel takes its batches from it.
  const std::shared_ptr<network::LocalObjectQueue>& localObjects() const { return local_objects_; }

  bool isRemote() const { return remote_; }
  const std::string& name() const { return name_; }
  /// Any thread: finished buffers queued for the reader (Flink's backlog, data buffers only).
  int32_t queuedBuffers() const { return view_.backlog(); }
  /// Any thread: bytes of finished buffers handed to the reader side.
  int64_t bytesOut() const { return bytes_out_.load(std::memory_order_relaxed); }
  /// Any thread: nanoseconds the producer waited for a free buffer (backpressure).
  int64_t backPressuredNanos() const { return back_pressured_ns_.load(std::memory_order_relaxed); }
  /// Producer: whether the next record can start without waiting for a buffer (LocalBufferPool::isAvailable).
  bool isAvailable() const { return pool_->isAvailable(index_); }
  /// Producer: the task waited `ns` for isAvailable outside a buffer request; counted as backpressure.
  void addBackPressuredNanos(int64_t ns) { back_pressured_ns_.fetch_add(ns, std::memory_order_relaxed); }

 private:
  network::Buffer requestBuffer();
  void applyBufferSize();

  std::shared_ptr<network::LocalBufferPool> pool_;  // first: outlives every buffer below
  network::CreditBasedSubpartitionView view_;
  const bool remote_;
  const int32_t index_;
  const std::string name_;
  std::shared_ptr<const ObjectBatchSerializer> objects_;
  std::shared_ptr<network::LocalObjectQueue> local_objects_;
  std::string handle_;  ///< the last handle record written
  std::unique_ptr<network::SpanningRecordSerializer> serializer_;
  network::StreamElementSerializer elements_;
  bool pending_bytes_ = false;
  std::atomic<int64_t> bytes_out_{0};
  std::atomic<int64_t> back_pressured_ns_{0};
};

}  // namespace sluice::runtime
