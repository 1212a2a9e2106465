#pragma once
/// How `sluice sql` shows the result of a SELECT, by `sql-client.execution.result-mode` (Flink's SQL client):
///  - TABLEAU: Flink's CliTableauResultView in streaming mode: a header whose column widths follow the
///    types (PrintUtils.columnWidthsByType: TINYINT 4, SMALLINT 6, INT 11, BIGINT 20, DECIMAL(p) p + 2,
///    BOOLEAN 5, DATE 10, TIME(p) 8 or p + 9, TIMESTAMP(p) 19/23/26/29, anything else
///    `sql-client.display.max-column-width`; at least the name and "<NULL>"), then one line per change with
///    its kind in the `op` column, values right-aligned and cut with "..." when longer; at the end a border
///    and "Received a total of N row(s)", or "Query terminated, received a total of N row(s)" on Ctrl-C.
///  - CHANGELOG: each change as the print connector writes it ("+I[a, 1]", "-U[a, 1]").
///  - TABLE: the materialized result (+I/+U add a row, -U/-D remove an equal one; at most
///    `sql-client.execution.max-table-result.rows`, oldest dropped first), shown as Flink prints a batch
///    result ("N rows in set", widths from the content); redrawn in place while it changes when stdout is a
///    terminal, else printed once at the end.
/// Values are shown as CAST(value AS STRING) gives them, NULL as "<NULL>".
/// Threading: begin/end on the client thread, add from the job's collect thread; calls are serialized inside.

#include <cstdio>
#include <memory>
#include <string>

#include "common/config.h"

namespace sluice::types {
class RowBatch;
struct RowType;
}  // namespace sluice::types

namespace sluice::cli {

enum class ResultMode { kTable, kChangelog, kTableau };

class ResultView {
 public:
  virtual ~ResultView() = default;
  /// A new query's schema, before any row.
  virtual void begin(const types::RowType& schema) = 0;
  /// Changes of the running query, in order.
  virtual void add(const types::RowBatch& batch) = 0;
  /// The query ended (`cancelled`: by Ctrl-C).
  virtual void end(bool cancelled) = 0;
};

/// `sql-client.display.max-column-width` (default 30): the widest column a result shows.
extern const ConfigOption<int32_t> kMaxColumnWidth;

/// Prints `rows` once as Flink's SQL client prints a SHOW / DESCRIBE result (the TABLE layout, "N rows in set").
void printTableResult(std::FILE* out, const types::RowType& schema, const types::RowBatch& rows, int max_column_width);

/// A view writing to `out` (flushed after each write). `max_column_width` >= 4; `max_rows` > 0 (TABLE);
/// `redraw`: TABLE redraws in place (a terminal). TABLE and TABLEAU show a TIMESTAMP_LTZ as the wall clock
/// of `time_zone` (the session's `table.local-time-zone`, as Flink's SQL client); throws UserError when the
/// zone is unknown.
std::unique_ptr<ResultView> makeResultView(ResultMode mode, std::FILE* out, int max_column_width, int64_t max_rows,
                                           bool redraw, const std::string& time_zone = "UTC");

}  // namespace sluice::cli
