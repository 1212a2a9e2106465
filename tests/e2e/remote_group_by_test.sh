#!/usr/bin/env bash
# GROUP BY over two TaskManagers: a keyed aggregation with ~4,100 keys (every aircraft's tail number) at
# parallelism 4, once in one TaskManager (local channels) and once in two (subtasks 2 and 4 in the other
# TaskManager: the hash exchange crosses loopback TCP). Both materialized changelogs must equal SQLite's
# GROUP BY over the same CSV.
#   $1 sluice binary, $2 source tree.
source "$(dirname "$0")/lib.sh"

command -v sqlite3 >/dev/null || fail "sqlite3 is not installed (scripts/install-deps.sh installs it)"

# The flights table of the main job, then the aggregation (rows without a tail number are left out: the
# engine and SQLite need not agree on how an empty CSV field of a STRING column reads).
SQL="$E2E_TMP/group_by.sql"
sed -n '/^CREATE TABLE flights/,/^);/p' tests/e2e/flights_main_job.sql > "$SQL"
grep -q "^CREATE TABLE flights" "$SQL" || fail "no CREATE TABLE flights in tests/e2e/flights_main_job.sql"
echo "SELECT TAIL_NUMBER, COUNT(*) AS n, SUM(DISTANCE) AS dist FROM flights WHERE TAIL_NUMBER <> '' GROUP BY TAIL_NUMBER;" >> "$SQL"

# --- SQLite oracle ------------------------------------------------------------------------------------------
DB="$E2E_TMP/flights.db"
load_flights_sqlite "$DB"
# DISTANCE is never empty (awk -F, '$18 == ""' finds no line), so SUM needs no NULL handling.
[ "$(sqlite3 "$DB" "SELECT COUNT(*), SUM(typeof(DISTANCE) <> 'integer') FROM flights;")" = "55105|0" ] ||
  fail "SQLite import check failed"
sqlite3 "$DB" "SELECT '+I[' || TAIL_NUMBER || ', ' || COUNT(*) || ', ' || SUM(DISTANCE) || ']'
               FROM flights WHERE TAIL_NUMBER <> '' GROUP BY TAIL_NUMBER;" | sort > "$E2E_TMP/expected"
keys=$(wc -l < "$E2E_TMP/expected")
[ "$keys" -gt 4000 ] || fail "the oracle has only $keys keys"

# --- the engine, one and two TaskManagers -------------------------------------------------------------------
for tms in 1 2; do
  run_sluice "$E2E_TMP/out$tms" "$E2E_TMP/err$tms" run -p 4 -D "local.number-taskmanager=$tms" "$SQL"
  expect_success "$E2E_TMP/out$tms" "$E2E_TMP/err$tms"
  materialize < "$E2E_TMP/out$tms" > "$E2E_TMP/actual$tms"
  compare_rows "GROUP BY tail number, $tms TaskManager(s)" "$E2E_TMP/expected" "$E2E_TMP/actual$tms"
done
