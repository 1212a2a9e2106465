#pragma once
/// Credit-based flow control (FLINK-7282) as two state machines without sockets:
///
/// - `CreditBasedSubpartitionView`, the sender side of one subpartition (Flink's
///   `CreditBasedSequenceNumberingViewReader` over a `PipelinedSubpartition`): a queue of finished buffers
///   that gives out a data buffer only against credit, each with the backlog (data buffers still queued)
///   and a sequence number. Events need no credit (the receiver does not take them from its buffers).
/// - `CreditBasedReceiver`, the receiver side of one channel (the credit part of Flink's `RemoteInputChannel`
///   with its `BufferManager`; runtime::RemoteInputChannel wraps it around a TCP connection):
///   exclusive buffers are its initial credit; each announced backlog asks the gate's LocalBufferPool for
///   floating buffers until backlog + initial credit buffers are available; every buffer gained (a new
///   floating one, or an exclusive one recycled by the consumer) is unannounced credit for the next
///   AddCredit message. With no exclusive buffers (buffers-per-channel 0) the channel lives on floating
///   buffers alone: the sender announces its backlog when it has data and no credit (FLINK-16641).
///
/// Threading: both are thread-safe (writer thread, network thread and consumer thread meet here).
/// Callbacks run without internal locks held.

#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "runtime/network/buffer_pool.h"

namespace sluice::runtime::network {

/// A buffer the sender may put on the wire, with what the receiver needs to hand out credit.
struct BufferAndBacklog {
  Buffer buffer;
  int32_t backlog = 0;          ///< data buffers still queued behind this one
  int32_t sequence_number = 0;  ///< per channel, from 0
};

/// Sender side of one subpartition (Flink's `CreditBasedSequenceNumberingViewReader`).
class CreditBasedSubpartitionView {
 public:
  /// `initial_credit` is the receiver's exclusive buffer count, sent with the partition request.
  /// `starting_buffer_size` (bytes, 0 = the full segment) limits the writer's buffers until a size is
  /// announced (Flink's `PipelinedSubpartition` starting buffer size, FLINK-36556).
  explicit CreditBasedSubpartitionView(int32_t initial_credit, int32_t starting_buffer_size = 0);

  /// Queues a finished buffer (data or event) from the writer.
  void add(Buffer buffer);
  /// Queues the event `buffer` (an unaligned checkpoint barrier, FLIP-76) ahead of every queued buffer,
  /// behind earlier priority events only (Flink's PipelinedSubpartition.addPriorityElement); it needs no
  /// credit. Appends to `overtaken` the bytes of the data buffers it overtook, from the first record that
  /// starts in them (the bytes before continue a record the reader already holds part of), so `overtaken`
  /// gets whole length-prefixed records. Events it overtakes are not copied.
  void addPriority(Buffer buffer, std::string& overtaken);
  /// Adds credit from an AddCredit message. Throws InputError when `credit` <= 0 (a peer's bad message).
  void addCredit(int32_t credit);
  /// True when pollNext would return a buffer: an event at the head, or a data buffer and credit > 0.
  bool isAvailable() const;
  /// The next buffer to send, or nothing. Never returns a data buffer without credit; each data buffer
  /// uses one credit.
  std::optional<BufferAndBacklog> pollNext();
  /// Data buffers queued (Flink's `buffersInBacklog`).
  int32_t backlog() const;
  int32_t credit() const;
  /// Sets the size for buffers the writer starts from now on (FLIP-183, Flink's
  /// `PipelinedSubpartition.bufferSize`). Throws InputError when `size` <= 0.
  void notifyNewBufferSize(int32_t size);
  /// The size in bytes for buffers the writer starts now: the last announced one, else the starting size
  /// (0: the full segment).
  int32_t bufferSize() const;
  /// Called (without locks) when the view turns from unavailable to available, e.g. to enqueue it for
  /// the network thread (Flink's `notifyReaderNonEmpty`).
  void setAvailabilityListener(std::function<void()> listener);
  /// Called (without locks) when a data buffer is queued while no other data buffer waits and no credit is
  /// left: a receiver without exclusive buffers learns of it only from a BacklogAnnouncement (Flink's
  /// `PartitionRequestQueue.announceBacklog` for readers of initial credit 0, FLINK-16641).
  void setBacklogListener(std::function<void()> listener);

