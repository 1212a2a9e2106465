#include <gtest/gtest.h>

#include <deque>
#include <string>
#include <vector>

#include "runtime/network/buffer_pool.h"
#include "runtime/network/record_serializer.h"
#include "runtime/serialization/type_serializer.h"
#include "types/row_batch.h"

namespace sluice::runtime::network {
namespace {

// Writes through a SpanningRecordSerializer into buffers from a pool and reads them back in order,
// records and events alike.
struct Pipe {
  NetworkBufferPool global;
  std::shared_ptr<LocalBufferPool> pool;
  std::deque<Buffer> wire;
  SpanningRecordSerializer writer;
  int max_buffer_bytes = 0;

  explicit Pipe(int32_t segment_size, int32_t segments = 4096)
      : global(segments, segment_size),
        pool(global.createBufferPool(1, segments, "test")),
        writer([this] { return pool->requestBuffer(); },
               [this](Buffer b) {
                 max_buffer_bytes = std::max(max_buffer_bytes, b.size());
                 wire.push_back(std::move(b));
               }) {}
  ~Pipe() { wire.clear(); }

  // Reads everything: records as "R:<bytes>", events as "E:<type>:<value>".
  std::vector<std::string> readAll() {
    std::vector<std::string> out;
    SpanningRecordDeserializer reader;
    std::string record;
    while (!wire.empty()) {
      Buffer b = std::move(wire.front());
      wire.pop_front();
      if (!b.isBuffer()) {
        EXPECT_FALSE(reader.hasUnfinishedData()) << "an event inside a record";
        NetworkEvent e = EventSerializer::fromBuffer(b);
        out.push_back("E:" + std::to_string(static_cast<int>(e.type)) + ":" + std::to_string(e.value));
        continue;
      }
      reader.setNextBuffer(std::move(b));
      for (;;) {
        auto r = reader.getNextRecord(record);
        if (r == SpanningRecordDeserializer::Result::kPartialRecord) break;
        out.push_back("R:" + record);
        if (r == SpanningRecordDeserializer::Result::kLastRecordFromBuffer) break;
      }
    }
    EXPECT_FALSE(reader.hasUnfinishedData());
    return out;
  }
};

std::string pattern(size_t n, int seed) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 31 + static_cast<size_t>(seed) * 7) & 0xff);
  return s;
}

class SpanningRecordsTest : public ::testing::TestWithParam<int32_t> {};

TEST_P(SpanningRecordsTest, RecordsOfAllSizesSurviveEveryBufferSize) {
  const int32_t size = GetParam();
  Pipe pipe(size);
  // Sizes around the buffer size, 0, tiny, and one record spanning 10 buffers and a bit.
  const std::vector<size_t> sizes = {0, 1, 3, 4, 5, static_cast<size_t>(size) - 5, static_cast<size_t>(size) - 4,
                                     static_cast<size_t>(size), static_cast<size_t>(size) + 1, 10 * static_cast<size_t>(size) + 17,
                                     100};
  std::vector<std::string> expected;
  int seed = 0;
  for (size_t n : sizes) {
    std::string r = pattern(n, seed++);
    pipe.writer.writeRecord(r);
    expected.push_back("R:" + r);
  }
  pipe.writer.flush();
  EXPECT_EQ(pipe.readAll(), expected);
  EXPECT_EQ(pipe.max_buffer_bytes, size);
  // Every buffer went back to the pool.
  EXPECT_EQ(pipe.pool->buffersInUse(), 0);
}

// 256 b (min-segment-size) to 32 kb (segment-size), every power of two.
INSTANTIATE_TEST_SUITE_P(BufferSizes, SpanningRecordsTest,
                         ::testing::Values(256, 512, 1024, 2048, 4096, 8192, 16384, 32768));

