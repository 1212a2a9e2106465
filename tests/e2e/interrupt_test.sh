#!/usr/bin/env bash
# Ctrl-C during `sluice run`: the first SIGINT cancels the running job (as Flink's CLI cancels its job),
# the filesystem sink removes its in-progress part files as on any cancellation, the summary says the
# job was cancelled, --metrics=FILE.json holds the job with state CANCELED, and the exit status is 130.
# The job is unbounded (datagen without number-of-rows) and writes to a filesystem sink and a print
# sink; SIGINT is sent once the first printed row has been read from sluice's stdout.
#   $1 sluice binary, $2 source tree.
source "$(dirname "$0")/lib.sh"
command -v jq >/dev/null || fail "jq is needed (scripts/install-deps.sh installs it)"

cat >"$E2E_TMP/job.sql" <<SQL
CREATE TABLE gen (id BIGINT, v INT) WITH ('connector' = 'datagen', 'rows-per-second' = '500');
CREATE TABLE files (id BIGINT, v INT) WITH ('connector' = 'filesystem', 'path' = '$E2E_TMP/parts', 'format' = 'csv');
CREATE TABLE shown (id BIGINT, v INT) WITH ('connector' = 'print', 'print-identifier' = 'row');
EXECUTE STATEMENT SET
BEGIN
INSERT INTO files SELECT id, v FROM gen;
INSERT INTO shown SELECT id, v FROM gen;
END;
CREATE TABLE never (id BIGINT) WITH ('connector' = 'print', 'print-identifier' = 'never');
INSERT INTO never SELECT id FROM gen;
SQL

# --foreground: otherwise timeout also signals its whole process group, so sluice would get SIGINT
# twice and take the second as "exit at once".
coproc SL { exec timeout --foreground --kill-after=10 120 "$SLUICE" run -p 2 --metrics="$E2E_TMP/metrics.json" \
  "$E2E_TMP/job.sql" 2>"$E2E_TMP/err" </dev/null; }
pid=$SL_PID
exec 3<&"${SL[0]}"  # coproc descriptors are not passed to background commands: a copy is
# The first row on stdout means the job runs (read blocks on the pipe; 60 s is a failure guard only).
IFS= read -r -t 60 first <&3 || { cat "$E2E_TMP/err" >&2; fail "no row from the running job"; }
case "$first" in row:[12]\>*) ;; *) fail "unexpected first line: $first" ;; esac
# Keep draining stdout so the print sink never blocks on a full pipe.
cat <&3 >"$E2E_TMP/rest" &
drain=$!
sigint_and_wait "$pid" "$drain"
[ "$RC" -eq 130 ] || { cat "$E2E_TMP/err" >&2; fail "exit status $RC, expected 130"; }
grep -q "SIGINT received: cancelling the job" "$E2E_TMP/err" || { cat "$E2E_TMP/err" >&2; fail "no cancel message"; }
grep -q "^Job 'insert-into_.*' cancelled: [0-9]* rows read" "$E2E_TMP/err" ||
  { cat "$E2E_TMP/err" >&2; fail "no 'Job ... cancelled' summary line"; }
if grep -q "never" "$E2E_TMP/rest"; then fail "the statement after the cancelled job ran"; fi
jq -e . "$E2E_TMP/metrics.json" >/dev/null || fail "the metrics file is not valid JSON"
[ "$(jq -r '[.jobs[].state] | join(",")' "$E2E_TMP/metrics.json")" = "CANCELED" ] ||
  fail "metrics: expected one CANCELED job, got $(jq -c '[.jobs[].state]' "$E2E_TMP/metrics.json")"
leftover=$(find "$E2E_TMP/parts" -name '*.inprogress' 2>/dev/null | wc -l)
[ "$leftover" -eq 0 ] || fail "$leftover in-progress part files left behind"
echo "ok: SIGINT cancelled the job (exit 130, metrics written, no in-progress files)"
