// Result types of makeCall / makeCast, worked out by hand from Flink's rules:
//  - LogicalTypeMerging (flink-table-common): findAdditionDecimalType, findMultiplicationDecimalType,
//    findDivisionDecimalType, findModuloDecimalType, findRoundDecimalType, findCommonType;
//  - Calcite's SqlStdOperatorTable return types as Flink uses them (integer '/' stays integral,
//    MOD takes the divisor's type, UPPER keeps its argument's type, comparisons are BOOLEAN);
//  - Flink docs "System (Built-in) Functions" (CHAR_LENGTH INT, HOUR/EXTRACT BIGINT, TO_TIMESTAMP
//    TIMESTAMP(3), DATE_FORMAT STRING).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/error.h"
#include "table/functions/expression.h"
#include "test_util.h"

namespace sluice::table {
namespace {

using testing::call;
using testing::lit;
using testing::ref;
using testing::str;
using types::LogicalType;

std::string typeOf(ScalarOp op, std::vector<ExprPtr> args) { return makeCall(op, std::move(args))->type.toString(); }

const LogicalType kInt = LogicalType::integer();
const LogicalType kIntNN = LogicalType::integer(false);
const LogicalType kBig = LogicalType::bigint();
const LogicalType kDouble = LogicalType::doubleType();
const LogicalType kString = LogicalType::string();
const LogicalType kTs = LogicalType::timestamp(3);

TEST(TypeInference, IntegerArithmetic) {
  // INT op INT -> INT; NOT NULL only when both are NOT NULL.
  EXPECT_EQ(typeOf(ScalarOp::kPlus, {ref(0, kIntNN), lit(1)}), "INT NOT NULL");
  EXPECT_EQ(typeOf(ScalarOp::kPlus, {ref(0, kInt), lit(1)}), "INT");
  // Flink's '/' on two INTs stays INT (truncating division).
  EXPECT_EQ(typeOf(ScalarOp::kDivide, {ref(0, kInt), ref(1, kInt)}), "INT");
  // INT op BIGINT -> BIGINT.
  EXPECT_EQ(typeOf(ScalarOp::kTimes, {ref(0, kInt), ref(1, kBig)}), "BIGINT");
  // Anything with DOUBLE -> DOUBLE.
  EXPECT_EQ(typeOf(ScalarOp::kMinus, {ref(0, kInt), ref(1, kDouble)}), "DOUBLE");
  EXPECT_EQ(typeOf(ScalarOp::kPlus, {ref(0, LogicalType::decimal(5, 2)), ref(1, kDouble)}), "DOUBLE");
  EXPECT_EQ(typeOf(ScalarOp::kNegate, {ref(0, kBig)}), "BIGINT");
  EXPECT_EQ(typeOf(ScalarOp::kAbs, {ref(0, LogicalType::decimal(5, 2))}), "DECIMAL(5, 2)");
}

TEST(TypeInference, DecimalArithmetic) {
  const LogicalType d10_2 = LogicalType::decimal(10, 2), d5_3 = LogicalType::decimal(5, 3);
  // +: scale max(2,3)=3, precision max(10-2, 5-3) + 3 + 1 = 8 + 4 = 12.
  EXPECT_EQ(typeOf(ScalarOp::kPlus, {ref(0, d10_2), ref(1, d5_3)}), "DECIMAL(12, 3)");
  // *: precision 10 + 5 + 1 = 16, scale 2 + 3 = 5.
  EXPECT_EQ(typeOf(ScalarOp::kTimes, {ref(0, d10_2), ref(1, d5_3)}), "DECIMAL(16, 5)");
  // /: scale max(6, 2 + 5 + 1) = 8, precision 10 - 2 + 3 + 8 = 19.
  EXPECT_EQ(typeOf(ScalarOp::kDivide, {ref(0, d10_2), ref(1, d5_3)}), "DECIMAL(19, 8)");
  // INT counts as DECIMAL(10, 0): scale 2, precision max(10, 5 - 2) + 2 + 1 = 13.
  EXPECT_EQ(typeOf(ScalarOp::kPlus, {ref(0, kInt), ref(1, LogicalType::decimal(5, 2))}), "DECIMAL(13, 2)");
  // BIGINT counts as DECIMAL(19, 0): * gives precision 19 + 20 + 1 = 40 > 38, so adjusted:
  // integer digits 40 - 2 = 38, scale max(38 - 38, min(2, 6)) = 2 -> DECIMAL(38, 2).
  EXPECT_EQ(typeOf(ScalarOp::kTimes, {ref(0, kBig), ref(1, LogicalType::decimal(20, 2))}), "DECIMAL(38, 2)");
  // Flink's own LogicalTypeMergingTest case: addition of (32, 8) and (38, 8) -> (38, 7):
  // precision max(24, 30) + 8 + 1 = 39 > 38, digits 31, scale max(38 - 31, min(8, 6)) = 7.
  EXPECT_EQ(typeOf(ScalarOp::kPlus, {ref(0, LogicalType::decimal(32, 8)), ref(1, LogicalType::decimal(38, 8))}),
            "DECIMAL(38, 7)");
}

TEST(TypeInference, ModAndRound) {
  // MOD takes the divisor's type for integers (Calcite NULLABLE_MOD).
  EXPECT_EQ(typeOf(ScalarOp::kMod, {ref(0, kInt), ref(1, kBig)}), "BIGINT");
  EXPECT_EQ(typeOf(ScalarOp::kMod, {ref(0, kBig), ref(1, kInt)}), "INT");
  // DECIMAL(10,2) MOD INT(=DECIMAL(10,0)): scale 2, precision min(8, 10) + 2 = 10.
  EXPECT_EQ(typeOf(ScalarOp::kMod, {ref(0, LogicalType::decimal(10, 2)), ref(1, kInt)}), "DECIMAL(10, 2)");
  EXPECT_THROW(makeCall(ScalarOp::kMod, {ref(0, kDouble), ref(1, kInt)}), UserError);
  // ROUND(DECIMAL(32, 8), 5) -> (1 + 32 - 8 + 5, 5) = (30, 5) (LogicalTypeMergingTest).
  EXPECT_EQ(typeOf(ScalarOp::kRound, {ref(0, LogicalType::decimal(32, 8)), lit(5)}), "DECIMAL(30, 5)");
  // ROUND(DECIMAL(10, 3)) rounds to 0 digits: (1 + 10 - 3 + 0, 0) = (8, 0).
  EXPECT_EQ(typeOf(ScalarOp::kRound, {ref(0, LogicalType::decimal(10, 3))}), "DECIMAL(8, 0)");
  EXPECT_EQ(typeOf(ScalarOp::kRound, {ref(0, kDouble), lit(2)}), "DOUBLE");
  EXPECT_EQ(typeOf(ScalarOp::kRound, {ref(0, kIntNN)}), "INT NOT NULL");
}

TEST(TypeInference, ComparisonsAndLogic) {
  EXPECT_EQ(typeOf(ScalarOp::kLessThan, {ref(0, kIntNN), makeApproxLiteral("1.5")}), "BOOLEAN NOT NULL");
  EXPECT_EQ(typeOf(ScalarOp::kEquals, {ref(0, kInt), ref(1, LogicalType::decimal(5, 2))}), "BOOLEAN");
  EXPECT_EQ(typeOf(ScalarOp::kIsNull, {ref(0, kInt)}), "BOOLEAN NOT NULL");
  EXPECT_EQ(typeOf(ScalarOp::kIsTrue, {ref(0, LogicalType::boolean())}), "BOOLEAN NOT NULL");
  EXPECT_EQ(typeOf(ScalarOp::kAnd, {ref(0, LogicalType::boolean()), makeBooleanLiteral(true)}), "BOOLEAN");
  EXPECT_EQ(typeOf(ScalarOp::kIn, {ref(0, kIntNN), lit(1), lit(2)}), "BOOLEAN NOT NULL");
  EXPECT_EQ(typeOf(ScalarOp::kBetween, {ref(0, kIntNN), lit(1), ref(1, kInt)}), "BOOLEAN");
  EXPECT_EQ(typeOf(ScalarOp::kLike, {ref(0, kString), str("a%")}), "BOOLEAN");
  try {
    makeCall(ScalarOp::kEquals, {ref(0, kInt), ref(1, kString)});
    FAIL() << "comparing INT with STRING must fail";
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()),
              "Cannot apply '=' to arguments of type '<INT> = <STRING>'. Supported form(s): "
              "'<COMPARABLE_TYPE> = <COMPARABLE_TYPE>'");
  }
  try {
    makeCall(ScalarOp::kPlus, {ref(0, kInt), ref(1, kString)});
    FAIL() << "INT + STRING must fail";
  } catch (const UserError& e) {
    EXPECT_THAT(std::string(e.what()), ::testing::StartsWith("Cannot apply '+' to arguments of type '<INT> + <STRING>'. "
                                                             "Supported form(s): '<NUMERIC> + <NUMERIC>'"));
  }
  EXPECT_THROW(makeCall(ScalarOp::kAnd, {ref(0, kInt), makeBooleanLiteral(true)}), UserError);
}

