#include "connectors/json_format.h"

#include <gtest/gtest.h>

#include <string>

#include "common/error.h"
#include "types/value_format.h"

namespace sluice::connectors {
namespace {

using types::LogicalType;
using types::RowBatch;
using types::RowKind;
using types::RowType;

RowType idNameScore() {
  return RowType{{"id", "name", "score"}, {LogicalType::bigint(), LogicalType::string(), LogicalType::decimal(5, 2)}};
}

// Row `r` as "+I[1, a, 1.50]" from the columns (BIGINT, STRING, DECIMAL(5,2)).
std::string rowText(const RowBatch& b, size_t r) {
  std::string out(types::shortString(b.kind(r)));
  out += "[";
  out += b.column(0).isNull(r) ? "null" : std::to_string(b.column(0).getLong(r));
  out += ", ";
  out += b.column(1).isNull(r) ? "null" : std::string(b.column(1).getString(r));
  out += ", ";
  if (b.column(2).isNull(r)) {
    out += "null";
  } else {
    types::formatDecimal(b.column(2).getLong(r), 2, out);
  }
  return out + "]";
}

TEST(JsonFormatTest, PlainJsonMatchesFieldsByNameAndMissingIsNull) {
  JsonRowDeserializer d(idNameScore(), {}, JsonFlavor::kJson);
  RowBatch b(d.producedType());
  // Field order differs from the schema; "score" as a string converts (Flink parses asText()).
  EXPECT_EQ(d.parseLine(R"({"name":"a\u00e9\"q","score":"1.5","id":7,"extra":[1,{"x":2}]})", b, "f.json", 1), 1u);
  EXPECT_EQ(d.parseLine(R"({"id":8})", b, "f.json", 2), 1u);
  EXPECT_EQ(d.parseLine("   ", b, "f.json", 3), 0u);
  ASSERT_EQ(b.numRows(), 2u);
  EXPECT_EQ(rowText(b, 0), "+I[7, a\xc3\xa9\"q, 1.50]");
  EXPECT_EQ(rowText(b, 1), "+I[8, null, null]");
}

TEST(JsonFormatTest, ErrorsNamePathAndLine) {
  JsonRowDeserializer d(idNameScore(), {}, JsonFlavor::kJson);
  RowBatch b(d.producedType());
  try {
    d.parseLine(R"({"id": "x7"})", b, "data/f.json", 12);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("data/f.json:12:"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("id"), std::string::npos) << e.what();
  }
  EXPECT_THROW(d.parseLine(R"({"id": 1,})", b, "f.json", 2), InputError);
  EXPECT_THROW(d.parseLine(R"([1, 2])", b, "f.json", 3), InputError);
  // 2147483648 = INT max + 1 does not fit an INT column.
  JsonRowDeserializer ints(RowType{{"i"}, {LogicalType::integer()}}, {}, JsonFlavor::kJson);
  RowBatch bi(ints.producedType());
  EXPECT_THROW(ints.parseLine(R"({"i": 2147483648})", bi, "f.json", 1), InputError);
  // DECIMAL(5, 2) holds at most 999.99: 12345.678 (5 integer digits) and 999.995 (rounds to 1000.00) are out of range.
  EXPECT_THROW(d.parseLine(R"({"score": 12345.678})", b, "f.json", 4), InputError);
  EXPECT_THROW(d.parseLine(R"({"score": -999.995})", b, "f.json", 5), InputError);
  EXPECT_EQ(b.numRows(), 0u);
  EXPECT_EQ(d.parseLine(R"({"score": -999.994})", b, "f.json", 6), 1u);
  EXPECT_EQ(rowText(b, 0), "+I[null, null, -999.99]");
}

TEST(JsonFormatTest, FailOnMissingFieldAndIgnoreParseErrors) {
  JsonFormatOptions strict;
  strict.fail_on_missing_field = true;
  JsonRowDeserializer d(idNameScore(), strict, JsonFlavor::kJson);
  RowBatch b(d.producedType());
  EXPECT_THROW(d.parseLine(R"({"id": 1, "name": "a"})", b, "f.json", 1), InputError);

  JsonFormatOptions lenient;
  lenient.ignore_parse_errors = true;
  JsonRowDeserializer l(idNameScore(), lenient, JsonFlavor::kJson);
  RowBatch bl(l.producedType());
  // A line that is not JSON is skipped (1 error); a field that does not convert is NULL and its row
  // kept (Flink's wrapIntoNullableConverter); a good line is kept.
  EXPECT_EQ(l.parseLine("{not json", bl, "f.json", 1), 0u);
  EXPECT_EQ(l.parseLine(R"({"id": "x", "name": "b"})", bl, "f.json", 2), 1u);
  EXPECT_EQ(l.parseLine(R"({"id": 3, "name": "c", "score": 2})", bl, "f.json", 3), 1u);
  EXPECT_EQ(l.parseErrors(), 1);
  ASSERT_EQ(bl.numRows(), 2u);
  EXPECT_EQ(rowText(bl, 0), "+I[null, b, null]");
  EXPECT_EQ(rowText(bl, 1), "+I[3, c, 2.00]");

  OptionMap both{{"json.ignore-parse-errors", "true"}, {"json.fail-on-missing-field", "true"}};
  EXPECT_THROW(parseJsonFormatOptions(both, JsonFlavor::kJson, "t"), UserError);
}

TEST(JsonFormatTest, DebeziumOpsBecomeRowKinds) {
  JsonRowDeserializer d(idNameScore(), {}, JsonFlavor::kDebezium);
  RowBatch b(d.producedType());
  EXPECT_EQ(d.parseLine(R"({"before":null,"after":{"id":1,"name":"a","score":1},"op":"c"})", b, "f", 1), 1u);
  EXPECT_EQ(d.parseLine(R"({"before":null,"after":{"id":2,"name":"b","score":2},"op":"r"})", b, "f", 2), 1u);
  EXPECT_EQ(d.parseLine(R"({"before":{"id":1,"name":"a","score":1},"after":{"id":1,"name":"a","score":3.25},"op":"u"})",
                        b, "f", 3),
            2u);
  EXPECT_EQ(d.parseLine(R"({"before":{"id":2,"name":"b","score":2},"after":null,"op":"d"})", b, "f", 4), 1u);
  ASSERT_EQ(b.numRows(), 5u);
  EXPECT_EQ(rowText(b, 0), "+I[1, a, 1.00]");
  EXPECT_EQ(rowText(b, 1), "+I[2, b, 2.00]");
  EXPECT_EQ(rowText(b, 2), "-U[1, a, 1.00]");
  EXPECT_EQ(rowText(b, 3), "+U[1, a, 3.25]");
  EXPECT_EQ(rowText(b, 4), "-D[2, b, 2.00]");
}

TEST(JsonFormatTest, DebeziumErrorsAndSchemaInclude) {
  JsonRowDeserializer d(idNameScore(), {}, JsonFlavor::kDebezium);
  RowBatch b(d.producedType());
  try {
    d.parseLine(R"({"before":null,"after":{"id":1},"op":"x"})", b, "cdc.json", 4);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("cdc.json:4: Unknown \"op\" value \"x\""), std::string::npos) << e.what();
  }
  // An update without "before" is an error, and the half-built update leaves no row behind.
  EXPECT_THROW(d.parseLine(R"({"before":null,"after":{"id":1},"op":"u"})", b, "cdc.json", 5), InputError);
  EXPECT_EQ(b.numRows(), 0u);

