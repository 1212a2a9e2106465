// Unaligned checkpoint barriers (FLIP-76) in one local channel: the barrier jumps ahead of the buffers
// queued in the subpartition, needs no credit, and the records it overtook come back from the output
// channel state; a barrier that cuts a record the consumer has begun to read is marked mid-record.
#include <gtest/gtest.h>

#include <deque>
#include <string>
#include <vector>

#include "runtime/network/buffer_pool.h"
#include "runtime/network/input_channel.h"
#include "runtime/network/input_gate.h"
#include "runtime/network/pipelined_subpartition.h"
#include "runtime/network/stream_element_codec.h"
#include "types/row_batch.h"

namespace sluice::runtime {
namespace {

types::RowBatch numbers(int64_t from, int64_t count) {
  types::RowType t;
  t.names.push_back("v");
  t.types.push_back(types::LogicalType::bigint());
  types::RowBatch b(t);
  for (int64_t v = from; v < from + count; ++v) {
    b.column(0).appendLong(v);
    b.kinds().push_back(types::RowKind::kInsert);
  }
  return b;
}

std::vector<int64_t> values(const types::RowBatch& b) {
  std::vector<int64_t> out;
  for (size_t i = 0; i < b.numRows(); ++i) out.push_back(b.column(0).getLong(i));
  return out;
}

std::vector<int64_t> range(int64_t from, int64_t count) {
  std::vector<int64_t> out;
  for (int64_t v = from; v < from + count; ++v) out.push_back(v);
  return out;
}

// The batches in channel state bytes, in order.
std::vector<std::vector<int64_t>> stateBatches(const std::string& bytes) {
  std::vector<std::vector<int64_t>> out;
  network::forEachChannelStateRecord(bytes, nullptr, [&](StreamElement&& e) {
    out.push_back(values(std::get<types::RowBatch>(e)));
  });
  return out;
}

const CheckpointBarrier kBarrier{7, 1000, checkpoint::CheckpointKind::kCheckpoint, checkpoint::AlignmentType::kUnaligned,
                                 0};

// One local channel over 256-byte buffers with 2 credits.
struct LocalChannel {
  network::NetworkBufferPool global{64, 256};
  std::shared_ptr<network::LocalBufferPool> pool = global.createBufferPool(2, 60, "producer");
  std::shared_ptr<PipelinedSubpartition> subpartition =
      std::make_shared<PipelinedSubpartition>(pool, 2, /*remote=*/false, "a -> b");
  InputGate gate{1};
  LocalChannel() { gate.attachChannel(0, std::make_shared<LocalInputChannel>(subpartition)); }
  std::deque<InputGate::Entry> poll() {
    std::deque<InputGate::Entry> out;
    gate.pollAll(out, std::chrono::steady_clock::now());
    return out;
  }
};

TEST(UnalignedBarrierTest, OvertakesTheQueuedBuffersOfALocalChannel) {
  LocalChannel ch;
  // A: 100 rows (a record of ~1 KiB, five buffers), B: 3 rows, both queued; the consumer has read nothing.
  ch.subpartition->write(numbers(0, 100));
  ch.subpartition->write(numbers(100, 3));
  std::string overtaken;
  ch.subpartition->writePriorityBarrier(kBarrier, overtaken);
  EXPECT_EQ(stateBatches(overtaken), (std::vector<std::vector<int64_t>>{range(0, 100), range(100, 3)}));
  // The barrier comes first (without waiting for credit), then A and B as before.
  std::vector<std::string> order;
  std::vector<std::vector<int64_t>> rows;
  for (int i = 0; i < 20 && rows.size() < 2; ++i) {
    for (auto& e : ch.poll()) {
      if (const auto* b = std::get_if<CheckpointBarrier>(&e.element)) {
        order.push_back("barrier");
        EXPECT_EQ(b->id, 7);
        EXPECT_EQ(b->alignment, checkpoint::AlignmentType::kUnaligned);
        EXPECT_FALSE(e.mid_record);
      } else if (auto* r = std::get_if<types::RowBatch>(&e.element)) {
        order.push_back("rows");
        rows.push_back(values(*r));
      }
    }
  }
  EXPECT_EQ(order, (std::vector<std::string>{"barrier", "rows", "rows"}));
  EXPECT_EQ(rows, (std::vector<std::vector<int64_t>>{range(0, 100), range(100, 3)}));
}

TEST(UnalignedBarrierTest, ABarrierThatCutsARecordLeavesItToTheConsumer) {
  LocalChannel ch;
  ch.subpartition->write(numbers(0, 100));
  ch.subpartition->write(numbers(100, 3));
  ch.subpartition->flush();
  // The consumer reads two buffers (its credit): the start of A, no whole record yet.
  EXPECT_TRUE(ch.poll().empty());
  std::string overtaken;
  ch.subpartition->writePriorityBarrier(kBarrier, overtaken);
  // A's tail is not channel state (the consumer holds A's head and completes it); B is.
  EXPECT_EQ(stateBatches(overtaken), (std::vector<std::vector<int64_t>>{range(100, 3)}));
  std::vector<std::string> order;
  for (int i = 0; i < 20 && order.size() < 3; ++i) {
    for (auto& e : ch.poll()) {
      if (std::holds_alternative<CheckpointBarrier>(e.element)) {
        order.push_back(e.mid_record ? "barrier(mid-record)" : "barrier");
      } else if (auto* r = std::get_if<types::RowBatch>(&e.element)) {
        order.push_back(fmt::format("rows {}", r->numRows()));
      }
    }
  }
  EXPECT_EQ(order, (std::vector<std::string>{"barrier(mid-record)", "rows 100", "rows 3"}));
}

TEST(UnalignedBarrierTest, AnAlignedEventInTheMiddleOfARecordIsStillCorrupt) {
  // Only an unaligned barrier may cut a record: a watermark there is an InputError.
  network::NetworkBufferPool global{8, 64};
  auto pool = global.createBufferPool(1, 8, "p");
  std::vector<network::Buffer> buffers;
  network::SpanningRecordSerializer out([&] { return pool->requestBuffer(); },
                                        [&](network::Buffer b) { buffers.push_back(std::move(b)); });
  network::StreamElementSerializer elements;
  elements.write(numbers(0, 20), out);
  ASSERT_GE(buffers.size(), 2u);
  network::Buffer event = pool->requestBuffer();
  network::EventSerializer::toBuffer(network::NetworkEvent{network::NetworkEventType::kWatermark, 5, {}}, event);
  network::StreamElementDeserializer in;
  in.read(std::move(buffers[0]), [](StreamElement&&) { FAIL() << "no whole record yet"; });
  EXPECT_THROW(in.read(std::move(event), [](StreamElement&&) {}), InputError);
}

TEST(UnalignedBarrierTest, ChannelStateBytesAreUntrusted) {
  std::string bytes;
  network::appendChannelStateRecord(numbers(0, 2), nullptr, bytes);
  EXPECT_EQ(stateBatches(bytes), (std::vector<std::vector<int64_t>>{range(0, 2)}));
  try {
    stateBatches(bytes + "\x01\x02");
    FAIL() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(fmt::format("truncated at byte {}", bytes.size())), std::string::npos)
        << e.what();
  }
  std::string long_length = bytes;
  long_length[0] = '\x7f';
  EXPECT_THROW(stateBatches(long_length), InputError);
}

}  // namespace
}  // namespace sluice::runtime
