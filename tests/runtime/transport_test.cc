// The TCP transport between TaskManagers: two TcpConnectionManagers in one process over loopback, a
// producer TaskManager serving a PipelinedSubpartition and a consumer TaskManager reading it through a
// RemoteInputChannel; and a raw asio socket playing a peer that breaks the protocol.
#include <gtest/gtest.h>

#include <array>
#include <asio.hpp>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "runtime/network/buffer_pool.h"
#include "runtime/network/input_gate.h"
#include "runtime/network/network_frame.h"
#include "runtime/network/pipelined_subpartition.h"
#include "runtime/network/remote_input_channel.h"
#include "runtime/network/result_partition_manager.h"
#include "runtime/network/stream_element_codec.h"
#include "runtime/network/transport/tcp_connection_manager.h"
#include "types/row_batch.h"

namespace sluice::runtime {
namespace {

using asio::ip::tcp;
using network::TcpConnectionManager;
using Clock = std::chrono::steady_clock;

constexpr auto kGuard = std::chrono::seconds(20);  // failure guard only

types::RowType oneBigint() {
  types::RowType t;
  t.names.push_back("v");
  t.types.push_back(types::LogicalType::bigint());
  return t;
}

types::RowBatch numbers(int64_t from, int64_t count) {
  types::RowBatch b(oneBigint());
  for (int64_t v = from; v < from + count; ++v) {
    b.column(0).appendLong(v);
    b.kinds().push_back(types::RowKind::kInsert);
  }
  return b;
}

// Failures reported by a transport's error handler.
struct Errors {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::string> messages;
  TcpConnectionManager::ErrorHandler handler() {
    return [this](std::exception_ptr ep) {
      try {
        std::rethrow_exception(ep);
      } catch (const std::exception& e) {
        std::lock_guard<std::mutex> lock(mu);
        messages.push_back(e.what());
      }
      cv.notify_all();
    };
  }
  std::string waitForFirst() {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait_for(lock, kGuard, [&] { return !messages.empty(); });
    return messages.empty() ? std::string("(no error reported)") : messages.front();
  }
};

// TaskManager 1: one partition "p" with one remote subpartition, served by its transport.
struct ProducerTm {
  explicit ProducerTm(int32_t segment_size)
      : global(64, segment_size),
        pool(global.createBufferPool(2, 40, "producer")),
        subpartition(std::make_shared<PipelinedSubpartition>(pool, 0, /*remote=*/true, "test producer")) {
    partitions.registerSubpartition("p", 0, subpartition);
    transport.start();
  }
  network::NetworkBufferPool global;
  std::shared_ptr<network::LocalBufferPool> pool;
  std::shared_ptr<PipelinedSubpartition> subpartition;
  ResultPartitionManager partitions;
  Errors errors;
  TcpConnectionManager transport{0, partitions, errors.handler()};
};

// TaskManager 2: a gate with one RemoteInputChannel (`exclusive` exclusive buffers, 8 floating in the gate's
// pool).
struct ConsumerTm {
  explicit ConsumerTm(int32_t segment_size, int32_t exclusive = 2)
      : exclusive(exclusive), global(10, segment_size), floating(global.createBufferPool(0, 8, "gate")) {
    transport.start();
  }
  void connect(uint16_t port, const std::string& partition = "p") {
    channel =
        std::make_shared<RemoteInputChannel>("test channel", network::InputChannelId{2ull << 48, 7}, partition, 0,
                                             transport.partitionRequestClient(0, port), global, *floating, exclusive);
    channel->setup();
    gate.attachChannel(0, channel);
    channel->requestSubpartition(channel);
  }
  // Reads the gate until the end of partition (true) or a channel failure (false, message in `error`).
  bool readAll(std::vector<int64_t>& rows, std::vector<int64_t>& watermarks) {
    return readGate(gate, rows, watermarks, error);
  }
  // A further channel of this TaskManager, `lower` its receiver id, reading `partition` in its own gate.
  std::shared_ptr<RemoteInputChannel> connectAnother(InputGate& into, uint16_t port, const std::string& partition,
                                                     uint64_t lower) {
    auto ch = std::make_shared<RemoteInputChannel>("another channel", network::InputChannelId{2ull << 48, lower},
                                                   partition, 0, transport.partitionRequestClient(0, port), global,
                                                   *floating, exclusive);
    ch->setup();
    into.attachChannel(0, ch);
    ch->requestSubpartition(ch);
    return ch;
  }
  static bool readGate(InputGate& gate, std::vector<int64_t>& rows, std::vector<int64_t>& watermarks,
                       std::string& error) {
    const auto give_up = Clock::now() + kGuard;
    std::deque<InputGate::Entry> out;
    while (Clock::now() < give_up) {
      try {
        gate.pollAll(out, Clock::now() + std::chrono::milliseconds(100));
      } catch (const std::exception& e) {
        error = e.what();
        return false;
      }
      for (auto& e : out) {
        if (auto* b = std::get_if<types::RowBatch>(&e.element)) {
          for (size_t i = 0; i < b->numRows(); ++i) rows.push_back(b->column(0).getLong(i));
        } else if (auto* w = std::get_if<Watermark>(&e.element)) {
          watermarks.push_back(w->timestamp);
        } else if (std::holds_alternative<EndOfPartition>(e.element)) {
          return true;
        }
      }
      out.clear();
    }
    error = "timed out";
    return false;
  }
  const int32_t exclusive;
  network::NetworkBufferPool global;
  std::shared_ptr<network::LocalBufferPool> floating;
  InputGate gate{1};
  std::shared_ptr<RemoteInputChannel> channel;
  std::string error;
  ResultPartitionManager partitions;
  Errors errors;
  TcpConnectionManager transport{1, partitions, errors.handler()};
};

// Waits (failure guard kGuard) until `pred` holds, checking every millisecond: a state condition, the
// transport offers no event for it.
template <class Pred>
bool eventually(Pred pred) {
  const auto give_up = Clock::now() + kGuard;
  while (!pred()) {
    if (Clock::now() > give_up) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

TEST(TcpTransportTest, RoundTripKeepsRowsWatermarksAndOrder) {
  ProducerTm producer(256);
  ConsumerTm consumer(256);
  consumer.connect(producer.transport.port());
  // 60 batches of 1..7 rows and one of 3000 rows (many 256 b buffers), a watermark after every 10th.
  std::vector<int64_t> want_rows;
  std::vector<int64_t> want_watermarks;
  std::thread writer([&] {
    int64_t next = 0;
    for (int i = 0; i < 61; ++i) {
      const int64_t count = i == 30 ? 3000 : 1 + i % 7;
      producer.subpartition->write(numbers(next, count));
      next += count;
      if (i % 10 == 9) producer.subpartition->write(Watermark{next});
    }
    producer.subpartition->write(EndOfPartition{});
  });
  int64_t next = 0;
  for (int i = 0; i < 61; ++i) {
    const int64_t count = i == 30 ? 3000 : 1 + i % 7;
    for (int64_t v = next; v < next + count; ++v) want_rows.push_back(v);
    next += count;
    if (i % 10 == 9) want_watermarks.push_back(next);
  }
  std::vector<int64_t> rows, watermarks;
  const bool ok = consumer.readAll(rows, watermarks);
  writer.join();
  ASSERT_TRUE(ok) << consumer.error;
  EXPECT_EQ(rows, want_rows);
  EXPECT_EQ(watermarks, want_watermarks);
  EXPECT_TRUE(consumer.channel->isFinished());
  // Once the end of partition has been read, the channel gives its buffers back (the next drain notices).
  std::deque<InputGate::Entry> more;
  consumer.gate.pollAll(more, Clock::now() + std::chrono::milliseconds(1));
  EXPECT_TRUE(more.empty());
  EXPECT_EQ(consumer.channel->credit().availableBuffers(), 0);
  EXPECT_EQ(consumer.global.availableSegments() + consumer.floating->requestedSegments(), 10);
  EXPECT_TRUE(producer.errors.messages.empty());
  EXPECT_TRUE(consumer.errors.messages.empty());
}

TEST(TcpTransportTest, CreditBoundsBuffersInFlightAndReturnsOnRecycle) {
  ProducerTm producer(256);
  ConsumerTm consumer(256);
  consumer.connect(producer.transport.port());
  // One batch of 600 rows: with the serializer's u32 length prefix it spans B buffers of 256 b.
  const types::RowBatch batch = numbers(0, 600);
  std::string bytes;
  batch.serialize(bytes);
  const int64_t buffers = (static_cast<int64_t>(bytes.size()) + 4 + 255) / 256;
  ASSERT_GT(buffers, 10);
  producer.subpartition->write(numbers(0, 600));
  producer.subpartition->flush();
  // The consumer reads nothing yet. Credit: 2 exclusive buffers; the first buffer announces a backlog of
  // B - 1, which gets all 8 floating buffers of the gate as credit: exactly 10 buffers arrive, the rest
  // waits at the producer with no credit left.
  ASSERT_TRUE(eventually([&] { return consumer.channel->queuedBuffers() == 10; }));
  ASSERT_TRUE(eventually([&] { return producer.subpartition->view().backlog() == buffers - 10; }));
  EXPECT_EQ(producer.subpartition->view().credit(), 0);
  EXPECT_EQ(consumer.channel->queuedBuffers(), 10);
  EXPECT_EQ(consumer.channel->credit().floatingBuffers(), 0);  // all 8 hold received data
  // Reading recycles the buffers: the credit goes back as AddCredit and the rest of the batch follows.
  producer.subpartition->write(EndOfPartition{});
  std::vector<int64_t> rows, watermarks;
  ASSERT_TRUE(consumer.readAll(rows, watermarks)) << consumer.error;
  ASSERT_EQ(rows.size(), 600u);
  EXPECT_EQ(rows.front(), 0);
  EXPECT_EQ(rows.back(), 599);
  EXPECT_TRUE(consumer.errors.messages.empty());
}

// FLIP-76 over TCP: with no credit left, an unaligned barrier still goes out at once, ahead of the buffers
// queued at the producer; it arrives in the middle of the record the consumer holds part of, and the
// records it overtook (B, not A's tail) are the output channel state.
TEST(TcpTransportTest, AnUnalignedBarrierOvertakesBuffersWaitingForCredit) {
  ProducerTm producer(256);
  ConsumerTm consumer(256);
  consumer.connect(producer.transport.port());
  producer.subpartition->write(numbers(0, 600));  // A: more buffers than the 10 credits
  producer.subpartition->write(numbers(600, 3));  // B
  producer.subpartition->flush();
  ASSERT_TRUE(eventually([&] { return consumer.channel->queuedBuffers() == 10; }));
  ASSERT_EQ(producer.subpartition->view().credit(), 0);
  std::string overtaken;
  producer.subpartition->writePriorityBarrier(
      CheckpointBarrier{3, 1, checkpoint::CheckpointKind::kCheckpoint, checkpoint::AlignmentType::kUnaligned, 0},
      overtaken);
  // The barrier arrives without credit: 10 data buffers and the barrier event are at the consumer.
  ASSERT_TRUE(eventually([&] { return consumer.channel->queuedBuffers() == 11; }));
  std::vector<std::vector<int64_t>> state;
  network::forEachChannelStateRecord(overtaken, nullptr, [&](StreamElement&& e) {
    const auto& b = std::get<types::RowBatch>(e);
    state.emplace_back();
    for (size_t i = 0; i < b.numRows(); ++i) state.back().push_back(b.column(0).getLong(i));
  });
  EXPECT_EQ(state, (std::vector<std::vector<int64_t>>{{600, 601, 602}}));
  producer.subpartition->write(EndOfPartition{});
  std::vector<std::string> order;
  const auto give_up = Clock::now() + kGuard;
  std::deque<InputGate::Entry> out;
  bool ended = false;
  while (!ended && Clock::now() < give_up) {
    consumer.gate.pollAll(out, Clock::now() + std::chrono::milliseconds(100));
    for (auto& e : out) {
      if (std::holds_alternative<CheckpointBarrier>(e.element)) {
        order.push_back(e.mid_record ? "barrier(mid-record)" : "barrier");
      } else if (auto* b = std::get_if<types::RowBatch>(&e.element)) {
        order.push_back(fmt::format("rows {}", b->numRows()));
      } else if (std::holds_alternative<EndOfPartition>(e.element)) {
        ended = true;
      }
    }
    out.clear();
  }
  EXPECT_EQ(order, (std::vector<std::string>{"barrier(mid-record)", "rows 600", "rows 3"}));
  EXPECT_TRUE(consumer.errors.messages.empty());
}

TEST(TcpTransportTest, WithoutExclusiveBuffersTheProducerAnnouncesItsBacklog) {
  // buffers-per-channel 0 (FLINK-16641): the PartitionRequest brings no credit, so every data buffer
  // travels in a floating buffer the consumer granted after a BacklogAnnouncement or a buffer's backlog.
  ProducerTm producer(256);
  producer.subpartition->write(numbers(0, 600));  // before the request: announced when it arrives
  producer.subpartition->flush();
  ConsumerTm consumer(256, /*exclusive=*/0);
  consumer.connect(producer.transport.port());
  EXPECT_EQ(consumer.channel->initialCredit(), 0);
  std::thread writer([&] {
    producer.subpartition->write(numbers(600, 400));
    producer.subpartition->write(Watermark{1000});
    producer.subpartition->write(numbers(1000, 5));  // after the consumer may have drained everything
    producer.subpartition->write(EndOfPartition{});
  });
  std::vector<int64_t> rows, watermarks;
  const bool ok = consumer.readAll(rows, watermarks);
  writer.join();
  ASSERT_TRUE(ok) << consumer.error;
  std::vector<int64_t> want(1005);
  for (int64_t v = 0; v < 1005; ++v) want[static_cast<size_t>(v)] = v;
  EXPECT_EQ(rows, want);
  EXPECT_EQ(watermarks, std::vector<int64_t>{1000});
  EXPECT_TRUE(producer.errors.messages.empty());
  EXPECT_TRUE(consumer.errors.messages.empty());
}

TEST(TcpTransportTest, AnnouncedBufferSizeReachesTheProducer) {
  ProducerTm producer(32768);
  ConsumerTm consumer(32768);
  consumer.connect(producer.transport.port());
  // FLIP-183 remote path: the consumer's size travels as a NewBufferSize message.
  ASSERT_TRUE(eventually([&] { return producer.subpartition->view().credit() == 2; }));  // request served
  consumer.channel->announceBufferSize(512);
  ASSERT_TRUE(eventually([&] { return producer.subpartition->view().bufferSize() == 512; }));
  producer.subpartition->write(EndOfPartition{});
  std::vector<int64_t> rows, watermarks;
  EXPECT_TRUE(consumer.readAll(rows, watermarks)) << consumer.error;
}

TEST(TcpTransportTest, UnknownPartitionFailsTheChannelNamingIt) {
  ProducerTm producer(256);
  ConsumerTm consumer(256);
  consumer.connect(producer.transport.port(), "missing");
  std::vector<int64_t> rows, watermarks;
  ASSERT_FALSE(consumer.readAll(rows, watermarks));
  EXPECT_NE(consumer.error.find("TaskManager 1 has no subpartition 0 of partition missing"), std::string::npos)
      << consumer.error;
  EXPECT_NE(consumer.errors.waitForFirst().find("missing"), std::string::npos);
}

// A peer the test controls: accepts one connection and reads the PartitionRequest.
struct FakeProducer {
  asio::io_context io;
  tcp::acceptor acceptor{io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)};
  tcp::socket socket{io};
  network::PartitionRequest request;
  uint16_t port() const { return acceptor.local_endpoint().port(); }
  void acceptAndReadRequest() {
    acceptor.accept(socket);
    request = std::get<network::PartitionRequest>(readFrame());
  }
  network::Frame readFrame() {
    std::string header(network::kFrameHeaderLength, '\0');
    asio::read(socket, asio::buffer(header));
    const uint32_t length = (static_cast<uint8_t>(header[0]) << 24) | (static_cast<uint8_t>(header[1]) << 16) |
                            (static_cast<uint8_t>(header[2]) << 8) | static_cast<uint8_t>(header[3]);
    std::string rest(length - network::kFrameHeaderLength, '\0');
    asio::read(socket, asio::buffer(rest));
    return network::decodeFrame(header + rest);
  }
  void send(const std::string& bytes) { asio::write(socket, asio::buffer(bytes)); }
  std::string buffer(int32_t sequence, int32_t backlog, size_t size) {
    return network::encodeFrame(network::BufferResponse{request.receiver, sequence, backlog, std::string(size, 'x')});
  }
};

// Runs `misbehave` against a consumer and returns the channel's failure; checks it was also reported.
std::string failureFromBadProducer(const std::function<void(FakeProducer&)>& misbehave) {
  FakeProducer fake;
  ConsumerTm consumer(256);
  consumer.connect(fake.port());
  fake.acceptAndReadRequest();
  EXPECT_EQ(fake.request.partition_id, "p");
  EXPECT_EQ(fake.request.credit, 2);  // the exclusive buffers
  misbehave(fake);
  // The consumer reads only after the failure, so no credit comes back meanwhile.
  const std::string peer = fmt::format("TaskManager 1 (127.0.0.1:{})", fake.port());
  const std::string reported = consumer.errors.waitForFirst();
  EXPECT_NE(reported.find(peer), std::string::npos) << reported;
  std::vector<int64_t> rows, watermarks;
  EXPECT_FALSE(consumer.readAll(rows, watermarks));
  EXPECT_EQ(consumer.error, reported);
  return consumer.error;
}

TEST(TcpTransportFaultTest, GarbageFailsTheChannelNamingThePeer) {
  const std::string error = failureFromBadProducer([](FakeProducer& f) { f.send("GET / HTTP/1.1\r\n\r\n"); });
  EXPECT_NE(error.find("bad magic number"), std::string::npos) << error;
  EXPECT_NE(error.find("TaskManager 2: data connection with"), std::string::npos) << error;
}

TEST(TcpTransportFaultTest, ClosingMidBufferFailsTheChannel) {
  const std::string error = failureFromBadProducer([](FakeProducer& f) {
    const std::string frame = f.buffer(0, 0, 100);
    f.send(frame.substr(0, frame.size() / 2));
    f.socket.close();
  });
  EXPECT_NE(error.find("closed inside a frame"), std::string::npos) << error;
}

TEST(TcpTransportFaultTest, TruncatedFrameLengthIsRejected) {
  // A header announcing fewer bytes than a header holds.
  const std::string error = failureFromBadProducer([](FakeProducer& f) {
    std::string frame = f.buffer(0, 0, 10);
    frame[0] = frame[1] = frame[2] = 0;
    frame[3] = 4;
    f.send(frame);
  });
  EXPECT_NE(error.find("frame length 4 outside"), std::string::npos) << error;
}

TEST(TcpTransportFaultTest, BufferWithoutCreditIsAProtocolError) {
  // Credit the receiver can ever grant while it reads nothing: 2 exclusive buffers + the gate's 8 floating
  // ones (each arriving buffer with backlog 0 keeps 2 free buffers available while floating ones remain).
  // An 11th buffer has nowhere to go.
  const std::string error = failureFromBadProducer([](FakeProducer& f) {
    std::string frames;
    for (int32_t i = 0; i < 11; ++i) frames += f.buffer(i, 0, 16);
    f.send(frames);
  });
  EXPECT_NE(error.find("without credit"), std::string::npos) << error;
}

TEST(TcpTransportFaultTest, PeerClosingWithAnUnfinishedChannelFailsIt) {
  const std::string error = failureFromBadProducer([](FakeProducer& f) { f.socket.close(); });
  EXPECT_NE(error.find("closed the connection while 1 channel(s) on it were unfinished"), std::string::npos) << error;
}

TEST(TcpTransportFaultTest, CorruptRowsFailTheReaderNamingThePeer) {
  FakeProducer fake;
  ConsumerTm consumer(256);
  consumer.connect(fake.port());
  fake.acceptAndReadRequest();
  // A well-formed frame whose buffer holds one record: u32 length, kind 1 (rows), RowBatch bytes whose first
  // column type id (offset 8) is no type.
  std::string rows;
  numbers(0, 3).serialize(rows);
  rows[8] = 42;
  const std::string record = std::string(1, '\x01') + rows;
  std::string buffer;
  for (int i = 0; i < 4; ++i) buffer.push_back(static_cast<char>((record.size() >> (8 * i)) & 0xff));
  buffer += record;
  fake.send(network::encodeFrame(network::BufferResponse{fake.request.receiver, 0, 0, buffer}));
  std::vector<int64_t> got, watermarks;
  ASSERT_FALSE(consumer.readAll(got, watermarks));
  EXPECT_EQ(consumer.error, fmt::format("remote channel test channel from TaskManager 1 (127.0.0.1:{}): corrupt "
                                        "RowBatch bytes at offset 8: unknown type id 42",
                                        fake.port()));
}

TEST(TcpTransportFaultTest, UnreachablePeerFailsTheChannel) {
  // A port bound by a socket that never listens: connecting is refused, and nobody else can take the port.
  asio::io_context io;
  tcp::socket bound(io);
  bound.open(tcp::v4());
  bound.bind(tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  const uint16_t port = bound.local_endpoint().port();
  ConsumerTm consumer(256);
  consumer.connect(port);
  std::vector<int64_t> rows, watermarks;
  ASSERT_FALSE(consumer.readAll(rows, watermarks));
  EXPECT_NE(consumer.error.find(fmt::format("TaskManager 1 (127.0.0.1:{}) failed: cannot connect", port)),
            std::string::npos)
      << consumer.error;
}

TEST(TcpTransportFaultTest, GarbageOnAConnectionWithoutChannelsOnlyClosesIt) {
  // As Flink's network server: a connection on which no partition was requested concerns no job. The
  // server closes it and keeps serving; nothing is reported.
  ProducerTm producer(256);
  asio::io_context io;
  tcp::socket socket(io);
  socket.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), producer.transport.port()));
  asio::write(socket, asio::buffer(std::string("GET / HTTP/1.0\r\n\r\n")));
  std::array<char, 16> buf{};
  asio::error_code ec;
  socket.read_some(asio::buffer(buf), ec);
  EXPECT_TRUE(ec == asio::error::eof || ec == asio::error::connection_reset) << ec.message();
  // A real consumer still gets the whole partition afterwards.
  ConsumerTm consumer(256);
  consumer.connect(producer.transport.port());
  producer.subpartition->write(numbers(0, 100));
  producer.subpartition->write(EndOfPartition{});
  std::vector<int64_t> rows, watermarks;
  ASSERT_TRUE(consumer.readAll(rows, watermarks)) << consumer.error;
  EXPECT_EQ(rows.size(), 100u);
  std::lock_guard<std::mutex> lock(producer.errors.mu);
  EXPECT_TRUE(producer.errors.messages.empty()) << producer.errors.messages.front();
}

TEST(TcpTransportFaultTest, GarbageAfterAPartitionRequestIsReportedByTheServer) {
  ProducerTm producer(256);
  asio::io_context io;
  tcp::socket socket(io);
  socket.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), producer.transport.port()));
  const uint16_t local_port = socket.local_endpoint().port();
  // Receiver id of no TaskManager (upper 16 bits 0): the peer stays named by its address.
  asio::write(socket, asio::buffer(network::encodeFrame(network::PartitionRequest{"p", 0, {0, 9}, 0})));
  asio::write(socket, asio::buffer(std::string(32, '\x7f')));
  const std::string error = producer.errors.waitForFirst();
  EXPECT_NE(error.find(fmt::format("TaskManager 1: data connection with 127.0.0.1:{}", local_port)), std::string::npos)
      << error;
  EXPECT_NE(error.find("bad magic number"), std::string::npos) << error;
  // The server closed the connection.
  std::array<char, 16> buf{};
  asio::error_code ec;
  socket.read_some(asio::buffer(buf), ec);
  EXPECT_TRUE(ec == asio::error::eof || ec == asio::error::connection_reset) << ec.message();
}

