#pragma once
/// TcpConnectionManager: the data transport of one TaskManager (Flink's `NettyConnectionManager` with its
/// `NettyServer`, `NettyClient`, `PartitionRequestQueue` and `CreditBasedPartitionRequestClientHandler`),
/// on standalone asio over TCP.
///
/// - A server bound to 127.0.0.1 on a port the OS picks serves this TaskManager's subpartitions
///   (ResultPartitionManager) to the other TaskManagers: a PartitionRequest registers a reader of the
///   subpartition's credit-based view with the request's initial credit; buffers go out as BufferResponse
///   (data, one credit each, with the backlog) and EventResponse (events, no credit) as they become
///   available and credit allows; AddCredit, NewBufferSize (FLIP-183) and CancelPartitionRequest act on the
///   reader.
/// - One client connection per remote TaskManager, opened on first use and multiplexed by receiver id:
///   PartitionRequest, AddCredit and NewBufferSize go out; arriving buffers are copied into the receiving
///   RemoteInputChannel's buffers. When every channel of a connection has its end of partition, the client
///   sends CloseRequest and closes it.
/// - Messages use the frame codec of network_frame.h. Garbage, a truncated frame, a buffer without credit, a
///   peer closing a connection that still carries unfinished channels, or an ErrorResponse fail the
///   channels of that connection with a RemoteTransportError naming the peer (TaskManager and address), and
///   are reported to the `on_error` handler (the cluster fails the job). Nothing crashes or hangs.
///   Exception, as Flink's network server: an incoming connection on which no partition was ever requested
///   carries nothing of any job; garbage on it only closes it, with one line on stderr.
///
/// Threading: one I/O thread per manager does all socket work; every public method returns at once and
/// may be called from any thread (task threads never block on a socket). Callbacks into channels and
/// subpartitions run on the I/O thread. asio stays inside the .cc (pimpl).

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "runtime/network/network_frame.h"
#include "runtime/network/remote_input_channel.h"
#include "runtime/network/result_partition_manager.h"

namespace sluice::runtime::network {

/// One TaskManager's TCP data transport (see the file comment).
class TcpConnectionManager {
 public:
  /// Called on the I/O thread with a RemoteTransportError when a connection fails.
  using ErrorHandler = std::function<void(std::exception_ptr)>;

  /// `task_manager` (0-based) names this TaskManager in messages ("TaskManager 1" for 0); `partitions` must
  /// outlive the manager. `max_frame_length` (bytes) bounds an incoming frame: it must hold a whole memory
  /// segment plus the frame header.
  TcpConnectionManager(int task_manager, ResultPartitionManager& partitions, ErrorHandler on_error,
                       uint32_t max_frame_length = kDefaultMaxFrameLength);
  /// Calls shutdown().
  ~TcpConnectionManager();
  TcpConnectionManager(const TcpConnectionManager&) = delete;
  TcpConnectionManager& operator=(const TcpConnectionManager&) = delete;

  /// Binds the server to 127.0.0.1:0 and starts the I/O thread. Throws RemoteTransportError when the
  /// socket cannot be bound.
  void start();
  /// The server's port (after start).
  uint16_t port() const;
  /// The client for the partitions of TaskManager `peer_task_manager` (0-based), listening on
  /// 127.0.0.1:`port`, for one channel that calls `requestSubpartition` on it once. One connection per peer,
  /// opened by the first request; it stays open while a requested channel is unfinished or a request is
  /// still to come (Flink's reference-counted PartitionRequestClient), and a connection that was closed
  /// (every channel finished, or failed) is replaced by a new one.
  std::shared_ptr<PartitionRequestClient> partitionRequestClient(int peer_task_manager, uint16_t port);
  /// Region failover, consumer side: forgets the channels `receivers` of this TaskManager (their tasks
  /// were cancelled): each leaves its connection, a CancelPartitionRequest tells the producer's side to
  /// stop serving it, and whatever still arrives for it (buffers, events, backlog, an ErrorResponse) is
  /// dropped instead of failing the connection, which keeps carrying the other channels. Returns once the
  /// I/O thread has done it, so the channels and their buffer pools may be destroyed afterwards. Unknown
  /// ids are ignored. Call from any thread but the I/O thread, not concurrently with shutdown().
  void releaseInputChannels(const std::vector<InputChannelId>& receivers);
  /// Region failover, producer side: stops serving `partition_ids` (results of cancelled producers): they
  /// leave the ResultPartitionManager, and every reader of them is released (a later request for them gets
  /// an ErrorResponse). Returns once done on the I/O thread; same calling rules as releaseInputChannels.
  void releasePartitions(const std::vector<std::string>& partition_ids);
  /// Connections open now, served and client ones (any thread; for tests).
  size_t connectionCount() const;
  /// Closes every connection and the server and joins the I/O thread; failures from then on are not
  /// reported. Idempotent.
  void shutdown();

  class Impl;  ///< the asio side, defined in the .cc only

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace sluice::runtime::network
