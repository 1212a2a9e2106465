#!/usr/bin/env bash
# OVER aggregation recovers from injected failures with the failure-free result, which is SQLite's.
#   $1 sluice binary, $2 source tree, $3 parallelism, $4 state backend (hashmap | rocksdb).
# 30000 generated rows (13 keys, three rows per second: RANGE peers), in row-time order so none is late; four
# jobs, each writing an exactly-once filesystem CSV sink with checkpoints every 20 ms and fixed-delay restarts:
#  - rows: event time, ROWS BETWEEN 5 PRECEDING (RowTimeRowsBoundedPrecedingFunction);
#  - range: event time, RANGE BETWEEN INTERVAL '30' SECOND PRECEDING (RowTimeRangeBoundedPrecedingFunction,
#    whose state is cleaned up as the watermark passes);
#  - unbounded: event time, RANGE UNBOUNDED PRECEDING (RowTimeRangeUnboundedPrecedingFunction);
#  - proctime: processing time, ROWS BETWEEN 3 PRECEDING (ProcTimeRowsBoundedPrecedingFunction; the source reads
#    one split, so each key's rows arrive in file order after a restart too).
# Each is run clean and with a failure injected (sluice.test.fail-operator / fail-after-records /
# fail-subtask) into the OverAggregate at three record counts spread over what its subtask receives; each
# failing run must say "1 restarts" and write exactly SQLite's rows.
source "$(dirname "$0")/lib.sh"
P=${3:?usage: $0 SLUICE SOURCE_DIR PARALLELISM hashmap|rocksdb}
BACKEND=${4:?usage: $0 SLUICE SOURCE_DIR PARALLELISM hashmap|rocksdb}
command -v sqlite3 >/dev/null || fail "sqlite3 is not installed (scripts/install-deps.sh)"
command -v jq >/dev/null || fail "jq is not installed (scripts/install-deps.sh)"

DB=$E2E_TMP/t.db
sqlite3 "$DB" <<'SQL'
CREATE TABLE t AS WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i < 29999)
SELECT i AS seq, 'k' || (i * 7 % 13) AS k, (i * 37 % 101) - 20 AS v, i / 3 AS sec FROM s;
SQL
sqlite3 -csv "$DB" "SELECT seq, k, v, datetime('2024-01-01 00:00:00', '+' || sec || ' seconds') FROM t ORDER BY seq;" |
  tr -d '"' >"$E2E_TMP/t.csv"

# expected NAME: SQLite's rows of the case, as the CSV sink writes them.
expected() {
  local w
  case $1 in
    rows) w="PARTITION BY k ORDER BY sec, seq ROWS BETWEEN 5 PRECEDING AND CURRENT ROW" ;;
    range) w="PARTITION BY k ORDER BY sec RANGE BETWEEN 30 PRECEDING AND CURRENT ROW" ;;
    unbounded) w="PARTITION BY k ORDER BY sec RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW" ;;
    proctime) w="PARTITION BY k ORDER BY seq ROWS BETWEEN 3 PRECEDING AND CURRENT ROW" ;;
  esac
  # Flink's AVG of an INT truncates toward zero, as SQLite's integer division.
  sqlite3 -csv "$DB" "SELECT seq, k, SUM(v) OVER w, COUNT(*) OVER w, MIN(v) OVER w, MAX(v) OVER w,
                             SUM(v) OVER w / COUNT(v) OVER w FROM t WINDOW w AS ($w);" | tr -d '"' | sort
}

job_sql() {
  local w
  case $1 in
    rows) w="PARTITION BY k ORDER BY ts ROWS BETWEEN 5 PRECEDING AND CURRENT ROW" ;;
    range) w="PARTITION BY k ORDER BY ts RANGE BETWEEN INTERVAL '30' SECOND PRECEDING AND CURRENT ROW" ;;
    unbounded) w="PARTITION BY k ORDER BY ts RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW" ;;
    proctime) w="PARTITION BY k ORDER BY pt ROWS BETWEEN 3 PRECEDING AND CURRENT ROW" ;;
  esac
  cat <<SQL
CREATE TABLE t (seq INT, k STRING, v INT, ts TIMESTAMP(3), pt AS PROCTIME(),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
  WITH ('connector' = 'filesystem', 'path' = '$E2E_TMP/t.csv', 'format' = 'csv', 'scan.parallelism' = '1');
CREATE TABLE out_t (seq INT, k STRING, s INT, c BIGINT, mn INT, mx INT, a INT)
  WITH ('connector' = 'filesystem', 'path' = '$2', 'format' = 'csv');
INSERT INTO out_t SELECT seq, k, SUM(v) OVER w, COUNT(*) OVER w, MIN(v) OVER w, MAX(v) OVER w, AVG(v) OVER w
  FROM t WINDOW w AS ($w);
SQL
}

result() { find "$1" -maxdepth 1 -type f -name 'part-*.csv' -exec cat {} + | sort; }

CKPT=(-D execution.checkpointing.interval=20ms -D restart-strategy.type=fixed-delay
      -D restart-strategy.fixed-delay.attempts=3 -D restart-strategy.fixed-delay.delay=0
      -D state.backend.type="$BACKEND")
RUN=0
for name in rows range unbounded proctime; do
  expected "$name" >"$E2E_TMP/$name.expected"
  RUN=$((RUN + 1))
  target=$E2E_TMP/out.$RUN
  job_sql "$name" "$target" >"$E2E_TMP/job.sql"
  run_sluice "$E2E_TMP/stdout" "$E2E_TMP/err" run -p "$P" "${CKPT[@]}" --metrics="$E2E_TMP/clean.json" "$E2E_TMP/job.sql"
  expect_success "$E2E_TMP/stdout" "$E2E_TMP/err"
  result "$target" >"$E2E_TMP/actual"
  compare_rows "$name at -p $P on $BACKEND without a failure" "$E2E_TMP/$name.expected" "$E2E_TMP/actual"
  mapfile -t received < <(jq -r '.jobs[0].vertices[] | select(.name | test("OverAggregate")) |
    .subtasks[].metrics.numRecordsIn' "$E2E_TMP/clean.json")
  [ "${#received[@]}" = "$P" ] || fail "$name: expected $P OverAggregate subtasks in the metrics, got ${#received[@]}"
  # Three failures: subtask i mod P after 20%, 50%, 80% of what it receives.
  for i in 0 1 2; do
    subtask=$((i % P))
    n=$(( received[subtask] * (20 + 30 * i) / 100 ))
    [ "$n" -ge 1 ] || n=1
    RUN=$((RUN + 1))
    target=$E2E_TMP/out.$RUN
    job_sql "$name" "$target" >"$E2E_TMP/job.sql"
    run_sluice "$E2E_TMP/stdout" "$E2E_TMP/err" run -p "$P" "${CKPT[@]}" -D sluice.test.fail-operator=OverAggregate \
      -D sluice.test.fail-after-records="$n" -D sluice.test.fail-subtask="$subtask" "$E2E_TMP/job.sql"
    expect_success "$E2E_TMP/stdout" "$E2E_TMP/err"
    grep -q -E "^Job '.*' finished: .*, 1 restarts$" "$E2E_TMP/err" || { tail -n 5 "$E2E_TMP/err" >&2; fail "$name: no restart"; }
    result "$target" >"$E2E_TMP/actual"
    compare_rows "$name at -p $P on $BACKEND, failure in subtask $subtask after $n records" \
      "$E2E_TMP/$name.expected" "$E2E_TMP/actual"
  done
done