 private:
  bool availableLocked() const;

  mutable std::mutex mu_;
  std::deque<Buffer> queue_;
  int32_t credit_;
  int32_t priority_events_ = 0;  ///< priority events at the head of queue_
  int32_t data_buffers_ = 0;
  int32_t sequence_number_ = 0;
  int32_t buffer_size_ = 0;
  std::function<void()> availability_listener_;
  std::function<void()> backlog_listener_;
};

/// Receiver side of one remote channel (the credit part of Flink's `RemoteInputChannel` with its
/// `BufferManager`).
class CreditBasedReceiver : public BufferRecycler, public BufferListener {
 public:
  /// `floating_pool` is the gate's pool; `exclusive_buffers` (buffers-per-channel) become the initial
  /// credit at `setup`. Both pools must outlive the channel.
  CreditBasedReceiver(std::string name, NetworkBufferPool& global, LocalBufferPool& floating_pool,
                     int32_t exclusive_buffers);
  ~CreditBasedReceiver() override;

  /// Takes the exclusive segments. Throws ConfigError naming the options when memory is short.
  void setup();
  int32_t initialCredit() const { return initial_credit_; }

  /// A free buffer to receive a data buffer into (floating first, then exclusive), or an empty Buffer when
  /// the sender sent without credit. Without exclusive buffers each one taken lowers the buffers required
  /// until the next backlog (Flink's `BufferManager.requestBuffer`).
  Buffer requestBuffer();
  /// A buffer arrived with the sender's backlog. Throws InputError naming the channel when the sequence
  /// number is not the expected one.
  void onBuffer(Buffer buffer, int32_t sequence_number, int32_t backlog);
  /// Asks for floating buffers so that backlog + initial credit buffers are available.
  void onSenderBacklog(int32_t backlog);
  /// The oldest received buffer, or an empty Buffer. Releasing it returns its credit.
  Buffer pollNext();
  /// Credit gained since the last call (the AddCredit to send), reset to 0.
  int32_t getAndResetUnannouncedCredit();
  int32_t unannouncedCredit() const;
  /// Called (without locks) when unannounced credit turns from 0 to positive (Flink's
  /// `notifyCreditAvailable`).
  void setCreditListener(std::function<void()> listener);

  int32_t numRequiredBuffers() const;
  /// Free buffers held (exclusive + floating).
  int32_t availableBuffers() const;
  int32_t floatingBuffers() const;
  /// Received buffers waiting for the consumer.
  int32_t queuedBuffers() const;
  /// Drops everything; exclusive segments go back to the NetworkBufferPool (those still held by the
  /// consumer when they are released).
  void releaseAllResources();

  /// An exclusive buffer came back from the consumer.
  void recycle(MemorySegment* segment) override;
  /// A floating buffer from the gate's pool, after a request found none.
  bool notifyBufferAvailable(Buffer buffer) override;

 private:
  int32_t availableLocked() const { return static_cast<int32_t>(exclusive_.size() + floating_.size()); }
  void addCredit(int32_t n, std::unique_lock<std::mutex>& lock);

  const std::string name_;
  NetworkBufferPool& global_;
  LocalBufferPool& floating_pool_;
  const int32_t initial_credit_;
  mutable std::mutex mu_;
  std::deque<Buffer> exclusive_;
  std::deque<Buffer> floating_;
  std::deque<Buffer> received_;
  int32_t required_ = 0;
  int32_t unannounced_credit_ = 0;
  int32_t expected_sequence_ = 0;
  bool waiting_for_floating_ = false;
  bool released_ = false;
  bool set_up_ = false;
  std::function<void()> credit_listener_;
};

}  // namespace sluice::runtime::network
