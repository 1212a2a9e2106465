// CsvRowSerializer: the writing half of the csv format (csv_format.h).
#include <algorithm>
#include <charconv>
#include <string>

#include <fmt/format.h>

#include "connectors/csv_format.h"
#include "types/value_format.h"

namespace sluice::connectors {

using types::Column;
using types::LogicalType;
using types::RowBatch;
using types::TypeId;

CsvRowSerializer::CsvRowSerializer(types::RowType row_type, CsvFormatOptions options)
    : row_type_(std::move(row_type)), options_(std::move(options)) {
  // Jackson's CsvEncoder: characters below max(separator, quote, '\n') + 1 may need quotes.
  int m = static_cast<unsigned char>(options_.field_delimiter);
  if (options_.quote_enabled) m = std::max(m, static_cast<int>(static_cast<unsigned char>(options_.quote_character)));
  m = std::max(m, static_cast<int>('\n'));
  min_safe_char_ = m + 1;
}

void CsvRowSerializer::appendString(std::string_view v, std::string& out) const {
  bool quote = false;
  if (options_.quote_enabled) {
    if (v.size() > 24) {
      quote = true;
    } else {
      for (char ch : v) {
        int c = static_cast<unsigned char>(ch);
        if (c < min_safe_char_ || (options_.escape_character && ch == *options_.escape_character)) {
          quote = true;
          break;
        }
      }
    }
  }
  if (!quote) {
    out.append(v.data(), v.size());
    return;
  }
  const char q = options_.quote_character;
  out += q;
  for (char ch : v) {
    if (ch == q) {
      out += q;
    } else if (options_.escape_character && ch == *options_.escape_character) {
      out += ch;
    }
    out += ch;
  }
  out += q;
}

void CsvRowSerializer::appendRow(const RowBatch& batch, size_t row, std::string& out) const {
  for (size_t c = 0; c < batch.numColumns(); ++c) {
    if (c) out += options_.field_delimiter;
    const Column& col = batch.column(c);
    if (col.isNull(row)) {
      if (options_.null_literal) out += *options_.null_literal;
      continue;
    }
    const LogicalType& t = col.type();
    switch (t.id) {
      case TypeId::kBoolean: out += col.getLong(row) ? "true" : "false"; break;
      case TypeId::kTinyInt:
      case TypeId::kSmallInt:
      case TypeId::kInt:
      case TypeId::kBigInt: {
        char buf[24];
        auto res = std::to_chars(buf, buf + sizeof(buf), col.getLong(row));
        out.append(buf, res.ptr);
        break;
      }
      case TypeId::kDouble: types::formatDouble(col.getDouble(row), out); break;
      case TypeId::kFloat: types::formatFloat(col.getDouble(row), out); break;
      case TypeId::kDate: types::formatDate(col.getLong(row), out); break;
      case TypeId::kTime: {
        // ISO_LOCAL_TIME: seconds always, fraction without trailing zeros.
        const int64_t ms = col.getLong(row);
        std::string s = fmt::format("{:02}:{:02}:{:02}", ms / 3600000, ms / 60000 % 60, ms / 1000 % 60);
        if (ms % 1000 != 0) {
          std::string frac = fmt::format("{:03}", ms % 1000);
          while (frac.back() == '0') frac.pop_back();
          s += '.';
          s += frac;
        }
        out += s;
        break;
      }
      case TypeId::kDecimal:
        if (options_.write_bigdecimal_in_scientific_notation) {
          types::formatDecimalJava(col.getLong(row), t.scale, out);
        } else {
          types::formatDecimal(col.getLong(row), t.scale, out);
        }
        break;
      case TypeId::kVarchar:
      case TypeId::kChar: appendString(col.getString(row), out); break;
      case TypeId::kTimestamp: {
        // ISO_LOCAL_DATE ' ' ISO_LOCAL_TIME: seconds always, fraction without trailing zeros.
        types::DateTimeParts p = types::splitTimestamp(col.getLong(row));
        std::string s = fmt::format("{:04}-{:02}-{:02} {:02}:{:02}:{:02}", p.year, p.month, p.day, p.hour,
                                    p.minute, p.second);
        if (p.millis != 0) {
          std::string frac = fmt::format("{:03}", p.millis);
          while (frac.back() == '0') frac.pop_back();
          s += '.';
          s += frac;
        }
        appendString(s, out);
        break;
      }
      case TypeId::kTimestampLtz: {
        // RowDataToCsvConverters: SQL_TIMESTAMP_WITH_LOCAL_TIMEZONE_FORMAT, the instant in UTC.
        std::string s;
        types::formatInstantText(col.getLong(row), /*iso=*/false, s);
        appendString(s, out);
        break;
      }
      default: {
        std::string s;
        types::formatField(col, row, s);
        appendString(s, out);
      }
    }
  }
  out += '\n';
}

}  // namespace sluice::connectors
