#include "table/catalog/table_factory.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/config.h"
#include "common/error.h"

namespace sluice::table {

std::unique_ptr<ScanTableSource> DynamicTableFactory::createSource(const ResolvedTable& table, const Configuration&) const {
  throw UserError(fmt::format("Connector '{}' can only be used as a sink; table '{}' is read from.", identifier(), table.name));
}

std::unique_ptr<DynamicTableSink> DynamicTableFactory::createSink(const ResolvedTable& table, const Configuration&) const {
  throw UserError(fmt::format("Connector '{}' can only be used as a source; table '{}' is written to.", identifier(), table.name));
}

void FactoryRegistry::add(std::shared_ptr<const DynamicTableFactory> factory) {
  std::string id = factory->identifier();
  factories_[id] = std::move(factory);
}

std::vector<std::string> FactoryRegistry::identifiers() const {
  std::vector<std::string> ids;
  for (const auto& kv : factories_) ids.push_back(kv.first);
  return ids;
}

namespace {
// "fields.#.kind" matches "fields.f0.kind".
bool matchesPattern(const std::string& pattern, const std::string& key) {
  size_t hash = pattern.find('#');
  if (hash == std::string::npos) return pattern == key;
  std::string prefix = pattern.substr(0, hash);
  std::string suffix = pattern.substr(hash + 1);
  return key.size() > prefix.size() + suffix.size() && key.compare(0, prefix.size(), prefix) == 0 &&
         key.compare(key.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The supported option nearest to `key` by edit distance, empty if none is close. A pattern takes the
// key's own field name ("fields.#.kind" is tried as "fields.f0.kind" for "fields.f0.kidn").
std::string closestOption(const std::string& key, const std::set<std::string>& supported) {
  std::vector<std::string> candidates;
  for (const std::string& p : supported) {
    const size_t hash = p.find('#');
    if (hash == std::string::npos) {
      candidates.push_back(p);
      continue;
    }
    const std::string prefix = p.substr(0, hash);
    const size_t last_dot = key.rfind('.');
    if (key.compare(0, prefix.size(), prefix) != 0 || last_dot == std::string::npos || last_dot <= prefix.size()) continue;
    candidates.push_back(prefix + key.substr(prefix.size(), last_dot - prefix.size()) + p.substr(hash + 1));
  }
  return closestConfigKey(key, candidates);
}
}  // namespace

const DynamicTableFactory& FactoryRegistry::find(const ResolvedTable& table) const {
  auto conn = table.options.find("connector");
  if (conn == table.options.end())
    throw UserError(fmt::format("Table '{}' has no 'connector' option. Available factory identifiers are: {}",
                                table.name, fmt::join(identifiers(), ", ")));
  auto it = factories_.find(conn->second);
  if (it == factories_.end())
    throw UserError(fmt::format(
        "Could not find any factory for identifier '{}' (table '{}', option 'connector'). Available factory identifiers are: {}",
        conn->second, table.name, fmt::join(identifiers(), ", ")));
  const DynamicTableFactory& f = *it->second;
  std::set<std::string> supported = f.supportedOptions();
  std::vector<std::string> unsupported;
  for (const auto& kv : table.options) {
    if (kv.first == "connector") continue;
    bool ok = false;
    for (const auto& p : supported) {
      if (matchesPattern(p, kv.first)) {
        ok = true;
        break;
      }
    }
    if (!ok) unsupported.push_back(kv.first);
  }
  if (!unsupported.empty()) {
    std::vector<std::string> all{"connector"};
    all.insert(all.end(), supported.begin(), supported.end());
    std::sort(all.begin(), all.end());
    // Flink's message, plus the nearest supported option of each misspelt one.
    std::string hints;
    for (const std::string& key : unsupported) {
      const std::string close = closestOption(key, supported);
      if (!close.empty()) hints += fmt::format("Did you mean '{}' instead of '{}'?\n\n", close, key);
    }
    throw UserError(fmt::format("Unsupported options found for '{}' (table '{}').\n\nUnsupported options:\n\n{}\n\n{}Supported options:\n\n{}",
                                f.identifier(), table.name, fmt::join(unsupported, "\n"), hints, fmt::join(all, "\n")));
  }
  return f;
}

}  // namespace sluice::table
