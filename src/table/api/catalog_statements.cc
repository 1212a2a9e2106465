#include "table/api/catalog_statements.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "common/config.h"
#include "common/error.h"
#include "table/catalog/catalog.h"
#include "table/functions/expression.h"
#include "table/functions/user_function.h"
#include "table/planner/sql_to_rel.h"
#include "table/sql/parser.h"

namespace sluice::table {
namespace {

using types::LogicalType;

/// A result of string columns (BOOLEAN for the names in `booleans`).
StatementResult stringTable(const std::vector<std::string>& names, const std::vector<std::vector<std::string>>& rows,
                            const std::vector<std::string>& booleans = {}) {
  StatementResult r;
  for (const auto& n : names) {
    bool b = std::find(booleans.begin(), booleans.end(), n) != booleans.end();
    r.schema.names.push_back(n);
    r.schema.types.push_back(b ? LogicalType::boolean(false) : LogicalType::string(false));
  }
  r.rows = types::RowBatch(r.schema);
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size(); ++c) {
      if (r.schema.types[c].id == types::TypeId::kBoolean) {
        r.rows.column(c).appendLong(row[c] == "TRUE" ? 1 : 0);
      } else {
        r.rows.column(c).appendString(row[c]);
      }
    }
    r.rows.kinds().push_back(types::RowKind::kInsert);
  }
  return r;
}

std::string quoted(const std::string& name) { return fmt::format("`{}`", name); }

std::string fullName(const std::string& name) {
  return fmt::format("`default_catalog`.`default_database`.{}", quoted(name));
}

/// The type as DESCRIBE prints it: nullability in its own column.
std::string typeText(LogicalType t) {
  t.nullable = true;
  return t.toString();
}

std::string showCreateTable(const CatalogTable& table, const std::vector<LogicalType>& types) {
  const sql::CreateTableStmt& def = *table.definition;
  std::vector<std::string> lines;
  for (size_t i = 0; i < def.columns.size(); ++i) {
    const auto& c = def.columns[i];
    switch (c.kind) {
      case sql::ColumnKind::kPhysical:
        lines.push_back(fmt::format("  {} {}", quoted(c.name), types[i].toString()));
        break;
      case sql::ColumnKind::kComputed:
        lines.push_back(fmt::format("  {} AS {}", quoted(c.name), c.expr->toString()));
        break;
      case sql::ColumnKind::kMetadata:
        lines.push_back(fmt::format("  {} {} METADATA{}{}", quoted(c.name), c.type.toString(),
                                    c.metadata_key ? fmt::format(" FROM '{}'", *c.metadata_key) : "",
                                    c.metadata_virtual ? " VIRTUAL" : ""));
        break;
    }
  }
  if (def.watermark)
    lines.push_back(fmt::format("  WATERMARK FOR {} AS {}", quoted(def.watermark->column), def.watermark->expr->toString()));
  if (!def.primary_key.empty()) {
    std::vector<std::string> keys;
    for (const auto& k : def.primary_key) keys.push_back(quoted(k));
    lines.push_back(fmt::format("  PRIMARY KEY ({}) NOT ENFORCED", fmt::join(keys, ", ")));
  }
  std::string out = fmt::format("CREATE TABLE {} (\n{}\n)", fullName(table.name), fmt::join(lines, ",\n"));
  if (def.comment) out += fmt::format("\nCOMMENT '{}'", *def.comment);
  if (!def.partition_keys.empty()) {
    std::vector<std::string> keys;
    for (const auto& k : def.partition_keys) keys.push_back(quoted(k));
    out += fmt::format("\nPARTITIONED BY ({})", fmt::join(keys, ", "));
  }
  std::vector<std::string> options;
  for (const auto& o : def.options) options.push_back(fmt::format("  '{}' = '{}'", o.key, o.value));
  out += fmt::format(" WITH (\n{}\n)\n", fmt::join(options, ",\n"));
  return out;
}

