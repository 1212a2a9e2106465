#pragma once
/// SHOW, DESCRIBE and DROP statements against the session catalog (Flink's SqlShow*, SqlRichDescribeTable
/// and SqlDrop* operations). Internal to the table API; client thread only.
///  - SHOW CATALOGS / DATABASES / CURRENT CATALOG / CURRENT DATABASE: the one in-memory catalog
///    `default_catalog` and database `default_database`;
///  - SHOW TABLES lists tables and views, SHOW VIEWS views, sorted (one column "table name" / "view name");
///  - SHOW CREATE TABLE / VIEW: the statement as Flink prints it (quoted names, full path, options);
///  - DESCRIBE: Flink 1.17's columns name, type (with `*ROWTIME*`), null, key (`PRI(a, b)`), extras (computed
///    `AS expr`, `METADATA FROM 'k' [VIRTUAL]`), watermark;
///  - DROP TABLE / VIEW [IF EXISTS]: "Table with identifier '...' does not exist." without IF EXISTS.

#include <optional>
#include <string>
#include <string_view>

#include "types/logical_type.h"
#include "types/row_batch.h"

namespace sluice {
class Configuration;
}

namespace sluice::table {

class Catalog;
class FactoryRegistry;
namespace sql {
struct Statement;
}

/// The rows a SHOW or DESCRIBE statement returns (Flink's TableResult with content).
struct StatementResult {
  types::RowType schema;
  types::RowBatch rows;
  /// SHOW CREATE ...: the statement, printed as it is rather than as a table (as Flink's SQL client does).
  std::optional<std::string> text;
};

/// Runs `st` when it is a SHOW, DESCRIBE or DROP statement and returns true (with `result` set for SHOW and
/// DESCRIBE); false for any other statement. Throws SqlError at the object's position when it does not exist.
bool runCatalogStatement(const sql::Statement& st, std::string_view script, Catalog& catalog,
                         const FactoryRegistry& factories, const Configuration& config,
                         std::optional<StatementResult>& result);

}  // namespace sluice::table
