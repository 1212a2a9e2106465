#include "cli/sql_client.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <editline/readline.h>
#include <fmt/format.h>

#include "cli/result_view.h"
#include "common/config.h"
#include "table/functions/time_zone.h"
#include "common/error.h"
#include "table/api/table_environment.h"
#include "types/row_batch.h"

namespace sluice::cli {

namespace {

const ConfigOption<std::string> kResultMode(
    "sql-client.execution.result-mode", ConfigType::kEnum, "TABLE",
    "How `sluice sql` shows a SELECT: TABLE (the materialized result), CHANGELOG (every change) or TABLEAU "
    "(every change in a table with an op column)",
    {"TABLE", "CHANGELOG", "TABLEAU"});
const ConfigOption<int32_t> kMaxTableRows("sql-client.execution.max-table-result.rows", ConfigType::kInt, "1000000",
                                          "Rows the TABLE result mode keeps; older rows are dropped first",
                                          int64_t{1});

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

/// The words of `text` upper-cased, comments and quoted parts skipped (enough to recognise statement heads
/// and a trailing END).
std::vector<std::string> words(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') {
      cur += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      continue;
    }
    if (!cur.empty()) out.push_back(std::move(cur)), cur.clear();
    if (c == '\'' || c == '"' || c == '`') {
      const size_t end = text.find(c, i + 1);
      i = end == std::string::npos ? text.size() : end;
      out.push_back("?");
    } else if (c == '-' && i + 1 < text.size() && text[i + 1] == '-') {
      const size_t end = text.find('\n', i);
      i = end == std::string::npos ? text.size() : end;
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '*') {
      const size_t end = text.find("*/", i + 2);
      i = end == std::string::npos ? text.size() : end + 1;
    }
  }
  if (!cur.empty()) out.push_back(std::move(cur));
  return out;
}

/// Cuts input into statements at each ';' outside quotes and comments. A statement set
/// (`EXECUTE STATEMENT SET BEGIN ...` / `BEGIN STATEMENT SET; ...`) ends only at `END;`.
class StatementSplitter {
 public:
  void add(const std::string& line) { buffer_ += line + "\n"; }
  bool empty() const { return trim(buffer_).empty(); }
  void clear() { buffer_.clear(); }

  /// The next complete statement (without its ';'), removed from the buffer; nullopt when none is complete.
  std::optional<std::string> next() {
    // Positions in errors count from the statement's first line: blanks before it are not part of it.
    buffer_.erase(0, std::min(buffer_.size(), buffer_.find_first_not_of(" \t\r\n")));
    char quote = 0;
    for (size_t i = 0; i < buffer_.size(); ++i) {
      const char c = buffer_[i];
      if (quote != 0) {
        if (c == quote) quote = 0;  // a doubled quote re-opens at once: still inside
        continue;
      }
      if (c == '\'' || c == '"' || c == '`') {
        quote = c;
      } else if (c == '-' && i + 1 < buffer_.size() && buffer_[i + 1] == '-') {
        const size_t end = buffer_.find('\n', i);
        if (end == std::string::npos) return std::nullopt;
        i = end;
      } else if (c == '/' && i + 1 < buffer_.size() && buffer_[i + 1] == '*') {
        const size_t end = buffer_.find("*/", i + 2);
        if (end == std::string::npos) return std::nullopt;
        i = end + 1;
      } else if (c == ';') {
        std::string stmt = buffer_.substr(0, i);
        const std::vector<std::string> w = words(stmt);
        const bool set_block = (w.size() >= 3 && w[0] == "EXECUTE" && w[1] == "STATEMENT" && w[2] == "SET") ||
                               (w.size() >= 3 && w[0] == "BEGIN" && w[1] == "STATEMENT" && w[2] == "SET");
        if (set_block && w.back() != "END") continue;
        buffer_.erase(0, i + 1);
        if (trim(stmt).empty()) return next();  // a lone ';'
        return stmt;
      }
    }
    return std::nullopt;
  }

  /// A client command alone in the buffer (HELP, QUIT, EXIT, CLEAR, with or without ';'), removed.
  std::optional<std::string> command() {
    std::string t = trim(buffer_);
    if (!t.empty() && t.back() == ';') t = trim(t.substr(0, t.size() - 1));
    const std::string u = upper(t);
    if (u == "HELP" || u == "QUIT" || u == "EXIT" || u == "CLEAR") {
      buffer_.clear();
      return u;
    }
    return std::nullopt;
  }

 private:
  std::string buffer_;
};

