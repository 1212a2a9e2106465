#include "table/api/catalog_statements.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "common/config.h"
#include "table/catalog/catalog.h"
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
    case sql::StatementKind::kDropView:
      if (!catalog.dropView(st.object) && !st.if_exists) notFound(st, script, "View");
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
        std::vector<std::string> names = st.show == "VIEWS" ? catalog.viewNames() : catalog.names();
        std::sort(names.begin(), names.end());
        std::vector<std::vector<std::string>> rows;
        for (auto& n : names) rows.push_back({n});
        result = stringTable({st.show == "VIEWS" ? "view name" : "table name"}, rows);
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
