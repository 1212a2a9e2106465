// GroupAggregateOperator: changelogs computed by hand from Flink's GroupAggFunction rules.

#include "table/runtime/group_aggregate.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/error.h"
#include "operator_test_util.h"
#include "runtime/time/processing_time_service.h"

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

// Input: k STRING, v INT, d DOUBLE, m DECIMAL(10, 2), s STRING.
RowType inputType() {
  return RowType{{"k", "v", "d", "m", "s"},
                 {LogicalType::string(), LogicalType::integer(), LogicalType::doubleType(),
                  LogicalType::decimal(10, 2), LogicalType::string()}};
}

AggregateCall call(AggKind kind, int arg, bool distinct = false) {
  AggregateCall c;
  c.kind = kind;
  c.arg_index = arg;
  c.distinct = distinct;
  return c;
}

class GroupAggTest : public ::testing::Test {
 protected:
  void start(std::vector<int> keys, std::vector<AggregateCall> calls, bool generate_ub = true) {
    op_ = std::make_unique<GroupAggregateOperator>(inputType(), std::move(keys), std::move(calls), generate_ub);
    testing::openOperator(*op_, out_, metrics_);
  }
  std::vector<std::string> feed(const std::vector<testing::InputRow>& rows) {
    op_->processBatch(makeBatch(inputType(), rows));
    return out_.take();
  }

  runtime::OperatorMetrics metrics_;
  CollectingOutput out_;
  std::unique_ptr<GroupAggregateOperator> op_;
};

TEST_F(GroupAggTest, CountStarFirstRowInsertsThenUpdates) {
  start({0}, {call(AggKind::kCountStar, -1)});
  EXPECT_THAT(feed({ins({"a", 1, kNull, kNull, kNull})}), ElementsAre("+I[a, 1]"));
  // Second row of a: count 1 -> 2.
  EXPECT_THAT(feed({ins({"a", 2, kNull, kNull, kNull})}), ElementsAre("-U[a, 1]", "+U[a, 2]"));
  EXPECT_THAT(feed({ins({"b", 3, kNull, kNull, kNull})}), ElementsAre("+I[b, 1]"));
  EXPECT_EQ(op_->numKeys(), 2u);
}

TEST_F(GroupAggTest, EqualResultEmitsNothing) {
  start({0}, {call(AggKind::kCount, 1)});
  EXPECT_THAT(feed({ins({"a", 1, kNull, kNull, kNull})}), ElementsAre("+I[a, 1]"));
  EXPECT_THAT(feed({ins({"a", 2, kNull, kNull, kNull})}), ElementsAre("-U[a, 1]", "+U[a, 2]"));
  // COUNT(v) skips NULL: still 2, so no -U/+U although the key received a third row.
  EXPECT_THAT(feed({ins({"a", kNull, kNull, kNull, kNull})}), IsEmpty());
}

TEST_F(GroupAggTest, SumIgnoresNullsAndIsNullWithoutValues) {
  start({0}, {call(AggKind::kSum, 1)});
  // Only a NULL so far: SUM of nothing is NULL.
  EXPECT_THAT(feed({ins({"a", kNull, kNull, kNull, kNull})}), ElementsAre("+I[a, null]"));
  EXPECT_THAT(feed({ins({"a", 4, kNull, kNull, kNull})}), ElementsAre("-U[a, null]", "+U[a, 4]"));
  // NULL + 4 = 4: unchanged.
  EXPECT_THAT(feed({ins({"a", kNull, kNull, kNull, kNull})}), IsEmpty());
  // Retracting the 4 leaves no non-NULL value (two NULL rows remain): back to NULL.
  EXPECT_THAT(feed({del({"a", 4, kNull, kNull, kNull})}), ElementsAre("-U[a, 4]", "+U[a, null]"));
  EXPECT_EQ(op_->numKeys(), 1u);
}

