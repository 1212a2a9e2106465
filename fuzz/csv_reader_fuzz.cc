// libFuzzer target for the csv format reader (connectors/csv_format.h).
//
// Build and run from the repository root:
//   clang++-14 -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -Isrc fuzz/csv_reader_fuzz.cc \
//     src/connectors/csv_format.cc src/connectors/connector_options.cc src/types/logical_type.cc \
//     src/types/row_batch.cc src/types/value_format.cc src/common/config.cc -lfmt -lyaml-cpp -o csv_reader_fuzz
//   ./csv_reader_fuzz -max_total_time=60 fuzz/corpus/csv
//
// Input: the first byte picks the format options, the rest is the file content. Each input is read
// with a fixed schema holding one column of every supported type:
//  - without csv.ignore-parse-errors: only sluice::SluiceError may escape;
//  - with it: nothing may throw, and reading the content split into 1..4 byte ranges (as parallel
//    subtasks do) must give the same rows and the same error count as one sequential read.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "common/error.h"
#include "connectors/csv_format.h"

namespace {

using sluice::connectors::CsvFormatOptions;
using sluice::connectors::CsvRowDeserializer;
using sluice::types::LogicalType;
using sluice::types::RowBatch;
using sluice::types::RowType;

const RowType& schema() {
  static const RowType t{{"i", "b", "d", "m", "f", "s", "c", "t"},
                         {LogicalType::integer(), LogicalType::bigint(), LogicalType::doubleType(),
                          LogicalType::decimal(10, 3), LogicalType::boolean(), LogicalType::string(),
                          LogicalType::charType(2), LogicalType::timestamp(3)}};
  return t;
}

CsvFormatOptions optionsFrom(uint8_t bits) {
  CsvFormatOptions o;
  static const char kDelims[] = {',', ';', '\t', '|'};
  o.field_delimiter = kDelims[bits & 3];
  if (bits & 4) o.quote_enabled = false;
  if (bits & 8) o.quote_character = '\'';
  if (bits & 16) o.escape_character = '\\';
  if (bits & 32) o.allow_comments = true;
  if (bits & 64) o.null_literal = "null";
  return o;
}

struct ReadResult {
  size_t rows = 0;
  int64_t errors = 0;
  std::string text;  // rows rendered, to compare reads
};

void render(const RowBatch& b, std::string& out) {
  for (size_t r = 0; r < b.numRows(); ++r) {
    for (size_t c = 0; c < b.numColumns(); ++c) {
      const auto& col = b.column(c);
      if (col.isNull(r)) {
        out += "N|";
      } else if (col.type().isString()) {
        out += col.getString(r);
        out += '|';
      } else if (col.type().id == sluice::types::TypeId::kDouble) {
        double v = col.getDouble(r);
        out.append(reinterpret_cast<const char*>(&v), sizeof(v));
        out += '|';
      } else {
        out += std::to_string(col.getLong(r));
        out += '|';
      }
    }
    out += '\n';
  }
}

// Reads `data` as `parts` subtasks would and concatenates their rows in subtask order.
ReadResult readSplit(std::string_view data, const CsvFormatOptions& options, size_t parts) {
  ReadResult result;
  for (size_t i = 0; i < parts; ++i) {
    CsvRowDeserializer d(schema(), options);
    RowBatch batch(schema());
    const size_t begin = data.size() * i / parts;
    const size_t end = data.size() * (i + 1) / parts;
    size_t pos = sluice::connectors::alignToLineStart(data, begin);
    int64_t line = sluice::connectors::countNewlines(data, pos) + 1;
    while (pos < end && pos < data.size()) {
      sluice::connectors::readCsvLines(data, pos, end, line, d, batch, 7, "fuzz.csv");
    }
    result.rows += batch.numRows();
    result.errors += d.parseErrors();
    render(batch, result.text);
  }
  return result;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  CsvFormatOptions options = optionsFrom(data[0]);
  std::string_view content(reinterpret_cast<const char*>(data + 1), size - 1);

  options.ignore_parse_errors = false;
  try {
    readSplit(content, options, 1);
  } catch (const sluice::SluiceError&) {
  }

  options.ignore_parse_errors = true;
  const ReadResult whole = readSplit(content, options, 1);
  for (size_t parts = 2; parts <= 4; ++parts) {
    const ReadResult split = readSplit(content, options, parts);
    if (split.rows != whole.rows || split.errors != whole.errors || split.text != whole.text) std::abort();
  }
  return 0;
}
