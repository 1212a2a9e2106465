#pragma once
/// RemoteInputChannel: an input channel whose producer runs in another TaskManager (Flink's
/// `RemoteInputChannel`). Buffers arrive over the TCP transport (runtime/network/transport) and are copied
/// into this TaskManager's own buffers: `taskmanager.network.memory.buffers-per-channel` exclusive buffers
/// of the channel (its initial credit, sent with the PartitionRequest) and floating buffers from the gate's
/// pool (`taskmanager.network.memory.floating-buffers-per-gate`), asked for as the sender announces its
/// backlog (with no exclusive buffers, buffers-per-channel 0, the sender announces a backlog that no
/// buffer carries in a BacklogAnnouncement, FLINK-16641). Every buffer the consumer recycles becomes
/// credit, sent back as AddCredit — credit-based flow
/// control (FLINK-7282): the sender never sends a data buffer without credit, and a buffer arriving
/// without a free buffer to hold it is a protocol error. A debloated buffer size (FLIP-183) goes to the
/// producer as a NewBufferSize message.
///
/// The credit bookkeeping is `network::CreditBasedReceiver`; this class ties it to a connection
/// (`PartitionRequestClient`) and to the gate.
///
/// Threading: `onBuffer`, `onEvent`, `onError`, `requestBuffer`, `getAndResetUnannouncedCredit` on the
/// transport's I/O thread; `drain` on the consumer's task thread; the rest from any thread.

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "runtime/network/buffer_pool.h"
#include "runtime/network/credit_based.h"
#include "runtime/network/input_channel.h"
#include "runtime/network/network_frame.h"

namespace sluice::runtime {

class RemoteInputChannel;

/// A data connection failed, or a peer broke the protocol (Flink's `RemoteTransportException`). The
/// message names the peer (TaskManager and address). Transient: a restart strategy restarts the job.
class RemoteTransportError : public TransientError {
 public:
  using TransientError::TransientError;
};

/// What a RemoteInputChannel needs from its connection to the producer's TaskManager (Flink's
/// `PartitionRequestClient`), implemented by the TCP transport. Every call returns at once: the work
/// happens on the transport's I/O thread, never blocking the caller on a socket.
class PartitionRequestClient {
 public:
  virtual ~PartitionRequestClient() = default;
  /// Sends the channel's PartitionRequest (partition id, subpartition, receiver id, initial credit) and
  /// routes the producer's buffers and events to it.
  virtual void requestSubpartition(std::shared_ptr<RemoteInputChannel> channel) = 0;
  /// The channel has unannounced credit: the I/O thread takes it (`getAndResetUnannouncedCredit`) and
  /// sends AddCredit.
  virtual void notifyCreditAvailable(const network::InputChannelId& receiver) = 0;
  /// Sends NewBufferSize (FLIP-183) for the channel; `bytes` > 0.
  virtual void notifyNewBufferSize(const network::InputChannelId& receiver, int32_t bytes) = 0;
  /// "TaskManager N (host:port)": the producer's side, for error messages.
  virtual std::string peerName() const = 0;
};

/// An input channel fed over TCP (see the file comment).
class RemoteInputChannel : public InputChannel {
 public:
  /// `name` appears in errors; `id` is unique per connection; the channel reads subpartition
  /// `subpartition` of `partition_id` in the TaskManager `client` connects to. `global` (the consumer
  /// TaskManager's pool, for the exclusive buffers) must outlive the channel, and so must `floating_pool`
  /// (the gate's) unless it is owned by a shared_ptr, which the channel then holds. `exclusive_buffers` >= 0 (0: floating buffers only, as the sender announces its backlog,
  /// FLINK-16641). `objects`: the edge's object batch serializer (nullptr for rows).
  RemoteInputChannel(std::string name, network::InputChannelId id, std::string partition_id, int32_t subpartition,
                     std::shared_ptr<PartitionRequestClient> client, network::NetworkBufferPool& global,
                     network::LocalBufferPool& floating_pool, int32_t exclusive_buffers,
                     std::shared_ptr<const ObjectBatchSerializer> objects = nullptr);
  ~RemoteInputChannel() override;

