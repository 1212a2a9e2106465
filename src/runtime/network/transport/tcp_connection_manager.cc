#include "runtime/network/transport/tcp_connection_manager.h"

#include <fmt/format.h>
#include <pthread.h>

#include <asio.hpp>
#include <atomic>
#include <deque>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "common/error.h"
#include "runtime/network/network_frame.h"
#include "runtime/network/record_serializer.h"

namespace sluice::runtime::network {

using asio::ip::tcp;

namespace {

constexpr size_t kReadChunkBytes = 64 * 1024;
// Bytes gathered into one socket write before the next is started (several buffers per syscall).
constexpr size_t kWriteBatchBytes = 256 * 1024;

struct IdHash {
  size_t operator()(const InputChannelId& id) const {
    return std::hash<uint64_t>()(id.upper * 0x9E3779B97F4A7C15ull ^ id.lower);
  }
};

std::string taskManagerName(int task_manager) { return fmt::format("TaskManager {}", task_manager + 1); }

template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <class... F>
Overloaded(F...) -> Overloaded<F...>;

}  // namespace

class Connection;

class TcpConnectionManager::Impl : public std::enable_shared_from_this<TcpConnectionManager::Impl> {
 public:
  Impl(int task_manager, ResultPartitionManager& partitions, ErrorHandler on_error, uint32_t max_frame_length)
      : task_manager(task_manager),
        name(taskManagerName(task_manager)),
        partitions(partitions),
        on_error(std::move(on_error)),
        max_frame_length(max_frame_length) {}

  void accept();
  void report(std::exception_ptr error) {
    if (!stopping.load(std::memory_order_acquire) && on_error) on_error(std::move(error));
  }
  /// Runs `fn` on the I/O thread and waits for it (called from another thread); nothing when the thread
  /// does not run. Rethrows what `fn` throws.
  void runAndWait(const std::function<void()>& fn) {
    if (!started || stopping.load(std::memory_order_acquire)) return;
    std::promise<void> done;
    std::future<void> result = done.get_future();
    asio::post(io, [&fn, &done] {
      try {
        fn();
        done.set_value();
      } catch (...) {
        done.set_exception(std::current_exception());
      }
    });
    result.get();
  }
  /// The open connections (a copy, taken under `mu`).
  std::vector<std::shared_ptr<Connection>> openConnections() {
    std::lock_guard<std::mutex> lock(mu);
    return std::vector<std::shared_ptr<Connection>>(connections.begin(), connections.end());
  }

  /// The client of one peer TaskManager and the connection it sends on.
  struct ClientEntry {
    std::shared_ptr<PartitionRequestClient> client;
    std::weak_ptr<Connection> connection;
  };

  const int task_manager;
  const std::string name;
  ResultPartitionManager& partitions;
  ErrorHandler on_error;
  const uint32_t max_frame_length;
  asio::io_context io;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> guard;
  tcp::acceptor acceptor{io};
  std::thread thread;
  std::atomic<bool> stopping{false};
  bool started = false;
  uint16_t port = 0;
  std::mutex mu;  // clients, connections, and each Connection's request reservations
  std::map<int, ClientEntry> clients;  // by peer TaskManager: the connection new requests go on
  // Owns the open connections (handlers in flight hold them too); clients and listeners hold weak_ptrs,
  // so nothing outlives the io_context. Declared after `io`: cleared first on destruction.
  std::set<std::shared_ptr<Connection>> connections;
};

/// One TCP connection, both roles: as a client it carries this TaskManager's requests and receives
/// buffers for its RemoteInputChannels; as a server it serves subpartitions to the peer. All members are
/// used only on the I/O thread (the public entry points post there).
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  /// A subpartition served to the peer (Flink's `CreditBasedSequenceNumberingViewReader`).
  struct Reader {
    InputChannelId receiver;
    std::string partition_id;
    std::shared_ptr<PipelinedSubpartition> subpartition;
    bool queued = false;  // in `available_`
    bool done = false;    // end of partition sent
    bool released = false;
  };

