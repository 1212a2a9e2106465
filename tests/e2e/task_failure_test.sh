#!/usr/bin/env bash
# Failures and cancellation the user sees on the command line.
#   $1 sluice binary, $2 source tree, $3 case:
#   failure       a failure injected into subtask 2 of a Calc at -p 2 without restarts: exit status 1 and one
#                 error line naming the job (name and id), the failed vertex and its subtask, and the cause.
#   cancel_chk    an unbounded job with checkpoints into a directory and the default retention
#                 (NO_EXTERNALIZED_CHECKPOINTS) gets SIGINT after its first checkpoint: the "Job ... cancelled"
#                 summary names the last checkpoint's id but no path, as the retention deleted the directory.
#   region        a statement set of two INSERTs reading two datagen sequences (two pipelines, so two failover
#                 regions) into filesystem sinks, checkpoints every 50 ms, a failure injected into source gen_a:
#                 only pipeline a restarts (--metrics: its subtasks have attempt 1, pipeline b's attempt 0),
#                 the summary says "1 restarts", and both sinks hold exactly awk's rows, each once.
#   region_tm2    the same on two TaskManagers (-D local.number-taskmanager=2): the pipelines' channels between
#                 the TaskManagers go over TCP, and still only pipeline a restarts.
#   cancel_hop    a HOP window of 100000 ms sliding by 1 ms (100000 windows per row) gets SIGINT once its job
#                 runs: the job is cancelled (exit 130, the "Job ... cancelled" line) although each row alone
#                 takes long to assign (the window loop checks the task's cancellation).
source "$(dirname "$0")/lib.sh"
CASE=${3:?usage: $0 SLUICE SOURCE_DIR failure|cancel_chk|cancel_hop|region|region_tm2}

failure_case() {
  cat >"$E2E_TMP/job.sql" <<SQL
CREATE TABLE gen (id BIGINT, v INT) WITH ('connector' = 'datagen', 'number-of-rows' = '1000',
  'fields.v.min' = '0', 'fields.v.max' = '9');
CREATE TABLE sunk (id BIGINT, v INT) WITH ('connector' = 'blackhole');
INSERT INTO sunk SELECT id, v + 1 FROM gen WHERE v > 2;
SQL
  run_sluice "$E2E_TMP/out" "$E2E_TMP/err" run -p 2 -D sluice.test.fail-operator=Calc -D sluice.test.fail-subtask=1 \
    -D sluice.test.fail-after-records=10 "$E2E_TMP/job.sql"
  [ "$RC" -eq 1 ] || { cat "$E2E_TMP/err" >&2; fail "exit status $RC, expected 1"; }
  [ "$(wc -l <"$E2E_TMP/err")" -eq 1 ] || { cat "$E2E_TMP/err" >&2; fail "expected one error line"; }
  # The job's name comes from its sink, its id is 32 hex digits; the vertex is the chain holding Calc, (2/2)
  # is subtask index 1 of 2.
  local re="^Error: Job 'insert-into_default_catalog\.default_database\.sunk' \([0-9a-f]{32}\) failed: "
  re+="Source: gen -> Calc -> Sink: sunk \(2/2\) failed: Injected failure in 'Calc'"
  grep -q -E "$re" "$E2E_TMP/err" || { cat "$E2E_TMP/err" >&2; fail "the error does not name job, vertex and subtask"; }
  echo "ok: $(cat "$E2E_TMP/err")"
}

# start_unbounded SQL: starts `sluice run -p 1` on SQL (plus the remaining arguments) as a coprocess; sets PID.
start_unbounded() {
  local sql=$1
  shift
  coproc SL { exec timeout --foreground --kill-after=10 120 "$SLUICE" run -p 1 "$@" "$sql" 2>"$E2E_TMP/err" </dev/null; }
  PID=$SL_PID
  exec 3<&"${SL[0]}"
}

