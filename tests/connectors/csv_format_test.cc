#include "connectors/csv_format.h"

#include <cmath>

#include <gtest/gtest.h>

#include "common/error.h"

namespace sluice::connectors {
namespace {

using types::LogicalType;
using types::RowBatch;
using types::RowType;

// 2015-01-01T00:00 UTC: 45 years after 1970 with 11 leap days (1972..2012) = 16436 days;
// 16436 * 86400000 = 1420070400000 ms.
constexpr int64_t k2015 = 1420070400000;

RowType allTypes() {
  return RowType{{"i", "b", "d", "m", "f", "s", "t"},
                 {LogicalType::integer(), LogicalType::bigint(), LogicalType::doubleType(), LogicalType::decimal(10, 2),
                  LogicalType::boolean(), LogicalType::string(), LogicalType::timestamp(3)}};
}

RowType oneColumn(LogicalType t, const std::string& name = "c") { return RowType{{name}, {t}}; }

// Parses `line` into a one-row batch; expects a row.
RowBatch parseOne(const RowType& type, const std::string& line, CsvFormatOptions options = {}) {
  CsvRowDeserializer d(type, options);
  RowBatch batch(type);
  EXPECT_EQ(d.parseLine(line, batch, "f.csv", 1), CsvLineResult::kRow) << line;
  return batch;
}

std::string errorOf(const RowType& type, const std::string& line, CsvFormatOptions options = {}) {
  CsvRowDeserializer d(type, options);
  RowBatch batch(type);
  try {
    d.parseLine(line, batch, "data/f.csv", 7);
  } catch (const InputError& e) {
    EXPECT_EQ(batch.numRows(), 0u);
    return e.what();
  }
  ADD_FAILURE() << "no error for: " << line;
  return "";
}

TEST(CsvFormatTest, ParsesEveryType) {
  RowBatch b = parseOne(allTypes(), "42,-9000000000,1.5,12.345,TRUE,hello,2015-01-01 00:05:00.25");
  ASSERT_EQ(b.numRows(), 1u);
  EXPECT_EQ(b.kind(0), types::RowKind::kInsert);
  EXPECT_EQ(b.column(0).getLong(0), 42);
  EXPECT_EQ(b.column(1).getLong(0), -9000000000LL);
  EXPECT_EQ(b.column(2).getDouble(0), 1.5);
  // 12.345 at scale 2 rounds HALF_UP to 12.35 -> unscaled 1235.
  EXPECT_EQ(b.column(3).getLong(0), 1235);
  EXPECT_EQ(b.column(4).getLong(0), 1);
  EXPECT_EQ(b.column(5).getString(0), "hello");
  // 00:05:00.25 = 5 * 60000 + 250 ms after midnight.
  EXPECT_EQ(b.column(6).getLong(0), k2015 + 300000 + 250);
}

TEST(CsvFormatTest, QuotedFields) {
  RowType t{{"a", "b", "c"}, {LogicalType::string(), LogicalType::string(), LogicalType::integer()}};
  RowBatch b = parseOne(t, R"("a,b","say ""hi""","7")");
  EXPECT_EQ(b.column(0).getString(0), "a,b");
  EXPECT_EQ(b.column(1).getString(0), "say \"hi\"");
  EXPECT_EQ(b.column(2).getLong(0), 7);
  RowBatch e = parseOne(t, R"("",,1)");
  EXPECT_EQ(e.column(0).getString(0), "");
  EXPECT_FALSE(e.column(0).isNull(0));
  EXPECT_EQ(e.column(1).getString(0), "");
  // A quote inside an unquoted field is literal.
  RowBatch l = parseOne(t, R"(ab"c,x,2)");
  EXPECT_EQ(l.column(0).getString(0), "ab\"c");
}

TEST(CsvFormatTest, BadQuotingIsAnError) {
  RowType t{{"a", "b"}, {LogicalType::string(), LogicalType::string()}};
  EXPECT_EQ(errorOf(t, R"("abc,d)"), "data/f.csv:7: unterminated quoted field");
  EXPECT_EQ(errorOf(t, R"("ab"c,d)"), "data/f.csv:7: unexpected character 'c' after a closing quote");
}

TEST(CsvFormatTest, CrLfAndBlankAndCommentLines) {
  RowType t{{"a", "b"}, {LogicalType::integer(), LogicalType::string()}};
  CsvFormatOptions o;
  o.allow_comments = true;
  CsvRowDeserializer d(t, o);
  RowBatch b(t);
  EXPECT_EQ(d.parseLine("1,x\r", b, "f", 1), CsvLineResult::kRow);
  EXPECT_EQ(d.parseLine("", b, "f", 2), CsvLineResult::kSkipped);
  EXPECT_EQ(d.parseLine("\r", b, "f", 3), CsvLineResult::kSkipped);
  EXPECT_EQ(d.parseLine("# a comment, with a comma", b, "f", 4), CsvLineResult::kSkipped);
  ASSERT_EQ(b.numRows(), 1u);
  EXPECT_EQ(b.column(1).getString(0), "x");
  // Without allow-comments a '#' line is data (and here the wrong shape).
  CsvRowDeserializer plain(t, CsvFormatOptions{});
  EXPECT_THROW(plain.parseLine("#1,x", b, "f", 5), InputError);
}

TEST(CsvFormatTest, IntegerRangesAndTrimming) {
  RowType t = oneColumn(LogicalType::integer(), "n");
  EXPECT_EQ(parseOne(t, "-2147483648").column(0).getLong(0), -2147483648LL);
  EXPECT_EQ(parseOne(t, "2147483647").column(0).getLong(0), 2147483647LL);
  EXPECT_EQ(parseOne(t, "+7").column(0).getLong(0), 7);
  EXPECT_EQ(parseOne(t, " 7\t").column(0).getLong(0), 7);
  EXPECT_EQ(errorOf(t, "2147483648"), "data/f.csv:7: cannot parse '2147483648' as INT for column 'n' (out of range)");
  EXPECT_EQ(errorOf(t, "1.5"), "data/f.csv:7: cannot parse '1.5' as INT for column 'n'");
  // An empty line is skipped, so the empty field needs a second column.
  RowType two{{"n", "s"}, {LogicalType::integer(), LogicalType::string()}};
  EXPECT_EQ(errorOf(two, ",x"), "data/f.csv:7: cannot parse '' as INT for column 'n'");
  EXPECT_EQ(errorOf(t, "+-1"), "data/f.csv:7: cannot parse '+-1' as INT for column 'n'");
  RowType big = oneColumn(LogicalType::bigint(), "n");
  EXPECT_EQ(parseOne(big, "9223372036854775807").column(0).getLong(0), INT64_MAX);
  EXPECT_EQ(errorOf(big, "9223372036854775808"),
            "data/f.csv:7: cannot parse '9223372036854775808' as BIGINT for column 'n' (out of range)");
}

TEST(CsvFormatTest, Doubles) {
  RowType t = oneColumn(LogicalType::doubleType(), "x");
  EXPECT_EQ(parseOne(t, "1e3").column(0).getDouble(0), 1000.0);
  EXPECT_EQ(parseOne(t, "-.5").column(0).getDouble(0), -0.5);
  EXPECT_EQ(parseOne(t, "2.5d").column(0).getDouble(0), 2.5);
  EXPECT_TRUE(std::isnan(parseOne(t, "NaN").column(0).getDouble(0)));
  EXPECT_EQ(parseOne(t, "-Infinity").column(0).getDouble(0), -INFINITY);
  EXPECT_EQ(parseOne(t, "1e999").column(0).getDouble(0), INFINITY);  // Java rounds to Infinity
  EXPECT_EQ(errorOf(t, "inf"), "data/f.csv:7: cannot parse 'inf' as DOUBLE for column 'x'");
  EXPECT_EQ(errorOf(t, "1,5").substr(0, 12), "data/f.csv:7");
}

TEST(CsvFormatTest, DecimalRoundingAndOverflow) {
  RowType t = oneColumn(LogicalType::decimal(5, 2), "m");
  // -0.005 -> HALF_UP (away from zero) -> -0.01 -> unscaled -1.
  EXPECT_EQ(parseOne(t, "-0.005").column(0).getLong(0), -1);
  // 0.004 -> 0.00.
  EXPECT_EQ(parseOne(t, "0.004").column(0).getLong(0), 0);
  // 1e2 = 100.00 -> 10000.
  EXPECT_EQ(parseOne(t, "1e2").column(0).getLong(0), 10000);
  // 123.4 -> 123.40 -> 12340; 999.99 is the largest DECIMAL(5,2).
  EXPECT_EQ(parseOne(t, "123.4").column(0).getLong(0), 12340);
  EXPECT_EQ(parseOne(t, "999.99").column(0).getLong(0), 99999);
  EXPECT_EQ(parseOne(t, "+.5").column(0).getLong(0), 50);
  EXPECT_EQ(parseOne(t, "12500e-2").column(0).getLong(0), 12500);
  // 999.995 rounds to 1000.00, which needs 6 digits.
  EXPECT_EQ(errorOf(t, "999.995"), "data/f.csv:7: cannot parse '999.995' as DECIMAL(5, 2) for column 'm' (out of range)");
  EXPECT_EQ(errorOf(t, "1000"), "data/f.csv:7: cannot parse '1000' as DECIMAL(5, 2) for column 'm' (out of range)");
  // new BigDecimal(" 1") fails in Java: no trimming for DECIMAL.
  EXPECT_EQ(errorOf(t, " 1"), "data/f.csv:7: cannot parse ' 1' as DECIMAL(5, 2) for column 'm'");
  EXPECT_EQ(errorOf(t, "1e"), "data/f.csv:7: cannot parse '1e' as DECIMAL(5, 2) for column 'm'");
  // DECIMAL(18, 0) keeps 18 digits.
  RowType wide = oneColumn(LogicalType::decimal(18, 0), "m");
  EXPECT_EQ(parseOne(wide, "999999999999999999").column(0).getLong(0), 999999999999999999LL);
  EXPECT_NE(errorOf(wide, "1e18"), "");  // 10^18 needs 19 digits
}

TEST(CsvFormatTest, BooleansFollowJavaParseBoolean) {
  RowType t = oneColumn(LogicalType::boolean());
  EXPECT_EQ(parseOne(t, "True").column(0).getLong(0), 1);
  EXPECT_EQ(parseOne(t, " true ").column(0).getLong(0), 1);
  EXPECT_EQ(parseOne(t, "false").column(0).getLong(0), 0);
  EXPECT_EQ(parseOne(t, "yes").column(0).getLong(0), 0);
  RowType two{{"f", "s"}, {LogicalType::boolean(), LogicalType::string()}};
  EXPECT_EQ(parseOne(two, ",x").column(0).getLong(0), 0);
}

TEST(CsvFormatTest, Timestamps) {
  RowType t = oneColumn(LogicalType::timestamp(3), "ts");
  EXPECT_EQ(parseOne(t, "2015-01-01T00:05").column(0).getLong(0), k2015 + 300000);
  EXPECT_EQ(parseOne(t, "2015-1-2 3:04:05").column(0).getLong(0), k2015 + 86400000 + 3 * 3600000 + 4 * 60000 + 5000);
  // Nanoseconds are cut to milliseconds: .123456789 -> 123 ms.
  EXPECT_EQ(parseOne(t, "2015-01-01 00:00:00.123456789").column(0).getLong(0), k2015 + 123);
  // 1969-12-31 23:59:59.5 is 500 ms before the epoch.
  EXPECT_EQ(parseOne(t, "1969-12-31 23:59:59.5").column(0).getLong(0), -500);
  // 2016 is a leap year: Feb 29 exists; 2015 has none.
  EXPECT_NO_THROW(parseOne(t, "2016-02-29 00:00:00"));
  EXPECT_EQ(errorOf(t, "2015-02-29 00:00:00"),
            "data/f.csv:7: cannot parse '2015-02-29 00:00:00' as TIMESTAMP(3) for column 'ts'");
  EXPECT_NE(errorOf(t, "2015-01-01"), "");
  EXPECT_NE(errorOf(t, "2015-01-01 24:00:00"), "");
}

TEST(CsvFormatTest, NullLiteralEscapeAndTabDelimiter) {
  RowType t{{"a", "b"}, {LogicalType::integer(), LogicalType::string()}};
  CsvFormatOptions o = parseCsvFormatOptions(
      {{"csv.null-literal", "n/a"}, {"csv.field-delimiter", "\\t"}, {"csv.escape-character", "\\\\"}}, "t");
  EXPECT_EQ(o.field_delimiter, '\t');
  EXPECT_EQ(o.escape_character, '\\');
  RowBatch b = parseOne(t, "n/a\tn/a", o);
  EXPECT_TRUE(b.column(0).isNull(0));
  EXPECT_TRUE(b.column(1).isNull(0));
  // An escaped delimiter and an escaped quote inside quotes.
  RowBatch e = parseOne(t, "1\ta\\\tb", o);
  EXPECT_EQ(e.column(1).getString(0), "a\tb");
  RowBatch q = parseOne(t, "2\t\"x\\\"y\"", o);
  EXPECT_EQ(q.column(1).getString(0), "x\"y");
}

TEST(CsvFormatTest, OptionValidation) {
  EXPECT_THROW(parseCsvFormatOptions({{"csv.field-delimiter", ";;"}}, "t"), UserError);
  EXPECT_THROW(parseCsvFormatOptions({{"csv.disable-quote-character", "true"}, {"csv.quote-character", "'"}}, "t"),
               UserError);
  EXPECT_THROW(parseCsvFormatOptions({{"csv.ignore-parse-errors", "maybe"}}, "t"), UserError);
  CsvFormatOptions u = parseCsvFormatOptions({{"csv.field-delimiter", "\\u0001"}}, "t");
  EXPECT_EQ(u.field_delimiter, '\x01');
  CsvFormatOptions nq = parseCsvFormatOptions({{"csv.disable-quote-character", "true"}}, "t");
  RowType t{{"a"}, {LogicalType::string()}};
  EXPECT_EQ(parseOne(t, "\"x\"", nq).column(0).getString(0), "\"x\"");
}

TEST(CsvFormatTest, WrongFieldCount) {
  RowType t{{"a", "b", "c"}, {LogicalType::integer(), LogicalType::integer(), LogicalType::integer()}};
  EXPECT_EQ(errorOf(t, "1,2"), "data/f.csv:7: row length mismatch: 3 fields expected but was 2");
  EXPECT_EQ(errorOf(t, "1,2,3,4"), "data/f.csv:7: row length mismatch: 3 fields expected but was 4");
}

TEST(CsvFormatTest, IgnoreParseErrorsNullsFieldsAndCounts) {
  RowType t{{"a", "b", "c"}, {LogicalType::integer(), LogicalType::doubleType(), LogicalType::string()}};
  CsvFormatOptions o;
  o.ignore_parse_errors = true;
  CsvRowDeserializer d(t, o);
  RowBatch b(t);
  EXPECT_EQ(d.parseLine("x,1.5,ok", b, "f", 1), CsvLineResult::kRow);   // a nulled: 1 error
  EXPECT_EQ(d.parseLine("1,2.5", b, "f", 2), CsvLineResult::kRow);      // c missing: 1 error
  EXPECT_EQ(d.parseLine("1,2,3,4", b, "f", 3), CsvLineResult::kDropped);  // too many: 1 error
  EXPECT_EQ(d.parseLine("\"bad", b, "f", 4), CsvLineResult::kDropped);  // bad quoting: 1 error
  EXPECT_EQ(d.parseLine(",,", b, "f", 5), CsvLineResult::kRow);         // a and b empty: 2 errors
  ASSERT_EQ(b.numRows(), 3u);
  EXPECT_TRUE(b.column(0).isNull(0));
  EXPECT_EQ(b.column(1).getDouble(0), 1.5);
  EXPECT_EQ(b.column(2).getString(0), "ok");
  EXPECT_EQ(b.column(0).getLong(1), 1);
  EXPECT_TRUE(b.column(2).isNull(1));
  EXPECT_TRUE(b.column(0).isNull(2));
  EXPECT_TRUE(b.column(1).isNull(2));
  EXPECT_EQ(b.column(2).getString(2), "");
  // 1 + 1 + 1 + 1 + 2 = 6
  EXPECT_EQ(d.parseErrors(), 6);
}

TEST(CsvFormatTest, ErrorLeavesBatchUnchanged) {
  RowType t{{"s", "n"}, {LogicalType::string(), LogicalType::integer()}};
  CsvRowDeserializer d(t, CsvFormatOptions{});
  RowBatch b(t);
  d.parseLine("keep,1", b, "f", 1);
  EXPECT_THROW(d.parseLine("drop,x", b, "f", 2), InputError);
  ASSERT_EQ(b.numRows(), 1u);
  EXPECT_EQ(b.column(0).size(), 1u);
  EXPECT_EQ(b.column(0).arena(), "keep");
}

TEST(CsvFormatTest, ReadLinesCountsLineNumbers) {
  RowType t = oneColumn(LogicalType::integer(), "n");
  // Line 1 "1", line 2 "2", line 3 "oops", line 4 "4" (no final newline).
  std::string data = "1\n2\noops\n4";
  CsvRowDeserializer d(t, CsvFormatOptions{});
  RowBatch b(t);
  size_t pos = 0;
  int64_t line = 1;
  EXPECT_EQ(readCsvLines(data, pos, data.size(), line, d, b, 2, "x.csv"), 2u);
  EXPECT_EQ(line, 3);
  try {
    readCsvLines(data, pos, data.size(), line, d, b, 10, "x.csv");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "x.csv:3: cannot parse 'oops' as INT for column 'n'");
  }
  // Split helpers: "1\n" is 2 bytes, "2\n" 2 bytes: the line after offset 3 starts at 4.
  EXPECT_EQ(alignToLineStart(data, 0), 0u);
  EXPECT_EQ(alignToLineStart(data, 2), 2u);
  EXPECT_EQ(alignToLineStart(data, 3), 4u);
  EXPECT_EQ(countNewlines(data, 4), 2);
}

TEST(CsvFormatTest, SerializerFollowsJacksonQuoting) {
  RowType t = allTypes();
  RowBatch b(t);
  b.column(0).appendLong(42);
  b.column(1).appendLong(-9000000000LL);
  b.column(2).appendDouble(1e7);
  b.column(3).appendLong(1235);
  b.column(4).appendLong(1);
  b.column(5).appendString("a b");
  b.column(6).appendLong(k2015 + 300000);
  b.kinds().push_back(types::RowKind::kInsert);
  b.column(0).appendNull();
  b.column(1).appendLong(0);
  b.column(2).appendDouble(0.5);
  b.column(3).appendLong(-5);
  b.column(4).appendLong(0);
  b.column(5).appendString("say \"hi\"");
  b.column(6).appendLong(k2015 + 100);
  b.kinds().push_back(types::RowKind::kInsert);
  b.column(0).appendLong(1);
  b.column(1).appendLong(2);
  b.column(2).appendDouble(-0.0);
  b.column(3).appendLong(0);
  b.column(4).appendNull();
  b.column(5).appendString("abcdefghijklmnopqrstuvwxyz");  // 26 > 24 characters: quoted
  b.column(6).appendNull();
  b.kinds().push_back(types::RowKind::kInsert);
  CsvRowSerializer s(t, CsvFormatOptions{});
  std::string out;
  for (size_t r = 0; r < 3; ++r) s.appendRow(b, r, out);
  EXPECT_EQ(out,
            "42,-9000000000,1.0E7,12.35,true,\"a b\",\"2015-01-01 00:05:00\"\n"
            ",0,0.5,-0.05,false,\"say \"\"hi\"\"\",\"2015-01-01 00:00:00.1\"\n"
            "1,2,-0.0,0.00,,\"abcdefghijklmnopqrstuvwxyz\",\n");
}

TEST(CsvFormatTest, SerializerOptions) {
  RowType t{{"m", "s", "n"}, {LogicalType::decimal(10, 9), LogicalType::string(), LogicalType::integer()}};
  RowBatch b(t);
  b.column(0).appendLong(1);
  b.column(1).appendString("a;b");
  b.column(2).appendNull();
  b.kinds().push_back(types::RowKind::kInsert);
  CsvFormatOptions o = parseCsvFormatOptions({{"csv.write-bigdecimal-in-scientific-notation", "false"},
                                              {"csv.field-delimiter", ";"},
                                              {"csv.null-literal", "NULL"}},
                                             "t");
  std::string out;
  CsvRowSerializer(t, o).appendRow(b, 0, out);
  // Plain decimal; ';' (59) is now the delimiter, so "a;b" needs quotes.
  EXPECT_EQ(out, "0.000000001;\"a;b\";NULL\n");
}

TEST(CsvFormatTest, SerializedRowsParseBack) {
  RowType t{{"s", "m"}, {LogicalType::string(), LogicalType::decimal(10, 9)}};
  RowBatch b(t);
  b.column(0).appendString("x,\"y\"");
  b.column(1).appendLong(1);  // 0.000000001 = 1E-9 in Java's BigDecimal.toString
  b.kinds().push_back(types::RowKind::kInsert);
  CsvRowSerializer s(t, CsvFormatOptions{});
  std::string out;
  s.appendRow(b, 0, out);
  EXPECT_EQ(out, "\"x,\"\"y\"\"\",1E-9\n");
  RowBatch back = parseOne(t, out.substr(0, out.size() - 1));
  EXPECT_EQ(back.column(0).getString(0), "x,\"y\"");
  EXPECT_EQ(back.column(1).getLong(0), 1);
}

}  // namespace
}  // namespace sluice::connectors
