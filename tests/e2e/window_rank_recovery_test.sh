#!/usr/bin/env bash
# Window Top-N and window deduplication recover from injected failures with the failure-free result, which is
# SQLite's ROW_NUMBER over the same rows.
#   $1 sluice binary, $2 source tree, $3 parallelism, $4 state backend (hashmap | rocksdb).
# 30000 generated rows (13 keys, three rows per second), in row-time order so none is late; TUMBLE windows of
# one minute; three jobs, each writing an exactly-once filesystem CSV sink with checkpoints every 20 ms and
# fixed-delay restarts:
#  - topn: WindowRank over the window TVF, the top 3 per key and window by v DESC, seq (rn output);
#  - agg_topn: WindowRank over a window aggregation, the 2 keys of largest SUM(v) per window (ties by key);
#  - dedup: WindowDeduplicate, the last row per key and window (largest row time).
# Each is run clean and with a failure injected (sluice.test.fail-operator / fail-after-records /
# fail-subtask) into the ranking operator at three record counts spread over what its subtask receives; each
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
  case $1 in
    topn) sqlite3 -csv "$DB" "SELECT seq, k, v, rn FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k, sec / 60
                              ORDER BY v DESC, seq) AS rn FROM t) WHERE rn <= 3;" ;;
    agg_topn) sqlite3 -csv "$DB" "SELECT k, s, first_seq, rn FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY w
                                  ORDER BY s DESC, k) AS rn FROM (SELECT sec / 60 AS w, k, SUM(v) AS s,
                                  MIN(seq) AS first_seq FROM t GROUP BY sec / 60, k)) WHERE rn <= 2;" ;;
    dedup) sqlite3 -csv "$DB" "SELECT seq, k, v FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k, sec / 60
                               ORDER BY sec DESC, seq DESC) AS rn FROM t) WHERE rn = 1;" ;;
  esac | tr -d '"' | sort
}

job_sql() {
  cat <<SQL
CREATE TABLE t (seq INT, k STRING, v INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
  WITH ('connector' = 'filesystem', 'path' = '$E2E_TMP/t.csv', 'format' = 'csv', 'scan.parallelism' = '1');
SQL
  case $1 in
    topn) cat <<SQL
CREATE TABLE out_t (seq INT, k STRING, v INT, rn BIGINT) WITH ('connector' = 'filesystem', 'path' = '$2', 'format' = 'csv');
INSERT INTO out_t SELECT seq, k, v, rn FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end, k ORDER BY v DESC, seq) AS rn
  FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' MINUTE))) WHERE rn <= 3;
SQL
    ;;
    agg_topn) cat <<SQL
CREATE TABLE out_t (k STRING, s INT, first_seq INT, rn BIGINT) WITH ('connector' = 'filesystem', 'path' = '$2', 'format' = 'csv');
INSERT INTO out_t SELECT k, s, first_seq, rn FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY s DESC, k) AS rn
  FROM (SELECT window_start, window_end, k, SUM(v) AS s, MIN(seq) AS first_seq
        FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) GROUP BY window_start, window_end, k))
  WHERE rn <= 2;
SQL
    ;;
    dedup) cat <<SQL
CREATE TABLE out_t (seq INT, k STRING, v INT) WITH ('connector' = 'filesystem', 'path' = '$2', 'format' = 'csv');
INSERT INTO out_t SELECT seq, k, v FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end, k ORDER BY ts DESC) AS rn
  FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' MINUTE))) WHERE rn = 1;
SQL
    ;;
  esac
}

result() { find "$1" -maxdepth 1 -type f -name 'part-*.csv' -exec cat {} + | sort; }

CKPT=(-D execution.checkpointing.interval=20ms -D restart-strategy.type=fixed-delay
      -D restart-strategy.fixed-delay.attempts=3 -D restart-strategy.fixed-delay.delay=0
      -D state.backend.type="$BACKEND")
RUN=0
for name in topn agg_topn dedup; do
  op=WindowRank
  [ "$name" = dedup ] && op=WindowDeduplicate
  expected "$name" >"$E2E_TMP/$name.expected"
  [ -s "$E2E_TMP/$name.expected" ] || fail "$name: SQLite gave no rows"
  RUN=$((RUN + 1))
  target=$E2E_TMP/out.$RUN
  job_sql "$name" "$target" >"$E2E_TMP/job.sql"
  run_sluice "$E2E_TMP/stdout" "$E2E_TMP/err" run -p "$P" "${CKPT[@]}" --metrics="$E2E_TMP/clean.json" "$E2E_TMP/job.sql"
  expect_success "$E2E_TMP/stdout" "$E2E_TMP/err"
  result "$target" >"$E2E_TMP/actual"
  compare_rows "$name at -p $P on $BACKEND without a failure" "$E2E_TMP/$name.expected" "$E2E_TMP/actual"
  mapfile -t received < <(jq -r --arg op "$op" \
    '.jobs[0].vertices[] | select(.name | test($op)) | .subtasks[].metrics.numRecordsIn' "$E2E_TMP/clean.json")
  want=$P
  [ "$name" = agg_topn ] && want=1  # no key besides the window: one subtask, as Flink's SINGLETON
  [ "${#received[@]}" = "$want" ] || fail "$name: expected $want $op subtasks in the metrics, got ${#received[@]}"
  # Three failures: subtask i mod (its subtasks) after 20%, 50%, 80% of what it receives.
  for i in 0 1 2; do
    subtask=$((i % want))
    n=$(( received[subtask] * (20 + 30 * i) / 100 ))
    [ "$n" -ge 1 ] || n=1
    RUN=$((RUN + 1))
    target=$E2E_TMP/out.$RUN
    job_sql "$name" "$target" >"$E2E_TMP/job.sql"
    run_sluice "$E2E_TMP/stdout" "$E2E_TMP/err" run -p "$P" "${CKPT[@]}" -D sluice.test.fail-operator="$op" \
      -D sluice.test.fail-after-records="$n" -D sluice.test.fail-subtask="$subtask" "$E2E_TMP/job.sql"
    expect_success "$E2E_TMP/stdout" "$E2E_TMP/err"
    grep -q -E "^Job '.*' finished: .*, 1 restarts$" "$E2E_TMP/err" || { tail -n 5 "$E2E_TMP/err" >&2; fail "$name: no restart"; }
    result "$target" >"$E2E_TMP/actual"
    compare_rows "$name at -p $P on $BACKEND, failure in subtask $subtask after $n records" \
      "$E2E_TMP/$name.expected" "$E2E_TMP/actual"
  done
done
