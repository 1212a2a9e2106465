#include "cli/job_commands.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/cli_common.h"
#include "common/error.h"
#include "rest/rest_client.h"
#include "rest/rest_options.h"

namespace sluice::cli {

namespace {

using nlohmann::json;

/// -D, --conf-dir and -m, shared by the four commands.
void addConnectionOptions(CLI::App* cmd, JobCommandOptions& opts) {
  // One value per -D, so a -D before the job id does not swallow it.
  cmd->add_option("-D", opts.dynamic, "Configuration option key=value (repeatable); overrides conf/config.yaml")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--conf-dir", opts.conf_dir,
                  "Directory holding config.yaml (default: $SLUICE_CONF_DIR, else ./conf when present)");
  cmd->add_option("-m,--jobmanager", opts.jobmanager,
                  "Address HOST:PORT of the REST API of a `sluice run` (default: rest.address and rest.port of the "
                  "configuration, localhost:8081)");
}

/// Flink's JobID.fromHexString: 32 hex digits.
std::string parseJobId(const std::string& text, const char* what) {
  if (text.empty()) throw UserError(fmt::format("Missing JobID. Specify a JobID to {}.", what));
  if (text.size() != 32 || text.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos) {
    throw UserError(fmt::format("Cannot parse JobID from \"{}\". The expected format is [0-9a-fA-F]{{32}}, e.g. "
                                "fd72014d4c864993a2e5a9287b4a9c5d.",
                                text));
  }
  std::string id = text;
  std::transform(id.begin(), id.end(), id.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return id;
}

/// The body of a REST answer as JSON; UserError naming the peer when it is not.
json parseAnswer(const std::string& body, const rest::RestClient& client, const std::string& what) {
  json j = json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    throw UserError(fmt::format("The answer of {} to {} is not a JSON object", client.peer(), what));
  }
  return j;
}

/// "dd.MM.yyyy HH:mm:ss" of epoch ms, local time (Flink's SimpleDateFormat in `flink list`).
std::string formatStartTime(int64_t epoch_ms) {
  const std::time_t t = static_cast<std::time_t>(epoch_ms / 1000);
  std::tm local{};
  ::localtime_r(&t, &local);
  char buf[32];
  std::strftime(buf, sizeof buf, "%d.%m.%Y %H:%M:%S", &local);
  return buf;
}

struct JobLine {
  std::string id, name, state;
  int64_t start = 0;
};

void printJobs(std::vector<JobLine> jobs) {
  std::stable_sort(jobs.begin(), jobs.end(), [](const JobLine& a, const JobLine& b) { return a.start < b.start; });
  for (const auto& j : jobs) std::printf("%s : %s : %s (%s)\n", formatStartTime(j.start).c_str(), j.id.c_str(), j.name.c_str(), j.state.c_str());
}

constexpr const char* kFooter = "--------------------------------------------------------------";

int listJobs(rest::RestClient& client, const JobCommandOptions& opts) {
  bool running = opts.running, scheduled = opts.scheduled;
  const bool all = opts.all;
  if (!running && !scheduled && !all) running = scheduled = true;  // Flink: running and scheduled by default
  std::printf("Waiting for response...\n");
  std::fflush(stdout);
  std::string body;
  try {
    body = client.get("/jobs/overview");
  } catch (const UserError& e) {
    throw UserError(fmt::format("Failed to retrieve job list: {}", e.what()));
  }
  const json j = parseAnswer(body, client, "GET /jobs/overview");
  std::vector<JobLine> run, sched, done;
  if (!j.contains("jobs") || !j["jobs"].is_array()) {
    throw UserError(fmt::format("The answer of {} to GET /jobs/overview has no \"jobs\" list", client.peer()));
  }
  for (const auto& job : j["jobs"]) {
    JobLine l{job.value("jid", ""), job.value("name", ""), job.value("state", ""), job.value("start-time", int64_t{0})};
    // Flink's list: CREATED / INITIALIZING are scheduled, every state that is not globally terminal runs.
    if (l.state == "CREATED" || l.state == "INITIALIZING") sched.push_back(l);
    else if (l.state == "FINISHED" || l.state == "CANCELED" || l.state == "FAILED") done.push_back(l);
    else run.push_back(l);
  }
  if (running || all) {
    if (run.empty()) {
      std::printf("No running jobs.\n");
    } else {
      std::printf("------------------ Running/Restarting Jobs -------------------\n");
      printJobs(run);
      std::printf("%s\n", kFooter);
    }
  }
  if (scheduled || all) {
    if (sched.empty()) {
      std::printf("No scheduled jobs.\n");
    } else {
      std::printf("----------------------- Scheduled Jobs -----------------------\n");
      printJobs(sched);
      std::printf("%s\n", kFooter);
    }
  }
  if (all && !done.empty()) {
    std::printf("---------------------- Terminated Jobs -----------------------\n");
    printJobs(done);
    std::printf("%s\n", kFooter);
  }
  return 0;
}

int cancelJob(rest::RestClient& client, const std::string& id) {
  std::printf("Cancelling job %s.\n", id.c_str());
  std::fflush(stdout);
  try {
    client.patch(fmt::format("/jobs/{}?mode=cancel", id));
  } catch (const UserError& e) {
    throw UserError(fmt::format("Could not cancel job {}: {}", id, e.what()));
  }
  std::printf("Cancelled job %s.\n", id.c_str());
  return 0;
}

std::string triggerId(const std::string& body, const rest::RestClient& client, const std::string& what) {
  const json t = parseAnswer(body, client, what);
  if (!t.contains("request-id") || !t["request-id"].is_string()) {
    throw UserError(fmt::format("The answer of {} to {} has no \"request-id\"", client.peer(), what));
  }
  return t["request-id"].get<std::string>();
}

/// POSTs a savepoint-taking operation (savepoint or stop) and waits for its location; any failure is
/// rethrown as UserError prefixed with `failure` (the wording of Flink's CLI for that command).
std::string runSavepointOperation(rest::RestClient& client, const std::string& id, const std::string& path,
                                  const json& body, std::chrono::milliseconds timeout, const std::string& failure) {
  try {
    rest::SavepointPolling polling;
    polling.timeout = timeout;
    return rest::awaitSavepointOperation(client, id, triggerId(client.post(path, body.dump()), client, "POST " + path),
                                         polling);
  } catch (const UserError& e) {
    throw UserError(fmt::format("{}: {}", failure, e.what()));
  }
}

int savepointJob(rest::RestClient& client, const std::string& id, const std::string& dir,
                 std::chrono::milliseconds timeout) {
  std::printf("Triggering savepoint for job %s.\n", id.c_str());
  std::printf("Waiting for response...\n");
  std::fflush(stdout);
  const json body{{"target-directory", dir.empty() ? json() : json(dir)}, {"cancel-job", false}};
  const std::string location =
      runSavepointOperation(client, id, fmt::format("/jobs/{}/savepoints", id), body, timeout,
                            fmt::format("Failed to trigger a savepoint for the job {}", id));
  std::printf("Savepoint completed. Path: %s\n", location.c_str());
  std::printf("You can resume your program from this savepoint with the run command.\n");
  return 0;
}

int stopJob(rest::RestClient& client, const std::string& id, const std::string& dir, bool drain,
            std::chrono::milliseconds timeout) {
  std::printf("%s job \"%s\" with a CANONICAL savepoint.\n", drain ? "Draining" : "Suspending", id.c_str());
  std::fflush(stdout);
  const json body{{"targetDirectory", dir.empty() ? json() : json(dir)}, {"drain", drain}};
  const std::string location =
      runSavepointOperation(client, id, fmt::format("/jobs/{}/stop", id), body, timeout,
                            fmt::format("Could not stop with a savepoint job \"{}\"", id));
  std::printf("Savepoint completed. Path: %s\n", location.c_str());
  return 0;
}

}  // namespace

