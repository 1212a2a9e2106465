// The `sluice` command line: run and explain Flink SQL scripts on an embedded MiniCluster.

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "common/config.h"
#include "common/error.h"
#include "connectors/builtin.h"
#include "table/api/table_environment.h"
#include "table/catalog/table_factory.h"
#include "types/row_batch.h"
#include "types/value_format.h"

namespace {

std::string readScript(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw sluice::UserError(fmt::format("Cannot read SQL file '{}'", path));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// Common options of `run` and `explain`: -p, -D, --conf-dir.
struct CommonOptions {
  int parallelism = 0;
  std::vector<std::string> dynamic;
  std::string conf_dir;
  std::string file;

  void add(CLI::App* cmd) {
    cmd->add_option("-p,--parallelism", parallelism, "Default parallelism (parallelism.default)")->check(CLI::PositiveNumber);
    cmd->add_option("-D", dynamic, "Configuration option key=value (repeatable); overrides conf/config.yaml");
    cmd->add_option("--conf-dir", conf_dir,
                    "Directory holding config.yaml (default: $SLUICE_CONF_DIR, else ./conf when present)");
    cmd->add_option("file", file, "Flink SQL script")->required();
  }

  sluice::Configuration build() const {
    sluice::Configuration conf;
    std::string dir = conf_dir;
    if (dir.empty() && std::getenv("SLUICE_CONF_DIR") != nullptr) dir = std::getenv("SLUICE_CONF_DIR");
    if (dir.empty()) {
      conf.loadYaml("conf/config.yaml", /*optional=*/true);
    } else {
      conf.loadYaml(dir + "/config.yaml", /*optional=*/false);
    }
    for (const auto& kv : dynamic) conf.setFromKeyValue(kv);
    if (parallelism > 0) conf.set("parallelism.default", std::to_string(parallelism));
    return conf;
  }
};

std::shared_ptr<sluice::table::FactoryRegistry> builtinFactories() {
  auto registry = std::make_shared<sluice::table::FactoryRegistry>();
  sluice::connectors::registerBuiltinConnectors(*registry);
  return registry;
}

int runCommand(const CommonOptions& opts) {
  sluice::table::TableEnvironment env(opts.build(), builtinFactories());
  std::mutex out_mu;
  env.setCollectCallback([&](const sluice::types::RowType&, const sluice::types::RowBatch& batch) {
    std::string text;
    for (size_t r = 0; r < batch.numRows(); ++r) {
      sluice::types::formatRow(batch, r, text);
      text += '\n';
    }
    std::lock_guard<std::mutex> lock(out_mu);
    std::fwrite(text.data(), 1, text.size(), stdout);
  });
  env.setMessageCallback([&](const std::string& message) {
    std::lock_guard<std::mutex> lock(out_mu);
    std::fwrite(message.data(), 1, message.size(), stdout);
    if (!message.empty() && message.back() != '\n') std::fputc('\n', stdout);
  });
  const bool tty = isatty(STDERR_FILENO) != 0;
  if (tty) {
    env.setProgressCallback(
        [](const std::vector<sluice::table::VertexProgress>& vertices) {
          std::string line = "\r\033[K";
          for (size_t i = 0; i < vertices.size(); ++i) {
            const auto& v = vertices[i];
            std::string name = v.name.size() > 40 ? v.name.substr(0, 37) + "..." : v.name;
            line += fmt::format("{}[{}] {} in/{} out", i ? " | " : "", name, v.records_in, v.records_out);
          }
          std::fputs(line.c_str(), stderr);
          std::fflush(stderr);
        },
        2000);
  }
  env.executeScript(readScript(opts.file));
  std::fflush(stdout);
  if (tty) std::fputs("\r\033[K", stderr);
  for (const auto& job : env.jobs()) {
    std::fprintf(stderr, "Job '%s' finished: %lld rows read, %lld rows written in %.3f s\n", job.name.c_str(),
                 static_cast<long long>(job.rows_read), static_cast<long long>(job.rows_written), job.wall_seconds);
  }
  return 0;
}

int explainCommand(const CommonOptions& opts, const std::string& format) {
  sluice::table::TableEnvironment env(opts.build(), builtinFactories());
  std::string text = env.explainScript(readScript(opts.file), format == "json");
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Sluice: runs Flink SQL jobs natively on an embedded cluster"};
  app.require_subcommand(1);
  CommonOptions run_opts, explain_opts;
  CLI::App* run = app.add_subcommand("run", "Run every statement of a Flink SQL script on an embedded MiniCluster");
  run_opts.add(run);
  CLI::App* explain = app.add_subcommand("explain", "Print the plan, StreamGraph and JobGraph of a SQL script's jobs");
  explain_opts.add(explain);
  std::string format = "text";
  explain->add_option("--format", format, "text or json (Flink's /jobs/:id/plan shape)")
      ->check(CLI::IsMember({"text", "json"}));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    if (*run) return runCommand(run_opts);
    if (*explain) return explainCommand(explain_opts, format);
  } catch (const sluice::UserError& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "Error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "Internal error: %s\n", e.what());
    return 2;
  }
  return 0;
}