  /// `peer_task_manager`: the TaskManager a client connection goes to (0-based); -1 when serving.
  Connection(TcpConnectionManager::Impl* owner, tcp::socket socket, std::string peer, bool client,
             int peer_task_manager = -1)
      : owner_(owner),
        socket_(std::move(socket)),
        peer_(std::move(peer)),
        peer_task_manager_(peer_task_manager),
        decoder_(peer_, owner->max_frame_length),
        client_(client),
        read_buf_(kReadChunkBytes) {}

  // Request reservations (Flink's PartitionRequestClient reference counter), owner's `mu` held: a channel
  // that got this connection's client holds one until its request is on the connection, so the connection
  // does not close in between; a retired connection (closing or closed) takes no new requests.
  bool retired() const { return retired_; }
  void reserveRequest() { ++pending_requests_; }

  /// Where fail() leaves its message for channels requested after the connection is gone (client role;
  /// read and written on the I/O thread only).
  void setFailureRecord(std::shared_ptr<std::string> failure) { failure_ = std::move(failure); }

  void connect(const tcp::endpoint& endpoint) {
    socket_.async_connect(endpoint, [self = shared_from_this()](const asio::error_code& ec) {
      if (self->closed_) return;
      if (ec) {
        self->fail(fmt::format("cannot connect: {}", ec.message()));
        return;
      }
      asio::error_code option_ec;
      self->socket_.set_option(tcp::no_delay(true), option_ec);  // latency only: ignore a failure
      self->connected_ = true;
      self->read();
      self->startWrite();
    });
  }

  void startServing() {
    connected_ = true;
    asio::error_code ec;
    socket_.set_option(tcp::no_delay(true), ec);
    read();
  }

  // --- client role ---
  void addChannel(const std::shared_ptr<RemoteInputChannel>& channel) {
    {
      std::lock_guard<std::mutex> lock(owner_->mu);
      if (pending_requests_ > 0) --pending_requests_;
    }
    if (closed_) {
      channel->onError(std::make_exception_ptr(
          RemoteTransportError(fmt::format("{}: the data connection to {} is closed", owner_->name, peer_))));
      return;
    }
    channels_[channel->id()] = channel;
    queue(PartitionRequest{channel->partitionId(), channel->subpartitionIndex(), channel->id(),
                           channel->initialCredit()});
  }

  void sendCredit(const InputChannelId& id) {
    auto it = channels_.find(id);
    if (it == channels_.end() || closed_) return;
    const int32_t credit = it->second->getAndResetUnannouncedCredit();
    if (credit > 0 && !it->second->isFinished()) queue(AddCredit{id, credit});
  }

  void queue(const Frame& frame) {
    if (closed_) return;
    encodeFrame(frame, out_pending_);
    startWrite();
  }

  void closeQuietly() {
    if (closed_) return;
    closed_ = true;
    asio::error_code ec;
    socket_.close(ec);
    releaseReaders();
    std::lock_guard<std::mutex> lock(owner_->mu);
    retireLocked();
    owner_->connections.erase(shared_from_this());
  }

  /// Region failover (client role): the channels `receivers` leave this connection; the producer hears a
  /// CancelPartitionRequest, and what it still sends them is dropped (Flink's cancelRequestFor).
  void releaseChannels(const std::vector<InputChannelId>& receivers) {
    for (const InputChannelId& id : receivers) {
      if (channels_.erase(id) == 0) continue;
      cancelled_.insert(id);
      queue(CancelPartitionRequest{id});
    }
  }

  /// Region failover (server role): stops serving every reader of `partition_ids`.
  void releasePartitions(const std::set<std::string>& partition_ids) {
    for (auto it = readers_.begin(); it != readers_.end();) {
      if (partition_ids.count(it->second->partition_id) > 0) {
        release(*it->second);
        it = readers_.erase(it);
      } else {
        ++it;
      }
    }
  }

 private:
  void read() {
    socket_.async_read_some(asio::buffer(read_buf_), [self = shared_from_this()](const asio::error_code& ec, size_t n) {
      if (self->closed_) return;
      if (ec) {
        self->onReadEnd(ec);
        return;
      }
      try {
        self->decoder_.feed(std::string_view(self->read_buf_.data(), n));
        while (!self->closed_) {
          std::optional<Frame> frame = self->decoder_.next();
          if (!frame) break;
          self->dispatch(*frame);
        }
      } catch (const std::exception& e) {
        self->fail(e.what(), /*protocol_error=*/true);
        return;
      }
      if (!self->closed_) self->read();
    });
  }

