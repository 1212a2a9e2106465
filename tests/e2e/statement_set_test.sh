#!/usr/bin/env bash
# Source reuse in a statement set (Flink's SubplanReuser / ScanReuser): two INSERTs reading the flights table
# with different columns are one job with ONE source that reads the file once (the union of the columns) and
# feeds both branches; with 'table.optimizer.reuse-source-enabled' = 'false' each INSERT has its own source.
#   $1 sluice binary, $2 source tree, $3 parallelism (default 2).
# Checks, in both modes:
#  - per_airline (an updating GROUP BY): the materialized changelog equals SQLite's GROUP BY over the CSV;
#  - long_haul (insert-only filter + projection): the rows equal awk's over the CSV;
#  - the job summary's rows read: the file's line count once with reuse, twice without (each source reads
#    every line, so a source read twice would show here even if results could not tell);
#  - the JSON plan: one source vertex reading the five columns both branches use, or two without reuse;
#  - the same with reuse over a named pipe, which can be read only once.
source "$(dirname "$0")/lib.sh"
PARALLELISM=${3:-2}
command -v sqlite3 >/dev/null || fail "sqlite3 is not installed (scripts/install-deps.sh installs it)"
command -v jq >/dev/null || fail "jq is needed (scripts/install-deps.sh installs it)"

# The flights DDL of the main job (all 31 physical columns, no computed column or watermark).
sed -n '/^CREATE TABLE flights (/,/^);/p' examples/flights.sql |
  sed -e '/^  -- event time/,/^  WATERMARK/d' -e 's/^  WEATHER_DELAY       INT,$/  WEATHER_DELAY       INT/' \
    >"$E2E_TMP/job.sql"
grep -q "sched_dep\|WATERMARK" "$E2E_TMP/job.sql" && fail "could not strip the computed column from the flights DDL"
cat >>"$E2E_TMP/job.sql" <<'SQL'

CREATE TABLE per_airline (airline STRING, flights BIGINT, miles INT)
WITH ('connector' = 'print', 'print-identifier' = 'per_airline');
CREATE TABLE long_haul (origin STRING, destination STRING, flight INT, distance INT)
WITH ('connector' = 'print', 'print-identifier' = 'long_haul');

EXECUTE STATEMENT SET
BEGIN
INSERT INTO per_airline SELECT AIRLINE, COUNT(*), SUM(DISTANCE) FROM flights GROUP BY AIRLINE;
INSERT INTO long_haul
SELECT ORIGIN_AIRPORT, DESTINATION_AIRPORT, FLIGHT_NUMBER, DISTANCE FROM flights WHERE DISTANCE >= 2500;
END;
SQL

# --- oracles ------------------------------------------------------------------------------------------------
DB="$E2E_TMP/flights.db"
load_flights_sqlite "$DB"
# Every DISTANCE is a clean integer, so the engine reads no NULL where SQLite keeps text.
check=$(sqlite3 "$DB" "SELECT COUNT(*), SUM(typeof(DISTANCE) <> 'integer') FROM flights;")
[ "$check" = "55105|0" ] || fail "SQLite import check: got '$check', want '55105|0'"
sqlite3 "$DB" "SELECT '+I[' || AIRLINE || ', ' || COUNT(*) || ', ' || SUM(DISTANCE) || ']' FROM flights
               GROUP BY AIRLINE;" | sort >"$E2E_TMP/per_airline.expected"
# Columns 8, 9, 6 and 18 of the CSV: origin, destination, flight number, distance.
awk -F, '$18 >= 2500 { print "+I[" $8 ", " $9 ", " $6 ", " $18 "]" }' "$FLIGHTS_CSV" | sort >"$E2E_TMP/long_haul.expected"
[ "$(wc -l <"$E2E_TMP/long_haul.expected")" -gt 100 ] || fail "the long_haul oracle selects too few rows to test"
rows=$(wc -l <"$FLIGHTS_CSV")