TEST(SpanningRecordsTest, RowBatchAndObjectBatchBytesRoundTrip) {
  types::RowType t;
  t.names = {"k", "s"};
  t.types = {types::LogicalType::bigint(), types::LogicalType::string()};
  types::RowBatch batch(t);
  for (int i = 0; i < 500; ++i) {
    batch.column(0).appendLong(i);
    batch.column(1).appendString("value-" + std::to_string(i));
    batch.kinds().push_back(types::RowKind::kInsert);
  }
  std::string rows;
  batch.serialize(rows);
  auto objects = makeObjectBatch<std::string>();
  objects->add("hello", 5);
  objects->add(std::string(3000, 'z'), 6);
  std::string obj_bytes;
  DataOutputView out(obj_bytes);
  serializeBatch(*objects, out);

  Pipe pipe(256);  // the smallest debloated size: both span many buffers
  pipe.writer.writeRecord(rows);
  pipe.writer.writeRecord(obj_bytes);
  pipe.writer.flush();
  std::vector<std::string> got = pipe.readAll();
  ASSERT_EQ(got.size(), 2u);
  std::string_view view(got[0]);
  view.remove_prefix(2);
  types::RowBatch back = types::RowBatch::deserialize(view);
  ASSERT_EQ(back.numRows(), 500u);
  EXPECT_EQ(back.column(0).getLong(499), 499);
  EXPECT_EQ(back.column(1).getString(7), "value-7");
  DataInputView in(std::string_view(got[1]).substr(2));
  auto objects_back = deserializeBatch<std::string>(in);
  ASSERT_EQ(objects_back->size(), 2u);
  EXPECT_EQ(objects_back->value(1), std::string(3000, 'z'));
  EXPECT_EQ(objects_back->timestamp(1), 6);
}

TEST(SpanningRecordsTest, EventsKeepTheirOrderRelativeToRecords) {
  Pipe pipe(256);
  pipe.writer.writeRecord("a");
  pipe.writer.writeEvent({NetworkEventType::kWatermark, 100, ""});
  pipe.writer.writeRecord(std::string(600, 'b'));  // spans 3 buffers
  pipe.writer.writeEvent({NetworkEventType::kBufferSizeAnnouncement, 512, ""});
  pipe.writer.writeEvent({NetworkEventType::kCheckpointBarrier, 7, "options"});
  pipe.writer.writeRecord("c");
  pipe.writer.writeEvent({NetworkEventType::kEndOfPartition, 0, ""});
  const std::vector<std::string> expected = {"R:a", "E:1:100", "R:" + std::string(600, 'b'), "E:3:512", "E:5:7",
                                             "R:c", "E:2:0"};
  EXPECT_EQ(pipe.readAll(), expected);
}

TEST(SpanningRecordsTest, SizeLimitAppliesOnlyToBuffersStartedAfterIt) {
  Pipe pipe(1024);
  pipe.writer.writeRecord(std::string(96, 'x'));  // 4 + 96 = 100 bytes in the first buffer
  pipe.writer.setBufferSizeLimit(256);
  pipe.writer.writeRecord(std::string(1500, 'y'));  // 1504 bytes: fills the 1024 buffer, then 256-byte ones
  pipe.writer.flush();
  std::vector<int32_t> sizes;
  for (const Buffer& b : pipe.wire) sizes.push_back(b.size());
  // First buffer keeps 1024 capacity: 100 + 924 = 1024. Remaining 1504 - 924 = 580 = 256 + 256 + 68.
  EXPECT_EQ(sizes, (std::vector<int32_t>{1024, 256, 256, 68}));
}

TEST(EventSerializerTest, RoundTripAndGarbage) {
  NetworkEvent e{NetworkEventType::kCheckpointBarrier, -5, "abc"};
  EXPECT_EQ(EventSerializer::deserialize(EventSerializer::serialize(e)), e);
  EXPECT_THROW(EventSerializer::deserialize("xyz"), InputError);
  std::string bad = EventSerializer::serialize(e);
  bad[0] = 99;
  EXPECT_THROW(EventSerializer::deserialize(bad), InputError);
  std::string trailing = EventSerializer::serialize(e) + "!";
  EXPECT_THROW(EventSerializer::deserialize(trailing), InputError);
}

TEST(SpanningRecordDeserializerTest, CorruptLengthFailsWithoutAllocating) {
  NetworkBufferPool global(1, 256);
  auto pool = global.createBufferPool(1, 1, "test");
  Buffer b = pool->requestBuffer();
  const uint8_t huge[4] = {0xff, 0xff, 0xff, 0x7f};
  b.append(huge, 4);
  SpanningRecordDeserializer reader(1 << 20);
  reader.setNextBuffer(std::move(b));
  std::string record;
  EXPECT_THROW(reader.getNextRecord(record), InputError);
  reader.clear();
}

}  // namespace
}  // namespace sluice::runtime::network