cancel_chk_case() {
  cat >"$E2E_TMP/job.sql" <<SQL
CREATE TABLE gen (id BIGINT, v INT) WITH ('connector' = 'datagen', 'rows-per-second' = '200');
CREATE TABLE sunk (id BIGINT, v INT) WITH ('connector' = 'blackhole');
INSERT INTO sunk SELECT id, v FROM gen;
SQL
  start_unbounded "$E2E_TMP/job.sql" -D execution.checkpointing.interval=50ms \
    -D execution.checkpointing.dir="$E2E_TMP/chk"
  local i
  for i in $(seq 1 3000); do
    if compgen -G "$E2E_TMP/chk/*/chk-*/_metadata" >/dev/null; then break; fi
    kill -0 "$PID" 2>/dev/null || break
    sleep 0.01
  done
  compgen -G "$E2E_TMP/chk/*/chk-*/_metadata" >/dev/null || { cat "$E2E_TMP/err" >&2; fail "no checkpoint completed"; }
  cat <&3 >/dev/null &
  local drain=$!
  sigint_and_wait "$PID" "$drain"
  [ "$RC" -eq 130 ] || { cat "$E2E_TMP/err" >&2; fail "exit status $RC, expected 130"; }
  local line
  line=$(grep "^Job 'insert-into_.*' cancelled: " "$E2E_TMP/err" || true)
  [ -n "$line" ] || { cat "$E2E_TMP/err" >&2; fail "no 'Job ... cancelled' line"; }
  grep -q -E "checkpoints completed, [0-9]+ failed \(last: [0-9]+, [0-9]+ bytes, [0-9]+ ms\)" <<<"$line" ||
    fail "the summary '$line' does not show the last checkpoint without a path"
  if compgen -G "$E2E_TMP/chk/*/chk-*" >/dev/null; then fail "the retention left checkpoints behind"; fi
  if grep -q "$E2E_TMP/chk" <<<"$line"; then fail "the summary names a deleted checkpoint: $line"; fi
  echo "ok: $line"
}

cancel_hop_case() {
  cat >"$E2E_TMP/job.sql" <<SQL
CREATE TABLE gen (
  id BIGINT,
  ts AS TO_TIMESTAMP('2024-01-01 00:' || LPAD(CAST(MOD(id / 60, 60) AS STRING), 2, '0') || ':'
                     || LPAD(CAST(MOD(id, 60) AS STRING), 2, '0')),
  WATERMARK FOR ts AS ts
) WITH ('connector' = 'datagen', 'rows-per-second' = '1000',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '0', 'fields.id.end' = '3599');
CREATE TABLE shown (ws TIMESTAMP(3), n BIGINT) WITH ('connector' = 'print', 'print-identifier' = 'row');
CREATE TABLE gen_marker (id BIGINT) WITH ('connector' = 'print', 'print-identifier' = 'marker');
EXECUTE STATEMENT SET
BEGIN
INSERT INTO gen_marker SELECT id FROM gen;
INSERT INTO shown SELECT window_start, COUNT(*) FROM TABLE(HOP(TABLE gen, DESCRIPTOR(ts), INTERVAL '0.001' SECOND,
  INTERVAL '100' SECOND)) GROUP BY window_start, window_end;
END;
SQL
  start_unbounded "$E2E_TMP/job.sql"
  local first
  IFS= read -r -t 60 first <&3 || { cat "$E2E_TMP/err" >&2; fail "no row from the running job"; }
  cat <&3 >/dev/null &
  local drain=$!
  sigint_and_wait "$PID" "$drain"
  [ "$RC" -eq 130 ] || { cat "$E2E_TMP/err" >&2; fail "exit status $RC, expected 130"; }
  grep -q "^Job 'insert-into_.*' cancelled: " "$E2E_TMP/err" || { cat "$E2E_TMP/err" >&2; fail "no 'Job ... cancelled' line"; }
  echo "ok: the HOP job was cancelled"
}

