// FinalResultOperator and BatchSortOperator driven by hand: what they emit at the end of input, worked out
// from the changelog / rows fed in.

#include "table/runtime/batch_operators.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/error.h"
#include "operator_test_util.h"

namespace sluice::table {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing::CollectingOutput;
using testing::del;
using testing::ins;
using testing::kNull;
using testing::makeBatch;
using testing::ua;
using testing::ub;
using types::LogicalType;
using types::RowType;

RowType kv() { return RowType{{"k", "v"}, {LogicalType::string(), LogicalType::bigint()}}; }

TEST(FinalResultTest, FoldsAChangelogIntoItsFinalRowsAtTheEnd) {
  FinalResultOperator op(kv());
  runtime::OperatorMetrics metrics;
  CollectingOutput out;
  testing::openOperator(op, out, metrics);
  // A GROUP BY k COUNT(*) changelog: a 1, b 1, a 1 -> 2, b 1 -> deleted, c 1, a 2 -> 3.
  op.processBatch(makeBatch(kv(), {ins({"a", 1}), ins({"b", 1}), ub({"a", 1}), ua({"a", 2})}));
  op.processWatermark(runtime::Watermark{5});
  op.processBatch(makeBatch(kv(), {del({"b", 1}), ins({"c", 1}), ub({"a", 2}), ua({"a", 3})}));
  op.processWatermark(runtime::Watermark{9});
  EXPECT_THAT(out.take(), IsEmpty());  // nothing before the end, watermarks held back too
  op.endInput();
  // Rows left in first-seen order ([a, 1] first, then [b, 1], [a, 2], [c, 1], [a, 3]): only c 1 and a 3 are
  // left; then the largest watermark.
  EXPECT_THAT(out.take(), ElementsAre("+I[c, 1]", "+I[a, 3]", "WM(9)"));
}

TEST(FinalResultTest, KeepsDuplicateRowsAndNulls) {
  FinalResultOperator op(kv());
  runtime::OperatorMetrics metrics;
  CollectingOutput out;
  testing::openOperator(op, out, metrics);
  // A join's output: [x, null] twice (two unmatched left rows), one retracted, [y, 3] once.
  op.processBatch(makeBatch(kv(), {ins({"x", kNull}), ins({"x", kNull}), ins({"y", 3}), del({"x", kNull})}));
  op.endInput();
  EXPECT_THAT(out.take(), ElementsAre("+I[x, null]", "+I[y, 3]"));
}

TEST(FinalResultTest, ARetractionOfAMissingRowIsAnInternalError) {
  FinalResultOperator op(kv());
  runtime::OperatorMetrics metrics;
  CollectingOutput out;
  testing::openOperator(op, out, metrics);
  op.processBatch(makeBatch(kv(), {del({"a", 1})}));
  EXPECT_THROW(op.endInput(), InternalError);
}

std::vector<std::string> sortAll(std::vector<SortField> order, int64_t offset, int64_t fetch,
                                 const std::vector<testing::InputRow>& rows) {
  BatchSortOperator op(kv(), std::move(order), offset, fetch);
  runtime::OperatorMetrics metrics;
  CollectingOutput out;
  testing::openOperator(op, out, metrics);
  // Fed in two batches: the order must not depend on batch boundaries.
  const size_t half = rows.size() / 2;
  op.processBatch(makeBatch(kv(), std::vector<testing::InputRow>(rows.begin(), rows.begin() + half)));
  op.processWatermark(runtime::Watermark{7});
  op.processBatch(makeBatch(kv(), std::vector<testing::InputRow>(rows.begin() + half, rows.end())));
  EXPECT_THAT(out.events, IsEmpty());
  op.endInput();
  return out.take();
}

const std::vector<testing::InputRow> kRows = {ins({"b", 2}),     ins({"a", kNull}), ins({"c", 2}), ins({"a", 9}),
                                              ins({kNull, 1}),   ins({"b", -4}),    ins({"d", 2})};

TEST(BatchSortTest, SortsOnAnyColumnWithNullsAndTiesInArrivalOrder) {
  // v ASC (NULLs first, Flink's default): null, -4, 1, then the 2s in arrival order b, c, d, then 9.
  EXPECT_THAT(sortAll({SortField{1, true, true}}, 0, -1, kRows),
              ElementsAre("+I[a, null]", "+I[b, -4]", "+I[null, 1]", "+I[b, 2]", "+I[c, 2]", "+I[d, 2]", "+I[a, 9]",
                          "WM(7)"));
  // k DESC (NULLs last), then v ASC: d, c, b -4, b 2, a null, a 9, null.
  EXPECT_THAT(sortAll({SortField{0, false, false}, SortField{1, true, true}}, 0, -1, kRows),
              ElementsAre("+I[d, 2]", "+I[c, 2]", "+I[b, -4]", "+I[b, 2]", "+I[a, null]", "+I[a, 9]", "+I[null, 1]",
                          "WM(7)"));
}

TEST(BatchSortTest, LimitAndOffsetKeepOnlyTheirRows) {
  // v DESC NULLS LAST: 9, 2 (b), 2 (c), 2 (d), 1, -4, null; OFFSET 1 FETCH 3 -> b 2, c 2, d 2.
  EXPECT_THAT(sortAll({SortField{1, false, false}}, 1, 3, kRows),
              ElementsAre("+I[b, 2]", "+I[c, 2]", "+I[d, 2]", "WM(7)"));
  // A tie at the limit keeps the earlier row: FETCH 2 -> 9, b 2.
  EXPECT_THAT(sortAll({SortField{1, false, false}}, 0, 2, kRows), ElementsAre("+I[a, 9]", "+I[b, 2]", "WM(7)"));
  // LIMIT without ORDER BY: the first rows to arrive.
  EXPECT_THAT(sortAll({}, 0, 2, kRows), ElementsAre("+I[b, 2]", "+I[a, null]", "WM(7)"));
  // OFFSET past the end: nothing.
  EXPECT_THAT(sortAll({SortField{1, true, true}}, 10, -1, kRows), ElementsAre("WM(7)"));
}

TEST(BatchSortTest, RefusesRetractionsAndBadArguments) {
  EXPECT_THROW(BatchSortOperator(kv(), {SortField{5, true, true}}, 0, -1), UserError);
  EXPECT_THROW(BatchSortOperator(kv(), {SortField{0, true, true}}, -1, -1), UserError);
  BatchSortOperator op(kv(), {SortField{0, true, true}}, 0, -1);
  runtime::OperatorMetrics metrics;
  CollectingOutput out;
  testing::openOperator(op, out, metrics);
  EXPECT_THROW(op.processBatch(makeBatch(kv(), {del({"a", 1})})), UserError);
}

}  // namespace
}  // namespace sluice::table
