// SortingBacklogDataInput's state machine (FLIP-327), driven by hand on the test thread: a recording head
// operator in a real OperatorChain is the downstream, the sorters are the real RowKeyedInputSorters. With
// max parallelism 1 every key is in key group 0, so the flush order is the order of the BIGINT keys
// themselves; every expected sequence below is written out from the inputs by hand.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/error.h"
#include "graph/job_graph.h"
#include "runtime/operators/keyed_input_sorter.h"
#include "runtime/operators/two_input_row_operator.h"
#include "runtime/task/operator_chain.h"
#include "runtime/task/sorting_backlog_data_input.h"

namespace sluice::runtime {
namespace {

using Mode = SortingBacklogDataInput::Mode;
using Log = std::vector<std::string>;

types::RowType keyValueType() {
  types::RowType t;
  t.names = {"k", "v"};
  t.types = {types::LogicalType::bigint(), types::LogicalType::bigint()};
  return t;
}

types::RowBatch rows(const std::vector<std::pair<int64_t, int64_t>>& kv) {
  types::RowBatch b(keyValueType());
  for (const auto& [k, v] : kv) {
    b.column(0).appendLong(k);
    b.column(1).appendLong(v);
    b.kinds().push_back(types::RowKind::kInsert);
  }
  return b;
}

// The fake downstream: logs what reaches the head, as "r<input> k v", "wm t", "ws IDLE|ACTIVE",
// "ra<input> 0|1" (input 0 for a one-input head), "begin", "end".
class Recorder final : public StreamOperator, public TwoInputRowOperator {
 public:
  explicit Recorder(Log* log) : log_(log) {}
  void processBatch(types::RowBatch&& b) override { record(1, b); }
  void processBatch2(types::RowBatch&& b) override { record(2, b); }
  void processWatermark(Watermark mark) override { log_->push_back(fmt::format("wm {}", mark.timestamp)); }
  void processWatermarkStatus(WatermarkStatus s) override {
    log_->push_back(fmt::format("ws {}", watermarkStatusName(s)));
  }
  void processRecordAttributes(RecordAttributes a) override { attributes(0, a); }
  void processRecordAttributes1(RecordAttributes a) override { attributes(1, a); }
  void processRecordAttributes2(RecordAttributes a) override { attributes(2, a); }
  void beginSortedInput() override { log_->push_back("begin"); }
  void endSortedInput() override { log_->push_back("end"); }

 private:
  void record(int input, const types::RowBatch& b) {
    for (size_t r = 0; r < b.numRows(); ++r) {
      log_->push_back(fmt::format("r{} {} {}", input, b.column(0).getLong(r), b.column(1).getLong(r)));
    }
  }
  void attributes(int input, RecordAttributes a) {
    log_->push_back(fmt::format("ra{} {}", input, a.is_backlog ? 1 : 0));
  }
  Log* log_;
};

// A one-vertex chain whose head is the Recorder, and the sorted input in front of it.
class SortingBacklogDataInputTest : public ::testing::Test {
 protected:
  static constexpr size_t kBatch = 3;

