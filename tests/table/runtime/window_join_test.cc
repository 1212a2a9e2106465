// WindowJoinOperator driven by hand: rows buffered per key and window, joined when the watermark passes
// window_end - 1, outer rows padded then, SEMI / ANTI, late rows dropped and counted, NULL keys, and a
// snapshot after every step restored on both state backends. Expected rows worked out by hand.

#include "table/runtime/window_join.h"

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

// left (id, k, window_start, window_end), right (v, k, window_start, window_end); times in ms.
const RowType kLeft{{"id", "k", "window_start", "window_end"},
                    {LogicalType::integer(), LogicalType::string(), LogicalType::timestamp(3), LogicalType::timestamp(3)}};
const RowType kRight{{"v", "k", "window_start", "window_end"},
                     {LogicalType::integer(), LogicalType::string(), LogicalType::timestamp(3), LogicalType::timestamp(3)}};

JoinSpec spec(FlinkJoinType type) {
  JoinSpec s;
  s.type = type;
  s.left_keys = {1};
  s.right_keys = {1};
  return s;
}

struct Step {
  char what;  // 'l', 'r', 'w'
  testing::InputRow row;
  int64_t watermark = 0;
};

Step L(int64_t id, const char* k, int64_t start) { return {'l', ins({id, std::string(k), start, start + 10})}; }
Step R(int64_t v, const char* k, int64_t start) { return {'r', ins({v, std::string(k), start, start + 10})}; }
Step W(int64_t w) { return {'w', {}, w}; }

void apply(WindowJoinOperator& op, const Step& s) {
  if (s.what == 'l') op.processBatch(makeBatch(kLeft, {s.row}));
  else if (s.what == 'r') op.processBatch2(makeBatch(kRight, {s.row}));
  else op.processWatermark(runtime::Watermark{s.watermark});
}

// Windows of 10 ms. WM(5) fires nothing (9 > 5); WM(9) fires [0, 10): a: 1 x 10, b: 11 alone; then 3 in
// [0, 10) is late; WM(19) fires [10, 20): a: 2 x 12; WM(30) fires [20, 30): c: 4 alone.
const std::vector<Step> kScript = {L(1, "a", 0), R(10, "a", 0), R(11, "b", 0), L(2, "a", 10), W(5),
                                   W(9),         L(3, "a", 0),  R(12, "a", 10), L(4, "c", 20), W(19), W(30)};

std::vector<std::string> run(FlinkJoinType type, int64_t* late = nullptr) {
  WindowJoinOperator op(kLeft, kRight, spec(type), 3, 3);
  CollectingOutput out;
  runtime::OperatorMetrics metrics;
  testing::openOperator(op, out, metrics);
  for (const Step& s : kScript) apply(op, s);
  if (late != nullptr) *late = op.numLateRecordsDropped();
  EXPECT_EQ(op.numBufferedRows(true), 0u);
  EXPECT_EQ(op.numBufferedRows(false), 0u);
  return out.take();
}

const std::vector<std::string> kFullExpected = {
    "WM(5)", "+I[1, a, 0, 10, 10, a, 0, 10]", "+I[null, null, null, null, 11, b, 0, 10]", "WM(9)",
    "+I[2, a, 10, 20, 12, a, 10, 20]", "WM(19)", "+I[4, c, 20, 30, null, null, null, null]", "WM(30)"};

TEST(WindowJoinTest, InnerJoinsWhenTheWindowFires) {
  int64_t late = 0;
  EXPECT_EQ(run(FlinkJoinType::kInner, &late),
            (std::vector<std::string>{"WM(5)", "+I[1, a, 0, 10, 10, a, 0, 10]", "WM(9)",
                                      "+I[2, a, 10, 20, 12, a, 10, 20]", "WM(19)", "WM(30)"}));
  EXPECT_EQ(late, 1);
}

TEST(WindowJoinTest, OuterSidesArePaddedWhenTheWindowFires) {
  EXPECT_EQ(run(FlinkJoinType::kFull), kFullExpected);
  EXPECT_EQ(run(FlinkJoinType::kLeft),
            (std::vector<std::string>{"WM(5)", "+I[1, a, 0, 10, 10, a, 0, 10]", "WM(9)",
                                      "+I[2, a, 10, 20, 12, a, 10, 20]", "WM(19)",
                                      "+I[4, c, 20, 30, null, null, null, null]", "WM(30)"}));
  EXPECT_EQ(run(FlinkJoinType::kRight),
            (std::vector<std::string>{"WM(5)", "+I[1, a, 0, 10, 10, a, 0, 10]",
                                      "+I[null, null, null, null, 11, b, 0, 10]", "WM(9)",
                                      "+I[2, a, 10, 20, 12, a, 10, 20]", "WM(19)", "WM(30)"}));
}