TEST(TypeInference, CaseCoalesceAndStrings) {
  const ExprPtr cond = ref(0, LogicalType::boolean(false));
  // Common type of INT NOT NULL and DECIMAL(2, 1) NOT NULL: DECIMAL with max(10, 1) integer digits
  // and scale 1 -> DECIMAL(11, 1).
  EXPECT_EQ(typeOf(ScalarOp::kCase, {cond, lit(1), makeDecimalLiteral("2.5")}), "DECIMAL(11, 1) NOT NULL");
  // CHAR(1) and CHAR(3) differ in length -> VARCHAR(3) (no padding).
  EXPECT_EQ(typeOf(ScalarOp::kCase, {cond, str("a"), str("abc")}), "VARCHAR(3) NOT NULL");
  // No ELSE: NULL when nothing matches.
  EXPECT_EQ(typeOf(ScalarOp::kCase, {cond, lit(1)}), "INT");
  EXPECT_EQ(typeOf(ScalarOp::kCase, {cond, lit(1), makeNullLiteral()}), "INT");
  // COALESCE is NOT NULL as soon as one argument is.
  EXPECT_EQ(typeOf(ScalarOp::kCoalesce, {ref(0, kInt), lit(0)}), "INT NOT NULL");
  EXPECT_EQ(typeOf(ScalarOp::kCoalesce, {ref(0, kInt), ref(1, kBig)}), "BIGINT");
  EXPECT_THROW(makeCall(ScalarOp::kCoalesce, {ref(0, kInt), ref(1, kString)}), UserError);
  // || sums the lengths.
  EXPECT_EQ(typeOf(ScalarOp::kConcat, {str("a"), str("bc")}), "CHAR(3) NOT NULL");
  EXPECT_EQ(typeOf(ScalarOp::kConcat, {str("a"), ref(0, kString)}), "STRING");
  EXPECT_EQ(typeOf(ScalarOp::kCharLength, {ref(0, kString)}), "INT");
  EXPECT_EQ(typeOf(ScalarOp::kUpper, {ref(0, kString)}), "STRING");
  EXPECT_EQ(typeOf(ScalarOp::kSubstring, {ref(0, kString), lit(1), lit(2)}), "STRING");
  EXPECT_EQ(typeOf(ScalarOp::kLpad, {ref(0, LogicalType::string(false)), lit(5), str("x")}), "STRING");
}