  JsonFormatOptions o;
  o.schema_include = true;
  o.ignore_parse_errors = true;
  JsonRowDeserializer s(idNameScore(), o, JsonFlavor::kDebezium);
  RowBatch bs(s.producedType());
  EXPECT_EQ(s.parseLine(R"({"schema":{},"payload":{"before":null,"after":{"id":5,"name":"e"},"op":"c"}})", bs, "f", 1),
            1u);
  EXPECT_EQ(s.parseLine(R"({"before":null,"after":{"id":6},"op":"c"})", bs, "f", 2), 0u);  // no payload: skipped
  EXPECT_EQ(s.parseErrors(), 1);
  ASSERT_EQ(bs.numRows(), 1u);
  EXPECT_EQ(rowText(bs, 0), "+I[5, e, null]");
}

TEST(JsonFormatTest, MalformedJsonAnywhereIsAnErrorNamingThePlace) {
  JsonRowDeserializer d(idNameScore(), {}, JsonFlavor::kJson);
  RowBatch b(d.producedType());
  // Each document is broken in a place the row does not read (the "extra" field) or in its structure.
  const char* bad[] = {
      R"({"id": 1, "extra": [1,,2]})",     // missing array element
      R"({"id": 1, "extra": {"x": 1,}})",  // trailing comma in a nested object
      R"({"id": 1}})",                     // text after the object
      R"({"id": 1, "extra": 01})",         // leading zero
      R"({"id": 1, "extra": 1x})",         // not a number
      R"({"id": 1, "extra": 1.})",         // no fraction digits
      R"({"id": 1, "extra": tru})",        // bad literal
      R"({"id": 1, "extra": "\q"})",       // bad escape
      "{\"id\": 1, \"extra\": \"a\tb\"}",  // raw control character in a string
      R"({"id": 1 "name": "a"})",          // missing comma
      R"({"id": 1)",                       // unterminated
      "\"just a string\"",                 // not an object
  };
  int line = 0;
  for (const char* text : bad) {
    ++line;
    try {
      d.parseLine(text, b, "in.json", line);
      ADD_FAILURE() << "accepted: " << text;
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("in.json:" + std::to_string(line) + ": ", 0), 0u) << e.what();
    }
  }
  EXPECT_EQ(b.numRows(), 0u);
  // A first message that fails simdjson's stage 1 (here a missing ':') on a fresh deserializer.
  JsonRowDeserializer fresh(idNameScore(), {}, JsonFlavor::kDebezium);
  EXPECT_THROW(fresh.parseLine(R"({"before"a"},"after":{"id":1},"op":"c"})", b, "in.json", 1), InputError);
  // A structural error names its column: the '"' of "name" is the 10th character.
  try {
    d.parseLine(R"({"id": 1 "name": "a"})", b, "in.json", 1);
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("at column 10"), std::string::npos) << e.what();
  }
}