// Region failover: a cancelled consumer's channel and its producer's partition are released on a connection
// that other channels keep using.

TEST(TcpTransportTest, AReleasedPartitionIsNoLongerServedAndTheRestartedOneIs) {
  ProducerTm producer(256);
  ConsumerTm consumer(256);
  consumer.connect(producer.transport.port());
  ASSERT_TRUE(eventually([&] { return producer.subpartition->view().credit() == 2; }));  // request served
  consumer.transport.releaseInputChannels({consumer.channel->id()});
  producer.transport.releasePartitions({"p"});
  EXPECT_EQ(producer.partitions.lookup("p", 0), nullptr);
  // The old producer's last output goes nowhere.
  producer.subpartition->write(numbers(0, 5));
  producer.subpartition->write(EndOfPartition{});
  // The restarted producer's partition (another attempt, another id), read by a new channel.
  auto restarted = std::make_shared<PipelinedSubpartition>(producer.pool, 0, /*remote=*/true, "restarted producer");
  producer.partitions.registerSubpartition("p#1", 0, restarted);
  InputGate gate(1);
  auto channel = consumer.connectAnother(gate, producer.transport.port(), "p#1", 8);
  restarted->write(numbers(100, 3));
  restarted->write(EndOfPartition{});
  std::vector<int64_t> rows, watermarks;
  std::string error;
  ASSERT_TRUE(ConsumerTm::readGate(gate, rows, watermarks, error)) << error;
  EXPECT_EQ(rows, (std::vector<int64_t>{100, 101, 102}));
  // The released channel received nothing after its release; the old subpartition still holds its output.
  EXPECT_EQ(consumer.channel->queuedBuffers(), 0);
  EXPECT_GT(producer.subpartition->queuedBuffers(), 0);
  std::lock_guard<std::mutex> lock(consumer.errors.mu);
  EXPECT_TRUE(consumer.errors.messages.empty()) << consumer.errors.messages.front();
  std::lock_guard<std::mutex> producer_lock(producer.errors.mu);
  EXPECT_TRUE(producer.errors.messages.empty()) << producer.errors.messages.front();
}