TEST(TypeInference, TimeFunctionsAndCasts) {
  EXPECT_EQ(typeOf(ScalarOp::kToTimestamp, {str("2024-01-01 00:00:00")}), "TIMESTAMP(3)");
  EXPECT_EQ(typeOf(ScalarOp::kDateFormat, {ref(0, kTs), str("yyyy")}), "STRING");
  EXPECT_EQ(typeOf(ScalarOp::kHour, {ref(0, LogicalType::timestamp(3, false))}), "BIGINT NOT NULL");
  EXPECT_EQ(typeOf(ScalarOp::kPlus, {ref(0, kTs), makeIntervalLiteral(60000)}), "TIMESTAMP(3)");
  EXPECT_EQ(typeOf(ScalarOp::kMinus, {ref(0, LogicalType::timestamp(3, false)), makeIntervalLiteral(1000)}),
            "TIMESTAMP(3) NOT NULL");
  EXPECT_EQ(makeCast(ref(0, kIntNN), kString)->type.toString(), "STRING NOT NULL");
  EXPECT_EQ(makeTryCast(ref(0, LogicalType::string(false)), kInt)->type.toString(), "INT");
  try {
    makeCast(ref(0, kTs), kBig);
    FAIL() << "TIMESTAMP -> BIGINT is not a supported cast";
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()), "Cast function cannot convert value of type TIMESTAMP(3) to type BIGINT");
  }
}

