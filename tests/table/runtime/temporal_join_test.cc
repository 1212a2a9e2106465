// TemporalRowTimeJoinOperator driven by hand: versions chosen by the left row's time, emission when the
// watermark passes, cleanup of old versions (the latest one kept), late left rows, -U / -D on the versioned
// side, and a snapshot after every step restored on both state backends. Expected rows worked out by hand.

#include "table/runtime/temporal_join.h"

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

// left (id, k, t), right (k, v, t); t in ms.
const RowType kLeft{{"id", "k", "t"}, {LogicalType::integer(), LogicalType::string(), LogicalType::timestamp(3)}};
const RowType kRight{{"k", "v", "t"}, {LogicalType::string(), LogicalType::integer(), LogicalType::timestamp(3)}};

TemporalJoinSpec spec(FlinkJoinType type) {
  TemporalJoinSpec s;
  s.type = type;
  s.left_keys = {1};
  s.right_keys = {0};
  s.left_time = 2;
  s.right_time = 2;
  return s;
}

testing::InputRow l(int64_t id, int64_t t) { return ins({id, std::string("a"), t}); }
testing::InputRow r(int64_t v, int64_t t) { return ins({std::string("a"), v, t}); }

/// One step of a scripted run: a left row, a right row or a watermark.
struct Step {
  char what;  // 'l', 'r', 'w'
  testing::InputRow row;
  int64_t watermark = 0;
};

void apply(TemporalRowTimeJoinOperator& op, const Step& s) {
  if (s.what == 'l') op.processBatch(makeBatch(kLeft, {s.row}));
  else if (s.what == 'r') op.processBatch2(makeBatch(kRight, {s.row}));
  else op.processWatermark(runtime::Watermark{s.watermark});
}

Step L(int64_t id, int64_t t) { return {'l', l(id, t)}; }
Step R(int64_t v, int64_t t) { return {'r', r(v, t)}; }
Step W(int64_t w) { return {'w', {}, w}; }

// Versions 10 @1, 20 @5, 30 @9. Left rows: 1 @0 (before any version), 2 @5, 3 @7 before the first watermark;
// WM(6) emits rows 1 and 2 and removes version @1 (version @5 is valid at 6); WM(7) emits row 3 (@5 -> 20);
// a late row 4 @2 then joins nothing (its version @1 is gone): LEFT pads it at WM(8); row 5 @9 meets 30 at
// WM(20), which keeps version @9 only.
const std::vector<Step> kScript = {R(10, 1), R(20, 5), R(30, 9), L(1, 0), L(2, 5), L(3, 7), W(6),
                                   W(7),     L(4, 2),  W(8),     L(5, 9), W(20)};
const std::vector<std::string> kLeftExpected = {
    "+I[1, a, 0, null, null, null]", "+I[2, a, 5, a, 20, 5]", "WM(6)", "+I[3, a, 7, a, 20, 5]", "WM(7)",
    "+I[4, a, 2, null, null, null]", "WM(8)", "+I[5, a, 9, a, 30, 9]", "WM(20)"};

TEST(TemporalJoinTest, VersionsByTimeCleanupAndLateRows) {
  TemporalRowTimeJoinOperator op(kLeft, kRight, spec(FlinkJoinType::kLeft));
  CollectingOutput out;
  runtime::OperatorMetrics metrics;
  testing::openOperator(op, out, metrics);
  for (size_t i = 0; i < 6; ++i) apply(op, kScript[i]);
  EXPECT_EQ(op.numVersions(), 3u);
  EXPECT_EQ(op.numLeftRows(), 3u);
  apply(op, kScript[6]);  // WM(6): version @1 is no longer needed
  EXPECT_EQ(op.numVersions(), 2u);
  EXPECT_EQ(op.numLeftRows(), 1u);
  for (size_t i = 7; i < kScript.size(); ++i) apply(op, kScript[i]);
  EXPECT_EQ(out.take(), kLeftExpected);
  EXPECT_EQ(op.numVersions(), 1u);  // the latest version stays past the watermark
  EXPECT_EQ(op.numLeftRows(), 0u);
}