StatementResult describeTable(const CatalogTable& table, const std::vector<LogicalType>& types) {
  const sql::CreateTableStmt& def = *table.definition;
  std::string pk;
  if (!def.primary_key.empty()) pk = fmt::format("PRI({})", fmt::join(def.primary_key, ", "));
  std::vector<std::vector<std::string>> rows;
  for (size_t i = 0; i < def.columns.size(); ++i) {
    const auto& c = def.columns[i];
    const bool rowtime = def.watermark && def.watermark->column == c.name;
    const bool key = std::find(def.primary_key.begin(), def.primary_key.end(), c.name) != def.primary_key.end();
    std::string extras;
    if (c.kind == sql::ColumnKind::kComputed) extras = "AS " + c.expr->toString();
    if (c.kind == sql::ColumnKind::kMetadata)
      extras = fmt::format("METADATA{}{}", c.metadata_key ? fmt::format(" FROM '{}'", *c.metadata_key) : "",
                           c.metadata_virtual ? " VIRTUAL" : "");
    rows.push_back({c.name, typeText(types[i]) + (rowtime ? " *ROWTIME*" : ""), types[i].nullable ? "TRUE" : "FALSE",
                    key ? pk : "", extras, rowtime ? def.watermark->expr->toString() : ""});
  }
  return stringTable({"name", "type", "null", "key", "extras", "watermark"}, rows, {"null"});
}

StatementResult describeRow(const types::RowType& row) {
  std::vector<std::vector<std::string>> rows;
  for (size_t i = 0; i < row.size(); ++i)
    rows.push_back({row.names[i], typeText(row.types[i]), row.types[i].nullable ? "TRUE" : "FALSE", "", "", ""});
  return stringTable({"name", "type", "null", "key", "extras", "watermark"}, rows, {"null"});
}

[[noreturn]] void notFound(const sql::Statement& st, std::string_view script, const char* what) {
  sql::throwSqlError(fmt::format("{} with identifier 'default_catalog.default_database.{}' does not exist.", what,
                                 Catalog::normalize(st.object)),
                     script, st.object_pos, "SQL validation error");
}

/// SQL LIKE: `%` any run, `_` one character (UTF-8 aware enough for names: bytes), `\\` escapes.
bool likeMatch(std::string_view s, std::string_view p, bool fold) {
  auto eq = [&](char a, char b) {
    return fold ? std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b)) : a == b;
  };
  size_t si = 0, pi = 0, star_p = std::string_view::npos, star_s = 0;
  while (si < s.size()) {
    if (pi < p.size() && p[pi] == '%') {
      star_p = pi++;
      star_s = si;
    } else if (pi < p.size() && p[pi] == '\\' && pi + 1 < p.size() && eq(p[pi + 1], s[si])) {
      pi += 2;
      ++si;
    } else if (pi < p.size() && p[pi] != '\\' && (p[pi] == '_' || eq(p[pi], s[si]))) {
      ++pi;
      ++si;
    } else if (star_p != std::string_view::npos) {
      pi = star_p + 1;
      si = ++star_s;
    } else {
      return false;
    }
  }
  while (pi < p.size() && p[pi] == '%') ++pi;
  return pi == p.size();
}

/// The names that pass the statement's `[NOT] LIKE | ILIKE` filter.
std::vector<std::string> filtered(const sql::Statement& st, std::vector<std::string> names) {
  if (!st.like_pattern) return names;
  std::vector<std::string> out;
  for (auto& n : names)
    if (likeMatch(n, *st.like_pattern, st.like_case_insensitive) != st.like_not) out.push_back(std::move(n));
  return out;
}

/// FROM / IN of SHOW TABLES / VIEWS / FUNCTIONS: the one database there is.
void checkDatabase(const sql::Statement& st, std::string_view script) {
  if (st.object.empty()) return;
  const bool ok = (st.object.size() == 1 && st.object[0] == "default_database") ||
                  (st.object.size() == 2 && st.object[0] == "default_catalog" && st.object[1] == "default_database");
  if (ok) return;
  if (st.object.size() == 2 && st.object[0] != "default_catalog")
    sql::throwSqlError(fmt::format("Catalog {} does not exist", st.object[0]), script, st.object_pos,
                       "SQL validation error");
  sql::throwSqlError(fmt::format("Database {} does not exist in Catalog default_catalog.", st.object.back()), script,
                     st.object_pos, "SQL validation error");
}

