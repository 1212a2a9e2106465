// The `sluice` command line: run and explain Flink SQL scripts on an embedded MiniCluster.

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <atomic>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <mutex>
#include <streambuf>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/cli_common.h"
#include "cli/job_commands.h"
#include "cli/kafka_mock_command.h"
#include "cli/result_view.h"
#include "cli/sql_client.h"
#include "cluster/job_metrics.h"
#include "cluster/mini_cluster.h"
#include "common/config.h"
#include "common/error.h"
#include "graph/plan.h"
#include "rest/job_registry.h"
#include "rest/rest_options.h"
#include "rest/rest_server_endpoint.h"
#include "runtime/checkpoint/checkpoint_storage.h"
#include "table/api/table_environment.h"
#include "table/catalog/table_factory.h"
#include "types/row_batch.h"
#include "types/value_format.h"

namespace {

using sluice::cli::builtinFactories;
using sluice::cli::CommonOptions;
using sluice::cli::readScript;

/// Writes the metrics of every job run so far to `out` as {"jobs": [...]} (cluster/job_metrics.h).
void writeMetrics(const sluice::table::TableEnvironment& env, std::ofstream& out, const std::string& path) {
  std::vector<sluice::cluster::JobExecutionResult> results;
  for (const auto& job : env.jobs()) {
    if (job.execution) results.push_back(*job.execution);
  }
  out << sluice::cluster::metricsDocumentJson(results);
  out.flush();
  if (!out) throw sluice::UserError(fmt::format("Cannot write the metrics file '{}'", path));
}

/// "[Source: a] 120 in/118 out busy 12% bp 85%" per vertex: records so far and the time metrics of the last
/// interval (max over subtasks, as Flink's web UI shows a vertex); "backlog 1/2" while subtasks of its source
/// report backlog, "sorting N" while it sorts a backlog.
std::string progressLine(const std::vector<sluice::table::VertexProgress>& vertices) {
  std::string line;
  for (size_t i = 0; i < vertices.size(); ++i) {
    const auto& v = vertices[i];
    std::string name = v.name.size() > 40 ? v.name.substr(0, 37) + "..." : v.name;
    line += fmt::format("{}[{}] {} in/{} out busy {:.0f}% bp {:.0f}%", i ? " | " : "", name, v.records_in,
                        v.records_out, v.busy_time_ms_per_second / 10, v.back_pressured_time_ms_per_second / 10);
    // FLIP-309 / FLIP-328: its source reports backlog; FLIP-327: it sorts its backlog (or BATCH input) now.
    if (v.backlog_subtasks > 0) line += fmt::format(" backlog {}/{}", v.backlog_subtasks, v.parallelism);
    if (v.sorting_subtasks > 0) line += fmt::format(" sorting {}", v.records_sorted);
  }
  return line;
}

/// What `run` writes while jobs run: rows and messages on stdout, the progress line on stderr. On a
/// terminal the progress line (drawn with \r, no newline) is cleared (\r ESC[K) before anything else is
/// written, so rows never glue to it; it is drawn only when stderr is a terminal. Thread-safe (task
/// threads, the progress thread and the main thread write).
class ConsoleOutput {
 public:
  ConsoleOutput() : progress_enabled_(isatty(STDERR_FILENO) != 0) {}

  bool progressEnabled() const { return progress_enabled_; }

  /// Writes `text` to `stream` (stdout or stderr) after clearing the progress line; flushed at once, so
  /// rows reach a pipe or file as they are produced, even if the job is interrupted.
  void write(FILE* stream, std::string_view text) {
    std::lock_guard<std::mutex> lock(mu_);
    clearLocked();
    std::fwrite(text.data(), 1, text.size(), stream);
    std::fflush(stream);
  }
  /// Redraws the progress line (only when stderr is a terminal).
  void progress(const std::string& line) {
    if (!progress_enabled_) return;
    std::lock_guard<std::mutex> lock(mu_);
    const std::string text = "\r\033[K" + line;
    std::fputs(text.c_str(), stderr);
    std::fflush(stderr);
    shown_ = true;
  }
  void clearProgress() {
    std::lock_guard<std::mutex> lock(mu_);
    clearLocked();
  }

 private:
  void clearLocked() {
    if (!shown_) return;
    std::fflush(stdout);
    std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
    shown_ = false;
  }

