// AccumulatorsSerializer: accumulators of every kind survive a round trip with their results, and
// restored bytes that are cut short or carry an unknown version are InputErrors, never a crash.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/error.h"
#include "operator_test_util.h"
#include "table/runtime/accumulators_internal.h"

namespace sluice::table {
namespace {

using testing::del;
using testing::ins;
using testing::kNull;
using testing::makeBatch;
using types::LogicalType;
using types::RowType;

// v BIGINT, d DOUBLE, s STRING.
RowType inputType() {
  return RowType{{"v", "d", "s"}, {LogicalType::bigint(), LogicalType::doubleType(), LogicalType::string()}};
}

AggregateCall call(AggKind kind, int arg, bool distinct = false) {
  AggregateCall c;
  c.kind = kind;
  c.arg_index = arg;
  c.distinct = distinct;
  return c;
}

std::string serialize(const agg::Accumulators& acc) {
  std::string bytes;
  runtime::DataOutputView out(bytes);
  agg::AccumulatorsSerializer::serialize(acc, out);
  return bytes;
}

agg::Accumulators deserialize(std::string_view bytes) {
  runtime::DataInputView in(bytes);
  agg::Accumulators acc = agg::AccumulatorsSerializer::deserialize(in);
  if (!in.atEnd()) throw InputError("trailing bytes");
  return acc;
}

class AccumulatorsSerializerTest : public ::testing::Test {
 protected:
  // COUNT(*), SUM(DISTINCT v), AVG(d), MIN(s), MAX(d) with retraction: slots, a distinct view over
  // BIGINT and value maps over STRING and DOUBLE.
  AccumulatorsSerializerTest()
      : handler_(inputType(),
                 {call(AggKind::kCountStar, -1), call(AggKind::kSum, 0, true), call(AggKind::kAvg, 1),
                  call(AggKind::kMin, 2), call(AggKind::kMax, 1)},
                 /*with_retraction=*/true) {
    handler_.init(acc_);
    const types::RowBatch b = makeBatch(inputType(), {ins({int64_t{4}, 1.5, "q"}), ins({int64_t{4}, -2.0, "b"}),
                                                      ins({int64_t{6}, kNull, "z"}), del({int64_t{4}, 1.5, "q"})});
    for (size_t r = 0; r < 3; ++r) handler_.accumulate(acc_, b, r);
    handler_.retract(acc_, b, 3);
  }

  agg::AggsHandler handler_;
  agg::Accumulators acc_;
};

TEST_F(AccumulatorsSerializerTest, RoundTripKeepsEveryResultAndTheValueMaps) {
  agg::Accumulators restored = deserialize(serialize(acc_));
  handler_.checkLayout(restored);
  // Rows left: (4, -2.0, b), (6, NULL, z).
  std::vector<agg::AggValue> v;
  handler_.getValue(restored, v);
  EXPECT_EQ(v[0].l, 2);        // COUNT(*)
  EXPECT_EQ(v[1].l, 10);       // SUM(DISTINCT v): {4, 6}
  EXPECT_EQ(v[2].d, -2.0);     // AVG(d) over the one non-NULL d
  EXPECT_EQ(v[3].s, "b");      // MIN(s) of {b, z}
  EXPECT_EQ(v[4].d, -2.0);     // MAX(d) of {-2.0}
  // The maps came back whole: retracting b moves MIN to z; retracting -2.0 leaves MAX NULL.
  const types::RowBatch b = makeBatch(inputType(), {del({int64_t{4}, -2.0, "b"})});
  handler_.retract(restored, b, 0);
  handler_.getValue(restored, v);
  EXPECT_EQ(v[1].l, 6);
  EXPECT_EQ(v[3].s, "z");
  EXPECT_TRUE(v[4].is_null);
}

TEST_F(AccumulatorsSerializerTest, EveryTruncationAndABadVersionAreInputErrors) {
  const std::string bytes = serialize(acc_);
  for (size_t n = 0; n < bytes.size(); ++n) {
    SCOPED_TRACE("first " + std::to_string(n) + " bytes");
    EXPECT_THROW(deserialize(std::string_view(bytes).substr(0, n)), InputError);
  }
  std::string bad = bytes;
  bad[0] = 7;
  EXPECT_THROW(deserialize(bad), InputError);
}

TEST_F(AccumulatorsSerializerTest, LayoutOfAnotherQueryIsRefused) {
  agg::AggsHandler other(inputType(), {call(AggKind::kCountStar, -1), call(AggKind::kSum, 0, true),
                                       call(AggKind::kAvg, 1), call(AggKind::kMin, 1), call(AggKind::kMax, 1)},
                         true);
  // MIN over d instead of s: the second value map holds STRING values where DOUBLE is needed.
  EXPECT_THROW(other.checkLayout(deserialize(serialize(acc_))), InputError);
}

TEST(AccumulatorsListTest, ListsRoundTripInArrivalOrderAndAreNotMaps) {
  AggregateCall listagg = call(AggKind::kListAgg, 2);
  listagg.separator = "-";
  agg::AggsHandler h(inputType(), {call(AggKind::kFirstValue, 1), call(AggKind::kLastValue, 0), listagg}, true);
  agg::Accumulators acc;
  h.init(acc);
  const types::RowBatch b =
      makeBatch(inputType(), {ins({int64_t{7}, 2.5, "q"}), ins({int64_t{3}, 1.0, "b"}), ins({int64_t{7}, 2.5, "q"}),
                              del({int64_t{7}, 2.5, "q"}), ins({int64_t{9}, kNull, kNull})});
  for (size_t r = 0; r < 3; ++r) h.accumulate(acc, b, r);
  h.retract(acc, b, 3);  // the earliest (7, 2.5, q) leaves: order (3, 1.0, b), (7, 2.5, q)
  h.accumulate(acc, b, 4);
  agg::Accumulators restored = deserialize(serialize(acc));
  h.checkLayout(restored);
  std::vector<agg::AggValue> v;
  h.getValue(restored, v);
  EXPECT_EQ(v[0].d, 1.0);      // FIRST_VALUE(d)
  EXPECT_EQ(v[1].l, 9);        // LAST_VALUE(v)
  EXPECT_EQ(v[2].s, "b-q");    // LISTAGG(s, '-'): the NULL skipped
  // A value map where a list is needed (MIN instead of FIRST_VALUE over d) is refused.
  agg::AggsHandler other(inputType(), {call(AggKind::kMin, 1), call(AggKind::kLastValue, 0), listagg}, true);
  EXPECT_THROW(other.checkLayout(restored), InputError);
  const std::string bytes = serialize(acc);
  for (size_t n = 0; n < bytes.size(); ++n) EXPECT_THROW(deserialize(std::string_view(bytes).substr(0, n)), InputError);
}

}  // namespace
}  // namespace sluice::table
