// GroupAggregateOperator over the state layer: a snapshot at every row boundary restores into a fresh
// operator that continues the changelog exactly, a snapshot restores at parallelism 2 with each subtask
// continuing its keys, and keyed state sits in the key groups the HASH exchange routes rows by.
// Expected changelogs are worked out by hand from GroupAggFunction's rules.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "common/error.h"
#include "common/hash.h"
#include "runtime/network/record_writer.h"
#include "state_test_util.h"
#include "table/runtime/group_aggregate.h"

namespace sluice::table {
namespace {

using ::testing::ElementsAre;
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

// Input: k STRING, v INT, d DOUBLE, s STRING.
RowType inputType() {
  return RowType{{"k", "v", "d", "s"},
                 {LogicalType::string(), LogicalType::integer(), LogicalType::doubleType(), LogicalType::string()}};
}

AggregateCall call(AggKind kind, int arg, bool distinct = false) {
  AggregateCall c;
  c.kind = kind;
  c.arg_index = arg;
  c.distinct = distinct;
  return c;
}

// COUNT(*), SUM(v), COUNT(DISTINCT v), MIN(s), MAX(d): the record count, plain slots, a distinct view and
// the value multisets of MIN/MAX with retraction (strings and doubles) all live in "accState".
std::vector<AggregateCall> allKinds() {
  return {call(AggKind::kCountStar, -1), call(AggKind::kSum, 1), call(AggKind::kCount, 1, true),
          call(AggKind::kMin, 3), call(AggKind::kMax, 2)};
}

const std::vector<InputRow> kInput = {
    ins({"a", 1, 2.5, "m"}),   ins({"b", 5, 1.0, "x"}), ins({"a", 1, -1.0, "c"}),
    del({"a", 1, 2.5, "m"}),   ins({"a", 3, kNull, "k"}), del({"b", 5, 1.0, "x"}),
    ins({"b", 7, 0.5, "y"}),   ub({"a", 1, -1.0, "c"}),  ua({"a", 4, 6.0, "c"}),
};

// The uninterrupted changelog, per input row (columns k, COUNT(*), SUM(v), COUNT(DISTINCT v), MIN(s), MAX(d)).
const std::vector<std::string> kExpected = {
    // 1: a = {r1}
    "+I[a, 1, 1, 1, m, 2.5]",
    // 2: b = {r2}
    "+I[b, 1, 5, 1, x, 1.0]",
    // 3: a = {r1, r3}: v {1, 1} -> one distinct value; MIN(m, c) = c; MAX(2.5, -1.0) = 2.5
    "-U[a, 1, 1, 1, m, 2.5]", "+U[a, 2, 2, 1, c, 2.5]",
    // 4: r1 retracted: a = {r3}: MAX falls back to -1.0
    "-U[a, 2, 2, 1, c, 2.5]", "+U[a, 1, 1, 1, c, -1.0]",
    // 5: a = {r3, r5}: sum 4, distinct {1, 3}; MIN(c, k) = c; d of r5 is NULL
    "-U[a, 1, 1, 1, c, -1.0]", "+U[a, 2, 4, 2, c, -1.0]",
    // 6: b's only row retracted: record count 0 -> -D, state dropped
    "-D[b, 1, 5, 1, x, 1.0]",
    // 7: b starts over
    "+I[b, 1, 7, 1, y, 0.5]",
    // 8: r3 retracted: a = {r5}: sum 3, distinct {3}, MIN k, no non-NULL d left -> MAX NULL
    "-U[a, 2, 4, 2, c, -1.0]", "+U[a, 1, 3, 1, k, null]",
    // 9: a = {r5, r9}: sum 7, distinct {3, 4}, MIN(k, c) = c, MAX 6.0
    "-U[a, 1, 3, 1, k, null]", "+U[a, 2, 7, 2, c, 6.0]",
};

void feedRows(GroupAggregateOperator& op, const std::vector<InputRow>& rows, size_t from, size_t to) {
  for (size_t i = from; i < to; ++i) op.processBatch(makeBatch(inputType(), {rows[i]}));
}

TEST(GroupAggStateTest, UninterruptedRunMatchesTheHandWrittenChangelog) {
  CollectingOutput out;
  runtime::OperatorMetrics metrics;
  GroupAggregateOperator op(inputType(), {0}, allKinds());
  testing::openOperator(op, out, metrics);
  feedRows(op, kInput, 0, kInput.size());
  EXPECT_THAT(out.take(), ElementsAreArray(kExpected));
}

TEST(GroupAggStateTest, RestoreAtEveryRowBoundaryContinuesTheChangelog) {
  for (size_t split = 0; split <= kInput.size(); ++split) {
    SCOPED_TRACE("split after row " + std::to_string(split));
    CollectingOutput out;
    runtime::OperatorMetrics metrics;
    auto state1 = testing::makeStateContext(nullptr);
    auto first = std::make_unique<GroupAggregateOperator>(inputType(), std::vector<int>{0}, allKinds());
    testing::openWithState(*first, out, metrics, *state1);
    feedRows(*first, kInput, 0, split);
    const runtime::checkpoint::OperatorSubtaskState snap = testing::takeSnapshot(*first, *state1);
    // The failed task's operator and backends are gone; only the snapshot survives.
    first.reset();
    state1.reset();

    auto state2 = testing::makeStateContext(&snap);
    ASSERT_TRUE(state2->isRestored());
    GroupAggregateOperator second(inputType(), {0}, allKinds());
    testing::openWithState(second, out, metrics, *state2);
    feedRows(second, kInput, split, kInput.size());
    EXPECT_THAT(out.take(), ElementsAreArray(kExpected));
  }
}

// The rows a changelog leaves: +I/+U add a row, -U/-D remove one (which must be there).
std::multiset<std::string> materialize(const std::vector<std::string>& changelog) {
  std::multiset<std::string> rows;
  for (const std::string& c : changelog) {
    std::string row = c.substr(2);
    if (c[0] == '+') {
      rows.insert(row);
    } else {
      auto it = rows.find(row);
      EXPECT_NE(it, rows.end()) << "retracts an absent row: " << c;
      if (it != rows.end()) rows.erase(it);
    }
  }
  return rows;
}

TEST(GroupAggStateTest, MiniBatchBundlesEachKeysRowsAndFlushesBeforeEverySnapshot) {
  const MiniBatchSpec mb{100, 0};
  {
    // One bundle, finished at the end of the input: per key the net change from no state. a: r1, r3, -r1,
    // r5, -r3, r9 -> {r5, r9}; b: r2, -r2, r7 -> {r7}; keys in the order they first came.
    CollectingOutput out;
    runtime::OperatorMetrics metrics;
    GroupAggregateOperator op(inputType(), {0}, allKinds(), true, mb);
    testing::openOperator(op, out, metrics);
    feedRows(op, kInput, 0, kInput.size());
    EXPECT_TRUE(out.take().empty());
    op.endInput();
    EXPECT_THAT(out.take(), ElementsAre("+I[a, 2, 7, 2, c, 6.0]", "+I[b, 1, 7, 1, y, 0.5]"));
  }
  const std::multiset<std::string> final_rows = materialize(kExpected);
  for (size_t split = 0; split <= kInput.size(); ++split) {
    SCOPED_TRACE("split after row " + std::to_string(split));
    CollectingOutput out;
    runtime::OperatorMetrics metrics;
    auto state1 = testing::makeStateContext(nullptr);
    auto first = std::make_unique<GroupAggregateOperator>(inputType(), std::vector<int>{0}, allKinds(), true, mb);
    testing::openWithState(*first, out, metrics, *state1);
    feedRows(*first, kInput, 0, split);
    // The barrier finishes the bundle: the snapshot holds every row before it.
    const runtime::checkpoint::OperatorSubtaskState snap = testing::takeSnapshot(*first, *state1);
    first.reset();
    state1.reset();
    auto state2 = testing::makeStateContext(&snap);
    GroupAggregateOperator second(inputType(), {0}, allKinds(), true, mb);
    testing::openWithState(second, out, metrics, *state2);
    feedRows(second, kInput, split, kInput.size());
    second.endInput();
    EXPECT_EQ(materialize(out.take()), final_rows);
  }
}

TEST(GroupAggStateTest, KeyedStateLivesInTheKeyGroupsOfTheExchangeHash) {
  CollectingOutput out;
  runtime::OperatorMetrics metrics;
  auto state = testing::makeStateContext(nullptr);
  GroupAggregateOperator op(inputType(), {0}, {call(AggKind::kCountStar, -1)});
  testing::openWithState(op, out, metrics, *state);
  const types::RowBatch batch = makeBatch(inputType(), {ins({"a", 1, kNull, "s"}), ins({"b", 1, kNull, "s"})});
  op.processBatch(types::RowBatch(batch));
  std::set<int32_t> expected;
  for (size_t r = 0; r < batch.numRows(); ++r) {
    expected.insert(assignToKeyGroup(runtime::hashKey(batch, r, {0}), testing::kMaxParallelism));
  }
  std::set<int32_t> groups;
  for (const auto& [g, blob] : state->snapshot().keyed) groups.insert(g);
  EXPECT_EQ(groups, expected);

  // A global aggregate has one key; its group is that of a hash over zero key columns.
  auto global_state = testing::makeStateContext(nullptr);
  GroupAggregateOperator global(inputType(), {}, {call(AggKind::kCountStar, -1)});
  testing::openWithState(global, out, metrics, *global_state);
  global.processBatch(types::RowBatch(batch));
  groups.clear();
  for (const auto& [g, blob] : global_state->snapshot().keyed) groups.insert(g);
  EXPECT_EQ(groups, std::set<int32_t>{assignToKeyGroup(runtime::hashKey(batch, 0, {}), testing::kMaxParallelism)});
  EXPECT_EQ(global.numKeys(), 1u);
}

TEST(GroupAggStateTest, GlobalAggregateRestoresAtEveryRowBoundary) {
  // SUM(v) and MAX(d) over all rows: +I, then -U/+U per change.
  const std::vector<InputRow> rows = {ins({"a", 2, 1.0, "s"}), ins({"b", 3, 4.0, "s"}), del({"a", 2, 1.0, "s"})};
  const std::vector<std::string> expected = {"+I[2, 1.0]", "-U[2, 1.0]", "+U[5, 4.0]", "-U[5, 4.0]", "+U[3, 4.0]"};
  const std::vector<AggregateCall> calls = {call(AggKind::kSum, 1), call(AggKind::kMax, 2)};
  for (size_t split = 0; split <= rows.size(); ++split) {
    SCOPED_TRACE("split after row " + std::to_string(split));
    CollectingOutput out;
    runtime::OperatorMetrics metrics;
    auto state1 = testing::makeStateContext(nullptr);
    GroupAggregateOperator first(inputType(), {}, calls);
    testing::openWithState(first, out, metrics, *state1);
    feedRows(first, rows, 0, split);
    const auto snap = testing::takeSnapshot(first, *state1);
    auto state2 = testing::makeStateContext(&snap);
    GroupAggregateOperator second(inputType(), {}, calls);
    testing::openWithState(second, out, metrics, *state2);
    feedRows(second, rows, split, rows.size());
    EXPECT_THAT(out.take(), ElementsAreArray(expected));
  }
}

TEST(GroupAggStateTest, RescaleFromOneToTwoSubtasksEachContinuesItsKeys) {
  const std::vector<AggregateCall> calls = {call(AggKind::kCountStar, -1), call(AggKind::kSum, 1)};
  constexpr int kKeys = 20;
  auto key = [](int i) { return "k" + std::to_string(i); };

  // Phase 1 at parallelism 1: one row per key ki with v = i.
  CollectingOutput out1;
  runtime::OperatorMetrics metrics;
  auto old_state = testing::makeStateContext(nullptr);
  GroupAggregateOperator old_op(inputType(), {0}, calls);
  testing::openWithState(old_op, out1, metrics, *old_state);
  std::vector<InputRow> phase1;
  for (int i = 0; i < kKeys; ++i) phase1.push_back(ins({key(i), int64_t{i}, kNull, "s"}));
  old_op.processBatch(makeBatch(inputType(), phase1));
  ASSERT_EQ(out1.take().size(), static_cast<size_t>(kKeys));
  const auto snap = testing::takeSnapshot(old_op, *old_state);

  // Restore into two subtasks, each with the key groups of its range.
  CollectingOutput outs[2];
  std::unique_ptr<runtime::state::StreamOperatorStateContext> states[2];
  std::unique_ptr<GroupAggregateOperator> ops[2];
  runtime::checkpoint::OperatorSubtaskState parts[2];
  for (int i = 0; i < 2; ++i) {
    parts[i] = testing::rescaled({&snap}, 2, i);
    states[i] = testing::makeStateContext(&parts[i], 2, i);
    ops[i] = std::make_unique<GroupAggregateOperator>(inputType(), std::vector<int>{0}, calls);
    testing::openWithState(*ops[i], outs[i], metrics, *states[i], 2, i);
  }

  // Phase 2: per key another row with v = 10, and k0's first row retracted; routed as the HASH exchange
  // routes them (key group of the key hash, then the subtask owning it).
  std::vector<InputRow> phase2;
  for (int i = 0; i < kKeys; ++i) phase2.push_back(ins({key(i), int64_t{10}, kNull, "s"}));
  phase2.push_back(del({key(0), int64_t{0}, kNull, "s"}));
  std::vector<std::string> expected[2];
  size_t keys_of[2] = {0, 0};
  const types::RowBatch all = makeBatch(inputType(), phase2);
  std::vector<InputRow> routed[2];
  for (size_t r = 0; r < phase2.size(); ++r) {
    const int32_t group = assignToKeyGroup(runtime::hashKey(all, r, {0}), testing::kMaxParallelism);
    const int sub = operatorIndexForKeyGroup(testing::kMaxParallelism, 2, group);
    routed[sub].push_back(phase2[r]);
    if (r < static_cast<size_t>(kKeys)) {
      ++keys_of[sub];
      // ki: (1 row, sum i) -> (2 rows, sum i + 10)
      const std::string k = key(static_cast<int>(r));
      expected[sub].push_back(fmt::format("-U[{}, 1, {}]", k, r));
      expected[sub].push_back(fmt::format("+U[{}, 2, {}]", k, r + 10));
    } else {
      // k0's row with v = 0 retracted: (2 rows, sum 10) -> (1 row, sum 10)
      expected[sub].push_back("-U[k0, 2, 10]");
      expected[sub].push_back("+U[k0, 1, 10]");
    }
  }
  ASSERT_GT(keys_of[0], 0u);
  ASSERT_GT(keys_of[1], 0u);
  for (int i = 0; i < 2; ++i) {
    SCOPED_TRACE("new subtask " + std::to_string(i));
    EXPECT_EQ(ops[i]->numKeys(), keys_of[i]);
    if (!routed[i].empty()) ops[i]->processBatch(makeBatch(inputType(), routed[i]));
    EXPECT_THAT(outs[i].take(), ElementsAreArray(expected[i]));
  }
}

TEST(GroupAggStateTest, RestoreIntoAnotherQueryIsAnInputError) {
  CollectingOutput out;
  runtime::OperatorMetrics metrics;
  auto state1 = testing::makeStateContext(nullptr);
  GroupAggregateOperator first(inputType(), {0}, {call(AggKind::kCountStar, -1)});
  testing::openWithState(first, out, metrics, *state1);
  first.processBatch(makeBatch(inputType(), {ins({"a", 1, kNull, "s"})}));
  const auto snap = testing::takeSnapshot(first, *state1);

  // Two aggregates where the checkpoint holds one.
  auto state2 = testing::makeStateContext(&snap);
  GroupAggregateOperator second(inputType(), {0}, {call(AggKind::kCountStar, -1), call(AggKind::kMin, 3)});
  try {
    testing::openWithState(second, out, metrics, *state2);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("restored state 'accState'"));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("accumulators hold 1 aggregates, the query has 2"));
  }
}

}  // namespace
}  // namespace sluice::table