  int unfinished() const {
    int n = 0;
    for (const auto& [id, ch] : channels_) n += ch->isFinished() ? 0 : 1;
    for (const auto& [id, r] : readers_) n += (r->done || r->released) ? 0 : 1;
    return n;
  }

  void onReadEnd(const asio::error_code& ec) {
    if (ec == asio::error::eof) {
      try {
        decoder_.finish();
      } catch (const std::exception& e) {
        fail(e.what(), /*protocol_error=*/true);
        return;
      }
      const int open = unfinished();
      if (open > 0 && !close_requested_) {
        fail(fmt::format("{} closed the connection while {} channel(s) on it were unfinished", peer_, open));
      } else {
        closeQuietly();
      }
      return;
    }
    fail(fmt::format("reading from {} failed: {}", peer_, ec.message()));
  }

  /// Closes the connection; unfinished channels fail with the error, which is also reported when channels
  /// were unfinished or the peer broke the protocol (`protocol_error`). A served connection on which no
  /// partition was ever requested only logs a protocol error on stderr (it concerns no job).
  void fail(const std::string& why, bool protocol_error = false) {
    if (closed_) return;
    const int open = unfinished();
    std::vector<std::shared_ptr<RemoteInputChannel>> channels;
    for (const auto& [id, ch] : channels_) channels.push_back(ch);
    closeQuietly();
    if (owner_->stopping.load(std::memory_order_acquire)) return;
    const std::string message = fmt::format("{}: data connection with {} failed: {}", owner_->name, peer_, why);
    if (!client_ && !carried_channels_) {
      // Nothing of the job travels on it (no partition was ever requested): as Flink's network server, drop
      // the connection and go on; the job is not concerned.
      if (protocol_error) {
        fmt::print(stderr, "{}: closed the data connection with {}, which carried no channel of the job: {}\n",
                   owner_->name, peer_, why);
      }
      return;
    }
    if (failure_) *failure_ = message;
    const std::exception_ptr error = std::make_exception_ptr(RemoteTransportError(message));
    for (const auto& ch : channels) ch->onError(error);
    if (open > 0 || protocol_error) owner_->report(error);
  }

  void releaseReaders() {
    for (auto& [id, r] : readers_) release(*r);
    readers_.clear();
    available_.clear();
  }

  void dispatch(Frame& frame) {
    std::visit(Overloaded{
                   [&](PartitionRequest& m) { onPartitionRequest(m); },
                   [&](AddCredit& m) {
                     if (auto r = reader(m.receiver)) {
                       r->subpartition->view().addCredit(m.credit);
                       enqueue(r);
                     }
                   },
                   [&](NewBufferSize& m) {
                     if (auto r = reader(m.receiver)) r->subpartition->view().notifyNewBufferSize(m.buffer_size);
                   },
                   [&](CancelPartitionRequest& m) {
                     if (auto r = reader(m.receiver)) {
                       release(*r);
                       readers_.erase(m.receiver);
                     }
                   },
                   [&](CloseRequest&) { close_requested_ = true; },
                   [&](BacklogAnnouncement& m) {
                     if (cancelled_.count(m.receiver) > 0) return;
                     channel(m.receiver, "BacklogAnnouncement").onSenderBacklog(m.backlog);
                   },
                   [&](BufferResponse& m) {
                     if (cancelled_.count(m.receiver) == 0) onBufferResponse(m);
                   },
                   [&](EventResponse& m) {
                     if (cancelled_.count(m.receiver) > 0) return;
                     RemoteInputChannel& ch = channel(m.receiver, "EventResponse");
                     ch.onEvent(m.event, m.sequence_number, m.backlog);
                     if (ch.isFinished()) maybeClose();
                   },
                   [&](ErrorResponse& m) {
                     // E.g. the request of a released channel reached the producer after its partition was
                     // released: nobody waits for that channel any more.
                     if (!m.fatal && cancelled_.count(m.receiver) > 0) return;
                     const std::string message = fmt::format("{} reported: {}", peer_, m.message);
                     auto it = channels_.find(m.receiver);
                     if (m.fatal || it == channels_.end()) {
                       fail(message);
                       return;
                     }
                     const std::exception_ptr error = std::make_exception_ptr(RemoteTransportError(
                         fmt::format("{}: channel {}: {}", owner_->name, it->second->name(), message)));
                     it->second->onError(error);
                     owner_->report(error);
                   },
               },
               frame);
  }

