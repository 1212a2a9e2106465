#include "types/value_format.h"

#include <gtest/gtest.h>

namespace sluice::types {
namespace {

std::string dbl(double v) {
  std::string s;
  formatDouble(v, s);
  return s;
}

std::string dec(int64_t u, int s) {
  std::string out;
  formatDecimal(u, s, out);
  return out;
}

std::string iso(int64_t ms) {
  std::string out;
  formatTimestampIso(ms, out);
  return out;
}

// Java's Double.toString, as Flink prints DOUBLE (see the print format reference).
TEST(ValueFormatTest, DoubleLikeJava) {
  EXPECT_EQ(dbl(1.5), "1.5");
  EXPECT_EQ(dbl(2.0), "2.0");
  EXPECT_EQ(dbl(100.0), "100.0");
  EXPECT_EQ(dbl(1e7), "1.0E7");
  EXPECT_EQ(dbl(12345678.9), "1.23456789E7");
  EXPECT_EQ(dbl(1e-4), "1.0E-4");
  EXPECT_EQ(dbl(0.001), "0.001");
  EXPECT_EQ(dbl(-0.5), "-0.5");
  EXPECT_EQ(dbl(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(dbl(0.0), "0.0");
}

// Java's Float.toString: the shortest digits that identify the float (1.1f is 1.100000023841858 as a double).
TEST(ValueFormatTest, FloatLikeJava) {
  auto flt = [](float v) {
    std::string s;
    formatFloat(v, s);
    return s;
  };
  EXPECT_EQ(flt(1.1f), "1.1");
  EXPECT_EQ(flt(16777217.0f), "1.6777216E7");
  EXPECT_EQ(flt(0.1f + 0.2f), "0.3");
  EXPECT_EQ(flt(1e-5f), "1.0E-5");
  EXPECT_EQ(flt(-0.0f), "-0.0");
  EXPECT_EQ(flt(100.0f), "100.0");
  float f = 0;
  ASSERT_TRUE(parseFloat(" 0.1 ", f));
  EXPECT_EQ(static_cast<double>(f), static_cast<double>(0.1f));
  EXPECT_FALSE(parseFloat("0.1x", f));
}

// LocalDate / LocalTime text; days and ms of the day worked out by hand (19724 days = 2024-01-02).
TEST(ValueFormatTest, DateAndTime) {
  std::string s;
  formatDate(19724, s);
  EXPECT_EQ(s, "2024-01-02");
  s.clear();
  formatDate(-1, s);
  EXPECT_EQ(s, "1969-12-31");
  int64_t days = 0;
  ASSERT_TRUE(parseDate("2024-01-02", days));
  EXPECT_EQ(days, 19724);
  ASSERT_TRUE(parseDate("2024-2-29", days));
  EXPECT_FALSE(parseDate("2023-02-29", days));
  EXPECT_FALSE(parseDate("2024-13-40", days));
  EXPECT_FALSE(parseDate("2024-01-02 10:00", days));
  int64_t ms = 0;
  ASSERT_TRUE(parseTime("12:34:56.789", ms));
  EXPECT_EQ(ms, ((12 * 60 + 34) * 60 + 56) * 1000 + 789);
  ASSERT_TRUE(parseTime("7:05", ms));
  EXPECT_EQ(ms, (7 * 60 + 5) * 60000);
  EXPECT_FALSE(parseTime("24:00:00", ms));
  EXPECT_FALSE(parseTime("12:60", ms));
  s.clear();
  formatTimeIso(7 * 3600000 + 5 * 60000, s);
  EXPECT_EQ(s, "07:05");
  s.clear();
  formatTimeIso(45296500, s);  // 12:34:56.5
  EXPECT_EQ(s, "12:34:56.500");
  s.clear();
  formatTimeSql(45296500, 0, s);
  EXPECT_EQ(s, "12:34:56");
  s.clear();
  formatTimeSql(45296500, 2, s);
  EXPECT_EQ(s, "12:34:56.50");
}

TEST(ValueFormatTest, DecimalKeepsScale) {
  EXPECT_EQ(dec(3750, 3), "3.750");
  EXPECT_EQ(dec(600, 2), "6.00");
  EXPECT_EQ(dec(-5, 2), "-0.05");
  EXPECT_EQ(dec(42, 0), "42");
  EXPECT_EQ(dec(0, 1), "0.0");
}

TEST(ValueFormatTest, TimestampIsoDropsZeroSeconds) {
  // 2015-01-01T00:00 UTC = 1420070400000 ms (16436 days * 86400000).
  EXPECT_EQ(iso(1420070400000), "2015-01-01T00:00");
  EXPECT_EQ(iso(1420070400000 + 5 * 60000), "2015-01-01T00:05");
  EXPECT_EQ(iso(1420070400000 + 5000), "2015-01-01T00:00:05");
  EXPECT_EQ(iso(1420070400000 + 5100), "2015-01-01T00:00:05.100");
  EXPECT_EQ(iso(0), "1970-01-01T00:00");
  EXPECT_EQ(iso(-1), "1969-12-31T23:59:59.999");
}

TEST(ValueFormatTest, TimestampSql) {
  std::string s;
  formatTimestampSql(1420070400000 + 5000, 0, s);
  EXPECT_EQ(s, "2015-01-01 00:00:05");
  s.clear();
  formatTimestampSql(1420070400000 + 5100, 3, s);
  EXPECT_EQ(s, "2015-01-01 00:00:05.100");
}

TEST(ValueFormatTest, CalendarRoundTrip) {
  EXPECT_EQ(daysFromCivil(1970, 1, 1), 0);
  EXPECT_EQ(daysFromCivil(2015, 1, 1), 16436);
  EXPECT_EQ(daysFromCivil(2000, 3, 1), 11017);  // 30 years incl. 7 leap days + Jan/Feb 2000
  int64_t y;
  unsigned m, d;
  civilFromDays(11016, y, m, d);
  EXPECT_EQ(y, 2000);
  EXPECT_EQ(m, 2u);
  EXPECT_EQ(d, 29u);
}

TEST(ValueFormatTest, RowInPrintFormat) {
  RowType t;
  t.names = {"s", "i", "b", "ts"};
  t.types = {LogicalType::string(), LogicalType::integer(), LogicalType::boolean(), LogicalType::timestamp(3)};
  RowBatch b(t);
  b.column(0).appendString("a");
  b.column(1).appendNull();
  b.column(2).appendLong(1);
  b.column(3).appendLong(1420070400000);
  b.kinds().push_back(RowKind::kUpdateAfter);
  std::string out;
  formatRow(b, 0, out);
  EXPECT_EQ(out, "+U[a, null, true, 2015-01-01T00:00]");
}

}  // namespace
}  // namespace sluice::types
