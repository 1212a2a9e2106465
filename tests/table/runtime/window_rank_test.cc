// WindowRankOperator driven by hand: a window's Top-N (or its first / last row) emitted when the watermark
// passes window_end - 1, insert-only, ties in arrival order, late rows dropped and counted, state dropped
// when the window fires, and a snapshot after every step restored on both state backends. Expected rows
// worked out by hand.

#include "table/runtime/window_rank.h"

#include <gtest/gtest.h>

#include "common/error.h"
#include "state_test_util.h"

namespace sluice::table {
namespace {

using testing::CollectingOutput;
using testing::ins;
using testing::makeBatch;
using types::LogicalType;
using types::RowType;

// (id, k, v, ts, window_start, window_end); times in ms, windows of 10 ms.
const RowType kInput{{"id", "k", "v", "ts", "window_start", "window_end"},
                     {LogicalType::integer(), LogicalType::string(), LogicalType::integer(), LogicalType::timestamp(3),
                      LogicalType::timestamp(3), LogicalType::timestamp(3)}};
constexpr int kWindowEnd = 5;

struct Step {
  bool watermark = false;
  testing::InputRow row;
  int64_t time = 0;
};

Step R(int64_t id, const char* k, int64_t v, int64_t ts) {
  const int64_t start = ts - ts % 10;
  return {false, ins({id, std::string(k), v, ts, start, start + 10})};
}
Step W(int64_t w) { return {true, {}, w}; }

void apply(WindowRankOperator& op, const Step& s) {
  if (s.watermark) op.processWatermark(runtime::Watermark{s.time});
  else op.processBatch(makeBatch(kInput, {s.row}));
}

// [0, 10): a: 1 (v 5, ts 1), 2 (7, 3), 3 (5, 2), 4 (9, 8), 9 (0, 8), 10 (2, 1); b: 5 (1, 4).
// [10, 20): a: 6 (3, 12), then 8 (4, 15) after WM(9). Row 7 comes for [0, 10) after WM(9): late.
const std::vector<Step> kScript = {R(1, "a", 5, 1), R(2, "a", 7, 3),   R(3, "a", 5, 2), R(5, "b", 1, 4),
                                   R(4, "a", 9, 8), R(6, "a", 3, 12),  W(5),            R(9, "a", 0, 8),
                                   R(10, "a", 2, 1), W(9),             R(7, "a", 100, 0), R(8, "a", 4, 15),
                                   W(30)};

RankSpec topN(std::vector<SortField> order, int64_t start, int64_t end, bool rank_number) {
  RankSpec s;
  s.partition_keys = {1};
  s.order = std::move(order);
  s.rank_start = start;
  s.rank_end = end;
  s.output_rank_number = rank_number;
  return s;
}

RankSpec dedup(bool keep_last) {
  RankSpec s = topN({SortField{3, !keep_last, !keep_last}}, 1, 1, false);
  s.keep_last = keep_last;
  s.rowtime = true;
  return s;
}

std::vector<std::string> run(const RankSpec& spec, bool deduplicate, int64_t* late = nullptr) {
  WindowRankOperator op(kInput, spec, kWindowEnd, deduplicate);
  CollectingOutput out;
  runtime::OperatorMetrics metrics;
  testing::openOperator(op, out, metrics);
  for (const Step& s : kScript) apply(op, s);
  if (late != nullptr) *late = op.numLateRecordsDropped();
  EXPECT_EQ(op.numBufferedRows(), 0u);  // every window fired and dropped its rows
  return out.take();
}

// Top 2 by v DESC: [0, 10) a: 4 (9), 2 (7); b: 5; [10, 20): 8 (4), 6 (3).
const std::vector<std::string> kTop2Desc = {
    "WM(5)", "+I[4, a, 9, 8, 0, 10, 1]", "+I[2, a, 7, 3, 0, 10, 2]", "+I[5, b, 1, 4, 0, 10, 1]", "WM(9)",
    "+I[8, a, 4, 15, 10, 20, 1]", "+I[6, a, 3, 12, 10, 20, 2]", "WM(30)"};

TEST(WindowRankTest, EmitsEachWindowsTopNWhenItFires) {
  int64_t late = 0;
  EXPECT_EQ(run(topN({SortField{2, false, false}}, 1, 2, true), false, &late), kTop2Desc);
  EXPECT_EQ(late, 1);
}

TEST(WindowRankTest, RankRangeWithoutTheRankNumber) {
  // Ranks 2..3 by v DESC: a: 9, 7, 5 (1), 5 (3) -> 2 and 1 (the earlier of the tied 5s); b has one row.
  EXPECT_EQ(run(topN({SortField{2, false, false}}, 2, 3, false), false),
            (std::vector<std::string>{"WM(5)", "+I[2, a, 7, 3, 0, 10]", "+I[1, a, 5, 1, 0, 10]", "WM(9)",
                                      "+I[6, a, 3, 12, 10, 20]", "WM(30)"}));
}

TEST(WindowRankTest, AscendingOrderAndTiesInArrivalOrder) {
  // Top 2 by v ASC: [0, 10) a: 9 (0), 10 (2); b: 5; [10, 20): 6 (3), 8 (4).
  EXPECT_EQ(run(topN({SortField{2, true, true}}, 1, 2, false), false),
            (std::vector<std::string>{"WM(5)", "+I[9, a, 0, 8, 0, 10]", "+I[10, a, 2, 1, 0, 10]",
                                      "+I[5, b, 1, 4, 0, 10]", "WM(9)", "+I[6, a, 3, 12, 10, 20]",
                                      "+I[8, a, 4, 15, 10, 20]", "WM(30)"}));
  // ORDER BY ts DESC, top 1: 4 and 9 both at ts 8; 4 came first.
  EXPECT_EQ(run(topN({SortField{3, false, false}}, 1, 1, false), false),
            (std::vector<std::string>{"WM(5)", "+I[4, a, 9, 8, 0, 10]", "+I[5, b, 1, 4, 0, 10]", "WM(9)",
                                      "+I[8, a, 4, 15, 10, 20]", "WM(30)"}));
}

TEST(WindowRankTest, DeduplicateKeepsTheFirstOrLastRowOfEachWindow) {
  // Keep first: smallest ts, the first of equal ones: a: 1 and 10 at ts 1 -> 1; [10, 20): 6.
  EXPECT_EQ(run(dedup(false), true),
            (std::vector<std::string>{"WM(5)", "+I[1, a, 5, 1, 0, 10]", "+I[5, b, 1, 4, 0, 10]", "WM(9)",
                                      "+I[6, a, 3, 12, 10, 20]", "WM(30)"}));
  // Keep last: largest ts, the last of equal ones: a: 4 and 9 at ts 8 -> 9 (unlike ROW_NUMBER's top 1 above).
  EXPECT_EQ(run(dedup(true), true),
            (std::vector<std::string>{"WM(5)", "+I[9, a, 0, 8, 0, 10]", "+I[5, b, 1, 4, 0, 10]", "WM(9)",
                                      "+I[8, a, 4, 15, 10, 20]", "WM(30)"}));
}

TEST(WindowRankTest, RefusesUpdatesAndOtherRankTypes) {
  WindowRankOperator op(kInput, topN({SortField{2, false, false}}, 1, 2, true), kWindowEnd, false);
  CollectingOutput out;
  runtime::OperatorMetrics metrics;
  testing::openOperator(op, out, metrics);
  EXPECT_THROW(op.processBatch(makeBatch(kInput, {{types::RowKind::kUpdateBefore,
                                                   {int64_t{1}, std::string("a"), int64_t{1}, int64_t{1}, int64_t{0},
                                                    int64_t{10}}}})),
               UserError);
  RankSpec rank = topN({SortField{2, false, false}}, 1, 2, true);
  rank.type = RankType::kRank;
  try {
    WindowRankOperator bad(kInput, rank, kWindowEnd, false);
    FAIL() << "RANK accepted";
  } catch (const UserError& e) {
    EXPECT_STREQ(e.what(), "RANK() function is not supported on Window TopN currently, only ROW_NUMBER() is supported.");
  }
  EXPECT_THROW(WindowRankOperator(kInput, topN({SortField{2, false, false}}, 1, 2, true), 2, false), UserError);
}

class WindowRankStateTest : public ::testing::TestWithParam<runtime::state::StateBackendType> {
 protected:
  std::unique_ptr<runtime::state::StreamOperatorStateContext> context(
      const runtime::checkpoint::OperatorSubtaskState* restored) const {
    runtime::state::StateBackendOptions o;
    o.type = GetParam();
    o.local_directory = ::testing::TempDir();
    o.instance_name = "WindowRankStateTest";
    return std::make_unique<runtime::state::StreamOperatorStateContext>(
        "op", testing::subtaskRange(1, 0), testing::kMaxParallelism, restored, o);
  }
  void restoreAfterEveryStep(const RankSpec& spec, bool deduplicate, const std::vector<std::string>& expected) {
    for (size_t split = 0; split <= kScript.size(); ++split) {
      SCOPED_TRACE("split after step " + std::to_string(split));
      CollectingOutput out;
      runtime::OperatorMetrics metrics;
      auto state1 = context(nullptr);
      auto first = std::make_unique<WindowRankOperator>(kInput, spec, kWindowEnd, deduplicate);
      testing::openWithState(*first, out, metrics, *state1);
      for (size_t i = 0; i < split; ++i) apply(*first, kScript[i]);
      const runtime::checkpoint::OperatorSubtaskState snap = testing::takeSnapshot(*first, *state1);
      first.reset();
      state1.reset();
      auto state2 = context(&snap);
      WindowRankOperator second(kInput, spec, kWindowEnd, deduplicate);
      testing::openWithState(second, out, metrics, *state2);
      for (size_t i = split; i < kScript.size(); ++i) apply(second, kScript[i]);
      EXPECT_EQ(out.take(), expected);
      // The restored watermark still makes row 7 late.
      EXPECT_EQ(second.numLateRecordsDropped(), split > 10 ? 0 : 1);
    }
  }
};

TEST_P(WindowRankStateTest, RestoreAfterEveryStepContinuesTheTopN) {
  restoreAfterEveryStep(topN({SortField{2, false, false}}, 1, 2, true), false, kTop2Desc);
}

TEST_P(WindowRankStateTest, RestoreAfterEveryStepContinuesTheDeduplication) {
  restoreAfterEveryStep(dedup(true), true,
                        {"WM(5)", "+I[9, a, 0, 8, 0, 10]", "+I[5, b, 1, 4, 0, 10]", "WM(9)", "+I[8, a, 4, 15, 10, 20]",
                         "WM(30)"});
}

INSTANTIATE_TEST_SUITE_P(Backends, WindowRankStateTest,
                         ::testing::Values(runtime::state::StateBackendType::kHashMap,
                                           runtime::state::StateBackendType::kRocksDB),
                         [](const auto& info) {
                           return std::string(info.param == runtime::state::StateBackendType::kRocksDB ? "RocksDB"
                                                                                                       : "HashMap");
                         });

}  // namespace
}  // namespace sluice::table
