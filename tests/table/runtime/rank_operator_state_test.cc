// RankOperator and DeduplicateOperator over the state layer: changelogs worked out by hand from Flink's
// RetractableTopNFunction / AppendOnlyTopNFunction / RowTimeDeduplicateFunction, and a snapshot at every
// row boundary restored into a fresh operator (on the heap and on RocksDB, also across backends and at
// another parallelism) that continues the changelog exactly.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>

#include "common/error.h"
#include "common/hash.h"
#include "runtime/network/record_writer.h"
#include "state_test_util.h"
#include "table/runtime/deduplicate_operator.h"
#include "table/runtime/rank_operator.h"

namespace sluice::table {
namespace {

using ::testing::ElementsAreArray;
using ::testing::UnorderedElementsAreArray;
using testing::CollectingOutput;
using testing::ins;
using testing::InputRow;
using testing::kNull;
using testing::makeBatch;
using testing::ua;
using testing::ub;
using types::LogicalType;
using types::RowType;

// page STRING, c BIGINT: the changelog of SELECT page, COUNT(*) FROM clicks GROUP BY page over a, b, a, c, c, c.
RowType countsType() { return RowType{{"page", "c"}, {LogicalType::string(), LogicalType::bigint(false)}}; }

const std::vector<InputRow> kCounts = {
    ins({"a", int64_t{1}}), ins({"b", int64_t{1}}), ub({"a", int64_t{1}}), ua({"a", int64_t{2}}),
    ins({"c", int64_t{1}}), ub({"c", int64_t{1}}), ua({"c", int64_t{2}}), ub({"c", int64_t{2}}),
    ua({"c", int64_t{3}}),
};

RankSpec top2ByCountDesc(bool with_number) {
  RankSpec s;
  s.strategy = RankStrategy::kRetract;
  s.order = {SortField{1, false, false}};
  s.rank_end = 2;
  s.output_rank_number = with_number;
  return s;
}

// Worked out in tests/sql/rank/top_n_retract.test (the same input and query).
const std::vector<std::string> kRetractWithNumber = {
    "+I[a, 1, 1]", "+I[b, 1, 2]", "-U[a, 1, 1]", "+U[b, 1, 1]", "-D[b, 1, 2]", "-U[b, 1, 1]",
    "+U[a, 2, 1]", "+I[b, 1, 2]", "-U[b, 1, 2]", "+U[c, 2, 2]", "-U[c, 2, 2]", "+U[b, 1, 2]",
    "-U[a, 2, 1]", "+U[c, 3, 1]", "-U[b, 1, 2]", "+U[a, 2, 2]",
};
const std::vector<std::string> kRetractWithoutNumber = {
    "+I[a, 1]", "+I[b, 1]", "-D[a, 1]", "+I[a, 2]", "-D[b, 1]", "+I[c, 2]", "-D[c, 2]", "+I[b, 1]", "-D[b, 1]", "+I[c, 3]",
};

runtime::state::StateBackendOptions backend(bool rocksdb) {
  runtime::state::StateBackendOptions o;
  o.type = rocksdb ? runtime::state::StateBackendType::kRocksDB : runtime::state::StateBackendType::kHashMap;
  return o;
}

std::unique_ptr<runtime::state::StreamOperatorStateContext> context(const runtime::checkpoint::OperatorSubtaskState* from,
                                                                    bool rocksdb, int32_t parallelism = 1,
                                                                    int32_t index = 0) {
  return std::make_unique<runtime::state::StreamOperatorStateContext>(
      "op", testing::subtaskRange(parallelism, index), testing::kMaxParallelism, from, backend(rocksdb));
}

template <typename Op, typename Make>
void checkEveryBoundary(const RowType& type, const std::vector<InputRow>& input, const std::vector<std::string>& expected,
                        Make make) {
  for (int from_backend = 0; from_backend < 2; ++from_backend) {
    for (int to_backend = 0; to_backend < 2; ++to_backend) {
      for (size_t split = 0; split <= input.size(); ++split) {
        SCOPED_TRACE(::testing::Message() << "backend " << from_backend << " -> " << to_backend << ", split after row "
                                          << split);
        CollectingOutput out;
        runtime::OperatorMetrics metrics;
        auto state1 = context(nullptr, from_backend == 1);
        std::unique_ptr<Op> first = make();
        testing::openWithState(*first, out, metrics, *state1);
        for (size_t i = 0; i < split; ++i) first->processBatch(makeBatch(type, {input[i]}));
        const auto snap = testing::takeSnapshot(*first, *state1);
        first.reset();
        state1.reset();
        auto state2 = context(&snap, to_backend == 1);
        std::unique_ptr<Op> second = make();
        testing::openWithState(*second, out, metrics, *state2);
        for (size_t i = split; i < input.size(); ++i) second->processBatch(makeBatch(type, {input[i]}));
        EXPECT_THAT(out.take(), ElementsAreArray(expected));
      }
    }
  }
}

TEST(RankOperatorStateTest, RetractStrategyWithRankNumber) {
  checkEveryBoundary<RankOperator>(countsType(), kCounts, kRetractWithNumber, [] {
    return std::make_unique<RankOperator>(countsType(), top2ByCountDesc(true));
  });
}

TEST(RankOperatorStateTest, RetractStrategyWithoutRankNumber) {
  checkEveryBoundary<RankOperator>(countsType(), kCounts, kRetractWithoutNumber, [] {
    return std::make_unique<RankOperator>(countsType(), top2ByCountDesc(false));
  });
}

// k STRING, v BIGINT, id BIGINT; the rows of tests/sql/rank/top_n_append.test.
RowType kvType() {
  return RowType{{"k", "v", "id"}, {LogicalType::string(), LogicalType::bigint(), LogicalType::bigint()}};
}
const std::vector<InputRow> kRows = {
    ins({"a", int64_t{10}, int64_t{1}}), ins({"a", int64_t{20}, int64_t{2}}), ins({"b", int64_t{5}, int64_t{3}}),
    ins({"a", int64_t{15}, int64_t{4}}), ins({"a", int64_t{20}, int64_t{5}}), ins({kNull, int64_t{7}, int64_t{6}}),
    ins({"a", int64_t{30}, int64_t{7}}), ins({kNull, int64_t{9}, int64_t{8}}), ins({"a", int64_t{20}, int64_t{9}}),
};

RankSpec appendTop2(bool with_number) {
  RankSpec s;
  s.partition_keys = {0};
  s.order = {SortField{1, false, false}};
  s.rank_end = 2;
  s.output_rank_number = with_number;
  return s;
}

TEST(RankOperatorStateTest, AppendFastStrategyWithAndWithoutRankNumber) {
  // Worked out in tests/sql/rank/top_n_append.test.
  const std::vector<std::string> with_number = {
      "+I[a, 10, 1, 1]", "-U[a, 10, 1, 1]", "+U[a, 20, 2, 1]", "+I[a, 10, 1, 2]", "+I[b, 5, 3, 1]",
      "-U[a, 10, 1, 2]", "+U[a, 15, 4, 2]", "-U[a, 15, 4, 2]", "+U[a, 20, 5, 2]", "+I[null, 7, 6, 1]",
      "-U[a, 20, 2, 1]", "+U[a, 30, 7, 1]", "-U[a, 20, 5, 2]", "+U[a, 20, 2, 2]", "-U[null, 7, 6, 1]",
      "+U[null, 9, 8, 1]", "+I[null, 7, 6, 2]",
  };
  const std::vector<std::string> without_number = {
      "+I[a, 10, 1]", "+I[a, 20, 2]", "+I[b, 5, 3]", "-D[a, 10, 1]", "+I[a, 15, 4]", "-D[a, 15, 4]",
      "+I[a, 20, 5]", "+I[null, 7, 6]", "-D[a, 20, 5]", "+I[a, 30, 7]", "+I[null, 9, 8]",
  };
  checkEveryBoundary<RankOperator>(kvType(), kRows, with_number,
                                   [] { return std::make_unique<RankOperator>(kvType(), appendTop2(true)); });
  checkEveryBoundary<RankOperator>(kvType(), kRows, without_number,
                                   [] { return std::make_unique<RankOperator>(kvType(), appendTop2(false)); });
}

TEST(RankOperatorStateTest, RescaledToTwoSubtasksEachContinuesItsPartitions) {
  // Rows 1..5 at parallelism 1, then the snapshot split over 2 subtasks; rows 6..9 go to the subtask owning
  // their partition's key group. Together they emit the rest of the single-subtask changelog (per
  // partition in order; across partitions in any order).
  CollectingOutput out1;
  runtime::OperatorMetrics metrics;
  auto state = context(nullptr, false);
  RankOperator first(kvType(), appendTop2(true));
  testing::openWithState(first, out1, metrics, *state);
  for (size_t i = 0; i < 5; ++i) first.processBatch(makeBatch(kvType(), {kRows[i]}));
  out1.take();
  const auto snap = testing::takeSnapshot(first, *state);
  std::vector<std::string> all;
  for (int32_t index = 0; index < 2; ++index) {
    const auto part = testing::rescaled({&snap}, 2, index);
    auto st = context(&part, index == 1, 2, index);
    CollectingOutput out;
    RankOperator op(kvType(), appendTop2(true));
    testing::openWithState(op, out, metrics, *st, 2, index);
    const auto range = testing::subtaskRange(2, index);
    for (size_t i = 5; i < kRows.size(); ++i) {
      types::RowBatch b = makeBatch(kvType(), {kRows[i]});
      std::vector<uint64_t> hashes;
      runtime::hashKeys(b, {0}, hashes);
      if (range.contains(assignToKeyGroup(hashes[0], testing::kMaxParallelism))) op.processBatch(std::move(b));
    }
    for (auto& e : out.take()) all.push_back(e);
  }
  EXPECT_THAT(all, UnorderedElementsAreArray(std::vector<std::string>{
                       "+I[null, 7, 6, 1]", "-U[a, 20, 2, 1]", "+U[a, 30, 7, 1]", "-U[a, 20, 5, 2]", "+U[a, 20, 2, 2]",
                       "-U[null, 7, 6, 1]", "+U[null, 9, 8, 1]", "+I[null, 7, 6, 2]"}));
}

// id STRING, v BIGINT, ts TIMESTAMP(3): the rows of tests/sql/rank/deduplicate.test (ts in seconds * 1000).
RowType eventsType() {
  return RowType{{"id", "v", "ts"}, {LogicalType::string(), LogicalType::bigint(), LogicalType::timestamp(3)}};
}
const std::vector<InputRow> kEvents = {
    ins({"x", int64_t{1}, int64_t{5000}}), ins({"y", int64_t{2}, int64_t{3000}}), ins({"x", int64_t{3}, int64_t{2000}}),
    ins({"x", int64_t{4}, int64_t{5000}}), ins({"y", int64_t{5}, int64_t{9000}}), ins({"x", int64_t{6}, int64_t{1000}}),
};

RankSpec dedup(bool rowtime, bool keep_last) {
  RankSpec s;
  s.partition_keys = {0};
  s.order = {SortField{2, !keep_last, !keep_last}};
  s.rank_end = 1;
  s.output_rank_number = false;
  s.rowtime = rowtime;
  s.keep_last = keep_last;
  return s;
}

TEST(DeduplicateOperatorStateTest, EveryKindRestoresAtEveryBoundary) {
  checkEveryBoundary<DeduplicateOperator>(
      eventsType(), kEvents,
      {"+I[x, 1, 5000]", "+I[y, 2, 3000]", "-U[x, 1, 5000]",
       "+U[x, 4, 5000]", "-U[y, 2, 3000]", "+U[y, 5, 9000]"},
      [] { return std::make_unique<DeduplicateOperator>(eventsType(), dedup(true, true)); });
  checkEveryBoundary<DeduplicateOperator>(
      eventsType(), kEvents,
      {"+I[x, 1, 5000]", "+I[y, 2, 3000]", "-U[x, 1, 5000]",
       "+U[x, 3, 2000]", "-U[x, 3, 2000]", "+U[x, 6, 1000]"},
      [] { return std::make_unique<DeduplicateOperator>(eventsType(), dedup(true, false)); });
  checkEveryBoundary<DeduplicateOperator>(
      eventsType(), kEvents, {"+I[x, 1, 5000]", "+I[y, 2, 3000]"},
      [] { return std::make_unique<DeduplicateOperator>(eventsType(), dedup(false, false)); });
}

TEST(RankOperatorStateTest, RestoredRowsOfAnotherRowTypeAreAnInputError) {
  CollectingOutput out;
  runtime::OperatorMetrics metrics;
  auto state1 = context(nullptr, false);
  RankOperator first(kvType(), appendTop2(true));
  testing::openWithState(first, out, metrics, *state1);
  first.processBatch(makeBatch(kvType(), {kRows[0]}));
  const auto snap = testing::takeSnapshot(first, *state1);
  const RowType wider{{"k", "v", "id", "x"},
                      {LogicalType::string(), LogicalType::bigint(), LogicalType::bigint(), LogicalType::bigint()}};
  auto state2 = context(&snap, false);
  RankOperator second(wider, appendTop2(true));
  try {
    testing::openWithState(second, out, metrics, *state2);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("restored state 'topn-buffer'"));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("a row does not decode as 4 columns"));
  }
}

}  // namespace
}  // namespace sluice::table