constexpr const char* kHelp =
    "The following commands are available:\n\n"
    "CLEAR                 Clears the terminal.\n"
    "HELP                  Prints the available commands.\n"
    "QUIT / EXIT           Quits the SQL client.\n"
    "SET                   Sets a session configuration property: SET '<key>' = '<value>'; SET; lists them.\n"
    "RESET                 Resets a session configuration property: RESET '<key>'; RESET; resets them all.\n"
    "CREATE TABLE / VIEW   Registers a table (WITH connector options) or a view in the session.\n"
    "SELECT                Runs a query and shows its result (sql-client.execution.result-mode:\n"
    "                      table, changelog or tableau). Ctrl-C cancels it.\n"
    "INSERT INTO           Runs a job writing a query's result into a table, to its end.\n"
    "EXECUTE STATEMENT SET BEGIN ... END   Runs several INSERTs as one job.\n"
    "EXPLAIN               Prints the plan of a query or INSERT.\n\n"
    "Hint: end every statement with ';' (a statement may span several lines).\n";

/// SIGINT / SIGTERM for the client: blocked in every thread, read from a signalfd by one watcher thread.
class SignalWatcher {
 public:
  SignalWatcher(table::TableEnvironment& env) : env_(env) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, &old_mask_);
    fd_ = ::signalfd(-1, &set, SFD_CLOEXEC);
    if (fd_ < 0 || ::pipe2(stop_, O_CLOEXEC) != 0) throw InternalError("cannot set up the Ctrl-C handling (signalfd/pipe)");
    thread_ = std::thread([this] { watch(); });
  }
  ~SignalWatcher() {
    const char b = 0;
    [[maybe_unused]] const ssize_t n = ::write(stop_[1], &b, 1);
    thread_.join();
    ::close(fd_);
    ::close(stop_[0]);
    ::close(stop_[1]);
    pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
  }
  SignalWatcher(const SignalWatcher&) = delete;
  SignalWatcher& operator=(const SignalWatcher&) = delete;

  /// Around one statement: a signal meanwhile cancels it.
  void beginStatement() {
    std::lock_guard<std::mutex> lock(mu_);
    running_ = true;
  }
  /// Returns whether the statement was cancelled, and forgets the cancel for the next statement.
  bool endStatement() {
    std::lock_guard<std::mutex> lock(mu_);
    running_ = false;
    const bool was = cancelled_;
    cancelled_ = false;
    env_.resetCancellation();
    return was;
  }
  bool terminate() const { return terminate_.load(); }

 private:
  void watch() {
    pollfd fds[2] = {{fd_, POLLIN, 0}, {stop_[0], POLLIN, 0}};
    for (;;) {
      if (::poll(fds, 2, -1) < 0) continue;  // EINTR
      if (fds[1].revents != 0) return;
      signalfd_siginfo info{};
      if (::read(fd_, &info, sizeof info) != static_cast<ssize_t>(sizeof info)) continue;
      const int sig = static_cast<int>(info.ssi_signo);
      std::lock_guard<std::mutex> lock(mu_);
      if (sig == SIGTERM) {
        if (!running_) std::_Exit(128 + SIGTERM);
        terminate_ = true;
      }
      if (!running_) continue;  // at the prompt: nothing to cancel
      if (cancelled_ && sig == SIGINT) std::_Exit(128 + SIGINT);  // the second Ctrl-C
      cancelled_ = true;
      env_.cancel();
    }
  }

  table::TableEnvironment& env_;
  sigset_t old_mask_{};
  int fd_ = -1;
  int stop_[2] = {-1, -1};
  std::mutex mu_;
  bool running_ = false;
  bool cancelled_ = false;
  std::atomic<bool> terminate_{false};
  std::thread thread_;
};

class SqlClient {
 public:
  explicit SqlClient(const SqlClientOptions& opts)
      : env_(opts.common.build(), builtinFactories()), watcher_(env_), history_file_(opts.history_file) {
    env_.setQueryStartCallback([this](const types::RowType& schema) {
      const std::string mode = upper(env_.config().get(kResultMode));
      const ResultMode m = mode == "TABLEAU" ? ResultMode::kTableau
                           : mode == "CHANGELOG" ? ResultMode::kChangelog
                                                 : ResultMode::kTable;
      view_ = makeResultView(m, stdout, env_.config().get(kMaxColumnWidth), env_.config().get(kMaxTableRows),
                             isatty(STDOUT_FILENO) != 0, env_.config().get(options::kLocalTimeZone));
      view_->begin(schema);
    });
    env_.setCollectCallback([this](const types::RowType&, const types::RowBatch& batch) {
      if (view_) view_->add(batch);
    });
    env_.setMessageCallback([](const std::string& message) {
      std::fputs(message.c_str(), stdout);
      if (!message.empty() && message.back() != '\n') std::fputc('\n', stdout);
      std::fflush(stdout);
    });
    env_.setStatusCallback([](const std::string& status) { std::fprintf(stderr, "%s\n", status.c_str()); });
    env_.setTableResultCallback([this](const types::RowType& schema, const types::RowBatch& rows) {
      printTableResult(stdout, schema, rows, env_.config().get(kMaxColumnWidth));
    });
  }