TEST_F(GroupAggTest, SumOfIntWrapsLikeJavaInt) {
  start({0}, {call(AggKind::kSum, 1)});
  EXPECT_EQ(op_->outputType().types[1], LogicalType::integer());
  feed({ins({"a", int64_t{2147483647}, kNull, kNull, kNull})});
  // 2147483647 + 1 overflows INT: 2^31 - 2^32 = -2147483648.
  EXPECT_THAT(feed({ins({"a", 1, kNull, kNull, kNull})}), ElementsAre("-U[a, 2147483647]", "+U[a, -2147483648]"));
}

TEST_F(GroupAggTest, AvgOfIntUsesIntegerDivision) {
  start({0}, {call(AggKind::kAvg, 1)});
  EXPECT_EQ(op_->outputType().types[1], LogicalType::integer());
  EXPECT_THAT(feed({ins({"a", 1, kNull, kNull, kNull})}), ElementsAre("+I[a, 1]"));
  // (1 + 2) / 2 = 1 (1.5 truncated).
  EXPECT_THAT(feed({ins({"a", 2, kNull, kNull, kNull})}), IsEmpty());
  // (1 + 2 + 4) / 3 = 7 / 3 = 2.
  EXPECT_THAT(feed({ins({"a", 4, kNull, kNull, kNull})}), ElementsAre("-U[a, 1]", "+U[a, 2]"));
  // Negative: (-7 + 0) / 2 = -3.5, truncated toward zero = -3.
  EXPECT_THAT(feed({ins({"n", -7, kNull, kNull, kNull}), ins({"n", 0, kNull, kNull, kNull})}),
              ElementsAre("+I[n, -7]", "-U[n, -7]", "+U[n, -3]"));
}

TEST_F(GroupAggTest, AvgOfDoubleAndDecimal) {
  start({0}, {call(AggKind::kAvg, 2), call(AggKind::kAvg, 3)});
  EXPECT_EQ(op_->outputType().types[1], LogicalType::doubleType());
  // AVG(DECIMAL(10, 2)) -> DECIMAL(38, max(6, 2)) = DECIMAL(38, 6).
  EXPECT_EQ(op_->outputType().types[2], LogicalType::decimal(38, 6));
  // m is unscaled at scale 2: 100 = 1.00, 200 = 2.00.
  feed({ins({"a", kNull, 1.0, 100, kNull})});
  feed({ins({"a", kNull, 2.0, 200, kNull})});
  // AVG(d) = 3.0 / 3 = 1.0; AVG(m) = 5.00 / 3 = 1.6666666... -> 1.666667 (HALF_UP at 6 digits).
  EXPECT_THAT(feed({ins({"a", kNull, kNull, 200, kNull}), ins({"a", kNull, 0.0, kNull, kNull})}),
              ElementsAre("-U[a, 1.5, 1.500000]", "+U[a, 1.5, 1.666667]", "-U[a, 1.5, 1.666667]",
                          "+U[a, 1.0, 1.666667]"));
}

TEST_F(GroupAggTest, AvgOfDecimalRoundsHalfUpAwayFromZero) {
  start({0}, {call(AggKind::kAvg, 3)});
  // 31 rows of 0.00 and one of 0.01 (unscaled 1): 0.01 / 32 = 0.0003125 -> 0.000313 at scale 6.
  std::vector<testing::InputRow> pos, neg;
  for (int i = 0; i < 31; ++i) {
    pos.push_back(ins({"p", kNull, kNull, 0, kNull}));
    neg.push_back(ins({"n", kNull, kNull, 0, kNull}));
  }
  feed(pos);
  feed(neg);
  EXPECT_THAT(feed({ins({"p", kNull, kNull, 1, kNull})}), ElementsAre("-U[p, 0.000000]", "+U[p, 0.000313]"));
  // -0.01 / 32 = -0.0003125 -> -0.000313 (HALF_UP rounds the half away from zero).
  EXPECT_THAT(feed({ins({"n", kNull, kNull, -1, kNull})}), ElementsAre("-U[n, 0.000000]", "+U[n, -0.000313]"));
}

