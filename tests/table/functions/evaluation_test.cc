// Evaluation of operators over small batches with NULLs. Expected values are worked out by hand
// (arithmetic in the comments) from Flink's semantics: Java int/long wrap-around, truncating integer
// division, "Division by zero" for integers, IEEE for DOUBLE, DECIMAL HALF_UP, three-valued logic.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/error.h"
#include "test_util.h"

namespace sluice::table {
namespace {

using testing::batchOf;
using testing::call;
using testing::doubleColumn;
using testing::eval;
using testing::lit;
using testing::longColumn;
using testing::ref;
using testing::str;
using testing::stringColumn;
using types::LogicalType;
using V = std::vector<std::string>;

const LogicalType kInt = LogicalType::integer();
const LogicalType kBig = LogicalType::bigint();
const LogicalType kBool = LogicalType::boolean();

TEST(Evaluation, IntegerArithmeticWithNulls) {
  auto b = batchOf({longColumn(kInt, {1, std::nullopt, 7, 2147483647}), longColumn(kInt, {2, 3, std::nullopt, 1})});
  // 1+2=3; NULL+3=NULL; 7+NULL=NULL; 2147483647+1 wraps to -2147483648 (Java int).
  EXPECT_EQ(eval(call(ScalarOp::kPlus, {ref(0, kInt), ref(1, kInt)}), b), (V{"3", "null", "null", "-2147483648"}));
  // 1-2=-1; 2147483647-1=2147483646.
  EXPECT_EQ(eval(call(ScalarOp::kMinus, {ref(0, kInt), ref(1, kInt)}), b), (V{"-1", "null", "null", "2147483646"}));
  // 1*2=2; 2147483647*1.
  EXPECT_EQ(eval(call(ScalarOp::kTimes, {ref(0, kInt), ref(1, kInt)}), b), (V{"2", "null", "null", "2147483647"}));
  // Promoted to BIGINT: 2147483647 + 1 = 2147483648 (no wrap).
  EXPECT_EQ(eval(call(ScalarOp::kPlus, {ref(0, kInt), makeLiteral(int64_t{1}, LogicalType::bigint(false))}), b),
            (V{"2", "null", "8", "2147483648"}));
  EXPECT_EQ(eval(call(ScalarOp::kNegate, {ref(0, kInt)}), b), (V{"-1", "null", "-7", "-2147483647"}));
}

TEST(Evaluation, DivisionAndMod) {
  auto b = batchOf({longColumn(kInt, {7, -7, 7, -7}), longColumn(kInt, {2, 2, -3, 3})});
  // Truncating: 7/2=3, -7/2=-3, 7/-3=-2, -7/3=-2.
  EXPECT_EQ(eval(call(ScalarOp::kDivide, {ref(0, kInt), ref(1, kInt)}), b), (V{"3", "-3", "-2", "-2"}));
  // Java %: sign of the dividend: 7%2=1, -7%2=-1, 7%-3=1, -7%3=-1.
  EXPECT_EQ(eval(call(ScalarOp::kMod, {ref(0, kInt), ref(1, kInt)}), b), (V{"1", "-1", "1", "-1"}));

  auto z = batchOf({longColumn(kInt, {1, 2}), longColumn(kInt, {0, std::nullopt})});
  try {
    ExprEvaluator(call(ScalarOp::kDivide, {ref(0, kInt), ref(1, kInt)})).evaluate(z);
    FAIL() << "integer division by zero must fail";
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()), "Division by zero");
  }
  EXPECT_THROW(ExprEvaluator(call(ScalarOp::kMod, {ref(0, kInt), ref(1, kInt)})).evaluate(z), UserError);
  // A NULL divisor is not a division by zero: 2 / NULL = NULL.
  auto only_null = batchOf({longColumn(kInt, {2}), longColumn(kInt, {std::nullopt})});
  EXPECT_EQ(eval(call(ScalarOp::kDivide, {ref(0, kInt), ref(1, kInt)}), only_null), (V{"null"}));
  // DOUBLE follows IEEE: 1/0 = Infinity, -1/0 = -Infinity, 0/0 = NaN.
  auto d = batchOf({doubleColumn({1.0, -1.0, 0.0}), doubleColumn({0.0, 0.0, 0.0})});
  const LogicalType kD = LogicalType::doubleType();
  EXPECT_EQ(eval(call(ScalarOp::kDivide, {ref(0, kD), ref(1, kD)}), d), (V{"Infinity", "-Infinity", "NaN"}));
  // INT / DOUBLE is DOUBLE division: 7 / 2.0 = 3.5.
  auto m = batchOf({longColumn(kInt, {7})});
  EXPECT_EQ(eval(call(ScalarOp::kDivide, {ref(0, kInt), makeApproxLiteral("2.0")}), m), (V{"3.5"}));
}

