#!/usr/bin/env bash
# Regular joins over the bundled flights (examples/data), checked against SQLite over the same CSV.
#   $1 sluice binary, $2 source tree, $3 case:
#   oracle P [ARGS...]    four joins to print sinks at parallelism P, each changelog materialized (retract
#                         semantics) and compared with SQLite's result:
#                          - dest: ANC flights (insert-only) JOIN the per-origin count of AS flights (a GROUP BY:
#                            -U/+U retract the joined rows as the count grows);
#                          - left: per-origin HA counts LEFT JOIN per-destination AS counts with a residual
#                            condition (padding emitted and retracted as the counts change);
#                          - full: per-origin HA counts FULL JOIN per-destination VX counts;
#                          - pairs: `FROM flights a, flights b WHERE` equalities (a self join: one source, two
#                            HASH exchanges) with a residual a.FLIGHT_NUMBER < b.FLIGHT_NUMBER.
#   failover P [ARGS...]  the pairs join into a filesystem CSV sink with checkpoints every 20 ms and fixed-delay
#                         restarts; a failure injected into the join at 8 record counts spread over what its
#                         subtasks receive: the committed rows equal SQLite's, each once, with "1 restarts".
#   interval-failover P [ARGS...]  the same with an interval self join (the next flight of an HA aircraft 30
#                         minutes to 6 hours later) under failures injected into the IntervalJoin.
#   ARGS go to `sluice run` (e.g. -D local.number-taskmanager=2, -D state.backend.type=rocksdb).
source "$(dirname "$0")/lib.sh"
CASE=${3:?usage: $0 SLUICE SOURCE_DIR oracle|failover P [ARGS...]}
P=${4:?a parallelism}
EXTRA=("${@:5}")
command -v sqlite3 >/dev/null || fail "sqlite3 is not installed (scripts/install-deps.sh installs it)"

