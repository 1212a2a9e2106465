#!/usr/bin/env bash
# Recovery test: checkpoints, restarts and restores against results computed independently (SQLite / awk).
#   $1 sluice binary, $2 source tree, $3 case:
#   failover P [ARGS...]  the hourly TUMBLE query of tests/e2e/flights_main_job.sql into a filesystem CSV sink,
#                         checkpoints every 20 ms, fixed-delay restarts; a failure injected into the window
#                         aggregate at 10 record counts spread over what its subtask receives: the committed part
#                         files equal SQLite's result, each row once, and the summary says "1 restarts".
#                         ARGS go to `sluice run` (e.g. -D local.number-taskmanager=2).
#   kill9                 a datagen job (3000 rows at 1000 rows/s, a filter and a keyed TUMBLE over an event time
#                         computed from a sequence) killed with SIGKILL after its first checkpoint, then restored with
#                         -s from the latest checkpoint: both runs' committed rows equal awk's, each once, and no
#                         file the killed run left hidden turns visible with content other than it had; after the
#                         restored job no hidden file of the killed run is left in the sink directories.
#   rescale               the kill9 flow at -p 2, the retained checkpoint restored at -p 1 and at -p 4 (each into a
#                         copy of the killed run's sink directories).
#   bad_restore           -s with a missing path, a truncated _metadata and one with a flipped byte: exit status 1
#                         and an error naming the path, never a crash.
source "$(dirname "$0")/lib.sh"
CASE=${3:?usage: $0 SLUICE SOURCE_DIR failover|kill9|rescale|bad_restore [ARGS...]}

# visible_rows DIR: the rows of the committed (visible) part files of sink directory DIR, sorted.
visible_rows() {
  find "$1" -maxdepth 1 -type f -name 'part-*.csv' -exec cat {} + | sort
}

# hidden_files DIR: the names of the hidden files of sink directory DIR, sorted.
hidden_files() {
  find "$1" -maxdepth 1 -type f -name '.*' -printf '%f\n' | sort
}

# expect_summary ERR PATTERN: the summary line (the last "Job '...' finished" line of ERR) matches PATTERN (ERE).
expect_summary() {
  local line
  line=$(grep -E "^Job '.*' finished: " "$1" | tail -n 1 || true)
  [ -n "$line" ] || { head -n 40 "$1" >&2; fail "no summary line on stderr"; }
  if ! grep -q -E "$2" <<<"$line"; then fail "summary '$line' does not match /$2/"; fi
}