TEST(Evaluation, DecimalArithmetic) {
  const LogicalType d5_2 = LogicalType::decimal(5, 2), d4_1 = LogicalType::decimal(4, 1);
  // a = 1.25, 2.00 ; b = 0.5, 3.0 (unscaled 125, 200 and 5, 30).
  auto b = batchOf({longColumn(d5_2, {125, 200}), longColumn(d4_1, {5, 30})});
  // 1.25 + 0.50 = 1.75; 2.00 + 3.00 = 5.00 (scale 2).
  EXPECT_EQ(eval(call(ScalarOp::kPlus, {ref(0, d5_2), ref(1, d4_1)}), b), (V{"1.75", "5.00"}));
  // 1.25 - 0.5 = 0.75; 2.00 - 3.0 = -1.00.
  EXPECT_EQ(eval(call(ScalarOp::kMinus, {ref(0, d5_2), ref(1, d4_1)}), b), (V{"0.75", "-1.00"}));
  // 1.25 * 0.5 = 0.625; 2.00 * 3.0 = 6.000 (scale 3).
  EXPECT_EQ(eval(call(ScalarOp::kTimes, {ref(0, d5_2), ref(1, d4_1)}), b), (V{"0.625", "6.000"}));
  // Division at scale max(6, 2 + 4 + 1) = 7: 1.25 / 0.5 = 2.5000000; 2.00 / 3.0 = 0.6666667 (HALF_UP).
  EXPECT_EQ(eval(call(ScalarOp::kDivide, {ref(0, d5_2), ref(1, d4_1)}), b), (V{"2.5000000", "0.6666667"}));
  // DECIMAL + INT: 1.25 + 2 = 3.25.
  EXPECT_EQ(eval(call(ScalarOp::kPlus, {ref(0, d5_2), lit(2)}), b), (V{"3.25", "4.00"}));
  // Comparison across scales: 1.25 > 0.5 true; 2.00 > 3.0 false.
  EXPECT_EQ(eval(call(ScalarOp::kGreaterThan, {ref(0, d5_2), ref(1, d4_1)}), b), (V{"true", "false"}));
  // 1.5 (DECIMAL(2,1) literal) = 1.50: equal across scales.
  auto c = batchOf({longColumn(d5_2, {150})});
  EXPECT_EQ(eval(call(ScalarOp::kEquals, {ref(0, d5_2), makeDecimalLiteral("1.5")}), c), (V{"true"}));
  // MOD: 2.00 MOD 0.3 -> 200 % 30 at scale 2 = 20 -> 0.20.
  auto mb = batchOf({longColumn(d5_2, {200}), longColumn(LogicalType::decimal(2, 1), {3})});
  EXPECT_EQ(eval(call(ScalarOp::kMod, {ref(0, d5_2), ref(1, LogicalType::decimal(2, 1))}), mb), (V{"0.20"}));
  // Decimal division by zero fails like Java's BigDecimal.
  auto z = batchOf({longColumn(d5_2, {100}), longColumn(d4_1, {0})});
  EXPECT_THROW(ExprEvaluator(call(ScalarOp::kDivide, {ref(0, d5_2), ref(1, d4_1)})).evaluate(z), UserError);
}

