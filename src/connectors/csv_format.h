#pragma once
/// The `csv` format (Flink's flink-csv: CsvFormatFactory, CsvToRowDataConverters,
/// RowDataToCsvConverters): options, the line/field parser that fills RowBatch columns, and the
/// writer. Kept free of runtime and table dependencies so the fuzz target links it alone.
///
/// Reading rules (Flink's, with Jackson's CSV decoder underneath):
///  - A record is one line; '\n' ends it and a '\r' before it is dropped. A quoted field cannot span
///    lines (a line ending inside quotes is a parse error), which lets files be split at newlines.
///  - Blank lines are skipped; with csv.allow-comments, lines starting with '#' are skipped.
///  - A field starting with the quote character is quoted: a doubled quote is one quote, the
///    delimiter is literal; after the closing quote only the delimiter or the line end may follow.
///  - csv.escape-character makes the next character literal (\\t, \\n, \\r, \\0 decode as Jackson does).
///  - A field equal to csv.null-literal is NULL. An empty STRING field is the empty string; an empty
///    numeric or TIMESTAMP field is a parse error (Flink: Integer.parseInt("") fails).
///  - INT/BIGINT/DOUBLE/BOOLEAN/TIMESTAMP are trimmed of characters <= ' ' first (Java's trim());
///    DECIMAL is not (Java's new BigDecimal(text) rejects spaces).
///  - BOOLEAN follows Java's Boolean.parseBoolean: "true" in any case is true, anything else false.
///  - DECIMAL(p,s): rounded HALF_UP to s digits; a value that needs more than p digits is an error
///    (Flink turns it into NULL; here the user is told).
///  - TIMESTAMP: "yyyy-M-d H:m[:s[.fffffffff]]" or with 'T' instead of the space; kept to milliseconds.
///  - Wrong number of fields is a parse error.
/// With csv.ignore-parse-errors (Flink's CsvToRowDataConverters): a field that fails to convert
/// becomes NULL and the row is kept; a row with too few fields gets NULLs for the missing ones; a
/// row that cannot be split (bad quoting) or has too many fields is dropped. Each nulled field and
/// each dropped row adds one to parseErrors().

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "connectors/connector_options.h"
#include "types/row_batch.h"

namespace sluice::connectors {

/// The csv format's options (Flink's keys and defaults).
struct CsvFormatOptions {
  char field_delimiter = ',';                 ///< csv.field-delimiter
  char quote_character = '"';                 ///< csv.quote-character
  bool quote_enabled = true;                  ///< !csv.disable-quote-character
  bool allow_comments = false;                ///< csv.allow-comments
  bool ignore_parse_errors = false;           ///< csv.ignore-parse-errors
  std::string array_element_delimiter = ";";  ///< csv.array-element-delimiter (no ARRAY type yet)
  std::optional<char> escape_character;       ///< csv.escape-character
  std::optional<std::string> null_literal;    ///< csv.null-literal
  bool write_bigdecimal_in_scientific_notation = true;  ///< csv.write-bigdecimal-in-scientific-notation
};

/// The option keys of the csv format, for DynamicTableFactory::supportedOptions.
std::set<std::string> csvFormatOptionKeys();

/// Reads the csv.* options of `table`. Throws UserError naming the table and key on a bad value,
/// including Flink's "Format cannot define a quote character and disabled quote character at the
/// same time."
CsvFormatOptions parseCsvFormatOptions(const OptionMap& options, const std::string& table);

/// What parseLine did with one line.
enum class CsvLineResult {
  kRow,      ///< one row appended (possibly with NULLed fields under ignore-parse-errors)
  kSkipped,  ///< blank or comment line
  kDropped,  ///< a bad row skipped under ignore-parse-errors
};

/// Converts CSV lines into rows of a fixed physical RowType, or of a projection of it. One instance per
/// reading thread.
///
/// Projection (Flink's csv format under projection push-down): every field of a line is
/// still delimited (quotes and escapes respected, so the field count is checked exactly as without
/// projection), but only the projected fields are converted and appended; the others are skipped
/// unconverted, so a value that would not parse in an unprojected field is no error and is not counted
/// in parseErrors(). A wrong number of fields is the same error (or drop) as without projection.
class CsvRowDeserializer {
 public:
  /// Reads every field of `row_type`. Throws UserError when a column type is not supported by the csv
  /// format.
  CsvRowDeserializer(types::RowType row_type, CsvFormatOptions options);
  /// Reads only the fields at `projection` (indexes into `row_type`, ascending, non-empty), in that
  /// order: the output columns are producedType(). Throws UserError as above (every column of
  /// `row_type` is checked, projected or not); InternalError on a bad projection.
  CsvRowDeserializer(types::RowType row_type, CsvFormatOptions options, std::vector<int> projection);