TEST_F(GroupAggTest, MinMaxFallBackAfterRetraction) {
  start({0}, {call(AggKind::kMin, 1), call(AggKind::kMax, 1)});
  EXPECT_THAT(feed({ins({"a", 5, kNull, kNull, kNull})}), ElementsAre("+I[a, 5, 5]"));
  EXPECT_THAT(feed({ins({"a", 9, kNull, kNull, kNull})}), ElementsAre("-U[a, 5, 5]", "+U[a, 5, 9]"));
  // Second 9: multiset {5:1, 9:2}; results unchanged.
  EXPECT_THAT(feed({ins({"a", 9, kNull, kNull, kNull})}), IsEmpty());
  // One 9 retracted: {5:1, 9:1}; MAX still 9.
  EXPECT_THAT(feed({del({"a", 9, kNull, kNull, kNull})}), IsEmpty());
  // Last 9 retracted: MAX falls back to 5.
  EXPECT_THAT(feed({ub({"a", 9, kNull, kNull, kNull})}), ElementsAre("-U[a, 5, 9]", "+U[a, 5, 5]"));
  // Rows: 3 accumulated, 2 retracted; retracting the 5 makes the record count 3 - 3 = 0:
  // -D with the previous result, state dropped.
  EXPECT_THAT(feed({del({"a", 5, kNull, kNull, kNull})}), ElementsAre("-D[a, 5, 5]"));
  EXPECT_EQ(op_->numKeys(), 0u);
}

TEST_F(GroupAggTest, MinMaxOfStringsWithRetraction) {
  start({0}, {call(AggKind::kMin, 4), call(AggKind::kMax, 4)});
  feed({ins({"a", kNull, kNull, kNull, "m"}), ins({"a", kNull, kNull, kNull, "b"}),
        ins({"a", kNull, kNull, kNull, "z"})});
  // {b, m, z}: retract b -> MIN m; retract z -> MAX m.
  EXPECT_THAT(feed({del({"a", kNull, kNull, kNull, "b"})}), ElementsAre("-U[a, b, z]", "+U[a, m, z]"));
  EXPECT_THAT(feed({del({"a", kNull, kNull, kNull, "z"})}), ElementsAre("-U[a, m, z]", "+U[a, m, m]"));
}

TEST_F(GroupAggTest, CountDropsToZeroEmitsDeleteAndKeyStartsOver) {
  start({0}, {call(AggKind::kCountStar, -1), call(AggKind::kSum, 1)});
  EXPECT_THAT(feed({ins({"a", 3, kNull, kNull, kNull}), ins({"a", 4, kNull, kNull, kNull})}),
              ElementsAre("+I[a, 1, 3]", "-U[a, 1, 3]", "+U[a, 2, 7]"));
  EXPECT_THAT(feed({del({"a", 3, kNull, kNull, kNull})}), ElementsAre("-U[a, 2, 7]", "+U[a, 1, 4]"));
  EXPECT_THAT(feed({del({"a", 4, kNull, kNull, kNull})}), ElementsAre("-D[a, 1, 4]"));
  EXPECT_EQ(op_->numKeys(), 0u);
  // A new row for a is a first row again.
  EXPECT_THAT(feed({ins({"a", 10, kNull, kNull, kNull})}), ElementsAre("+I[a, 1, 10]"));
}

TEST_F(GroupAggTest, RetractionOfUnknownKeyIsIgnored) {
  start({0}, {call(AggKind::kCountStar, -1)});
  EXPECT_THAT(feed({del({"x", 1, kNull, kNull, kNull}), ub({"y", 1, kNull, kNull, kNull})}), IsEmpty());
  EXPECT_EQ(op_->numKeys(), 0u);
  // An update-after is an accumulate message: it creates the key.
  EXPECT_THAT(feed({ua({"y", 1, kNull, kNull, kNull})}), ElementsAre("+I[y, 1]"));
}

