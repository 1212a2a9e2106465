// RecordAttributes (FLIP-327): combined over the channels of one input as Flink's RecordAttributesCombinerTest
// expects, over the two inputs of a two-input operator (OR), and carried as an event through network buffers,
// local channels and spill files.
#include <gtest/gtest.h>

#include <deque>
#include <vector>

#include "runtime/network/blocking_subpartition.h"
#include "runtime/network/buffer_pool.h"
#include "runtime/network/input_channel.h"
#include "runtime/network/pipelined_subpartition.h"
#include "runtime/network/stream_element_codec.h"
#include "runtime/operators/stream_operator.h"
#include "runtime/task/record_attributes_combiner.h"

namespace sluice::runtime {
namespace {

constexpr RecordAttributes kBacklog{true};
constexpr RecordAttributes kNotBacklog{false};

// Feeds (channel, attributes) pairs and collects what the combiner emits.
std::vector<RecordAttributes> feed(RecordAttributesCombiner& c, const std::vector<std::pair<int, RecordAttributes>>& in) {
  std::vector<RecordAttributes> out;
  for (const auto& [channel, a] : in) {
    if (auto r = c.inputRecordAttributes(channel, a)) out.push_back(*r);
  }
  return out;
}

// RecordAttributesCombinerTest#testCombineRecordAttributes.
TEST(RecordAttributesCombinerTest, CombineRecordAttributes) {
  RecordAttributesCombiner c(3);
  const std::vector<RecordAttributes> out = feed(c, {{0, kBacklog},
                                                     {0, kNotBacklog},
                                                     {0, kNotBacklog},
                                                     {1, kBacklog},
                                                     {2, kBacklog},
                                                     {1, kNotBacklog},
                                                     {2, kNotBacklog},
                                                     {1, kBacklog}});
  EXPECT_EQ(out, (std::vector<RecordAttributes>{kBacklog, kNotBacklog, kBacklog}));
}

// RecordAttributesCombinerTest#testCombinerOnlyOutputNonBacklogWhenAllInputChannelAreNonBacklog.
TEST(RecordAttributesCombinerTest, NotBacklogOnlyWhenEveryChannelReportedNotBacklog) {
  RecordAttributesCombiner c(2);
  EXPECT_TRUE(feed(c, {{0, kNotBacklog}}).empty());  // channel 1 has not reported: undetermined
  EXPECT_EQ(feed(c, {{0, kBacklog}, {1, kNotBacklog}}), (std::vector<RecordAttributes>{kBacklog}));
  EXPECT_EQ(feed(c, {{0, kNotBacklog}}), (std::vector<RecordAttributes>{kNotBacklog}));
}

TEST(RecordAttributesCombinerTest, AnInputWithoutAttributesStaysSilentToItsEnd) {
  RecordAttributesCombiner c(2);
  EXPECT_FALSE(c.endOfInput(0).has_value());
  EXPECT_FALSE(c.endOfInput(1).has_value());
  // Once a channel reported, the ended ones count as not backlog.
  RecordAttributesCombiner d(2);
  EXPECT_FALSE(d.endOfInput(0).has_value());
  EXPECT_EQ(d.inputRecordAttributes(1, kBacklog), kBacklog);
  EXPECT_EQ(d.inputRecordAttributes(1, kNotBacklog), kNotBacklog);
}

TEST(RecordAttributesCombinerTest, AnEndedChannelCountsAsNotBacklog) {
  RecordAttributesCombiner c(2);
  EXPECT_EQ(feed(c, {{0, kBacklog}, {1, kBacklog}}), (std::vector<RecordAttributes>{kBacklog}));
  EXPECT_FALSE(c.endOfInput(0).has_value());  // channel 1 is still backlog
  EXPECT_EQ(c.endOfInput(1), kNotBacklog);
}

// Records what a two-input operator emits.
struct Collect final : Output {
  std::vector<RecordAttributes> attributes;
  void collect(types::RowBatch&&) override {}
  void emitWatermark(Watermark) override {}
  void emitRecordAttributes(RecordAttributes a) override { attributes.push_back(a); }
};

struct PassThrough final : StreamOperator {
  void processBatch(types::RowBatch&&) override {}
};

// AbstractStreamOperator.processRecordAttributes1/2: the OR of each input's last attributes, both starting
// not-backlog.
TEST(RecordAttributesTest, TwoInputOperatorEmitsTheOrOfItsInputs) {
  Collect out;
  PassThrough op;
  op.open(OperatorContext{}, &out);
  op.processRecordAttributes2(kNotBacklog);  // first result: not backlog
  op.processRecordAttributes1(kBacklog);     // backlog
  op.processRecordAttributes2(kBacklog);     // still backlog: nothing new
  op.processRecordAttributes1(kNotBacklog);  // input 2 is backlog: still backlog
  op.processRecordAttributes2(kNotBacklog);  // both not backlog
  EXPECT_EQ(out.attributes, (std::vector<RecordAttributes>{kNotBacklog, kBacklog, kNotBacklog}));
  // One input: forwarded as it comes.
  Collect one;
  PassThrough single;
  single.open(OperatorContext{}, &one);
  single.processRecordAttributes(kBacklog);
  single.processRecordAttributes(kNotBacklog);
  EXPECT_EQ(one.attributes, (std::vector<RecordAttributes>{kBacklog, kNotBacklog}));
}

types::RowBatch oneRow(int64_t v) {
  types::RowType t;
  t.names = {"v"};
  t.types = {types::LogicalType::bigint()};
  types::RowBatch b(t);
  b.column(0).appendLong(v);
  b.kinds().push_back(types::RowKind::kInsert);
  return b;
}

// The elements of `out` as a string: r<v> for a row, B / N for backlog / not, E for the end.
std::string describe(const std::deque<InputEntry>& out) {
  std::string s;
  for (const InputEntry& e : out) {
    if (const auto* rows = std::get_if<types::RowBatch>(&e.element)) s += "r" + std::to_string(rows->column(0).getLong(0));
    else if (const auto* a = std::get_if<RecordAttributes>(&e.element)) s += a->is_backlog ? "B" : "N";
    else if (std::holds_alternative<EndOfPartition>(e.element)) s += "E";
    else s += "?";
  }
  return s;
}

template <typename Subpartition>
void writeSequence(Subpartition& sp) {
  sp.write(kBacklog);
  sp.write(oneRow(1));
  sp.write(oneRow(2));
  sp.write(kNotBacklog);
  sp.write(oneRow(3));
  sp.write(EndOfPartition{});
}

TEST(RecordAttributesTest, KeepTheirPlaceThroughALocalChannel) {
  network::NetworkBufferPool global(16, 256);
  auto pool = global.createBufferPool(2, 10, "producer");
  auto subpartition = std::make_shared<PipelinedSubpartition>(pool, /*initial_credit=*/8, /*remote=*/false, "test");
  writeSequence(*subpartition);
  LocalInputChannel channel(subpartition);
  std::deque<InputEntry> out;
  while (channel.hasAvailable()) channel.drain(0, out);
  EXPECT_EQ(describe(out), "Br1r2Nr3E");
}

TEST(RecordAttributesTest, KeepTheirPlaceThroughASpillFile) {
  SpillDirectory dir({}, "record-attributes-test");
  network::NetworkBufferPool global(8, 256);
  auto pool = global.createBufferPool(2, 2, "producer");
  auto subpartition = std::make_shared<BlockingSubpartition>(pool, dir.path() + "/0-0-0.spill", nullptr);
  writeSequence(*subpartition);
  SpilledInputChannel channel(subpartition, global, 2);
  std::deque<InputEntry> out;
  while (channel.hasAvailable()) channel.drain(0, out);
  EXPECT_EQ(describe(out), "Br1r2Nr3E");
}

TEST(RecordAttributesTest, EventRoundTripAndBadValues) {
  using network::NetworkEvent;
  using network::NetworkEventType;
  for (bool backlog : {true, false}) {
    const NetworkEvent e{NetworkEventType::kRecordAttributes, backlog ? 1 : 0, {}};
    EXPECT_EQ(network::EventSerializer::deserialize(network::EventSerializer::serialize(e)), e);
  }
  // A value other than 0 / 1 in a channel's data is corrupt input.
  network::NetworkBufferPool global(4, 256);
  auto pool = global.createBufferPool(1, 4, "test");
  for (const NetworkEvent& bad : {NetworkEvent{NetworkEventType::kRecordAttributes, 2, {}},
                                  NetworkEvent{NetworkEventType::kRecordAttributes, 1, "x"}}) {
    network::Buffer buffer = pool->requestBuffer();
    network::EventSerializer::toBuffer(bad, buffer);
    network::StreamElementDeserializer in;
    EXPECT_THROW(in.read(std::move(buffer), [](StreamElement&&) {}), InputError);
  }
}

}  // namespace
}  // namespace sluice::runtime