  void SetUp() override {
    spill_dir_ = std::filesystem::temp_directory_path() /
                 fmt::format("sorting-backlog-test-{}-{}", ::getpid(),
                             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(spill_dir_);
  }
  void TearDown() override {
    if (input_) input_->close();
    input_.reset();
    if (chain_) chain_->close(/*swallow=*/true);
    chain_.reset();
    std::filesystem::remove_all(spill_dir_);
  }

  void build(int inputs, int64_t sort_memory_bytes = 128LL << 20) {
    graph::JobVertex vertex;
    vertex.name = "recorder";
    graph::ChainedOperator op;
    op.name = "Recorder";
    Log* log = &log_;
    op.factory = makeOperatorFactory([log] { return std::make_unique<Recorder>(log); });
    vertex.operators.push_back(std::move(op));
    OperatorContext base;
    base.max_parallelism = 1;
    chain_ = std::make_unique<OperatorChain>(vertex, std::vector<RecordWriter*>{}, base, &metrics_);
    chain_->open();
    sort::SorterOptions options;
    options.memory_bytes = sort_memory_bytes;
    options.spill_dirs = {spill_dir_.string()};
    std::vector<std::unique_ptr<KeyedInputSorter>> sorters;
    for (int i = 0; i < inputs; ++i) {
      options.owner = fmt::format("input {}", i);
      sorters.push_back(std::make_unique<RowKeyedInputSorter>(keyValueType(), std::vector<int>{0}, options, 1));
    }
    input_ = std::make_unique<SortingBacklogDataInput>(std::move(sorters), *chain_, &metrics_, kBatch, "test");
  }

  // Calls flushNext until the input is realtime again; returns the calls it took. Each call hands the
  // head at most one batch of kBatch records (one input).
  int flushAll() {
    int calls = 0;
    while (input_->flushing()) {
      const size_t before = log_.size();
      input_->flushNext();
      ++calls;
      size_t records = 0;
      for (size_t i = before; i < log_.size(); ++i) records += log_[i][0] == 'r' ? 1 : 0;
      EXPECT_LE(records, kBatch) << "call " << calls;
      if (calls > 1000) {
        ADD_FAILURE() << "the flush does not end";
        break;
      }
    }
    return calls;
  }

  std::string logText() const { return fmt::format("{}", fmt::join(log_, " | ")); }

  std::filesystem::path spill_dir_;
  Log log_;
  OperatorMetrics metrics_;
  std::unique_ptr<OperatorChain> chain_;
  std::unique_ptr<SortingBacklogDataInput> input_;
};

TEST_F(SortingBacklogDataInputTest, RealtimeThenSortedBacklogThenKeyOrderedFlushThenRealtime) {
  build(1);
  // Realtime: everything passes at once, in order.
  input_->processBatch(rows({{9, 1}, {-3, 2}}));
  input_->processWatermark(Watermark{4});
  EXPECT_EQ(input_->mode(), Mode::kProcessingRealtime);
  EXPECT_EQ(log_, (Log{"r1 9 1", "r1 -3 2", "wm 4"}));
  log_.clear();

  // Backlog: the attributes pass, then records go to the sorter and watermarks are held.
  input_->processRecordAttributes(RecordAttributes{true});
  EXPECT_EQ(input_->mode(), Mode::kSortingBacklog);
  EXPECT_TRUE(input_->sorting());
  EXPECT_EQ(metrics_.sorting_input.load(), 1);
  input_->processBatch(rows({{5, 10}, {-3, 11}, {7, 12}, {5, 13}}));
  input_->processWatermark(Watermark{20});
  input_->processBatch(rows({{7, 14}, {0, 15}, {-3, 16}}));
  input_->processWatermark(Watermark{35});
  input_->processWatermarkStatus(WatermarkStatus::kIdle);
  input_->processWatermark(Watermark{30});  // smaller than the largest held: not the one emitted later
  input_->processBatch(rows({{5, 17}, {0, 18}}));
  input_->processWatermarkStatus(WatermarkStatus::kActive);
  EXPECT_EQ(log_, (Log{"ra0 1"})) << logText();
  EXPECT_EQ(metrics_.num_records_sorted.load(), 9);
  EXPECT_EQ(metrics_.num_bytes_spilled.load(), 0);  // 128 mb hold 9 rows

  // Leaving backlog starts the flush; no record moves before the first flushNext.
  input_->processRecordAttributes(RecordAttributes{false});
  EXPECT_EQ(input_->mode(), Mode::kFlushingBacklog);
  EXPECT_EQ(log_, (Log{"ra0 1", "begin"})) << logText();
  // 9 records in batches of 3: three calls hand them out, the fourth finds the sorter empty.
  EXPECT_EQ(flushAll(), 4);
  // Keys ascending (-3, 0, 5, 7), each key's records together in arrival order; then the end of the
  // sorted input, not-backlog, the last status (ACTIVE) and the largest held watermark (35, not the last 30).
  const Log want = {"ra0 1",    "begin",    "r1 -3 11", "r1 -3 16", "r1 0 15",  "r1 0 18", "r1 5 10",
                    "r1 5 13",  "r1 5 17",  "r1 7 12",  "r1 7 14",  "end",      "ra0 0",   "ws ACTIVE",
                    "wm 35"};
  EXPECT_EQ(log_, want) << logText();
  EXPECT_EQ(input_->mode(), Mode::kProcessingRealtime);
  EXPECT_FALSE(input_->sorting());
  EXPECT_EQ(metrics_.sorting_input.load(), 0);
  log_.clear();

  // Realtime again: records and watermarks pass at once; the sorted count stays.
  input_->processBatch(rows({{7, 19}, {-3, 20}}));
  input_->processWatermark(Watermark{40});
  EXPECT_EQ(log_, (Log{"r1 7 19", "r1 -3 20", "wm 40"})) << logText();
  EXPECT_EQ(metrics_.num_records_sorted.load(), 9);
  // The head counted every record once: 2 + 9 + 2.
  EXPECT_EQ(metrics_.num_records_in.load(), 13);
}

TEST_F(SortingBacklogDataInputTest, ASecondBacklogPhaseSortsOnlyItsOwnRecordsAndHoldsOnlyItsWatermarks) {
  build(1);
  input_->processRecordAttributes(RecordAttributes{true});
  input_->processBatch(rows({{2, 1}, {1, 2}}));
  input_->processWatermark(Watermark{50});
  input_->processRecordAttributes(RecordAttributes{false});
  flushAll();
  log_.clear();
  input_->processRecordAttributes(RecordAttributes{true});
  input_->processBatch(rows({{3, 3}, {1, 4}, {2, 5}}));
  input_->processWatermark(Watermark{60});
  input_->processRecordAttributes(RecordAttributes{false});
  // 3 records in batches of 3: one call hands them out, the second ends the flush. No status was given
  // in this phase: none is repeated.
  EXPECT_EQ(flushAll(), 2);
  EXPECT_EQ(log_, (Log{"ra0 1", "begin", "r1 1 4", "r1 2 5", "r1 3 3", "end", "ra0 0", "wm 60"})) << logText();
  EXPECT_EQ(metrics_.num_records_sorted.load(), 5);  // 2 + 3 over both phases
}

TEST_F(SortingBacklogDataInputTest, TheEndOfInputWhileSortingFlushesEverythingThenTheStatusAndWatermark) {
  build(1);
  input_->processRecordAttributes(RecordAttributes{true});
  input_->processBatch(rows({{4, 1}, {2, 2}, {4, 3}, {3, 4}, {2, 5}}));
  input_->processWatermarkStatus(WatermarkStatus::kIdle);
  input_->processWatermark(Watermark{Watermark::kMaxTimestamp});
  input_->endOfInput();
  // All at once (no flushNext), and no not-backlog attributes: the input ended in backlog.
  EXPECT_EQ(log_, (Log{"ra0 1", "begin", "r1 2 2", "r1 2 5", "r1 3 4", "r1 4 1", "r1 4 3", "end", "ws IDLE",
                       fmt::format("wm {}", Watermark::kMaxTimestamp)}))
      << logText();
  EXPECT_EQ(input_->mode(), Mode::kProcessingRealtime);
}

TEST_F(SortingBacklogDataInputTest, ASmallSortMemorySpillsAndStillFlushesEveryRecordInKeyOrder) {
  build(1, /*sort_memory_bytes=*/1024);
  input_->processRecordAttributes(RecordAttributes{true});
  // 1000 rows, key i % 10, value i, in batches of 50.
  for (int64_t b = 0; b < 20; ++b) {
    std::vector<std::pair<int64_t, int64_t>> kv;
    for (int64_t i = b * 50; i < (b + 1) * 50; ++i) kv.emplace_back(i % 10, i);
    input_->processBatch(rows(kv));
  }
  EXPECT_EQ(metrics_.num_records_sorted.load(), 1000);
  EXPECT_GT(metrics_.num_bytes_spilled.load(), 0);
  input_->processRecordAttributes(RecordAttributes{false});
  // 1000 = 333 * 3 + 1: 334 calls hand out the records, the last of them also ends the flush.
  EXPECT_EQ(flushAll(), 334);
  Log want = {"ra0 1", "begin"};
  for (int64_t k = 0; k < 10; ++k) {
    for (int64_t i = k; i < 1000; i += 10) want.push_back(fmt::format("r1 {} {}", k, i));
  }
  want.insert(want.end(), {"end", "ra0 0"});
  EXPECT_EQ(log_, want);
}

TEST_F(SortingBacklogDataInputTest, TwoInputsSortWhileEitherIsBacklogAndFlushEachKeyOfBothTogether) {
  build(2);
  input_->processRecordAttributes(RecordAttributes{true}, 0);
  EXPECT_EQ(input_->mode(), Mode::kSortingBacklog);
  input_->processBatch(rows({{2, 1}, {1, 2}}), 0);
  input_->processBatch(rows({{1, 100}, {3, 101}}), 1);  // input 2 is not backlog, but the head sorts
  input_->processRecordAttributes(RecordAttributes{true}, 1);
  input_->processWatermark(Watermark{8});
  // Input 1 leaves backlog: held, since input 2 still is; records keep going to the sorters.
  input_->processRecordAttributes(RecordAttributes{false}, 0);
  EXPECT_EQ(input_->mode(), Mode::kSortingBacklog);
  input_->processBatch(rows({{3, 3}, {2, 4}}), 0);
  input_->processBatch(rows({{2, 102}}), 1);
  EXPECT_EQ(log_, (Log{"ra1 1", "ra2 1"})) << logText();
  EXPECT_EQ(metrics_.num_records_sorted.load(), 7);
  input_->processRecordAttributes(RecordAttributes{false}, 1);
  EXPECT_EQ(input_->mode(), Mode::kFlushingBacklog);
  flushAll();
  // Keys ascending; within a key (rows carry no timestamps) the first input's records first, each
  // input's in arrival order. Then not-backlog for each input, and the held watermark.
  EXPECT_EQ(log_, (Log{"ra1 1", "ra2 1", "begin", "r1 1 2", "r2 1 100", "r1 2 1", "r1 2 4", "r2 2 102", "r1 3 3",
                       "r2 3 101", "end", "ra1 0", "ra2 0", "wm 8"}))
      << logText();
  EXPECT_EQ(input_->mode(), Mode::kProcessingRealtime);
  log_.clear();
  input_->processBatch(rows({{9, 5}}), 0);
  input_->processBatch(rows({{9, 103}}), 1);
  EXPECT_EQ(log_, (Log{"r1 9 5", "r2 9 103"})) << logText();
}

TEST_F(SortingBacklogDataInputTest, WhatCannotHappenWhileFlushingIsAnInternalError) {
  build(1);
  EXPECT_THROW(input_->flushNext(), InternalError);  // realtime: nothing to flush
  input_->processRecordAttributes(RecordAttributes{true});
  input_->processBatch(rows({{1, 1}, {2, 2}, {3, 3}, {4, 4}}));
  input_->processRecordAttributes(RecordAttributes{false});
  ASSERT_TRUE(input_->flushing());
  // The task reads no input while flushing: a record or attributes then are a broken invariant.
  EXPECT_THROW(input_->processBatch(rows({{5, 5}})), InternalError);
  EXPECT_THROW(input_->processRecordAttributes(RecordAttributes{true}), InternalError);
  // A watermark while flushing is held like one while sorting.
  input_->processWatermark(Watermark{3});
  flushAll();
  EXPECT_EQ(log_.back(), "wm 3") << logText();
}

}  // namespace
}  // namespace sluice::runtime