  static void release(Reader& r) {
    r.released = true;
    r.subpartition->view().setAvailabilityListener(nullptr);
    r.subpartition->view().setBacklogListener(nullptr);
  }

  std::shared_ptr<Reader> reader(const InputChannelId& id) {
    auto it = readers_.find(id);
    return it == readers_.end() ? nullptr : it->second;
  }

  RemoteInputChannel& channel(const InputChannelId& id, const char* what) {
    auto it = channels_.find(id);
    if (it == channels_.end()) {
      throw RemoteTransportError(
          fmt::format("{} sent a {} for unknown receiver {:x}:{:x}", peer_, what, id.upper, id.lower));
    }
    return *it->second;
  }

  void onPartitionRequest(const PartitionRequest& m) {
    if (!named_peer_) {
      named_peer_ = true;
      const int tm = static_cast<int>(m.receiver.upper >> 48) - 1;
      if (tm >= 0) peer_ = fmt::format("{} ({})", taskManagerName(tm), peer_);
    }
    std::shared_ptr<PipelinedSubpartition> sp = owner_->partitions.lookup(m.partition_id, m.subpartition);
    if (!sp) {
      queue(ErrorResponse{
          m.receiver, false,
          fmt::format("{} has no subpartition {} of partition {}", owner_->name, m.subpartition, m.partition_id)});
      return;
    }
    if (readers_.count(m.receiver) > 0) {
      throw RemoteTransportError(
          fmt::format("{} requested receiver {:x}:{:x} twice", peer_, m.receiver.upper, m.receiver.lower));
    }
    carried_channels_ = true;
    auto r = std::make_shared<Reader>();
    r->receiver = m.receiver;
    r->partition_id = m.partition_id;
    r->subpartition = sp;
    readers_[m.receiver] = r;
    // A listener called on the producer's thread that runs `action` for this reader on the I/O thread.
    auto onIoThread = [owner = owner_->weak_from_this(), conn = std::weak_ptr<Connection>(shared_from_this()),
                       weak_reader =
                           std::weak_ptr<Reader>(r)](void (Connection::*action)(const std::shared_ptr<Reader>&)) {
      return [owner, conn, weak_reader, action] {
        if (auto o = owner.lock()) {
          asio::post(o->io, [conn, weak_reader, action] {
            auto c = conn.lock();
            auto rd = weak_reader.lock();
            if (c && rd) ((*c).*action)(rd);
          });
        }
      };
    };
    // The view turned available (Flink's notifyReaderNonEmpty).
    sp->view().setAvailabilityListener(onIoThread(&Connection::enqueue));
    if (m.credit > 0) {
      sp->view().addCredit(m.credit);
    } else {
      // A receiver without exclusive buffers hears of data waiting without credit only from us (FLINK-16641),
      // also of data written before its request.
      sp->view().setBacklogListener(onIoThread(&Connection::announceBacklog));
      announceBacklog(r);
    }
    enqueue(r);
  }

  void onBufferResponse(BufferResponse& m) {
    RemoteInputChannel& ch = channel(m.receiver, "BufferResponse");
    Buffer buffer = ch.requestBuffer();
    if (!buffer.valid()) {
      throw RemoteTransportError(fmt::format(
          "{} sent a data buffer to channel {} without credit (credit-based flow control violated)", peer_, ch.name()));
    }
    if (m.data.size() > static_cast<size_t>(buffer.capacity())) {
      throw RemoteTransportError(fmt::format("{} sent a buffer of {} bytes to channel {}; segments hold {} bytes",
                                             peer_, m.data.size(), ch.name(), buffer.capacity()));
    }
    buffer.append(reinterpret_cast<const uint8_t*>(m.data.data()), static_cast<int32_t>(m.data.size()));
    ch.onBuffer(std::move(buffer), m.sequence_number, m.backlog);
  }

