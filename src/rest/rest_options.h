#pragma once
/// The REST endpoint's options (Flink's RestOptions keys and defaults).

#include <cstdint>
#include <string>

#include "common/config.h"

namespace sluice::rest {

/// rest.port = 8081 (Flink's default). `sluice run` serves the REST API only when the key is set
/// (config.yaml or -D); 0 lets the OS pick a free port.
extern const ConfigOption<int32_t> kRestPort;
/// rest.address: the address clients use to reach the endpoint (printed in the "REST API at" line);
/// unset = the bind address.
extern const ConfigOption<std::string> kRestAddress;
/// rest.bind-address: the address the server binds to; unset = 127.0.0.1 (loopback only; Flink's
/// config.yaml ships `localhost` too). 0.0.0.0 opens it to every interface.
extern const ConfigOption<std::string> kRestBindAddress;
/// rest.server.max-content-length = 104857600 (bytes, Flink's default): larger request bodies get 413.
extern const ConfigOption<int64_t> kRestServerMaxContentLength;

/// rest.connection-timeout = 15 s (Flink's default): how long a client waits to connect (ms).
extern const ConfigOption<int64_t> kRestConnectionTimeout;
/// rest.idleness-timeout = 5 min (Flink's default): how long a client waits for an answer (ms).
extern const ConfigOption<int64_t> kRestIdlenessTimeout;

/// client.timeout = 1 min (Flink's ClientOptions default): how long `sluice savepoint` / `sluice stop`
/// wait for the savepoint (ms).
extern const ConfigOption<int64_t> kClientTimeout;

/// Where the server listens, from `config`: the bind address and the advertised address.
struct RestEndpointAddress {
  std::string bind_address;
  std::string address;
  int port = 0;
};
/// Throws ConfigError naming the key on a port outside [0, 65535].
RestEndpointAddress restEndpointAddress(const Configuration& config);

}  // namespace sluice::rest
