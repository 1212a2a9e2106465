#!/usr/bin/env bash
# Bad input: the binary must fail cleanly — exit code 1..123 (not a signal, not the timeout), the error on
# stderr starting with "Error: " (a user error, not an internal one) and naming the place — or, with
# csv.ignore-parse-errors, succeed with the bad field read as NULL.
#   $1 sluice binary, $2 source tree, $3 the case (see the case statement at the bottom).
source "$(dirname "$0")/lib.sh"
CASE=${3:?missing case name}
export SLUICE_TIMEOUT=60

# expect_user_error MAX_LINES NEEDLE...: the last run failed cleanly, stderr has at most MAX_LINES lines and
# contains every NEEDLE (fixed strings).
expect_user_error() {
  local max_lines=$1
  shift
  local err="$E2E_TMP/err"
  echo "--- stderr:"
  cat "$err"
  [ "$RC" -ne 0 ] || fail "sluice exited 0"
  [ "$RC" -ne 124 ] && [ "$RC" -ne 137 ] || fail "sluice hung (killed by the timeout)"
  [ "$RC" -lt 124 ] || fail "sluice exited with $RC (a signal or a failure to start)"
  head -n 1 "$err" | grep -q '^Error: ' || fail "stderr does not start with 'Error: '"
  local lines
  lines=$(wc -l <"$err")
  [ "$lines" -le "$max_lines" ] || fail "stderr has $lines lines, want at most $max_lines"
  for needle in "$@"; do
    grep -q -F -- "$needle" "$err" || fail "stderr does not name '$needle'"
  done
  echo "ok: $CASE (exit code $RC)"
}

# A 3-row CSV "name,n" whose second line has a letter in the INT column.
write_bad_csv() {
  printf 'a,1\nb,x2\nc,3\n' > "$E2E_TMP/bad.csv"
}

# csv_job IGNORE_ERRORS: a script copying the bad CSV to a print sink without identifier.
csv_job() {
  cat > "$E2E_TMP/job.sql" <<SQL
CREATE TABLE src (name STRING, n INT) WITH (
  'connector' = 'filesystem',
  'path' = '$E2E_TMP/bad.csv',
  'format' = 'csv',
  'csv.ignore-parse-errors' = '$1'
);
CREATE TABLE out_t (name STRING, n INT) WITH ('connector' = 'print');
INSERT INTO out_t SELECT name, n FROM src;
SQL
}

case "$CASE" in
  csv_parse_error)
    # Flink fails the job on a field that does not parse; the message names file:line (line 2).
    write_bad_csv
    csv_job false
    run_sluice "$E2E_TMP/out" "$E2E_TMP/err" run -p 1 "$E2E_TMP/job.sql"
    expect_user_error 1 "$E2E_TMP/bad.csv:2"
    ;;
  csv_ignore_parse_errors)
    # With csv.ignore-parse-errors the row is kept and the bad field is NULL (Flink's CsvToRowDataConverters).
    write_bad_csv
    csv_job true
    run_sluice "$E2E_TMP/out" "$E2E_TMP/err" run -p 1 "$E2E_TMP/job.sql"
    expect_success "$E2E_TMP/out" "$E2E_TMP/err"
    printf '+I[a, 1]\n+I[b, null]\n+I[c, 3]\n' > "$E2E_TMP/expected"
    sort "$E2E_TMP/out" > "$E2E_TMP/actual"
    compare_rows "$CASE" "$E2E_TMP/expected" "$E2E_TMP/actual"
    ;;
  unknown_connector_option)
    # Flink's FactoryUtil validation: an option the factory does not know fails the job and is named.
    # (Flink lists unsupported and supported options on several lines, hence up to 60 lines.)
    cat > "$E2E_TMP/job.sql" <<'SQL'
CREATE TABLE g (a INT) WITH ('connector' = 'datagen', 'number-of-rows' = '10', 'rows-per-secnd' = '5');
CREATE TABLE o (a INT) WITH ('connector' = 'blackhole');
INSERT INTO o SELECT a FROM g;
SQL
    run_sluice "$E2E_TMP/out" "$E2E_TMP/err" run "$E2E_TMP/job.sql"
    expect_user_error 60 "rows-per-secnd"
    ;;
  sql_syntax_error)
    # "FROM" cannot start a select item: the error is at line 2, column 11 (S=1 ... ','=9, ' '=10, F=11),
    # followed by the source line and a caret under the F.
    cat > "$E2E_TMP/job.sql" <<'SQL'