TEST(WindowJoinTest, SemiAndAntiKeepTheLeftRows) {
  EXPECT_EQ(run(FlinkJoinType::kSemi),
            (std::vector<std::string>{"WM(5)", "+I[1, a, 0, 10]", "WM(9)", "+I[2, a, 10, 20]", "WM(19)", "WM(30)"}));
  EXPECT_EQ(run(FlinkJoinType::kAnti),
            (std::vector<std::string>{"WM(5)", "WM(9)", "WM(19)", "+I[4, c, 20, 30]", "WM(30)"}));
}

TEST(WindowJoinTest, NullKeysMatchNothing) {
  WindowJoinOperator op(kLeft, kRight, spec(FlinkJoinType::kFull), 3, 3);
  CollectingOutput out;
  runtime::OperatorMetrics metrics;
  testing::openOperator(op, out, metrics);
  op.processBatch(makeBatch(kLeft, {ins({int64_t{5}, testing::kNull, int64_t{0}, int64_t{10}})}));
  op.processBatch2(makeBatch(kRight, {ins({int64_t{13}, testing::kNull, int64_t{0}, int64_t{10}})}));
  op.processWatermark(runtime::Watermark{9});
  EXPECT_EQ(out.take(), (std::vector<std::string>{"+I[5, null, 0, 10, null, null, null, null]",
                                                  "+I[null, null, null, null, 13, null, 0, 10]", "WM(9)"}));
}

TEST(WindowJoinTest, RefusesUpdates) {
  WindowJoinOperator op(kLeft, kRight, spec(FlinkJoinType::kInner), 3, 3);
  CollectingOutput out;
  runtime::OperatorMetrics metrics;
  testing::openOperator(op, out, metrics);
  EXPECT_THROW(op.processBatch(makeBatch(kLeft, {{types::RowKind::kDelete,
                                                  {int64_t{1}, std::string("a"), int64_t{0}, int64_t{10}}}})),
               UserError);
}

class WindowJoinStateTest : public ::testing::TestWithParam<runtime::state::StateBackendType> {
 protected:
  std::unique_ptr<runtime::state::StreamOperatorStateContext> context(
      const runtime::checkpoint::OperatorSubtaskState* restored) const {
    runtime::state::StateBackendOptions o;
    o.type = GetParam();
    o.local_directory = ::testing::TempDir();
    o.instance_name = "WindowJoinStateTest";
    return std::make_unique<runtime::state::StreamOperatorStateContext>(
        "op", testing::subtaskRange(1, 0), testing::kMaxParallelism, restored, o);
  }
};

TEST_P(WindowJoinStateTest, RestoreAfterEveryStepContinuesTheOutput) {
  for (size_t split = 0; split <= kScript.size(); ++split) {
    SCOPED_TRACE("split after step " + std::to_string(split));
    CollectingOutput out;
    runtime::OperatorMetrics metrics;
    auto state1 = context(nullptr);
    auto first = std::make_unique<WindowJoinOperator>(kLeft, kRight, spec(FlinkJoinType::kFull), 3, 3);
    testing::openWithState(*first, out, metrics, *state1);
    for (size_t i = 0; i < split; ++i) apply(*first, kScript[i]);
    const runtime::checkpoint::OperatorSubtaskState snap = testing::takeSnapshot(*first, *state1);
    first.reset();
    state1.reset();
    auto state2 = context(&snap);
    WindowJoinOperator second(kLeft, kRight, spec(FlinkJoinType::kFull), 3, 3);
    testing::openWithState(second, out, metrics, *state2);
    for (size_t i = split; i < kScript.size(); ++i) apply(second, kScript[i]);
    EXPECT_EQ(out.take(), kFullExpected);
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, WindowJoinStateTest,
                         ::testing::Values(runtime::state::StateBackendType::kHashMap,
                                           runtime::state::StateBackendType::kRocksDB),
                         [](const auto& info) {
                           return std::string(info.param == runtime::state::StateBackendType::kRocksDB ? "RocksDB"
                                                                                                       : "HashMap");
                         });

}  // namespace
}  // namespace sluice::table