region_case() {
  local extra=("$@")
  cat >"$E2E_TMP/job.sql" <<SQL
CREATE TABLE gen_a (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '2000', 'number-of-rows' = '1500',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '1500');
CREATE TABLE gen_b (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '2000', 'number-of-rows' = '1000',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '1000');
CREATE TABLE out_a (id BIGINT, sq BIGINT) WITH ('connector' = 'filesystem', 'path' = '$E2E_TMP/a', 'format' = 'csv');
CREATE TABLE out_b (id BIGINT) WITH ('connector' = 'filesystem', 'path' = '$E2E_TMP/b', 'format' = 'csv');
EXECUTE STATEMENT SET
BEGIN
INSERT INTO out_a SELECT id, id * id FROM gen_a WHERE MOD(id, 3) = 0;
INSERT INTO out_b SELECT id FROM gen_b WHERE MOD(id, 7) <> 1;
END;
SQL
  run_sluice "$E2E_TMP/out" "$E2E_TMP/err" run -p 2 --metrics="$E2E_TMP/metrics.json" \
    -D execution.checkpointing.interval=50ms -D restart-strategy.type=fixed-delay \
    -D restart-strategy.fixed-delay.delay=0ms -D sluice.test.fail-operator=gen_a -D sluice.test.fail-subtask=1 \
    -D sluice.test.fail-after-records=200 "${extra[@]}" "$E2E_TMP/job.sql"
  expect_success "$E2E_TMP/out" "$E2E_TMP/err"
  grep -q -E "^Job '.*' finished: .*, 1 restarts$" "$E2E_TMP/err" || { cat "$E2E_TMP/err" >&2; fail "no '1 restarts' summary"; }
  command -v jq >/dev/null || fail "jq is needed (scripts/install-deps.sh installs it)"
  local attempts_a attempts_b
  attempts_a=$(jq -r '[.jobs[0].vertices[] | select(.name | test("gen_a|out_a")) | .subtasks[].attempt] | unique | join(",")' \
    "$E2E_TMP/metrics.json")
  attempts_b=$(jq -r '[.jobs[0].vertices[] | select(.name | test("gen_b|out_b")) | .subtasks[].attempt] | unique | join(",")' \
    "$E2E_TMP/metrics.json")
  [ "$attempts_a" = 1 ] || fail "pipeline a: attempts '$attempts_a', expected all 1"
  [ "$attempts_b" = 0 ] || fail "pipeline b: attempts '$attempts_b', expected all 0 (it must not restart)"
  seq 1 1500 | awk '$1 % 3 == 0 { print $1 "," $1 * $1 }' | sort >"$E2E_TMP/a.expected"
  seq 1 1000 | awk '$1 % 7 != 1' | sort >"$E2E_TMP/b.expected"
  find "$E2E_TMP/a" -maxdepth 1 -type f -name 'part-*' -exec cat {} + | sort >"$E2E_TMP/a.got"
  find "$E2E_TMP/b" -maxdepth 1 -type f -name 'part-*' -exec cat {} + | sort >"$E2E_TMP/b.got"
  cmp -s "$E2E_TMP/a.expected" "$E2E_TMP/a.got" || fail "out_a: $(wc -l <"$E2E_TMP/a.got") rows differ from awk's 500"
  cmp -s "$E2E_TMP/b.expected" "$E2E_TMP/b.got" || fail "out_b: $(wc -l <"$E2E_TMP/b.got") rows differ from awk's"
  echo "ok: only pipeline a restarted; both sinks exact"
}

case "$CASE" in
  failure) failure_case ;;
  cancel_chk) cancel_chk_case ;;
  cancel_hop) cancel_hop_case ;;
  region) region_case ;;
  region_tm2) region_case -D local.number-taskmanager=2 ;;
  *) fail "unknown case $CASE" ;;
esac