TEST(Evaluation, DecimalOverflow) {
  const LogicalType d18 = LogicalType::decimal(18, 0);
  // 999999999999999999 * 10 = 9.99e18 > 2^63 - 1 = 9.22e18: cannot be stored in 64 bits.
  auto b = batchOf({longColumn(d18, {999999999999999999LL}), longColumn(d18, {10})});
  try {
    ExprEvaluator(call(ScalarOp::kTimes, {ref(0, d18), ref(1, d18)})).evaluate(b);
    FAIL() << "overflow must fail";
  } catch (const UserError& e) {
    EXPECT_THAT(std::string(e.what()), ::testing::HasSubstr("DECIMAL overflow in '*'"));
  }
  // A result beyond a precision <= 18 is NULL (Flink): CAST(123.45 AS DECIMAL(4, 2)) needs 5 digits.
  auto c = batchOf({longColumn(LogicalType::decimal(5, 2), {12345, 1234})});
  EXPECT_EQ(eval(makeCast(ref(0, LogicalType::decimal(5, 2)), LogicalType::decimal(4, 2)), c), (V{"null", "12.34"}));
}

TEST(Evaluation, Rounding) {
  const LogicalType d5_3 = LogicalType::decimal(5, 3);
  // ROUND(x, 2) HALF_UP: 2.345 -> 2.35; -2.345 -> -2.35; 2.344 -> 2.34.
  auto b = batchOf({longColumn(d5_3, {2345, -2345, 2344, std::nullopt})});
  EXPECT_EQ(eval(call(ScalarOp::kRound, {ref(0, d5_3), lit(2)}), b), (V{"2.35", "-2.35", "2.34", "null"}));
  // ROUND(x) -> 0 digits: 2.345 -> 2; -2.345 -> -2.
  EXPECT_EQ(eval(call(ScalarOp::kRound, {ref(0, d5_3)}), b), (V{"2", "-2", "2", "null"}));
  // DOUBLE, HALF_UP on the decimal text (BigDecimal.valueOf): 2.5 -> 3.0, -2.5 -> -3.0,
  // 1.005 rounds to 1.01 at 2 digits (binary arithmetic would give 1.0).
  const LogicalType kD = LogicalType::doubleType();
  auto d = batchOf({doubleColumn({2.5, -2.5, 1.005})});
  EXPECT_EQ(eval(call(ScalarOp::kRound, {ref(0, kD)}), d), (V{"3.0", "-3.0", "1.0"}));
  EXPECT_EQ(eval(call(ScalarOp::kRound, {ref(0, kD), lit(2)}), d), (V{"2.5", "-2.5", "1.01"}));
  // INT with negative digits: 1234 -> 1200, 1250 -> 1300, -1250 -> -1300.
  auto i = batchOf({longColumn(kInt, {1234, 1250, -1250})});
  EXPECT_EQ(eval(call(ScalarOp::kRound, {ref(0, kInt), makeLiteral(int64_t{-2}, LogicalType::integer(false))}), i),
            (V{"1200", "1300", "-1300"}));
  EXPECT_EQ(eval(call(ScalarOp::kAbs, {ref(0, kInt)}), i), (V{"1234", "1250", "1250"}));
}

TEST(Evaluation, Comparisons) {
  auto b = batchOf({longColumn(kInt, {1, 2, std::nullopt}), doubleColumn({1.5, 1.5, 1.5}),
                    stringColumn({"abc", "abd", "b"})});
  const LogicalType kD = LogicalType::doubleType();
  // INT widened to DOUBLE: 1 < 1.5 true, 2 < 1.5 false, NULL < 1.5 NULL.
  EXPECT_EQ(eval(call(ScalarOp::kLessThan, {ref(0, kInt), ref(1, kD)}), b), (V{"true", "false", "null"}));
  EXPECT_EQ(eval(call(ScalarOp::kNotEquals, {ref(0, kInt), lit(2)}), b), (V{"true", "false", "null"}));
  EXPECT_EQ(eval(call(ScalarOp::kGreaterThanOrEqual, {ref(0, kInt), lit(2)}), b), (V{"false", "true", "null"}));
  // Strings compare by code point: "abc" < "abd" < "b".
  const LogicalType kS = LogicalType::string();
  EXPECT_EQ(eval(call(ScalarOp::kLessThan, {ref(2, kS), str("abd")}), b), (V{"true", "false", "false"}));
  EXPECT_EQ(eval(call(ScalarOp::kEquals, {ref(2, kS), str("abd")}), b), (V{"false", "true", "false"}));
  // BETWEEN 1 AND 1: 1 true, 2 false, NULL null.  NOT BETWEEN: the opposite, NULL stays NULL.
  EXPECT_EQ(eval(call(ScalarOp::kBetween, {ref(0, kInt), lit(1), lit(1)}), b), (V{"true", "false", "null"}));
  EXPECT_EQ(eval(call(ScalarOp::kNotBetween, {ref(0, kInt), lit(1), lit(1)}), b), (V{"false", "true", "null"}));
}