TEST(TypeInference, ArityAndNames) {
  try {
    makeCall(ScalarOp::kLpad, {str("a"), lit(3)});
    FAIL() << "LPAD needs 3 arguments";
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()), "Invalid number of arguments to function 'LPAD'. Was expecting 3 arguments");
  }
  EXPECT_EQ(scalarFunctionByName("CHARACTER_LENGTH"), ScalarOp::kCharLength);
  EXPECT_EQ(scalarFunctionByName("SUBSTR"), ScalarOp::kSubstring);
  EXPECT_EQ(scalarFunctionByName("DATE_FORMAT"), ScalarOp::kDateFormat);
  EXPECT_FALSE(scalarFunctionByName("NO_SUCH_FUNCTION").has_value());
}

TEST(TypeInference, Literals) {
  EXPECT_EQ(makeIntegerLiteral("42")->type.toString(), "INT NOT NULL");
  EXPECT_EQ(makeIntegerLiteral("2147483648")->type.toString(), "BIGINT NOT NULL");
  // 1.5: unscaled 15 -> precision 2, scale 1.  12.345 -> (5, 3).
  EXPECT_EQ(makeDecimalLiteral("1.5")->type.toString(), "DECIMAL(2, 1) NOT NULL");
  EXPECT_EQ(makeDecimalLiteral("12.345")->type.toString(), "DECIMAL(5, 3) NOT NULL");
  EXPECT_EQ(std::get<int64_t>(makeDecimalLiteral("12.345")->literal), 12345);
  EXPECT_EQ(makeApproxLiteral("1e3")->type.toString(), "DOUBLE NOT NULL");
  EXPECT_EQ(makeStringLiteral("abc")->type.toString(), "CHAR(3) NOT NULL");
  // 'é' is one character (two UTF-8 bytes).
  EXPECT_EQ(makeStringLiteral("\xc3\xa9")->type.toString(), "CHAR(1) NOT NULL");
  EXPECT_EQ(makeTimestampLiteral("2024-03-05 10:20:30")->type.toString(), "TIMESTAMP(0) NOT NULL");
  EXPECT_EQ(makeTimestampLiteral("2024-03-05 10:20:30.5")->type.toString(), "TIMESTAMP(1) NOT NULL");
  EXPECT_EQ(makeIntervalLiteral(60000)->type.toString(), "INTERVAL SECOND(3) NOT NULL");
  EXPECT_THROW(makeTimestampLiteral("2024-02-30 00:00:00"), UserError);
}

TEST(TypeInference, ToString) {
  const std::vector<std::string> names = {"a", "b"};
  const ExprPtr plus = call(ScalarOp::kPlus, {ref(0, kInt), lit(1)});
  EXPECT_EQ(plus->toString(), "+($0, 1)");
  EXPECT_EQ(plus->toString(&names), "+(a, 1)");
  EXPECT_EQ(call(ScalarOp::kUpper, {ref(1, kString)})->toString(), "UPPER($1)");
  EXPECT_EQ(makeCast(ref(0, kInt), kString)->toString(), "CAST($0 AS STRING)");
  EXPECT_EQ(call(ScalarOp::kConcat, {str("it's"), ref(1, kString)})->toString(&names), "||('it''s', b)");
  EXPECT_EQ(call(ScalarOp::kIsNull, {makeDecimalLiteral("1.50")})->toString(), "IS NULL(1.50)");
}

