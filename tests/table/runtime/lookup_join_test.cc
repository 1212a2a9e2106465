// LookupJoinOperator driven by hand over a loader whose table changes between loads: the cache is loaded
// in open() and again only once it is older than the TTL on a hand-driven clock; keys, several matches,
// LEFT padding, the dimension calc and the join condition; expected rows worked out by hand.

#include <gtest/gtest.h>

#include "runtime/time/processing_time_service.h"
#include "table/functions/expression.h"
#include "table/runtime/lookup_join.h"
#include "operator_test_util.h"

namespace sluice::table {
namespace {

using testing::CollectingOutput;
using testing::ins;
using testing::makeBatch;
using types::LogicalType;
using types::RowType;

/// A dimension table (k BIGINT, name STRING) whose rows are replaced by hand; counts its loads.
class HandLoader : public LookupTableLoader {
 public:
  HandLoader() { type_ = RowType{{"k", "name"}, {LogicalType::bigint(), LogicalType::string()}}; }
  const RowType& rowType() const override { return type_; }
  int64_t cacheTtlMs() const override { return 1000; }
  void load(const Configuration*, std::vector<types::RowBatch>& out) const override {
    ++loads;
    out.push_back(makeBatch(type_, rows));
  }
  std::vector<testing::InputRow> rows;
  mutable int loads = 0;

 private:
  RowType type_;
};

const RowType kProbe{{"id", "k"}, {LogicalType::integer(), LogicalType::bigint()}};

LookupJoinSpec specOf(std::shared_ptr<HandLoader> loader, FlinkJoinType type) {
  LookupJoinSpec spec;
  spec.type = type;
  spec.table_name = "dim";
  spec.loader = std::move(loader);
  spec.dim_width = 2;
  spec.probe_keys = {1};
  spec.dim_keys = {0};
  return spec;
}

TEST(LookupJoinTest, SeveralMatchesAndLeftPadding) {
  auto loader = std::make_shared<HandLoader>();
  loader->rows = {ins({int64_t{1}, std::string("one")}), ins({int64_t{2}, std::string("two")}),
                  ins({int64_t{1}, std::string("uno")})};
  LookupJoinOperator op(kProbe, specOf(loader, FlinkJoinType::kLeft));
  CollectingOutput out;
  runtime::OperatorMetrics metrics;
  runtime::ProcessingTimeService clock([] { return int64_t{0}; });
  testing::openOperator(op, out, metrics, nullptr, &clock);
  EXPECT_EQ(op.numCachedRows(), 3u);
  op.processBatch(makeBatch(kProbe, {ins({int64_t{10}, int64_t{1}}), ins({int64_t{11}, int64_t{3}}),
                                     ins({int64_t{12}, testing::kNull}), {types::RowKind::kDelete, {int64_t{13}, int64_t{2}}}}));
  EXPECT_EQ(out.take(), (std::vector<std::string>{"+I[10, 1, 1, one]", "+I[10, 1, 1, uno]", "+I[11, 3, null, null]",
                                                  "+I[12, null, null, null]", "-D[13, 2, 2, two]"}));
}

TEST(LookupJoinTest, ReloadsOnlyOnceTheCacheIsOlderThanItsTtl) {
  auto loader = std::make_shared<HandLoader>();
  loader->rows = {ins({int64_t{1}, std::string("old")})};
  LookupJoinOperator op(kProbe, specOf(loader, FlinkJoinType::kInner));
  CollectingOutput out;
  runtime::OperatorMetrics metrics;
  int64_t now = 5000;
  runtime::ProcessingTimeService clock([&] { return now; });
  testing::openOperator(op, out, metrics, nullptr, &clock);
  EXPECT_EQ(loader->loads, 1);
  loader->rows = {ins({int64_t{1}, std::string("new")}), ins({int64_t{2}, std::string("two")})};
  // 999 ms later the cache is still used: the table's change is not seen yet.
  now = 5999;
  op.processBatch(makeBatch(kProbe, {ins({int64_t{1}, int64_t{1}}), ins({int64_t{2}, int64_t{2}})}));
  EXPECT_EQ(out.take(), (std::vector<std::string>{"+I[1, 1, 1, old]"}));
  EXPECT_EQ(loader->loads, 1);
  // At the TTL the next batch loads the table again first.
  now = 6000;
  op.processBatch(makeBatch(kProbe, {ins({int64_t{1}, int64_t{1}}), ins({int64_t{2}, int64_t{2}})}));
  EXPECT_EQ(out.take(), (std::vector<std::string>{"+I[1, 1, 1, new]", "+I[2, 2, 2, two]"}));
  EXPECT_EQ(loader->loads, 2);
  EXPECT_EQ(op.numLoads(), 2);
  // The next reload is a TTL after that one.
  now = 6999;
  op.processBatch(makeBatch(kProbe, {ins({int64_t{3}, int64_t{2}})}));
  EXPECT_EQ(loader->loads, 2);
  EXPECT_EQ(out.take(), (std::vector<std::string>{"+I[3, 2, 2, two]"}));
}

TEST(LookupJoinTest, DimensionCalcAndJoinCondition) {
  auto loader = std::make_shared<HandLoader>();
  loader->rows = {ins({int64_t{1}, std::string("a")}), ins({int64_t{1}, std::string("bb")}),
                  ins({int64_t{1}, std::string("ccc")})};
  LookupJoinSpec spec = specOf(loader, FlinkJoinType::kInner);
  // Dimension rows with CHAR_LENGTH(name) > 1 only; joined when id > CHAR_LENGTH(name) (joined row column 3).
  ExprPtr name = makeInputRef(1, LogicalType::string());
  spec.dim_condition = makeCall(ScalarOp::kGreaterThan,
                                {makeCall(ScalarOp::kCharLength, {name}), makeLiteral(int64_t{1}, LogicalType::integer(false))});
  spec.join_condition =
      makeCall(ScalarOp::kGreaterThan, {makeInputRef(0, LogicalType::integer()),
                                        makeCall(ScalarOp::kCharLength, {makeInputRef(3, LogicalType::string())})});
  LookupJoinOperator op(kProbe, spec);
  CollectingOutput out;
  runtime::OperatorMetrics metrics;
  testing::openOperator(op, out, metrics);
  EXPECT_EQ(op.numCachedRows(), 2u);
  op.processBatch(makeBatch(kProbe, {ins({int64_t{3}, int64_t{1}}), ins({int64_t{2}, int64_t{1}})}));
  EXPECT_EQ(out.take(), (std::vector<std::string>{"+I[3, 1, 1, bb]"}));
}

TEST(LookupJoinTest, RefusesOtherJoinTypes) {
  auto loader = std::make_shared<HandLoader>();
  EXPECT_THROW(LookupJoinOperator(kProbe, specOf(loader, FlinkJoinType::kFull)), UserError);
}

}  // namespace
}  // namespace sluice::table