TEST(Evaluation, ThreeValuedLogicTruthTable) {
  // Rows enumerate (a, b) over {TRUE, FALSE, NULL} x {TRUE, FALSE, NULL}.
  const std::optional<int64_t> T = 1, F = 0, N = std::nullopt;
  auto b = batchOf({longColumn(kBool, {T, T, T, F, F, F, N, N, N}), longColumn(kBool, {T, F, N, T, F, N, T, F, N})});
  // AND: FALSE dominates, then NULL.
  EXPECT_EQ(eval(call(ScalarOp::kAnd, {ref(0, kBool), ref(1, kBool)}), b),
            (V{"true", "false", "null", "false", "false", "false", "null", "false", "null"}));
  // OR: TRUE dominates, then NULL.
  EXPECT_EQ(eval(call(ScalarOp::kOr, {ref(0, kBool), ref(1, kBool)}), b),
            (V{"true", "true", "true", "true", "false", "null", "true", "null", "null"}));
  EXPECT_EQ(eval(call(ScalarOp::kNot, {ref(0, kBool)}), b),
            (V{"false", "false", "false", "true", "true", "true", "null", "null", "null"}));
  EXPECT_EQ(eval(call(ScalarOp::kIsNull, {ref(1, kBool)}), b),
            (V{"false", "false", "true", "false", "false", "true", "false", "false", "true"}));
  EXPECT_EQ(eval(call(ScalarOp::kIsNotNull, {ref(1, kBool)}), b),
            (V{"true", "true", "false", "true", "true", "false", "true", "true", "false"}));
  EXPECT_EQ(eval(call(ScalarOp::kIsTrue, {ref(0, kBool)}), b),
            (V{"true", "true", "true", "false", "false", "false", "false", "false", "false"}));
  EXPECT_EQ(eval(call(ScalarOp::kIsFalse, {ref(0, kBool)}), b),
            (V{"false", "false", "false", "true", "true", "true", "false", "false", "false"}));
  // Constant sides: NULL AND FALSE = FALSE; NULL OR TRUE = TRUE.
  EXPECT_EQ(eval(call(ScalarOp::kAnd, {makeNullLiteral(), makeBooleanLiteral(false)}), b).front(), "false");
  EXPECT_EQ(eval(call(ScalarOp::kOr, {makeNullLiteral(), makeBooleanLiteral(true)}), b).front(), "true");
}

