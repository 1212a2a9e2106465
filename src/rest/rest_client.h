#pragma once
/// RestClient: a small client of the REST API (Flink's RestClient / RestClusterClient, as `flink list`,
/// `flink cancel`, `flink savepoint` and `flink stop` use it), on cpp-httplib's client (kept in the .cc).
///
/// Every call opens one HTTP/1.1 connection to `host:port`, sends the request and reads the whole answer.
/// Errors are RestClientError (a UserError) naming the peer: "Could not resolve the host 'h' of h:8081: ..."
/// when the name does not resolve, "Could not connect to 127.0.0.1:8081: ..." when nothing answers,
/// "... timed out" after the connection or read timeout, and for a non-2xx answer
/// the status with the text of Flink's {"errors": [...]} body. Not thread-safe: one client per thread.

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/config.h"
#include "common/error.h"

namespace sluice::rest {

/// A failed REST call. `status()` is the HTTP status of a non-2xx answer (0: no answer at all);
/// `errors()` the entries of its {"errors": [...]} body (empty when it had none).
class RestClientError : public UserError {
 public:
  RestClientError(const std::string& message, int status, std::vector<std::string> errors)
      : UserError(message), status_(status), errors_(std::move(errors)) {}
  int status() const { return status_; }
  const std::vector<std::string>& errors() const { return errors_; }

 private:
  int status_;
  std::vector<std::string> errors_;
};

/// The REST endpoint a client talks to, and its timeouts (ms).
struct RestClientOptions {
  std::string host = "localhost";
  int port = 8081;
  int64_t connection_timeout_ms = 15000;  ///< rest.connection-timeout
  int64_t idleness_timeout_ms = 300000;   ///< rest.idleness-timeout: the longest wait for an answer
};

/// The options from `config`: rest.address (unset: localhost, as Flink's CLI) and rest.port, and the
/// timeouts. `address` ("HOST:PORT", "HOST" or "http://HOST:PORT", the -m / --jobmanager value; nullopt:
/// not given, from `config`) overrides them. Throws UserError naming the value when it does not parse
/// (also an empty one), ConfigError for a bad key.
RestClientOptions restClientOptions(const Configuration& config, const std::optional<std::string>& address);

class RestClient {
 public:
  explicit RestClient(RestClientOptions options);

  /// "host:port", as the errors name it.
  std::string peer() const;

  /// GET `path` (with its query); returns the body of a 2xx answer. Throws RestClientError.
  std::string get(const std::string& path);
  /// POST `path` with a JSON body; returns the body of a 2xx answer. Throws RestClientError.
  std::string post(const std::string& path, const std::string& json_body);
  /// PATCH `path` without a body (Flink's cancel); returns the body of a 2xx answer. Throws RestClientError.
  std::string patch(const std::string& path);

 private:
  std::string send(const std::string& method, const std::string& path, const std::string* body);
  RestClientOptions options_;
};

/// How awaitSavepointOperation waits.
struct SavepointPolling {
  /// client.timeout: the longest wait for the operation's result (ms).
  std::chrono::milliseconds timeout{60000};
  /// The pause between two rounds of polls, growing from 10 to 500 ms (null: std::this_thread::sleep_for).
  /// Tests replace it to act at a known point of the wait.
  std::function<void(std::chrono::milliseconds)> pause;
};

/// Waits for the savepoint operation `trigger_id` of job `job_id` (POST /jobs/:id/savepoints or /stop) as
/// Flink's RestClusterClient does: polls GET /jobs/:id/savepoints/:triggerid until its status is
/// COMPLETED, and between two of those polls GET /jobs/:id for the job's state. Returns the savepoint's
/// location (its directory). Throws UserError with the operation's failure cause when it failed, naming
/// `client.timeout` when `polling.timeout` passed first, and RestClientError (status 0) naming the job and
/// the last state it was seen in when the server stops answering (a `sluice run` that exited:
/// "The REST API at 127.0.0.1:8081 went away while waiting for the savepoint of job J (last seen
/// FINISHED): Could not connect ..."); other REST errors as RestClient. Calls on the caller's thread.
std::string awaitSavepointOperation(RestClient& client, const std::string& job_id, const std::string& trigger_id,
                                    const SavepointPolling& polling);

}  // namespace sluice::rest