CREATE TABLE g (a INT) WITH ('connector' = 'datagen', 'number-of-rows' = '10');
SELECT a, FROM g;
SQL
    run_sluice "$E2E_TMP/out" "$E2E_TMP/err" run "$E2E_TMP/job.sql"
    expect_user_error 3 "line 2, column 11"
    src_line=$(grep -F 'SELECT a, FROM g;' "$E2E_TMP/err" | head -n 1)
    [ -n "$src_line" ] || fail "stderr does not show the failing source line"
    caret_line=$(grep -E '^[[:space:]]*\^$' "$E2E_TMP/err" | head -n 1)
    [ -n "$caret_line" ] || fail "stderr has no caret line"
    prefix=${src_line%%FROM g;*}
    [ "${#prefix}" -eq $((${#caret_line} - 1)) ] ||
      fail "the caret is at offset $((${#caret_line} - 1)), 'FROM' at offset ${#prefix}"
    ;;
  missing_input_file)
    cat > "$E2E_TMP/job.sql" <<SQL
CREATE TABLE src (name STRING, n INT) WITH (
  'connector' = 'filesystem', 'path' = '$E2E_TMP/no-such-dir/in.csv', 'format' = 'csv');
CREATE TABLE o (name STRING, n INT) WITH ('connector' = 'blackhole');
INSERT INTO o SELECT * FROM src;
SQL
    run_sluice "$E2E_TMP/out" "$E2E_TMP/err" run "$E2E_TMP/job.sql"
    # Detected while planning the INSERT: Flink-style "Unable to create a source ..." with the cause and the
    # SQL position (message, blank line, cause, source line, caret).
    expect_user_error 5 "$E2E_TMP/no-such-dir/in.csv"
    ;;
  unknown_dynamic_key)
    # A misspelt -D key is rejected with the closest registered key.
    printf "CREATE TABLE g (a INT) WITH ('connector' = 'datagen', 'number-of-rows' = '1');\n" > "$E2E_TMP/job.sql"
    run_sluice "$E2E_TMP/out" "$E2E_TMP/err" run -D parallelism.defualt=2 "$E2E_TMP/job.sql"
    expect_user_error 1 "parallelism.defualt" "parallelism.default"
    ;;
  unknown_set_key)
    # The same for SET in a script; it is a SQL statement, so the place (line 2) is shown as well.
    cat > "$E2E_TMP/job.sql" <<'SQL'
CREATE TABLE g (a INT) WITH ('connector' = 'datagen', 'number-of-rows' = '1');
SET 'pipeline.max-paralelism' = '64';
SQL
    run_sluice "$E2E_TMP/out" "$E2E_TMP/err" run "$E2E_TMP/job.sql"
    expect_user_error 3 "pipeline.max-paralelism" "pipeline.max-parallelism" "line 2"
    ;;
  missing_sql_file)
    # The OS's reason comes with the path (ENOENT's strerror).
    run_sluice "$E2E_TMP/out" "$E2E_TMP/err" run "$E2E_TMP/absent.sql"
    expect_user_error 1 "Cannot read SQL file '$E2E_TMP/absent.sql': No such file or directory"
    ;;
  unresolvable_host)
    # RFC 2606: a .invalid name never resolves; the error says so and names the host.
    run_sluice "$E2E_TMP/out" "$E2E_TMP/err" list -m nohost.invalid:8081
    expect_user_error 1 "Could not resolve the host 'nohost.invalid'"
    ;;
  empty_jobmanager)
    # -m '' (an unset shell variable) is an error, not the configured default address.
    run_sluice "$E2E_TMP/out" "$E2E_TMP/err" cancel -m '' 0123456789abcdef0123456789abcdef
    expect_user_error 1 "Invalid JobManager address ''"
    ;;
  unknown_command)
    run_sluice "$E2E_TMP/out" "$E2E_TMP/err" frobnicate
    expect_user_error 2 "unknown command 'frobnicate'" "run, explain, sql, list, cancel, savepoint, stop"
    ;;
  bad_time_zone)
    # An offset java.util.TimeZone and java.time.ZoneId read differently (Flink's validateTimeZone):
    # refused by -D itself, and in a script by its SET at line 2.
    printf "CREATE TABLE g (a INT) WITH ('connector' = 'datagen', 'number-of-rows' = '1');\n" > "$E2E_TMP/job.sql"
    run_sluice "$E2E_TMP/out" "$E2E_TMP/err" run -D table.local-time-zone=UTC+8 "$E2E_TMP/job.sql"
    expect_user_error 1 "'table.local-time-zone'" "Invalid time zone" "'GMT+03:00'"
    printf "CREATE TABLE g (a INT) WITH ('connector' = 'datagen', 'number-of-rows' = '1');\nSET 'table.local-time-zone' = 'Mars/Olympus';\n" > "$E2E_TMP/job.sql"
    run_sluice "$E2E_TMP/out" "$E2E_TMP/err" run "$E2E_TMP/job.sql"
    expect_user_error 3 "'table.local-time-zone'" "Mars/Olympus" "line 2"
    ;;
  *)
    fail "unknown case '$CASE'"
    ;;
esac