  const bool progress_enabled_;
  std::mutex mu_;
  bool shown_ = false;
};

/// A std::streambuf that writes through ConsoleOutput: put into std::cout and std::cerr while jobs run,
/// so the print connector's lines clear the progress line too. Unbuffered: each write goes out whole.
class ConsoleStreamBuf : public std::streambuf {
 public:
  ConsoleStreamBuf(ConsoleOutput& out, FILE* stream) : out_(out), stream_(stream) {}

 protected:
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    out_.write(stream_, std::string_view(s, static_cast<size_t>(n)));
    return n;
  }
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    const char ch = traits_type::to_char_type(c);
    out_.write(stream_, std::string_view(&ch, 1));
    return c;
  }

 private:
  ConsoleOutput& out_;
  FILE* stream_;
};

/// Puts ConsoleStreamBufs into std::cout and std::cerr for its lifetime.
class ConsoleStreams {
 public:
  explicit ConsoleStreams(ConsoleOutput& out)
      : cout_buf_(out, stdout),
        cerr_buf_(out, stderr),
        old_cout_(std::cout.rdbuf(&cout_buf_)),
        old_cerr_(std::cerr.rdbuf(&cerr_buf_)) {}
  ~ConsoleStreams() {
    std::cout.rdbuf(old_cout_);
    std::cerr.rdbuf(old_cerr_);
  }
  ConsoleStreams(const ConsoleStreams&) = delete;
  ConsoleStreams& operator=(const ConsoleStreams&) = delete;

 private:
  ConsoleStreamBuf cout_buf_;
  ConsoleStreamBuf cerr_buf_;
  std::streambuf* old_cout_;
  std::streambuf* old_cerr_;
};

/// Ctrl-C handling of `run` (as Flink's CLI cancels its job): SIGINT and SIGTERM are blocked in every
/// thread (the mask is set before any thread starts and inherited) and read from a signalfd by one
/// watcher thread. The first cancels the running job (TableEnvironment::cancel; the sinks clean up as on
/// any cancellation), a second one ends the process at once with 128 + signal. The watcher stops when
/// the script is over.
class InterruptWatcher {
 public:
  /// `stop_with_savepoint`: the first SIGINT/SIGTERM takes a savepoint before cancelling (Flink's
  /// `flink stop`). SIGUSR1 takes a savepoint while the job keeps running (Flink's `flink savepoint`).
  InterruptWatcher(sluice::table::TableEnvironment& env, ConsoleOutput& console, bool stop_with_savepoint = false)
      : console_(console), stop_with_savepoint_(stop_with_savepoint) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &set, &old_mask_);
    signal_fd_ = ::signalfd(-1, &set, SFD_CLOEXEC);
    if (signal_fd_ < 0 || ::pipe2(stop_pipe_, O_CLOEXEC) != 0) {
      throw sluice::InternalError("cannot set up the Ctrl-C handling (signalfd/pipe failed)");
    }
    thread_ = std::thread([this, &env] { watch(env); });
  }
  ~InterruptWatcher() {
    const char b = 0;
    [[maybe_unused]] const ssize_t n = ::write(stop_pipe_[1], &b, 1);
    thread_.join();
    ::close(signal_fd_);
    ::close(stop_pipe_[0]);
    ::close(stop_pipe_[1]);
    pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
  }
  InterruptWatcher(const InterruptWatcher&) = delete;
  InterruptWatcher& operator=(const InterruptWatcher&) = delete;

  /// The first signal received (0: none).
  int signal() const { return signal_.load(); }

 private:
  void watch(sluice::table::TableEnvironment& env) {
    pollfd fds[2] = {{signal_fd_, POLLIN, 0}, {stop_pipe_[0], POLLIN, 0}};
    for (;;) {
      if (::poll(fds, 2, -1) < 0) continue;  // EINTR
      if (fds[1].revents != 0) return;
      signalfd_siginfo info{};
      if (::read(signal_fd_, &info, sizeof info) != static_cast<ssize_t>(sizeof info)) continue;
      const int sig = static_cast<int>(info.ssi_signo);
      if (sig == SIGUSR1) {
        takeSavepoint(env);
        continue;
      }
      int expected = 0;
      if (!signal_.compare_exchange_strong(expected, sig)) std::_Exit(128 + sig);  // the second one
      if (stop_with_savepoint_) {
        console_.write(stderr, fmt::format("{} received: taking a savepoint, then cancelling the job (again to exit "
                                           "at once)\n",
                                           sig == SIGINT ? "SIGINT" : "SIGTERM"));
        takeSavepoint(env);
      } else {
        console_.write(stderr, fmt::format("{} received: cancelling the job (again to exit at once)\n",
                                           sig == SIGINT ? "SIGINT" : "SIGTERM"));
      }
      env.cancel();
    }
  }

  void takeSavepoint(sluice::table::TableEnvironment& env) {
    try {
      // The savepoint's directory (the one holding _metadata), as `sluice savepoint` and the REST API name it.
      const std::string dir =
          sluice::runtime::checkpoint::withoutMetadataFile(env.savepoint("", std::chrono::minutes(10)));
      console_.write(stderr, fmt::format("Savepoint completed. Path: {}\n", dir));
    } catch (const std::exception& e) {
      console_.write(stderr, fmt::format("Savepoint failed: {}\n", e.what()));
    }
  }

  ConsoleOutput& console_;
  bool stop_with_savepoint_;
  sigset_t old_mask_{};
  int signal_fd_ = -1;
  int stop_pipe_[2] = {-1, -1};
  std::atomic<int> signal_{0};
  std::thread thread_;
};

