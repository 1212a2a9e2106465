#pragma once
/// RestApi: Flink's REST handlers (flink-runtime's rest/handler) as one function from a request to a
/// response, apart from the HTTP server (rest_server_endpoint.h) so it can be tested without sockets.
///
/// Paths (also under /v1): GET /config, /overview, /jobs, /jobs/overview, /jobs/:jobid,
/// /jobs/:jobid/plan, /jobs/:jobid/exceptions, /jobs/:jobid/checkpoints, /jobs/:jobid/vertices/:vertexid,
/// /jobs/:jobid/vertices/:vertexid/metrics[?get=a,b], /jobs/:jobid/savepoints/:triggerid, /taskmanagers;
/// PATCH /jobs/:jobid[?mode=cancel] (202); POST /jobs/:jobid/savepoints {"target-directory"} (202);
/// POST /jobs/:jobid/stop {"targetDirectory", "drain"} (202, stop-with-savepoint; its status is polled at
/// /jobs/:jobid/savepoints/:triggerid as Flink's).
/// Errors: {"errors": [...]} with 404 (unknown path, job, vertex or trigger), 405 (known path, other
/// method), 400 (bad query or body, no savepoint directory), 409 (cancel of a job that already ended, savepoint of a job that is
/// not running). Thread-safe: handle() may run on many server threads at once.

#include <map>
#include <memory>
#include <string>

#include "rest/job_registry.h"

namespace sluice::rest {

struct RestRequest {
  std::string method;  ///< "GET", "PATCH", ...
  std::string path;    ///< without the query
  std::multimap<std::string, std::string> query;  ///< decoded query parameters
  std::string body;
};

struct RestResponse {
  int status = 200;
  std::string body;  ///< JSON
};

class RestApi {
 public:
  explicit RestApi(std::shared_ptr<JobRegistry> registry);
  /// Never throws: an unexpected error becomes 500 with its message.
  RestResponse handle(const RestRequest& request) const;

 private:
  RestResponse route(const RestRequest& request) const;
  std::shared_ptr<JobRegistry> registry_;
};

}  // namespace sluice::rest
