#include "runtime/network/record_serializer.h"

#include <algorithm>

#include <fmt/format.h>

#include "common/error.h"

namespace sluice::runtime::network {
namespace {

void putLe(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint64_t getLe(const uint8_t* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

bool knownEventType(uint8_t t) {
  return t >= static_cast<uint8_t>(NetworkEventType::kWatermark) &&
         t <= static_cast<uint8_t>(NetworkEventType::kRecordAttributes);
}

}  // namespace

std::string EventSerializer::serialize(const NetworkEvent& event) {
  std::string out;
  out.reserve(13 + event.payload.size());
  out.push_back(static_cast<char>(event.type));
  putLe(out, static_cast<uint64_t>(event.value), 8);
  putLe(out, event.payload.size(), 4);
  out += event.payload;
  return out;
}

void EventSerializer::toBuffer(const NetworkEvent& event, Buffer& buffer) {
  const std::string bytes = serialize(event);
  SLUICE_CHECK(static_cast<int64_t>(bytes.size()) <= buffer.maxCapacity(), "event of {} bytes exceeds a {} byte buffer",
               bytes.size(), buffer.maxCapacity());
  buffer.setSize(0);
  buffer.setCapacityLimit(buffer.maxCapacity());
  buffer.append(reinterpret_cast<const uint8_t*>(bytes.data()), static_cast<int32_t>(bytes.size()));
  buffer.setDataType(BufferDataType::kEvent);
}

NetworkEvent EventSerializer::deserialize(std::string_view bytes) {
  if (bytes.size() < 13) throw InputError(fmt::format("network event truncated: {} bytes, at least 13 needed", bytes.size()));
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  if (!knownEventType(p[0])) throw InputError(fmt::format("unknown network event type {}", static_cast<int>(p[0])));
  NetworkEvent e;
  e.type = static_cast<NetworkEventType>(p[0]);
  e.value = static_cast<int64_t>(getLe(p + 1, 8));
  const uint64_t n = getLe(p + 9, 4);
  if (n != bytes.size() - 13) {
    throw InputError(fmt::format("network event payload length {} does not match the {} bytes after the header", n,
                                 bytes.size() - 13));
  }
  e.payload.assign(bytes.data() + 13, n);
  return e;
}

NetworkEvent EventSerializer::fromBuffer(const Buffer& buffer) {
  SLUICE_CHECK(buffer.valid() && !buffer.isBuffer(), "not an event buffer");
  return deserialize(std::string_view(reinterpret_cast<const char*>(buffer.data()), static_cast<size_t>(buffer.size())));
}

SpanningRecordSerializer::SpanningRecordSerializer(BufferSupplier request, BufferConsumer emit)
    : request_(std::move(request)), emit_(std::move(emit)) {}

void SpanningRecordSerializer::startBuffer() {
  current_ = request_();
  SLUICE_CHECK(current_.valid(), "buffer supplier returned no buffer");
  current_.setSize(0);
  current_.setDataType(BufferDataType::kData);
  current_.setFirstRecordOffset(-1);
  current_.setCapacityLimit(size_limit_ > 0 ? size_limit_ : current_.maxCapacity());
}

void SpanningRecordSerializer::append(const uint8_t* data, size_t n) {
  while (n > 0) {
    if (!current_.valid()) startBuffer();
    const int32_t chunk = static_cast<int32_t>(std::min<size_t>(n, static_cast<size_t>(current_.writableBytes())));
    current_.append(data, chunk);
    data += chunk;
    n -= static_cast<size_t>(chunk);
    if (current_.isFull()) emit_(std::move(current_));
  }
}

void SpanningRecordSerializer::writeRecord(std::string_view record) {
  SLUICE_CHECK(record.size() <= 0xffffffffu, "record of {} bytes is too large", record.size());
  uint8_t header[4];
  for (int i = 0; i < 4; ++i) header[i] = static_cast<uint8_t>((record.size() >> (8 * i)) & 0xff);
  if (!current_.valid()) startBuffer();
  if (current_.firstRecordOffset() < 0) current_.setFirstRecordOffset(current_.size());
  append(header, 4);
  append(reinterpret_cast<const uint8_t*>(record.data()), record.size());
}

void SpanningRecordSerializer::writeEvent(const NetworkEvent& event) {
  flush();
  Buffer b = request_();
  SLUICE_CHECK(b.valid(), "buffer supplier returned no buffer");
  EventSerializer::toBuffer(event, b);
  emit_(std::move(b));
}

void SpanningRecordSerializer::flush() {
  if (current_.valid() && current_.size() > 0) emit_(std::move(current_));
}

void SpanningRecordDeserializer::setNextBuffer(Buffer buffer) {
  SLUICE_CHECK(buffer.valid() && buffer.isBuffer(), "the record deserializer takes data buffers only");
  SLUICE_CHECK(!buffer_.valid() || pos_ == buffer_.size(), "the previous buffer still has {} unread bytes",
               buffer_.size() - pos_);
  buffer_ = std::move(buffer);
  pos_ = 0;
}

SpanningRecordDeserializer::Result SpanningRecordDeserializer::getNextRecord(std::string& record) {
  auto remaining = [&]() -> int32_t { return buffer_.valid() ? buffer_.size() - pos_ : 0; };
  auto take = [&](std::string& into, size_t want) {
    const size_t k = std::min(want, static_cast<size_t>(remaining()));
    if (k > 0) into.append(reinterpret_cast<const char*>(buffer_.data()) + pos_, k);
    pos_ += static_cast<int32_t>(k);
  };
  if (!have_length_) {
    take(length_bytes_, 4 - length_bytes_.size());
    if (length_bytes_.size() < 4) {
      buffer_.recycle();
      return Result::kPartialRecord;
    }
    length_ = static_cast<uint32_t>(getLe(reinterpret_cast<const uint8_t*>(length_bytes_.data()), 4));
    length_bytes_.clear();
    if (length_ > max_record_bytes_) {
      throw InputError(fmt::format("network record of {} bytes exceeds the limit of {} bytes (corrupt stream?)", length_,
                                   max_record_bytes_));
    }
    have_length_ = true;
    spill_.clear();
    // A huge announced length does not allocate before its bytes arrive.
    spill_.reserve(std::min<uint32_t>(length_, 1u << 20));
  }
  take(spill_, length_ - spill_.size());
  if (spill_.size() < length_) {
    buffer_.recycle();
    return Result::kPartialRecord;
  }
  record.swap(spill_);
  spill_.clear();
  have_length_ = false;
  if (remaining() == 0) {
    buffer_.recycle();
    return Result::kLastRecordFromBuffer;
  }
  return Result::kIntermediateRecordFromBuffer;
}

void SpanningRecordDeserializer::clear() {
  buffer_.recycle();
  pos_ = 0;
  length_bytes_.clear();
  have_length_ = false;
  length_ = 0;
  spill_.clear();
}

}  // namespace sluice::runtime::network