  /// Takes the exclusive buffers. Throws ConfigError ("Insufficient number of network buffers", naming the
  /// options to raise) when the TaskManager's network memory is short.
  void setup();
  /// Sends the PartitionRequest through the client (call once, after setup, on a channel held by a
  /// shared_ptr).
  void requestSubpartition(const std::shared_ptr<RemoteInputChannel>& self);

  const network::InputChannelId& id() const { return id_; }
  const std::string& partitionId() const { return partition_id_; }
  int32_t subpartitionIndex() const { return subpartition_; }
  int32_t initialCredit() const { return receiver_.initialCredit(); }
  const std::string& name() const { return name_; }

  // I/O thread.
  /// A free buffer to copy an arriving data buffer into, or an empty Buffer when the sender had no credit.
  network::Buffer requestBuffer() { return receiver_.requestBuffer(); }
  /// A data buffer arrived (filled by the transport). Throws InputError on a wrong sequence number.
  void onBuffer(network::Buffer buffer, int32_t sequence_number, int32_t backlog);
  /// An event arrived (`bytes` as EventSerializer wrote them). Throws InputError on a wrong sequence number
  /// or a malformed event.
  void onEvent(std::string_view bytes, int32_t sequence_number, int32_t backlog);
  /// The sender announced `backlog` (> 0) data buffers waiting without credit (BacklogAnnouncement): asks
  /// the gate for floating buffers, whose credit goes back as AddCredit.
  void onSenderBacklog(int32_t backlog);
  /// Fails the channel: the next `drain` throws `error`. Only the first failure is kept.
  void onError(std::exception_ptr error);
  /// Credit gained since the last call (for AddCredit), reset to 0.
  int32_t getAndResetUnannouncedCredit() { return receiver_.getAndResetUnannouncedCredit(); }
  /// True once the end of partition arrived (the channel expects nothing more).
  bool isFinished() const { return finished_.load(std::memory_order_acquire); }

  // InputChannel.
  void setAvailabilityListener(std::function<void()> listener) override;
  bool hasAvailable() const override;
  void announceBufferSize(int32_t bytes) override;
  int32_t queuedBuffers() const override { return receiver_.queuedBuffers(); }
  std::string describe() const override;
  /// Bytes received minus those read (read first, so never below the true value).
  int64_t queuedBytes() const override {
    const int64_t read = bytesRead();
    return std::max<int64_t>(0, bytes_received_.load(std::memory_order_relaxed) - read);
  }

  /// Any thread: the credit state (for tests and metrics).
  const network::CreditBasedReceiver& credit() const { return receiver_; }

 protected:
  /// The next received buffer; once the end of partition has been read, the channel's buffers go back
  /// (exclusive ones to the TaskManager's pool, floating ones to the gate's), as Flink releases a finished
  /// channel.
  network::Buffer nextBuffer() override;
  void checkError() const override;

 private:
  void notifyAvailable();

  const std::string name_;
  const network::InputChannelId id_;
  const std::string partition_id_;
  const int32_t subpartition_;
  std::shared_ptr<PartitionRequestClient> client_;
  // The gate's floating pool when it is shared-owned: kept alive while the receiver below (its listener,
  // its floating buffers) may still use it, e.g. after the gate went first on a region restart.
  std::shared_ptr<network::LocalBufferPool> floating_owner_;
  network::CreditBasedReceiver receiver_;
  std::atomic<int64_t> bytes_received_{0};
  std::atomic<bool> finished_{false};
  bool released_ = false;  // consumer thread only
  std::atomic<bool> failed_{false};
  mutable std::mutex mu_;
  std::exception_ptr error_;
  std::function<void()> listener_;
};

}  // namespace sluice::runtime
