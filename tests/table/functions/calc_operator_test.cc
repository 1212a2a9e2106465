// CalcProgram (filter then project) and the Calc operator: rows keep their RowKind, empty results
// are not emitted. Expected rows worked out by hand.
#include <gtest/gtest.h>

#include "common/error.h"
#include "table/functions/calc_program.h"
#include "table/runtime/calc_operator.h"
#include "test_util.h"

namespace sluice::table {
namespace {

using testing::call;
using testing::lit;
using testing::ref;
using testing::str;
using types::LogicalType;
using types::RowBatch;
using types::RowKind;

types::RowType inputType() {
  return {{"a", "b"}, {LogicalType::integer(), LogicalType::string()}};
}

RowBatch input() {
  RowBatch b(inputType());
  const std::vector<std::pair<RowKind, std::pair<std::optional<int64_t>, std::string>>> rows = {
      {RowKind::kInsert, {1, "x"}},
      {RowKind::kUpdateBefore, {5, "y"}},
      {RowKind::kUpdateAfter, {std::nullopt, "z"}},
      {RowKind::kDelete, {7, "w"}},
  };
  for (const auto& [kind, v] : rows) {
    if (v.first) b.column(0).appendLong(*v.first);
    else b.column(0).appendNull();
    b.column(1).appendString(v.second);
    b.kinds().push_back(kind);
  }
  return b;
}

std::vector<std::string> rowsOf(const RowBatch& b) {
  std::vector<std::string> out;
  for (size_t r = 0; r < b.numRows(); ++r) {
    std::string s;
    types::formatRow(b, r, s);
    out.push_back(s);
  }
  return out;
}

TEST(CalcProgram, FilterThenProjectKeepsRowKinds) {
  const LogicalType kInt = LogicalType::integer();
  const LogicalType kS = LogicalType::string();
  // SELECT b, a * 10 AS c, UPPER(b) || '!' FROM t WHERE a > 1
  CalcProgram program(inputType(), call(ScalarOp::kGreaterThan, {ref(0, kInt), lit(1)}),
                      {ref(1, kS), call(ScalarOp::kTimes, {ref(0, kInt), lit(10)}),
                       call(ScalarOp::kConcat, {call(ScalarOp::kUpper, {ref(1, kS)}), str("!")})},
                      {"b", "c", "d"});
  EXPECT_EQ(program.outputType().toString(), "ROW<`b` STRING, `c` INT, `d` STRING>");
  // Row 1 (a=1) fails a > 1, row 3 (a=NULL) is NULL -> dropped; -U[5] and -D[7] stay with their kinds.
  RowBatch out = program.apply(input());
  EXPECT_EQ(rowsOf(out), (std::vector<std::string>{"-U[y, 50, Y!]", "-D[w, 70, W!]"}));
  EXPECT_EQ(program.toString(), "select=[b, *(a, 10) AS c, ||(UPPER(b), '!') AS d], where=[>(a, 1)]");
}

TEST(CalcProgram, ProjectionOnlyMovesColumns) {
  const LogicalType kInt = LogicalType::integer();
  // SELECT a, a + 1, b: 'a' is read twice (copied), 'b' once (moved).
  CalcProgram program(nullptr, {ref(0, kInt), call(ScalarOp::kPlus, {ref(0, kInt), lit(1)}), ref(1, LogicalType::string())});
  RowBatch out = program.apply(input());
  EXPECT_EQ(rowsOf(out), (std::vector<std::string>{"+I[1, 2, x]", "-U[5, 6, y]", "+U[null, null, z]", "-D[7, 8, w]"}));
  EXPECT_EQ(program.outputType().names, (std::vector<std::string>{"EXPR$0", "EXPR$1", "EXPR$2"}));
}

TEST(CalcProgram, FilterRemovingEverythingAndErrors) {
  const LogicalType kInt = LogicalType::integer();
  CalcProgram none(inputType(), call(ScalarOp::kGreaterThan, {ref(0, kInt), lit(100)}), {ref(0, kInt)}, {"a"});
  EXPECT_TRUE(none.apply(input()).empty());
  // The filter runs first: 10 / (a - 1) is never computed for a = 1 (dropped by a > 1).
  CalcProgram guarded(inputType(), call(ScalarOp::kGreaterThan, {ref(0, kInt), lit(1)}),
                      {call(ScalarOp::kDivide, {lit(10), call(ScalarOp::kMinus, {ref(0, kInt), lit(1)})})}, {"q"});
  // 10 / (5 - 1) = 2; 10 / (7 - 1) = 1.
  EXPECT_EQ(rowsOf(guarded.apply(input())), (std::vector<std::string>{"-U[2]", "-D[1]"}));
  CalcProgram unguarded(inputType(), nullptr, {call(ScalarOp::kDivide, {lit(10), call(ScalarOp::kMinus, {ref(0, kInt), lit(1)})})}, {"q"});
  EXPECT_THROW(unguarded.apply(input()), UserError);
}

class CollectingOutput : public runtime::Output {
 public:
  void collect(RowBatch&& batch) override { batches.push_back(std::move(batch)); }
  void emitWatermark(runtime::Watermark mark) override { watermarks.push_back(mark.timestamp); }
  std::vector<RowBatch> batches;
  std::vector<int64_t> watermarks;
};

TEST(CalcOperator, EmitsNonEmptyBatchesAndForwardsWatermarks) {
  const LogicalType kInt = LogicalType::integer();
  auto program = std::make_shared<CalcProgram>(inputType(), call(ScalarOp::kLessThan, {ref(0, kInt), lit(6)}),
                                               std::vector<ExprPtr>{ref(1, LogicalType::string())}, std::vector<std::string>{"b"});
  auto factory = makeCalcOperatorFactory(program);
  EXPECT_FALSE(factory->isSource());
  auto op = factory->createOperator();
  CollectingOutput out;
  runtime::OperatorContext ctx;
  op->open(ctx, &out);
  op->processBatch(input());  // a < 6: rows a=1 (+I x) and a=5 (-U y)
  op->processWatermark(runtime::Watermark{42});
  RowBatch none = input();
  none.clear();
  op->processBatch(std::move(none));  // empty in, nothing out
  CalcProgram drop_all(inputType(), makeBooleanLiteral(false), {ref(0, kInt)}, {"a"});
  ASSERT_EQ(out.batches.size(), 1u);
  EXPECT_EQ(rowsOf(out.batches[0]), (std::vector<std::string>{"+I[x]", "-U[y]"}));
  EXPECT_EQ(out.watermarks, (std::vector<int64_t>{42}));
  EXPECT_TRUE(drop_all.apply(input()).empty());
}

}  // namespace
}  // namespace sluice::table
