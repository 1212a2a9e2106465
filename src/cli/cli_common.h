#pragma once
/// What the `sluice` subcommands share: the configuration options (-p, -D, --conf-dir) and how they build
/// a Configuration, the built-in connector factories, and reading a SQL file.

#include <memory>
#include <string>
#include <vector>

#include "common/config.h"

namespace CLI {
class App;
}
namespace sluice::table {
class FactoryRegistry;
}

namespace sluice::cli {

/// Options of `run`, `explain` and `sql`.
struct CommonOptions {
  int parallelism = 0;
  std::vector<std::string> dynamic;
  std::string conf_dir;
  std::string file;
  std::string savepoint_path;
  bool allow_non_restored_state = false;
  bool stop_with_savepoint = false;

  /// Adds -p, -D and --conf-dir to `cmd`, and the positional SQL `file` when `with_file`.
  void add(CLI::App* cmd, bool with_file = true);
  /// Defaults < conf/config.yaml (or --conf-dir / $SLUICE_CONF_DIR) < -D < -p / -s / -n.
  /// Throws ConfigError naming the key or file.
  Configuration build() const;
};

/// A registry with every built-in connector and format.
std::shared_ptr<table::FactoryRegistry> builtinFactories();

/// The whole text of a SQL file. Throws UserError naming the path and the reason (strerror) when it cannot be read.
std::string readScript(const std::string& path);

}  // namespace sluice::cli
