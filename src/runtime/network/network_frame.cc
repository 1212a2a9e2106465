#include "runtime/network/network_frame.h"

#include <fmt/format.h>

namespace sluice::runtime::network {
namespace {

void putU(std::string& out, uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

void putI32(std::string& out, int32_t v) { putU(out, static_cast<uint32_t>(v), 4); }

void putId(std::string& out, const InputChannelId& id) {
  putU(out, id.upper, 8);
  putU(out, id.lower, 8);
}

void checkNonNegative(int32_t v, const char* field) { SLUICE_CHECK(v >= 0, "frame field {} is negative: {}", field, v); }

// Reads the payload of one frame; every read is bounds-checked and failures name the field.
class PayloadReader {
 public:
  PayloadReader(std::string_view data, const char* frame) : data_(data), frame_(frame) {}
  uint64_t u(int bytes, const char* field) {
    need(static_cast<size_t>(bytes), field);
    uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v = (v << 8) | static_cast<uint8_t>(data_[pos_ + static_cast<size_t>(i)]);
    pos_ += static_cast<size_t>(bytes);
    return v;
  }
  int32_t i32(const char* field) { return static_cast<int32_t>(static_cast<uint32_t>(u(4, field))); }
  int32_t nonNegative(const char* field) {
    const int32_t v = i32(field);
    if (v < 0) fail(fmt::format("{} is negative ({})", field, v));
    return v;
  }
  int32_t positive(const char* field) {
    const int32_t v = i32(field);
    if (v <= 0) fail(fmt::format("{} must be positive, got {}", field, v));
    return v;
  }
  InputChannelId id() {
    InputChannelId r;
    r.upper = u(8, "receiver id");
    r.lower = u(8, "receiver id");
    return r;
  }
  std::string bytes(int length_bytes, const char* field) {
    const uint64_t n = u(length_bytes, field);
    need(n, field);
    std::string s(data_.substr(pos_, n));
    pos_ += n;
    return s;
  }
  void end() {
    if (pos_ != data_.size()) fail(fmt::format("{} trailing bytes after the payload", data_.size() - pos_));
  }
  [[noreturn]] void fail(const std::string& why) const { throw NetworkFrameError(fmt::format("{} frame: {}", frame_, why)); }

 private:
  void need(uint64_t n, const char* field) {
    if (n > data_.size() - pos_) {
      fail(fmt::format("{} needs {} bytes at payload offset {}, only {} left", field, n, pos_, data_.size() - pos_));
    }
  }
  std::string_view data_;
  const char* frame_;
  size_t pos_ = 0;
};

Frame decodePayload(FrameType type, std::string_view payload) {
  PayloadReader r(payload, frameTypeName(type));
  Frame f;
  switch (type) {
    case FrameType::kPartitionRequest: {
      PartitionRequest m;
      m.partition_id = r.bytes(2, "partition id");
      m.subpartition = r.nonNegative("subpartition index");
      m.receiver = r.id();
      m.credit = r.nonNegative("initial credit");
      f = std::move(m);
      break;
    }
    case FrameType::kBufferResponse: {
      BufferResponse m;
      m.receiver = r.id();
      m.sequence_number = r.nonNegative("sequence number");
      m.backlog = r.nonNegative("backlog");
      m.data = r.bytes(4, "buffer data");
      f = std::move(m);
      break;
    }
    case FrameType::kEventResponse: {
      EventResponse m;
      m.receiver = r.id();
      m.sequence_number = r.nonNegative("sequence number");
      m.backlog = r.nonNegative("backlog");
      m.event = r.bytes(4, "event data");
      f = std::move(m);
      break;
    }
    case FrameType::kAddCredit: {
      AddCredit m;
      m.receiver = r.id();
      m.credit = r.positive("credit");
      f = m;
      break;
    }
    case FrameType::kNewBufferSize: {
      NewBufferSize m;
      m.receiver = r.id();
      m.buffer_size = r.positive("buffer size");
      f = m;
      break;
    }
    case FrameType::kCancelPartitionRequest: {
      CancelPartitionRequest m;
      m.receiver = r.id();
      f = m;
      break;
    }
    case FrameType::kErrorResponse: {
      ErrorResponse m;
      m.receiver = r.id();
      const uint64_t fatal = r.u(1, "fatal flag");
      if (fatal > 1) r.fail(fmt::format("fatal flag must be 0 or 1, got {}", fatal));
      m.fatal = fatal == 1;
      m.message = r.bytes(4, "error message");
      f = std::move(m);
      break;
    }
    case FrameType::kCloseRequest:
      f = CloseRequest{};
      break;
  }
  r.end();
  return f;
}

uint32_t readU32(const char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

}  // namespace

const char* frameTypeName(FrameType type) {
  switch (type) {
    case FrameType::kPartitionRequest: return "PartitionRequest";
    case FrameType::kBufferResponse: return "BufferResponse";
    case FrameType::kEventResponse: return "EventResponse";
    case FrameType::kAddCredit: return "AddCredit";
    case FrameType::kNewBufferSize: return "NewBufferSize";
    case FrameType::kCancelPartitionRequest: return "CancelPartitionRequest";
    case FrameType::kErrorResponse: return "ErrorResponse";
    case FrameType::kCloseRequest: return "CloseRequest";
  }
  return "unknown";
}

void encodeFrame(const Frame& frame, std::string& out) {
  const size_t start = out.size();
  putU(out, 0, 4);  // length, patched below
  putU(out, kFrameMagic, 4);
  out.push_back(static_cast<char>(frame.index()));
  std::visit(
      [&](const auto& m) {
        using M = std::decay_t<decltype(m)>;
        if constexpr (std::is_same_v<M, PartitionRequest>) {
          SLUICE_CHECK(m.partition_id.size() <= 0xffff, "partition id of {} bytes", m.partition_id.size());
          checkNonNegative(m.subpartition, "subpartition");
          checkNonNegative(m.credit, "credit");
          putU(out, m.partition_id.size(), 2);
          out += m.partition_id;
          putI32(out, m.subpartition);
          putId(out, m.receiver);
          putI32(out, m.credit);
        } else if constexpr (std::is_same_v<M, BufferResponse>) {
          out.resize(start);
          encodeBufferFrame(false, m.receiver, m.sequence_number, m.backlog, m.data, out);
        } else if constexpr (std::is_same_v<M, EventResponse>) {
          out.resize(start);
          encodeBufferFrame(true, m.receiver, m.sequence_number, m.backlog, m.event, out);
        } else if constexpr (std::is_same_v<M, AddCredit>) {
          SLUICE_CHECK(m.credit > 0, "AddCredit needs positive credit, got {}", m.credit);
          putId(out, m.receiver);
          putI32(out, m.credit);
        } else if constexpr (std::is_same_v<M, NewBufferSize>) {
          SLUICE_CHECK(m.buffer_size > 0, "NewBufferSize needs a positive size, got {}", m.buffer_size);
          putId(out, m.receiver);
          putI32(out, m.buffer_size);
        } else if constexpr (std::is_same_v<M, CancelPartitionRequest>) {
          putId(out, m.receiver);
        } else if constexpr (std::is_same_v<M, ErrorResponse>) {
          putId(out, m.receiver);
          out.push_back(m.fatal ? 1 : 0);
          putU(out, m.message.size(), 4);
          out += m.message;
        }
      },
      frame);
  const size_t length = out.size() - start;
  SLUICE_CHECK(length <= 0xffffffffu, "frame of {} bytes", length);
  for (int i = 0; i < 4; ++i) out[start + static_cast<size_t>(i)] = static_cast<char>((length >> (8 * (3 - i))) & 0xff);
}

void encodeBufferFrame(bool is_event, const InputChannelId& receiver, int32_t sequence_number, int32_t backlog,
                       std::string_view bytes, std::string& out) {
  checkNonNegative(sequence_number, "sequence number");
  checkNonNegative(backlog, "backlog");
  const size_t length = kFrameHeaderLength + 16 + 4 + 4 + 4 + bytes.size();
  SLUICE_CHECK(length <= 0xffffffffu, "frame of {} bytes", length);
  out.reserve(out.size() + length);
  putU(out, length, 4);
  putU(out, kFrameMagic, 4);
  out.push_back(static_cast<char>(is_event ? FrameType::kEventResponse : FrameType::kBufferResponse));
  putId(out, receiver);
  putI32(out, sequence_number);
  putI32(out, backlog);
  putU(out, bytes.size(), 4);
  out.append(bytes.data(), bytes.size());
}

std::string encodeFrame(const Frame& frame) {
  std::string out;
  encodeFrame(frame, out);
  return out;
}

Frame decodeFrame(std::string_view bytes, uint32_t max_frame_length) {
  FrameDecoder d("peer", max_frame_length);
  d.feed(bytes);
  std::optional<Frame> f = d.next();
  if (!f) {
    throw NetworkFrameError(fmt::format("truncated frame: {} bytes given, the frame needs more", bytes.size()));
  }
  if (d.bufferedBytes() != 0) {
    throw NetworkFrameError(fmt::format("{} trailing bytes after the frame", d.bufferedBytes()));
  }
  return *f;
}

FrameDecoder::FrameDecoder(std::string peer, uint32_t max_frame_length)
    : peer_(std::move(peer)), max_frame_length_(max_frame_length) {}

void FrameDecoder::feed(std::string_view bytes) {
  if (pos_ > 0 && pos_ * 2 >= pending_.size()) {
    pending_.erase(0, pos_);
    pos_ = 0;
  }
  pending_.append(bytes.data(), bytes.size());
}

std::optional<Frame> FrameDecoder::next() {
  if (!error_.empty()) throw NetworkFrameError(error_);
  const size_t avail = pending_.size() - pos_;
  if (avail < kFrameHeaderLength) return std::nullopt;
  const char* p = pending_.data() + pos_;
  try {
    const uint32_t length = readU32(p);
    const uint32_t magic = readU32(p + 4);
    if (magic != kFrameMagic) {
      throw NetworkFrameError(fmt::format("bad magic number 0x{:08X}, expected 0x{:08X} (not a Sluice data connection, "
                                          "or the stream is corrupt)",
                                          magic, kFrameMagic));
    }
    if (length < kFrameHeaderLength || length > max_frame_length_) {
      throw NetworkFrameError(fmt::format("frame length {} outside [{}, {}]", length, kFrameHeaderLength,
                                          max_frame_length_));
    }
    const uint8_t type = static_cast<uint8_t>(p[8]);
    if (type > static_cast<uint8_t>(FrameType::kCloseRequest)) {
      throw NetworkFrameError(fmt::format("unknown frame type {}", type));
    }
    if (avail < length) return std::nullopt;
    Frame f = decodePayload(static_cast<FrameType>(type),
                            std::string_view(p + kFrameHeaderLength, length - kFrameHeaderLength));
    pos_ += length;
    consumed_ += length;
    return f;
  } catch (const NetworkFrameError& e) {
    error_ = fmt::format("invalid frame from {} at stream offset {}: {}", peer_, consumed_, e.what());
    throw NetworkFrameError(error_);
  }
}

void FrameDecoder::finish() const {
  if (!error_.empty()) throw NetworkFrameError(error_);
  if (bufferedBytes() > 0) {
    throw NetworkFrameError(fmt::format("connection to {} closed inside a frame at stream offset {} ({} bytes of an "
                                        "incomplete frame)",
                                        peer_, consumed_, bufferedBytes()));
  }
}

}  // namespace sluice::runtime::network
