#pragma once
/// Framed messages of the TaskManager-to-TaskManager data connection (Flink's `NettyMessage` and its
/// encoder/decoder), without the socket. Every frame is
///
///   u32 frame length (header included) | u32 magic 0xBADC0FFE | u8 type | payload
///
/// in network byte order (big endian). Payload fields: InputChannelId = 2 × u64; i32; strings as u32
/// length + bytes (u16 length for partition ids). Bytes come from a peer and are untrusted: decoding
/// truncated, oversized or garbage input throws NetworkFrameError with the offset and reason, never
/// crashes and never allocates more than the bytes it was given (plus the frame length limit).
///
/// Threading: encoding is stateless; a FrameDecoder belongs to one connection's reading thread.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "common/error.h"

namespace sluice::runtime::network {

/// A peer sent bytes that are not a valid frame. The message names the peer and the stream offset.
class NetworkFrameError : public InputError {
 public:
  using InputError::InputError;
};

/// Identifies a receiving input channel on a connection (Flink's `InputChannelID`, 128 bits).
struct InputChannelId {
  uint64_t upper = 0;
  uint64_t lower = 0;
  bool operator==(const InputChannelId&) const = default;
};

/// Consumer → producer: start sending `subpartition` of `partition_id` to `receiver` with `credit`
/// initial credit (Flink's `PartitionRequest`).
struct PartitionRequest {
  std::string partition_id;  ///< at most 65535 bytes
  int32_t subpartition = 0;  ///< >= 0
  InputChannelId receiver;
  int32_t credit = 0;        ///< >= 0
  bool operator==(const PartitionRequest&) const = default;
};

/// Producer → consumer: one data buffer (Flink's `BufferResponse` with a data buffer).
struct BufferResponse {
  InputChannelId receiver;
  int32_t sequence_number = 0;  ///< >= 0
  int32_t backlog = 0;          ///< >= 0
  std::string data;
  bool operator==(const BufferResponse&) const = default;
};

/// Producer → consumer: one event buffer (`EventSerializer` bytes); needs no credit.
struct EventResponse {
  InputChannelId receiver;
  int32_t sequence_number = 0;
  int32_t backlog = 0;
  std::string event;
  bool operator==(const EventResponse&) const = default;
};

/// Consumer → producer: `credit` more buffers are free (Flink's `AddCredit`), > 0.
struct AddCredit {
  InputChannelId receiver;
  int32_t credit = 0;
  bool operator==(const AddCredit&) const = default;
};

/// Consumer → producer: buffers started from now on hold at most `buffer_size` bytes (FLIP-183,
/// Flink's `NewBufferSize`), > 0.
struct NewBufferSize {
  InputChannelId receiver;
  int32_t buffer_size = 0;
  bool operator==(const NewBufferSize&) const = default;
};

/// Consumer → producer: stop sending to `receiver` (Flink's `CancelPartitionRequest`).
struct CancelPartitionRequest {
  InputChannelId receiver;
  bool operator==(const CancelPartitionRequest&) const = default;
};

/// Either direction: a failure; `fatal` means the whole connection is unusable (Flink's `ErrorResponse`).
struct ErrorResponse {
  InputChannelId receiver;
  bool fatal = false;
  std::string message;
  bool operator==(const ErrorResponse&) const = default;
};

/// Consumer → producer: the connection is no longer needed (Flink's `CloseRequest`).
struct CloseRequest {
  bool operator==(const CloseRequest&) const = default;
};

/// Producer → consumer: `backlog` (> 0) data buffers wait for credit on a channel whose receiver has no
/// exclusive buffers, so no BufferResponse can tell it (Flink's `BacklogAnnouncement`, FLINK-16641); the
/// receiver asks its gate's floating buffers for them.
struct BacklogAnnouncement {
  InputChannelId receiver;
  int32_t backlog = 0;
  bool operator==(const BacklogAnnouncement&) const = default;
};

/// One decoded message.
using Frame = std::variant<PartitionRequest, BufferResponse, EventResponse, AddCredit, NewBufferSize,
                           CancelPartitionRequest, ErrorResponse, CloseRequest, BacklogAnnouncement>;

/// Frame type ids on the wire (the variant index of Frame).
enum class FrameType : uint8_t {
  kPartitionRequest = 0,
  kBufferResponse = 1,
  kEventResponse = 2,
  kAddCredit = 3,
  kNewBufferSize = 4,
  kCancelPartitionRequest = 5,
  kErrorResponse = 6,
  kCloseRequest = 7,
  kBacklogAnnouncement = 8,
};

inline constexpr uint32_t kFrameMagic = 0xBADC0FFEu;
inline constexpr uint32_t kFrameHeaderLength = 9;
/// Default largest frame accepted (bytes): a 32 kb buffer plus headers fits many times over.
inline constexpr uint32_t kDefaultMaxFrameLength = 16u << 20;

/// The name of a frame type ("AddCredit", ...).
const char* frameTypeName(FrameType type);
/// Appends the encoding of `frame` to `out`. Throws InternalError when a field is out of range
/// (negative counts, a partition id over 65535 bytes, a frame over 4 GiB).
void encodeFrame(const Frame& frame, std::string& out);
/// The encoding of `frame`.
std::string encodeFrame(const Frame& frame);
/// Appends a BufferResponse (`is_event` false) or EventResponse (true) frame carrying `bytes`, the same
/// bytes encodeFrame writes for that message, without building the message (the sender's hot path).
/// Throws InternalError when `sequence_number` or `backlog` is negative.
void encodeBufferFrame(bool is_event, const InputChannelId& receiver, int32_t sequence_number, int32_t backlog,
                       std::string_view bytes, std::string& out);
/// Decodes exactly one complete frame; throws NetworkFrameError when `bytes` is truncated, has trailing
/// bytes or is invalid.
Frame decodeFrame(std::string_view bytes, uint32_t max_frame_length = kDefaultMaxFrameLength);

/// Splits a byte stream into frames (Flink's `NettyMessageDecoder` over a `LengthFieldBasedFrameDecoder`).
/// Feed bytes as they arrive; `next` returns each complete frame. After an error every call throws
/// again: the connection must be closed.
class FrameDecoder {
 public:
  /// `peer` names the remote end in error messages (e.g. "taskmanager 2 (127.0.0.1:6121)").
  explicit FrameDecoder(std::string peer = "peer", uint32_t max_frame_length = kDefaultMaxFrameLength);
  /// Appends received bytes.
  void feed(std::string_view bytes);
  /// The next complete frame, or nothing when more bytes are needed. Throws NetworkFrameError.
  std::optional<Frame> next();
  /// Bytes received and not yet decoded.
  size_t bufferedBytes() const { return pending_.size() - pos_; }
  /// Throws NetworkFrameError when the stream ended inside a frame (the peer closed mid-frame).
  void finish() const;

 private:
  std::string peer_;
  uint32_t max_frame_length_;
  std::string pending_;
  size_t pos_ = 0;
  uint64_t consumed_ = 0;  // stream offset of pending_[pos_]
  std::string error_;
};

}  // namespace sluice::runtime::network
