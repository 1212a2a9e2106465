// StreamElements through network buffers: object batches (DataStream records) and row batches as records
// spanning buffers of every size from 256 b to 32 kb, watermarks, watermark statuses and the end of the
// partition as events in their order, the output tag and timestamps kept; and corrupt bytes rejected.
#include "runtime/network/stream_element_codec.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <fstream>
#include <functional>
#include <future>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "runtime/network/blocking_subpartition.h"
#include "runtime/network/buffer_pool.h"
#include "runtime/network/input_channel.h"
#include "runtime/network/pipelined_subpartition.h"
#include "runtime/serialization/object_batch_serializer.h"
#include "types/row_batch.h"

namespace sluice::runtime::network {
namespace {

struct Leg {
  std::string airline;
  int64_t delay = 0;
  std::optional<double> distance;
  std::vector<std::string> stops;
};
SLUICE_TYPE(Leg, airline, delay, distance, stops)

// Writes elements through a StreamElementSerializer into pool buffers and reads them back.
struct Wire {
  NetworkBufferPool global;
  std::shared_ptr<LocalBufferPool> pool;
  std::deque<Buffer> buffers;
  StreamElementSerializer out;
  SpanningRecordSerializer writer;
  int32_t largest = 0;
  // 1 MB of buffers plus 64: room for every element of a test, however small the buffers.
  static int32_t kSegments(int32_t segment_size) { return 64 + (1 << 20) / segment_size; }

  Wire(int32_t segment_size, std::shared_ptr<const ObjectBatchSerializer> objects)
      : global(kSegments(segment_size), segment_size),
        pool(global.createBufferPool(1, kSegments(segment_size), "test")),
        out(objects),
        writer([this] { return pool->requestBuffer(); },
               [this](Buffer b) {
                 largest = std::max(largest, b.size());
                 buffers.push_back(std::move(b));
               }) {}
  ~Wire() { buffers.clear(); }

  void write(const StreamElement& e) { out.write(e, writer); }