// TINYINT / SMALLINT / FLOAT: integers take the wider operand (Calcite's leastRestrictive), FLOAT wins
// over integers, DOUBLE over FLOAT, FLOAT with DECIMAL is DOUBLE; SUM keeps the argument type.
TEST(TypeInference, SmallIntegersAndFloat) {
  const LogicalType kTiny = LogicalType::tinyint(), kSmall = LogicalType::smallint(), kFloat = LogicalType::floatType();
  EXPECT_EQ(typeOf(ScalarOp::kPlus, {ref(0, kTiny), ref(1, kTiny)}), "TINYINT");
  EXPECT_EQ(typeOf(ScalarOp::kPlus, {ref(0, kTiny), ref(1, kSmall)}), "SMALLINT");
  EXPECT_EQ(typeOf(ScalarOp::kTimes, {ref(0, kSmall), lit(2)}), "INT");
  EXPECT_EQ(typeOf(ScalarOp::kPlus, {ref(0, kFloat), ref(1, kBig)}), "FLOAT");
  EXPECT_EQ(typeOf(ScalarOp::kPlus, {ref(0, kFloat), ref(1, kDouble)}), "DOUBLE");
  EXPECT_EQ(typeOf(ScalarOp::kPlus, {ref(0, kFloat), ref(1, LogicalType::decimal(5, 2))}), "DOUBLE");
  // TINYINT counts as DECIMAL(3, 0): scale 2, precision max(3, 5 - 2) + 2 + 1 = 6.
  EXPECT_EQ(typeOf(ScalarOp::kPlus, {ref(0, kTiny), ref(1, LogicalType::decimal(5, 2))}), "DECIMAL(6, 2)");
  EXPECT_EQ(typeOf(ScalarOp::kNegate, {ref(0, kTiny)}), "TINYINT");
  EXPECT_EQ(findCommonType({kTiny, kSmall})->toString(), "SMALLINT");
  EXPECT_EQ(findCommonType({kFloat, LogicalType::integer()})->toString(), "FLOAT");
  EXPECT_EQ(findCommonType({kFloat, LogicalType::decimal(10, 2)})->toString(), "DOUBLE");
  EXPECT_TRUE(supportsExplicitCast(LogicalType::string(), kTiny));
  EXPECT_TRUE(supportsExplicitCast(LogicalType::timestamp(3), LogicalType::date()));
  EXPECT_FALSE(supportsExplicitCast(LogicalType::date(), LogicalType::time()));
}

TEST(TypeInference, DateAndTime) {
  const LogicalType kDate = LogicalType::date(false), kTime = LogicalType::time(0, false);
  const LogicalType kIv = LogicalType::intervalDayTime(false);
  EXPECT_EQ(typeOf(ScalarOp::kPlus, {ref(0, kDate), ref(1, kIv)}), "DATE NOT NULL");
  EXPECT_EQ(typeOf(ScalarOp::kMinus, {ref(0, kTime), ref(1, kIv)}), "TIME(0) NOT NULL");
  EXPECT_EQ(typeOf(ScalarOp::kYear, {ref(0, kDate)}), "BIGINT NOT NULL");
  EXPECT_EQ(typeOf(ScalarOp::kHour, {ref(0, kTime)}), "BIGINT NOT NULL");
  EXPECT_THROW(typeOf(ScalarOp::kYear, {ref(0, kTime)}), UserError);
  EXPECT_THROW(typeOf(ScalarOp::kHour, {ref(0, kDate)}), UserError);
  EXPECT_EQ(typeOf(ScalarOp::kLessThan, {ref(0, kDate), ref(1, kDate)}), "BOOLEAN NOT NULL");
}

