// StreamingJoinOperator driven by hand: the changelogs of INNER / LEFT / RIGHT / FULL joins worked out
// from Flink's StreamingJoinOperator.processElement (see the comments per row), the three state shapes
// of JoinRecordStateViews, and snapshots at every row boundary restored on both state backends, also
// into two subtasks.

#include "table/runtime/streaming_join.h"

#include <algorithm>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/error.h"
#include "common/hash.h"
#include "runtime/network/record_writer.h"
#include "state_test_util.h"

namespace sluice::table {
namespace {

using ::testing::ElementsAreArray;
using testing::CollectingOutput;
using testing::del;
using testing::InputRow;
using testing::ins;
using testing::kNull;
using testing::makeBatch;
using testing::ua;
using testing::ub;
using types::LogicalType;
using types::RowType;

struct SideRow {
  bool left;
  InputRow row;
};
SideRow L(InputRow r) { return {true, std::move(r)}; }
SideRow R(InputRow r) { return {false, std::move(r)}; }

/// A join of `left` and `right` on left column lk = right column rk.
struct JoinCase {
  RowType left;
  RowType right;
  JoinSpec spec;
};

void feed(StreamingJoinOperator& op, const JoinCase& c, const std::vector<SideRow>& rows, size_t from, size_t to) {
  for (size_t i = from; i < to; ++i) {
    if (rows[i].left) op.processBatch(makeBatch(c.left, {rows[i].row}));
    else op.processBatch2(makeBatch(c.right, {rows[i].row}));
  }
}

std::vector<std::string> run(const JoinCase& c, const std::vector<SideRow>& rows) {
  CollectingOutput out;
  runtime::OperatorMetrics metrics;
  StreamingJoinOperator op(c.left, c.right, c.spec);
  testing::openOperator(op, out, metrics);
  feed(op, c, rows, 0, rows.size());
  return out.take();
}

RowType idValue(const char* v, LogicalType t) {
  return RowType{{"id", v}, {LogicalType::bigint(), t}};
}

JoinCase simpleCase(FlinkJoinType type) {
  JoinCase c{idValue("v", LogicalType::bigint()), idValue("w", LogicalType::bigint()), {}};
  c.spec.type = type;
  c.spec.left_keys = {0};
  c.spec.right_keys = {0};
  return c;
}

TEST(StreamingJoinTest, InnerJoinOfDuplicatesOnBothSides) {
  // Neither side has a unique key: each keeps row -> count.
  const std::vector<SideRow> rows = {
      L(ins({int64_t{1}, int64_t{10}})),   // no right row: nothing
      R(ins({int64_t{1}, int64_t{100}})),  // matches the left row
      L(ins({int64_t{1}, int64_t{10}})),   // a second copy: matches the right row once
      R(ins({int64_t{2}, int64_t{200}})),  // no left row of key 2
      R(ins({int64_t{1}, int64_t{100}})),  // a second right copy: matches both left copies
      L(del({int64_t{1}, int64_t{10}})),   // one left copy goes: retracts its pairs with both right copies
  };
  EXPECT_THAT(run(simpleCase(FlinkJoinType::kInner), rows),
              ElementsAreArray({"+I[1, 10, 1, 100]", "+I[1, 10, 1, 100]", "+I[1, 10, 1, 100]", "+I[1, 10, 1, 100]",
                                "-D[1, 10, 1, 100]", "-D[1, 10, 1, 100]"}));
}

TEST(StreamingJoinTest, InnerJoinForwardsTheInputRowKinds) {
  JoinCase c = simpleCase(FlinkJoinType::kInner);
  c.left = idValue("v", LogicalType::string());
  c.right = idValue("w", LogicalType::string());
  c.spec.left_spec.unique_key = {0};  // the left key is the join key: one row per key (ValueState)
  c.spec.left_spec.join_key_contains_unique_key = true;
  const std::vector<SideRow> rows = {
      L(ins({int64_t{1}, "a"})), R(ins({int64_t{1}, "x"})),  // +I
      L(ub({int64_t{1}, "a"})),                              // -U of the pair
      L(ua({int64_t{1}, "b"})),                              // +U of the new pair
      R(del({int64_t{1}, "x"})),                             // -D
  };
  EXPECT_THAT(run(c, rows), ElementsAreArray({"+I[1, a, 1, x]", "-U[1, a, 1, x]", "+U[1, b, 1, x]", "-D[1, b, 1, x]"}));
}

TEST(StreamingJoinTest, LeftJoinPadsAndRetractsWithANonEquiCondition) {
  JoinCase c = simpleCase(FlinkJoinType::kLeft);
  // ON l.id = r.id AND l.v < r.w; the condition reads the joined row (v = $1, w = $3).
  c.spec.non_equi_condition = makeCall(ScalarOp::kLessThan, {makeInputRef(1, LogicalType::bigint()),
                                                             makeInputRef(3, LogicalType::bigint())});
  const std::vector<SideRow> rows = {
      // No right row: +I[l + nulls], stored with 0 associations.
      L(ins({int64_t{1}, int64_t{10}})),
      // 10 < 5 fails: no match, and the right side is inner: nothing.
      R(ins({int64_t{1}, int64_t{5}})),
      // 10 < 20: the left row had 0 associations: -D its padding, +I the pair; it has 1 now.
      R(ins({int64_t{1}, int64_t{20}})),
      // 30 < 5 and 30 < 20 fail: padded, 0 associations.
      L(ins({int64_t{1}, int64_t{30}})),
      // 40 matches [1,10] (1 association -> 2, no -D) and [1,30] (0 -> 1: -D its padding first); the left
      // rows come in the byte order of their stored form, [1,10] before [1,30].
      R(ins({int64_t{1}, int64_t{40}})),
      // Retracts [1,10,1,20]; [1,10] goes from 2 associations to 1: no padding.
      R(del({int64_t{1}, int64_t{20}})),
      // Retracts both pairs with 40; each left row had 1 association: +I its padding again.
      R(del({int64_t{1}, int64_t{40}})),
      // The outer row goes: it matches nothing (10 < 5 fails), so its padding is retracted.
      L(del({int64_t{1}, int64_t{10}})),
      // A NULL key matches nothing but the outer row is still padded, and retracted.
      L(ins({kNull, int64_t{7}})), R(ins({kNull, int64_t{8}})), L(del({kNull, int64_t{7}})),
  };
  EXPECT_THAT(run(c, rows), ElementsAreArray({
                                "+I[1, 10, null, null]",
                                "-D[1, 10, null, null]",
                                "+I[1, 10, 1, 20]",
                                "+I[1, 30, null, null]",
                                "+I[1, 10, 1, 40]",
                                "-D[1, 30, null, null]",
                                "+I[1, 30, 1, 40]",
                                "-D[1, 10, 1, 20]",
                                "-D[1, 10, 1, 40]",
                                "+I[1, 10, null, null]",
                                "-D[1, 30, 1, 40]",
                                "+I[1, 30, null, null]",
                                "-D[1, 10, null, null]",
                                "+I[null, 7, null, null]",
                                "-D[null, 7, null, null]",
                            }));
}

TEST(StreamingJoinTest, RightJoinMirrorsTheLeftJoin) {
  const std::vector<SideRow> rows = {
      R(ins({int64_t{1}, int64_t{100}})),  // padded
      L(ins({int64_t{1}, int64_t{10}})),   // the padding goes, the pair comes (+I: an outer join)
      L(del({int64_t{1}, int64_t{10}})),   // the pair goes (-D), the right row was matched once: padded again
  };
  EXPECT_THAT(run(simpleCase(FlinkJoinType::kRight), rows),
              ElementsAreArray({"+I[null, null, 1, 100]", "-D[null, null, 1, 100]", "+I[1, 10, 1, 100]",
                                "-D[1, 10, 1, 100]", "+I[null, null, 1, 100]"}));
}

// FULL JOIN l(id, v) with r(rid, id, w) on l.id = r.id: the left unique key is the join key (ValueState),
// the right one (rid) is not (MapState rid -> row).
JoinCase fullCase() {
  JoinCase c{RowType{{"id", "v"}, {LogicalType::bigint(), LogicalType::string()}},
             RowType{{"rid", "id", "w"}, {LogicalType::bigint(), LogicalType::bigint(), LogicalType::string()}},
             {}};
  c.spec.type = FlinkJoinType::kFull;
  c.spec.left_keys = {0};
  c.spec.right_keys = {1};
  c.spec.left_spec.unique_key = {0};
  c.spec.left_spec.join_key_contains_unique_key = true;
  c.spec.right_spec.unique_key = {0};
  return c;
}

const std::vector<SideRow> kFullRows = {
    L(ins({int64_t{1}, "a"})),               // padded
    R(ins({int64_t{10}, int64_t{1}, "x"})),  // l had 0 associations: -D its padding; +I the pair
    R(ins({int64_t{11}, int64_t{1}, "y"})),  // l 1 -> 2 associations; +I the pair
    R(ub({int64_t{10}, int64_t{1}, "x"})),   // -D the pair (outer input: -D, not -U); l 2 -> 1
    R(ua({int64_t{10}, int64_t{1}, "z"})),   // rid 10 is gone: an additional match, l 1 -> 2; +I the pair
    // l retracts: -D each pair (rid 10 before 11); each right row had 1 association: +I its padding.
    L(ub({int64_t{1}, "a"})),
    // The new l: each right row had 0 associations: -D its padding, +I the pair.
    L(ua({int64_t{1}, "b"})),
    R(del({int64_t{11}, int64_t{1}, "y"})),  // -D the pair; l 2 -> 1 associations, no padding
    L(ins({int64_t{2}, "c"})),               // no right row of key 2: padded
    R(ins({int64_t{12}, kNull, "n"})),       // a NULL key: padded
};

const std::vector<std::string> kFullExpected = {
    "+I[1, a, null, null, null]",
    "-D[1, a, null, null, null]",
    "+I[1, a, 10, 1, x]",
    "+I[1, a, 11, 1, y]",
    "-D[1, a, 10, 1, x]",
    "+I[1, a, 10, 1, z]",
    "-D[1, a, 10, 1, z]",
    "+I[null, null, 10, 1, z]",
    "-D[1, a, 11, 1, y]",
    "+I[null, null, 11, 1, y]",
    "-D[null, null, 10, 1, z]",
    "+I[1, b, 10, 1, z]",
    "-D[null, null, 11, 1, y]",
    "+I[1, b, 11, 1, y]",
    "-D[1, b, 11, 1, y]",
    "+I[2, c, null, null, null]",
    "+I[null, null, 12, null, n]",
};

TEST(StreamingJoinTest, FullJoinOverUpdatingInputsWithUniqueKeys) {
  EXPECT_THAT(run(fullCase(), kFullRows), ElementsAreArray(kFullExpected));
}

TEST(StreamingJoinTest, ReplacingARowOfAUniqueKeyIsNoAdditionalMatch) {
  // Flink's isAdditionalMatch: a +U for a unique key still stored (no -U before it) replaces the row and
  // leaves the outer side's count of associations as it is, so one retraction pads it again.
  JoinCase c = fullCase();
  c.spec.type = FlinkJoinType::kLeft;
  const std::vector<SideRow> rows = {
      L(ins({int64_t{1}, "a"})),               // padded
      R(ins({int64_t{10}, int64_t{1}, "x"})),  // -D padding, +I pair; l has 1 association
      R(ua({int64_t{10}, int64_t{1}, "y"})),   // replaces rid 10: +I the pair, l keeps 1 association
      R(del({int64_t{10}, int64_t{1}, "y"})),  // -D the pair; l had 1: padded again
  };
  EXPECT_THAT(run(c, rows), ElementsAreArray({"+I[1, a, null, null, null]", "-D[1, a, null, null, null]",
                                              "+I[1, a, 10, 1, x]", "+I[1, a, 10, 1, y]", "-D[1, a, 10, 1, y]",
                                              "+I[1, a, null, null, null]"}));
}

// Semi and anti joins (StreamingSemiAntiJoinOperator) of the same rows: the left rows, by their count of
// matches (no unique keys: the left side keeps row -> count, associations).
const std::vector<SideRow> kSemiAntiRows = {
    L(ins({int64_t{1}, int64_t{10}})),   // no match: anti lets it pass; 0 associations
    R(ins({int64_t{1}, int64_t{100}})),  // [1,10]'s first match: semi +I (the right row's kind), anti -D
    R(ins({int64_t{1}, int64_t{200}})),  // a second match: nothing
    L(ins({int64_t{1}, int64_t{20}})),   // two matches: semi lets it pass; 2 associations
    R(del({int64_t{1}, int64_t{100}})),  // both left rows keep one match: nothing
    R(del({int64_t{1}, int64_t{200}})),  // both lose their last match: semi -D (the right row's kind), anti +I
    L(del({int64_t{1}, int64_t{10}})),   // no match: anti retracts it, semi had retracted it already
};

TEST(StreamingJoinTest, SemiJoinPassesLeftRowsWithAMatch) {
  EXPECT_THAT(run(simpleCase(FlinkJoinType::kSemi), kSemiAntiRows),
              ElementsAreArray({"+I[1, 10]", "+I[1, 20]", "-D[1, 10]", "-D[1, 20]"}));
}

TEST(StreamingJoinTest, AntiJoinPassesLeftRowsWithoutAMatch) {
  EXPECT_THAT(run(simpleCase(FlinkJoinType::kAnti), kSemiAntiRows),
              ElementsAreArray({"+I[1, 10]", "-D[1, 10]", "+I[1, 10]", "+I[1, 20]", "-D[1, 10]"}));
}

TEST(StreamingJoinTest, RejectsAJoinWithoutKeys) {
  JoinCase c = simpleCase(FlinkJoinType::kInner);
  c.spec.left_keys.clear();
  c.spec.right_keys.clear();
  EXPECT_THROW(StreamingJoinOperator(c.left, c.right, c.spec), UserError);
}

class StreamingJoinStateTest : public ::testing::TestWithParam<runtime::state::StateBackendType> {
 protected:
  runtime::state::StateBackendOptions opts() const {
    runtime::state::StateBackendOptions o;
    o.type = GetParam();
    o.local_directory = ::testing::TempDir();
    o.instance_name = "StreamingJoinStateTest";
    return o;
  }
  std::unique_ptr<runtime::state::StreamOperatorStateContext> context(
      const runtime::checkpoint::OperatorSubtaskState* restored, int parallelism = 1, int index = 0) const {
    return std::make_unique<runtime::state::StreamOperatorStateContext>(
        "op", testing::subtaskRange(parallelism, index), testing::kMaxParallelism, restored, opts());
  }
};

TEST_P(StreamingJoinStateTest, RestoreAtEveryRowBoundaryContinuesTheChangelog) {
  const JoinCase c = fullCase();
  for (size_t split = 0; split <= kFullRows.size(); ++split) {
    SCOPED_TRACE("split after row " + std::to_string(split));
    CollectingOutput out;
    runtime::OperatorMetrics metrics;
    auto state1 = context(nullptr);
    auto first = std::make_unique<StreamingJoinOperator>(c.left, c.right, c.spec);
    testing::openWithState(*first, out, metrics, *state1);
    feed(*first, c, kFullRows, 0, split);
    const runtime::checkpoint::OperatorSubtaskState snap = testing::takeSnapshot(*first, *state1);
    first.reset();
    state1.reset();
    auto state2 = context(&snap);
    StreamingJoinOperator second(c.left, c.right, c.spec);
    testing::openWithState(second, out, metrics, *state2);
    feed(second, c, kFullRows, split, kFullRows.size());
    EXPECT_THAT(out.take(), ElementsAreArray(kFullExpected));
  }
}

TEST_P(StreamingJoinStateTest, RescalesToTwoSubtasks) {
  // Half the rows at parallelism 1, the rest at 2, each row fed to the subtask owning its key group (as
  // the HASH exchanges would): the changelog of each key stays in order, so the whole is the same multiset.
  const JoinCase c = fullCase();
  const size_t split = 6;
  CollectingOutput out;
  runtime::OperatorMetrics metrics;
  auto state1 = context(nullptr);
  auto first = std::make_unique<StreamingJoinOperator>(c.left, c.right, c.spec);
  testing::openWithState(*first, out, metrics, *state1);
  feed(*first, c, kFullRows, 0, split);
  const runtime::checkpoint::OperatorSubtaskState snap = testing::takeSnapshot(*first, *state1);
  first.reset();
  state1.reset();
  std::vector<std::unique_ptr<runtime::state::StreamOperatorStateContext>> states;
  std::vector<std::unique_ptr<StreamingJoinOperator>> ops;
  std::vector<runtime::checkpoint::OperatorSubtaskState> parts;
  for (int i = 0; i < 2; ++i) parts.push_back(testing::rescaled({&snap}, 2, i));
  for (int i = 0; i < 2; ++i) {
    states.push_back(context(&parts[static_cast<size_t>(i)], 2, i));
    ops.push_back(std::make_unique<StreamingJoinOperator>(c.left, c.right, c.spec));
    testing::openWithState(*ops.back(), out, metrics, *states.back(), 2, i);
  }
  for (size_t i = split; i < kFullRows.size(); ++i) {
    const SideRow& r = kFullRows[i];
    types::RowBatch b = makeBatch(r.left ? c.left : c.right, {r.row});
    const int key_col = r.left ? c.spec.left_keys[0] : c.spec.right_keys[0];
    const int32_t group = assignToKeyGroup(runtime::hashKey(b, 0, {key_col}), testing::kMaxParallelism);
    const size_t owner = testing::subtaskRange(2, 0).contains(group) ? 0 : 1;
    if (r.left) ops[owner]->processBatch(std::move(b));
    else ops[owner]->processBatch2(std::move(b));
  }
  std::vector<std::string> got = out.take();
  std::vector<std::string> want = kFullExpected;
  std::sort(got.begin(), got.end());
  std::sort(want.begin(), want.end());
  EXPECT_EQ(got, want);
}

INSTANTIATE_TEST_SUITE_P(Backends, StreamingJoinStateTest,
                         ::testing::Values(runtime::state::StateBackendType::kHashMap,
                                           runtime::state::StateBackendType::kRocksDB),
                         [](const auto& info) {
                           return std::string(info.param == runtime::state::StateBackendType::kRocksDB ? "RocksDB"
                                                                                                       : "HashMap");
                         });

}  // namespace
}  // namespace sluice::table