  std::vector<StreamElement> readAll(std::shared_ptr<const ObjectBatchSerializer> objects) {
    StreamElementDeserializer in(std::move(objects));
    std::vector<StreamElement> got;
    while (!buffers.empty()) {
      Buffer b = std::move(buffers.front());
      buffers.pop_front();
      in.read(std::move(b), [&](StreamElement&& e) { got.push_back(std::move(e)); });
    }
    EXPECT_FALSE(in.hasUnfinishedData());
    return got;
  }
};

// A batch of n legs; record i has timestamp 1000 + i and a string of length (i * 37) % 700.
ObjectBatchPtr legs(size_t n, int tag, size_t big_record_bytes = 0) {
  auto b = makeObjectBatch<Leg>();
  for (size_t i = 0; i < n; ++i) {
    Leg l{"A" + std::to_string(i), static_cast<int64_t>(i) - 5, std::nullopt, {}};
    if (i % 3 == 0) l.distance = 0.5 * static_cast<double>(i);
    l.stops.assign(i % 4, std::string((i * 37) % 700, static_cast<char>('a' + i % 26)));
    b->add(std::move(l), 1000 + static_cast<int64_t>(i));
  }
  if (big_record_bytes > 0) b->add(Leg{std::string(big_record_bytes, 'x'), 1, 2.0, {"Z"}}, -7);
  b->setTag(tag);
  return b;
}

void expectSameLegs(const ObjectBatch& got, const ObjectBatch& want) {
  ASSERT_EQ(got.size(), want.size());
  EXPECT_EQ(got.tag(), want.tag());
  const auto& g = got.as<Leg>();
  const auto& w = want.as<Leg>();
  for (size_t i = 0; i < w.size(); ++i) {
    EXPECT_EQ(g.timestamp(i), w.timestamp(i)) << i;
    EXPECT_EQ(g.value(i).airline, w.value(i).airline) << i;
    EXPECT_EQ(g.value(i).delay, w.value(i).delay) << i;
    EXPECT_EQ(g.value(i).distance, w.value(i).distance) << i;
    EXPECT_EQ(g.value(i).stops, w.value(i).stops) << i;
  }
}

class ElementsOverBuffersTest : public ::testing::TestWithParam<int32_t> {};

TEST_P(ElementsOverBuffersTest, ObjectBatchesRowsAndEventsKeepTheirOrder) {
  const int32_t size = GetParam();
  auto serializer = objectBatchSerializer<Leg>();
  Wire wire(size, serializer);
  const ObjectBatchPtr small = legs(1, 0);
  const ObjectBatchPtr side = legs(40, 3);
  // One record 20 buffers (and a bit) long, whatever the buffer size.
  const ObjectBatchPtr huge = legs(5, 0, static_cast<size_t>(size) * 20 + 11);
  types::RowType t;
  t.names = {"k"};
  t.types = {types::LogicalType::bigint()};
  types::RowBatch rows(t);
  for (int i = 0; i < 3; ++i) {
    rows.column(0).appendLong(i * 11);
    rows.kinds().push_back(types::RowKind::kInsert);
  }

  wire.write(small->clone());
  wire.write(Watermark{5});
  wire.write(WatermarkStatus::kIdle);
  wire.write(huge->clone());
  wire.write(side->clone());
  wire.write(types::RowBatch(rows));
  wire.write(WatermarkStatus::kActive);
  wire.write(Watermark{Watermark::kMaxTimestamp});
  wire.write(EndOfPartition{});
  EXPECT_EQ(wire.largest, size);  // records filled whole buffers

  std::vector<StreamElement> got = wire.readAll(serializer);
  ASSERT_EQ(got.size(), 9u);
  expectSameLegs(*std::get<ObjectBatchPtr>(got[0]), *small);
  EXPECT_EQ(std::get<Watermark>(got[1]).timestamp, 5);
  EXPECT_EQ(std::get<WatermarkStatus>(got[2]), WatermarkStatus::kIdle);
  expectSameLegs(*std::get<ObjectBatchPtr>(got[3]), *huge);
  expectSameLegs(*std::get<ObjectBatchPtr>(got[4]), *side);
  const auto& rows_back = std::get<types::RowBatch>(got[5]);
  ASSERT_EQ(rows_back.numRows(), 3u);
  EXPECT_EQ(rows_back.column(0).getLong(2), 22);
  EXPECT_EQ(std::get<WatermarkStatus>(got[6]), WatermarkStatus::kActive);
  EXPECT_EQ(std::get<Watermark>(got[7]).timestamp, Watermark::kMaxTimestamp);
  EXPECT_TRUE(std::holds_alternative<EndOfPartition>(got[8]));
  EXPECT_EQ(wire.pool->buffersInUse(), 0);  // every buffer was released after reading
}

INSTANTIATE_TEST_SUITE_P(BufferSizes, ElementsOverBuffersTest,
                         ::testing::Values(256, 512, 1024, 2048, 4096, 8192, 16384, 32768));

TEST(ObjectBatchSerializerTest, TypeNamesAndAvailability) {
  struct Opaque {
    int x;
  };
  EXPECT_EQ(objectBatchSerializer<Leg>()->typeName(), "Leg");
  EXPECT_EQ((objectBatchSerializer<std::pair<std::string, int>>()->typeName()), "std::pair<std::string, int>");
  EXPECT_TRUE(objectBatchSerializer<std::vector<std::optional<Leg>>>()->isSerializable());
  EXPECT_FALSE(objectBatchSerializer<Opaque>()->isSerializable());
  EXPECT_FALSE((objectBatchSerializer<std::pair<int, Opaque>>()->isSerializable()));
  EXPECT_FALSE(objectBatchSerializer<std::vector<Opaque>>()->isSerializable());
  EXPECT_THROW(objectBatchSerializer<Opaque>()->deserialize(""), InternalError);
}

TEST(ObjectBatchSerializerTest, CorruptBytesAreInputErrors) {
  auto serializer = objectBatchSerializer<std::string>();
  auto batch = makeObjectBatch<std::string>();
  batch->add("abc", 1);
  std::string bytes;
  serializer->serialize(*batch, bytes);
  // i32 tag, varint count 1, i64 timestamp, varint length 3, "abc".
  ASSERT_EQ(bytes.size(), 4u + 1u + 8u + 1u + 3u);
  EXPECT_EQ(serializer->deserialize(bytes)->as<std::string>().value(0), "abc");
  EXPECT_THROW(serializer->deserialize(bytes + "!"), InputError);                        // trailing byte
  EXPECT_THROW(serializer->deserialize(bytes.substr(0, bytes.size() - 1)), InputError);  // truncated
  std::string negative_tag = bytes;
  negative_tag[3] = static_cast<char>(0x80);
  EXPECT_THROW(serializer->deserialize(negative_tag), InputError);
}

TEST(StreamElementDeserializerTest, UnknownRecordKindAndRowsOnlyEdgesFail) {
  auto objects = objectBatchSerializer<int64_t>();
  Wire wire(256, objects);
  auto batch = makeObjectBatch<int64_t>();
  batch->add(7);
  wire.write(ObjectBatchPtr(std::move(batch)));
  wire.writer.flush();
  // The same bytes read on an edge that carries rows only.
  EXPECT_THROW(wire.readAll(nullptr), InputError);
  wire.writer.writeRecord(std::string(1, '\x09'));
  wire.writer.flush();
  EXPECT_THROW(wire.readAll(objects), InputError);
}

TEST(StreamElementDeserializerTest, WatermarkStatusOtherThanActiveOrIdleFails) {
  Wire wire(256, nullptr);
  wire.writer.writeEvent(NetworkEvent{NetworkEventType::kWatermarkStatus, 2, {}});
  EXPECT_THROW(wire.readAll(nullptr), InputError);
}

TEST(LocalInputChannelTest, ObjectBatchesCrossAsBytesAgainstCredit) {
  NetworkBufferPool global(64, 256);
  auto pool = global.createBufferPool(2, 20, "producer");
  auto subpartition = std::make_shared<PipelinedSubpartition>(pool, /*initial_credit=*/2, /*remote=*/false, "test",
                                                              objectBatchSerializer<Leg>());
  auto channel = std::make_shared<LocalInputChannel>(subpartition);
  const ObjectBatchPtr sent = legs(12, 0);
  // A producer thread: the batch needs more than the 2 credited buffers, so the consumer must drain.
  std::thread producer([&] {
    subpartition->write(sent->clone());
    subpartition->write(EndOfPartition{});
  });
  std::deque<InputEntry> out;
  std::mutex mu;
  std::condition_variable cv;
  bool available = false;
  channel->setAvailabilityListener([&] {
    std::lock_guard<std::mutex> lock(mu);
    available = true;
    cv.notify_one();
  });
  while (out.empty() || !std::holds_alternative<EndOfPartition>(out.back().element)) {
    {
      std::unique_lock<std::mutex> lock(mu);
      ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(30), [&] { return available || channel->hasAvailable(); }))
          << "no buffer arrived";
      available = false;
    }
    channel->drain(4, out);
  }
  producer.join();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].channel, 4);
  expectSameLegs(*std::get<ObjectBatchPtr>(out[0].element), *sent);
}