# run_mode NAME JOB SOURCES ROWS_READ [ARGS...]: plan and run the job, check plan, summary and both sinks.
run_mode() {
  local name=$1 job=$2 want_sources=$3 want_read=$4
  shift 4
  run_sluice "$E2E_TMP/plan.json" "$E2E_TMP/err" explain --format=json -p "$PARALLELISM" "$@" "$job"
  expect_success "$E2E_TMP/plan.json" "$E2E_TMP/err"
  [ "$(jq '.jobs | length' "$E2E_TMP/plan.json")" = 1 ] || fail "$name: the statement set is not one job"
  local sources
  sources=$(jq '[.jobs[0].nodes[] | select(.operator | startswith("Source: flights"))] | length' "$E2E_TMP/plan.json")
  [ "$sources" = "$want_sources" ] || fail "$name: $sources source vertices, want $want_sources"
  if [ "$want_sources" = 1 ]; then
    # The shared scan reads the union of the columns of both branches, in table order.
    jq -r '.jobs[0].nodes[] | select(.operator | startswith("Source: flights")) | .description' "$E2E_TMP/plan.json" |
      grep -qF 'fields=[AIRLINE, FLIGHT_NUMBER, ORIGIN_AIRPORT, DESTINATION_AIRPORT, DISTANCE])' ||
      fail "$name: the shared scan does not read the union of the columns: $(cat "$E2E_TMP/plan.json")"
  fi

  run_sluice "$E2E_TMP/out" "$E2E_TMP/err" run -p "$PARALLELISM" "$@" "$job"
  expect_success "$E2E_TMP/out" "$E2E_TMP/err"
  local read
  read=$(sed -n -E "s/^Job '[^']*' finished: ([0-9]+) rows read, .*/\1/p" "$E2E_TMP/err")
  [ "$read" = "$want_read" ] || fail "$name: rows read '$read', want $want_read"
  echo "ok: $name reads $read rows with $sources source vertex(es)"

  sink_lines per_airline "$E2E_TMP/out" | materialize >"$E2E_TMP/per_airline.actual"
  compare_rows "per_airline, $name, -p $PARALLELISM" "$E2E_TMP/per_airline.expected" "$E2E_TMP/per_airline.actual"
  sink_lines long_haul "$E2E_TMP/out" | sort >"$E2E_TMP/long_haul.actual"
  compare_rows "long_haul, $name, -p $PARALLELISM" "$E2E_TMP/long_haul.expected" "$E2E_TMP/long_haul.actual"
}

run_mode reuse "$E2E_TMP/job.sql" 1 "$rows"
run_mode no-source-reuse "$E2E_TMP/job.sql" 2 $((2 * rows)) -D table.optimizer.reuse-source-enabled=false
run_mode no-subplan-reuse "$E2E_TMP/job.sql" 2 $((2 * rows)) -D table.optimizer.reuse-sub-plan-enabled=false

# A source that cannot be read twice: the same job over a named pipe fed once with the file (the filesystem
# source reads a pipe whole, in one subtask). The one shared source drains it and both sinks get every row.
# (Without reuse the second source would wait for a writer that never comes.)
mkfifo "$E2E_TMP/flights.pipe"
sed "s#'path' = '$FLIGHTS_CSV'#'path' = '$E2E_TMP/flights.pipe'#" "$E2E_TMP/job.sql" >"$E2E_TMP/pipe.sql"
grep -q "flights.pipe" "$E2E_TMP/pipe.sql" || fail "could not point the flights table at the pipe"
timeout 300 cat "$FLIGHTS_CSV" >"$E2E_TMP/flights.pipe" &
WRITER=$!
trap 'kill "$WRITER" 2>/dev/null || true; rm -rf "$E2E_TMP"' EXIT
run_mode pipe "$E2E_TMP/pipe.sql" 1 "$rows"
wait "$WRITER" || fail "the writer of the pipe failed (the job did not read it to its end)"
