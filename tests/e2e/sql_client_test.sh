#!/usr/bin/env bash
# `sluice sql`, the SQL client: -f and -i files, statements read from stdin one at a time in one session,
# the three result modes, errors that leave the session usable, HELP / QUIT, Ctrl-C cancelling a running
# query but not the client, and (under a terminal) line editing with a history file.
# Expected outputs are written out by hand from Flink's SQL client rules (result_view.h).
#   $1 sluice binary, $2 source tree.
source "$(dirname "$0")/lib.sh"

printf '%s\n' alice,1 bob,2 alice,3 >"$E2E_TMP/t.csv"
DDL="CREATE TABLE t (name STRING, v INT) WITH ('connector' = 'filesystem', 'path' = '$E2E_TMP/t.csv', 'format' = 'csv');"

sql() {  # sql OUT ERR ARGS... < stdin: runs `sluice sql -p 1 ARGS...` with stdin kept; sets RC
  local out=$1 err=$2
  shift 2
  set +e
  timeout --kill-after=10 120 "$SLUICE" sql -p 1 "$@" >"$out" 2>"$err"
  RC=$?
  set -e
}
same() {  # same WANT_FILE GOT_FILE WHAT
  diff -u "$1" "$2" >&2 || fail "$3: output differs (- expected, + got)"
  echo "ok: $3"
}

# 1. -f, TABLEAU: one source subtask reads the file in order, so the running SUM per name changes as
# +I alice 1, +I bob 2, -U alice 1, +U alice 4. Widths (PrintUtils.columnWidthsByType): op 2; name STRING ->
# the max column width 30; total INT -> 11.
cat >"$E2E_TMP/tableau.sql" <<SQL
$DDL
SET 'sql-client.execution.result-mode' = 'tableau';
SELECT name, SUM(v) AS total
FROM t GROUP BY name;
SQL
sql "$E2E_TMP/out" "$E2E_TMP/err" -f "$E2E_TMP/tableau.sql" </dev/null
expect_success "$E2E_TMP/out" "$E2E_TMP/err"
border="+----+$(printf -- '-%.0s' $(seq 32))+$(printf -- '-%.0s' $(seq 13))+"
{
  echo "[INFO] Execute statement succeeded."
  echo "[INFO] Execute statement succeeded."
  echo "$border"
  printf '| %2s | %30s | %11s |\n' op name total
  echo "$border"
  printf '| %2s | %30s | %11s |\n' +I alice 1 +I bob 2 -U alice 1 +U alice 4
  echo "$border"
  echo "Received a total of 4 rows"
} >"$E2E_TMP/want"
same "$E2E_TMP/want" "$E2E_TMP/out" "tableau result of a -f script"

# 2. CHANGELOG: the print connector's form. 3. TABLE (the default): the materialized result, bob's row first
# (alice's first row was retracted and her new one appended), widths from the content: name 5, total 5.
{
  echo "$DDL"
  echo "SET 'sql-client.execution.result-mode' = 'changelog';"
  echo "SELECT name, SUM(v) AS total FROM t GROUP BY name;"
  echo "RESET 'sql-client.execution.result-mode';"
  echo "SELECT name, SUM(v) AS total FROM t GROUP BY name; SELECT name FROM t WHERE v > 5;"
} >"$E2E_TMP/modes.sql"
sql "$E2E_TMP/out" "$E2E_TMP/err" <"$E2E_TMP/modes.sql"
expect_success "$E2E_TMP/out" "$E2E_TMP/err"
cat >"$E2E_TMP/want" <<'EOF'
[INFO] Execute statement succeeded.
[INFO] Execute statement succeeded.
+I[alice, 1]
+I[bob, 2]
-U[alice, 1]
+U[alice, 4]
[INFO] Execute statement succeeded.
+-------+-------+
|  name | total |
+-------+-------+
|   bob |     2 |
| alice |     4 |
+-------+-------+
2 rows in set
Empty set

Shutting down the session...
done.
EOF
same "$E2E_TMP/want" "$E2E_TMP/out" "changelog and table modes from stdin, two statements on one line"

# 4. An error names the SQL position inside its statement and the session goes on; HELP; QUIT ends the
# client before the statements after it.
printf '%s\n' "$DDL" "SELECT nope" "  FROM t;" "help" "SELECT v FROM t WHERE name = 'bob';" "QUIT;" \
  "SELECT 1 FROM t;" >"$E2E_TMP/errors.sql"
sql "$E2E_TMP/out" "$E2E_TMP/err" <"$E2E_TMP/errors.sql"
expect_success "$E2E_TMP/out" "$E2E_TMP/err"
grep -q -F "[ERROR] Could not execute SQL statement. Reason:" "$E2E_TMP/out" || fail "no [ERROR] line"
grep -q "line 1, column 8: Column 'nope' not found" "$E2E_TMP/out" ||
  { cat "$E2E_TMP/out" >&2; fail "the error does not name nope at line 1, column 8"; }
grep -q "^The following commands are available" "$E2E_TMP/out" || fail "HELP printed no command list"
grep -q -x -F "| v |" "$E2E_TMP/out" && grep -q -x -F "| 2 |" "$E2E_TMP/out" ||
  { cat "$E2E_TMP/out" >&2; fail "the statement after the error did not run"; }
