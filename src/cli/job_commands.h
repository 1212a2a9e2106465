#pragma once
/// `sluice list`, `sluice cancel`, `sluice savepoint` and `sluice stop`: Flink's CLI job commands (flink list /
/// cancel / savepoint / stop, CliFrontend) against the REST API of a running `sluice run` (rest::RestClient).
/// The JobManager address is `-m HOST:PORT`, else `rest.address` (unset: localhost) and `rest.port` (8081) of
/// conf/config.yaml and -D, as Flink's CLI takes it from its configuration. Output on stdout in Flink's words;
/// errors are UserErrors (main prints `Error: ...`, exit 1): a malformed or missing job id, an unknown job
/// (404), a peer that does not answer (named), a failed savepoint.

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace sluice::cli {

struct JobCommandOptions {
  std::vector<std::string> dynamic;  ///< -D key=value
  std::string conf_dir;
  std::string jobmanager;  ///< -m / --jobmanager
  std::string job_id;
  std::string target_directory;  ///< savepoint DIR, stop --savepointPath
  bool running = false, scheduled = false, all = false;  ///< list -r / -s / -a
  bool drain = false;                                    ///< stop -d
};

/// The four subcommands, added to `app`; each writes its flags into `opts`.
struct JobCommands {
  CLI::App* list = nullptr;
  CLI::App* cancel = nullptr;
  CLI::App* savepoint = nullptr;
  CLI::App* stop = nullptr;
};
JobCommands addJobCommands(CLI::App& app, JobCommandOptions& opts);

/// Runs the one of `cmds` that was given; returns the exit status. Throws UserError.
int runJobCommand(const JobCommands& cmds, const JobCommandOptions& opts);

}  // namespace sluice::cli
