// Projection push-down in the csv format, the filesystem source and the datagen source.

#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/config.h"
#include "common/error.h"
#include "connectors/csv_format.h"
#include "connectors/datagen_connector.h"
#include "connectors/filesystem_connector.h"
#include "test_util.h"

namespace sluice::connectors {
namespace {

using testing::CollectingOutput;
using testing::runSource;
using testing::TempDir;
using types::LogicalType;
using types::RowBatch;
using types::RowType;

// Five fields of different types: a INT, b STRING, c DOUBLE, d BIGINT, e STRING.
RowType fiveFields() {
  return RowType{{"a", "b", "c", "d", "e"},
                 {LogicalType::integer(), LogicalType::string(), LogicalType::doubleType(), LogicalType::bigint(),
                  LogicalType::string()}};
}

RowType allStrings(size_t n) {
  RowType t;
  for (size_t i = 0; i < n; ++i) {
    std::string name = "s";
    name += std::to_string(i);
    t.names.push_back(name);
    t.types.push_back(LogicalType::string());
  }
  return t;
}

// Parses one line with `projection`; returns the error text, or "" when a row was appended.
std::string parseProjected(const RowType& type, const std::vector<int>& projection, const std::string& line,
                           RowBatch& batch, CsvFormatOptions options = {}) {
  CsvRowDeserializer d(type, options, projection);
  try {
    EXPECT_EQ(d.parseLine(line, batch, "data/f.csv", 7), CsvLineResult::kRow);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(CsvProjectionTest, ProducesOnlyTheProjectedFieldsInOrder) {
  CsvRowDeserializer d(fiveFields(), CsvFormatOptions{}, {1, 3, 4});
  ASSERT_EQ(d.producedType().size(), 3u);
  EXPECT_EQ(d.producedType().names, (std::vector<std::string>{"b", "d", "e"}));
  EXPECT_EQ(d.producedType().types[1], LogicalType::bigint());
  RowBatch batch(d.producedType());
  ASSERT_EQ(d.parseLine("1,bee,2.5,-7,\"q, r\"", batch, "f.csv", 1), CsvLineResult::kRow);
  ASSERT_EQ(d.parseLine("2,,0.5,9000000000,plain", batch, "f.csv", 2), CsvLineResult::kRow);
  ASSERT_EQ(batch.numColumns(), 3u);
  ASSERT_EQ(batch.numRows(), 2u);
  EXPECT_EQ(batch.column(0).getString(0), "bee");
  EXPECT_EQ(batch.column(1).getLong(0), -7);
  EXPECT_EQ(batch.column(2).getString(0), "q, r");  // the quoted comma is not a delimiter
  EXPECT_EQ(batch.column(0).getString(1), "");      // an empty STRING stays the empty string
  EXPECT_FALSE(batch.column(0).isNull(1));
  EXPECT_EQ(batch.column(1).getLong(1), 9000000000LL);
  EXPECT_EQ(batch.column(2).getString(1), "plain");
}

TEST(CsvProjectionTest, FirstAndLastFieldOnly) {
  RowBatch batch(RowType{{"a", "e"}, {LogicalType::integer(), LogicalType::string()}});
  EXPECT_EQ(parseProjected(fiveFields(), {0, 4}, "41,x,1.0,2,last", batch), "");
  ASSERT_EQ(batch.numRows(), 1u);
  EXPECT_EQ(batch.column(0).getLong(0), 41);
  EXPECT_EQ(batch.column(1).getString(0), "last");
}

TEST(CsvProjectionTest, BadValueInAnUnprojectedFieldIsNoError) {
  const std::string line = "notanint,bee,notadouble,-7,e";
  // Without projection the first field fails.
  {
    CsvRowDeserializer d(fiveFields(), CsvFormatOptions{});
    RowBatch batch(fiveFields());
    EXPECT_THROW(d.parseLine(line, batch, "data/f.csv", 7), InputError);
  }
  RowBatch batch(RowType{{"b", "d"}, {LogicalType::string(), LogicalType::bigint()}});
  EXPECT_EQ(parseProjected(fiveFields(), {1, 3}, line, batch), "");
  ASSERT_EQ(batch.numRows(), 1u);
  EXPECT_EQ(batch.column(0).getString(0), "bee");
  EXPECT_EQ(batch.column(1).getLong(0), -7);
}

TEST(CsvProjectionTest, UnprojectedFieldsAreNotCountedUnderIgnoreParseErrors) {
  CsvFormatOptions o;
  o.ignore_parse_errors = true;
  const std::string line = "notanint,bee,notadouble,-7,e";
  CsvRowDeserializer all(fiveFields(), o);
  RowBatch full(fiveFields());
  ASSERT_EQ(all.parseLine(line, full, "f.csv", 1), CsvLineResult::kRow);
  // Fields a and c fail: 2 errors without projection.
  EXPECT_EQ(all.parseErrors(), 2);
  CsvRowDeserializer projected(fiveFields(), o, {1, 3});
  RowBatch batch(projected.producedType());
  ASSERT_EQ(projected.parseLine(line, batch, "f.csv", 1), CsvLineResult::kRow);
  EXPECT_EQ(projected.parseErrors(), 0);
  EXPECT_EQ(batch.column(1).getLong(0), -7);
}

TEST(CsvProjectionTest, BadValueInAProjectedFieldFailsAsBefore) {
  RowBatch batch(RowType{{"b", "d"}, {LogicalType::string(), LogicalType::bigint()}});
  EXPECT_EQ(parseProjected(fiveFields(), {1, 3}, "1,bee,2.5,xx,e", batch),
            "data/f.csv:7: cannot parse 'xx' as BIGINT for column 'd'");
  EXPECT_EQ(batch.numRows(), 0u);
  EXPECT_EQ(batch.column(0).size(), 0u);  // the appended "bee" was rolled back
}

TEST(CsvProjectionTest, WrongFieldCountStillFails) {
  RowBatch batch(RowType{{"b"}, {LogicalType::string()}});
  // 4 fields where 5 are declared, then 6.
  EXPECT_EQ(parseProjected(fiveFields(), {1}, "1,bee,2.5,-7", batch),
            "data/f.csv:7: row length mismatch: 5 fields expected but was 4");
  EXPECT_EQ(parseProjected(fiveFields(), {1}, "1,bee,2.5,-7,e,f", batch),
            "data/f.csv:7: row length mismatch: 5 fields expected but was 6");
  EXPECT_EQ(batch.numRows(), 0u);
}

TEST(CsvProjectionTest, BadQuotingInAnUnprojectedFieldStillFails) {
  RowBatch batch(RowType{{"b"}, {LogicalType::string()}});
  EXPECT_EQ(parseProjected(fiveFields(), {1}, "1,bee,2.5,-7,\"open", batch),
            "data/f.csv:7: unterminated quoted field");
  EXPECT_EQ(parseProjected(fiveFields(), {1}, "\"1\"x,bee,2.5,-7,e", batch),
            "data/f.csv:7: unexpected character 'x' after a closing quote");
  EXPECT_EQ(batch.numRows(), 0u);
}

TEST(CsvProjectionTest, TooFewFieldsUnderIgnoreParseErrorsNullsOnlyProjectedOnes) {
  CsvFormatOptions o;
  o.ignore_parse_errors = true;
  CsvRowDeserializer d(fiveFields(), o, {1, 3});
  RowBatch batch(d.producedType());
  // Fields c, d, e are missing; only d is produced, so one NULL and one error.
  ASSERT_EQ(d.parseLine("1,bee", batch, "f.csv", 1), CsvLineResult::kRow);
  EXPECT_EQ(batch.column(0).getString(0), "bee");
  EXPECT_TRUE(batch.column(1).isNull(0));
  EXPECT_EQ(d.parseErrors(), 1);
  // Too many fields: the row is dropped as without projection.
  EXPECT_EQ(d.parseLine("1,bee,2.5,-7,e,f", batch, "f.csv", 2), CsvLineResult::kDropped);
  EXPECT_EQ(d.parseErrors(), 2);
  EXPECT_EQ(batch.numRows(), 1u);
}

TEST(CsvProjectionTest, QuotedAndEscapedFieldsAroundProjectedOnes) {
  // Unprojected quoted fields are not copied; the projected ones must still read their own bytes.
  RowBatch batch(RowType{{"s1", "s3"}, {LogicalType::string(), LogicalType::string()}});
  EXPECT_EQ(parseProjected(allStrings(5), {1, 3}, "\"a\"\"b\",\"c, d\",\"skip\",\"f\"\"g\",\"h\"", batch), "");
  ASSERT_EQ(batch.numRows(), 1u);
  EXPECT_EQ(batch.column(0).getString(0), "c, d");
  EXPECT_EQ(batch.column(1).getString(0), "f\"g");

  CsvFormatOptions esc;
  esc.escape_character = '\\';
  RowBatch b2(RowType{{"s1"}, {LogicalType::string()}});
  // Field 0 is "x,y" (escaped delimiter, skipped); field 1 is "keep" TAB "z".
  EXPECT_EQ(parseProjected(allStrings(3), {1}, "x\\,y,keep\\tz,\"q\\\"r\"", b2, esc), "");
  ASSERT_EQ(b2.numRows(), 1u);
  EXPECT_EQ(b2.column(0).getString(0), "keep\tz");
}

TEST(CsvProjectionTest, NullLiteralInProjectedField) {
  CsvFormatOptions o;
  o.null_literal = "N/A";
  RowBatch batch(RowType{{"d"}, {LogicalType::bigint()}});
  EXPECT_EQ(parseProjected(fiveFields(), {3}, "N/A,b,N/A,N/A,e", batch, o), "");
  ASSERT_EQ(batch.numRows(), 1u);
  EXPECT_TRUE(batch.column(0).isNull(0));
}

TEST(CsvProjectionTest, IntegerEdgeCases) {
  RowType t{{"i", "b"}, {LogicalType::integer(), LogicalType::bigint()}};
  auto parse = [&](const std::string& line, RowBatch& batch) { return parseProjected(t, {0, 1}, line, batch); };
  RowBatch batch(t);
  EXPECT_EQ(parse("-0,007", batch), "");
  EXPECT_EQ(parse("-2147483648,123456789012345678", batch), "");  // 18 digits
  EXPECT_EQ(parse("2147483647,-9223372036854775808", batch), "");  // 19 digits
  ASSERT_EQ(batch.numRows(), 3u);
  EXPECT_EQ(batch.column(0).getLong(0), 0);
  EXPECT_EQ(batch.column(1).getLong(0), 7);
  EXPECT_EQ(batch.column(0).getLong(1), -2147483648LL);
  EXPECT_EQ(batch.column(1).getLong(1), 123456789012345678LL);
  EXPECT_EQ(batch.column(0).getLong(2), 2147483647LL);
  EXPECT_EQ(batch.column(1).getLong(2), INT64_MIN);
  EXPECT_EQ(parse("-,1", batch), "data/f.csv:7: cannot parse '-' as INT for column 'i'");
  // 2^31 = 2147483648 and 10^10 are past INT; 2^63 past BIGINT.
  EXPECT_EQ(parse("2147483648,1", batch), "data/f.csv:7: cannot parse '2147483648' as INT for column 'i' (out of range)");
  EXPECT_EQ(parse("10000000000,1", batch),
            "data/f.csv:7: cannot parse '10000000000' as INT for column 'i' (out of range)");
  EXPECT_EQ(parse("1,9223372036854775808", batch),
            "data/f.csv:7: cannot parse '9223372036854775808' as BIGINT for column 'b' (out of range)");
  EXPECT_EQ(parse("1,1x", batch), "data/f.csv:7: cannot parse '1x' as BIGINT for column 'b'");
  EXPECT_EQ(batch.numRows(), 3u);
}

TEST(CsvProjectionTest, LinesWithManyFields) {
  // 300 one-character fields "0,1,...,9,0,1,..." (599 bytes): the span store grows past its first size.
  std::string line;
  for (int i = 0; i < 300; ++i) {
    if (i) line += ',';
    line += static_cast<char>('0' + i % 10);
  }
  RowBatch batch(RowType{{"s299"}, {LogicalType::string()}});
  EXPECT_EQ(parseProjected(allStrings(300), {299}, line, batch), "");
  ASSERT_EQ(batch.numRows(), 1u);
  EXPECT_EQ(batch.column(0).getString(0), "9");  // 299 % 10
  EXPECT_EQ(parseProjected(fiveFields(), {1}, line, batch),
            "data/f.csv:7: row length mismatch: 5 fields expected but was 300");
}

TEST(CsvProjectionTest, CountNewlinesOverLongData) {
  // Line k (k = 0..99) is k % 23 'x' then '\n': 100 newlines in 100 + sum(k % 23) bytes.
  std::string data;
  for (int k = 0; k < 100; ++k) data += std::string(static_cast<size_t>(k % 23), 'x') + "\n";
  EXPECT_EQ(countNewlines(data, data.size()), 100);
  EXPECT_EQ(countNewlines(data, data.size() + 50), 100);  // clipped to the data
  EXPECT_EQ(countNewlines(data, data.size() - 1), 99);    // the last '\n' is excluded
  // Lines 0..9 have 0..9 'x' (45 bytes) plus 10 newlines: the first 55 bytes hold 10 newlines, 54 hold 9.
  EXPECT_EQ(countNewlines(data, 55), 10);
  EXPECT_EQ(countNewlines(data, 54), 9);
  EXPECT_EQ(countNewlines(data, 0), 0);
}

TEST(CsvProjectionTest, BadProjectionIsAnInternalError) {
  EXPECT_THROW(CsvRowDeserializer(fiveFields(), CsvFormatOptions{}, {3, 1}), InternalError);
  EXPECT_THROW(CsvRowDeserializer(fiveFields(), CsvFormatOptions{}, {5}), InternalError);
}

// A plain reference splitter for the documented rules without an escape character: a field starting
// with '"' is quoted ("" is one quote, the delimiter is literal, only ',' or the end may follow the
// closing quote); any other field runs to the next ','. Returns false on bad quoting.
bool referenceSplit(const std::string& line, std::vector<std::string>& fields) {
  fields.clear();
  size_t pos = 0;
  while (true) {
    std::string f;
    if (pos < line.size() && line[pos] == '"') {
      ++pos;
      bool closed = false;
      while (pos < line.size()) {
        if (line[pos] != '"') {
          f += line[pos++];
        } else if (pos + 1 < line.size() && line[pos + 1] == '"') {
          f += '"';
          pos += 2;
        } else {
          ++pos;
          closed = true;
          break;
        }
      }
      if (!closed) return false;
      fields.push_back(f);
      if (pos == line.size()) return true;
      if (line[pos] != ',') return false;
      ++pos;
      continue;
    }
    while (pos < line.size() && line[pos] != ',') f += line[pos++];
    fields.push_back(f);
    if (pos == line.size()) return true;
    ++pos;
  }
}

TEST(CsvProjectionTest, SplitAgreesWithAReferenceOnRandomLines) {
  // Lines of 1..80 characters (the vectorized scan works on 16-byte blocks) over a small alphabet;
  // one line in four has no quote at all.
  std::mt19937 rng(12345);
  const char with_quotes[] = {'a', 'b', ',', ',', '"', ' '};
  const char plain[] = {'a', 'b', 'c', ',', ',', ' '};
  int rows = 0;
  int errors = 0;
  for (int iter = 0; iter < 4000; ++iter) {
    const bool quotes = iter % 4 != 0;
    const size_t len = 1 + rng() % 80;
    std::string line;
    for (size_t i = 0; i < len; ++i) line += quotes ? with_quotes[rng() % 6] : plain[rng() % 6];
    std::vector<std::string> want;
    const bool ok = referenceSplit(line, want);
    // The arity the reference found (or 3 when the line is bad); project every other field.
    const size_t arity = ok ? want.size() : 3;
    std::vector<int> projection;
    for (size_t c = iter % 2; c < arity; c += 2) projection.push_back(static_cast<int>(c));
    if (projection.empty()) projection.push_back(0);
    CsvRowDeserializer d(allStrings(arity), CsvFormatOptions{}, projection);
    RowBatch batch(d.producedType());
    try {
      ASSERT_EQ(d.parseLine(line, batch, "r.csv", 1), CsvLineResult::kRow) << line;
      ASSERT_TRUE(ok) << "accepted bad line: " << line;
      for (size_t k = 0; k < projection.size(); ++k)
        EXPECT_EQ(std::string(batch.column(k).getString(0)), want[static_cast<size_t>(projection[k])])
            << line << " field " << projection[k];
      ++rows;
    } catch (const InputError&) {
      EXPECT_FALSE(ok) << "rejected good line: " << line;
      ++errors;
    }
  }
  // Both outcomes were exercised.
  EXPECT_GT(rows, 1000);
  EXPECT_GT(errors, 100);
}

// ---------------------------------------------------------------------------------------------

table::ResolvedTable fsTable(const std::string& path, RowType type, std::map<std::string, std::string> extra = {}) {
  table::ResolvedTable t;
  t.name = "t";
  t.physical_type = std::move(type);
  t.options = {{"connector", "filesystem"}, {"path", path}, {"format", "csv"}};
  for (auto& kv : extra) t.options[kv.first] = kv.second;
  return t;
}

TEST(FileSystemProjectionTest, EmitsTheProjectedColumns) {
  TempDir dir;
  // Field a of line 2 and field c of line 3 would not parse; neither is projected.
  std::string p = dir.write("a.csv", "1,one,1.5,10,x\nbad,two,2.5,20,y\n3,three,oops,30,\"z, w\"\n");
  Configuration conf;
  auto src = FileSystemTableFactory().createSource(fsTable(p, fiveFields()), conf);
  ASSERT_TRUE(src->applyProjection({1, 3}));
  CollectingOutput out;
  runSource(*src, 0, 1, out);
  ASSERT_EQ(out.batches.size(), 1u);
  const RowBatch& b = out.batches[0];
  ASSERT_EQ(b.numColumns(), 2u);
  EXPECT_EQ(b.column(0).type(), LogicalType::string());
  EXPECT_EQ(b.column(1).type(), LogicalType::bigint());
  ASSERT_EQ(b.numRows(), 3u);
  EXPECT_EQ(b.column(0).getString(0), "one");
  EXPECT_EQ(b.column(0).getString(1), "two");
  EXPECT_EQ(b.column(0).getString(2), "three");
  // 10 + 20 + 30 = 60
  EXPECT_EQ(b.column(1).getLong(0) + b.column(1).getLong(1) + b.column(1).getLong(2), 60);
  EXPECT_EQ(b.column(1).getLong(2), 30);
}

TEST(FileSystemProjectionTest, WrongFieldCountKeepsItsLineNumber) {
  TempDir dir;
  // Line 3 is blank; line 4 has 4 fields of 5.
  std::string p = dir.write("bad.csv", "1,one,1.5,10,x\n2,two,2.5,20,y\n\n4,four,4.5,40\n");
  Configuration conf;
  auto src = FileSystemTableFactory().createSource(fsTable(p, fiveFields()), conf);
  ASSERT_TRUE(src->applyProjection({0}));
  for (int parallelism : {1, 2}) {
    bool failed = false;
    for (int i = 0; i < parallelism; ++i) {
      CollectingOutput out;
      try {
        runSource(*src, i, parallelism, out);
      } catch (const InputError& e) {
        EXPECT_EQ(std::string(e.what()), p + ":4: row length mismatch: 5 fields expected but was 4");
        failed = true;
      }
    }
    EXPECT_TRUE(failed) << parallelism;
  }
}

TEST(FileSystemProjectionTest, ParallelSplitWithProjectionReadsEveryLineOnce) {
  TempDir dir;
  // Lines i = 1..1000: "i,<i%5 'z's>,bad,i*2,e"; field c never parses and is not projected.
  std::string content;
  for (int i = 1; i <= 1000; ++i)
    content += std::to_string(i) + "," + std::string(static_cast<size_t>(i % 5), 'z') + ",bad," +
               std::to_string(i * 2) + ",e\n";
  std::string p = dir.write("n.csv", content);
  Configuration conf;
  auto src = FileSystemTableFactory().createSource(fsTable(p, fiveFields()), conf);
  ASSERT_TRUE(src->applyProjection({0, 3}));
  for (int parallelism = 1; parallelism <= 3; ++parallelism) {
    int64_t sum_a = 0;
    int64_t sum_d = 0;
    size_t rows = 0;
    for (int i = 0; i < parallelism; ++i) {
      CollectingOutput out;
      runSource(*src, i, parallelism, out);
      for (const auto& b : out.batches) {
        ASSERT_EQ(b.numColumns(), 2u);
        for (size_t r = 0; r < b.numRows(); ++r) {
          EXPECT_EQ(b.column(1).getLong(r), 2 * b.column(0).getLong(r));
          sum_a += b.column(0).getLong(r);
          sum_d += b.column(1).getLong(r);
        }
        rows += b.numRows();
      }
    }
    // 1 + ... + 1000 = 1000 * 1001 / 2 = 500500; d doubles it.
    EXPECT_EQ(rows, 1000u) << parallelism;
    EXPECT_EQ(sum_a, 500500) << parallelism;
    EXPECT_EQ(sum_d, 1001000) << parallelism;
  }
}

// ---------------------------------------------------------------------------------------------

table::ResolvedTable genTable(RowType type, std::map<std::string, std::string> options) {
  table::ResolvedTable t;
  t.name = "gen";
  t.physical_type = std::move(type);
  t.options = std::move(options);
  t.options["connector"] = "datagen";
  t.options["rows-per-second"] = "100000000";
  return t;
}

// Every row of column `c` over the batches, as text (longs printed, strings as they are).
std::vector<std::string> columnValues(const CollectingOutput& out, size_t c) {
  std::vector<std::string> v;
  for (const auto& b : out.batches)
    for (size_t r = 0; r < b.numRows(); ++r)
      v.push_back(b.column(c).type().isString() ? std::string(b.column(c).getString(r))
                                                : std::to_string(b.column(c).getLong(r)));
  return v;
}

// a: sequence 1..10, b: sequence 20..25 (6 values), c: random STRING of length 4.
RowType genType() {
  return RowType{{"a", "b", "c"}, {LogicalType::bigint(), LogicalType::integer(), LogicalType::string()}};
}
std::map<std::string, std::string> genOptions() {
  return {{"fields.a.kind", "sequence"}, {"fields.a.start", "1"},  {"fields.a.end", "10"},
          {"fields.b.kind", "sequence"}, {"fields.b.start", "20"}, {"fields.b.end", "25"},
          {"fields.c.length", "4"}};
}

TEST(DataGenProjectionTest, UnprojectedSequenceStillBoundsTheRows) {
  Configuration conf;
  auto src = DataGenTableFactory().createSource(genTable(genType(), genOptions()), conf);
  ASSERT_TRUE(src->applyProjection({0, 2}));
  // p = 1: b has 6 values, a 10, so 6 rows: a = 1..6.
  {
    CollectingOutput out;
    runSource(*src, 0, 1, out);
    ASSERT_EQ(out.rows(), 6u);
    int64_t expected = 1;
    for (const auto& b : out.batches) {
      ASSERT_EQ(b.numColumns(), 2u);
      EXPECT_EQ(b.column(0).type(), LogicalType::bigint());
      EXPECT_EQ(b.column(1).type(), LogicalType::string());
      for (size_t r = 0; r < b.numRows(); ++r) {
        EXPECT_EQ(b.column(0).getLong(r), expected++);
        EXPECT_EQ(b.column(1).getString(r).size(), 4u);
      }
    }
  }
  // p = 2: subtask 0 gets b = 20, 22, 24 and a = 1, 3, 5, 7, 9 -> 3 rows; subtask 1 gets b = 21, 23, 25
  // and a = 2, 4, 6, 8, 10 -> 3 rows, a = 2, 4, 6.
  {
    CollectingOutput out0;
    CollectingOutput out1;
    runSource(*src, 0, 2, out0);
    runSource(*src, 1, 2, out1);
    EXPECT_EQ(columnValues(out0, 0), (std::vector<std::string>{"1", "3", "5"}));
    EXPECT_EQ(columnValues(out1, 0), (std::vector<std::string>{"2", "4", "6"}));
  }
}

TEST(DataGenProjectionTest, ProjectedRandomFieldKeepsItsValues) {
  Configuration conf;
  auto full = DataGenTableFactory().createSource(genTable(genType(), genOptions()), conf);
  auto projected = DataGenTableFactory().createSource(genTable(genType(), genOptions()), conf);
  ASSERT_TRUE(projected->applyProjection({2}));
  CollectingOutput a;
  CollectingOutput b;
  runSource(*full, 0, 1, a);
  runSource(*projected, 0, 1, b);
  ASSERT_EQ(a.rows(), 6u);
  ASSERT_EQ(b.rows(), 6u);
  ASSERT_EQ(b.batches[0].numColumns(), 1u);
  // The generator of c is seeded by its physical index, so projection does not change its values.
  EXPECT_EQ(columnValues(a, 2), columnValues(b, 0));
}

TEST(DataGenProjectionTest, NumberOfRowsWithOnlyARandomField) {
  Configuration conf;
  auto src = DataGenTableFactory().createSource(
      genTable(RowType{{"x", "y"}, {LogicalType::integer(), LogicalType::boolean()}},
               {{"number-of-rows", "7"}, {"fields.x.min", "5"}, {"fields.x.max", "5"}}),
      conf);
  ASSERT_TRUE(src->applyProjection({0}));
  CollectingOutput out;
  runSource(*src, 0, 1, out);
  // x in [5, 5] is always 5.
  EXPECT_EQ(columnValues(out, 0), std::vector<std::string>(7, "5"));
  EXPECT_EQ(out.batches[0].numColumns(), 1u);
}

TEST(DataGenProjectionTest, BadProjectionIsAnInternalError) {
  Configuration conf;
  auto src = DataGenTableFactory().createSource(genTable(genType(), genOptions()), conf);
  EXPECT_THROW(src->applyProjection({}), InternalError);
  EXPECT_THROW(src->applyProjection({2, 2}), InternalError);
  EXPECT_THROW(src->applyProjection({3}), InternalError);
}

}  // namespace
}  // namespace sluice::connectors