[ "$(grep -c 'rows\? in set' "$E2E_TMP/out")" -eq 1 ] || fail "a statement after QUIT ran"
echo "ok: errors keep the session, HELP, QUIT"

# 5. -f stops at the first failing statement (exit 1); -i runs first; `sluice run -f` takes a script too.
printf '%s\n' "SELECT name FROM missing;" "INSERT INTO nowhere SELECT 1;" >"$E2E_TMP/bad.sql"
echo "$DDL" >"$E2E_TMP/init.sql"
echo "SELECT COUNT(*) AS n FROM t;" >"$E2E_TMP/count.sql"
sql "$E2E_TMP/out" "$E2E_TMP/err" -i "$E2E_TMP/init.sql" -f "$E2E_TMP/bad.sql" </dev/null
[ "$RC" -eq 1 ] || fail "-f with a failing statement: exit $RC, want 1"
[ "$(grep -c -F '[ERROR]' "$E2E_TMP/out")" -eq 1 ] || { cat "$E2E_TMP/out" >&2; fail "-f went on after the error"; }
grep -q "missing" "$E2E_TMP/out" || fail "the error does not name the missing table"
sql "$E2E_TMP/out" "$E2E_TMP/err" -i "$E2E_TMP/init.sql" -f "$E2E_TMP/count.sql" </dev/null
expect_success "$E2E_TMP/out" "$E2E_TMP/err"
grep -q -x -F "| 3 |" "$E2E_TMP/out" || { cat "$E2E_TMP/out" >&2; fail "-i then -f: no count of 3"; }
cat "$E2E_TMP/init.sql" "$E2E_TMP/count.sql" >"$E2E_TMP/run.sql"
run_sluice "$E2E_TMP/out" "$E2E_TMP/err" run -p 1 -f "$E2E_TMP/run.sql"
expect_success "$E2E_TMP/out" "$E2E_TMP/err"
[ "$(tail -n 1 "$E2E_TMP/out")" = "+U[3]" ] || { cat "$E2E_TMP/out" >&2; fail "sluice run -f: no result"; }
echo "ok: -f stops at the first error, -i, sluice run -f"

# 6. Ctrl-C cancels the running query, not the client. The query is unbounded (datagen without
# number-of-rows); SIGINT is sent once its first row was read from the client's stdout.
mkfifo "$E2E_TMP/in"
coproc CL { exec timeout --foreground --kill-after=10 120 "$SLUICE" sql -p 1 <"$E2E_TMP/in" 2>"$E2E_TMP/err"; }
pid=$CL_PID
exec 3<&"${CL[0]}"
exec 4>"$E2E_TMP/in"
printf '%s\n' "$DDL" "CREATE TABLE gen (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '50');" \
  "SET 'sql-client.execution.result-mode' = 'tableau';" "SELECT id FROM gen;" >&4
until_line() {  # until_line REGEX: reads the client's stdout until a line matches (60 s guard per line)
  local line
  while IFS= read -r -t 60 line <&3; do
    echo "$line" >>"$E2E_TMP/session"
    [[ "$line" =~ $1 ]] && return 0
  done
  cat "$E2E_TMP/session" "$E2E_TMP/err" >&2
  fail "the client never printed a line matching '$1'"
}
until_line '^\| \+I \|'
kill -INT "$pid"
until_line '^Query terminated, received a total of [0-9]+ rows?$'
printf '%s\n' "SELECT v FROM t WHERE name = 'bob';" >&4
until_line '^Received a total of 1 row$'
printf '%s\n' "QUIT;" >&4
exec 4>&-
cat <&3 >>"$E2E_TMP/session"
set +e
wait "$pid"
RC=$?
set -e
[ "$RC" -eq 0 ] || { cat "$E2E_TMP/session" "$E2E_TMP/err" >&2; fail "the client exited with $RC after Ctrl-C, want 0"; }
grep -q -x -F "| +I |           2 |" "$E2E_TMP/session" || { cat "$E2E_TMP/session" >&2; fail "no result after the cancelled query"; }
echo "ok: Ctrl-C cancelled the query and the session went on"

# 7. On a terminal: line editing (libedit) and the history file. `script` gives the client a terminal.
if command -v script >/dev/null; then
  printf '%s\n' "$DDL" "SELECT name" "FROM t WHERE v = 3;" "QUIT;" >"$E2E_TMP/tty.sql"
  set +e
  timeout --kill-after=10 120 script -qec "'$SLUICE' sql -p 1 --history '$E2E_TMP/hist'" /dev/null \
    <"$E2E_TMP/tty.sql" >"$E2E_TMP/tty.out" 2>&1
  RC=$?
  set -e
  [ "$RC" -eq 0 ] || { cat -v "$E2E_TMP/tty.out" >&2; fail "the client on a terminal exited with $RC"; }
  grep -a -q "Sluice SQL> " "$E2E_TMP/tty.out" || fail "no prompt on a terminal"
  grep -a -q "| alice |" "$E2E_TMP/tty.out" || { cat -v "$E2E_TMP/tty.out" >&2; fail "no result on a terminal"; }
  # libedit's history format writes a blank as \040.
  grep -q -F 'WHERE\040v\040=\0403;' "$E2E_TMP/hist" || { cat "$E2E_TMP/hist" >&2; fail "the statement is not in the history file"; }
  echo "ok: prompt, result and history on a terminal"
else
  echo "skip: no 'script' command to give the client a terminal"
fi