JobCommands addJobCommands(CLI::App& app, JobCommandOptions& opts) {
  JobCommands c;
  c.list = app.add_subcommand("list", "List the jobs of a running `sluice run` (Flink's `flink list`)");
  addConnectionOptions(c.list, opts);
  c.list->add_flag("-r,--running", opts.running, "Show only running jobs");
  c.list->add_flag("-s,--scheduled", opts.scheduled, "Show only scheduled jobs");
  c.list->add_flag("-a,--all", opts.all, "Show all jobs, also those that ended");

  c.cancel = app.add_subcommand("cancel", "Cancel a job of a running `sluice run` (Flink's `flink cancel`)");
  addConnectionOptions(c.cancel, opts);
  c.cancel->add_option("jobid", opts.job_id, "The job's id (32 hex digits, `sluice list`)");

  c.savepoint = app.add_subcommand("savepoint", "Take a savepoint of a running job (Flink's `flink savepoint`)");
  addConnectionOptions(c.savepoint, opts);
  c.savepoint->add_option("jobid", opts.job_id, "The job's id (32 hex digits)");
  c.savepoint->add_option("targetDirectory", opts.target_directory,
                          "Where the savepoint goes (default: the job's execution.checkpointing.savepoint-dir)");

  c.stop = app.add_subcommand("stop", "Stop a job with a savepoint; it ends FINISHED (Flink's `flink stop`)");
  addConnectionOptions(c.stop, opts);
  c.stop->add_option("-p,--savepointPath", opts.target_directory,
                     "Where the savepoint goes (default: the job's execution.checkpointing.savepoint-dir)");
  c.stop->add_flag("-d,--drain", opts.drain,
                   "Emit MAX_WATERMARK before the savepoint, so every event-time window fires (the job is not "
                   "meant to be restored)");
  c.stop->add_option("jobid", opts.job_id, "The job's id (32 hex digits)");
  return c;
}

int runJobCommand(const JobCommands& cmds, const JobCommandOptions& opts) {
  CommonOptions common;
  common.dynamic = opts.dynamic;
  common.conf_dir = opts.conf_dir;
  const Configuration config = common.build();
  CLI::App* given = *cmds.list ? cmds.list : *cmds.cancel ? cmds.cancel : *cmds.savepoint ? cmds.savepoint : cmds.stop;
  // -m '' is a mistake (an unset shell variable), not a request for the configured address.
  const rest::RestClientOptions client_options = rest::restClientOptions(
      config, given->count("--jobmanager") > 0 ? std::optional<std::string>(opts.jobmanager) : std::nullopt);
  const std::chrono::milliseconds timeout(config.get(rest::kClientTimeout));
  if (*cmds.list) {
    rest::RestClient client(client_options);
    return listJobs(client, opts);
  }
  if (*cmds.cancel) {
    const std::string id = parseJobId(opts.job_id, "cancel a job");
    rest::RestClient client(client_options);
    return cancelJob(client, id);
  }
  if (*cmds.savepoint) {
    const std::string id = parseJobId(opts.job_id, "trigger a savepoint");
    rest::RestClient client(client_options);
    return savepointJob(client, id, opts.target_directory, timeout);
  }
  const std::string id = parseJobId(opts.job_id, "stop a job");
  rest::RestClient client(client_options);
  return stopJob(client, id, opts.target_directory, opts.drain, timeout);
}

}  // namespace sluice::cli