int runCommand(const CommonOptions& opts, const std::string& metrics_path) {
  std::ofstream metrics_out;
  if (!metrics_path.empty()) {
    // Opened before the jobs run, so a bad path fails at once rather than after the jobs.
    metrics_out.open(metrics_path, std::ios::binary | std::ios::trunc);
    if (!metrics_out) throw sluice::UserError(fmt::format("Cannot open the metrics file '{}' for writing", metrics_path));
  }
  sluice::table::TableEnvironment env(opts.build(), builtinFactories());
  ConsoleOutput console;
  env.setCollectCallback([&](const sluice::types::RowType&, const sluice::types::RowBatch& batch) {
    std::string text;
    for (size_t r = 0; r < batch.numRows(); ++r) {
      sluice::types::formatRow(batch, r, text);
      text += '\n';
    }
    console.write(stdout, text);
  });
  env.setStatusCallback([&](const std::string& status) { console.write(stderr, status + "\n"); });
  env.setTableResultCallback([&](const sluice::types::RowType& schema, const sluice::types::RowBatch& rows) {
    console.clearProgress();
    sluice::cli::printTableResult(stdout, schema, rows, env.config().get(sluice::cli::kMaxColumnWidth));
  });
  env.setMessageCallback([&](const std::string& message) {
    console.write(stdout, !message.empty() && message.back() != '\n' ? message + '\n' : message);
  });
  if (console.progressEnabled()) {
    env.setProgressCallback(
        [&](const std::vector<sluice::table::VertexProgress>& vertices) { console.progress(progressLine(vertices)); },
        2000);
  }
  InterruptWatcher interrupts(env, console, opts.stop_with_savepoint);
  // Flink's REST API for the embedded cluster, while the script runs: only when rest.port is set
  // (config.yaml or -D; a SET in the script comes too late). Started after the watcher blocked SIGINT and
  // SIGTERM, so the server's threads inherit the mask.
  std::unique_ptr<sluice::rest::RestServerEndpoint> rest_endpoint;
  std::shared_ptr<sluice::rest::JobRegistry> registry;
  if (env.config().contains(sluice::rest::kRestPort.key())) {
    registry = std::make_shared<sluice::rest::JobRegistry>(env.config());
    env.registerJobListener(registry);
    rest_endpoint = std::make_unique<sluice::rest::RestServerEndpoint>(registry, env.config());
    console.write(stderr, fmt::format("REST API at {}\n", rest_endpoint->url()));
  }
  {
    ConsoleStreams streams(console);  // print sinks write through `console` too
    try {
      env.executeScript(readScript(opts.file));
    } catch (...) {
      console.clearProgress();
      try {
        if (metrics_out.is_open()) writeMetrics(env, metrics_out, metrics_path);  // the jobs that finished
      } catch (...) {
        // The job's own error is the one to report.
      }
      throw;
    }
  }
  if (metrics_out.is_open()) writeMetrics(env, metrics_out, metrics_path);
  // A job stopped with `sluice stop` ends the script at once: the server stays until that client read the
  // savepoint's result (at most 5 s, should it have gone away).
  if (registry && !registry->awaitResultsRead(std::chrono::seconds(5))) {
    console.write(stderr, "The result of a stop-with-savepoint was not read within 5 s; the REST API closes.\n");
  }
  console.clearProgress();
  std::fflush(stdout);
  for (const auto& job : env.jobs()) {
    const bool cancelled = job.execution && job.execution->status == sluice::cluster::JobStatus::kCanceled;
    std::string fault_tolerance;
    if (job.execution && job.execution->checkpoints) {
      const auto& c = *job.execution->checkpoints;
      fault_tolerance = fmt::format(", {} checkpoints completed, {} failed", c.number_of_completed_checkpoints,
                                    c.number_of_failed_checkpoints);
      if (c.last_checkpoint_id > 0) {
        const std::string unaligned =
            c.last_checkpoint_unaligned
                ? fmt::format(", unaligned, {} bytes in flight", c.last_checkpoint_persisted_in_flight_bytes)
                : "";
        fault_tolerance += fmt::format(" (last: {}, {} bytes, {} ms{}{}{})", c.last_checkpoint_id,
                                       c.last_checkpoint_size, c.last_checkpoint_duration_ms, unaligned,
                                       c.last_checkpoint_external_path.empty() ? "" : ", ",
                                       sluice::runtime::checkpoint::withoutMetadataFile(c.last_checkpoint_external_path));
      }
    }
    if (job.late_rows_dropped > 0) fault_tolerance += fmt::format(", {} late rows dropped", job.late_rows_dropped);
    if (job.execution && job.execution->num_restarts > 0) {
      fault_tolerance += fmt::format(", {} restarts", job.execution->num_restarts);
    }
    std::fprintf(stderr, "Job '%s' %s: %lld rows read, %lld rows written in %.3f s%s\n", job.name.c_str(),
                 cancelled ? "cancelled" : "finished", static_cast<long long>(job.rows_read),
                 static_cast<long long>(job.rows_written), job.wall_seconds, fault_tolerance.c_str());
  }
  // Interrupted: the rest of the script did not run; exit as a shell does for the signal (130 for SIGINT).
  if (interrupts.signal() != 0) return 128 + interrupts.signal();
  return 0;
}

