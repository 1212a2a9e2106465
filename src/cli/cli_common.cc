#include "cli/cli_common.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "common/error.h"
#include "connectors/builtin.h"
#include "table/catalog/table_factory.h"

namespace sluice::cli {

void CommonOptions::add(CLI::App* cmd, bool with_file) {
  cmd->add_option("-p,--parallelism", parallelism, "Default parallelism (parallelism.default), a positive integer")
      ->check([](const std::string& v) {
        return !v.empty() && v.size() <= 9 && v.find_first_not_of("0123456789") == std::string::npos && std::stol(v) > 0
                   ? std::string()
                   : std::string("the parallelism must be a positive integer");
      });
  cmd->add_option("-D", dynamic, "Configuration option key=value (repeatable); overrides conf/config.yaml");
  cmd->add_option("--conf-dir", conf_dir,
                  "Directory holding config.yaml (default: $SLUICE_CONF_DIR, else ./conf when present)");
  if (with_file) cmd->add_option("file", file, "Flink SQL script (or -f FILE, as the SQL client takes it)")->required();
}

Configuration CommonOptions::build() const {
  Configuration conf;
  std::string dir = conf_dir;
  if (dir.empty() && std::getenv("SLUICE_CONF_DIR") != nullptr) dir = std::getenv("SLUICE_CONF_DIR");
  if (dir.empty()) {
    conf.loadYaml("conf/config.yaml", /*optional=*/true);
  } else {
    conf.loadYaml(dir + "/config.yaml", /*optional=*/false);
  }
  for (const auto& kv : dynamic) conf.setFromKeyValue(kv);
  if (parallelism > 0) conf.set("parallelism.default", std::to_string(parallelism));
  if (!savepoint_path.empty()) conf.set("execution.state-recovery.path", savepoint_path);
  if (allow_non_restored_state) conf.set("execution.state-recovery.ignore-unclaimed-state", "true");
  return conf;
}

std::shared_ptr<table::FactoryRegistry> builtinFactories() {
  auto registry = std::make_shared<table::FactoryRegistry>();
  connectors::registerBuiltinConnectors(*registry);
  return registry;
}

std::string readScript(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw UserError(fmt::format("'{}' is a directory, not a SQL file", path));
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno;
    throw UserError(err != 0 ? fmt::format("Cannot read SQL file '{}': {}", path, std::strerror(err))
                             : fmt::format("Cannot read SQL file '{}'", path));
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace sluice::cli
