#pragma once
/// Validates SQL statements against the catalog and converts them into plans of RelNodes
/// (Flink's SqlToRelConverter + the optimizer rules the skeleton needs: Calc fusion, window
/// aggregation for TUMBLE/HOP, changelog-mode inference). Client thread only.
///
/// Errors are SqlError with "line:column" and a caret under the offending token, e.g.
/// "SQL validation error at line 3, column 8: Column 'x' not found in any table".

#include <string_view>

#include "table/planner/rel_node.h"
#include "table/sql/ast.h"

namespace sluice {
class Configuration;
}

namespace sluice::table {

class Catalog;
class FactoryRegistry;

class SqlToRelConverter {
 public:
  /// `script` is the full text the positions refer to (used for the caret line in errors).
  SqlToRelConverter(const Catalog& catalog, const FactoryRegistry& factories, const Configuration& config,
                    std::string_view script);

  /// INSERT INTO t query -> a kSink root. Throws SqlError (validation) or UserError (connector options).
  RelNodePtr convertInsert(const sql::InsertStmt& insert);
  /// A bare query -> a kSink root with no connector sink (the collect sink, parallelism 1).
  RelNodePtr convertQueryForCollect(const sql::Query& query);
  /// Checks a CREATE TABLE's schema (computed columns, watermark type, primary key) as Flink does
  /// when the table is created; connector options are checked when the table is used. Throws SqlError.
  void validateCreateTable(const sql::CreateTableStmt& def);
  /// The type of each column of a CREATE TABLE in declaration order (computed columns inferred, primary key
  /// columns NOT NULL), as DESCRIBE shows them. Throws SqlError as validateCreateTable.
  std::vector<types::LogicalType> columnTypes(const sql::CreateTableStmt& def);
  /// A query -> its plan (no sink).
  RelNodePtr convertQuery(const sql::Query& query);

 private:
  struct Impl;
  const Catalog& catalog_;
  const FactoryRegistry& factories_;
  const Configuration& config_;
  std::string_view script_;
};

}  // namespace sluice::table