TEST(JsonFormatTest, DeserializeOneMessageNamesTheGivenPlace) {
  JsonRowDeserializer d(idNameScore(), {}, JsonFlavor::kJson);
  RowBatch b(d.producedType());
  // A message need not be a line: a newline inside is whitespace; no terminator or padding needed.
  const std::string buffer = "{\"id\": 4,\n \"name\": \"d\"}garbage-after-the-view";
  EXPECT_EQ(d.deserialize(std::string_view(buffer).substr(0, 23), b, "topic 't' partition 0 offset 9"), 1u);
  EXPECT_EQ(d.deserialize("", b, "topic 't' partition 0 offset 10"), 0u);  // empty / tombstone: no row
  ASSERT_EQ(b.numRows(), 1u);
  EXPECT_EQ(rowText(b, 0), "+I[4, d, null]");
  try {
    d.deserialize(R"({"id": "four"})", b, "topic 't' partition 0 offset 11");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("topic 't' partition 0 offset 11: Fail to deserialize at field: id", 0), 0u)
        << e.what();
  }
}

TEST(JsonFormatTest, RepeatedFieldLastWinsAndNonStringValuesAreJsonText) {
  RowType t{{"id", "name"}, {LogicalType::bigint(), LogicalType::string()}};
  JsonRowDeserializer d(t, {}, JsonFlavor::kJson);
  RowBatch b(d.producedType());
  EXPECT_EQ(d.parseLine(R"({"id": 1, "name": {"a": [1, 2], "b": "x"} , "id": 2})", b, "f", 1), 1u);
  EXPECT_EQ(d.parseLine(R"({"id": -3, "name": 1.5e3})", b, "f", 2), 1u);
  EXPECT_EQ(d.parseLine(R"({"id": "  5 ", "name": " padded  "})", b, "f", 3), 1u);
  ASSERT_EQ(b.numRows(), 3u);
  EXPECT_EQ(b.column(0).getLong(0), 2);
  EXPECT_EQ(b.column(1).getString(0), R"({"a": [1, 2], "b": "x"})");
  EXPECT_EQ(b.column(0).getLong(1), -3);
  EXPECT_EQ(b.column(1).getString(1), "1.5e3");
  EXPECT_EQ(b.column(0).getLong(2), 5);  // "  5 " parses as Flink's trimmed asText()
  EXPECT_EQ(b.column(1).getString(2), " padded  ");
}

