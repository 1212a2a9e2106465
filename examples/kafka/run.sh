#!/usr/bin/env bash
# Runs the Kafka examples against an in-process mock Kafka cluster (`sluice kafka-mock`), from the repository
# root after `make build`:
#   examples/kafka/run.sh [flights|status]...   (default: both)
#  flights: a mock with topic `flights` (3 partitions) loaded from the bundled CSV, one line per message; then
#           examples/kafka/flights.sql at -p 2 (the source at 'scan.parallelism' = '3'), printing its changelog.
#  status:  a mock with topic `flight_status` (3 partitions) loaded from examples/kafka/flight_status.tsv
#           (KEY<TAB>VALUE lines, an empty value is a tombstone); then examples/kafka/flight_status.sql at -p 2,
#           printing the per-status changelog; then the upsert topic `latest_status` it wrote, read with kcat
#           as "latest_status> KEY VALUE" lines (VALUE "null" for a tombstone).
# Each mock is stopped (SIGINT) when its job is done, also when the job fails. The mock's address replaces
# @BOOTSTRAP@ in a copy of the SQL file. Environment: SLUICE (the binary, default build/release/src/cli/sluice),
# SLUICE_PARALLELISM (default 2), SLUICE_SCAN_PARALLELISM (when set, replaces the 'scan.parallelism' of
# flights.sql; `default` removes the option, so the source runs at the job's parallelism).
set -euo pipefail

SLUICE=${SLUICE:-build/release/src/cli/sluice}
PARALLELISM=${SLUICE_PARALLELISM:-2}
HERE=examples/kafka
[ -x "$SLUICE" ] || { echo "run.sh: $SLUICE not found; run 'make build' first (from the repository root)" >&2; exit 1; }
[ -f "$HERE/flights.sql" ] || { echo "run.sh: run me from the repository root" >&2; exit 1; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/sluice-kafka-example.XXXXXX")
MOCK_PID=""
stop_mock() {
  if [ -n "$MOCK_PID" ]; then
    kill -INT "$MOCK_PID" 2>/dev/null || true
    wait "$MOCK_PID" 2>/dev/null || true
    MOCK_PID=""
  fi
}
trap 'stop_mock; rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM  # so the EXIT trap stops the mock

# start_mock ARGS...: starts `sluice kafka-mock ARGS` and waits for its "ready" line; sets BOOTSTRAP.
start_mock() {
  exec 3< <(exec "$SLUICE" kafka-mock "$@" 2>"$WORK/mock.err")
  MOCK_PID=$!
  BOOTSTRAP=""
  local line=""
  while IFS= read -r line <&3; do
    echo "kafka-mock: $line" >&2
    case $line in
      bootstrap.servers=*) BOOTSTRAP=${line#bootstrap.servers=} ;;
      ready) break ;;
    esac
  done
  if [ "$line" != ready ] || [ -z "$BOOTSTRAP" ]; then
    cat "$WORK/mock.err" >&2
    echo "run.sh: the mock Kafka cluster did not start" >&2
    exit 1
  fi
}

# run_job SQL: runs a copy of SQL with the mock's address.
run_job() {
  sed "s/@BOOTSTRAP@/$BOOTSTRAP/g" "$1" > "$WORK/job.sql"
  case ${SLUICE_SCAN_PARALLELISM:-} in
    '') ;;
    default) sed -i "/'scan.parallelism'/d" "$WORK/job.sql" ;;
    *) sed -i "s/'scan.parallelism' = '[0-9]*'/'scan.parallelism' = '$SLUICE_SCAN_PARALLELISM'/" "$WORK/job.sql" ;;
  esac
  "$SLUICE" run -p "$PARALLELISM" "$WORK/job.sql"
}

flights() {
  start_mock --topic flights:3 --load flights=examples/data/flights_2015-01-01_to_04.csv
  run_job "$HERE/flights.sql"
  stop_mock
}

status() {
  start_mock --topic flight_status:3 --load flight_status="$HERE/flight_status.tsv" \
    --key-delimiter "$(printf '\t')" --null-empty
  run_job "$HERE/flight_status.sql"
  if command -v kcat >/dev/null; then
    # %S is the value's length, -1 for a tombstone.
    kcat -b "$BOOTSTRAP" -C -t latest_status -o beginning -e -q -f '%k\t%S\t%s\n' |
      awk -F'\t' '{ print "latest_status> " $1 " " ($2 == -1 ? "null" : $3) }'
  else
    echo "run.sh: kcat not installed; not printing topic latest_status" >&2
  fi
  stop_mock
}

[ $# -gt 0 ] || set -- flights status
for example in "$@"; do
  case $example in
    flights) flights ;;
    status) status ;;
    *) echo "run.sh: unknown example '$example' (flights or status)" >&2; exit 1 ;;
  esac
done