  /// Client: once every channel has its end of partition and no request is on its way, the connection is
  /// no longer needed; later requests go on a new one.
  void maybeClose() {
    if (close_sent_ || !client_) return;
    for (const auto& [id, ch] : channels_) {
      if (!ch->isFinished()) return;
    }
    {
      std::lock_guard<std::mutex> lock(owner_->mu);
      if (pending_requests_ > 0) return;
      retireLocked();
    }
    close_sent_ = true;
    close_after_write_ = true;
    encodeFrame(CloseRequest{}, out_pending_);
    startWrite();
  }

 public:
  /// Server: tells a receiver without exclusive buffers how many data buffers wait without credit
  /// (Flink's PartitionRequestQueue.announceBacklog); nothing when credit came meanwhile.
  void announceBacklog(const std::shared_ptr<Reader>& r) {
    if (closed_ || r->released || r->done) return;
    const CreditBasedSubpartitionView& view = r->subpartition->view();
    const int32_t backlog = view.backlog();
    if (backlog > 0 && view.credit() == 0) queue(BacklogAnnouncement{r->receiver, backlog});
  }

  void enqueue(const std::shared_ptr<Reader>& r) {
    if (closed_ || r->queued || r->released || r->done || !r->subpartition->view().isAvailable()) return;
    r->queued = true;
    available_.push_back(r);
    startWrite();
  }

 private:
  void startWrite() {
    if (writing_ || closed_ || !connected_) return;
    out_writing_.swap(out_pending_);
    while (out_writing_.size() < kWriteBatchBytes && !available_.empty()) {
      std::shared_ptr<Reader> r = std::move(available_.front());
      available_.pop_front();
      r->queued = false;
      if (r->released) continue;
      std::optional<BufferAndBacklog> next = r->subpartition->view().pollNext();
      if (next) {
        const bool event = !next->buffer.isBuffer();
        encodeBufferFrame(event, r->receiver, next->sequence_number, next->backlog,
                          std::string_view(reinterpret_cast<const char*>(next->buffer.data()),
                                           static_cast<size_t>(next->buffer.size())),
                          out_writing_);
        if (event && EventSerializer::fromBuffer(next->buffer).type == NetworkEventType::kEndOfPartition) {
          r->done = true;
        }
        next->buffer.recycle();  // copied: the producer may reuse it
      }
      if (!r->done && r->subpartition->view().isAvailable()) {
        r->queued = true;
        available_.push_back(std::move(r));
      }
    }
    if (out_writing_.empty()) {
      if (close_after_write_) closeQuietly();
      return;
    }
    writing_ = true;
    asio::async_write(socket_, asio::buffer(out_writing_),
                      [self = shared_from_this()](const asio::error_code& ec, size_t) {
                        self->writing_ = false;
                        self->out_writing_.clear();
                        if (self->closed_) return;
                        if (ec) {
                          self->fail(fmt::format("writing to {} failed: {}", self->peer_, ec.message()));
                          return;
                        }
                        self->startWrite();
                      });
  }

  /// Owner's `mu` held: no new request goes on this connection.
  void retireLocked() {
    if (retired_) return;
    retired_ = true;
    auto it = owner_->clients.find(peer_task_manager_);
    if (client_ && it != owner_->clients.end() && it->second.connection.lock().get() == this) owner_->clients.erase(it);
  }

  TcpConnectionManager::Impl* owner_;  // outlives the connection (owns it and the io_context)
  tcp::socket socket_;
  std::string peer_;
  const int peer_task_manager_;
  FrameDecoder decoder_;
  const bool client_;
  std::vector<char> read_buf_;
  bool connected_ = false;
  bool closed_ = false;
  bool writing_ = false;
  bool named_peer_ = false;
  bool carried_channels_ = false;  // server: a subpartition was requested on this connection
  bool close_requested_ = false;
  bool close_sent_ = false;
  bool close_after_write_ = false;
  std::string out_pending_;
  std::string out_writing_;
  std::unordered_map<InputChannelId, std::shared_ptr<RemoteInputChannel>, IdHash> channels_;
  std::unordered_map<InputChannelId, std::shared_ptr<Reader>, IdHash> readers_;
  std::unordered_set<InputChannelId, IdHash> cancelled_;  // client: released channels (releaseChannels)
  int pending_requests_ = 0;  // owner's `mu`
  bool retired_ = false;      // owner's `mu`
  std::shared_ptr<std::string> failure_;
  std::deque<std::shared_ptr<Reader>> available_;
};