TEST(TcpTransportFaultTest, FramesStillOnTheWireForAReleasedChannelAreDropped) {
  FakeProducer fake;
  ConsumerTm consumer(256);
  consumer.connect(fake.port());
  fake.acceptAndReadRequest();
  const network::InputChannelId released = fake.request.receiver;
  consumer.transport.releaseInputChannels({released});
  // Flink's CancelPartitionRequest tells the producer.
  EXPECT_EQ(std::get<network::CancelPartitionRequest>(fake.readFrame()).receiver, released);
  // A channel of the restarted consumer goes on the same connection.
  InputGate gate(1);
  auto channel = consumer.connectAnother(gate, fake.port(), "p#1", 8);
  const auto request = std::get<network::PartitionRequest>(fake.readFrame());
  EXPECT_EQ(request.partition_id, "p#1");
  // What the producer had sent the released channel before the cancel arrived: a buffer (without credit
  // now), an event, a backlog announcement, and the error for a request of a partition already released.
  const std::string end_of_partition = network::EventSerializer::serialize(network::NetworkEvent{});
  std::string late = fake.buffer(0, 0, 16);
  late += network::encodeFrame(network::EventResponse{released, 1, 0, end_of_partition});
  late += network::encodeFrame(network::BacklogAnnouncement{released, 3});
  late += network::encodeFrame(network::ErrorResponse{released, false, "TaskManager 1 has no subpartition 0 of p"});
  // Frames are handled in order: the new channel's end of partition comes after all of them.
  late += network::encodeFrame(network::EventResponse{request.receiver, 0, 0, end_of_partition});
  fake.send(late);
  std::vector<int64_t> rows, watermarks;
  std::string error;
  ASSERT_TRUE(ConsumerTm::readGate(gate, rows, watermarks, error)) << error;
  EXPECT_EQ(consumer.channel->queuedBuffers(), 0);
  std::lock_guard<std::mutex> lock(consumer.errors.mu);
  EXPECT_TRUE(consumer.errors.messages.empty()) << consumer.errors.messages.front();
}

