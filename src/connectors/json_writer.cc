// JsonRowSerializer (json_format.h): rows to JSON messages, as Flink's RowDataToJsonConverters and
// Jackson write them.
#include <fmt/format.h>

#include <cmath>

#include "common/error.h"
#include "connectors/json_format.h"
#include "types/value_format.h"

namespace sluice::connectors {

using types::Column;
using types::RowBatch;
using types::RowKind;
using types::TypeId;

namespace {

void twoDigits(unsigned v, std::string& out) {
  out += static_cast<char>('0' + v / 10);
  out += static_cast<char>('0' + v % 10);
}

/// Flink's SQL_TIMESTAMP_FORMAT / ISO_LOCAL_DATE_TIME output: "2020-12-30 12:13:14" (or with 'T'), then
/// the fraction with the fewest digits that hold it (".12" for 120 ms), none when zero.
void appendTimestamp(int64_t epoch_ms, JsonTimestampFormat format, std::string& out) {
  const types::DateTimeParts p = types::splitTimestamp(epoch_ms);
  fmt::format_to(std::back_inserter(out), "{:04d}-", p.year);
  twoDigits(p.month, out);
  out += '-';
  twoDigits(p.day, out);
  out += format == JsonTimestampFormat::kSql ? ' ' : 'T';
  twoDigits(p.hour, out);
  out += ':';
  twoDigits(p.minute, out);
  out += ':';
  twoDigits(p.second, out);
  if (p.millis != 0) {
    unsigned ms = p.millis;
    int digits = 3;
    while (ms % 10 == 0) {
      ms /= 10;
      --digits;
    }
    fmt::format_to(std::back_inserter(out), ".{:0{}d}", ms, digits);
  }
}

}  // namespace

void appendJsonString(std::string_view text, std::string& out) {
  out += '"';
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20)
          fmt::format_to(std::back_inserter(out), "\\u{:04X}", c);
        else
          out += ch;
    }
  }
  out += '"';
}

JsonRowSerializer::JsonRowSerializer(types::RowType row_type, JsonFormatOptions options, JsonFlavor flavor)
    : row_type_(std::move(row_type)), options_(options), flavor_(flavor) {
  for (size_t i = 0; i < row_type_.size(); ++i) {
    const auto id = row_type_.types[i].id;
    if (id == TypeId::kIntervalDayTime || id == TypeId::kNull)
      throw UserError(fmt::format("The json format does not support the type {} of column '{}'",
                                  row_type_.types[i].toString(), row_type_.names[i]));
  }
}

void JsonRowSerializer::writeObject(const RowBatch& batch, size_t row, std::string& out) const {
  out += '{';
  bool first = true;
  for (size_t c = 0; c < row_type_.size(); ++c) {
    const Column& col = batch.column(c);
    const bool null = col.isNull(row);
    if (null && options_.encode_ignore_null_fields) continue;
    if (!first) out += ',';
    first = false;
    appendJsonString(row_type_.names[c], out);
    out += ':';
    if (null) {
      out += "null";
      continue;
    }
    const types::LogicalType& t = row_type_.types[c];
    switch (t.id) {
      case TypeId::kVarchar:
      case TypeId::kChar:
        appendJsonString(col.getString(row), out);
        break;
      case TypeId::kBoolean:
        out += col.getLong(row) != 0 ? "true" : "false";
        break;
      case TypeId::kDouble:
      case TypeId::kFloat: {
        const double d = col.getDouble(row);
        std::string text;
        if (t.id == TypeId::kFloat) types::formatFloat(d, text);
        else types::formatDouble(d, text);
        if (std::isfinite(d)) out += text;
        else appendJsonString(text, out);  // Jackson quotes NaN and Infinity
        break;
      }
      case TypeId::kDate: {
        std::string text;
        types::formatDate(col.getLong(row), text);
        appendJsonString(text, out);
        break;
      }
      case TypeId::kTime: {
        // SQL_TIME_FORMAT: HH:mm:ss, with the fraction when the type has one.
        std::string text;
        types::formatTimeSql(col.getLong(row), std::min(t.precision, 3), text);
        appendJsonString(text, out);
        break;
      }
      case TypeId::kDecimal:
        if (options_.encode_decimal_as_plain_number)
          types::formatDecimal(col.getLong(row), t.scale, out);
        else
          types::formatDecimalJava(col.getLong(row), t.scale, out);
        break;
      case TypeId::kTimestamp:
        out += '"';
        appendTimestamp(col.getLong(row), options_.timestamp_format, out);
        out += '"';
        break;
      case TypeId::kTimestampLtz:
        // The *_TIMESTAMP_WITH_LOCAL_TIMEZONE_FORMAT of json.timestamp-format.standard: UTC with a 'Z'.
        out += '"';
        appendTimestamp(col.getLong(row), options_.timestamp_format, out);
        out += "Z\"";
        break;
      default:
        fmt::format_to(std::back_inserter(out), "{}", col.getLong(row));
        break;
    }
  }
  out += '}';
}

void JsonRowSerializer::serialize(const RowBatch& batch, size_t row, std::string& out) const {
  if (flavor_ == JsonFlavor::kJson) {
    writeObject(batch, row, out);
    return;
  }
  // DebeziumJsonSerializationSchema: inserts and update-afters are "c", update-befores and deletes "d".
  const RowKind kind = batch.kind(row);
  if (kind == RowKind::kInsert || kind == RowKind::kUpdateAfter) {
    out += R"({"before":null,"after":)";
    writeObject(batch, row, out);
    out += R"(,"op":"c"})";
  } else {
    out += R"({"before":)";
    writeObject(batch, row, out);
    out += R"(,"after":null,"op":"d"})";
  }
}

}  // namespace sluice::connectors
