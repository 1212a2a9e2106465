#include <gtest/gtest.h>

#include "common/error.h"
#include "table/sql/parser.h"

namespace sluice::table::sql {
namespace {

std::string dump(std::string_view sql) { return parseExpression(sql)->toString(); }

TEST(SqlExprTest, ArithmeticPrecedence) {
  EXPECT_EQ(dump("a + b * c"), "(a + (b * c))");
  EXPECT_EQ(dump("a - b - c"), "((a - b) - c)");  // left associative
  EXPECT_EQ(dump("(a + b) * c"), "((a + b) * c)");
  EXPECT_EQ(dump("a * b % c / d"), "(((a * b) % c) / d)");
  EXPECT_EQ(dump("-a * b"), "((-a) * b)");  // unary minus binds tighter than *
  EXPECT_EQ(dump("- - a"), "(-(-a))");
  EXPECT_EQ(dump("a || b + c"), "((a || b) + c)");  // || and + share a level, left to right
}

TEST(SqlExprTest, BooleanPrecedence) {
  EXPECT_EQ(dump("a OR b AND c"), "(a OR (b AND c))");
  EXPECT_EQ(dump("NOT a = b AND c"), "((NOT (a = b)) AND c)");
  EXPECT_EQ(dump("a + 1 > b OR c IS NULL"), "(((a + 1) > b) OR (c IS NULL))");
  EXPECT_EQ(dump("a = 1 AND b <> 2 OR c != 3"), "(((a = 1) AND (b <> 2)) OR (c <> 3))");
  EXPECT_EQ(dump("x BETWEEN 1 AND 2 AND y"), "((x BETWEEN 1 AND 2) AND y)");
  EXPECT_EQ(dump("x NOT BETWEEN a + 1 AND b"), "(x NOT BETWEEN (a + 1) AND b)");
  EXPECT_EQ(dump("x || 'a' LIKE 'p%' ESCAPE '!'"), "((x || 'a') LIKE 'p%' ESCAPE '!')");
  EXPECT_EQ(dump("x NOT LIKE 'a'"), "(x NOT LIKE 'a')");
  EXPECT_EQ(dump("x IN (1, 2, 3)"), "(x IN (1, 2, 3))");
  EXPECT_EQ(dump("x NOT IN ('a')"), "(x NOT IN ('a'))");
  EXPECT_EQ(dump("b IS NOT TRUE OR b IS FALSE"), "((b IS NOT TRUE) OR (b IS FALSE))");
  EXPECT_EQ(dump("a <= b"), "(a <= b)");
  EXPECT_EQ(dump("a >= b"), "(a >= b)");
}

TEST(SqlExprTest, Literals) {
  auto e = parseExpression("42");
  EXPECT_EQ(e->literal_kind, LiteralKind::kInteger);
  EXPECT_EQ(e->text, "42");
  e = parseExpression("1.5");
  EXPECT_EQ(e->literal_kind, LiteralKind::kDecimal);
  EXPECT_EQ(e->text, "1.5");
  e = parseExpression("1e3");
  EXPECT_EQ(e->literal_kind, LiteralKind::kApproximate);
  e = parseExpression("'it''s'");
  EXPECT_EQ(e->literal_kind, LiteralKind::kString);
  EXPECT_EQ(e->text, "it's");
  EXPECT_EQ(e->toString(), "'it''s'");
  e = parseExpression("true");
  EXPECT_EQ(e->literal_kind, LiteralKind::kBoolean);
  EXPECT_TRUE(e->bool_value);
  e = parseExpression("FALSE");
  EXPECT_FALSE(e->bool_value);
  e = parseExpression("null");
  EXPECT_EQ(e->literal_kind, LiteralKind::kNull);
  e = parseExpression("TIMESTAMP '2015-01-01 00:00:00'");
  EXPECT_EQ(e->literal_kind, LiteralKind::kTimestamp);
  EXPECT_EQ(e->text, "2015-01-01 00:00:00");
}

TEST(SqlExprTest, IntervalLiterals) {
  auto e = parseExpression("INTERVAL '1' MINUTE");
  EXPECT_EQ(e->literal_kind, LiteralKind::kInterval);
  EXPECT_EQ(e->interval_unit, IntervalUnit::kMinute);
  EXPECT_EQ(intervalMillis(*e), 60000);  // 1 * 60 * 1000
  EXPECT_EQ(intervalMillis(*parseExpression("INTERVAL '10' SECOND")), 10000);
  EXPECT_EQ(intervalMillis(*parseExpression("INTERVAL '2' HOUR")), 7200000);  // 2 * 3600 * 1000
  EXPECT_EQ(intervalMillis(*parseExpression("INTERVAL '1' DAY")), 86400000);  // 24 * 3600 * 1000
  EXPECT_EQ(intervalMillis(*parseExpression("INTERVAL '1.5' SECOND")), 1500);
  EXPECT_EQ(intervalMillis(*parseExpression("INTERVAL -'3' SECOND")), -3000);
  EXPECT_EQ(dump("ts - INTERVAL '5' SECOND"), "(ts - INTERVAL '5' SECOND)");
  EXPECT_THROW(parseExpression("INTERVAL 'x' SECOND"), SqlError);
  EXPECT_THROW(parseExpression("INTERVAL '1.5' MINUTE"), SqlError);
  // Year-month intervals parse; they count months (2 years = 24) and have no milliseconds.
  EXPECT_EQ(intervalMonths(*parseExpression("INTERVAL '2' YEAR")), 24);
  EXPECT_EQ(intervalMonths(*parseExpression("INTERVAL -'3' MONTHS")), -3);
  EXPECT_THROW(intervalMillis(*parseExpression("INTERVAL '1' YEAR")), SqlError);
  EXPECT_THROW(parseExpression("INTERVAL '1.5' MONTH"), SqlError);
}

TEST(SqlExprTest, IdentifiersKeepCase) {
  auto e = parseExpression("t.MyCol");
  EXPECT_EQ(e->kind, ExprKind::kIdentifier);
  EXPECT_EQ(e->names, (std::vector<std::string>{"t", "MyCol"}));
  e = parseExpression("`select`");
  EXPECT_EQ(e->names, (std::vector<std::string>{"select"}));
}

TEST(SqlExprTest, CaseAndCast) {
  EXPECT_EQ(dump("CASE WHEN a > 1 THEN 'x' ELSE 'y' END"), "CASE WHEN (a > 1) THEN 'x' ELSE 'y' END");
  auto e = parseExpression("CASE k WHEN 1 THEN 'a' WHEN 2 THEN 'b' END");
  EXPECT_TRUE(e->case_has_operand);
  EXPECT_FALSE(e->case_has_else);
  EXPECT_EQ(e->children.size(), 5u);  // operand + 2 * (when, then)
  e = parseExpression("CAST(a AS DECIMAL(10, 2))");
  EXPECT_EQ(e->kind, ExprKind::kCast);
  EXPECT_EQ(e->cast_type, types::LogicalType::decimal(10, 2));
  EXPECT_EQ(dump("CAST(x AS BIGINT NOT NULL)"), "CAST(x AS BIGINT NOT NULL)");
}

TEST(SqlExprTest, FunctionCalls) {
  EXPECT_EQ(dump("count(*)"), "COUNT(*)");
  auto e = parseExpression("count(DISTINCT a)");
  EXPECT_EQ(e->name, "COUNT");
  EXPECT_TRUE(e->distinct);
  EXPECT_EQ(dump("lpad(CAST(m AS STRING), 2, '0')"), "LPAD(CAST(m AS STRING), 2, '0')");
  EXPECT_EQ(dump("SUBSTRING(s FROM 1 FOR 2)"), "SUBSTRING(s, 1, 2)");
  EXPECT_EQ(dump("substring(s, 3)"), "SUBSTRING(s, 3)");
  e = parseExpression("TRIM(LEADING 'x' FROM s)");
  EXPECT_EQ(e->trim_mode, TrimMode::kLeading);
  ASSERT_EQ(e->children.size(), 2u);
  EXPECT_EQ(e->children[0]->toString(), "s");
  EXPECT_EQ(e->children[1]->toString(), "'x'");
  e = parseExpression("TRIM(s)");
  EXPECT_EQ(e->trim_mode, TrimMode::kBoth);
  EXPECT_EQ(e->children.size(), 1u);
  EXPECT_EQ(dump("TRIM(TRAILING FROM s)"), "TRIM(TRAILING FROM s)");
  EXPECT_EQ(dump("POSITION('a' IN s)"), "POSITION('a', s)");
  EXPECT_EQ(dump("EXTRACT(hour FROM ts)"), "EXTRACT('HOUR', ts)");
  EXPECT_EQ(dump("CURRENT_TIMESTAMP"), "CURRENT_TIMESTAMP()");
  EXPECT_EQ(dump("LEFT(s, 2)"), "LEFT(s, 2)");
}

TEST(SqlExprTest, CloneAndEquals) {
  auto a = parseExpression("a + f(b, 'x') * 2");
  auto b = parseExpression("a   +  F(b,'x')*2");  // different positions and name case
  EXPECT_TRUE(a->equals(*b));
  EXPECT_TRUE(a->clone()->equals(*a));
  EXPECT_FALSE(a->equals(*parseExpression("a + f(b, 'x') * 3")));
}

TEST(SqlExprTest, Types) {
  auto type = [](const char* t) { return parseExpression(std::string("CAST(x AS ") + t + ")")->cast_type; };
  using types::LogicalType;
  EXPECT_EQ(type("BOOLEAN"), LogicalType::boolean());
  EXPECT_EQ(type("TINYINT"), LogicalType::tinyint());
  EXPECT_EQ(type("SMALLINT"), LogicalType::smallint());
  EXPECT_EQ(type("INTEGER"), LogicalType::integer());
  EXPECT_EQ(type("BIGINT"), LogicalType::bigint());
  EXPECT_EQ(type("FLOAT"), LogicalType::floatType());
  EXPECT_EQ(type("REAL NOT NULL"), LogicalType::floatType(false));
  EXPECT_EQ(type("DATE"), LogicalType::date());
  EXPECT_EQ(type("TIME"), LogicalType::time(0));
  EXPECT_EQ(type("TIME(3) WITHOUT TIME ZONE"), LogicalType::time(3));
  EXPECT_THROW(type("TIME(10)"), SqlError);
  EXPECT_THROW(type("BYTES"), SqlError);  // not supported yet
  EXPECT_EQ(type("DOUBLE PRECISION"), LogicalType::doubleType());
  EXPECT_EQ(type("DECIMAL"), LogicalType::decimal(10, 0));
  EXPECT_EQ(type("NUMERIC(5)"), LogicalType::decimal(5, 0));
  EXPECT_EQ(type("STRING"), LogicalType::string());
  EXPECT_EQ(type("VARCHAR(20)"), LogicalType::varchar(20));
  EXPECT_EQ(type("CHAR(3)"), LogicalType::charType(3));
  EXPECT_EQ(type("TIMESTAMP"), LogicalType::timestamp(6));
  EXPECT_EQ(type("TIMESTAMP(3)"), LogicalType::timestamp(3));
  EXPECT_EQ(type("TIMESTAMP(3) WITHOUT TIME ZONE NOT NULL"), LogicalType::timestamp(3, false));
  EXPECT_THROW(type("DECIMAL(39)"), SqlError);
  EXPECT_THROW(type("DECIMAL(5, 6)"), SqlError);
  EXPECT_THROW(type("BLOB"), SqlError);
}

}  // namespace
}  // namespace sluice::table::sql
