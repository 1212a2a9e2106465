#!/usr/bin/env bash
# The job summary `sluice run` prints on stderr ("Job 'NAME' finished: R rows read, W rows written in S s")
# counts each row once: examples/flights.sql runs two jobs (one per INSERT), each reading the whole file.
#   $1 sluice binary, $2 source tree, $3 parallelism (default 2).
source "$(dirname "$0")/lib.sh"
PARALLELISM=${3:-2}

run_sluice "$E2E_TMP/out" "$E2E_TMP/err" run -p "$PARALLELISM" examples/flights.sql
expect_success "$E2E_TMP/out" "$E2E_TMP/err"

# Rows read: every line of the file (55,105, examples/data/README.md).
rows=$(wc -l <"$FLIGHTS_CSV")
# Hourly rows written: one per distinct (day, hour of the scheduled departure, airline), counted with awk.
groups=$(awk -F, '{ print $3 "," substr($10, 1, 2) "," $5 }' "$FLIGHTS_CSV" | sort -u | wc -l)
# per_destination rows written: whatever its print sink printed (the changelog's length is the planner's
# choice; the oracle test checks its content).
changelog=$(sink_lines per_destination "$E2E_TMP/out" | wc -l)

summary() {  # summary TABLE -> "R W" from the summary line of the job inserting into TABLE
  sed -n -E "s/^Job '[^']*$1' finished: ([0-9]+) rows read, ([0-9]+) rows written in .*/\1 \2/p" "$E2E_TMP/err"
}
cat "$E2E_TMP/err"
got=$(summary hourly_airline_stats)
[ "$got" = "$rows $groups" ] || fail "hourly job summary: got '$got' (rows read, rows written), want '$rows $groups'"
got=$(summary flights_per_destination)
[ "$got" = "$rows $changelog" ] ||
  fail "per_destination job summary: got '$got' (rows read, rows written), want '$rows $changelog'"
echo "ok: job summaries"
