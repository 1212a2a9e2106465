#include "rest/rest_api.h"

#include <unistd.h>

#include <ctime>
#include <optional>
#include <sstream>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "rest/messages.h"

namespace sluice::rest {

namespace {

RestResponse error(int status, std::string message) { return RestResponse{status, errorJson({std::move(message)})}; }

/// The non-empty pieces of `value` between `sep`s.
std::vector<std::string> split(const std::string& value, char sep) {
  std::vector<std::string> out;
  std::stringstream in(value);
  std::string item;
  while (std::getline(in, item, sep)) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

/// The path's segments, without Flink's optional "/v1" version prefix.
std::vector<std::string> splitPath(const std::string& path) {
  std::vector<std::string> parts = split(path, '/');
  if (!parts.empty() && parts[0] == "v1") parts.erase(parts.begin());
  return parts;
}

Hardware localHardware() {
  Hardware h;
  h.cpu_cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const long pages = ::sysconf(_SC_PHYS_PAGES), avail = ::sysconf(_SC_AVPHYS_PAGES), size = ::sysconf(_SC_PAGESIZE);
  if (pages > 0 && size > 0) h.physical_memory = static_cast<int64_t>(pages) * size;
  if (avail > 0 && size > 0) h.free_memory = static_cast<int64_t>(avail) * size;
  return h;
}

/// The local time zone's name and offset from UTC in ms (for /config).
std::pair<std::string, int64_t> localTimeZone() {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  ::localtime_r(&now, &local);
  return {local.tm_zone != nullptr ? local.tm_zone : "UTC", static_cast<int64_t>(local.tm_gmtoff) * 1000};
}

}  // namespace

RestApi::RestApi(std::shared_ptr<JobRegistry> registry) : registry_(std::move(registry)) {}

RestResponse RestApi::handle(const RestRequest& request) const {
  try {
    return route(request);
  } catch (const std::exception& e) {
    return error(500, fmt::format("Internal server error: {}", e.what()));
  }
}

RestResponse RestApi::route(const RestRequest& request) const {
  const std::vector<std::string> p = splitPath(request.path);
  const std::string& m = request.method;
  auto allow = [&](const char* method) { return m == method; };
  auto not_allowed = [&] { return error(405, fmt::format("Method {} is not allowed for {}", m, request.path)); };
  const size_t n = p.size();
  if (n == 1 && (p[0] == "config" || p[0] == "overview" || p[0] == "jobs" || p[0] == "taskmanagers")) {
    if (!allow("GET")) return not_allowed();
    if (p[0] == "config") {
      const auto [zone, offset] = localTimeZone();
      return RestResponse{200, dashboardConfigurationJson(zone, offset)};
    }
    const ClusterSnapshot c = registry_->snapshot();
    if (p[0] == "overview") return RestResponse{200, clusterOverviewJson(c)};
    if (p[0] == "jobs") return RestResponse{200, jobIdsWithStatusJson(c)};
    return RestResponse{200, taskManagersJson(c, localHardware(), currentTimeMillis())};
  }
  if (n == 2 && p[0] == "jobs" && p[1] == "overview") {
    if (!allow("GET")) return not_allowed();
    return RestResponse{200, multipleJobsDetailsJson(registry_->snapshot())};
  }
  if (n < 2 || p[0] != "jobs") return error(404, fmt::format("Not found: {}", request.path));

  const std::string& job_id = p[1];
  // Which methods each job path takes; anything else under /jobs/:jobid is unknown.
  std::string methods;
  if (n == 2) methods = "GET PATCH";
  else if (n == 3 && (p[2] == "plan" || p[2] == "exceptions" || p[2] == "checkpoints")) methods = "GET";
  else if (n == 3 && (p[2] == "savepoints" || p[2] == "stop")) methods = "POST";
  else if (n == 4 && p[2] == "savepoints") methods = "GET";
  else if (n == 4 && p[2] == "vertices") methods = "GET";
  else if (n == 5 && p[2] == "vertices" && p[4] == "metrics") methods = "GET";
  else return error(404, fmt::format("Not found: {}", request.path));
  if ((" " + methods + " ").find(" " + m + " ") == std::string::npos) return not_allowed();

  const std::optional<JobSnapshot> job = registry_->job(job_id);
  if (!job) return error(404, fmt::format("Job {} not found", job_id));

  if (n == 2 && m == "PATCH") {
    // Flink's JobCancellationHandler: mode=cancel (the default); "stop" was removed from Flink.
    auto mode = request.query.find("mode");
    if (mode != request.query.end() && mode->second != "cancel") {
      return error(400, fmt::format("Invalid value '{}' for query parameter 'mode': only 'cancel' is supported",
                                    mode->second));
    }
    switch (registry_->cancel(job_id)) {
      case JobRegistry::CancelOutcome::kAccepted:
        return RestResponse{202, "{}"};
      case JobRegistry::CancelOutcome::kAlreadyTerminal:
        return error(409, fmt::format("Job cancellation failed because the job has already reached another "
                                      "terminal state ({}).",
                                      job->state));
      case JobRegistry::CancelOutcome::kNotFound:
        break;
    }
    return error(404, fmt::format("Job {} not found", job_id));
  }
  if (n == 2) return RestResponse{200, jobDetailsJson(*job)};
  if (p[2] == "plan") return RestResponse{200, jobPlanJson(*job)};
  if (p[2] == "exceptions") return RestResponse{200, jobExceptionsJson(*job)};
  if (p[2] == "checkpoints") {
    if (!job->progress.checkpoints) return error(404, "Checkpointing has not been enabled.");
    return RestResponse{200, checkpointingStatisticsJson(*job)};
  }
  if (p[2] == "savepoints" && n == 3) {
    // Flink's SavepointTriggerRequestBody: {"target-directory", "cancel-job", "triggerId", "formatType"}.
    std::string target;
    if (!request.body.empty()) {
      nlohmann::json body = nlohmann::json::parse(request.body, nullptr, false);
      if (body.is_discarded() || !body.is_object()) {
        return error(400, "Request body is not a JSON object (expected {\"target-directory\": \"...\"})");
      }
      if (body.contains("target-directory") && !body["target-directory"].is_null()) {
        if (!body["target-directory"].is_string()) return error(400, "Field 'target-directory' must be a string");
        target = body["target-directory"].get<std::string>();
      }
      if (body.contains("cancel-job") && body["cancel-job"].is_boolean() && body["cancel-job"].get<bool>()) {
        return error(400, "Field 'cancel-job' = true is not supported: take the savepoint, then PATCH the job");
      }
    }
    try {
      std::optional<std::string> trigger = registry_->triggerSavepoint(job_id, target);
      if (!trigger) return error(404, fmt::format("Job {} not found", job_id));
      return RestResponse{202, triggerResponseJson(*trigger)};
    } catch (const ConfigError& e) {
      return error(400, e.what());
    } catch (const UserError& e) {
      return error(409, e.what());
    }
  }
  if (p[2] == "stop") {
    // Flink's StopWithSavepointRequestBody: {"targetDirectory", "drain", "triggerId", "formatType"}.
    std::string target;
    bool drain = false;
    if (!request.body.empty()) {
      nlohmann::json body = nlohmann::json::parse(request.body, nullptr, false);
      if (body.is_discarded() || !body.is_object()) {
        return error(400, "Request body is not a JSON object (expected {\"targetDirectory\": \"...\", \"drain\": false})");
      }
      if (body.contains("targetDirectory") && !body["targetDirectory"].is_null()) {
        if (!body["targetDirectory"].is_string()) return error(400, "Field 'targetDirectory' must be a string");
        target = body["targetDirectory"].get<std::string>();
      }
      if (body.contains("drain") && !body["drain"].is_null()) {
        if (!body["drain"].is_boolean()) return error(400, "Field 'drain' must be a boolean");
        drain = body["drain"].get<bool>();
      }
    }
    try {
      std::optional<std::string> trigger = registry_->stopWithSavepoint(job_id, target, drain);
      if (!trigger) return error(404, fmt::format("Job {} not found", job_id));
      return RestResponse{202, triggerResponseJson(*trigger)};
    } catch (const ConfigError& e) {
      return error(400, e.what());
    } catch (const UserError& e) {
      return error(409, e.what());
    }
  }
  if (p[2] == "savepoints") {
    std::optional<SavepointOperation> op = registry_->savepoint(job_id, p[3]);
    if (!op) return error(404, fmt::format("There is no savepoint operation with trigger id {} for job {}", p[3], job_id));
    return RestResponse{200, savepointStatusJson(*op)};
  }
  // vertices
  size_t vertex = job->vertices.size();
  for (size_t v = 0; v < job->vertices.size(); ++v) {
    if (job->vertices[v].id == p[3]) vertex = v;
  }
  if (vertex == job->vertices.size()) return error(404, fmt::format("Vertex {} not found in job {}", p[3], job_id));
  if (n == 4) return RestResponse{200, jobVertexDetailsJson(*job, vertex)};
  std::optional<std::vector<std::string>> get;
  for (auto [it, end] = request.query.equal_range("get"); it != end; ++it) {
    if (!get) get.emplace();
    for (auto& name : split(it->second, ',')) get->push_back(std::move(name));
  }
  return RestResponse{200, vertexMetricsJson(*job, vertex, get)};
}

}  // namespace sluice::rest