/// The functions SHOW FUNCTIONS lists: the scalar built-ins and what the planner resolves itself.
std::vector<std::string> functionNames() {
  std::vector<std::string> names = scalarFunctionNames();
  for (const char* n : {"AVG", "CAST", "COUNT", "CUMULATE", "DENSE_RANK", "HOP", "MAX", "MIN", "RANK", "ROW_NUMBER",
                        "SUM", "TRY_CAST", "TUMBLE", "EXTRACT", "OVERLAY", "POSITION", "TRIM", "STDDEV_POP",
                        "STDDEV_SAMP", "VAR_POP", "VAR_SAMP", "FIRST_VALUE", "LAST_VALUE", "LISTAGG"})
    names.push_back(n);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

std::vector<std::vector<std::string>> oneColumn(const std::vector<std::string>& names) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& n : names) rows.push_back({n});
  return rows;
}

void runAlterTable(const sql::Statement& st, std::string_view script, Catalog& catalog,
                   const FactoryRegistry& factories, const Configuration& config) {
  const CatalogTable* t = catalog.findTable(st.object);
  if (t == nullptr) {
    if (st.if_exists) return;
    if (catalog.findView(st.object))
      sql::throwSqlError(fmt::format("'{}' is a view; use ALTER VIEW", Catalog::normalize(st.object)), script,
                         st.object_pos, "SQL validation error");
    notFound(st, script, "Table");
  }
  auto def = std::make_shared<sql::CreateTableStmt>(t->definition->clone());
  if (st.alter == "RENAME") {
    try {
      catalog.renameTable(st.object, st.new_name, st.object_pos);
    } catch (const SqlError& e) {
      sql::throwSqlError(e.what(), script, st.pos, "SQL validation error");
    }
    def->name = st.new_name;
    catalog.replaceTable(st.new_name, std::move(def));
    return;
  }
  for (const auto& o : st.options) {
    auto it = std::find_if(def->options.begin(), def->options.end(), [&](const auto& e) { return e.key == o.key; });
    if (st.alter == "RESET") {
      if (o.key == "connector")
        sql::throwSqlError("ALTER TABLE RESET does not support changing 'connector'", script, o.pos,
                           "SQL validation error");
      if (it != def->options.end()) def->options.erase(it);
    } else if (it != def->options.end()) {
      it->value = o.value;
      it->pos = o.pos;
    } else {
      def->options.push_back(o);
    }
  }
  // The new options are checked as CREATE TABLE checks them, before anything changes.
  SqlToRelConverter(catalog, factories, config, script).validateCreateTable(*def);
  catalog.replaceTable(st.object, std::move(def));
}

void runAlterView(const sql::Statement& st, std::string_view script, Catalog& catalog,
                  const FactoryRegistry& factories, const Configuration& config) {
  const CatalogView* v = catalog.findView(st.object);
  if (v == nullptr) {
    if (catalog.findTable(st.object))
      sql::throwSqlError(fmt::format("'{}' is a table; use ALTER TABLE", Catalog::normalize(st.object)), script,
                         st.object_pos, "SQL validation error");
    notFound(st, script, "View");
  }
  if (st.alter == "RENAME") {
    try {
      catalog.renameView(st.object, st.new_name, st.object_pos);
    } catch (const SqlError& e) {
      sql::throwSqlError(e.what(), script, st.pos, "SQL validation error");
    }
    return;
  }
  SqlToRelConverter(catalog, factories, config, script).convertQuery(*st.create_view->query);
  auto def = std::make_shared<sql::CreateViewStmt>();
  def->name = v->definition->name;
  def->temporary = v->definition->temporary;
  def->query = st.create_view->query->clone();
  def->query_text = st.create_view->query_text;
  catalog.replaceView(st.object, std::move(def));
}

