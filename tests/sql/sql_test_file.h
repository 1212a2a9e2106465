#pragma once
/// The `.test` file format of the SQL behaviour suite (DuckDB's sqllogictest style, see README.md):
/// parsing a file into records, `${name}` substitution, and the changelog arithmetic the runner uses
/// to compare results. Pure functions, no engine dependency; any thread.

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace sluice::sqltest {

/// What one record of a test file asks for.
enum class RecordKind {
  kStatementOk,     ///< `statement ok`: the SQL must run without error
  kStatementError,  ///< `statement error [L:C]`: the SQL must fail with a UserError (SqlError at L:C)
  kQueryChangelog,  ///< `query changelog`: the exact changelog (at parallelism 1)
  kQueryRows,       ///< `query rows [streaming]`: the final materialized rows, order-insensitive
  kQueryOrdered,    ///< `query ordered`: exactly these rows in this order, at every parallelism (ORDER BY)
  kQueryError,      ///< `query error`: the SQL must fail while running (message checked)
  kInput,           ///< `input NAME`: the lines go to a fresh file; `${NAME}` names it
  kSet,             ///< `set KEY VALUE`: a configuration value for the following statements
};

/// One record of a test file.
struct Record {
  RecordKind kind = RecordKind::kStatementOk;
  int line = 0;                    ///< 1-based line of the record's header in the file
  std::string sql;                 ///< statement text (lines joined by '\n'); SET: the value
  std::string name;                ///< kInput: the input name; kSet: the key
  std::vector<std::string> lines;  ///< expected rows / input lines (trailing blanks trimmed for rows)
  std::string message;             ///< expected error substring (lines joined by '\n'); may be empty
  std::optional<int> error_line;   ///< `statement error L:C`: expected SqlError line (statement-relative)
  std::optional<int> error_column; ///< ... and column
  std::optional<int> only_parallelism;  ///< `onlyif parallelism=N` before the record
  std::optional<int> skip_parallelism;  ///< `skipif parallelism=N` before the record
  /// `query rows streaming`: also run in `execution.runtime-mode` STREAMING; its materialized result must be
  /// the expected rows too (a BATCH file's check that both modes agree).
  bool also_streaming = false;
};

/// Parses the text of a `.test` file. Throws std::runtime_error "<file>:<line>: <what>" on a malformed
/// record (unknown header, missing `----`, bad L:C).
std::vector<Record> parseTestFile(const std::string& text, const std::string& file_name);

/// Replaces every `${name}` in `text` by vars.at(name). Throws std::runtime_error naming an unknown
/// variable or an unterminated `${`.
std::string substituteVariables(const std::string& text, const std::map<std::string, std::string>& vars);

/// Splits "+I[a, 1]" into kind "+I" and row "[a, 1]". Returns false when the line does not start with
/// one of +I, -U, +U, -D followed by '['.
bool splitChangelogLine(const std::string& line, std::string& kind, std::string& row);

/// Normalizes an expected line of `query rows` to the bracketed row: "+I[a, 1]" and "[a, 1]" give
/// "[a, 1]", a bare "a, 1" gives "[a, 1]".
std::string normalizeExpectedRow(const std::string& line);

/// Applies a changelog (+I/+U add a row, -U/-D remove one occurrence) and returns the remaining rows,
/// sorted. A removal of a row that is not present is reported in `problems` (one line each) and
/// otherwise ignored; a line that is not a changelog line is reported too.
std::vector<std::string> materialize(const std::vector<std::string>& changelog, std::vector<std::string>& problems);

/// The multiset difference `a - b` of two sorted row lists.
std::vector<std::string> sortedDifference(const std::vector<std::string>& a, const std::vector<std::string>& b);

}  // namespace sluice::sqltest
