#include "runtime/network/stream_element_codec.h"

#include "common/error.h"

namespace sluice::runtime::network {

namespace {

constexpr char kRowBatchRecord = 1;
constexpr char kObjectBatchRecord = 2;

void putLe64(std::string& out, size_t at, uint64_t v) {
  for (int i = 0; i < 8; ++i) out[at + static_cast<size_t>(i)] = static_cast<char>((v >> (8 * i)) & 0xff);
}

uint64_t getLe64(const std::string& in, size_t at) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(in[at + static_cast<size_t>(i)])) << (8 * i);
  return v;
}

}  // namespace

NetworkEvent barrierEvent(const CheckpointBarrier& barrier) {
  // Payload: i64 trigger timestamp (little endian), u8 kind, u8 alignment, i64 aligned timeout (ms).
  std::string payload(18, '\0');
  putLe64(payload, 0, static_cast<uint64_t>(barrier.timestamp_ms));
  payload[8] = static_cast<char>(barrier.kind);
  payload[9] = static_cast<char>(barrier.alignment);
  putLe64(payload, 10, static_cast<uint64_t>(barrier.aligned_timeout_ms));
  return NetworkEvent{NetworkEventType::kCheckpointBarrier, barrier.id, std::move(payload)};
}

bool encodeStreamRecord(const StreamElement& element, const ObjectBatchSerializer* objects, std::string& out) {
  if (const auto* rows = std::get_if<types::RowBatch>(&element)) {
    out.push_back(kRowBatchRecord);
    rows->serialize(out);
    return true;
  }
  if (const auto* batch = std::get_if<ObjectBatchPtr>(&element)) {
    SLUICE_CHECK(objects != nullptr, "an object batch on an edge without a record serializer");
    out.push_back(kObjectBatchRecord);
    objects->serialize(**batch, out);
    return true;
  }
  return false;
}

void appendChannelStateRecord(const StreamElement& record, const ObjectBatchSerializer* objects, std::string& out) {
  const size_t at = out.size();
  out.append(4, '\0');
  SLUICE_CHECK(encodeStreamRecord(record, objects, out), "channel state holds records only");
  const uint64_t n = out.size() - at - 4;
  SLUICE_CHECK(n <= 0xffffffffu, "record of {} bytes is too large", n);
  for (int i = 0; i < 4; ++i) out[at + static_cast<size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xff);
}

StreamElement decodeStreamRecord(std::string_view bytes, const ObjectBatchSerializer* objects) {
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
    if (objects == nullptr) throw InputError("an object batch record on an edge that carries rows");
    return objects->deserialize(bytes);
  }
  throw InputError(fmt::format("unknown record kind {} in a network buffer", static_cast<int>(kind)));
}

bool StreamElementSerializer::write(const StreamElement& element, SpanningRecordSerializer& out) {
  scratch_.clear();
  if (encodeStreamRecord(element, objects_.get(), scratch_)) {
    out.writeRecord(scratch_);
    return true;
  }
  if (const auto* mark = std::get_if<Watermark>(&element)) {
    out.writeEvent(NetworkEvent{NetworkEventType::kWatermark, mark->timestamp, {}});
  } else if (const auto* status = std::get_if<WatermarkStatus>(&element)) {
    out.writeEvent(NetworkEvent{NetworkEventType::kWatermarkStatus, static_cast<int64_t>(*status), {}});
  } else if (const auto* barrier = std::get_if<CheckpointBarrier>(&element)) {
    out.writeEvent(barrierEvent(*barrier));
  } else if (const auto* attributes = std::get_if<RecordAttributes>(&element)) {
    out.writeEvent(NetworkEvent{NetworkEventType::kRecordAttributes, attributes->is_backlog ? 1 : 0, {}});
  } else {
    out.writeEvent(NetworkEvent{NetworkEventType::kEndOfPartition, 0, {}});
  }
  return false;
}

StreamElement StreamElementDeserializer::decodeRecord(std::string_view bytes) const {
  if (local_ && !bytes.empty() && bytes.front() == LocalObjectQueue::kHandleRecord) return local_->take(bytes);
  return decodeStreamRecord(bytes, objects_.get());
}

StreamElement StreamElementDeserializer::decodeEvent(const Buffer& buffer) const {
  // A peer or a spill file can put an event between the buffers of one record: corrupt input. Only an
  // unaligned barrier may be there: it overtook the record's last buffers (FLIP-76).
  NetworkEvent event;
  if (records_.hasUnfinishedData()) {
    bool priority = false;
    try {
      event = EventSerializer::fromBuffer(buffer);
      priority = event.type == NetworkEventType::kCheckpointBarrier && event.payload.size() >= 10 &&
                 static_cast<uint8_t>(event.payload[9]) == static_cast<uint8_t>(checkpoint::AlignmentType::kUnaligned);
    } catch (const InputError&) {
    }
    if (!priority) throw InputError("an event buffer in the middle of a record");
  } else {
    event = EventSerializer::fromBuffer(buffer);
  }
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
    case NetworkEventType::kRecordAttributes:
      if ((event.value != 0 && event.value != 1) || !event.payload.empty()) {
        throw InputError(fmt::format("record attributes event with value {} and {} payload bytes (0 or 1, none)",
                                     event.value, event.payload.size()));
      }
      return RecordAttributes{event.value == 1};
    case NetworkEventType::kCheckpointBarrier: {
      if (event.payload.size() != 18) {
        throw InputError(fmt::format("checkpoint barrier event with a payload of {} bytes (expected 18)",
                                     event.payload.size()));
      }
      const auto kind = static_cast<uint8_t>(event.payload[8]);
      const auto alignment = static_cast<uint8_t>(event.payload[9]);
      const auto timeout = static_cast<int64_t>(getLe64(event.payload, 10));
      if (kind > 3 || alignment > 3 || event.value <= 0 || timeout < 0) {
        throw InputError(fmt::format("checkpoint barrier event with id {}, kind {}, alignment {}, timeout {}",
                                     event.value, static_cast<int>(kind), static_cast<int>(alignment), timeout));
      }
      return CheckpointBarrier{event.value, static_cast<int64_t>(getLe64(event.payload, 0)),
                               static_cast<checkpoint::CheckpointKind>(kind),
                               static_cast<checkpoint::AlignmentType>(alignment), timeout};
    }
    default:
      throw InputError(
          fmt::format("unexpected network event of type {} in a channel's data", static_cast<int>(event.type)));
  }
}

}  // namespace sluice::runtime::network