TEST(Evaluation, LazyAndCase) {
  auto b = batchOf({longColumn(kInt, {10, 5, 3}), longColumn(kInt, {2, 0, 3})});
  // b <> 0 AND a / b > 1: the division is skipped where b = 0 (Flink short-circuits AND).
  const ExprPtr guard = call(ScalarOp::kNotEquals, {ref(1, kInt), lit(0)});
  const ExprPtr div = call(ScalarOp::kDivide, {ref(0, kInt), ref(1, kInt)});
  // 10/2=5 > 1 true; b=0 -> false; 3/3=1 > 1 false.
  EXPECT_EQ(eval(call(ScalarOp::kAnd, {guard, call(ScalarOp::kGreaterThan, {div, lit(1)})}), b), (V{"true", "false", "false"}));
  // CASE WHEN b <> 0 THEN a / b ELSE -1 END: 5, -1, 1.
  EXPECT_EQ(eval(call(ScalarOp::kCase, {guard, div, lit(-1)}), b), (V{"5", "-1", "1"}));
  // CASE without ELSE gives NULL: CASE WHEN a > 4 THEN 'big' END -> big, big, null.
  EXPECT_EQ(eval(call(ScalarOp::kCase, {call(ScalarOp::kGreaterThan, {ref(0, kInt), lit(4)}), str("big")}), b),
            (V{"big", "big", "null"}));
  // Branches of different types: CASE WHEN a > 4 THEN 1 ELSE 2.5 END -> DECIMAL(11, 1): 1.0, 1.0, 2.5.
  EXPECT_EQ(eval(call(ScalarOp::kCase, {call(ScalarOp::kGreaterThan, {ref(0, kInt), lit(4)}), lit(1), makeDecimalLiteral("2.5")}), b),
            (V{"1.0", "1.0", "2.5"}));
  // COALESCE(NULL-able x, y): first non-NULL.
  auto c = batchOf({longColumn(kInt, {std::nullopt, 5, std::nullopt}), longColumn(kInt, {2, 6, std::nullopt})});
  EXPECT_EQ(eval(call(ScalarOp::kCoalesce, {ref(0, kInt), ref(1, kInt)}), c), (V{"2", "5", "null"}));
  EXPECT_EQ(eval(call(ScalarOp::kCoalesce, {ref(0, kInt), ref(1, kInt), lit(0)}), c), (V{"2", "5", "0"}));
}

TEST(Evaluation, InList) {
  auto b = batchOf({longColumn(kInt, {1, 2, std::nullopt})});
  EXPECT_EQ(eval(call(ScalarOp::kIn, {ref(0, kInt), lit(1), lit(3)}), b), (V{"true", "false", "null"}));
  EXPECT_EQ(eval(call(ScalarOp::kNotIn, {ref(0, kInt), lit(1), lit(3)}), b), (V{"false", "true", "null"}));
  // x IN (1, NULL): TRUE when x = 1, else NULL (never FALSE).
  EXPECT_EQ(eval(call(ScalarOp::kIn, {ref(0, kInt), lit(1), makeNullLiteral()}), b), (V{"true", "null", "null"}));
  // Non-constant candidates: x IN (y): 1 = 1 true, 2 = 1 false.
  auto c = batchOf({longColumn(kInt, {1, 2}), longColumn(kInt, {1, 1})});
  EXPECT_EQ(eval(call(ScalarOp::kIn, {ref(0, kInt), ref(1, kInt)}), c), (V{"true", "false"}));
  auto s = batchOf({stringColumn({"fr", "de", std::nullopt})});
  EXPECT_EQ(eval(call(ScalarOp::kIn, {ref(0, LogicalType::string()), str("de"), str("it")}), s), (V{"false", "true", "null"}));
}

TEST(Evaluation, Like) {
  auto b = batchOf({stringColumn({"abc", "a%c", "", "aXbXc", "\xc3\xa9", std::nullopt})});
  const LogicalType kS = LogicalType::string();
  auto like = [&](const std::string& pattern) { return eval(call(ScalarOp::kLike, {ref(0, kS), str(pattern)}), b); };
  EXPECT_EQ(like("a%"), (V{"true", "true", "false", "true", "false", "null"}));
  EXPECT_EQ(like("%c"), (V{"true", "true", "false", "true", "false", "null"}));
  EXPECT_EQ(like("%b%"), (V{"true", "false", "false", "true", "false", "null"}));
  EXPECT_EQ(like("a_c"), (V{"true", "true", "false", "false", "false", "null"}));
  EXPECT_EQ(like("%"), (V{"true", "true", "true", "true", "true", "null"}));
  // '_' is one character, also a two-byte one.
  EXPECT_EQ(like("_"), (V{"false", "false", "false", "false", "true", "null"}));
  // Backtracking: 'aXbXc' LIKE '%X%c' and 'a%b_c' (% = "X", _ = "X"), not 'a%X_c'.
  EXPECT_EQ(like("%X%c")[3], "true");
  EXPECT_EQ(like("a%b_c")[3], "true");
  EXPECT_EQ(like("a%X_c")[3], "false");
  EXPECT_EQ(like("abc"), (V{"true", "false", "false", "false", "false", "null"}));
  // ESCAPE makes '%' literal: only 'a%c' matches 'a\%c'.
  EXPECT_EQ(eval(call(ScalarOp::kLike, {ref(0, kS), str("a\\%c"), str("\\")}), b),
            (V{"false", "true", "false", "false", "false", "null"}));
  EXPECT_EQ(eval(call(ScalarOp::kNotLike, {ref(0, kS), str("a%")}), b), (V{"false", "false", "true", "false", "true", "null"}));
  EXPECT_THROW(ExprEvaluator(call(ScalarOp::kLike, {ref(0, kS), str("a\\x"), str("\\")})), UserError);
}