TEST_F(GroupAggTest, CountDistinctKeepsValueCounts) {
  start({0}, {call(AggKind::kCount, 1, true), call(AggKind::kSum, 1, true)});
  EXPECT_THAT(feed({ins({"a", 1, kNull, kNull, kNull})}), ElementsAre("+I[a, 1, 1]"));
  // Duplicate 1: distinct values {1}, unchanged.
  EXPECT_THAT(feed({ins({"a", 1, kNull, kNull, kNull})}), IsEmpty());
  // {1, 2}: COUNT 2, SUM 1 + 2 = 3.
  EXPECT_THAT(feed({ins({"a", 2, kNull, kNull, kNull})}), ElementsAre("-U[a, 1, 1]", "+U[a, 2, 3]"));
  // NULL is not a value.
  EXPECT_THAT(feed({ins({"a", kNull, kNull, kNull, kNull})}), IsEmpty());
  // One of the two 1s retracted: 1 still present.
  EXPECT_THAT(feed({del({"a", 1, kNull, kNull, kNull})}), IsEmpty());
  // The other 1 retracted: {2}, COUNT 1, SUM 2.
  EXPECT_THAT(feed({del({"a", 1, kNull, kNull, kNull})}), ElementsAre("-U[a, 2, 3]", "+U[a, 1, 2]"));
}

TEST_F(GroupAggTest, WithoutUpdateBeforeOnlyUpdateAfter) {
  start({0}, {call(AggKind::kCountStar, -1)}, /*generate_ub=*/false);
  EXPECT_THAT(feed({ins({"a", 1, kNull, kNull, kNull}), ins({"a", 1, kNull, kNull, kNull})}),
              ElementsAre("+I[a, 1]", "+U[a, 2]"));
  // The delete on the last row still carries the previous result.
  EXPECT_THAT(feed({del({"a", 1, kNull, kNull, kNull}), del({"a", 1, kNull, kNull, kNull})}),
              ElementsAre("+U[a, 1]", "-D[a, 1]"));
}

TEST_F(GroupAggTest, NullKeyIsAGroupAndGlobalAggregateHasOneGroup) {
  start({0}, {call(AggKind::kCountStar, -1)});
  EXPECT_THAT(feed({ins({kNull, 1, kNull, kNull, kNull}), ins({"", 1, kNull, kNull, kNull}),
                    ins({kNull, 1, kNull, kNull, kNull})}),
              ElementsAre("+I[null, 1]", "+I[, 1]", "-U[null, 1]", "+U[null, 2]"));

  CollectingOutput out;
  runtime::OperatorMetrics metrics;
  GroupAggregateOperator global(inputType(), {}, {call(AggKind::kMax, 1)});
  testing::openOperator(global, out, metrics);
  global.processBatch(makeBatch(inputType(), {ins({"a", 3, kNull, kNull, kNull}), ins({"b", 8, kNull, kNull, kNull})}));
  EXPECT_THAT(out.take(), ElementsAre("+I[3]", "-U[3]", "+U[8]"));
}

TEST_F(GroupAggTest, OneOutputBatchPerInputBatchAndEndInputEmitsNothing) {
  start({0, 1}, {call(AggKind::kCountStar, -1)});
  feed({ins({"a", 1, kNull, kNull, kNull}), ins({"a", 2, kNull, kNull, kNull}), ins({"a", 1, kNull, kNull, kNull})});
  ASSERT_EQ(out_.batches.size(), 1u);
  // Keys (a,1), (a,2), (a,1): +I, +I, -U/+U = 4 rows.
  EXPECT_EQ(out_.batches[0].numRows(), 4u);
  op_->endInput();
  op_->processWatermark(runtime::Watermark{7});
  EXPECT_THAT(out_.take(), ElementsAre("WM(7)"));
  EXPECT_EQ(out_.batches.size(), 1u);
}

