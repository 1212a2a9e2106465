#!/usr/bin/env bash
# Top-N and deduplication recover from injected failures with the failure-free result.
#   $1 sluice binary, $2 source tree, $3 parallelism, $4 state backend (hashmap | rocksdb).
# Jobs over the bundled flights with checkpoints every 20 ms and fixed-delay restarts, each run clean and then
# with a failure injected (sluice.test.fail-operator / fail-after-records / fail-subtask) into the ranking
# operator at several record counts spread over what its subtask receives:
#  - top_delays (Rank, AppendFastStrategy, with the rank number) and top_origins (Rank over a GROUP BY,
#    RetractStrategy) write an upsert-kafka topic keyed by (airline, rn) on a mock Kafka cluster: an upsert
#    per rank change, a tombstone per -D. The sink is at-least-once, so after a restart it writes the changes
#    since the checkpoint again; the topic compacted (last value per key, tombstones remove it) must equal
#    SQLite's ROW_NUMBER result;
#  - destinations (Deduplicate, keep first on processing time: insert-only) writes a filesystem CSV sink,
#    exactly-once: every destination airport once, none twice.
# Each failing run must say "1 restarts".
source "$(dirname "$0")/lib.sh"
P=${3:?usage: $0 SLUICE SOURCE_DIR PARALLELISM hashmap|rocksdb}
BACKEND=${4:?usage: $0 SLUICE SOURCE_DIR PARALLELISM hashmap|rocksdb}
for tool in sqlite3 kcat jq; do command -v $tool >/dev/null || fail "$tool is not installed (scripts/install-deps.sh)"; done

