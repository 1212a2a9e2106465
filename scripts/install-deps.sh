#!/usr/bin/env bash
# Installs the Debian 12 packages Sluice builds with. Idempotent: does nothing when all are present.
# Works as root or through sudo.
set -euo pipefail

PACKAGES=(
  build-essential      # g++ 12, make
  cmake                # build system (>= 3.25)
  ninja-build          # fast builds
  ccache               # compile cache, shared with fresh clones via CCACHE_BASEDIR
  lld                  # fast linker (-fuse-ld=lld)
  pkg-config
  libfmt-dev           # formatting (std::format is missing in libstdc++ 12)
  libyaml-cpp-dev      # conf/config.yaml
  libcli11-dev         # sluice command line
  nlohmann-json3-dev   # plans as JSON (explain --format=json)
  libcpp-httplib-dev   # REST API of `sluice run` (rest.port): HTTP server, Flink's /jobs/... endpoints
  libgtest-dev         # unit tests
  libgmock-dev         # unit tests
  libbenchmark-dev     # bench/
  libasio-dev          # standalone asio: TCP between TaskManagers
  librocksdb-dev       # state.backend.type: rocksdb (keyed state on local disk)
  librdkafka-dev       # kafka / upsert-kafka connectors (+ its mock cluster for tests and sluice-kafka-mock)
  kcat                 # poke at topics of the mock cluster by hand
  libsimdjson-dev      # json / debezium-json formats
  zlib1g-dev           # crc32 checksums of checkpoint _metadata files
  libpcre2-dev         # REGEXP* SQL functions (closest to java.util.regex among Debian's libraries)
  libssl-dev           # libcrypto: MD5 / SHA1 / SHA2 SQL functions
  libhowardhinnant-date-dev  # date/tz.h: time-zone rules (table.local-time-zone, CONVERT_TZ)
  libedit-dev          # `sluice sql`: line editing and history (BSD licence; readline's API)
  sqlite3              # independent oracle in the tests
  jq                   # e2e tests read the JSON of `sluice run --metrics`
  clang-14             # libFuzzer targets
  libclang-rt-14-dev   # libFuzzer / sanitizer runtimes for clang
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  SUDO="sudo"
fi
echo "install-deps: installing ${missing[*]}" >&2
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq || true
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
