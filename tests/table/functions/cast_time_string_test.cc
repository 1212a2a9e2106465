// CAST matrix, time functions and string functions. Expected texts follow Flink 1.15+: CAST to
// STRING of BOOLEAN is "TRUE"/"FALSE", of TIMESTAMP(p) "yyyy-MM-dd HH:mm:ss" plus p fraction digits,
// of DOUBLE Java's Double.toString; invalid text fails CAST and gives NULL for TRY_CAST.
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
using testing::ts;
using types::LogicalType;
using V = std::vector<std::string>;

const LogicalType kInt = LogicalType::integer();
const LogicalType kBig = LogicalType::bigint();
const LogicalType kS = LogicalType::string();
const LogicalType kTs = LogicalType::timestamp(3);

TEST(Cast, ToString) {
  auto b = batchOf({longColumn(kInt, {42, -7}), doubleColumn({1.5, 1e7}), longColumn(LogicalType::boolean(), {1, 0}),
                    longColumn(LogicalType::decimal(5, 2), {150, -5}),
                    longColumn(kTs, {ts("2024-03-05 10:20:30.250"), ts("1969-12-31 23:59:59")})});
  EXPECT_EQ(eval(makeCast(ref(0, kInt), kS), b), (V{"42", "-7"}));
  EXPECT_EQ(eval(makeCast(ref(1, LogicalType::doubleType()), kS), b), (V{"1.5", "1.0E7"}));
  EXPECT_EQ(eval(makeCast(ref(2, LogicalType::boolean()), kS), b), (V{"TRUE", "FALSE"}));
  EXPECT_EQ(eval(makeCast(ref(3, LogicalType::decimal(5, 2)), kS), b), (V{"1.50", "-0.05"}));
  EXPECT_EQ(eval(makeCast(ref(4, kTs), kS), b), (V{"2024-03-05 10:20:30.250", "1969-12-31 23:59:59.000"}));
  // VARCHAR(n) truncates, CHAR(n) pads (explicit casts, Flink 1.15+).
  auto s = batchOf({stringColumn({"abcdef", "ab"})});
  EXPECT_EQ(eval(makeCast(ref(0, kS), LogicalType::varchar(3)), s), (V{"abc", "ab"}));
  EXPECT_EQ(eval(makeCast(ref(0, kS), LogicalType::charType(4)), s), (V{"abcd", "ab  "}));
}

TEST(Cast, FromString) {
  auto b = batchOf({stringColumn({" 42 ", "-7", std::nullopt})});
  EXPECT_EQ(eval(makeCast(ref(0, kS), kInt), b), (V{"42", "-7", "null"}));
  EXPECT_EQ(eval(makeCast(ref(0, kS), LogicalType::doubleType()), b), (V{"42.0", "-7.0", "null"}));
  // DECIMAL(4, 2): '1.255' -> 1.26 (HALF_UP); '123.4' needs 5 digits -> NULL.
  auto d = batchOf({stringColumn({"1.255", "123.4", "-0.5"})});
  EXPECT_EQ(eval(makeCast(ref(0, kS), LogicalType::decimal(4, 2)), d), (V{"1.26", "null", "-0.50"}));
  EXPECT_EQ(eval(makeCast(ref(0, kS), LogicalType::boolean()), batchOf({stringColumn({"true", "FALSE", "1"})})),
            (V{"true", "false", "true"}));
  EXPECT_EQ(eval(makeCast(ref(0, kS), kTs), batchOf({stringColumn({"2024-03-05 10:20:30", "2024-03-05 10:20:30.5"})})),
            (V{"2024-03-05T10:20:30", "2024-03-05T10:20:30.500"}));
  // Invalid text: CAST fails naming the value, TRY_CAST gives NULL.
  auto bad = batchOf({stringColumn({"12", "abc"})});
  try {
    ExprEvaluator(makeCast(ref(0, kS), kInt)).evaluate(bad);
    FAIL() << "CAST('abc' AS INT) must fail";
  } catch (const UserError& e) {
    EXPECT_THAT(std::string(e.what()), ::testing::HasSubstr("'abc'"));
  }
  EXPECT_EQ(eval(makeTryCast(ref(0, kS), kInt), bad), (V{"12", "null"}));
  // Out of INT range is invalid too: 2147483648.
  EXPECT_EQ(eval(makeTryCast(ref(0, kS), kInt), batchOf({stringColumn({"2147483648"})})), (V{"null"}));
  // CAST inside a CASE branch that is not taken does not fail.
  const ExprPtr is_num = call(ScalarOp::kNotEquals, {ref(0, kS), str("abc")});
  EXPECT_EQ(eval(call(ScalarOp::kCase, {is_num, makeCast(ref(0, kS), kInt), lit(0)}), bad), (V{"12", "0"}));
}