TEST(JsonFormatTest, ProjectionReadsOnlyTheProjectedFields) {
  JsonRowDeserializer d(idNameScore(), {}, JsonFlavor::kJson, {0, 2});
  RowBatch b(d.producedType());
  ASSERT_EQ(d.producedType().size(), 2u);
  // "name" is not projected, so its bad value is no error.
  EXPECT_EQ(d.parseLine(R"({"score": 2.5, "name": [1], "id": 9})", b, "f", 1), 1u);
  ASSERT_EQ(b.numRows(), 1u);
  EXPECT_EQ(b.column(0).getLong(0), 9);
  EXPECT_EQ(b.column(1).getLong(0), 250);
}

TEST(JsonFormatTest, TimestampFormatStandardSqlAndIso8601) {
  RowType t{{"ts"}, {LogicalType::timestamp(3)}};
  // 2020-12-30 12:13:14 UTC = 1609330394 s (date -u -d ... +%s); 12:13:00 = 1609330380 s.
  JsonRowDeserializer sql(t, {}, JsonFlavor::kJson);
  RowBatch bs(sql.producedType());
  EXPECT_EQ(sql.parseLine(R"({"ts": "2020-12-30 12:13:14.123"})", bs, "f", 1), 1u);
  EXPECT_EQ(sql.parseLine(R"({"ts": "2020-12-30 12:13:14"})", bs, "f", 2), 1u);
  EXPECT_EQ(sql.parseLine(R"({"ts": "2020-12-30 12:13:14.123456789"})", bs, "f", 3), 1u);
  ASSERT_EQ(bs.numRows(), 3u);
  EXPECT_EQ(bs.column(0).getLong(0), 1609330394123);
  EXPECT_EQ(bs.column(0).getLong(1), 1609330394000);
  EXPECT_EQ(bs.column(0).getLong(2), 1609330394123);
  // The SQL standard rejects the ISO 'T', a missing second, one-digit fields and numbers.
  for (const char* bad : {R"({"ts": "2020-12-30T12:13:14"})", R"({"ts": "2020-12-30 12:13"})",
                          R"({"ts": "2020-1-30 12:13:14"})", R"({"ts": 1609330394123})"})
    EXPECT_THROW(sql.parseLine(bad, bs, "f", 4), InputError) << bad;

  JsonFormatOptions iso_options =
      parseJsonFormatOptions({{"json.timestamp-format.standard", "ISO-8601"}}, JsonFlavor::kJson, "t");
  JsonRowDeserializer iso(t, iso_options, JsonFlavor::kJson);
  RowBatch bi(iso.producedType());
  EXPECT_EQ(iso.parseLine(R"({"ts": "2020-12-30T12:13:14.5"})", bi, "f", 1), 1u);
  EXPECT_EQ(iso.parseLine(R"({"ts": "2020-12-30T12:13"})", bi, "f", 2), 1u);
  ASSERT_EQ(bi.numRows(), 2u);
  EXPECT_EQ(bi.column(0).getLong(0), 1609330394500);
  EXPECT_EQ(bi.column(0).getLong(1), 1609330380000);
  try {
    iso.parseLine(R"({"ts": "2020-12-30 12:13:14"})", bi, "f", 3);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("ISO-8601"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parseJsonFormatOptions({{"json.timestamp-format.standard", "RFC"}}, JsonFlavor::kJson, "t"), UserError);
  EXPECT_THROW(parseJsonFormatOptions({{"debezium-json.map-null-key.mode", "KEEP"}}, JsonFlavor::kDebezium, "t"),
               UserError);
}

TEST(JsonFormatTest, SerializerWritesFlinkJsonAndReadsBack) {
  RowType t{{"id", "name", "price", "ok", "ts", "ratio"},
            {LogicalType::bigint(), LogicalType::string(), LogicalType::decimal(10, 2), LogicalType::boolean(),
             LogicalType::timestamp(3), LogicalType::doubleType()}};
  RowBatch in(t);
  in.column(0).appendLong(7);
  in.column(1).appendString("a\"b\\c\n\x01");
  in.column(2).appendLong(-1205);  // -12.05
  in.column(3).appendLong(1);
  in.column(4).appendLong(915246245120);  // 1999-01-02 03:04:05.120 UTC (date -u -d ... +%s)
  in.column(5).appendDouble(0.5);
  in.kinds().push_back(RowKind::kInsert);
  for (size_t c = 0; c < t.size(); ++c) in.column(c).appendNull();
  in.kinds().push_back(RowKind::kDelete);

  JsonRowSerializer json(t, {}, JsonFlavor::kJson);
  std::string m0, m1;
  json.serialize(in, 0, m0);
  json.serialize(in, 1, m1);
  EXPECT_EQ(m0,
            R"({"id":7,"name":"a\"b\\c\n\u0001","price":-12.05,"ok":true,"ts":"1999-01-02 03:04:05.12","ratio":0.5})");
  EXPECT_EQ(m1, R"({"id":null,"name":null,"price":null,"ok":null,"ts":null,"ratio":null})");

  JsonFormatOptions o;
  o.encode_ignore_null_fields = true;
  o.timestamp_format = JsonTimestampFormat::kIso8601;
  std::string m2, m3;
  JsonRowSerializer(t, o, JsonFlavor::kJson).serialize(in, 1, m2);
  EXPECT_EQ(m2, "{}");
  JsonRowSerializer(t, o, JsonFlavor::kDebezium).serialize(in, 0, m3);
  EXPECT_EQ(m3, R"({"before":null,"after":{"id":7,"name":"a\"b\\c\n\u0001","price":-12.05,"ok":true,)"
                R"("ts":"1999-01-02T03:04:05.12","ratio":0.5},"op":"c"})");

  // What the serializer writes, the deserializer reads back to the same values.
  JsonRowDeserializer back(t, {}, JsonFlavor::kJson);
  RowBatch out(back.producedType());
  ASSERT_EQ(back.deserialize(m0, out, "m0"), 1u);
  ASSERT_EQ(back.deserialize(m1, out, "m1"), 1u);
  EXPECT_EQ(out.column(0).getLong(0), 7);
  EXPECT_EQ(out.column(1).getString(0), "a\"b\\c\n\x01");
  EXPECT_EQ(out.column(2).getLong(0), -1205);
  EXPECT_EQ(out.column(3).getLong(0), 1);
  EXPECT_EQ(out.column(4).getLong(0), 915246245120);
  EXPECT_EQ(out.column(5).getDouble(0), 0.5);
  for (size_t c = 0; c < t.size(); ++c) EXPECT_TRUE(out.column(c).isNull(1)) << c;
}

}  // namespace
}  // namespace sluice::connectors
