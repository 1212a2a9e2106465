#pragma once
/// The byte form of StreamElements in network buffers, shared by every channel kind (local, remote,
/// blocking spill files): `StreamElementSerializer` writes elements into a SpanningRecordSerializer,
/// `StreamElementDeserializer` turns the buffers back into elements (Flink's `RecordWriter` serialization
/// and `AbstractStreamTaskNetworkInput`'s deserialization, with StreamElementSerializer's tags).
///
/// A RowBatch or an object batch is one record: a kind byte (1 = RowBatch, 2 = object batch) then
/// `RowBatch::serialize` or the edge's ObjectBatchSerializer bytes; on a local channel an object batch is
/// a handle record instead (kind 3, local_object_queue.h), read only by a deserializer given the queue. A
/// watermark, a watermark status (value 0 ACTIVE, 1 IDLE), record attributes (value 1 backlog, 0 not) and
/// the end of the partition are events in buffers of their own, so they keep their place relative to the
/// records.
///
/// `edgeRecordSerializer` finds which serializer an edge uses and rejects, when the job is submitted,
/// DataStream records whose type has no TypeSerializer.
///
/// Threading: one serializer per writing thread, one deserializer per channel; not thread-safe.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "common/error.h"

#include "graph/job_graph.h"
#include "runtime/network/local_object_queue.h"
#include "runtime/network/record_serializer.h"
#include "runtime/serialization/object_batch_serializer.h"
#include "runtime/stream_element.h"

namespace sluice::runtime::network {

/// The serializer of the object batches on edge `edge` of `job` (the producing operator's output type for
/// the side output the consumer reads), or nullptr when the edge carries SQL rows. Throws UserError naming
/// the type, the operators and SLUICE_TYPE when the records have no TypeSerializer.
std::shared_ptr<const ObjectBatchSerializer> edgeRecordSerializer(const graph::JobGraph& job, int edge);

/// The event form of a checkpoint barrier: `value` the id, payload i64 trigger timestamp, u8 kind, u8
/// alignment, i64 aligned-checkpoint timeout (ms), little endian.
NetworkEvent barrierEvent(const CheckpointBarrier& barrier);

/// Appends the record bytes of `element` (kind byte + batch bytes) to `out`; false (nothing appended) when
/// it is not a RowBatch or object batch. Throws InternalError for an object batch without `objects`.
bool encodeStreamRecord(const StreamElement& element, const ObjectBatchSerializer* objects, std::string& out);
/// Decodes one record written by encodeStreamRecord. Throws InputError on corrupt bytes.
StreamElement decodeStreamRecord(std::string_view bytes, const ObjectBatchSerializer* objects);

/// Appends `record` (a RowBatch or object batch) to channel state bytes: u32 length, then its record bytes
/// (the network's record layout, so overtaken buffers and recorded input share one form).
void appendChannelStateRecord(const StreamElement& record, const ObjectBatchSerializer* objects, std::string& out);

/// Calls `emit(StreamElement&&)` for every record of channel state bytes, in order. The bytes are
/// untrusted (a checkpoint file): a truncated length or record, or a record that does not decode, throws
/// InputError naming the byte offset within `bytes`.
template <typename Emit>
void forEachChannelStateRecord(std::string_view bytes, const ObjectBatchSerializer* objects, Emit&& emit) {
  size_t pos = 0;
  while (pos < bytes.size()) {
    if (bytes.size() - pos < 4) {
      throw InputError(fmt::format("channel state truncated at byte {}: a record length needs 4 bytes", pos));
    }
    uint64_t n = 0;
    for (int i = 0; i < 4; ++i) n |= static_cast<uint64_t>(static_cast<uint8_t>(bytes[pos + static_cast<size_t>(i)])) << (8 * i);
    if (n > bytes.size() - pos - 4) {
      throw InputError(fmt::format("channel state record at byte {} has length {}, only {} bytes follow", pos, n,
                                   bytes.size() - pos - 4));
    }
    StreamElement e;
    try {
      e = decodeStreamRecord(bytes.substr(pos + 4, n), objects);
    } catch (const InputError& err) {
      throw InputError(fmt::format("channel state record at byte {}: {}", pos, err.what()));
    }
    pos += 4 + n;
    emit(std::move(e));
  }
}

/// Writes elements of one channel (see the file comment).
class StreamElementSerializer {
 public:
  /// `objects`: the edge's object batch serializer (nullptr: the edge carries only rows).
  explicit StreamElementSerializer(std::shared_ptr<const ObjectBatchSerializer> objects = nullptr)
      : objects_(std::move(objects)) {}

  /// Writes `element` to `out`. Returns true for a record (its last bytes may wait in a partially filled
  /// buffer), false for an event (written and handed over with the partial buffer before it). Throws
  /// InternalError for an object batch on an edge without an object serializer.
  bool write(const StreamElement& element, SpanningRecordSerializer& out);

 private:
  std::shared_ptr<const ObjectBatchSerializer> objects_;
  std::string scratch_;
};

/// Reads elements of one channel from its buffers, in order (see the file comment).
class StreamElementDeserializer {
 public:
  /// `objects`: the edge's object batch serializer (nullptr: rows only). `max_record_bytes` bounds one
  /// record (a corrupt length fails instead of allocating).
  explicit StreamElementDeserializer(std::shared_ptr<const ObjectBatchSerializer> objects = nullptr,
                                     uint32_t max_record_bytes = 1u << 30)
      : objects_(std::move(objects)), records_(max_record_bytes) {}

  /// Reads `buffer` (data or event) and calls `emit(StreamElement&&)` for every element it completes, in
  /// order; a record spanning buffers is emitted with its last buffer. The data buffer is released (and
  /// its credit can go back) before this returns. Throws InputError on corrupt bytes, an event that does
  /// not belong in a channel's data stream or an event between the buffers of one record.
  template <typename Emit>
  void read(Buffer buffer, Emit&& emit) {
    if (!buffer.isBuffer()) {
      emit(decodeEvent(buffer));
      return;
    }
    records_.setNextBuffer(std::move(buffer));
    for (;;) {
      const SpanningRecordDeserializer::Result r = records_.getNextRecord(record_);
      if (r == SpanningRecordDeserializer::Result::kPartialRecord) return;
      emit(decodeRecord(record_));
      if (r == SpanningRecordDeserializer::Result::kLastRecordFromBuffer) return;
    }
  }
  /// True when part of a record waits for the next buffer.
  bool hasUnfinishedData() const { return records_.hasUnfinishedData(); }
  /// Reads handle records (kind 3) as the batches of `queue` (a local channel's LocalObjectQueue); without
  /// one a handle is an unknown record kind (InputError).
  void setLocalObjects(std::shared_ptr<LocalObjectQueue> queue) { local_ = std::move(queue); }
  /// Drops a partial record and releases the current buffer.
  void clear() { records_.clear(); }

 private:
  StreamElement decodeRecord(std::string_view bytes) const;
  StreamElement decodeEvent(const Buffer& buffer) const;

  std::shared_ptr<const ObjectBatchSerializer> objects_;
  std::shared_ptr<LocalObjectQueue> local_;
  SpanningRecordDeserializer records_;
  std::string record_;
};

}  // namespace sluice::runtime::network