# ------------------------------------------------------------------------------------------------------------
failover_case() {
  local p=${1:?failover needs a parallelism}
  shift
  local extra=("$@")
  command -v sqlite3 >/dev/null || fail "sqlite3 is not installed (scripts/install-deps.sh installs it)"
  command -v jq >/dev/null || fail "jq is not installed"
  [ "$(sqlite3 :memory: 'SELECT -7 / 2, 7 / 2;')" = "-3|3" ] || fail "SQLite integer division does not truncate toward zero"
  # No input row may be late (see oracle_test.sh): SQLite does not drop late rows, the engine does.
  awk -F, '
    $1 != 2015 || $2 != 1 || $10 !~ /^[0-2][0-9][0-5][0-9]$/ { bad = 1; exit }
    { t = ($3 * 24 + substr($10, 1, 2)) * 60 + substr($10, 3, 2); if (NR > 1 && t < max_t - 1) { bad = 1; exit }
      if (t > max_t) max_t = t }
    END { exit bad }
  ' "$FLIGHTS_CSV" || fail "the input has rows the engine would drop as late; the oracle does not apply"

  # The job: the main job's flights DDL and its hourly query, into a filesystem CSV sink at @OUT@.
  local template=$E2E_TMP/failover.sql.in
  {
    sed -n '/^CREATE TABLE flights (/,/^);/p' tests/e2e/flights_main_job.sql
    cat <<'SQL'
CREATE TABLE hourly_out (
  window_start  TIMESTAMP(3),
  window_end    TIMESTAMP(3),
  airline       STRING,
  flights       BIGINT,
  cancelled     INT,
  avg_dep_delay INT,
  max_dep_delay INT
) WITH ('connector' = 'filesystem', 'path' = '@OUT@', 'format' = 'csv');
SQL
    sed -n '/^INSERT INTO hourly_airline_stats/,/;$/p' tests/e2e/flights_main_job.sql |
      sed 's/^INSERT INTO hourly_airline_stats/INSERT INTO hourly_out/'
  } >"$template"
  grep -q '^INSERT INTO hourly_out' "$template" || fail "no hourly INSERT found in tests/e2e/flights_main_job.sql"
  grep -q '^CREATE TABLE flights' "$template" || fail "no flights DDL found in tests/e2e/flights_main_job.sql"

  # The oracle, in the CSV sink's format: TIMESTAMP(3) as a quoted "yyyy-MM-dd HH:mm:ss" (no fraction when
  # the milliseconds are 0), NULL as an empty field, strings unquoted when they need no quotes.
  local db=$E2E_TMP/flights.db expected=$E2E_TMP/hourly.expected
  load_flights_sqlite "$db"
  sqlite3 "$db" <<'SQL'
UPDATE flights SET DEPARTURE_DELAY = NULL WHERE DEPARTURE_DELAY = '';
UPDATE flights SET CANCELLED = NULL WHERE CANCELLED = '';
UPDATE flights SET DAY = NULL WHERE DAY = '';
SQL
  local check
  check=$(sqlite3 "$db" "SELECT COUNT(*), SUM(typeof(DEPARTURE_DELAY) NOT IN ('integer', 'null')),
    SUM(typeof(CANCELLED) <> 'integer'), SUM(typeof(DAY) <> 'integer'), SUM(DEPARTURE_DELAY IS NULL),
    SUM(AIRLINE NOT GLOB '[A-Z0-9][A-Z0-9]') FROM flights;")
  [ "$check" = "55105|0|0|0|1195|0" ] || fail "SQLite import check: got '$check', want '55105|0|0|0|1195|0'"
  sqlite3 "$db" >"$expected" <<'SQL'
WITH w AS (
  SELECT printf('%04d-%02d-%02d %s:00:00', YEAR, MONTH, DAY, substr(SCHEDULED_DEPARTURE, 1, 2)) AS ws,
         AIRLINE, CANCELLED, DEPARTURE_DELAY
  FROM flights)
SELECT '"' || datetime(ws) || '","' || datetime(ws, '+1 hour') || '",' || AIRLINE || ',' || COUNT(*) || ','
       || coalesce(SUM(CANCELLED), '') || ','
       || coalesce(CAST(SUM(DEPARTURE_DELAY) AS INTEGER) / COUNT(DEPARTURE_DELAY), '') || ','
       || coalesce(MAX(DEPARTURE_DELAY), '')
FROM w GROUP BY ws, AIRLINE;
SQL
  sort -o "$expected" "$expected"
  local total
  total=$(awk -F, '{ s += $4 } END { print s }' "$expected")
  [ "$total" = 55105 ] || fail "oracle hourly counts add up to $total, not 55105"

  local ckpt=(-D execution.checkpointing.interval=20ms -D restart-strategy.type=fixed-delay
              -D restart-strategy.fixed-delay.attempts=3 -D restart-strategy.fixed-delay.delay=0)

  # A run without a failure: the baseline, and how many records each window aggregate subtask receives.
  local out=$E2E_TMP/out.clean
  sed "s|@OUT@|$out|" "$template" >"$E2E_TMP/clean.sql"
  run_sluice "$E2E_TMP/stdout" "$E2E_TMP/err.clean" run -p "$p" "${extra[@]}" "${ckpt[@]}" \
    --metrics="$E2E_TMP/clean.json" "$E2E_TMP/clean.sql"
  expect_success "$E2E_TMP/stdout" "$E2E_TMP/err.clean"
  expect_summary "$E2E_TMP/err.clean" ', [0-9]+ checkpoints completed, 0 failed'
  if grep -q ' restarts' "$E2E_TMP/err.clean"; then fail "the run without a failure restarted"; fi
  visible_rows "$out" >"$E2E_TMP/actual.clean"
  compare_rows "hourly at -p $p without a failure" "$expected" "$E2E_TMP/actual.clean"
  local counts
  counts=$(jq -r '.jobs[0].vertices[] | select(.name | test("WindowAggregate")) | .subtasks[].metrics.numRecordsIn' \
    "$E2E_TMP/clean.json")
  mapfile -t received <<<"$counts"
  [ "${#received[@]}" = "$p" ] || fail "expected $p window aggregate subtasks in the metrics, got: $counts"
  local sum=0 r
  for r in "${received[@]}"; do sum=$((sum + r)); done
  [ "$sum" = 55105 ] || fail "the window aggregate subtasks received $sum records, not 55105"

  # Ten failures: subtask i mod P, after 5%, 15%, ..., 95% of the records that subtask receives.
  local i subtask n
  for i in $(seq 0 9); do
    subtask=$((i % p))
    n=$(( received[subtask] * (2 * i + 1) / 20 ))
    [ "$n" -ge 1 ] || n=1
    out=$E2E_TMP/out.$i
    sed "s|@OUT@|$out|" "$template" >"$E2E_TMP/run.sql"
    run_sluice "$E2E_TMP/stdout" "$E2E_TMP/err.$i" run -p "$p" "${extra[@]}" "${ckpt[@]}" \
      -D sluice.test.fail-operator=WindowAggregate -D sluice.test.fail-after-records="$n" \
      -D sluice.test.fail-subtask="$subtask" "$E2E_TMP/run.sql"
    expect_success "$E2E_TMP/stdout" "$E2E_TMP/err.$i"
    expect_summary "$E2E_TMP/err.$i" ', 1 restarts$'
    visible_rows "$out" >"$E2E_TMP/actual.$i"
    compare_rows "hourly at -p $p, failure in subtask $subtask after $n records" "$expected" "$E2E_TMP/actual.$i"
    local left
    left=$(hidden_files "$out")
    [ -z "$left" ] || fail "hidden files left in the sink directory after the job finished: $left"
  done
}

# ------------------------------------------------------------------------------------------------------------
# The kill9 / rescale job: ids 1..3000 from a datagen sequence at 1000 rows/s; event time 2024-01-01 00:mm:ss
# with mm = id / 60, ss = id % 60 (ascending in id). Sinks: `filtered` (id, id * id for id % 3 <> 0) and
# `windows` (1-minute TUMBLE per k = id % 5: window_start, k, COUNT(*), SUM(id)).
write_seq_job() {
  local file=$1 dir=$2
  cat >"$file" <<SQL
CREATE TABLE seq (
  id BIGINT,
  ts AS TO_TIMESTAMP('2024-01-01 00:' || LPAD(CAST(id / 60 AS STRING), 2, '0') || ':'
                     || LPAD(CAST(MOD(id, 60) AS STRING), 2, '0')),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH (
  'connector' = 'datagen',
  'rows-per-second' = '1000',
  'number-of-rows' = '3000',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '3000'
);
CREATE TABLE filtered (id BIGINT, sq BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '$dir/filtered', 'format' = 'csv');
CREATE TABLE windows (window_start TIMESTAMP(3), k BIGINT, n BIGINT, total BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '$dir/windows', 'format' = 'csv');
EXECUTE STATEMENT SET BEGIN
INSERT INTO filtered SELECT id, id * id FROM seq WHERE MOD(id, 3) <> 0;
INSERT INTO windows
SELECT window_start, MOD(id, 5), COUNT(*), SUM(id)
FROM TABLE(TUMBLE(TABLE seq, DESCRIPTOR(ts), INTERVAL '1' MINUTE))
GROUP BY window_start, window_end, MOD(id, 5);
END;
SQL
}

seq_expected() {
  seq 1 3000 | awk '$1 % 3 != 0 { print $1 "," $1 * $1 }' | sort >"$E2E_TMP/filtered.expected"
  seq 1 3000 | awk '
    { key = sprintf("\"2024-01-01 00:%02d:00\",%d", int($1 / 60), $1 % 5); n[key]++; s[key] += $1 }
    END { for (k in n) print k "," n[k] "," s[k] }' | sort >"$E2E_TMP/windows.expected"
  [ "$(wc -l <"$E2E_TMP/filtered.expected")" = 2000 ] || fail "awk oracle: not 2000 filtered rows"
  [ "$(awk -F, '{ s += $3 } END { print s }' "$E2E_TMP/windows.expected")" = 3000 ] || fail "awk oracle: window counts"
}

# killed_run DIR P: runs the seq job at -p P with sinks under DIR and checkpoints under DIR/chk (every 100 ms),
# waits for a completed checkpoint, kills it with SIGKILL; snapshots the sink directories into DIR/at-kill.
# Sets LATEST_CHK to the newest chk-<n> directory with a _metadata.
killed_run() {
  local dir=$1 p=$2
  mkdir -p "$dir"
  write_seq_job "$dir/job.sql" "$dir"
  "$SLUICE" run -p "$p" -D execution.checkpointing.interval=100ms -D execution.checkpointing.dir="$dir/chk" \
    "$dir/job.sql" >"$dir/stdout" 2>"$dir/stderr" </dev/null &
  local pid=$! i
  for i in $(seq 1 1000); do
    if compgen -G "$dir/chk/*/chk-*/_metadata" >/dev/null; then break; fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.01
  done
  if ! kill -9 "$pid" 2>/dev/null; then
    wait "$pid" || true
    head -n 40 "$dir/stderr" >&2
    fail "the job ended before it could be killed"
  fi
  set +e
  { wait "$pid"; } 2>/dev/null
  local rc=$?
  set -e
  [ "$rc" = 137 ] || fail "the killed run exited with $rc, not 137"
  grep -q "writes its checkpoints to $dir/chk/" "$dir/stderr" || fail "no 'writes its checkpoints to' line on stderr"
  mkdir -p "$dir/at-kill"
  cp -a "$dir/filtered" "$dir/windows" "$dir/at-kill/" 2>/dev/null || true
  mkdir -p "$dir/at-kill/filtered" "$dir/at-kill/windows"
  LATEST_CHK=
  local best=-1 d n
  for d in "$dir"/chk/*/chk-*; do
    [ -f "$d/_metadata" ] || continue
    n=${d##*/chk-}
    if [ "$n" -gt "$best" ]; then best=$n; LATEST_CHK=$d; fi
  done
  [ -n "$LATEST_CHK" ] || fail "no completed checkpoint after the kill"
  echo "killed after checkpoint $best; committed at the kill: $(visible_rows "$dir/filtered" | wc -l) filtered rows," \
    "$(visible_rows "$dir/windows" | wc -l) window rows"
}

# check_restored NAME KILLDIR OUTDIR: OUTDIR's sinks hold the expected rows, each once; every part file that was
# visible at the kill is unchanged; a file of the killed run visible now was visible or hidden at the kill with
# the same content; no hidden file is left.
check_restored() {
  local name=$1 kdir=$2 odir=$3 sinks=${4:-filtered windows} sink f base
  for sink in $sinks; do
    visible_rows "$odir/$sink" >"$E2E_TMP/$sink.actual"
    compare_rows "$name: $sink" "$E2E_TMP/$sink.expected" "$E2E_TMP/$sink.actual"
    for f in "$kdir/at-kill/$sink"/part-*.csv; do
      [ -e "$f" ] || continue
      cmp -s "$f" "$odir/$sink/${f##*/}" || fail "$name: $sink/${f##*/}, committed before the kill, changed or vanished"
    done
    local killed_run_ids
    killed_run_ids=$(find "$kdir/at-kill/$sink" -maxdepth 1 -type f -printf '%f\n' |
      sed -n -E 's/^\.?part-([0-9a-f-]{36})-[0-9]+-[0-9]+\.csv(\.inprogress)?$/\1/p' | sort -u)
    for f in "$odir/$sink"/part-*.csv; do
      [ -e "$f" ] || continue
      base=${f##*/}
      local id
      id=$(sed -E 's/^part-([0-9a-f-]{36})-[0-9]+-[0-9]+\.csv$/\1/' <<<"$base")
      grep -qxF "$id" <<<"$killed_run_ids" || continue
      if [ -e "$kdir/at-kill/$sink/$base" ]; then continue; fi
      [ -e "$kdir/at-kill/$sink/.$base.inprogress" ] ||
        fail "$name: $sink/$base of the killed run was neither visible nor hidden at the kill"
      cmp -s "$kdir/at-kill/$sink/.$base.inprogress" "$f" ||
        fail "$name: $sink/$base, committed from the killed run's hidden file, differs from it"
    done
    # Checked last (after the other restores of the case ran): reported by finish_case.
    local left
    left=$(hidden_files "$odir/$sink")
    if [ -n "$left" ]; then
      LEFTOVERS+=("$name: hidden files left in $sink after the restored job finished: $(echo $left)")
    else
      echo "ok: $name: no hidden file left in $sink"
    fi
  done
}

LEFTOVERS=()
# finish_case: fails when a restore left hidden files behind.
finish_case() {
  local m
  for m in "${LEFTOVERS[@]}"; do echo "FAIL: $m" >&2; done
  [ "${#LEFTOVERS[@]}" = 0 ] || exit 1
}

# restore_into NAME KILLDIR OUTDIR P: copies the killed run's sink directories (as at the kill) to OUTDIR, restores
# the latest checkpoint at -p P writing there, and checks the result.
restore_into() {
  local name=$1 kdir=$2 odir=$3 p=$4 sinks=${5:-filtered windows}
  mkdir -p "$odir"
  cp -a "$kdir/at-kill/filtered" "$kdir/at-kill/windows" "$odir/"
  write_seq_job "$odir/job.sql" "$odir"
  run_sluice "$odir/stdout" "$odir/stderr" run -p "$p" -s "$LATEST_CHK" -D execution.checkpointing.interval=100ms \
    "$odir/job.sql"
  expect_success "$odir/stdout" "$odir/stderr"
  expect_summary "$odir/stderr" ' checkpoints completed'
  check_restored "$name" "$kdir" "$odir" "$sinks"
}

kill9_case() {
  seq_expected
  killed_run "$E2E_TMP/k" 2
  # Restore in place: the same sink directories the killed run wrote.
  write_seq_job "$E2E_TMP/k/job2.sql" "$E2E_TMP/k"
  run_sluice "$E2E_TMP/k/stdout2" "$E2E_TMP/k/stderr2" run -p 2 -s "$LATEST_CHK" \
    -D execution.checkpointing.interval=100ms "$E2E_TMP/k/job2.sql"
  expect_success "$E2E_TMP/k/stdout2" "$E2E_TMP/k/stderr2"
  expect_summary "$E2E_TMP/k/stderr2" ' checkpoints completed'
  check_restored "kill -9 at -p 2, restored at -p 2" "$E2E_TMP/k" "$E2E_TMP/k"
  finish_case
}

rescale_case() {
  seq_expected
  killed_run "$E2E_TMP/k" 2
  # Only the filter's rows are checked: at another parallelism a subtask reads several datagen splits one
  # after another, so which rows are behind its watermark (and dropped by the windows, as Flink drops late
  # rows) depends on the split layout; the filter has no event time.
  restore_into "kill -9 at -p 2, restored at -p 1" "$E2E_TMP/k" "$E2E_TMP/p1" 1 filtered
  restore_into "kill -9 at -p 2, restored at -p 4" "$E2E_TMP/k" "$E2E_TMP/p4" 4 filtered
  finish_case
}

# ------------------------------------------------------------------------------------------------------------
# expect_restore_error NAME PATH WHAT: `sluice run -s PATH` exits 1 with an error naming PATH and matching WHAT (ERE).
expect_restore_error() {
  local name=$1 path=$2 what=$3
  write_seq_job "$E2E_TMP/bad.sql" "$E2E_TMP/bad-out"
  run_sluice "$E2E_TMP/bad.stdout" "$E2E_TMP/bad.stderr" run -p 2 -s "$path" "$E2E_TMP/bad.sql"
  if [ "$RC" -ne 1 ]; then
    head -n 20 "$E2E_TMP/bad.stderr" >&2
    fail "$name: exit status $RC, not 1"
  fi
  grep -qF "$path" "$E2E_TMP/bad.stderr" || { cat "$E2E_TMP/bad.stderr" >&2; fail "$name: the error does not name $path"; }
  grep -qiE "$what" "$E2E_TMP/bad.stderr" || { cat "$E2E_TMP/bad.stderr" >&2; fail "$name: the error does not say /$what/"; }
  if grep -qiE 'terminate|abort|segmentation|core dumped|what\(\)' "$E2E_TMP/bad.stderr"; then
    cat "$E2E_TMP/bad.stderr" >&2
    fail "$name: looks like a crash"
  fi
  echo "ok: $name: $(grep -m1 -F "$path" "$E2E_TMP/bad.stderr")"
}

bad_restore_case() {
  killed_run "$E2E_TMP/k" 2
  local meta=$LATEST_CHK/_metadata size
  size=$(stat -c %s "$meta")
  [ "$size" -ge 16 ] || fail "the real _metadata has only $size bytes"

  expect_restore_error "missing path" "$E2E_TMP/no-such-dir/chk-7" 'no such|not found|does not exist|missing'

  mkdir -p "$E2E_TMP/trunc/chk-1"
  head -c $((size / 2)) "$meta" >"$E2E_TMP/trunc/chk-1/_metadata"
  expect_restore_error "truncated _metadata" "$E2E_TMP/trunc/chk-1" 'truncat|corrupt|short|incomplete|invalid'

  mkdir -p "$E2E_TMP/flip/chk-1"
  cp "$meta" "$E2E_TMP/flip/chk-1/_metadata"
  local off=$((size / 2)) byte
  byte=$(od -An -tu1 -j "$off" -N1 "$meta" | tr -d ' ')
  printf "$(printf '\\%03o' $(((byte ^ 0x5a) & 255)))" |
    dd of="$E2E_TMP/flip/chk-1/_metadata" bs=1 seek="$off" conv=notrunc status=none
  cmp -s "$meta" "$E2E_TMP/flip/chk-1/_metadata" && fail "the byte flip did not change the file"
  expect_restore_error "one byte flipped in _metadata" "$E2E_TMP/flip/chk-1/_metadata" 'checksum|crc|corrupt|invalid'
}

case $CASE in
  failover) failover_case "${@:4}" ;;
  kill9) kill9_case ;;
  rescale) rescale_case ;;
  bad_restore) bad_restore_case ;;
  *) fail "unknown case '$CASE'" ;;
esac