void runCreateFunction(const sql::Statement& st, std::string_view script, Catalog& catalog) {
  const sql::CreateFunctionStmt& f = *st.create_function;
  auto fail = [&](sql::SourcePos pos, const std::string& message) {
    sql::throwSqlError(message, script, pos, "SQL validation error");
  };
  const std::string name = Catalog::normalize(f.name);
  if (name.find('.') != std::string::npos)
    fail(f.name_pos, fmt::format("A function name must be simple or in default_catalog.default_database: '{}'",
                                 sql::qualifiedNameToString(f.name)));
  if (f.language != "JAVA" && f.language != "SCALA")
    fail(f.language_pos, fmt::format("LANGUAGE {} is not supported: Sluice runs functions written in C++, "
                                     "registered under the class name that CREATE FUNCTION gives",
                                     f.language));
  const FunctionScope scope = f.system ? FunctionScope::kTemporarySystem
                              : f.temporary ? FunctionScope::kTemporary
                                            : FunctionScope::kCatalog;
  std::shared_ptr<const UserDefinedFunction> fn = instantiateFunctionClass(f.identifier);
  if (!fn) {
    std::string known;
    for (const auto& c : registeredFunctionClasses()) known += (known.empty() ? "" : ", ") + c;
    fail(f.identifier_pos, fmt::format("Function class '{}' is not registered (a C++ function is registered with "
                                       "registerFunctionClass; known classes: {})",
                                       f.identifier, known.empty() ? "none" : known));
  }
  if (catalog.createFunction(CatalogFunction{name, scope, std::move(fn), f.identifier}) || f.if_not_exists) return;
  if (scope == FunctionScope::kTemporarySystem)
    fail(f.name_pos, fmt::format("Could not register temporary system function. A function named '{}' does "
                                 "already exist.", name));
  if (scope == FunctionScope::kTemporary)
    fail(f.name_pos, fmt::format("Could not register temporary catalog function. A function "
                                 "'default_catalog.default_database.{}' does already exist.", name));
  fail(f.name_pos, fmt::format("Function default_database.{} already exists in Catalog default_catalog.", name));
}

void runDropFunction(const sql::Statement& st, std::string_view script, Catalog& catalog) {
  const std::string name = Catalog::normalize(st.object);
  const FunctionScope scope = st.function_system ? FunctionScope::kTemporarySystem
                              : st.function_temporary ? FunctionScope::kTemporary
                                                      : FunctionScope::kCatalog;
  if (catalog.dropFunction(name, scope) || st.if_exists) return;
  std::string message;
  if (scope == FunctionScope::kTemporarySystem) {
    message = fmt::format("Could not drop temporary system function. A function named '{}' doesn't exist.", name);
  } else if (scope == FunctionScope::kTemporary) {
    message = fmt::format("Temporary catalog function default_catalog.default_database.{} doesn't exist", name);
  } else {
    message = fmt::format("Function default_database.{} does not exist in Catalog default_catalog.", name);
  }
  sql::throwSqlError(message, script, st.object_pos, "SQL validation error");
}

}  // namespace