TEST(Evaluation, ConstantFoldingAndFilter) {
  auto b = batchOf({longColumn(kInt, {1, 5, std::nullopt, 7})});
  // A constant expression is computed once and broadcast: UPPER('ab') || 'c'.
  EXPECT_EQ(eval(call(ScalarOp::kConcat, {call(ScalarOp::kUpper, {str("ab")}), str("c")}), b), (V{"ABc", "ABc", "ABc", "ABc"}));
  // 1 / 0 in a branch never taken is not an error.
  EXPECT_EQ(eval(call(ScalarOp::kCase, {makeBooleanLiteral(false), call(ScalarOp::kDivide, {lit(1), lit(0)}), lit(2)}), b).front(), "2");
  // Filter: NULL counts as false. a > 2 keeps rows 1 and 3.
  std::vector<uint32_t> sel;
  ExprEvaluator(call(ScalarOp::kGreaterThan, {ref(0, kInt), lit(2)})).evaluateFilter(b, sel);
  EXPECT_EQ(sel, (std::vector<uint32_t>{1, 3}));
  ExprEvaluator(makeBooleanLiteral(true)).evaluateFilter(b, sel);
  EXPECT_EQ(sel.size(), 4u);
  // A bare input reference: evaluate() returns the column's values.
  ExprEvaluator r(ref(0, kInt));
  EXPECT_EQ(r.inputIndex(), 0);
  EXPECT_EQ(testing::render(r.evaluate(b)), (V{"1", "5", "null", "7"}));
}

}  // namespace
}  // namespace sluice::table

namespace sluice::table {
namespace {

TEST(Evaluation, ScratchReuseAcrossBatches) {
  using testing::batchOf;
  using testing::longColumn;
  using testing::stringColumn;
  const LogicalType kInt = LogicalType::integer();
  const LogicalType kS = LogicalType::string();
  // CASE WHEN a > 1 THEN s || '!' END, then the same with fewer rows: registers are reused, and rows
  // not taken must be NULL again (no leftovers from the first batch).
  const ExprPtr e = testing::call(ScalarOp::kCase, {testing::call(ScalarOp::kGreaterThan, {testing::ref(0, kInt), testing::lit(1)}),
                                                    testing::call(ScalarOp::kConcat, {testing::ref(1, kS), testing::str("!")})});
  ExprEvaluator ev(e);
  EvalScratch scratch;
  auto first = batchOf({longColumn(kInt, {2, 3, 4}), stringColumn({"a", "b", "c"})});
  auto second = batchOf({longColumn(kInt, {0, 5}), stringColumn({"x", "y"})});
  EXPECT_EQ(testing::render(ev.evaluate(first, &scratch)), (V{"a!", "b!", "c!"}));
  EXPECT_EQ(testing::render(ev.evaluate(second, &scratch)), (V{"null", "y!"}));
  EXPECT_EQ(testing::render(ev.evaluate(first, &scratch)), (V{"a!", "b!", "c!"}));
}

}  // namespace
}  // namespace sluice::table
