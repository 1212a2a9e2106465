#pragma once
/// `sluice sql`: Flink's SQL client on an embedded MiniCluster.
///
/// Reads statements, each ended by ';' (a statement may span lines; `EXECUTE STATEMENT SET BEGIN ... END;`
/// and `BEGIN STATEMENT SET; ... END;` are one statement), and runs them one at a time in one session
/// (one TableEnvironment: tables, views and SET values stay until the client exits):
///  - `-i FILE` runs a file first (an error there ends the client, exit status 1);
///  - `-f FILE` runs a file and exits (stops at the first failing statement, exit status 1), else
///  - interactive: with line editing and history (libedit; `--history FILE`, default ~/.sluice-sql-history)
///    when stdin is a terminal, plain lines otherwise.
/// Client commands (with or without ';'): HELP, QUIT / EXIT, CLEAR. A SELECT shows its result in the mode of
/// `sql-client.execution.result-mode` (result_view.h); other statements print "[INFO] ..." as Flink's client
/// does; an error prints "[ERROR] Could not execute SQL statement. Reason:" and the message (with the SQL
/// line:column inside the statement), and the session goes on.
/// Ctrl-C (SIGINT) cancels the running query or job, not the client; a second one while the first cancel is
/// under way ends the process at once (exit 130). At the prompt Ctrl-C does nothing: QUIT or Ctrl-D leave.
/// SIGTERM cancels the running job and exits with 143.

#include <string>

#include "cli/cli_common.h"

namespace CLI {
class App;
}

namespace sluice::cli {

struct SqlClientOptions {
  CommonOptions common;
  std::string init_file;
  std::string script_file;
  std::string history_file;  ///< empty: ~/.sluice-sql-history
};

/// Adds the `sql` subcommand with its options to `app`; `opts` receives the values.
CLI::App* addSqlCommand(CLI::App& app, SqlClientOptions& opts);
/// Runs the client; returns the process exit status. Throws ConfigError / UserError for bad options.
int runSqlClient(const SqlClientOptions& opts);

}  // namespace sluice::cli