bool runCatalogStatement(const sql::Statement& st, std::string_view script, Catalog& catalog,
                         const FactoryRegistry& factories, const Configuration& config,
                         std::optional<StatementResult>& result) {
  result.reset();
  switch (st.kind) {
    case sql::StatementKind::kDropTable:
      if (!catalog.dropTable(st.object) && !st.if_exists) {
        if (catalog.findView(st.object))
          sql::throwSqlError(fmt::format("'{}' is a view; use DROP VIEW", Catalog::normalize(st.object)), script,
                             st.object_pos, "SQL validation error");
        notFound(st, script, "Table");
      }
      return true;
    case sql::StatementKind::kCreateFunction:
      runCreateFunction(st, script, catalog);
      return true;
    case sql::StatementKind::kDropFunction:
      runDropFunction(st, script, catalog);
      return true;
    case sql::StatementKind::kDropView:
      if (!catalog.dropView(st.object) && !st.if_exists) notFound(st, script, "View");
      return true;
    case sql::StatementKind::kUse: {
      // One catalog with one database (Flink's defaults): USE names them or fails as Flink does.
      const auto& n = st.object;
      if (st.show == "CATALOG") {
        if (n.size() != 1 || n[0] != "default_catalog")
          sql::throwSqlError(fmt::format("A catalog with name [{}] does not exist.", sql::qualifiedNameToString(n)),
                             script, st.object_pos, "SQL validation error");
      } else {
        const bool ok = (n.size() == 1 && n[0] == "default_database") ||
                        (n.size() == 2 && n[0] == "default_catalog" && n[1] == "default_database");
        if (!ok && n.size() == 2 && n[0] != "default_catalog")
          sql::throwSqlError(fmt::format("A catalog with name [{}] does not exist.", n[0]), script, st.object_pos,
                             "SQL validation error");
        if (!ok)
          sql::throwSqlError(
              fmt::format("A database with name [{}] does not exist in the catalog: [default_catalog].", n.back()),
              script, st.object_pos, "SQL validation error");
      }
      return true;
    }
    case sql::StatementKind::kAlterTable:
      runAlterTable(st, script, catalog, factories, config);
      return true;
    case sql::StatementKind::kAlterView:
      runAlterView(st, script, catalog, factories, config);
      return true;
    case sql::StatementKind::kDescribe: {
      SqlToRelConverter conv(catalog, factories, config, script);
      if (const CatalogTable* t = catalog.findTable(st.object)) {
        result = describeTable(*t, conv.columnTypes(*t->definition));
      } else if (const CatalogView* v = catalog.findView(st.object)) {
        RelNodePtr rel = conv.convertQuery(*v->definition->query);
        types::RowType row = rel->row_type;
        if (!v->definition->column_names.empty()) row.names = v->definition->column_names;
        result = describeRow(row);
      } else {
        notFound(st, script, "Table or view");
      }
      return true;
    }
    case sql::StatementKind::kShow: {
      if (st.show == "CATALOGS") {
        result = stringTable({"catalog name"}, {{"default_catalog"}});
      } else if (st.show == "DATABASES") {
        result = stringTable({"database name"}, {{"default_database"}});
      } else if (st.show == "CURRENT CATALOG") {
        result = stringTable({"current catalog name"}, {{"default_catalog"}});
      } else if (st.show == "CURRENT DATABASE") {
        result = stringTable({"current database name"}, {{"default_database"}});
      } else if (st.show == "TABLES" || st.show == "VIEWS") {
        checkDatabase(st, script);
        std::vector<std::string> names = st.show == "VIEWS" ? catalog.viewNames() : catalog.names();
        std::sort(names.begin(), names.end());
        result = stringTable({st.show == "VIEWS" ? "view name" : "table name"}, oneColumn(filtered(st, names)));
      } else if (st.show == "FUNCTIONS" || st.show == "USER FUNCTIONS") {
        checkDatabase(st, script);
        std::vector<std::string> names = catalog.functionNames();
        if (st.show == "FUNCTIONS") {
          for (auto& n : functionNames()) names.push_back(std::move(n));
          std::sort(names.begin(), names.end());
          names.erase(std::unique(names.begin(), names.end()), names.end());
        }
        result = stringTable({"function name"}, oneColumn(filtered(st, names)));
      } else if (st.show == "MODULES") {
        result = stringTable({"module name"}, {{"core"}});
      } else if (st.show == "FULL MODULES") {
        result = stringTable({"module name", "used"}, {{"core", "TRUE"}}, {"used"});
      } else if (st.show == "JARS") {
        result = stringTable({"jars"}, {});
      } else if (st.show == "COLUMNS") {
        sql::Statement describe;
        describe.kind = sql::StatementKind::kDescribe;
        describe.object = st.object;
        describe.object_pos = st.object_pos;
        runCatalogStatement(describe, script, catalog, factories, config, result);
        if (st.like_pattern) {
          StatementResult all = std::move(*result);
          StatementResult kept;
          kept.schema = all.schema;
          kept.rows = types::RowBatch(all.schema);
          for (size_t r = 0; r < all.rows.numRows(); ++r) {
            std::string name(all.rows.column(0).getString(r));
            if (filtered(st, {name}).empty()) continue;
            for (size_t c = 0; c < all.schema.size(); ++c) {
              if (all.schema.types[c].id == types::TypeId::kBoolean) {
                kept.rows.column(c).appendLong(all.rows.column(c).getLong(r));
              } else {
                kept.rows.column(c).appendString(all.rows.column(c).getString(r));
              }
            }
            kept.rows.kinds().push_back(types::RowKind::kInsert);
          }
          result = std::move(kept);
        }
      } else if (st.show == "CREATE TABLE") {
        const CatalogTable* t = catalog.findTable(st.object);
        if (t == nullptr) notFound(st, script, "Table");
        SqlToRelConverter conv(catalog, factories, config, script);
        result = stringTable({"result"}, {{showCreateTable(*t, conv.columnTypes(*t->definition))}});
        result->text = result->rows.column(0).getString(0);
      } else if (st.show == "CREATE VIEW") {
        const CatalogView* v = catalog.findView(st.object);
        if (v == nullptr) notFound(st, script, "View");
        result = stringTable({"result"}, {{fmt::format("CREATE VIEW {} AS\n{}\n", fullName(v->name),
                                                        v->definition->query_text)}});
        result->text = result->rows.column(0).getString(0);
      }
      return true;
    }
    default:
      return false;
  }
}

}  // namespace sluice::table