namespace {

/// The PartitionRequestClient of one connection: every call is posted to the I/O thread, and does nothing
/// once the manager or the connection is gone.
class TcpPartitionRequestClient : public PartitionRequestClient {
 public:
  TcpPartitionRequestClient(std::weak_ptr<TcpConnectionManager::Impl> owner, std::weak_ptr<Connection> conn,
                            std::string peer, std::shared_ptr<std::string> failure)
      : owner_(std::move(owner)), conn_(std::move(conn)), peer_(std::move(peer)), failure_(std::move(failure)) {}
  void requestSubpartition(std::shared_ptr<RemoteInputChannel> channel) override {
    // The connection may have failed (and be gone) before this request runs, e.g. a refused connect that
    // completes first: the channel then fails with the connection's error instead of waiting forever.
    auto owner = owner_.lock();
    if (!owner) return;
    asio::post(owner->io, [conn = conn_, channel = std::move(channel), failure = failure_,
                           closed = fmt::format("{}: the data connection to {} is closed", owner->name, peer_)] {
      if (auto c = conn.lock()) {
        c->addChannel(channel);
      } else {
        channel->onError(std::make_exception_ptr(RemoteTransportError(failure->empty() ? closed : *failure)));
      }
    });
  }
  void notifyCreditAvailable(const InputChannelId& receiver) override {
    post([receiver](Connection& c) { c.sendCredit(receiver); });
  }
  void notifyNewBufferSize(const InputChannelId& receiver, int32_t bytes) override {
    post([receiver, bytes](Connection& c) { c.queue(NewBufferSize{receiver, bytes}); });
  }
  std::string peerName() const override { return peer_; }

 private:
  template <class F>
  void post(F&& fn) {
    if (auto owner = owner_.lock()) {
      asio::post(owner->io, [conn = conn_, fn = std::forward<F>(fn)]() mutable {
        if (auto c = conn.lock()) fn(*c);
      });
    }
  }

  std::weak_ptr<TcpConnectionManager::Impl> owner_;
  std::weak_ptr<Connection> conn_;
  const std::string peer_;
  const std::shared_ptr<std::string> failure_;  // the connection's failure message, once it failed
};

}  // namespace

void TcpConnectionManager::Impl::accept() {
  acceptor.async_accept([self = this](const asio::error_code& ec, tcp::socket socket) {
    if (self->stopping.load(std::memory_order_acquire) || !self->acceptor.is_open()) return;
    if (!ec) {
      asio::error_code ep_ec;
      const tcp::endpoint remote = socket.remote_endpoint(ep_ec);
      const std::string peer =
          ep_ec ? std::string("an unknown peer") : fmt::format("{}:{}", remote.address().to_string(), remote.port());
      auto conn = std::make_shared<Connection>(self, std::move(socket), peer, /*client=*/false);
      {
        std::lock_guard<std::mutex> lock(self->mu);
        self->connections.insert(conn);
      }
      conn->startServing();
    }
    self->accept();
  });
}

TcpConnectionManager::TcpConnectionManager(int task_manager, ResultPartitionManager& partitions, ErrorHandler on_error,
                                           uint32_t max_frame_length)
    : impl_(std::make_shared<Impl>(task_manager, partitions, std::move(on_error), max_frame_length)) {}

TcpConnectionManager::~TcpConnectionManager() { shutdown(); }