  /// Parses one line (no '\n'; a trailing '\r' is dropped) and appends at most one +I row to `out`,
  /// whose columns must have producedType()'s types. Throws InputError "<path>:<line_number>: <what>"
  /// naming the column, the value and the expected type, unless csv.ignore-parse-errors.
  /// On a throw `out` is left as it was before the call.
  CsvLineResult parseLine(std::string_view line, types::RowBatch& out, std::string_view path, int64_t line_number);

  /// Projected fields set to NULL and rows dropped because of parse errors so far.
  int64_t parseErrors() const { return parse_errors_; }
  /// The physical row type of a line (all its fields).
  const types::RowType& rowType() const { return row_type_; }
  /// The row type of the rows appended: rowType() restricted to the projection.
  const types::RowType& producedType() const { return produced_type_; }
  /// Physical index of each output column.
  const std::vector<int>& projection() const { return projection_; }
  const CsvFormatOptions& options() const { return options_; }

 private:
  struct FieldSpan {
    uint32_t begin;
    uint32_t length;
    bool in_scratch;  ///< bytes live in scratch_ (unescaped), else in the line
  };
  // What parseLine does with one output column, fixed at construction (no per-field type lookup on
  // the common path): STRING/INT/BIGINT are converted inline, the other types through convert().
  enum class FastKind : uint8_t { kString, kInt, kBigInt, kOther };
  struct ColumnAction {
    uint32_t field;  ///< physical field index
    FastKind kind;
  };
  // Splits `line` into fields_[0, num_fields_) (one span per field; the bytes of an unprojected field that needs
  // unescaping are not copied, its span is empty); returns false and sets error_ on bad quoting.
  bool split(std::string_view line);
  // The common case: a line without any quote or escape character is split at every delimiter (16
  // bytes at a time where SSE2 exists). Returns false, with fields_ in an unspecified state, when the
  // line holds a quote or escape character anywhere; split() then takes the general path.
  bool splitPlain(std::string_view line);
  // Appends a span in the general path.
  void addField(FieldSpan f);
  std::string_view field(std::string_view line, const FieldSpan& f) const {
    return f.in_scratch ? std::string_view(scratch_.data() + f.begin, f.length)
                        : std::string_view(line.data() + f.begin, f.length);
  }
  // Converts one field into column `c`; returns false on a value that does not parse.
  bool convert(size_t c, std::string_view value, types::Column& column);
  [[noreturn]] void fail(types::RowBatch& out, size_t rows_before, std::string_view path, int64_t line_number,
                         const std::string& what);

  types::RowType row_type_;
  CsvFormatOptions options_;
  std::vector<int> projection_;   ///< output column k reads physical field projection_[k]
  types::RowType produced_type_;
  std::vector<uint8_t> wanted_;   ///< per physical field: 1 when projected (its bytes are kept)
  std::vector<ColumnAction> actions_;  ///< per output column
  std::vector<FieldSpan> fields_;  ///< spans of the current line; only the first num_fields_ are valid
  size_t num_fields_ = 0;
  std::string scratch_;
  std::string error_;
  int64_t parse_errors_ = 0;
};

/// Index of the first line starting at or after `offset`: 0 for offset 0, else one past the first
/// '\n' at or after offset - 1 (so a line starting exactly at `offset` is kept). data.size() if none.
size_t alignToLineStart(std::string_view data, size_t offset);

/// Number of '\n' bytes in data[0, end).
int64_t countNewlines(std::string_view data, size_t end);

/// Reads the lines of `data` that start in [pos, range_end), at most `max_rows` rows, into `out`.
/// `line_number` is the 1-based number of the line at `pos`; both are advanced past the lines read.
/// Returns the number of rows appended. Throws InputError as CsvRowDeserializer::parseLine.
size_t readCsvLines(std::string_view data, size_t& pos, size_t range_end, int64_t& line_number,
                    CsvRowDeserializer& deserializer, types::RowBatch& out, size_t max_rows, std::string_view path);

/// Writes rows as Flink's CSV format does (Jackson's CsvGenerator defaults): numbers and booleans
/// bare; DOUBLE as Java's Double.toString; DECIMAL as Java's BigDecimal.toString (or plain);
/// TIMESTAMP as "2015-01-01 00:05:00[.fraction]"; strings quoted when longer than 24 characters or
/// when holding a character below the delimiter/quote (space, '#', ...); NULL as csv.null-literal
/// or nothing. Lines end with '\n'.
class CsvRowSerializer {
 public:
  CsvRowSerializer(types::RowType row_type, CsvFormatOptions options);
  /// Appends row `row` of `batch` and a '\n' to `out`.
  void appendRow(const types::RowBatch& batch, size_t row, std::string& out) const;

 private:
  void appendString(std::string_view value, std::string& out) const;

  types::RowType row_type_;
  CsvFormatOptions options_;
  int min_safe_char_;
};

}  // namespace sluice::connectors
