#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <thread>

#include "common/hash.h"
#include "runtime/network/input_gate.h"
#include "runtime/network/record_writer.h"
#include "local_consumers.h"

namespace sluice::runtime {
namespace {

types::RowBatch keyBatch(const std::vector<int64_t>& keys, const std::vector<int64_t>& values) {
  types::RowType t;
  t.names = {"k", "v"};
  t.types = {types::LogicalType::bigint(), types::LogicalType::bigint()};
  types::RowBatch b(t);
  for (size_t i = 0; i < keys.size(); ++i) {
    b.column(0).appendLong(keys[i]);
    b.column(1).appendLong(values[i]);
    b.kinds().push_back(types::RowKind::kInsert);
  }
  return b;
}

using Consumers = testing::LocalConsumers;

TEST(KeyGroupTest, OperatorIndexByHand) {
  // keyGroup * parallelism / maxParallelism with maxParallelism 128, parallelism 3.
  EXPECT_EQ(operatorIndexForKeyGroup(128, 3, 0), 0);
  EXPECT_EQ(operatorIndexForKeyGroup(128, 3, 42), 0);   // 126 / 128
  EXPECT_EQ(operatorIndexForKeyGroup(128, 3, 43), 1);   // 129 / 128
  EXPECT_EQ(operatorIndexForKeyGroup(128, 3, 86), 2);   // 258 / 128
  EXPECT_EQ(operatorIndexForKeyGroup(128, 3, 127), 2);  // 381 / 128
}

TEST(HashKeyTest, ColumnwiseEqualsPerRowAndNullIsFixed) {
  types::RowType t;
  t.names = {"s", "d", "n"};
  t.types = {types::LogicalType::string(), types::LogicalType::doubleType(), types::LogicalType::integer()};
  types::RowBatch b(t);
  b.column(0).appendString("alpha");
  b.column(1).appendDouble(0.0);
  b.column(2).appendNull();
  b.kinds().push_back(types::RowKind::kInsert);
  b.column(0).appendString("alpha");
  b.column(1).appendDouble(-0.0);
  b.column(2).appendNull();
  b.kinds().push_back(types::RowKind::kInsert);
  b.column(0).appendNull();
  b.column(1).appendDouble(1.5);
  b.column(2).appendLong(7);
  b.kinds().push_back(types::RowKind::kInsert);
  const std::vector<int> keys = {0, 1, 2};
  std::vector<uint64_t> hashes;
  hashKeys(b, keys, hashes);
  ASSERT_EQ(hashes.size(), 3u);
  for (size_t r = 0; r < 3; ++r) EXPECT_EQ(hashes[r], hashKey(b, r, keys));
  EXPECT_EQ(hashes[0], hashes[1]);  // same string, 0.0 == -0.0, NULL == NULL
  EXPECT_NE(hashes[0], hashes[2]);
  // INT and BIGINT columns with the same value hash alike (by value).
  types::RowBatch big = keyBatch({7}, {0});
  EXPECT_EQ(hashKey(b, 2, {2}), hashKey(big, 0, {0}));
}

TEST(RecordWriterTest, HashSendsEveryRowOfAKeyToItsKeyGroupOwner) {
  Consumers c(3);
  RecordWriter w(c.partition, {graph::ShipStrategy::kHash, {0}, nullptr}, 0, 1024, false);
  std::vector<int64_t> keys, values;
  for (int64_t i = 0; i < 300; ++i) {
    keys.push_back(i % 17);
    values.push_back(i);
  }
  w.emit(keyBatch(keys, values));
  w.endOfPartition();
  std::map<int64_t, int> subtask_of_key;
  int rows = 0;
  for (int j = 0; j < 3; ++j) {
    int64_t last_value = -1;
    for (auto& e : c.drain(j)) {
      auto* b = std::get_if<types::RowBatch>(&e.element);
      if (!b) continue;
      for (size_t r = 0; r < b->numRows(); ++r) {
        const int64_t k = b->column(0).getLong(r);
        const int64_t v = b->column(1).getLong(r);
        types::RowBatch single = keyBatch({k}, {v});
        const int32_t expected = operatorIndexForKeyGroup(128, 3, assignToKeyGroup(hashKey(single, 0, {0}), 128));
        EXPECT_EQ(j, expected) << "key " << k;
        auto [it, inserted] = subtask_of_key.emplace(k, j);
        EXPECT_EQ(it->second, j);
        EXPECT_GT(v, last_value);  // relative order kept per target
        last_value = v;
        ++rows;
      }
    }
  }
  EXPECT_EQ(rows, 300);
  EXPECT_EQ(subtask_of_key.size(), 17u);
  EXPECT_EQ(w.recordsOut(), 300);
}

TEST(RecordWriterTest, RebalanceRoundRobinsWholeBatchesFromTheSubtaskIndex) {
  Consumers c(3);
  RecordWriter w(c.partition, {graph::ShipStrategy::kRebalance, {}, nullptr}, 1, 1024, false);
  for (int64_t i = 0; i < 4; ++i) w.emit(keyBatch({i, i}, {0, 0}));
  // Producer 1 starts at subtask 1: batches 0, 1, 2, 3 go to 1, 2, 0, 1.
  auto firstKeys = [&](int j) {
    std::vector<int64_t> ks;
    for (auto& e : c.drain(j)) ks.push_back(std::get<types::RowBatch>(e.element).column(0).getLong(0));
    return ks;
  };
  EXPECT_EQ(firstKeys(0), std::vector<int64_t>{2});
  EXPECT_EQ(firstKeys(1), (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(firstKeys(2), std::vector<int64_t>{1});
}

TEST(RecordWriterTest, BroadcastCopiesToAllAndWatermarksGoEverywhere) {
  Consumers c(2);
  RecordWriter w(c.partition, {graph::ShipStrategy::kBroadcast, {}, nullptr}, 0, 1024, true);
  w.emit(keyBatch({1, 2}, {10, 20}));
  w.broadcastWatermark(Watermark{99});
  for (int j = 0; j < 2; ++j) {
    auto out = c.drain(j);
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(std::get<types::RowBatch>(out[0].element).numRows(), 2u);
    EXPECT_EQ(std::get<Watermark>(out[1].element).timestamp, 99);  // flushed before the watermark
  }
}

TEST(RecordWriterTest, CoalescesSmallBatchesUpToTheBatchSize) {
  Consumers c(1);
  RecordWriter w(c.partition, {graph::ShipStrategy::kForward, {}, nullptr}, 0, 10, true);
  w.emit(keyBatch({1, 2, 3, 4}, {0, 0, 0, 0}));
  w.emit(keyBatch({5, 6, 7, 8}, {0, 0, 0, 0}));
  EXPECT_TRUE(w.hasPending());
  EXPECT_TRUE(c.drain(0).empty());
  // 8 pending + 4 > 10: the 8 rows go out, the 4 new ones wait.
  w.emit(keyBatch({9, 10, 11, 12}, {0, 0, 0, 0}));
  auto out = c.drain(0);
  ASSERT_EQ(out.size(), 1u);
  const auto& first = std::get<types::RowBatch>(out[0].element);
  ASSERT_EQ(first.numRows(), 8u);
  EXPECT_EQ(first.column(0).getLong(7), 8);
  w.endOfPartition();
  out = c.drain(0);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(std::get<types::RowBatch>(out[0].element).numRows(), 4u);
  EXPECT_TRUE(std::holds_alternative<EndOfPartition>(out[1].element));
  EXPECT_FALSE(w.hasPending());
}

TEST(RecordWriterTest, CoalescingKeepsStringsIntact) {
  types::RowType t;
  t.names = {"s"};
  t.types = {types::LogicalType::string()};
  Consumers c(1);
  RecordWriter w(c.partition, {graph::ShipStrategy::kForward, {}, nullptr}, 0, 100, true);
  for (const char* s : {"ab", "cde", ""}) {
    types::RowBatch b(t);
    b.column(0).appendString(s);
    b.kinds().push_back(types::RowKind::kUpdateAfter);
    w.emit(std::move(b));
  }
  w.flush();
  auto out = c.drain(0);
  ASSERT_EQ(out.size(), 1u);
  const auto& b = std::get<types::RowBatch>(out[0].element);
  ASSERT_EQ(b.numRows(), 3u);
  EXPECT_EQ(b.column(0).getString(0), "ab");
  EXPECT_EQ(b.column(0).getString(1), "cde");
  EXPECT_EQ(b.column(0).getString(2), "");
  EXPECT_EQ(b.kind(1), types::RowKind::kUpdateAfter);
}

TEST(InputGateTest, WakeupAndDeadlineEndAWait) {
  InputGate gate(1);
  std::deque<InputGate::Entry> out;
  EXPECT_EQ(gate.pollAll(out, std::chrono::steady_clock::now()), InputGate::PollResult::kTimeout);
  std::thread waker([&] { gate.wakeup(); });
  EXPECT_EQ(gate.pollAll(out), InputGate::PollResult::kWakeup);
  waker.join();
}

}  // namespace
}  // namespace sluice::runtime
