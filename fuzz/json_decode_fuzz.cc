// libFuzzer target for the json and debezium-json decoders (connectors/json_format.h), built by
// fuzz/CMakeLists.txt and run by fuzz/run.sh (corpus fuzz/corpus/json).
//
// Input: the first byte picks the flavor and options, the rest is one message. It is decoded with a
// fixed schema holding one column of every supported type:
//  - without ignore-parse-errors only sluice::InputError may escape, and it names the message's place;
//  - with it nothing may throw, and a skipped message counts one parse error and appends no row;
//  - every decoded row, written back by JsonRowSerializer (json) and decoded again, gives the same values
//    (the serializer writes what the deserializer reads).

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "common/error.h"
#include "connectors/json_format.h"

namespace {

using sluice::connectors::JsonFlavor;
using sluice::connectors::JsonFormatOptions;
using sluice::connectors::JsonRowDeserializer;
using sluice::connectors::JsonRowSerializer;
using sluice::connectors::JsonTimestampFormat;
using sluice::types::LogicalType;
using sluice::types::RowBatch;
using sluice::types::RowType;
using sluice::types::TypeId;

const RowType& schema() {
  static const RowType t{
      {"i", "b", "d", "m", "f", "s", "c", "t"},
      {LogicalType::integer(), LogicalType::bigint(), LogicalType::doubleType(), LogicalType::decimal(10, 3),
       LogicalType::boolean(), LogicalType::string(), LogicalType::charType(2), LogicalType::timestamp(3)}};
  return t;
}

[[noreturn]] void crash(const char* what) {
  fprintf(stderr, "json_decode_fuzz: %s\n", what);
  abort();
}

bool sameValue(const RowBatch& a, size_t ra, const RowBatch& b, size_t rb, size_t c) {
  const auto& x = a.column(c);
  const auto& y = b.column(c);
  if (x.isNull(ra) || y.isNull(rb)) return x.isNull(ra) == y.isNull(rb);
  if (x.type().isString()) return x.getString(ra) == y.getString(rb);
  if (x.type().id == TypeId::kDouble) {
    const double u = x.getDouble(ra), v = y.getDouble(rb);
    return (std::isnan(u) && std::isnan(v)) || std::memcmp(&u, &v, sizeof u) == 0;
  }
  return x.getLong(ra) == y.getLong(rb);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const uint8_t bits = data[0];
  const std::string_view message(reinterpret_cast<const char*>(data + 1), size - 1);
  const JsonFlavor flavor = (bits & 1) ? JsonFlavor::kDebezium : JsonFlavor::kJson;
  JsonFormatOptions o;
  o.ignore_parse_errors = (bits & 2) != 0;
  o.fail_on_missing_field = flavor == JsonFlavor::kJson && !o.ignore_parse_errors && (bits & 4) != 0;
  o.schema_include = flavor == JsonFlavor::kDebezium && (bits & 8) != 0;
  o.timestamp_format = (bits & 16) ? JsonTimestampFormat::kIso8601 : JsonTimestampFormat::kSql;

  JsonRowDeserializer d(schema(), o, flavor);
  RowBatch rows(d.producedType());
  size_t n = 0;
  try {
    n = d.deserialize(message, rows, "fuzz-message");
  } catch (const sluice::InputError& e) {
    if (o.ignore_parse_errors) crash("an error escaped with ignore-parse-errors");
    if (std::string_view(e.what()).rfind("fuzz-message: ", 0) != 0) crash("an error without its place");
    if (rows.numRows() != 0) crash("a failed message left rows behind");
    return 0;
  }
  if (n != rows.numRows() || n > 2) crash("row count differs from the returned count");
  if (n == 0 && !message.empty() && d.parseErrors() != 1) crash("a message vanished without a parse error");

  // Round trip through the json serializer.
  JsonFormatOptions plain;
  plain.timestamp_format = o.timestamp_format;
  const JsonRowSerializer writer(schema(), plain, JsonFlavor::kJson);
  JsonRowDeserializer reader(schema(), plain, JsonFlavor::kJson);
  for (size_t r = 0; r < n; ++r) {
    std::string out;
    writer.serialize(rows, r, out);
    RowBatch again(reader.producedType());
    try {
      if (reader.deserialize(out, again, "round-trip") != 1) crash("round trip lost the row");
    } catch (const sluice::InputError& e) {
      fprintf(stderr, "%s\n", e.what());
      crash("the serializer wrote what the deserializer rejects");
    }
    for (size_t c = 0; c < schema().size(); ++c)
      if (!sameValue(rows, r, again, 0, c)) {
        fprintf(stderr, "column %zu differs after the round trip through %s\n", c, out.c_str());
        crash("round trip changed a value");
      }
  }
  return 0;
}
