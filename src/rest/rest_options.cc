#include "rest/rest_options.h"

#include <fmt/format.h>

#include "common/error.h"

namespace sluice::rest {

const ConfigOption<int32_t> kRestPort("rest.port", ConfigType::kInt, "8081",
                                      "The port of the REST endpoint; sluice run serves it only when set (0: any free "
                                      "port)",
                                      0);
const ConfigOption<std::string> kRestAddress(ConfigOptionSpec{
    "rest.address", ConfigType::kString, "", "The address clients use to connect to the REST endpoint", {}, {}, {}});
const ConfigOption<std::string> kRestBindAddress(ConfigOptionSpec{
    "rest.bind-address", ConfigType::kString, "", "The address the REST endpoint binds to (unset: 127.0.0.1)", {},
    {}, {}});
const ConfigOption<int64_t> kRestServerMaxContentLength("rest.server.max-content-length", ConfigType::kLong,
                                                        "104857600",
                                                        "The largest request body the REST endpoint accepts (bytes)",
                                                        int64_t{1});

const ConfigOption<int64_t> kRestConnectionTimeout(ConfigOptionSpec{
    .key = "rest.connection-timeout",
    .type = ConfigType::kDuration,
    .default_value = "15 s",
    .description = "How long a REST client (sluice list, cancel, savepoint, stop) waits to connect",
    .min_value = 1});
const ConfigOption<int64_t> kRestIdlenessTimeout(ConfigOptionSpec{
    .key = "rest.idleness-timeout",
    .type = ConfigType::kDuration,
    .default_value = "5 min",
    .description = "How long a REST client waits for an answer",
    .min_value = 1});

const ConfigOption<int64_t> kClientTimeout(ConfigOptionSpec{
    .key = "client.timeout",
    .type = ConfigType::kDuration,
    .default_value = "1 min",
    .description = "How long sluice savepoint and sluice stop wait for the savepoint to complete",
    .min_value = 1});

RestEndpointAddress restEndpointAddress(const Configuration& config) {
  RestEndpointAddress a;
  a.port = config.get(kRestPort);
  if (a.port > 65535) {
    throw ConfigError(
        fmt::format("Invalid value '{}' for configuration key '{}': must be at most 65535", a.port, kRestPort.key()));
  }
  a.bind_address = config.getOptional(kRestBindAddress).value_or("");
  if (a.bind_address.empty()) a.bind_address = "127.0.0.1";
  a.address = config.getOptional(kRestAddress).value_or("");
  if (a.address.empty()) a.address = a.bind_address == "0.0.0.0" ? "localhost" : a.bind_address;
  return a;
}

}  // namespace sluice::rest