TEST(TcpTransportTest, ARequestAfterTheConnectionClosedOpensANewOne) {
  ProducerTm producer(256);
  ConsumerTm consumer(256);
  consumer.connect(producer.transport.port());
  producer.subpartition->write(numbers(0, 3));
  producer.subpartition->write(EndOfPartition{});
  std::vector<int64_t> rows, watermarks;
  ASSERT_TRUE(consumer.readAll(rows, watermarks)) << consumer.error;
  // Its only channel finished: the client sent CloseRequest and closed the connection.
  ASSERT_TRUE(eventually([&] { return consumer.transport.connectionCount() == 0; }));
  auto again = std::make_shared<PipelinedSubpartition>(producer.pool, 0, /*remote=*/true, "restarted producer");
  producer.partitions.registerSubpartition("p#1", 0, again);
  InputGate gate(1);
  auto channel = consumer.connectAnother(gate, producer.transport.port(), "p#1", 8);
  again->write(numbers(10, 2));
  again->write(EndOfPartition{});
  rows.clear();
  std::string error;
  ASSERT_TRUE(ConsumerTm::readGate(gate, rows, watermarks, error)) << error;
  EXPECT_EQ(rows, (std::vector<int64_t>{10, 11}));
}

}  // namespace
}  // namespace sluice::runtime
