#include "table/catalog/catalog.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <set>

#include "common/error.h"

namespace sluice::table {

std::string Catalog::normalize(const sql::QualifiedName& name) {
  size_t start = 0;
  if (name.size() == 3 && name[0] == "default_catalog" && name[1] == "default_database") start = 2;
  if (name.size() == 2 && name[0] == "default_database") start = 1;
  sql::QualifiedName rest(name.begin() + static_cast<long>(start), name.end());
  return sql::qualifiedNameToString(rest);
}

void Catalog::createTable(std::shared_ptr<const sql::CreateTableStmt> def, sql::SourcePos pos) {
  std::string n = normalize(def->name);
  if (tables_.count(n) || views_.count(n)) {
    if (def->if_not_exists) return;
    throw SqlError(fmt::format("Table or view 'default_catalog.default_database.{}' already exists", n), pos.line, pos.column);
  }
  tables_[n] = CatalogTable{n, std::move(def)};
}

void Catalog::createView(std::shared_ptr<const sql::CreateViewStmt> def, sql::SourcePos pos) {
  std::string n = normalize(def->name);
  if (tables_.count(n) || views_.count(n)) {
    if (def->if_not_exists) return;
    throw SqlError(fmt::format("Table or view 'default_catalog.default_database.{}' already exists", n), pos.line, pos.column);
  }
  views_[n] = CatalogView{n, std::move(def)};
}

namespace {
std::string functionKey(const std::string& name) {
  std::string k = name;
  std::transform(k.begin(), k.end(), k.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return k;
}
}  // namespace

bool Catalog::createFunction(CatalogFunction f) {
  auto& scope = functions_[static_cast<int>(f.scope)];
  const std::string key = functionKey(f.name);
  if (scope.count(key)) return false;
  scope.emplace(key, std::move(f));
  return true;
}

bool Catalog::dropFunction(const std::string& name, FunctionScope scope) {
  return functions_[static_cast<int>(scope)].erase(functionKey(name)) > 0;
}

const CatalogFunction* Catalog::findFunction(const std::string& name, bool system) const {
  const std::string key = functionKey(name);
  for (FunctionScope scope : {FunctionScope::kTemporarySystem, FunctionScope::kTemporary, FunctionScope::kCatalog}) {
    if ((scope == FunctionScope::kTemporarySystem) != system) continue;
    const auto& m = functions_[static_cast<int>(scope)];
    auto it = m.find(key);
    if (it != m.end()) return &it->second;
  }
  return nullptr;
}

std::vector<std::string> Catalog::functionNames() const {
  std::set<std::string> names;
  for (const auto& m : functions_)
    for (const auto& [key, f] : m) names.insert(f.name);
  return {names.begin(), names.end()};
}

const CatalogTable* Catalog::findTable(const sql::QualifiedName& name) const {
  auto it = tables_.find(normalize(name));
  return it == tables_.end() ? nullptr : &it->second;
}

const CatalogView* Catalog::findView(const sql::QualifiedName& name) const {
  auto it = views_.find(normalize(name));
  return it == views_.end() ? nullptr : &it->second;
}

std::vector<std::string> Catalog::names() const {
  std::vector<std::string> out;
  for (const auto& kv : tables_) out.push_back(kv.first);
  for (const auto& kv : views_) out.push_back(kv.first);
  return out;
}


bool Catalog::replaceTable(const sql::QualifiedName& name, std::shared_ptr<const sql::CreateTableStmt> def) {
  auto it = tables_.find(normalize(name));
  if (it == tables_.end()) return false;
  it->second.definition = std::move(def);
  return true;
}

bool Catalog::replaceView(const sql::QualifiedName& name, std::shared_ptr<const sql::CreateViewStmt> def) {
  auto it = views_.find(normalize(name));
  if (it == views_.end()) return false;
  it->second.definition = std::move(def);
  return true;
}

namespace {
template <typename Map, typename Other>
bool renameIn(Map& map, const Other& other, const sql::QualifiedName& from, const sql::QualifiedName& to,
              sql::SourcePos pos) {
  auto it = map.find(Catalog::normalize(from));
  if (it == map.end()) return false;
  std::string n = Catalog::normalize(to);
  if (map.count(n) || other.count(n))
    throw SqlError(fmt::format("Table or view 'default_catalog.default_database.{}' already exists", n), pos.line,
                   pos.column);
  auto node = map.extract(it);
  node.key() = n;
  node.mapped().name = n;
  map.insert(std::move(node));
  return true;
}
}  // namespace

bool Catalog::renameTable(const sql::QualifiedName& from, const sql::QualifiedName& to, sql::SourcePos pos) {
  return renameIn(tables_, views_, from, to, pos);
}

bool Catalog::renameView(const sql::QualifiedName& from, const sql::QualifiedName& to, sql::SourcePos pos) {
  return renameIn(views_, tables_, from, to, pos);
}

bool Catalog::dropTable(const sql::QualifiedName& name) { return tables_.erase(normalize(name)) > 0; }

bool Catalog::dropView(const sql::QualifiedName& name) { return views_.erase(normalize(name)) > 0; }

std::vector<std::string> Catalog::tableNames() const {
  std::vector<std::string> out;
  for (const auto& kv : tables_) out.push_back(kv.first);
  return out;
}

std::vector<std::string> Catalog::viewNames() const {
  std::vector<std::string> out;
  for (const auto& kv : views_) out.push_back(kv.first);
  return out;
}

}  // namespace sluice::table