TEST(Cast, Numeric) {
  const LogicalType kD = LogicalType::doubleType();
  auto d = batchOf({doubleColumn({3.99, -3.99, 1e20})});
  // Java (int) truncates toward zero and saturates: 3, -3, 2147483647.
  EXPECT_EQ(eval(makeCast(ref(0, kD), kInt), d), (V{"3", "-3", "2147483647"}));
  // DOUBLE -> DECIMAL(5, 1) HALF_UP: 4.0, -4.0, NULL (too many digits).
  EXPECT_EQ(eval(makeCast(ref(0, kD), LogicalType::decimal(5, 1)), d), (V{"4.0", "-4.0", "null"}));
  // DECIMAL -> INT truncates: 2.99 -> 2, -2.99 -> -2.  DECIMAL -> DOUBLE exact: 2.99.
  const LogicalType d3_2 = LogicalType::decimal(3, 2);
  auto dec = batchOf({longColumn(d3_2, {299, -299})});
  EXPECT_EQ(eval(makeCast(ref(0, d3_2), kInt), dec), (V{"2", "-2"}));
  EXPECT_EQ(eval(makeCast(ref(0, d3_2), kD), dec), (V{"2.99", "-2.99"}));
  // BIGINT -> INT keeps the low 32 bits: 4294967297 = 2^32 + 1 -> 1.
  auto big = batchOf({longColumn(kBig, {4294967297LL, 5})});
  EXPECT_EQ(eval(makeCast(ref(0, kBig), kInt), big), (V{"1", "5"}));
  // INT -> DECIMAL(5, 2): 123 -> 123.00; 1234 needs 6 digits -> NULL.
  auto i = batchOf({longColumn(kInt, {123, 1234, 0})});
  EXPECT_EQ(eval(makeCast(ref(0, kInt), LogicalType::decimal(5, 2)), i), (V{"123.00", "null", "0.00"}));
  EXPECT_EQ(eval(makeCast(ref(0, kInt), LogicalType::boolean()), i), (V{"true", "true", "false"}));
  EXPECT_EQ(eval(makeCast(ref(0, kInt), kD), i), (V{"123.0", "1234.0", "0.0"}));
}

TEST(TimeFunctions, ToTimestampAndDateFormat) {
  auto b = batchOf({stringColumn({"2024-03-05 10:20:30", "not a time", std::nullopt, "2024-02-30 00:00:00"})});
  // Unparsable text gives NULL (as does an impossible date).
  EXPECT_EQ(eval(call(ScalarOp::kToTimestamp, {ref(0, kS)}), b), (V{"2024-03-05T10:20:30", "null", "null", "null"}));
  auto f = batchOf({stringColumn({"05/03/2024 10:20", "5/3/2024 10:20"})});
  // dd/MM/yyyy is strict about two digits.
  EXPECT_EQ(eval(call(ScalarOp::kToTimestamp, {ref(0, kS), str("dd/MM/yyyy HH:mm")}), f), (V{"2024-03-05T10:20", "null"}));
  EXPECT_EQ(eval(call(ScalarOp::kToTimestamp, {ref(0, kS), str("d/M/yyyy HH:mm")}), f),
            (V{"2024-03-05T10:20", "2024-03-05T10:20"}));
  auto t = batchOf({longColumn(kTs, {ts("2024-03-05 09:08:07.006"), ts("1969-12-31 23:30:00"), std::nullopt})});
  EXPECT_EQ(eval(call(ScalarOp::kDateFormat, {ref(0, kTs), str("yyyy-MM-dd HH:mm:ss.SSS")}), t),
            (V{"2024-03-05 09:08:07.006", "1969-12-31 23:30:00.000", "null"}));
  EXPECT_EQ(eval(call(ScalarOp::kDateFormat, {ref(0, kTs), str("yyyyMMdd'T'HH")}), t), (V{"20240305T09", "19691231T23", "null"}));
  // 2024-03-05 was a Tuesday; 1969-12-31 a Wednesday.
  EXPECT_EQ(eval(call(ScalarOp::kDateFormat, {ref(0, kTs), str("EEE MMM d h:mm a")}), t),
            (V{"Tue Mar 5 9:08 AM", "Wed Dec 31 11:30 PM", "null"}));
  // DATE_FORMAT of a string parses it first.
  EXPECT_EQ(eval(call(ScalarOp::kDateFormat, {str("2024-03-05 10:20:30"), str("HH:mm")}), t).front(), "10:20");
  EXPECT_EQ(eval(call(ScalarOp::kHour, {ref(0, kTs)}), t), (V{"9", "23", "null"}));
  EXPECT_EQ(eval(call(ScalarOp::kMinute, {ref(0, kTs)}), t), (V{"8", "30", "null"}));
  EXPECT_EQ(eval(call(ScalarOp::kYear, {ref(0, kTs)}), t), (V{"2024", "1969", "null"}));
  EXPECT_EQ(eval(call(ScalarOp::kDayOfMonth, {ref(0, kTs)}), t), (V{"5", "31", "null"}));
  // TIMESTAMP + INTERVAL '1' MINUTE (60000 ms); - INTERVAL '1' DAY.
  EXPECT_EQ(eval(call(ScalarOp::kPlus, {ref(0, kTs), makeIntervalLiteral(60000)}), t),
            (V{"2024-03-05T09:09:07.006", "1969-12-31T23:31", "null"}));
  EXPECT_EQ(eval(call(ScalarOp::kMinus, {ref(0, kTs), makeIntervalLiteral(86400000)}), t),
            (V{"2024-03-04T09:08:07.006", "1969-12-30T23:30", "null"}));
  EXPECT_THROW(ExprEvaluator(call(ScalarOp::kDateFormat, {ref(0, kTs), str("yyyy-QQ")})), UserError);
}

