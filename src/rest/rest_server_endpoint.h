#pragma once
/// RestServerEndpoint: serves RestApi over HTTP/1.1 (cpp-httplib, kept inside the .cc) on
/// `rest.bind-address`:`rest.port` (Flink's RestServerEndpoint / WebMonitorEndpoint).
///
/// Threading: the constructor binds the socket and starts a listener thread; httplib answers each
/// connection on a thread of its pool, which calls RestApi::handle (thread-safe; it reads JobRegistry
/// snapshots). The destructor stops the server and joins its threads. Request bodies above
/// `rest.server.max-content-length` are refused with 413.

#include <memory>
#include <string>

#include "common/config.h"
#include "rest/job_registry.h"

namespace sluice::rest {

class RestServerEndpoint {
 public:
  /// Binds and starts serving. Throws ConfigError for a bad rest.* value, UserError naming address and port
  /// when the socket cannot be bound (port in use, unknown address).
  RestServerEndpoint(std::shared_ptr<JobRegistry> registry, const Configuration& config);
  ~RestServerEndpoint();
  RestServerEndpoint(const RestServerEndpoint&) = delete;
  RestServerEndpoint& operator=(const RestServerEndpoint&) = delete;

  /// The port it listens on (the chosen one when rest.port = 0).
  int port() const;
  /// "http://<rest.address>:<port>".
  std::string url() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sluice::rest
