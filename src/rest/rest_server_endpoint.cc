#include "rest/rest_server_endpoint.h"

#include <atomic>
#include <thread>

#include <fmt/format.h>
#include <httplib.h>

#include "common/error.h"
#include "rest/messages.h"
#include "rest/rest_api.h"
#include "rest/rest_options.h"

namespace sluice::rest {

struct RestServerEndpoint::Impl {
  explicit Impl(std::shared_ptr<JobRegistry> registry) : api(std::move(registry)) {}
  RestApi api;
  httplib::Server server;
  RestEndpointAddress address;
  int port = 0;
  std::thread listener;
  std::atomic<bool> listener_done{false};
};

RestServerEndpoint::RestServerEndpoint(std::shared_ptr<JobRegistry> registry, const Configuration& config)
    : impl_(std::make_unique<Impl>(std::move(registry))) {
  impl_->address = restEndpointAddress(config);
  httplib::Server& s = impl_->server;
  s.set_payload_max_length(static_cast<size_t>(config.get(kRestServerMaxContentLength)));
  auto serve = [api = &impl_->api](const httplib::Request& req, httplib::Response& res) {
    RestRequest r;
    r.method = req.method;
    r.path = req.path;
    for (const auto& [k, v] : req.params) r.query.emplace(k, v);
    r.body = req.body;
    RestResponse out = api->handle(r);
    res.status = out.status;
    res.set_content(out.body, "application/json");
  };
  // httplib refuses a POST or PATCH without Content-Length (400) while reading the body; Flink takes them
  // (`curl -X PATCH .../jobs/<id>`), so they are answered before that, with an empty body.
  s.set_pre_routing_handler([serve](const httplib::Request& req, httplib::Response& res) {
    const bool body_expected = req.method == "POST" || req.method == "PATCH" || req.method == "PUT";
    if (body_expected && !req.has_header("Content-Length") &&
        req.get_header_value("Transfer-Encoding").find("chunked") == std::string::npos) {
      serve(req, res);
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
  s.Get(".*", serve);
  s.Post(".*", serve);
  s.Patch(".*", serve);
  s.Put(".*", serve);
  s.Delete(".*", serve);
  s.Options(".*", serve);
  // httplib's own refusals (413 body too large, 400 malformed request) get Flink's error shape too.
  s.set_error_handler([](const httplib::Request&, httplib::Response& res) {
    if (res.body.empty()) {
      const char* reason = res.status == 413 ? "Request body too large"
                           : res.status == 400 ? "Malformed request"
                                               : "Request refused";
      res.set_content(errorJson({fmt::format("{} ({})", reason, res.status)}), "application/json");
    }
  });
  const std::string& host = impl_->address.bind_address;
  if (impl_->address.port == 0) {
    impl_->port = s.bind_to_any_port(host);
  } else {
    impl_->port = s.bind_to_port(host, impl_->address.port) ? impl_->address.port : -1;
  }
  if (impl_->port <= 0) {
    throw UserError(fmt::format("The REST endpoint cannot listen on {}:{} ('{}', '{}'): the port is in use or the "
                                "address is not local",
                                host, impl_->address.port, kRestBindAddress.key(), kRestPort.key()));
  }
  impl_->listener = std::thread([this] {
    impl_->server.listen_after_bind();
    impl_->listener_done = true;
  });
}

RestServerEndpoint::~RestServerEndpoint() {
  // httplib's stop() only acts once the listener runs; it starts within microseconds of the constructor.
  while (!impl_->server.is_running() && !impl_->listener_done) std::this_thread::yield();
  impl_->server.stop();
  if (impl_->listener.joinable()) impl_->listener.join();
}

int RestServerEndpoint::port() const { return impl_->port; }

std::string RestServerEndpoint::url() const { return fmt::format("http://{}:{}", impl_->address.address, impl_->port); }

}  // namespace sluice::rest