TEST(StringFunctions, Basics) {
  auto b = batchOf({stringColumn({"Hello", "  ab  ", std::nullopt, "h\xc3\xa9llo"})});
  // Non-ASCII letters too, as Java's toUpperCase: é (C3 A9) -> É (C3 89).
  EXPECT_EQ(eval(call(ScalarOp::kUpper, {ref(0, kS)}), b), (V{"HELLO", "  AB  ", "null", "H\xc3\x89LLO"}));
  EXPECT_EQ(eval(call(ScalarOp::kLower, {ref(0, kS)}), b), (V{"hello", "  ab  ", "null", "h\xc3\xa9llo"}));
  // Characters, not bytes: 'héllo' has 5.
  EXPECT_EQ(eval(call(ScalarOp::kCharLength, {ref(0, kS)}), b), (V{"5", "6", "null", "5"}));
  EXPECT_EQ(eval(call(ScalarOp::kTrim, {ref(0, kS)}), b), (V{"Hello", "ab", "null", "h\xc3\xa9llo"}));
  EXPECT_EQ(eval(call(ScalarOp::kLtrim, {ref(0, kS)}), b), (V{"Hello", "ab  ", "null", "h\xc3\xa9llo"}));
  EXPECT_EQ(eval(call(ScalarOp::kRtrim, {ref(0, kS)}), b), (V{"Hello", "  ab", "null", "h\xc3\xa9llo"}));
  // TRIM(LEADING 'x' FROM s) as the planner builds it: (s, chars, mode 1).
  auto x = batchOf({stringColumn({"xxaxx"})});
  EXPECT_EQ(eval(call(ScalarOp::kTrim, {ref(0, kS), str("x"), lit(1)}), x), (V{"axx"}));
  EXPECT_EQ(eval(call(ScalarOp::kTrim, {ref(0, kS), str("x")}), x), (V{"a"}));
  // 'x' || s with NULL -> NULL.
  EXPECT_EQ(eval(call(ScalarOp::kConcat, {str("x"), ref(0, kS), str("!")}), b), (V{"xHello!", "x  ab  !", "null", "xh\xc3\xa9llo!"}));
}

TEST(StringFunctions, SubstringAndPad) {
  auto b = batchOf({stringColumn({"hello", "h\xc3\xa9llo", std::nullopt})});
  // SUBSTRING('hello', 2, 3) = 'ell'; on 'héllo' -> 'éll' (characters).
  EXPECT_EQ(eval(call(ScalarOp::kSubstring, {ref(0, kS), lit(2), lit(3)}), b), (V{"ell", "\xc3\xa9ll", "null"}));
  // Without length: to the end.  Negative start counts from the end: -3 -> 'llo'.
  EXPECT_EQ(eval(call(ScalarOp::kSubstring, {ref(0, kS), lit(4)}), b), (V{"lo", "lo", "null"}));
  EXPECT_EQ(eval(call(ScalarOp::kSubstring, {ref(0, kS), lit(-3)}), b), (V{"llo", "llo", "null"}));
  // Start beyond the end: empty.
  EXPECT_EQ(eval(call(ScalarOp::kSubstring, {ref(0, kS), lit(9), lit(2)}), b), (V{"", "", "null"}));
  auto p = batchOf({stringColumn({"hi", "hello"})});
  // LPAD('hi', 5, 'xy') = 'xyxhi'; LPAD('hello', 5, 'xy') = 'hello'.
  EXPECT_EQ(eval(call(ScalarOp::kLpad, {ref(0, kS), lit(5), str("xy")}), p), (V{"xyxhi", "hello"}));
  EXPECT_EQ(eval(call(ScalarOp::kRpad, {ref(0, kS), lit(5), str("xy")}), p), (V{"hixyx", "hello"}));
  // Shorter target truncates: LPAD('hello', 3, 'x') = 'hel'.
  EXPECT_EQ(eval(call(ScalarOp::kLpad, {ref(0, kS), lit(3), str("x")}), p), (V{"xhi", "hel"}));
  // Negative length or empty pad: NULL.
  EXPECT_EQ(eval(call(ScalarOp::kLpad, {ref(0, kS), lit(-1), str("x")}), p), (V{"null", "null"}));
  EXPECT_EQ(eval(call(ScalarOp::kRpad, {ref(0, kS), lit(4), str("")}), p), (V{"null", "null"}));
}

}  // namespace
}  // namespace sluice::table
