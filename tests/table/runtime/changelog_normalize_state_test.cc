// ChangelogNormalizeOperator over the state layer: the changelog worked out by hand from
// ProcTimeDeduplicateKeepLastRowFunction (with DropUpdateBefore), and a snapshot at every row boundary
// that restores into a fresh operator continuing it exactly.

#include "table/runtime/changelog_normalize.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/error.h"
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

// id BIGINT (the primary key), name STRING, score DOUBLE.
RowType rowType() {
  return RowType{{"id", "name", "score"}, {LogicalType::bigint(), LogicalType::string(), LogicalType::doubleType()}};
}

const std::vector<InputRow> kInput = {
    ins({int64_t{1}, "a", 1.5}), ins({int64_t{2}, "b", 2.0}), ua({int64_t{1}, "a", 1.5}),
    ub({int64_t{1}, "a", 1.5}),  ua({int64_t{1}, "c", 3.0}), del({int64_t{2}, "b", 2.0}),
    del({int64_t{3}, "x", 0.0}), ins({int64_t{2}, "d", kNull}), ua({int64_t{2}, "d", kNull}),
    del({int64_t{1}, "?", 0.0}),
};

const std::vector<std::string> kExpected = {
    // 1, 2: first rows of keys 1 and 2
    "+I[1, a, 1.5]", "+I[2, b, 2.0]",
    // 3: +U equal to the stored row: a duplicate, nothing. 4: -U dropped (DropUpdateBefore).
    // 5: a new row for key 1: retract the stored one, then the new one
    "-U[1, a, 1.5]", "+U[1, c, 3.0]",
    // 6: delete of key 2 retracts the stored row; 7: delete of an unknown key: nothing
    "-D[2, b, 2.0]",
    // 8: key 2 again is a first row; 9: its duplicate: nothing
    "+I[2, d, null]",
    // 10: the delete carries the stored row, not the delete's own fields
    "-D[1, c, 3.0]",
};

void feedRows(ChangelogNormalizeOperator& op, size_t from, size_t to) {
  for (size_t i = from; i < to; ++i) op.processBatch(makeBatch(rowType(), {kInput[i]}));
}

TEST(ChangelogNormalizeStateTest, UninterruptedRunMatchesTheHandWrittenChangelog) {
  CollectingOutput out;
  runtime::OperatorMetrics metrics;
  ChangelogNormalizeOperator op(rowType(), {0});
  testing::openOperator(op, out, metrics);
  feedRows(op, 0, kInput.size());
  EXPECT_THAT(out.take(), ElementsAreArray(kExpected));
  EXPECT_EQ(op.numKeys(), 1u);  // key 2
}

TEST(ChangelogNormalizeStateTest, RestoreAtEveryRowBoundaryContinuesTheChangelog) {
  for (size_t split = 0; split <= kInput.size(); ++split) {
    SCOPED_TRACE("split after row " + std::to_string(split));
    CollectingOutput out;
    runtime::OperatorMetrics metrics;
    auto state1 = testing::makeStateContext(nullptr);
    auto first = std::make_unique<ChangelogNormalizeOperator>(rowType(), std::vector<int>{0});
    testing::openWithState(*first, out, metrics, *state1);
    feedRows(*first, 0, split);
    const runtime::checkpoint::OperatorSubtaskState snap = testing::takeSnapshot(*first, *state1);
    first.reset();
    state1.reset();

    auto state2 = testing::makeStateContext(&snap);
    ChangelogNormalizeOperator second(rowType(), {0});
    testing::openWithState(second, out, metrics, *state2);
    feedRows(second, split, kInput.size());
    EXPECT_THAT(out.take(), ElementsAreArray(kExpected));
  }
}

TEST(ChangelogNormalizeStateTest, RestoredRowsOfAnotherRowTypeAreAnInputError) {
  CollectingOutput out;
  runtime::OperatorMetrics metrics;
  auto state1 = testing::makeStateContext(nullptr);
  ChangelogNormalizeOperator first(rowType(), {0});
  testing::openWithState(first, out, metrics, *state1);
  first.processBatch(makeBatch(rowType(), {ins({int64_t{1}, "a", 1.5})}));
  const auto snap = testing::takeSnapshot(first, *state1);

  // The same key, one column more: the stored rows are one column short.
  const RowType wider{{"id", "name", "score", "extra"},
                      {LogicalType::bigint(), LogicalType::string(), LogicalType::doubleType(), LogicalType::bigint()}};
  auto state2 = testing::makeStateContext(&snap);
  ChangelogNormalizeOperator second(wider, {0});
  try {
    testing::openWithState(second, out, metrics, *state2);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("restored state 'deduplicate-state'"));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("a row does not decode as 4 columns"));
  }
}

}  // namespace
}  // namespace sluice::table