// A batch of one string of 236 bytes: record = 4 (length) + 1 (kind) + 4 (tag) + 1 (count) + 8 (timestamp)
// + 2 (string length varint) + 236 = 256 bytes, exactly one 256-byte buffer.
ObjectBatchPtr oneBufferBatch(char c) {
  auto b = makeObjectBatch<std::string>();
  b->add(std::string(236, c), 1);
  return b;
}

TEST(PipelinedSubpartitionTest, ASlowConsumerHoldsAtMostMaxBuffersPerChannel) {
  NetworkBufferPool global(32, 256);
  auto pool = global.createBufferPool(3, 21, "partition");
  pool->setMaxBuffersPerChannel(2, 10);
  auto serializer = objectBatchSerializer<std::string>();
  auto slow = std::make_shared<PipelinedSubpartition>(pool, 2, false, "slow", serializer, 0);
  auto fast = std::make_shared<PipelinedSubpartition>(pool, 2, false, "fast", serializer, 1);
  for (int i = 0; i < 10; ++i) slow->write(oneBufferBatch(static_cast<char>('a' + i)));
  EXPECT_EQ(slow->queuedBuffers(), 10);
  EXPECT_EQ(pool->subpartitionBuffers(0), 10);
  fast->write(oneBufferBatch('z'));  // the other subpartition is not held up
  EXPECT_EQ(pool->subpartitionBuffers(1), 1);

  std::promise<void> wrote;
  std::future<void> eleventh = wrote.get_future();
  std::thread producer([&] {
    slow->write(oneBufferBatch('k'));  // the 11th buffer: waits for the consumer
    wrote.set_value();
  });
  LocalInputChannel consumer(slow);
  std::deque<InputEntry> out;
  consumer.drain(0, out);  // reads its 2 credited buffers and recycles them
  ASSERT_EQ(eleventh.wait_for(std::chrono::seconds(30)), std::future_status::ready);  // failure guard only
  producer.join();
  while (consumer.hasAvailable()) consumer.drain(0, out);
  ASSERT_EQ(out.size(), 11u);
  for (int i = 0; i < 11; ++i) {
    const char want = i < 10 ? static_cast<char>('a' + i) : 'k';
    EXPECT_EQ(std::get<ObjectBatchPtr>(out[static_cast<size_t>(i)].element)->as<std::string>().value(0),
              std::string(236, want));
  }
  EXPECT_LE(pool->peakBuffersInUse(), 11);  // 10 of the slow subpartition + 1 of the fast one
}

