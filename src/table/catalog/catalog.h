#pragma once
/// The session's catalog of tables and views (Flink's in-memory GenericInMemoryCatalog, one
/// database). Names are matched exactly (Flink is case-sensitive); `default_catalog.default_database.t`
/// and `t` name the same object. Not thread-safe: used by the client thread only.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "table/sql/ast.h"

namespace sluice::table {

class UserDefinedFunction;  // table/functions/user_function.h

/// A table created by CREATE TABLE: its definition as written.
struct CatalogTable {
  std::string name;
  std::shared_ptr<const sql::CreateTableStmt> definition;
};

/// A view created by CREATE VIEW.
struct CatalogView {
  std::string name;
  std::shared_ptr<const sql::CreateViewStmt> definition;
};

/// Where a user-defined function was registered. Flink's resolution order (FunctionCatalog): temporary
/// system functions before the built-ins; temporary functions, then catalog functions, after them.
enum class FunctionScope { kTemporarySystem, kTemporary, kCatalog };

/// A user-defined function: CREATE [TEMPORARY [SYSTEM]] FUNCTION or TableEnvironment's create*Function.
struct CatalogFunction {
  std::string name;  ///< as registered (lookups ignore case)
  FunctionScope scope = FunctionScope::kCatalog;
  std::shared_ptr<const UserDefinedFunction> function;  ///< a ScalarFunction, TableFunction or AggregateFunction
  std::string class_name;  ///< the AS 'class' of CREATE FUNCTION; empty when registered from C++
};

class Catalog {
 public:
  /// Registers a function; false (nothing changed) when one of that name exists in its scope.
  bool createFunction(CatalogFunction f);
  /// Removes the function of `name` in `scope`; false when there is none.
  bool dropFunction(const std::string& name, FunctionScope scope);
  /// The function `name` resolves to among the temporary system functions (`system`) or else among the
  /// temporary, then catalog functions; nullptr when none. Case-insensitive.
  const CatalogFunction* findFunction(const std::string& name, bool system) const;
  /// Every user-defined function's name, sorted (SHOW USER FUNCTIONS).
  std::vector<std::string> functionNames() const;

  /// Registers a table. Throws SqlError at `pos` when the name exists (unless IF NOT EXISTS).
  void createTable(std::shared_ptr<const sql::CreateTableStmt> def, sql::SourcePos pos);
  /// Registers a view. Throws SqlError at `pos` when the name exists (unless IF NOT EXISTS).
  void createView(std::shared_ptr<const sql::CreateViewStmt> def, sql::SourcePos pos);
  /// Removes a table (Flink's DROP TABLE); false when there is none of that name. Views are not touched.
  bool dropTable(const sql::QualifiedName& name);
  /// Removes a view (Flink's DROP VIEW); false when there is none of that name.
  bool dropView(const sql::QualifiedName& name);
  /// Replaces a table's definition (ALTER TABLE ... SET / RESET); false when there is no such table.
  bool replaceTable(const sql::QualifiedName& name, std::shared_ptr<const sql::CreateTableStmt> def);
  /// Replaces a view's query (ALTER VIEW ... AS); false when there is no such view.
  bool replaceView(const sql::QualifiedName& name, std::shared_ptr<const sql::CreateViewStmt> def);
  /// ALTER TABLE / VIEW ... RENAME TO: false when `from` is no table (view); throws SqlError at `pos` when
  /// `to` names an existing table or view.
  bool renameTable(const sql::QualifiedName& from, const sql::QualifiedName& to, sql::SourcePos pos);
  bool renameView(const sql::QualifiedName& from, const sql::QualifiedName& to, sql::SourcePos pos);
  /// Null when absent.
  const CatalogTable* findTable(const sql::QualifiedName& name) const;
  const CatalogView* findView(const sql::QualifiedName& name) const;
  /// Every table and view name, sorted (for "did you mean").
  std::vector<std::string> names() const;
  /// The table names / the view names, each sorted (SHOW TABLES lists both, SHOW VIEWS the views).
  std::vector<std::string> tableNames() const;
  std::vector<std::string> viewNames() const;

  /// Strips the default catalog/database prefix: {"default_catalog","default_database","t"} -> "t".
  static std::string normalize(const sql::QualifiedName& name);

 private:
  std::map<std::string, CatalogTable> tables_;
  std::map<std::string, CatalogView> views_;
  std::map<std::string, CatalogFunction> functions_[3];  ///< by FunctionScope, keyed by upper-case name
};

}  // namespace sluice::table