# --- the mock Kafka cluster ----------------------------------------------------------------------------------
MOCK_PID=""
stop_mock() { if [ -n "$MOCK_PID" ]; then kill -INT "$MOCK_PID" 2>/dev/null || true; wait "$MOCK_PID" 2>/dev/null || true; MOCK_PID=""; fi; }
trap 'stop_mock; rm -rf "$E2E_TMP"' EXIT
exec 3< <(exec "$SLUICE" kafka-mock 2>"$E2E_TMP/mock.err")
MOCK_PID=$!
BOOTSTRAP=""
while IFS= read -r line <&3; do
  case $line in bootstrap.servers=*) BOOTSTRAP=${line#bootstrap.servers=} ;; ready) break ;; esac
done
[ -n "$BOOTSTRAP" ] || { cat "$E2E_TMP/mock.err" >&2; fail "the mock Kafka cluster did not start"; }

# --- oracle ----------------------------------------------------------------------------------------------------
DB=$E2E_TMP/flights.db
load_flights_sqlite "$DB"
sqlite3 "$DB" "UPDATE flights SET DEPARTURE_DELAY = NULL WHERE DEPARTURE_DELAY = '';"
[ "$(sqlite3 "$DB" "SELECT COUNT(*), SUM(typeof(DEPARTURE_DELAY) NOT IN ('integer', 'null')) FROM flights;")" = "55105|0" ] ||
  fail "SQLite import check failed"
# As JSON objects with sorted keys, the form jq -S -c gives the topic's values.
sqlite3 "$DB" <<'SQL' | jq -S -c . | sort >"$E2E_TMP/top_delays.expected"
SELECT json_object('airline', AIRLINE, 'day_', DAY, 'delay', DEPARTURE_DELAY, 'flight', FLIGHT_NUMBER, 'rn', rn)
FROM (SELECT AIRLINE, DEPARTURE_DELAY, DAY, FLIGHT_NUMBER,
             ROW_NUMBER() OVER (PARTITION BY AIRLINE ORDER BY DEPARTURE_DELAY DESC, DAY, FLIGHT_NUMBER) AS rn
      FROM flights) WHERE rn <= 3;
SQL
sqlite3 "$DB" <<'SQL' | jq -S -c . | sort >"$E2E_TMP/top_origins.expected"
SELECT json_object('airline', AIRLINE, 'flights', n, 'origin', ORIGIN_AIRPORT, 'rn', rn)
FROM (SELECT AIRLINE, ORIGIN_AIRPORT, n, ROW_NUMBER() OVER (PARTITION BY AIRLINE ORDER BY n DESC, ORIGIN_AIRPORT) AS rn
      FROM (SELECT AIRLINE, ORIGIN_AIRPORT, COUNT(*) AS n FROM flights GROUP BY AIRLINE, ORIGIN_AIRPORT)) WHERE rn <= 2;
SQL
sqlite3 "$DB" "SELECT DISTINCT DESTINATION_AIRPORT FROM flights;" | sort >"$E2E_TMP/destinations.expected"

FLIGHTS_DDL=$(sed -n '/^CREATE TABLE flights (/,/^);/p' tests/e2e/flights_main_job.sql)
[ -n "$FLIGHTS_DDL" ] || fail "no flights DDL found in tests/e2e/flights_main_job.sql"

# job_sql NAME TOPIC_OR_DIR: the job of one case.
job_sql() {
  echo "$FLIGHTS_DDL"
  case $1 in
    top_delays) cat <<SQL
CREATE TABLE out_t (airline STRING, delay INT, day_ INT, flight INT, rn BIGINT, PRIMARY KEY (airline, rn) NOT ENFORCED)
  WITH ('connector' = 'upsert-kafka', 'topic' = '$2', 'properties.bootstrap.servers' = '$BOOTSTRAP',
        'key.format' = 'json', 'value.format' = 'json');
INSERT INTO out_t SELECT AIRLINE, DEPARTURE_DELAY, \`DAY\`, FLIGHT_NUMBER, rn FROM (
  SELECT AIRLINE, DEPARTURE_DELAY, \`DAY\`, FLIGHT_NUMBER,
         ROW_NUMBER() OVER (PARTITION BY AIRLINE ORDER BY DEPARTURE_DELAY DESC, \`DAY\`, FLIGHT_NUMBER) AS rn
  FROM flights) WHERE rn <= 3;
SQL
    ;;
    top_origins) cat <<SQL
CREATE TABLE out_t (airline STRING, origin STRING, flights BIGINT, rn BIGINT, PRIMARY KEY (airline, rn) NOT ENFORCED)
  WITH ('connector' = 'upsert-kafka', 'topic' = '$2', 'properties.bootstrap.servers' = '$BOOTSTRAP',
        'key.format' = 'json', 'value.format' = 'json');
INSERT INTO out_t SELECT AIRLINE, ORIGIN_AIRPORT, n, rn FROM (
  SELECT AIRLINE, ORIGIN_AIRPORT, n, ROW_NUMBER() OVER (PARTITION BY AIRLINE ORDER BY n DESC, ORIGIN_AIRPORT) AS rn
  FROM (SELECT AIRLINE, ORIGIN_AIRPORT, COUNT(*) AS n FROM flights GROUP BY AIRLINE, ORIGIN_AIRPORT)) WHERE rn <= 2;
SQL
    ;;
    destinations) cat <<SQL
CREATE TABLE out_t (destination STRING) WITH ('connector' = 'filesystem', 'path' = '$2', 'format' = 'csv');
INSERT INTO out_t SELECT DESTINATION_AIRPORT FROM (
  SELECT DESTINATION_AIRPORT, pt, ROW_NUMBER() OVER (PARTITION BY DESTINATION_AIRPORT ORDER BY pt) AS rn
  FROM (SELECT DESTINATION_AIRPORT, PROCTIME() AS pt FROM flights)) WHERE rn = 1;
SQL
    ;;
  esac
}

# result NAME TOPIC_OR_DIR: the job's final result, sorted.
result() {
  if [ "$1" = destinations ]; then
    find "$2" -maxdepth 1 -type f -name 'part-*.csv' -exec cat {} + | sort
  else
    kcat -b "$BOOTSTRAP" -C -t "$2" -o beginning -e -q -f '%k\t%S\t%s\n' |
      awk -F'\t' '{ if ($2 == -1) delete last[$1]; else last[$1] = $3 } END { for (k in last) print last[k] }' |
      jq -S -c . | sort
  fi
}

CKPT=(-D execution.checkpointing.interval=20ms -D restart-strategy.type=fixed-delay
      -D restart-strategy.fixed-delay.attempts=3 -D restart-strategy.fixed-delay.delay=0
      -D state.backend.type="$BACKEND")
RUN=0
for name in top_delays top_origins destinations; do
  op=Rank
  [ "$name" = destinations ] && op=Deduplicate
  RUN=$((RUN + 1))
  target=$E2E_TMP/out.$RUN
  [ "$name" = destinations ] || target=$name.$RUN
  job_sql "$name" "$target" >"$E2E_TMP/job.sql"
  run_sluice "$E2E_TMP/stdout" "$E2E_TMP/err" run -p "$P" "${CKPT[@]}" --metrics="$E2E_TMP/clean.json" "$E2E_TMP/job.sql"
  expect_success "$E2E_TMP/stdout" "$E2E_TMP/err"
  result "$name" "$target" >"$E2E_TMP/actual"
  compare_rows "$name at -p $P on $BACKEND without a failure" "$E2E_TMP/$name.expected" "$E2E_TMP/actual"
  mapfile -t received < <(jq -r --arg op "$op" \
    '.jobs[0].vertices[] | select(.name | test($op)) | .subtasks[].metrics.numRecordsIn' "$E2E_TMP/clean.json")
  [ "${#received[@]}" = "$P" ] || fail "$name: expected $P $op subtasks in the metrics, got ${#received[@]}"
  # Four failures: subtask i mod P after 15%, 40%, 65%, 90% of what it receives.
  for i in 0 1 2 3; do
    subtask=$((i % P))
    n=$(( received[subtask] * (15 + 25 * i) / 100 ))
    [ "$n" -ge 1 ] || n=1
    RUN=$((RUN + 1))
    target=$E2E_TMP/out.$RUN
    [ "$name" = destinations ] || target=$name.$RUN
    job_sql "$name" "$target" >"$E2E_TMP/job.sql"
    run_sluice "$E2E_TMP/stdout" "$E2E_TMP/err" run -p "$P" "${CKPT[@]}" -D sluice.test.fail-operator="$op" \
      -D sluice.test.fail-after-records="$n" -D sluice.test.fail-subtask="$subtask" "$E2E_TMP/job.sql"
    expect_success "$E2E_TMP/stdout" "$E2E_TMP/err"
    grep -q -E "^Job '.*' finished: .*, 1 restarts$" "$E2E_TMP/err" || { tail -n 5 "$E2E_TMP/err" >&2; fail "$name: no restart"; }
    result "$name" "$target" >"$E2E_TMP/actual"
    compare_rows "$name at -p $P on $BACKEND, failure in subtask $subtask after $n records" \
      "$E2E_TMP/$name.expected" "$E2E_TMP/actual"
  done
done
