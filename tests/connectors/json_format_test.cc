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
  EXPECT_EQ(b.numRows(), 0u);
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
  // Two bad lines skipped, one good kept: 2 errors, 1 row.
  EXPECT_EQ(l.parseLine("{not json", bl, "f.json", 1), 0u);
  EXPECT_EQ(l.parseLine(R"({"id": "x"})", bl, "f.json", 2), 0u);
  EXPECT_EQ(l.parseLine(R"({"id": 3, "name": "c", "score": 2})", bl, "f.json", 3), 1u);
  EXPECT_EQ(l.parseErrors(), 2);
  ASSERT_EQ(bl.numRows(), 1u);
  EXPECT_EQ(rowText(bl, 0), "+I[3, c, 2.00]");

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

}  // namespace
}  // namespace sluice::connectors