TEST_F(GroupAggTest, ConsumesTheChangelogOfAnUpstreamAggregate) {
  // SELECT cnt, COUNT(*) FROM (SELECT k, COUNT(*) AS cnt ... GROUP BY k) GROUP BY cnt: the inner
  // aggregate's changelog (cnt in column v) for rows a, a, b is +I[a,1], -U[a,1], +U[a,2], +I[b,1].
  start({1}, {call(AggKind::kCountStar, -1)});
  EXPECT_THAT(feed({ins({"a", 1, kNull, kNull, kNull}), ub({"a", 1, kNull, kNull, kNull}),
                    ua({"a", 2, kNull, kNull, kNull}), ins({"b", 1, kNull, kNull, kNull})}),
              // cnt=1 gets a row (+I[1, 1]) then loses it (record count 0: -D[1, 1]); cnt=2 starts
              // (+I[2, 1]); cnt=1 starts again for b (+I[1, 1]).
              ElementsAre("+I[1, 1]", "-D[1, 1]", "+I[2, 1]", "+I[1, 1]"));
}

TEST_F(GroupAggTest, ManyKeysInOneBatch) {
  start({1}, {call(AggKind::kCountStar, -1), call(AggKind::kSum, 1)});
  std::vector<testing::InputRow> rows;
  for (int i = 0; i < 10000; ++i) rows.push_back(ins({"x", int64_t{i % 100}, kNull, kNull, kNull}));
  feed(rows);
  EXPECT_EQ(op_->numKeys(), 100u);
  ASSERT_EQ(out_.batches.size(), 1u);
  // 100 first rows (+I) and 9900 later rows, each changing COUNT(*): 100 + 2 * 9900 = 19900 rows.
  EXPECT_EQ(out_.batches[0].numRows(), 19900u);
  // Key 7 saw 10000 / 100 = 100 rows of value 7: the last row is +U[7, 100, 700].
  std::string last_of_7;
  for (size_t r = 0; r < out_.batches[0].numRows(); ++r) {
    const std::string row = testing::formatTestRow(out_.batches[0], r);
    if (row.rfind("+U[7,", 0) == 0) last_of_7 = row;
  }
  EXPECT_EQ(last_of_7, "+U[7, 100, 700]");
}

TEST(AggregateCallTest, ResultTypesFollowFlink) {
  using T = LogicalType;
  EXPECT_EQ(AggregateCall::resultType(AggKind::kCountStar, T::null()), T::bigint(false));
  EXPECT_EQ(AggregateCall::resultType(AggKind::kCount, T::string()), T::bigint(false));
  EXPECT_EQ(AggregateCall::resultType(AggKind::kSum, T::integer(false)), T::integer());
  EXPECT_EQ(AggregateCall::resultType(AggKind::kSum, T::bigint()), T::bigint());
  EXPECT_EQ(AggregateCall::resultType(AggKind::kSum, T::decimal(10, 2)), T::decimal(38, 2));
  EXPECT_EQ(AggregateCall::resultType(AggKind::kSum, T::doubleType()), T::doubleType());
  EXPECT_EQ(AggregateCall::resultType(AggKind::kAvg, T::integer()), T::integer());
  EXPECT_EQ(AggregateCall::resultType(AggKind::kAvg, T::decimal(10, 8)), T::decimal(38, 8));
  EXPECT_EQ(AggregateCall::resultType(AggKind::kAvg, T::doubleType()), T::doubleType());
  EXPECT_EQ(AggregateCall::resultType(AggKind::kMax, T::string(false)), T::string());
  EXPECT_THROW(AggregateCall::resultType(AggKind::kSum, T::string()), UserError);
  EXPECT_THROW(AggregateCall::resultType(AggKind::kAvg, T::boolean()), UserError);
}

