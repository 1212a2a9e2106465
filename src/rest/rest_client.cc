#include "rest/rest_client.h"

#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include <fmt/format.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "rest/rest_options.h"

namespace sluice::rest {

namespace {

/// The entries of Flink's {"errors": [...]} body; empty when `body` is not one.
std::vector<std::string> errorEntries(const std::string& body) {
  std::vector<std::string> out;
  const nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("errors") || !j["errors"].is_array()) return out;
  for (const auto& e : j["errors"]) out.push_back(e.is_string() ? e.get<std::string>() : e.dump());
  return out;
}

int parsePort(const std::string& text, const std::string& address) {
  if (text.empty() || text.size() > 5 || text.find_first_not_of("0123456789") != std::string::npos ||
      std::stoi(text) < 1 || std::stoi(text) > 65535) {
    throw UserError(fmt::format("Invalid JobManager address '{}': expected HOST:PORT with a port from 1 to 65535",
                                address));
  }
  return std::stoi(text);
}

/// Why `host` does not resolve (getaddrinfo's reason), or empty when it does.
std::string resolveFailure(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int rc = ::getaddrinfo(host.c_str(), nullptr, &hints, &found);
  if (found != nullptr) ::freeaddrinfo(found);
  if (rc == 0) return "";
  return rc == EAI_SYSTEM ? std::string(std::strerror(errno)) : std::string(::gai_strerror(rc));
}

}  // namespace

RestClientOptions restClientOptions(const Configuration& config, const std::optional<std::string>& address) {
  RestClientOptions o;
  o.host = config.getOptional(kRestAddress).value_or("");
  if (o.host.empty()) o.host = "localhost";
  o.port = config.get(kRestPort);
  if (o.port < 1 || o.port > 65535) {
    throw ConfigError(fmt::format("Invalid value '{}' for configuration key '{}': a client needs a port from 1 to 65535",
                                  o.port, kRestPort.key()));
  }
  o.connection_timeout_ms = config.get(kRestConnectionTimeout);
  o.idleness_timeout_ms = config.get(kRestIdlenessTimeout);
  if (!address) return o;
  std::string a = *address;
  if (a.rfind("http://", 0) == 0) a = a.substr(7);
  if (!a.empty() && a.back() == '/') a.pop_back();
  const size_t colon = a.rfind(':');
  if (a.empty() || a.find_first_of("/ ") != std::string::npos || colon == 0) {
    throw UserError(fmt::format("Invalid JobManager address '{}': expected HOST:PORT", *address));
  }
  if (colon == std::string::npos) {
    o.host = a;  // Flink's -m HOST keeps the configured port
  } else {
    o.host = a.substr(0, colon);
    o.port = parsePort(a.substr(colon + 1), *address);
  }
  return o;
}

RestClient::RestClient(RestClientOptions options) : options_(std::move(options)) {}

std::string RestClient::peer() const { return fmt::format("{}:{}", options_.host, options_.port); }

std::string RestClient::get(const std::string& path) { return send("GET", path, nullptr); }

std::string RestClient::post(const std::string& path, const std::string& json_body) {
  return send("POST", path, &json_body);
}

std::string RestClient::patch(const std::string& path) { return send("PATCH", path, nullptr); }

