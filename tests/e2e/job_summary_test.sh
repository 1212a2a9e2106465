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

# Late rows: a 5-minute TUMBLE over rows read one at a time (sluice.batch.size 1, one source subtask) with a
# 1-minute watermark delay. Rows 4 (00:04:30, after the watermark reached 00:06) and 8 (00:08:00, after it
# reached 00:11) fall only in windows that have fired: 2 rows dropped, worked out row by row in
# tests/sql/windows/tumble_late.test. The summary line and --metrics (numLateRecordsDropped) count them.
printf '%s\n' alice,2015-01-01T00:01:00 bob,2015-01-01T00:03:00 alice,2015-01-01T00:07:00 \
  bob,2015-01-01T00:04:30 alice,2015-01-01T00:06:30 carol,2015-01-01T00:09:00 bob,2015-01-01T00:12:00 \
  carol,2015-01-01T00:08:00 alice,2015-01-01T00:14:59 | tr T ' ' >"$E2E_TMP/clicks.csv"
cat >"$E2E_TMP/late.sql" <<SQL
SET 'sluice.batch.size' = '1';
CREATE TABLE clicks (user_name STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' MINUTE)
  WITH ('connector' = 'filesystem', 'path' = '$E2E_TMP/clicks.csv', 'format' = 'csv', 'scan.parallelism' = '1');
CREATE TABLE counts (ws TIMESTAMP(3), u STRING, c BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO counts SELECT window_start, user_name, COUNT(*)
  FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '5' MINUTE)) GROUP BY window_start, window_end, user_name;
SQL
run_sluice "$E2E_TMP/late.out" "$E2E_TMP/late.err" run -p "$PARALLELISM" --metrics="$E2E_TMP/late.json" "$E2E_TMP/late.sql"
expect_success "$E2E_TMP/late.out" "$E2E_TMP/late.err"
grep -q -E "^Job '[^']*counts' finished: 9 rows read, 6 rows written in [0-9.]+ s, 2 late rows dropped" "$E2E_TMP/late.err" ||
  { cat "$E2E_TMP/late.err" >&2; fail "summary line without '9 rows read, 6 rows written ..., 2 late rows dropped'"; }
if command -v jq >/dev/null; then
  got=$(jq '[.jobs[0].vertices[].metrics.numLateRecordsDropped] | add' "$E2E_TMP/late.json")
  [ "$got" = 2 ] || fail "numLateRecordsDropped in --metrics: got $got, want 2"
fi
echo "ok: late rows dropped in the summary and --metrics"
