#include "runtime/network/stream_element_codec.h"

#include "common/error.h"

namespace sluice::runtime::network {

namespace {

constexpr char kRowBatchRecord = 1;
constexpr char kObjectBatchRecord = 2;

}  // namespace

bool StreamElementSerializer::write(const StreamElement& element, SpanningRecordSerializer& out) {
  if (const auto* rows = std::get_if<types::RowBatch>(&element)) {
    scratch_.assign(1, kRowBatchRecord);
    rows->serialize(scratch_);
    out.writeRecord(scratch_);
    return true;
  }
  if (const auto* objects = std::get_if<ObjectBatchPtr>(&element)) {
    SLUICE_CHECK(objects_ != nullptr, "an object batch on an edge without a record serializer");
    scratch_.assign(1, kObjectBatchRecord);
    objects_->serialize(**objects, scratch_);
    out.writeRecord(scratch_);
    return true;
  }
  if (const auto* mark = std::get_if<Watermark>(&element)) {
    out.writeEvent(NetworkEvent{NetworkEventType::kWatermark, mark->timestamp, {}});
  } else if (const auto* status = std::get_if<WatermarkStatus>(&element)) {
    out.writeEvent(NetworkEvent{NetworkEventType::kWatermarkStatus, static_cast<int64_t>(*status), {}});
  } else if (const auto* barrier = std::get_if<CheckpointBarrier>(&element)) {
    // Payload: i64 trigger timestamp (little endian), u8 kind, u8 alignment.
    std::string payload(10, '\0');
    const uint64_t ts = static_cast<uint64_t>(barrier->timestamp_ms);
    for (int i = 0; i < 8; ++i) payload[static_cast<size_t>(i)] = static_cast<char>((ts >> (8 * i)) & 0xff);
    payload[8] = static_cast<char>(barrier->kind);
    payload[9] = static_cast<char>(barrier->alignment);
    out.writeEvent(NetworkEvent{NetworkEventType::kCheckpointBarrier, barrier->id, std::move(payload)});
  } else {
    out.writeEvent(NetworkEvent{NetworkEventType::kEndOfPartition, 0, {}});
  }
  return false;
}

StreamElement StreamElementDeserializer::decodeRecord(std::string_view bytes) const {
  if (bytes.empty()) throw InputError("empty record in a network buffer");
  const char kind = bytes.front();
  bytes.remove_prefix(1);
  if (kind == kRowBatchRecord) {
    std::string_view data = bytes;
    types::RowBatch batch = types::RowBatch::deserialize(data);
    if (!data.empty()) throw InputError(fmt::format("{} trailing bytes after a row batch record", data.size()));
    return batch;
  }
  if (kind == kObjectBatchRecord) {
    if (objects_ == nullptr) throw InputError("an object batch record on an edge that carries rows");
    return objects_->deserialize(bytes);
  }
  throw InputError(fmt::format("unknown record kind {} in a network buffer", static_cast<int>(kind)));
}

StreamElement StreamElementDeserializer::decodeEvent(const Buffer& buffer) const {
  // A peer or a spill file can put an event between the buffers of one record: corrupt input.
  if (records_.hasUnfinishedData()) throw InputError("an event buffer in the middle of a record");
  const NetworkEvent event = EventSerializer::fromBuffer(buffer);
  switch (event.type) {
    case NetworkEventType::kWatermark:
      return Watermark{event.value};
    case NetworkEventType::kWatermarkStatus:
      if (event.value != 0 && event.value != 1) {
        throw InputError(fmt::format("watermark status event with value {} (0 = ACTIVE, 1 = IDLE)", event.value));
      }
      return event.value == 1 ? WatermarkStatus::kIdle : WatermarkStatus::kActive;
    case NetworkEventType::kEndOfPartition:
      return EndOfPartition{};
    case NetworkEventType::kCheckpointBarrier: {
      if (event.payload.size() != 10) {
        throw InputError(fmt::format("checkpoint barrier event with a payload of {} bytes (expected 10)",
                                     event.payload.size()));
      }
      const auto kind = static_cast<uint8_t>(event.payload[8]);
      const auto alignment = static_cast<uint8_t>(event.payload[9]);
      if (kind > 1 || alignment > 1 || event.value <= 0) {
        throw InputError(fmt::format("checkpoint barrier event with id {}, kind {}, alignment {}", event.value,
                                     static_cast<int>(kind), static_cast<int>(alignment)));
      }
      uint64_t ts = 0;
      for (int i = 0; i < 8; ++i) ts |= static_cast<uint64_t>(static_cast<uint8_t>(event.payload[static_cast<size_t>(i)])) << (8 * i);
      return CheckpointBarrier{event.value, static_cast<int64_t>(ts), static_cast<checkpoint::CheckpointKind>(kind),
                               static_cast<checkpoint::AlignmentType>(alignment)};
    }
    default:
      throw InputError(
          fmt::format("unexpected network event of type {} in a channel's data", static_cast<int>(event.type)));
  }
}

}  // namespace sluice::runtime::network