DB=$E2E_TMP/flights.db
load_flights_sqlite "$DB"
check=$(sqlite3 "$DB" "SELECT COUNT(*), SUM(typeof(FLIGHT_NUMBER) <> 'integer'), SUM(typeof(DAY) <> 'integer'),
  SUM(ORIGIN_AIRPORT = '' OR DESTINATION_AIRPORT = '' OR AIRLINE = '') FROM flights;")
[ "$check" = "55105|0|0|0" ] || fail "SQLite import check: got '$check', want '55105|0|0|0'"

FLIGHTS_DDL=$(sed -n '/^CREATE TABLE flights (/,/^);/p' tests/e2e/flights_main_job.sql)
[ -n "$FLIGHTS_DDL" ] || fail "no flights DDL found in tests/e2e/flights_main_job.sql"

# The self join of HA flights of one tail number on one day, an empty tail number excluded (SQLite reads it as
# '', the engine's csv as '' too, but the check keeps the oracle independent of that).
PAIRS_SELECT="SELECT a.FLIGHT_NUMBER, b.FLIGHT_NUMBER, a.TAIL_NUMBER, a.\`DAY\`
FROM flights a, flights b
WHERE a.TAIL_NUMBER = b.TAIL_NUMBER AND a.\`DAY\` = b.\`DAY\` AND a.AIRLINE = 'HA' AND b.AIRLINE = 'HA'
  AND a.TAIL_NUMBER <> '' AND a.FLIGHT_NUMBER < b.FLIGHT_NUMBER"

oracle_case() {
  cat >"$E2E_TMP/job.sql" <<SQL
$FLIGHTS_DDL
CREATE TABLE dest (airline STRING, flight INT, destination STRING, departures BIGINT)
  WITH ('connector' = 'print', 'print-identifier' = 'dest');
CREATE TABLE lft (ap STRING, ha BIGINT, ap2 STRING, als BIGINT)
  WITH ('connector' = 'print', 'print-identifier' = 'left');
CREATE TABLE fll (ap STRING, ha BIGINT, ap2 STRING, vx BIGINT)
  WITH ('connector' = 'print', 'print-identifier' = 'full');
CREATE TABLE pairs (f1 INT, f2 INT, tail STRING, d INT)
  WITH ('connector' = 'print', 'print-identifier' = 'pairs');
INSERT INTO dest
SELECT f.AIRLINE, f.FLIGHT_NUMBER, f.DESTINATION_AIRPORT, s.n
FROM flights f JOIN (SELECT ORIGIN_AIRPORT, COUNT(*) AS n FROM flights WHERE AIRLINE = 'AS' GROUP BY ORIGIN_AIRPORT) s
  ON f.DESTINATION_AIRPORT = s.ORIGIN_AIRPORT
WHERE f.ORIGIN_AIRPORT = 'ANC';
INSERT INTO lft
SELECT o.ap, o.n, d.ap, d.n
FROM (SELECT ORIGIN_AIRPORT AS ap, COUNT(*) AS n FROM flights WHERE AIRLINE = 'HA' GROUP BY ORIGIN_AIRPORT) o
LEFT JOIN (SELECT DESTINATION_AIRPORT AS ap, COUNT(*) AS n FROM flights WHERE AIRLINE = 'AS' GROUP BY DESTINATION_AIRPORT) d
  ON o.ap = d.ap AND o.n < d.n * 10;
INSERT INTO fll
SELECT o.ap, o.n, d.ap, d.n
FROM (SELECT ORIGIN_AIRPORT AS ap, COUNT(*) AS n FROM flights WHERE AIRLINE = 'HA' GROUP BY ORIGIN_AIRPORT) o
FULL OUTER JOIN (SELECT DESTINATION_AIRPORT AS ap, COUNT(*) AS n FROM flights WHERE AIRLINE = 'VX' GROUP BY DESTINATION_AIRPORT) d
  ON o.ap = d.ap;
INSERT INTO pairs
$PAIRS_SELECT;
SQL
  # SQLite 3.39+ has RIGHT and FULL OUTER JOIN; rows in the print sink's form, NULL as null.
  sqlite3 "$DB" >"$E2E_TMP/dest.expected" <<'SQL'
SELECT '+I[' || f.AIRLINE || ', ' || f.FLIGHT_NUMBER || ', ' || f.DESTINATION_AIRPORT || ', ' || s.n || ']'
FROM flights f JOIN (SELECT ORIGIN_AIRPORT, COUNT(*) AS n FROM flights WHERE AIRLINE = 'AS' GROUP BY ORIGIN_AIRPORT) s
  ON f.DESTINATION_AIRPORT = s.ORIGIN_AIRPORT
WHERE f.ORIGIN_AIRPORT = 'ANC';
SQL
  sqlite3 "$DB" >"$E2E_TMP/left.expected" <<'SQL'
SELECT '+I[' || o.ap || ', ' || o.n || ', ' || coalesce(d.ap, 'null') || ', ' || coalesce(d.n, 'null') || ']'
FROM (SELECT ORIGIN_AIRPORT AS ap, COUNT(*) AS n FROM flights WHERE AIRLINE = 'HA' GROUP BY ORIGIN_AIRPORT) o
LEFT JOIN (SELECT DESTINATION_AIRPORT AS ap, COUNT(*) AS n FROM flights WHERE AIRLINE = 'AS' GROUP BY DESTINATION_AIRPORT) d
  ON o.ap = d.ap AND o.n < d.n * 10;
SQL
  sqlite3 "$DB" >"$E2E_TMP/full.expected" <<'SQL'
SELECT '+I[' || coalesce(o.ap, 'null') || ', ' || coalesce(o.n, 'null') || ', ' || coalesce(d.ap, 'null') || ', '
       || coalesce(d.n, 'null') || ']'
FROM (SELECT ORIGIN_AIRPORT AS ap, COUNT(*) AS n FROM flights WHERE AIRLINE = 'HA' GROUP BY ORIGIN_AIRPORT) o
FULL OUTER JOIN (SELECT DESTINATION_AIRPORT AS ap, COUNT(*) AS n FROM flights WHERE AIRLINE = 'VX' GROUP BY DESTINATION_AIRPORT) d
  ON o.ap = d.ap;
SQL
  sqlite3 "$DB" >"$E2E_TMP/pairs.expected" <<SQL
SELECT '+I[' || a.FLIGHT_NUMBER || ', ' || b.FLIGHT_NUMBER || ', ' || a.TAIL_NUMBER || ', ' || a.DAY || ']'
FROM flights a, flights b
WHERE a.TAIL_NUMBER = b.TAIL_NUMBER AND a.DAY = b.DAY AND a.AIRLINE = 'HA' AND b.AIRLINE = 'HA'
  AND a.TAIL_NUMBER <> '' AND a.FLIGHT_NUMBER < b.FLIGHT_NUMBER;
SQL
  local name
  for name in dest left full pairs; do sort -o "$E2E_TMP/$name.expected" "$E2E_TMP/$name.expected"; done
  # The oracle must exercise what it is for: padded rows on both sides of the full join, some on the left.
  grep -q 'null, null\]$' "$E2E_TMP/left.expected" || fail "oracle: no padded row in the left join"
  grep -q '^+I\[null, null,' "$E2E_TMP/full.expected" || fail "oracle: no left-padded row in the full join"
  grep -q 'null, null\]$' "$E2E_TMP/full.expected" || fail "oracle: no right-padded row in the full join"

  run_sluice "$E2E_TMP/out" "$E2E_TMP/err" run -p "$P" "${EXTRA[@]}" "$E2E_TMP/job.sql"
  expect_success "$E2E_TMP/out" "$E2E_TMP/err"
  for name in dest left full pairs; do
    sink_lines "$name" "$E2E_TMP/out" >"$E2E_TMP/$name.changelog"
    materialize <"$E2E_TMP/$name.changelog" >"$E2E_TMP/$name.actual"
    compare_rows "$name at -p $P" "$E2E_TMP/$name.expected" "$E2E_TMP/$name.actual"
  done
  # The inner join of insert-only inputs is insert-only; the updating ones retracted something.
  [ "$(grep -c -v '^+I\[' "$E2E_TMP/pairs.changelog")" = 0 ] || fail "pairs printed rows that are not +I"
  [ "$(grep -c '^-U\[' "$E2E_TMP/dest.changelog")" -gt 0 ] || fail "dest never retracted a joined row"
  [ "$(grep -c '^-D\[.*, null, null\]$' "$E2E_TMP/left.changelog")" -gt 0 ] || fail "left never retracted a padded row"
}

# failover_case SELECT ORACLE_SQL: the SELECT (four columns f1 INT, f2 INT, tail STRING, d INT) into a CSV sink
# under injected failures, compared with SQLite's rows of ORACLE_SQL (each as 'f1,f2,tail,d').
failover_case() {
  command -v jq >/dev/null || fail "jq is not installed"
  local template=$E2E_TMP/failover.sql.in
  cat >"$template" <<SQL
$FLIGHTS_DDL
CREATE TABLE pairs_out (f1 INT, f2 INT, tail STRING, d INT)
  WITH ('connector' = 'filesystem', 'path' = '@OUT@', 'format' = 'csv');
INSERT INTO pairs_out
$1;
SQL
  local expected=$E2E_TMP/pairs.expected
  sqlite3 "$DB" >"$expected" <<<"$2"
  [ -s "$expected" ] || fail "the oracle returned no rows"
  sort -o "$expected" "$expected"
  local ckpt=(-D execution.checkpointing.interval=20ms -D restart-strategy.type=fixed-delay
              -D restart-strategy.fixed-delay.attempts=3 -D restart-strategy.fixed-delay.delay=0)
  visible_rows() { find "$1" -maxdepth 1 -type f -name 'part-*.csv' -exec cat {} + | sort; }

  local out=$E2E_TMP/out.clean
  sed "s|@OUT@|$out|" "$template" >"$E2E_TMP/clean.sql"
  run_sluice "$E2E_TMP/stdout" "$E2E_TMP/err.clean" run -p "$P" "${EXTRA[@]}" "${ckpt[@]}" \
    --metrics="$E2E_TMP/clean.json" "$E2E_TMP/clean.sql"
  expect_success "$E2E_TMP/stdout" "$E2E_TMP/err.clean"
  visible_rows "$out" >"$E2E_TMP/actual.clean"
  compare_rows "pairs at -p $P without a failure" "$expected" "$E2E_TMP/actual.clean"
  local counts
  counts=$(jq -r '.jobs[0].vertices[] | select(.name | test("Join")) | .subtasks[].metrics.numRecordsIn' \
    "$E2E_TMP/clean.json")
  local received
  mapfile -t received <<<"$counts"
  [ "${#received[@]}" = "$P" ] || fail "expected $P join subtasks in the metrics, got: $counts"

  # Eight failures: subtask i mod P, after 1/16, 3/16, ..., 15/16 of the records that subtask receives.
  local i subtask n
  for i in $(seq 0 7); do
    subtask=$((i % P))
    n=$(( received[subtask] * (2 * i + 1) / 16 ))
    [ "$n" -ge 1 ] || n=1
    out=$E2E_TMP/out.$i
    sed "s|@OUT@|$out|" "$template" >"$E2E_TMP/run.sql"
    run_sluice "$E2E_TMP/stdout" "$E2E_TMP/err.$i" run -p "$P" "${EXTRA[@]}" "${ckpt[@]}" \
      -D sluice.test.fail-operator=Join -D sluice.test.fail-after-records="$n" \
      -D sluice.test.fail-subtask="$subtask" "$E2E_TMP/run.sql"
    expect_success "$E2E_TMP/stdout" "$E2E_TMP/err.$i"
    local line
    line=$(grep -E "^Job '.*' finished: " "$E2E_TMP/err.$i" | tail -n 1 || true)
    grep -q -E ', 1 restarts$' <<<"$line" || fail "summary '$line' does not say 1 restarts"
    visible_rows "$out" >"$E2E_TMP/actual.$i"
    compare_rows "pairs at -p $P, failure in join subtask $subtask after $n records" "$expected" "$E2E_TMP/actual.$i"
  done
}

# The next flight of the same HA aircraft 30 minutes to 6 hours after one (an interval self join on the
# scheduled departure, a row time; the file is in departure order, so every pair meets whatever the timing).
INTERVAL_SELECT="SELECT a.FLIGHT_NUMBER, b.FLIGHT_NUMBER, a.TAIL_NUMBER, a.\`DAY\`
FROM flights a JOIN flights b ON a.TAIL_NUMBER = b.TAIL_NUMBER
  AND b.sched_dep BETWEEN a.sched_dep + INTERVAL '30' MINUTE AND a.sched_dep + INTERVAL '6' HOUR
WHERE a.AIRLINE = 'HA' AND b.AIRLINE = 'HA' AND a.TAIL_NUMBER <> ''"
MINUTE_OF="DAY * 1440 + CAST(substr(SCHEDULED_DEPARTURE, 1, 2) AS INTEGER) * 60 + CAST(substr(SCHEDULED_DEPARTURE, 3, 2) AS INTEGER)"
INTERVAL_ORACLE="SELECT a.FLIGHT_NUMBER || ',' || b.FLIGHT_NUMBER || ',' || a.TAIL_NUMBER || ',' || a.DAY
FROM (SELECT *, $MINUTE_OF AS m FROM flights) a, (SELECT *, $MINUTE_OF AS m FROM flights) b
WHERE a.TAIL_NUMBER = b.TAIL_NUMBER AND b.m - a.m BETWEEN 30 AND 360 AND a.AIRLINE = 'HA' AND b.AIRLINE = 'HA'
  AND a.TAIL_NUMBER <> '';"
PAIRS_ORACLE="SELECT a.FLIGHT_NUMBER || ',' || b.FLIGHT_NUMBER || ',' || a.TAIL_NUMBER || ',' || a.DAY
FROM flights a, flights b
WHERE a.TAIL_NUMBER = b.TAIL_NUMBER AND a.DAY = b.DAY AND a.AIRLINE = 'HA' AND b.AIRLINE = 'HA'
  AND a.TAIL_NUMBER <> '' AND a.FLIGHT_NUMBER < b.FLIGHT_NUMBER;"

case "$CASE" in
  oracle) oracle_case ;;
  failover) failover_case "$PAIRS_SELECT" "$PAIRS_ORACLE" ;;
  interval-failover) failover_case "$INTERVAL_SELECT" "$INTERVAL_ORACLE" ;;
  *) fail "unknown case '$CASE'" ;;
esac