  /// Runs every statement of a file; false at the first failure.
  bool runFile(const std::string& path) {
    StatementSplitter split;
    split.add(readScript(path));
    while (auto stmt = split.next()) {
      if (!execute(*stmt) || watcher_.terminate()) return false;
    }
    if (!split.empty()) {
      std::fputs("[ERROR] The last statement of the file does not end with ';'.\n", stdout);
      return false;
    }
    return true;
  }

  /// Reads statements from stdin until QUIT, EXIT or end of input; returns the exit status.
  int interactive() {
    const bool tty = isatty(STDIN_FILENO) != 0;
    std::string history;
    if (tty) {
      rl_catch_signals = 0;  // SIGINT is read by the watcher, never by a handler
      history = historyPath();
      if (!history.empty()) read_history(history.c_str());
      std::fputs("Sluice SQL client. Statements end with ';'. HELP; lists the commands, QUIT; leaves.\n\n", stdout);
    }
    StatementSplitter split;
    for (;;) {
      std::string line;
      if (tty) {
        char* raw = readline(split.empty() ? "Sluice SQL> " : "> ");
        if (raw == nullptr) break;  // Ctrl-D
        line = raw;
        std::free(raw);
      } else if (!std::getline(std::cin, line)) {
        break;
      }
      split.add(line);
      if (auto cmd = split.command()) {
        if (tty) addHistory(trim(line), history);
        if (*cmd == "QUIT" || *cmd == "EXIT") break;
        if (*cmd == "HELP") std::fputs(kHelp, stdout);
        if (*cmd == "CLEAR" && tty) std::fputs("\033[H\033[2J", stdout);
        std::fflush(stdout);
        continue;
      }
      while (auto stmt = split.next()) {
        if (tty) addHistory(trim(*stmt) + ";", history);
        execute(*stmt);
        if (watcher_.terminate()) return 128 + SIGTERM;
      }
    }
    std::fputs("\nShutting down the session...\ndone.\n", stdout);
    return 0;
  }

 private:
  /// Runs one statement and prints its outcome; false when it failed.
  bool execute(const std::string& stmt) {
    const std::vector<std::string> w = words(stmt);
    const std::string head = w.empty() ? "" : w[0];
    bool ok = true;
    watcher_.beginStatement();
    try {
      env_.executeScript(stmt + ";");
    } catch (const std::exception& e) {
      ok = false;
      std::fflush(stdout);
      std::fprintf(stdout, "[ERROR] Could not execute SQL statement. Reason:\n%s\n", e.what());
    }
    const bool cancelled = watcher_.endStatement();
    if (view_) {
      if (ok) view_->end(cancelled);
      view_.reset();
    } else if (ok) {
      if (cancelled) {
        std::fputs("[INFO] The job was cancelled.\n", stdout);
      } else if (head == "INSERT" || head == "EXECUTE" || head == "BEGIN") {
        std::fputs("[INFO] Complete execution of the SQL update statement.\n", stdout);
      } else if (head != "EXPLAIN" && head != "SHOW" && head != "DESCRIBE" && head != "DESC" &&
                 !(head == "SET" && w.size() == 1)) {
        std::fputs("[INFO] Execute statement succeeded.\n", stdout);
      }
    }
    std::fflush(stdout);
    return ok;
  }

  std::string historyPath() const {
    if (!history_file_.empty()) return history_file_;
    const char* home = std::getenv("HOME");
    return home != nullptr && *home != 0 ? std::string(home) + "/.sluice-sql-history" : std::string();
  }

  static void addHistory(const std::string& entry, const std::string& path) {
    if (entry.empty()) return;
    add_history(entry.c_str());
    if (!path.empty()) write_history(path.c_str());
  }

  table::TableEnvironment env_;
  SignalWatcher watcher_;
  std::string history_file_;
  std::unique_ptr<ResultView> view_;
};

}  // namespace

CLI::App* addSqlCommand(CLI::App& app, SqlClientOptions& opts) {
  CLI::App* cmd = app.add_subcommand("sql", "Flink's SQL client: run statements one at a time on an embedded cluster");
  opts.common.add(cmd, /*with_file=*/false);
  cmd->add_option("-f,--file", opts.script_file, "Run the statements of this file, then exit");
  cmd->add_option("-i,--init", opts.init_file, "Run the statements of this file first (e.g. CREATE TABLE, SET)");
  cmd->add_option("--history", opts.history_file, "History file of the interactive client (default ~/.sluice-sql-history)");
  return cmd;
}

int runSqlClient(const SqlClientOptions& opts) {
  SqlClient client(opts);
  if (!opts.init_file.empty() && !client.runFile(opts.init_file)) return 1;
  if (!opts.script_file.empty()) return client.runFile(opts.script_file) ? 0 : 1;
  return client.interactive();
}

}  // namespace sluice::cli