std::string RestClient::send(const std::string& method, const std::string& path, const std::string* body) {
  httplib::Client client(options_.host, options_.port);
  client.set_connection_timeout(std::chrono::milliseconds(options_.connection_timeout_ms));
  client.set_read_timeout(std::chrono::milliseconds(options_.idleness_timeout_ms));
  client.set_write_timeout(std::chrono::milliseconds(options_.idleness_timeout_ms));
  client.set_keep_alive(false);
  errno = 0;
  httplib::Result res = method == "GET"    ? client.Get(path)
                        : method == "POST" ? client.Post(path, *body, "application/json")
                                           : client.Patch(path, "", "application/json");
  if (!res) {
    const int err = errno;
    switch (res.error()) {
      case httplib::Error::Connection:
        // httplib reports a name that does not resolve as any failed connection.
        if (const std::string why = resolveFailure(options_.host); !why.empty()) {
          throw RestClientError(fmt::format("Could not resolve the host '{}' of {}: {}", options_.host, peer(), why),
                                0, {});
        }
        throw RestClientError(fmt::format("Could not connect to {}: {}", peer(),
                                          // httplib's non-blocking connect leaves EINPROGRESS behind.
                                          err == 0 || err == EINPROGRESS
                                              ? std::string("Connection refused or host unreachable")
                                              : std::string(std::strerror(err))),
                              0, {});
      case httplib::Error::ConnectionTimeout:
        throw RestClientError(fmt::format("Could not connect to {}: no connection within {} ms ('{}')", peer(),
                                          options_.connection_timeout_ms, kRestConnectionTimeout.key()),
                              0, {});
      case httplib::Error::Read:
        throw RestClientError(fmt::format("{} {} at {}: no answer within {} ms or the connection closed ('{}')",
                                          method, path, peer(), options_.idleness_timeout_ms,
                                          kRestIdlenessTimeout.key()),
                              0, {});
      default:
        throw RestClientError(
            fmt::format("{} {} at {} failed: {}", method, path, peer(), httplib::to_string(res.error())), 0, {});
    }
  }
  if (res->status < 200 || res->status > 299) {
    std::vector<std::string> errors = errorEntries(res->body);
    std::string text;
    for (const auto& e : errors) text += (text.empty() ? "" : "; ") + e;
    if (text.empty()) text = res->body.empty() ? "no details" : res->body;
    throw RestClientError(fmt::format("{} {} at {} answered {}: {}", method, path, peer(), res->status, text),
                          res->status, std::move(errors));
  }
  return res->body;
}

std::string awaitSavepointOperation(RestClient& client, const std::string& job_id, const std::string& trigger_id,
                                    const SavepointPolling& polling) {
  const std::string operation_path = fmt::format("/jobs/{}/savepoints/{}", job_id, trigger_id);
  const std::string job_path = fmt::format("/jobs/{}", job_id);
  std::string last_state;  // of the job, from its last GET /jobs/:id
  auto get = [&](const std::string& path) {
    std::string body;
    try {
      body = client.get(path);
    } catch (const RestClientError& e) {
      if (e.status() != 0) throw;
      // No answer at all: the server went (a `sluice run` ends with its job). Say what is known of the job.
      throw RestClientError(fmt::format("The REST API at {} went away while waiting for the savepoint of job {} ({}): {}",
                                        client.peer(), job_id,
                                        last_state.empty() ? "its state unknown" : "last seen " + last_state, e.what()),
                            0, {});
    }
    nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      throw UserError(fmt::format("The answer of {} to GET {} is not a JSON object", client.peer(), path));
    }
    return j;
  };
  const auto deadline = std::chrono::steady_clock::now() + polling.timeout;
  auto pause = std::chrono::milliseconds(10);
  for (;;) {
    const nlohmann::json op = get(operation_path);
    if (op.contains("status") && op["status"].is_object() && op["status"].value("id", "") == "COMPLETED") {
      const nlohmann::json& o = op.contains("operation") ? op["operation"] : nlohmann::json();
      if (o.is_object() && o.contains("location") && o["location"].is_string()) return o["location"].get<std::string>();
      std::string cause = "unknown cause";
      if (o.is_object() && o.contains("failure-cause") && o["failure-cause"].is_object()) {
        cause = o["failure-cause"].value("stack-trace", cause);
      }
      throw UserError(cause);
    }
    const nlohmann::json job = get(job_path);
    if (job.contains("state") && job["state"].is_string()) last_state = job["state"].get<std::string>();
    if (std::chrono::steady_clock::now() >= deadline) {
      throw UserError(fmt::format("the savepoint did not complete within {} ms ('{}'); job {} was last seen {}",
                                  polling.timeout.count(), kClientTimeout.key(), job_id, last_state));
    }
    // Polling a remote operation: a short pause that grows to 500 ms.
    if (polling.pause) polling.pause(pause);
    else std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(500));
  }
}

}  // namespace sluice::rest
