#pragma once
/// LocalObjectQueue: DataStream object batches handed from a producer to a consumer in the same
/// TaskManager without serializing them (the consumer gets the producer's objects). The producer puts a
/// batch here and writes a handle record in its place into the channel's network buffers — record kind 3
/// then the u64 sequence number of the batch (little endian), 9 bytes — in a buffer of its own, handed
/// over at once. The consumer takes the batch when it reads the handle. So a batch keeps its place among
/// the channel's records, watermarks and barriers, and holds one network buffer (one credit) until it is
/// read: backpressure bounds the batches in flight as it bounded their bytes.
///
/// Unaligned checkpoints: the buffers an unaligned barrier overtakes hold handles; resolve() turns them
/// into the full object batch records (the batches are still delivered after the barrier), so the
/// channel state is the same bytes as on a serializing channel.
///
/// Threading: push on the producer's task thread, take on the consumer's; resolve on the producer with
/// mutex() held (it keeps the consumer from taking a batch meanwhile).

#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

#include "runtime/object_batch.h"
#include "runtime/serialization/object_batch_serializer.h"

namespace sluice::runtime::network {

class LocalObjectQueue {
 public:
  /// The record kind byte of a handle (1 and 2 are a RowBatch and a serialized object batch).
  static constexpr char kHandleRecord = 3;
  /// The kind byte of a serialized object batch record (stream_element_codec.h).
  static constexpr char kObjectBatchRecord = 2;
  static constexpr size_t kHandleBytes = 9;

  /// Producer: queues `batch` and writes its handle record into `handle` (replaced).
  void push(ObjectBatchPtr batch, std::string& handle);
  /// Consumer: the batch of the handle record `record` (kind byte included). InputError when the record
  /// is malformed or names another batch than the oldest queued one.
  ObjectBatchPtr take(std::string_view record);
  /// Producer, with mutex() held: appends `raw` (records as buffers hold them: u32 length, then the
  /// record) to `out`, each handle replaced by the object batch record (kind 2, `objects` bytes) of its
  /// queued batch. InternalError when a handle's batch is not queued.
  void resolve(std::string_view raw, const ObjectBatchSerializer& objects, std::string& out) const;
  std::mutex& mutex() { return mu_; }
  /// Batches queued (tests).
  size_t size() const;

 private:
  mutable std::mutex mu_;
  std::deque<std::pair<uint64_t, ObjectBatchPtr>> queue_;
  uint64_t next_ = 0;
};

}  // namespace sluice::runtime::network
