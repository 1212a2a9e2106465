// RecordWriter with DataStream records (object batches): per-record channel selection, HASH by key
// group, CUSTOM, BROADCAST copies, coalescing and flush; local channels handing batches over without
// serializing them; and the task's processing-time timers.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "common/hash.h"
#include "runtime/network/input_gate.h"
#include "runtime/network/record_writer.h"
#include "runtime/network/stream_element_codec.h"
#include "runtime/serialization/object_batch_serializer.h"
#include "local_consumers.h"
#include "runtime/object_batch.h"
#include "runtime/serialization/key_hash.h"
#include "runtime/time/processing_time_service.h"

namespace sluice::runtime {
namespace {

struct Consumers : testing::LocalConsumers {
  explicit Consumers(int n) : LocalConsumers(n, 128, objectBatchSerializer<int64_t>()) {}
  // The records consumer j received, in order; watermarks as -1000 - ts markers are skipped.
  std::vector<int64_t> values(int j, int* batches = nullptr) {
    std::deque<InputEntry> out = drain(j);
    std::vector<int64_t> v;
    for (auto& e : out) {
      if (auto* b = std::get_if<ObjectBatchPtr>(&e.element)) {
        if (batches) ++*batches;
        for (int64_t x : (*b)->as<int64_t>().values()) v.push_back(x);
      }
    }
    return v;
  }
};

ObjectBatchPtr numbers(std::vector<int64_t> v) {
  auto b = makeObjectBatch<int64_t>();
  for (int64_t x : v) b->add(x, x * 10);
  return b;
}

TEST(ObjectRecordWriterTest, RebalanceRoundRobinsRecords) {
  Consumers c(3);
  graph::PartitionerSpec spec;
  spec.strategy = graph::ShipStrategy::kRebalance;
  RecordWriter w(c.partition, spec, /*producer_index=*/1, 100, /*coalesce=*/false);
  w.emitObjects(numbers({1, 2, 3, 4, 5}));
  // Producer 1 starts at channel 1: 1 -> 1, 2 -> 2, 3 -> 0, 4 -> 1, 5 -> 2.
  EXPECT_EQ(c.values(0), (std::vector<int64_t>{3}));
  EXPECT_EQ(c.values(1), (std::vector<int64_t>{1, 4}));
  EXPECT_EQ(c.values(2), (std::vector<int64_t>{2, 5}));
  EXPECT_EQ(w.recordsOut(), 5);
}

class ModPartitioner final : public ObjectPartitioner {
 public:
  void keyHashes(const ObjectBatch& batch, std::vector<uint64_t>& out) const override {
    const auto& b = batch.as<int64_t>();
    out.resize(b.size());
    for (size_t i = 0; i < b.size(); ++i) out[i] = keyHash(b.value(i) % 4);
  }
  void selectChannels(const ObjectBatch& batch, int n, std::vector<int>& out) const override {
    const auto& b = batch.as<int64_t>();
    out.resize(b.size());
    for (size_t i = 0; i < b.size(); ++i) out[i] = static_cast<int>(b.value(i) % n);
  }
};

TEST(ObjectRecordWriterTest, HashSendsEachKeyToItsKeyGroupOwner) {
  Consumers c(2);
  graph::PartitionerSpec spec;
  spec.strategy = graph::ShipStrategy::kHash;
  spec.record_partitioner = std::make_shared<ModPartitioner>();
  RecordWriter w(c.partition, spec, 0, 100, false);
  std::vector<int64_t> all;
  for (int64_t i = 0; i < 40; ++i) all.push_back(i);
  w.emitObjects(numbers(all));
  for (int j = 0; j < 2; ++j) {
    for (int64_t v : c.values(j)) {
      const int32_t kg = assignToKeyGroup(keyHash(v % 4), 128);
      EXPECT_EQ(operatorIndexForKeyGroup(128, 2, kg), j) << v;
    }
  }
}

TEST(ObjectRecordWriterTest, CustomUsesThePartitionerAndNeedsOne) {
  Consumers c(3);
  graph::PartitionerSpec spec;
  spec.strategy = graph::ShipStrategy::kCustom;
  EXPECT_THROW(RecordWriter(c.partition, spec, 0, 100, false), UserError);  // SQL rows: no custom partitioner
  spec.record_partitioner = std::make_shared<ModPartitioner>();
  RecordWriter w(c.partition, spec, 0, 100, false);
  w.emitObjects(numbers({0, 1, 2, 3, 4}));
  EXPECT_EQ(c.values(0), (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(c.values(1), (std::vector<int64_t>{1, 4}));
  EXPECT_EQ(c.values(2), (std::vector<int64_t>{2}));
}

TEST(ObjectRecordWriterTest, BroadcastCopiesAndCoalescingFlushes) {
  Consumers c(2);
  graph::PartitionerSpec spec;
  spec.strategy = graph::ShipStrategy::kBroadcast;
  RecordWriter w(c.partition, spec, 0, /*batch_size=*/4, /*coalesce=*/true);
  w.emitObjects(numbers({1, 2}));
  w.emitObjects(numbers({3}));
  EXPECT_TRUE(w.hasPending());  // 3 rows < 4: held back
  w.emitObjects(numbers({4}));  // 4 rows: sent as one batch to both consumers
  w.emitObjects(numbers({5}));
  w.flush();
  int batches0 = 0;
  EXPECT_EQ(c.values(0, &batches0), (std::vector<int64_t>{1, 2, 3, 4, 5}));
  EXPECT_EQ(batches0, 2);  // [1..4] and [5]
  EXPECT_EQ(c.values(1), (std::vector<int64_t>{1, 2, 3, 4, 5}));
}

TEST(ObjectBatchTest, SelectAndAppendKeepTimestampsAndTag) {
  auto b = numbers({1, 2, 3});
  b->setTag(7);
  auto part = b->emptyLike();
  const uint32_t rows[] = {2, 0};
  part->appendRows(*b, rows, 2);
  EXPECT_EQ(part->tag(), 7);
  EXPECT_EQ(part->as<int64_t>().values(), (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(part->timestamps(), (std::vector<int64_t>{30, 10}));
  part->appendAll(std::move(*numbers({9})));
  EXPECT_EQ(part->as<int64_t>().values(), (std::vector<int64_t>{3, 1, 9}));
  EXPECT_THROW(part->as<std::string>(), InternalError);
}

TEST(LocalObjectChannelTest, BatchesArriveAsTheProducersObjectsInOrder) {
  Consumers c(1);
  ObjectBatchPtr a = numbers({1, 2});
  ObjectBatchPtr b = numbers({3});
  b->setTag(4);
  const ObjectBatch* a_ptr = a.get();
  const ObjectBatch* b_ptr = b.get();
  c.partition.emit(0, std::move(a));
  c.partition.emit(0, Watermark{15});
  c.partition.emit(0, std::move(b));
  std::deque<InputEntry> out = c.drain(0);
  ASSERT_EQ(out.size(), 3u);
  // The same objects, not copies; the watermark between them.
  ASSERT_TRUE(std::holds_alternative<ObjectBatchPtr>(out[0].element));
  EXPECT_EQ(std::get<ObjectBatchPtr>(out[0].element).get(), a_ptr);
  EXPECT_EQ(std::get<Watermark>(out[1].element).timestamp, 15);
  const ObjectBatchPtr& got_b = std::get<ObjectBatchPtr>(out[2].element);
  EXPECT_EQ(got_b.get(), b_ptr);
  EXPECT_EQ(got_b->tag(), 4);
  EXPECT_EQ(got_b->as<int64_t>().values(), (std::vector<int64_t>{3}));
  EXPECT_EQ(c.partition.subpartitions[0].pipelined->localObjects()->size(), 0u);
}

TEST(LocalObjectChannelTest, AnUnalignedBarrierKeepsTheOvertakenBatchesSerialized) {
  Consumers c(1);
  auto& sp = *c.partition.subpartitions[0].pipelined;
  sp.write(numbers({1, 2}));
  sp.write(numbers({3}));
  std::string overtaken;
  const CheckpointBarrier barrier{5, 100, checkpoint::CheckpointKind::kCheckpoint,
                                  checkpoint::AlignmentType::kUnaligned, 0};
  sp.writePriorityBarrier(barrier, overtaken);
  // The channel state holds both batches as a serializing channel would.
  std::vector<std::vector<int64_t>> state;
  std::vector<std::vector<int64_t>> timestamps;
  network::forEachChannelStateRecord(overtaken, sp.objectSerializer().get(), [&](StreamElement&& e) {
    const auto& batch = std::get<ObjectBatchPtr>(e)->as<int64_t>();
    state.push_back(batch.values());
    timestamps.push_back(batch.timestamps());
  });
  EXPECT_EQ(state, (std::vector<std::vector<int64_t>>{{1, 2}, {3}}));
  EXPECT_EQ(timestamps, (std::vector<std::vector<int64_t>>{{10, 20}, {30}}));
  // The barrier first, then both batches still delivered.
  std::deque<InputEntry> out = c.drain(0);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(std::get<CheckpointBarrier>(out[0].element).id, 5);
  EXPECT_EQ(std::get<ObjectBatchPtr>(out[1].element)->as<int64_t>().values(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(std::get<ObjectBatchPtr>(out[2].element)->as<int64_t>().values(), (std::vector<int64_t>{3}));
}

TEST(LocalObjectChannelTest, AHandleOutsideALocalChannelIsCorrupt) {
  network::LocalObjectQueue queue;
  std::string handle;
  queue.push(numbers({1}), handle);
  const auto serializer = objectBatchSerializer<int64_t>();
  // A remote or spilled channel has no queue: a handle there is an unknown record.
  EXPECT_THROW(network::decodeStreamRecord(handle, serializer.get()), InputError);
  std::string other = handle;
  other[1] = 9;  // names a batch that is not next
  EXPECT_THROW(queue.take(other), InputError);
  EXPECT_THROW(queue.take(handle.substr(0, 5)), InputError);
  EXPECT_EQ(queue.take(handle)->as<int64_t>().values(), (std::vector<int64_t>{1}));
}

TEST(ProcessingTimeServiceTest, FiresDueTimersInTimeOrder) {
  int64_t now = 0;
  ProcessingTimeService s([&] { return now; });
  std::vector<int64_t> fired;
  s.registerTimer(20, [&](int64_t t) { fired.push_back(t); });
  s.registerTimer(10, [&](int64_t t) {
    fired.push_back(t);
    s.registerTimer(15, [&](int64_t t2) { fired.push_back(t2); });  // due at once when now >= 15
  });
  now = 9;
  EXPECT_EQ(s.fireDue(), 0u);
  now = 16;
  EXPECT_EQ(s.fireDue(), 2u);
  EXPECT_EQ(fired, (std::vector<int64_t>{10, 15}));
  EXPECT_EQ(s.nextTimer(), std::optional<int64_t>(20));
}

}  // namespace
}  // namespace sluice::runtime
