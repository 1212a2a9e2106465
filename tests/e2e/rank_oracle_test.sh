#!/usr/bin/env bash
# Top-N and deduplication oracle: final results of bounded ranking queries over the bundled flights, against
# SQLite's ROW_NUMBER() over the same CSV.
#   $1 sluice binary, $2 source tree, $3 parallelism, further arguments go to `sluice run`.
# One statement set writes four print sinks; each sink's changelog, materialized (retract semantics), must
# equal SQLite's rows:
#  - top_delays:  the 3 longest departure delays per airline with their rank (AppendFastStrategy, rank number);
#                 ties broken by DAY, FLIGHT_NUMBER and only those columns printed, so the result does not depend
#                 on the order rows reach the Rank at -p > 1;
#  - top_origins: the 2 busiest origin airports per airline over a GROUP BY (RetractStrategy), ranked by count
#                 then airport, without the rank number;
#  - longest:     ORDER BY DEPARTURE_DELAY DESC, DAY, AIRLINE, FLIGHT_NUMBER LIMIT 10 (a global SortLimit);
#  - first_dep:   the first scheduled departure per airline (Deduplicate, keep first on row time).
source "$(dirname "$0")/lib.sh"
P=${3:?usage: $0 SLUICE SOURCE_DIR PARALLELISM [ARGS...]}
EXTRA=("${@:4}")
command -v sqlite3 >/dev/null || fail "sqlite3 is not installed (scripts/install-deps.sh installs it)"

SQL_FILE=$E2E_TMP/rank.sql
{
  sed -n '/^CREATE TABLE flights (/,/^);/p' tests/e2e/flights_main_job.sql
  cat <<'SQL'
CREATE TABLE top_delays (airline STRING, delay INT, day_ INT, flight INT, rn BIGINT)
  WITH ('connector' = 'print', 'print-identifier' = 'top_delays');
CREATE TABLE top_origins (airline STRING, origin STRING, flights BIGINT)
  WITH ('connector' = 'print', 'print-identifier' = 'top_origins');
CREATE TABLE longest (delay INT, day_ INT, airline STRING, flight INT)
  WITH ('connector' = 'print', 'print-identifier' = 'longest');
CREATE TABLE first_dep (airline STRING, sched TIMESTAMP(3))
  WITH ('connector' = 'print', 'print-identifier' = 'first_dep');
EXECUTE STATEMENT SET BEGIN
INSERT INTO top_delays
SELECT AIRLINE, DEPARTURE_DELAY, `DAY`, FLIGHT_NUMBER, rn FROM (
  SELECT AIRLINE, DEPARTURE_DELAY, `DAY`, FLIGHT_NUMBER,
         ROW_NUMBER() OVER (PARTITION BY AIRLINE ORDER BY DEPARTURE_DELAY DESC, `DAY`, FLIGHT_NUMBER) AS rn
  FROM flights)
WHERE rn <= 3;
INSERT INTO top_origins
SELECT AIRLINE, ORIGIN_AIRPORT, n FROM (
  SELECT AIRLINE, ORIGIN_AIRPORT, n,
         ROW_NUMBER() OVER (PARTITION BY AIRLINE ORDER BY n DESC, ORIGIN_AIRPORT) AS rn
  FROM (SELECT AIRLINE, ORIGIN_AIRPORT, COUNT(*) AS n FROM flights GROUP BY AIRLINE, ORIGIN_AIRPORT))
WHERE rn <= 2;
INSERT INTO longest
SELECT DEPARTURE_DELAY, `DAY`, AIRLINE, FLIGHT_NUMBER FROM flights
ORDER BY DEPARTURE_DELAY DESC, `DAY`, AIRLINE, FLIGHT_NUMBER LIMIT 10;
INSERT INTO first_dep
SELECT AIRLINE, sched_dep FROM (
  SELECT AIRLINE, sched_dep, ROW_NUMBER() OVER (PARTITION BY AIRLINE ORDER BY sched_dep) AS rn FROM flights)
WHERE rn = 1;
END;
SQL
} >"$SQL_FILE"
grep -q '^CREATE TABLE flights' "$SQL_FILE" || fail "no flights DDL found in tests/e2e/flights_main_job.sql"