types::RowBatch bigints(int64_t count) {
  types::RowType t;
  t.names = {"v"};
  t.types = {types::LogicalType::bigint()};
  types::RowBatch b(t);
  for (int64_t v = 0; v < count; ++v) {
    b.column(0).appendLong(v);
    b.kinds().push_back(types::RowKind::kInsert);
  }
  return b;
}

// Spills `rows` and the end of the partition through 256-byte buffers, lets `corrupt` change the file, then
// reads it back: the InputError of the reader ("(read)" when it reads it all).
std::string readCorruptedSpillFile(const types::RowBatch& rows, const std::function<void(std::string&)>& corrupt,
                                   std::string* path) {
  SpillDirectory dir({}, "corrupt-spill-test");
  NetworkBufferPool global(8, 256);
  auto pool = global.createBufferPool(2, 2, "producer");
  *path = dir.path() + "/0-0-0.spill";
  auto subpartition = std::make_shared<BlockingSubpartition>(pool, *path, nullptr);
  subpartition->write(types::RowBatch(rows));
  subpartition->write(EndOfPartition{});
  std::string bytes;
  {
    std::ifstream in(*path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  corrupt(bytes);
  std::ofstream(*path, std::ios::binary | std::ios::trunc) << bytes;
  SpilledInputChannel channel(subpartition, global, 2);
  std::deque<InputEntry> out;
  try {
    while (channel.hasAvailable()) channel.drain(0, out);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(read)";
}

TEST(SpilledInputChannelTest, CorruptSpillFilesAreDataErrorsNamingTheFile) {
  std::string path;
  std::string error;
  EXPECT_EQ(readCorruptedSpillFile(
                bigints(3), [](std::string&) {}, &path),
            "(read)");
  // Entry = u8 kind + u32 size + buffer; the buffer holds the record length (u32), the record kind (1 for
  // rows) and the RowBatch bytes: they start at 5 + 4 + 1 = 10, the first column's type id at 10 + 8 = 18.
  error = readCorruptedSpillFile(
      bigints(3), [](std::string& b) { b[18] = 42; }, &path);
  EXPECT_EQ(error, "the spill file '" + path + "': corrupt RowBatch bytes at offset 8: unknown type id 42");
  // 40 rows: a record of 4 + 1 + 8 + 10 + 40 + 320 + 40 = 423 bytes, two buffers; the second entry starts at
  // 5 + 256 = 261. Marked as an event, it cuts the record.
  error = readCorruptedSpillFile(
      bigints(40), [](std::string& b) { b[261] = 1; }, &path);
  EXPECT_EQ(error, "the spill file '" + path + "': an event buffer in the middle of a record");
  // The second entry's size (423 - 256 = 167, u32 little endian at 262) raised by 256 to 423: more than a
  // 256-byte buffer holds.
  error = readCorruptedSpillFile(
      bigints(40), [](std::string& b) { b[263] = 1; }, &path);
  EXPECT_EQ(error, "the spill file '" + path +
                       "': corrupt entry at offset 261: kind 0 (0 or 1), 423 bytes (a buffer holds "
                       "at most 256)");
  // The file cut inside the second buffer.
  error = readCorruptedSpillFile(
      bigints(40), [](std::string& b) { b.resize(300); }, &path);
  EXPECT_EQ(error, "the spill file '" + path + "': truncated at offset 266: the entry there needs 167 bytes");
}

// The byte sizes of the data buffers queued in `view`, taken out in order.
std::vector<int32_t> dataBufferSizes(CreditBasedSubpartitionView& view) {
  std::vector<int32_t> sizes;
  while (std::optional<BufferAndBacklog> next = view.pollNext()) {
    if (next->buffer.isBuffer()) sizes.push_back(next->buffer.size());
  }
  return sizes;
}

TEST(PipelinedSubpartitionTest, BuffersStartAtTheStartingSizeUntilASizeIsAnnounced) {
  NetworkBufferPool global(64, 4096);
  auto pool = global.createBufferPool(1, 64, "partition");
  auto serializer = objectBatchSerializer<std::string>();
  // One string of 2980 bytes: record = 4 (length) + 1 (kind) + 4 (tag) + 1 (count) + 8 (timestamp)
  // + 2 (string length varint) + 2980 = 3000 bytes.
  auto batch = [] {
    auto b = makeObjectBatch<std::string>();
    b->add(std::string(2980, 'x'), 1);
    return b;
  };
  // Towards a remote consumer (a local one gets the batch itself, not its bytes). No starting size
  // (debloating off): the whole 4096-byte segment, so the record fits in one buffer.
  PipelinedSubpartition full(pool, 100, /*remote=*/true, "full", serializer, -1, /*starting_buffer_size=*/0);
  full.write(batch());
  full.flush();
  EXPECT_EQ(dataBufferSizes(full.view()), (std::vector<int32_t>{3000}));
  // Starting at 1024 bytes (FLINK-36556): 3000 = 1024 + 1024 + 952.
  PipelinedSubpartition start(pool, 100, /*remote=*/true, "start", serializer, -1, /*starting_buffer_size=*/1024);
  EXPECT_EQ(start.view().bufferSize(), 1024);
  start.write(batch());
  start.flush();
  EXPECT_EQ(dataBufferSizes(start.view()), (std::vector<int32_t>{1024, 1024, 952}));
  // An announcement replaces the starting size for buffers started afterwards: 3000 = 5 * 512 + 440.
  start.view().notifyNewBufferSize(512);
  start.write(batch());
  start.flush();
  EXPECT_EQ(dataBufferSizes(start.view()), (std::vector<int32_t>{512, 512, 512, 512, 512, 440}));
}

}  // namespace
}  // namespace sluice::runtime::network
