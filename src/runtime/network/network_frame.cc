#include "runtime/network/network_frame.h"

#include <fmt/format.h>

#include <type_traits>
#include <utility>

namespace sluice::runtime::network {
namespace {

void putU(std::string& out, uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

// Each message's fields in wire order, written by FrameWriter and read by PayloadReader: the one place a
// message's layout is spelled out. `M` is the message, const when encoding.
template <class IO, class M>
void fieldsOf(IO& io, M& m) {
  using T = std::remove_const_t<M>;
  if constexpr (std::is_same_v<T, PartitionRequest>) {
    io.bytes(m.partition_id, 2, "partition id");
    io.nonNegative(m.subpartition, "subpartition index");
    io.id(m.receiver);
    io.nonNegative(m.credit, "initial credit");
  } else if constexpr (std::is_same_v<T, BufferResponse> || std::is_same_v<T, EventResponse>) {
    io.id(m.receiver);
    io.nonNegative(m.sequence_number, "sequence number");
    io.nonNegative(m.backlog, "backlog");
    if constexpr (std::is_same_v<T, BufferResponse>) {
      io.bytes(m.data, 4, "buffer data");
    } else {
      io.bytes(m.event, 4, "event data");
    }
  } else if constexpr (std::is_same_v<T, AddCredit>) {
    io.id(m.receiver);
    io.positive(m.credit, "credit");
  } else if constexpr (std::is_same_v<T, NewBufferSize>) {
    io.id(m.receiver);
    io.positive(m.buffer_size, "buffer size");
  } else if constexpr (std::is_same_v<T, CancelPartitionRequest>) {
    io.id(m.receiver);
  } else if constexpr (std::is_same_v<T, ErrorResponse>) {
    io.id(m.receiver);
    io.flag(m.fatal, "fatal flag");
    io.bytes(m.message, 4, "error message");
  } else if constexpr (std::is_same_v<T, BacklogAnnouncement>) {
    io.id(m.receiver);
    io.positive(m.backlog, "backlog");
  } else {
    static_assert(std::is_same_v<T, CloseRequest>, "a Frame alternative without its fields");
  }
}

// Appends fields; values out of range are the engine's bug (InternalError).
class FrameWriter {
 public:
  explicit FrameWriter(std::string& out) : out_(out) {}
  void id(const InputChannelId& v) {
    putU(out_, v.upper, 8);
    putU(out_, v.lower, 8);
  }
  void nonNegative(int32_t v, const char* field) {
    SLUICE_CHECK(v >= 0, "frame field {} is negative: {}", field, v);
    putU(out_, static_cast<uint32_t>(v), 4);
  }
  void positive(int32_t v, const char* field) {
    SLUICE_CHECK(v > 0, "frame field {} must be positive, got {}", field, v);
    putU(out_, static_cast<uint32_t>(v), 4);
  }
  void flag(bool v, const char*) { out_.push_back(v ? 1 : 0); }
  void bytes(std::string_view v, int length_bytes, const char* field) {
    SLUICE_CHECK(v.size() < (uint64_t{1} << (8 * length_bytes)), "frame field {} of {} bytes", field, v.size());
    putU(out_, v.size(), length_bytes);
    out_.append(v.data(), v.size());
  }

 private:
  std::string& out_;
};

// Reads the payload of one frame; every read is bounds-checked and failures name the field.
class PayloadReader {
 public:
  PayloadReader(std::string_view data, const char* frame) : data_(data), frame_(frame) {}
  void id(InputChannelId& v) {
    v.upper = u(8, "receiver id");
    v.lower = u(8, "receiver id");
  }
  void nonNegative(int32_t& v, const char* field) {
    v = i32(field);
    if (v < 0) fail(fmt::format("{} is negative ({})", field, v));
  }
  void positive(int32_t& v, const char* field) {
    v = i32(field);
    if (v <= 0) fail(fmt::format("{} must be positive, got {}", field, v));
  }
  void flag(bool& v, const char* field) {
    const uint64_t b = u(1, field);
    if (b > 1) fail(fmt::format("{} must be 0 or 1, got {}", field, b));
    v = b == 1;
  }
  void bytes(std::string& v, int length_bytes, const char* field) {
    const uint64_t n = u(length_bytes, field);
    need(n, field);
    v.assign(data_.substr(pos_, n));
    pos_ += n;
  }
  void end() {
    if (pos_ != data_.size()) fail(fmt::format("{} trailing bytes after the payload", data_.size() - pos_));
  }
  [[noreturn]] void fail(const std::string& why) const { throw NetworkFrameError(fmt::format("{} frame: {}", frame_, why)); }

 private:
  uint64_t u(int bytes, const char* field) {
    need(static_cast<size_t>(bytes), field);
    uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v = (v << 8) | static_cast<uint8_t>(data_[pos_ + static_cast<size_t>(i)]);
    pos_ += static_cast<size_t>(bytes);
    return v;
  }
  int32_t i32(const char* field) { return static_cast<int32_t>(static_cast<uint32_t>(u(4, field))); }
  void need(uint64_t n, const char* field) {
    if (n > data_.size() - pos_) {
      fail(fmt::format("{} needs {} bytes at payload offset {}, only {} left", field, n, pos_, data_.size() - pos_));
    }
  }
  std::string_view data_;
  const char* frame_;
  size_t pos_ = 0;
};

// Frame alternative I from its payload.
template <size_t I>
Frame decodeAs(PayloadReader& r) {
  std::variant_alternative_t<I, Frame> m;
  fieldsOf(r, m);
  return m;
}

template <size_t... I>
Frame decodePayload(size_t type, PayloadReader& r, std::index_sequence<I...>) {
  static constexpr Frame (*kDecoders[])(PayloadReader&) = {&decodeAs<I>...};
  return kDecoders[type](r);
}

Frame decodePayload(FrameType type, std::string_view payload) {
  PayloadReader r(payload, frameTypeName(type));
  Frame f = decodePayload(static_cast<size_t>(type), r, std::make_index_sequence<std::variant_size_v<Frame>>());
  r.end();
  return f;
}

// The frame header with a length patched by endFrame.
size_t beginFrame(std::string& out, FrameType type) {
  const size_t start = out.size();
  putU(out, 0, 4);
  putU(out, kFrameMagic, 4);
  out.push_back(static_cast<char>(type));
  return start;
}

void endFrame(std::string& out, size_t start) {
  const size_t length = out.size() - start;
  SLUICE_CHECK(length <= 0xffffffffu, "frame of {} bytes", length);
  for (int i = 0; i < 4; ++i) out[start + static_cast<size_t>(i)] = static_cast<char>((length >> (8 * (3 - i))) & 0xff);
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
    case FrameType::kBacklogAnnouncement:
      return "BacklogAnnouncement";
  }
  return "unknown";
}

void encodeFrame(const Frame& frame, std::string& out) {
  const size_t start = beginFrame(out, static_cast<FrameType>(frame.index()));
  FrameWriter w(out);
  std::visit([&](const auto& m) { fieldsOf(w, m); }, frame);
  endFrame(out, start);
}

void encodeBufferFrame(bool is_event, const InputChannelId& receiver, int32_t sequence_number, int32_t backlog,
                       std::string_view bytes, std::string& out) {
  // The fields of BufferResponse / EventResponse without building the message (no copy of `bytes`).
  out.reserve(out.size() + kFrameHeaderLength + 16 + 4 + 4 + 4 + bytes.size());
  const size_t start = beginFrame(out, is_event ? FrameType::kEventResponse : FrameType::kBufferResponse);
  FrameWriter w(out);
  w.id(receiver);
  w.nonNegative(sequence_number, "sequence number");
  w.nonNegative(backlog, "backlog");
  w.bytes(bytes, 4, is_event ? "event data" : "buffer data");
  endFrame(out, start);
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
    if (type >= std::variant_size_v<Frame>) {
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