DB=$E2E_TMP/flights.db
load_flights_sqlite "$DB"
sqlite3 "$DB" <<'SQL'
UPDATE flights SET DEPARTURE_DELAY = NULL WHERE DEPARTURE_DELAY = '';
UPDATE flights SET DAY = NULL WHERE DAY = '';
SQL
check=$(sqlite3 "$DB" "SELECT COUNT(*), SUM(typeof(DEPARTURE_DELAY) NOT IN ('integer', 'null')),
  SUM(typeof(DAY) <> 'integer'), SUM(typeof(FLIGHT_NUMBER) <> 'integer'), SUM(SCHEDULED_DEPARTURE NOT GLOB '[0-2][0-9][0-5][0-9]')
  FROM flights;")
[ "$check" = "55105|0|0|0|0" ] || fail "SQLite import check: got '$check', want '55105|0|0|0|0'"

# SQLite sorts NULL first ascending and last descending, as Flink's default NullCollation.LOW.
sqlite3 "$DB" >"$E2E_TMP/top_delays.expected" <<'SQL'
SELECT '+I[' || AIRLINE || ', ' || coalesce(DEPARTURE_DELAY, 'null') || ', ' || DAY || ', ' || FLIGHT_NUMBER || ', ' || rn || ']'
FROM (SELECT AIRLINE, DEPARTURE_DELAY, DAY, FLIGHT_NUMBER,
             ROW_NUMBER() OVER (PARTITION BY AIRLINE ORDER BY DEPARTURE_DELAY DESC, DAY, FLIGHT_NUMBER) AS rn
      FROM flights)
WHERE rn <= 3;
SQL
sqlite3 "$DB" >"$E2E_TMP/top_origins.expected" <<'SQL'
SELECT '+I[' || AIRLINE || ', ' || ORIGIN_AIRPORT || ', ' || n || ']'
FROM (SELECT AIRLINE, ORIGIN_AIRPORT, n,
             ROW_NUMBER() OVER (PARTITION BY AIRLINE ORDER BY n DESC, ORIGIN_AIRPORT) AS rn
      FROM (SELECT AIRLINE, ORIGIN_AIRPORT, COUNT(*) AS n FROM flights GROUP BY AIRLINE, ORIGIN_AIRPORT))
WHERE rn <= 2;
SQL
sqlite3 "$DB" >"$E2E_TMP/longest.expected" <<'SQL'
SELECT '+I[' || coalesce(DEPARTURE_DELAY, 'null') || ', ' || DAY || ', ' || AIRLINE || ', ' || FLIGHT_NUMBER || ']'
FROM flights ORDER BY DEPARTURE_DELAY DESC, DAY, AIRLINE, FLIGHT_NUMBER LIMIT 10;
SQL
# The print format of a TIMESTAMP(3) whose seconds are 0: Java's LocalDateTime.toString, 2015-01-01T00:05.
sqlite3 "$DB" >"$E2E_TMP/first_dep.expected" <<'SQL'
SELECT '+I[' || AIRLINE || ', ' || printf('%04d-%02d-%02dT%s:%s', YEAR, MONTH, DAY, substr(t, 1, 2), substr(t, 3, 2)) || ']'
FROM (SELECT AIRLINE, YEAR, MONTH, DAY, SCHEDULED_DEPARTURE AS t,
             ROW_NUMBER() OVER (PARTITION BY AIRLINE ORDER BY YEAR, MONTH, DAY, SCHEDULED_DEPARTURE) AS rn
      FROM flights)
WHERE rn = 1;
SQL
for s in top_delays top_origins longest first_dep; do sort -o "$E2E_TMP/$s.expected" "$E2E_TMP/$s.expected"; done
[ "$(wc -l <"$E2E_TMP/longest.expected")" = 10 ] || fail "SQLite gave no 10 longest delays"

run_sluice "$E2E_TMP/out" "$E2E_TMP/err" run -p "$P" "${EXTRA[@]}" "$SQL_FILE"
expect_success "$E2E_TMP/out" "$E2E_TMP/err"
for s in top_delays top_origins longest first_dep; do
  sink_lines "$s" "$E2E_TMP/out" | materialize >"$E2E_TMP/$s.actual" || fail "$s: the changelog does not materialize"
  compare_rows "$s at -p $P" "$E2E_TMP/$s.expected" "$E2E_TMP/$s.actual"
done