/// True when an executable `name` is on PATH.
bool onPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return false;
  std::stringstream dirs(path);
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (!dir.empty() && ::access((dir + "/" + name).c_str(), X_OK) == 0) return true;
  }
  return false;
}

/// Renders DOT text to SVG with Graphviz's `dot` run as a subprocess (input through a temporary file).
std::string renderSvg(const std::string& dot_text) {
  if (!onPath("dot")) {
    throw sluice::UserError(
        "--format=svg needs Graphviz's 'dot' program on PATH (Debian: apt-get install graphviz); "
        "--format=dot prints the graph for rendering elsewhere");
  }
  char tmpl[] = "/tmp/sluice-plan-XXXXXX";
  const int fd = ::mkstemp(tmpl);
  if (fd < 0) throw sluice::UserError("Cannot create a temporary file for the DOT graph");
  const std::string dot_path = tmpl;
  const bool written = ::write(fd, dot_text.data(), dot_text.size()) == static_cast<ssize_t>(dot_text.size());
  ::close(fd);
  std::string svg;
  int status = -1;
  if (written) {
    FILE* pipe = ::popen(("dot -Tsvg '" + dot_path + "'").c_str(), "r");
    if (pipe != nullptr) {
      char buf[65536];
      size_t n;
      while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) svg.append(buf, n);
      status = ::pclose(pipe);
    }
  }
  std::remove(dot_path.c_str());
  if (status != 0) throw sluice::UserError(fmt::format("Graphviz 'dot -Tsvg' failed (exit status {})", status));
  return svg;
}

