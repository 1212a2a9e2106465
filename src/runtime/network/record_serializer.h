#pragma once
/// Records and events in network buffers.
///
/// - `SpanningRecordSerializer` writes length-prefixed records into buffers, spanning buffer boundaries
///   (Flink's `RecordWriter` + `BufferBuilder.appendAndCommit` over a serialized record).
/// - `SpanningRecordDeserializer` reassembles them from a sequence of buffers (Flink's
///   `SpillingAdaptiveSpanningRecordDeserializer`).
/// - `NetworkEvent` / `EventSerializer` encode events in buffers of their own (Flink's `EventSerializer`).
///
/// Record layout: u32 length (little endian) then the record bytes. Records are opaque bytes (e.g.
/// `RowBatch::serialize` or `serializeBatch<T>` output). Threading: one serializer per writer thread, one
/// deserializer per channel; neither is thread-safe.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "runtime/network/buffer.h"

namespace sluice::runtime::network {

/// Kinds of events carried in event buffers. Values are stable: they go over the wire.
enum class NetworkEventType : uint8_t {
  kWatermark = 1,               ///< event-time progress; `value` = timestamp (ms)
  kEndOfPartition = 2,          ///< the producer finished (Flink's `EndOfPartitionEvent`)
  kBufferSizeAnnouncement = 3,  ///< `value` = new buffer size in bytes (FLIP-183, local channels)
  kEndOfData = 4,               ///< reserved: Flink's `EndOfData`
  kCheckpointBarrier = 5,       ///< `value` = checkpoint id, `payload` = i64 timestamp, u8 kind, u8 alignment
  kCancelCheckpointMarker = 6,  ///< reserved: `value` = checkpoint id
  kEventAnnouncement = 7,       ///< reserved: unaligned checkpoint priority-event announcement
  kWatermarkStatus = 8,         ///< `value` = 0 ACTIVE, 1 IDLE (Flink's WatermarkStatus)
  kRecordAttributes = 9,        ///< `value` = 1 backlog, 0 not (Flink's RecordAttributes, FLIP-327)
};

/// An event between tasks. `value` and `payload` meanings depend on `type` (see NetworkEventType).
struct NetworkEvent {
  NetworkEventType type = NetworkEventType::kEndOfPartition;
  int64_t value = 0;
  std::string payload;
  bool operator==(const NetworkEvent&) const = default;
};

/// Encodes events into event buffers and back (Flink's `EventSerializer`). Layout: u8 type, i64 value
/// (little endian), u32 payload length, payload.
class EventSerializer {
 public:
  /// Bytes of `event`.
  static std::string serialize(const NetworkEvent& event);
  /// Writes `event` into `buffer` (cleared first) and marks it an event buffer. Throws InternalError when
  /// the event does not fit the buffer's segment.
  static void toBuffer(const NetworkEvent& event, Buffer& buffer);
  /// Reads an event. Throws InputError on an unknown type, truncated or trailing bytes.
  static NetworkEvent deserialize(std::string_view bytes);
  /// Reads the event in an event buffer. Throws InputError as deserialize, InternalError on a data buffer.
  static NetworkEvent fromBuffer(const Buffer& buffer);
};

/// Writes records and events into buffers for one subpartition. Buffers come from `request` (which
/// may block for backpressure) and full ones go to `emit`, in order; events flush the partial buffer
/// first and travel in a buffer of their own, so they keep their order relative to records.
///
/// Buffer debloating: `setBufferSizeLimit` applies to buffers started afterwards; a buffer already being
/// filled keeps its capacity (FLIP-183: "only new buffers are affected").
class SpanningRecordSerializer {
 public:
  /// Returns a fresh, empty buffer (full segment capacity); must not return an empty Buffer.
  using BufferSupplier = std::function<Buffer()>;
  /// Takes a finished buffer (data or event).
  using BufferConsumer = std::function<void(Buffer)>;

  SpanningRecordSerializer(BufferSupplier request, BufferConsumer emit);

  /// Appends one record (any size, also larger than many buffers).
  void writeRecord(std::string_view record);
  /// Flushes the partial data buffer, then emits `event` in its own event buffer.
  void writeEvent(const NetworkEvent& event);
  /// Emits the partially filled data buffer if it holds bytes (Flink's `flushAll`).
  void flush();
  /// Usable bytes of buffers started from now on (0 = the whole segment). Bytes.
  void setBufferSizeLimit(int32_t bytes) { size_limit_ = bytes; }
  int32_t bufferSizeLimit() const { return size_limit_; }

 private:
  void append(const uint8_t* data, size_t n);
  void startBuffer();

  BufferSupplier request_;
  BufferConsumer emit_;
  Buffer current_;
  int32_t size_limit_ = 0;
};

/// Reassembles records from buffers written by SpanningRecordSerializer (Flink's
/// `SpillingAdaptiveSpanningRecordDeserializer`): `setNextBuffer`, then `getNextRecord` until it reports
/// the buffer consumed. A buffer is released (recycled, which returns its credit) as soon as all its bytes
/// are read; a record spanning buffers is collected in a private spill string.
class SpanningRecordDeserializer {
 public:
  /// Result of getNextRecord (Flink's `DeserializationResult`).
  enum class Result {
    kPartialRecord,            ///< the buffer is used up and no complete record is left: give the next buffer
    kIntermediateRecordFromBuffer,  ///< a record was read and the buffer has more bytes
    kLastRecordFromBuffer,     ///< a record was read and the buffer is used up
  };

  /// `max_record_bytes` bounds one record's length (a corrupt length fails instead of allocating).
  explicit SpanningRecordDeserializer(uint32_t max_record_bytes = 1u << 30) : max_record_bytes_(max_record_bytes) {}

  /// Hands over the next data buffer of the channel. Throws InternalError for an event buffer or while
  /// the previous buffer still has unread bytes.
  void setNextBuffer(Buffer buffer);
  /// Reads the next record into `record` (replacing its contents). Throws InputError when a record length
  /// exceeds the limit.
  Result getNextRecord(std::string& record);
  /// True when part of a record (or its length) is waiting for the next buffer.
  bool hasUnfinishedData() const { return have_length_ || !length_bytes_.empty(); }
  /// Drops all state and releases the current buffer.
  void clear();

 private:
  Buffer buffer_;
  int32_t pos_ = 0;
  std::string length_bytes_;  // a length prefix split over buffers
  bool have_length_ = false;
  uint32_t length_ = 0;
  std::string spill_;  // the record being reassembled
  uint32_t max_record_bytes_;
};

}  // namespace sluice::runtime::network