TEST(TemporalJoinTest, InnerJoinDropsUnmatchedRows) {
  TemporalRowTimeJoinOperator op(kLeft, kRight, spec(FlinkJoinType::kInner));
  CollectingOutput out;
  runtime::OperatorMetrics metrics;
  testing::openOperator(op, out, metrics);
  for (const Step& s : kScript) apply(op, s);
  EXPECT_EQ(out.take(), (std::vector<std::string>{"+I[2, a, 5, a, 20, 5]", "WM(6)", "+I[3, a, 7, a, 20, 5]", "WM(7)",
                                                  "WM(8)", "+I[5, a, 9, a, 30, 9]", "WM(20)"}));
}

TEST(TemporalJoinTest, DeletedVersionsAndUpdateBefore) {
  TemporalRowTimeJoinOperator op(kLeft, kRight, spec(FlinkJoinType::kLeft));
  CollectingOutput out;
  runtime::OperatorMetrics metrics;
  testing::openOperator(op, out, metrics);
  // +I 10 @1, -U (dropped) then +U 20 @4, -D @6; a later row at the same time replaces a version.
  op.processBatch2(makeBatch(kRight, {r(10, 1), {types::RowKind::kUpdateBefore, {std::string("a"), int64_t{10}, int64_t{4}}},
                                      {types::RowKind::kUpdateAfter, {std::string("a"), int64_t{20}, int64_t{4}}},
                                      {types::RowKind::kDelete, {std::string("a"), int64_t{20}, int64_t{6}}},
                                      r(40, 8), r(41, 8)}));
  op.processBatch(makeBatch(kLeft, {l(1, 3), l(2, 5), l(3, 7), l(4, 9)}));
  op.processWatermark(runtime::Watermark{10});
  EXPECT_EQ(out.take(), (std::vector<std::string>{"+I[1, a, 3, a, 10, 1]", "+I[2, a, 5, a, 20, 4]",
                                                  "+I[3, a, 7, null, null, null]", "+I[4, a, 9, a, 41, 8]", "WM(10)"}));
}

TEST(TemporalJoinTest, RefusesOtherJoinTypes) {
  EXPECT_THROW(TemporalRowTimeJoinOperator(kLeft, kRight, spec(FlinkJoinType::kRight)), UserError);
}

class TemporalJoinStateTest : public ::testing::TestWithParam<runtime::state::StateBackendType> {
 protected:
  std::unique_ptr<runtime::state::StreamOperatorStateContext> context(
      const runtime::checkpoint::OperatorSubtaskState* restored) const {
    runtime::state::StateBackendOptions o;
    o.type = GetParam();
    o.local_directory = ::testing::TempDir();
    o.instance_name = "TemporalJoinStateTest";
    return std::make_unique<runtime::state::StreamOperatorStateContext>(
        "op", testing::subtaskRange(1, 0), testing::kMaxParallelism, restored, o);
  }
};

TEST_P(TemporalJoinStateTest, RestoreAfterEveryStepContinuesTheOutput) {
  for (size_t split = 0; split <= kScript.size(); ++split) {
    SCOPED_TRACE("split after step " + std::to_string(split));
    CollectingOutput out;
    runtime::OperatorMetrics metrics;
    auto state1 = context(nullptr);
    auto first = std::make_unique<TemporalRowTimeJoinOperator>(kLeft, kRight, spec(FlinkJoinType::kLeft));
    testing::openWithState(*first, out, metrics, *state1);
    for (size_t i = 0; i < split; ++i) apply(*first, kScript[i]);
    const runtime::checkpoint::OperatorSubtaskState snap = testing::takeSnapshot(*first, *state1);
    first.reset();
    state1.reset();
    auto state2 = context(&snap);
    TemporalRowTimeJoinOperator second(kLeft, kRight, spec(FlinkJoinType::kLeft));
    testing::openWithState(second, out, metrics, *state2);
    for (size_t i = split; i < kScript.size(); ++i) apply(second, kScript[i]);
    EXPECT_EQ(out.take(), kLeftExpected);
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, TemporalJoinStateTest,
                         ::testing::Values(runtime::state::StateBackendType::kHashMap,
                                           runtime::state::StateBackendType::kRocksDB),
                         [](const auto& info) {
                           return std::string(info.param == runtime::state::StateBackendType::kRocksDB ? "RocksDB"
                                                                                                       : "HashMap");
                         });

}  // namespace
}  // namespace sluice::table