int explainCommand(const CommonOptions& opts, const std::string& format) {
  sluice::table::TableEnvironment env(opts.build(), builtinFactories());
  const bool graph_only = format != "text";
  std::string text = env.explainScript(readScript(opts.file), graph_only);
  if (format == "json") {
    // One document for any number of jobs, like --metrics: {"jobs": [plan, ...]}.
    const std::vector<std::string> plans = sluice::graph::splitJsonDocuments(text);
    text = "{\"jobs\": [";
    for (size_t i = 0; i < plans.size(); ++i) text += (i ? ",\n" : "\n") + plans[i];
    text += plans.empty() ? "]}\n" : "\n]}\n";
  } else if (format == "dot" || format == "svg") {
    text = sluice::graph::planJsonToDot(sluice::graph::splitJsonDocuments(text));
    if (format == "svg") text = renderSvg(text);
  }
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
  // Flink's `flink run -s PATH [-n]`.
  run->add_option("-s,--fromSavepoint", run_opts.savepoint_path,
                  "Restore the job from this savepoint or retained checkpoint (its directory or _metadata file); "
                  "sets execution.state-recovery.path");
  run->add_flag("--stop-with-savepoint", run_opts.stop_with_savepoint,
                "Ctrl-C (SIGINT/SIGTERM) takes a savepoint into execution.checkpointing.savepoint-dir before "
                "cancelling the job (Flink's `flink stop`); SIGUSR1 always takes one while the job runs");
  run->add_flag("-n,--allowNonRestoredState", run_opts.allow_non_restored_state,
                "Skip state of the savepoint that no operator of the job claims "
                "(execution.state-recovery.ignore-unclaimed-state)");
  std::string metrics_path;
  run->add_option("--metrics", metrics_path,
                  "Write every job's final metrics (per vertex and subtask, Flink's names) to this JSON file");
  CLI::App* explain = app.add_subcommand("explain", "Print the plan, StreamGraph and JobGraph of a SQL script's jobs");
  explain_opts.add(explain);
  std::string format = "text";
  explain->add_option("--format", format,
                      "text; json ({\"jobs\": [...]}, each job in Flink's /jobs/:id/plan shape); dot (Graphviz: chains as boxes, pipelined regions "
                      "and slot sharing groups as coloured clusters); svg (dot rendered by Graphviz's 'dot')")
      ->check(CLI::IsMember({"text", "json", "dot", "svg"}));
  sluice::cli::SqlClientOptions sql_opts;
  CLI::App* sql = sluice::cli::addSqlCommand(app, sql_opts);
  sluice::cli::JobCommandOptions job_opts;
  const sluice::cli::JobCommands job_cmds = sluice::cli::addJobCommands(app, job_opts);
  sluice::cli::KafkaMockOptions kafka_mock_opts;
  CLI::App* kafka_mock = sluice::cli::addKafkaMockCommand(app, kafka_mock_opts);
  // `run -f FILE` / `explain -f FILE`, the SQL client's habit, mean the positional FILE. (A -f option would
  // not do: -D takes every value up to the next option, so a positional that is not required gets none.)
  std::vector<char*> args(argv, argv + argc);
  if (argc > 1 && (std::string_view(argv[1]) == "run" || std::string_view(argv[1]) == "explain")) {
    for (size_t i = 2; i + 1 < args.size(); ++i) {
      if (std::string_view(args[i]) == "-f" || std::string_view(args[i]) == "--file") {
        args.erase(args.begin() + static_cast<std::ptrdiff_t>(i));
        break;
      }
    }
  }
  // CLI11 would say "A subcommand is required" of a misspelt command; name it and list the commands.
  if (argc > 1 && argv[1][0] != '-') {
    const std::vector<CLI::App*> commands = app.get_subcommands([](CLI::App*) { return true; });
    std::string names;
    bool known = false;
    for (const CLI::App* c : commands) {
      known = known || c->check_name(argv[1]);
      names += (names.empty() ? "" : ", ") + c->get_name();
    }
    if (!known) {
      std::fprintf(stderr, "Error: unknown command '%s'; the commands are: %s\nRun with --help for more information.\n",
                   argv[1], names.c_str());
      return 1;
    }
  }
  try {
    app.parse(static_cast<int>(args.size()), args.data());
  } catch (const CLI::ParseError& e) {
    // CLI11 gives each kind of usage error its own status (105, 109, ...); Flink's CLI exits 1 for every
    // failure, so scripts only need to test for non-zero. --help and --version still exit 0.
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    std::fprintf(stderr, "Error: %s\nRun with --help for more information.\n", e.what());
    return 1;
  }
  try {
    if (*run) return runCommand(run_opts, metrics_path);
    if (*explain) return explainCommand(explain_opts, format);
    if (*sql) return sluice::cli::runSqlClient(sql_opts);
    if (*kafka_mock) return sluice::cli::runKafkaMock(kafka_mock_opts);
    if (*job_cmds.list || *job_cmds.cancel || *job_cmds.savepoint || *job_cmds.stop) {
      return sluice::cli::runJobCommand(job_cmds, job_opts);
    }
  } catch (const sluice::UserError& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "Error: %s\n", e.what());
    return 1;
  } catch (const sluice::InternalError& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "Internal error: %s\n", e.what());
    return 2;
  } catch (const sluice::SluiceError& e) {
    // A peer or connection failed (or a test's injected failure) and the restart strategy gave up.
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