// Built-ins: DOUBLE_NULLABLE math (Calcite), ARG0_OR_EXACT_NO_SCALE for CEIL/FLOOR, Flink's explicit
// VARCHAR(n) digests, TIMESTAMPADD on DATE with a time unit -> TIMESTAMP(0) (SqlTimestampAddFunction),
// IFNULL nullable only when both are, GREATEST over the common type, IS DISTINCT FROM never NULL.
TEST(TypeInference, BuiltIns) {
  const LogicalType d4_2 = LogicalType::decimal(4, 2);
  EXPECT_EQ(typeOf(ScalarOp::kPower, {ref(0, kIntNN), lit(2)}), "DOUBLE NOT NULL");
  EXPECT_EQ(typeOf(ScalarOp::kSqrt, {ref(0, d4_2)}), "DOUBLE");
  EXPECT_EQ(typeOf(ScalarOp::kCeil, {ref(0, d4_2)}), "DECIMAL(4, 0)");
  EXPECT_EQ(typeOf(ScalarOp::kFloor, {ref(0, kBig)}), "BIGINT");
  EXPECT_EQ(typeOf(ScalarOp::kSign, {ref(0, d4_2)}), "DECIMAL(4, 2)");
  // TRUNCATE(DECIMAL(4, 2), 1) follows ROUND: DECIMAL(4 - 2 + 1 + 1, 1) = DECIMAL(4, 1).
  EXPECT_EQ(typeOf(ScalarOp::kTruncate, {ref(0, d4_2), lit(1)}), "DECIMAL(4, 1)");
  EXPECT_EQ(typeOf(ScalarOp::kMd5, {ref(0, kString)}), "VARCHAR(32)");
  EXPECT_EQ(typeOf(ScalarOp::kSha256, {str("a")}), "VARCHAR(64) NOT NULL");
  EXPECT_EQ(typeOf(ScalarOp::kRegexpExtract, {str("a"), str("b")}), "STRING");
  EXPECT_EQ(typeOf(ScalarOp::kLeft, {ref(0, LogicalType::varchar(10)), lit(2)}), "VARCHAR(10)");
  EXPECT_EQ(typeOf(ScalarOp::kIfNull, {ref(0, kInt), ref(1, kBig)}), "BIGINT");
  EXPECT_EQ(typeOf(ScalarOp::kIfNull, {ref(0, kInt), lit(0)}), "INT NOT NULL");
  EXPECT_EQ(typeOf(ScalarOp::kGreatest, {ref(0, kIntNN), ref(1, kDouble)}), "DOUBLE");
  EXPECT_EQ(typeOf(ScalarOp::kIsDistinctFrom, {ref(0, kInt), ref(1, kInt)}), "BOOLEAN NOT NULL");
  EXPECT_EQ(typeOf(ScalarOp::kTimestampAdd, {str("HOUR"), lit(1), ref(0, LogicalType::date())}), "TIMESTAMP(0)");
  EXPECT_EQ(typeOf(ScalarOp::kTimestampAdd, {str("DAY"), lit(1), ref(0, LogicalType::date())}), "DATE");
  EXPECT_EQ(typeOf(ScalarOp::kTimestampDiff, {str("DAY"), ref(0, kTs), ref(1, kTs)}), "INT");
  EXPECT_EQ(typeOf(ScalarOp::kExtract, {str("DOW"), ref(0, kTs)}), "BIGINT");
  EXPECT_EQ(typeOf(ScalarOp::kCurrentDate, {str("UTC")}), "DATE NOT NULL");
  EXPECT_EQ(typeOf(ScalarOp::kTypeOf, {str("abc")}), "STRING NOT NULL");
  EXPECT_THROW(typeOf(ScalarOp::kCurrentDate, {str("Nowhere/Land")}), UserError);
  EXPECT_THROW(typeOf(ScalarOp::kSqrt, {str("x")}), UserError);
  EXPECT_THROW(typeOf(ScalarOp::kLog, {lit(1), lit(2), lit(3)}), UserError);
}

}  // namespace
}  // namespace sluice::table