void TcpConnectionManager::start() {
  Impl& im = *impl_;
  SLUICE_CHECK(!im.started, "{}: transport started twice", im.name);
  try {
    const tcp::endpoint endpoint(asio::ip::make_address("127.0.0.1"), 0);
    im.acceptor.open(endpoint.protocol());
    im.acceptor.set_option(tcp::acceptor::reuse_address(true));
    im.acceptor.bind(endpoint);
    im.acceptor.listen();
    im.port = im.acceptor.local_endpoint().port();
  } catch (const std::system_error& e) {
    throw RemoteTransportError(fmt::format("{}: cannot bind the data port on 127.0.0.1: {}", im.name, e.what()));
  }
  im.started = true;
  im.guard.emplace(asio::make_work_guard(im.io));
  im.accept();
  im.thread = std::thread([impl = impl_.get()] {
    const std::string thread_name = fmt::format("net-io-tm{}", impl->task_manager + 1);
    pthread_setname_np(pthread_self(), thread_name.substr(0, 15).c_str());
    // A handler that throws must not end the process (a std::thread would terminate it): report the error
    // (the job fails) and keep serving until shutdown.
    for (;;) {
      try {
        impl->io.run();
        break;
      } catch (const std::exception& e) {
        impl->report(std::make_exception_ptr(RemoteTransportError(fmt::format("{}: {}", impl->name, e.what()))));
      }
    }
  });
}

uint16_t TcpConnectionManager::port() const { return impl_->port; }

std::shared_ptr<PartitionRequestClient> TcpConnectionManager::partitionRequestClient(int peer_task_manager,
                                                                                     uint16_t port) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto it = impl_->clients.find(peer_task_manager);
  if (it != impl_->clients.end()) {
    std::shared_ptr<Connection> open = it->second.connection.lock();
    if (open && !open->retired()) {
      open->reserveRequest();
      return it->second.client;
    }
    impl_->clients.erase(it);
  }
  const std::string peer = fmt::format("{} (127.0.0.1:{})", taskManagerName(peer_task_manager), port);
  auto conn =
      std::make_shared<Connection>(impl_.get(), tcp::socket(impl_->io), peer, /*client=*/true, peer_task_manager);
  conn->reserveRequest();
  impl_->connections.insert(conn);
  auto failure = std::make_shared<std::string>();
  conn->setFailureRecord(failure);
  const tcp::endpoint endpoint(asio::ip::make_address("127.0.0.1"), port);
  asio::post(impl_->io, [weak = std::weak_ptr<Connection>(conn), endpoint] {
    if (auto c = weak.lock()) c->connect(endpoint);
  });
  auto client = std::make_shared<TcpPartitionRequestClient>(impl_, conn, peer, std::move(failure));
  impl_->clients.emplace(peer_task_manager, Impl::ClientEntry{client, conn});
  return client;
}

size_t TcpConnectionManager::connectionCount() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->connections.size();
}

void TcpConnectionManager::releaseInputChannels(const std::vector<InputChannelId>& receivers) {
  if (receivers.empty()) return;
  Impl& im = *impl_;
  im.runAndWait([&im, &receivers] {
    for (const auto& c : im.openConnections()) c->releaseChannels(receivers);
  });
}

void TcpConnectionManager::releasePartitions(const std::vector<std::string>& partition_ids) {
  if (partition_ids.empty()) return;
  Impl& im = *impl_;
  for (const std::string& id : partition_ids) im.partitions.releasePartition(id);
  const std::set<std::string> ids(partition_ids.begin(), partition_ids.end());
  im.runAndWait([&im, &ids] {
    for (const auto& c : im.openConnections()) c->releasePartitions(ids);
  });
}

void TcpConnectionManager::shutdown() {
  Impl& im = *impl_;
  if (im.stopping.exchange(true)) return;
  if (im.started) {
    asio::post(im.io, [&im] {
      asio::error_code ec;
      im.acceptor.close(ec);
      std::vector<std::shared_ptr<Connection>> all;
      {
        std::lock_guard<std::mutex> lock(im.mu);
        all.assign(im.connections.begin(), im.connections.end());
      }
      for (const auto& c : all) c->closeQuietly();
      im.io.stop();
    });
    im.guard.reset();
    if (im.thread.joinable()) im.thread.join();
  }
  std::lock_guard<std::mutex> lock(im.mu);
  im.connections.clear();
  im.clients.clear();
}

}  // namespace sluice::runtime::network