TEST(GroupAggFactoryTest, ValidatesAndCreates) {
  auto factory = makeGroupAggregateFactory(inputType(), {0}, {call(AggKind::kCountStar, -1)});
  ASSERT_NE(factory, nullptr);
  EXPECT_FALSE(factory->isSource());
  EXPECT_NE(factory->createOperator(), nullptr);
  EXPECT_THROW(makeGroupAggregateFactory(inputType(), {7}, {call(AggKind::kCountStar, -1)}), UserError);
  EXPECT_THROW(makeGroupAggregateFactory(inputType(), {0}, {call(AggKind::kSum, 4)}), UserError);
  const RowType out = GroupAggregateOperator::outputType(inputType(), {0}, {call(AggKind::kCountStar, -1)});
  EXPECT_EQ(out.names, (std::vector<std::string>{"k", "EXPR$0"}));
}

TEST(GroupAggMiniBatchTest, BundleFinishesAtItsSizeOnWatermarksAndAfterItsLatency) {
  int64_t now = 1000;
  runtime::ProcessingTimeService timers([&] { return now; });
  runtime::OperatorMetrics metrics;
  CollectingOutput out;
  GroupAggregateOperator op(inputType(), {0}, {call(AggKind::kCountStar, -1), call(AggKind::kCount, 1)}, true,
                            MiniBatchSpec{4, 100});
  testing::openOperator(op, out, metrics, nullptr, &timers);
  // Three rows: below the size, nothing yet.
  op.processBatch(makeBatch(inputType(), {ins({"a", 1, kNull, kNull, kNull}), ins({"a", 2, kNull, kNull, kNull}),
                                          ins({"b", 3, kNull, kNull, kNull})}));
  EXPECT_THAT(out.take(), IsEmpty());
  // The fourth row fills the bundle: a new with 3 rows, b new with 1; keys in arrival order.
  op.processBatch(makeBatch(inputType(), {ins({"a", kNull, kNull, kNull, kNull})}));
  EXPECT_THAT(out.take(), ElementsAre("+I[a, 3, 2]", "+I[b, 1, 1]"));
  // A watermark finishes the bundle before it is forwarded.
  op.processBatch(makeBatch(inputType(), {ins({"b", 4, kNull, kNull, kNull})}));
  op.processWatermark(runtime::Watermark{5});
  EXPECT_THAT(out.take(), ElementsAre("-U[b, 1, 1]", "+U[b, 2, 2]", "WM(5)"));
  // The latency timer: registered by the first row of a bundle, due 100 ms later.
  op.processBatch(makeBatch(inputType(), {ins({"c", 5, kNull, kNull, kNull})}));
  now = 1099;
  timers.fireDue();
  EXPECT_THAT(out.take(), IsEmpty());
  now = 1100;
  timers.fireDue();  // also the void timers of the bundles finished by size and by the watermark
  EXPECT_THAT(out.take(), ElementsAre("+I[c, 1, 1]"));
  // Leading retractions of a key without state are dropped; a key whose rows cancel out emits nothing new
  // (c: +1 -1 +1 = unchanged counts) and b's rows retracted to zero delete it.
  op.processBatch(makeBatch(inputType(), {del({"d", 1, kNull, kNull, kNull}), ins({"d", 1, kNull, kNull, kNull}),
                                          del({"c", 5, kNull, kNull, kNull}), ins({"c", 5, kNull, kNull, kNull})}));
  EXPECT_THAT(out.take(), ElementsAre("+I[d, 1, 1]"));
  op.processBatch(makeBatch(inputType(), {del({"b", 3, kNull, kNull, kNull}), del({"b", 4, kNull, kNull, kNull})}));
  op.endInput();
  EXPECT_THAT(out.take(), ElementsAre("-D[b, 2, 2]"));
  EXPECT_EQ(op.numKeys(), 3u);
}

}  // namespace
}  // namespace sluice::table
