#!/usr/bin/env bash
# Oracle test: the main job's results (tests/e2e/flights_main_job.sql, a pinned copy of
# examples/flights.sql) against the same aggregations computed by SQLite over the same CSV.
#   $1 sluice binary, $2 source tree, $3 parallelism (default 2), further arguments go to `sluice run` (e.g.
#   -D local.number-taskmanager=2 to run over two TaskManagers talking TCP); or $4 = `kafka`: the same job
#   reading the flights from Kafka (examples/kafka/run.sh flights: a topic of 3 partitions loaded from the CSV
#   in a mock Kafka cluster, read with 'scan.parallelism' = '3'); then $5 (optional) replaces that scan
#   parallelism (`default`: none, the source runs at $3), so a subtask may read several partitions side by side:
#   its watermark is then the minimum over its partitions (a per-subtask watermark would drop rows as late).
# Checks (each row compared as printed, "+I[...]"):
#  - hourly: one +I row per (TUMBLE hour of the scheduled departure, airline) with COUNT(*), SUM(CANCELLED),
#    AVG(DEPARTURE_DELAY) (INT: Flink's AVG of INT is SUM / COUNT in integer arithmetic, truncated toward zero,
#    NULLs ignored, NULL when every value is NULL) and MAX(DEPARTURE_DELAY);
#  - per_destination: the changelog materialized (retract semantics) equals SQLite's GROUP BY over ANC flights;
#    with `-D execution.runtime-mode=batch` among the arguments the job runs in BATCH mode and prints final
#    rows only: one +I per destination, equal to SQLite's rows as printed (no materializing).
source "$(dirname "$0")/lib.sh"
PARALLELISM=${3:-2}
SOURCE=file
EXTRA_ARGS=("${@:4}")
if [ "${4:-}" = kafka ]; then
  SOURCE=kafka
  EXTRA_ARGS=()
  [ $# -le 5 ] || fail "the kafka mode takes only a scan parallelism after 'kafka'"
  SCAN_PARALLELISM=${5:-}
fi

BATCH=0
for a in "${EXTRA_ARGS[@]}"; do
  case "${a,,}" in execution.runtime-mode=batch) BATCH=1 ;; esac
done

command -v sqlite3 >/dev/null || fail "sqlite3 is not installed (scripts/install-deps.sh installs it)"

# SQLite's integer division must truncate toward zero like Java's (Flink's AVG of INT): -7/2 = -3, not -4.
[ "$(sqlite3 :memory: 'SELECT -7 / 2, 7 / 2, CAST(-7.0 AS INTEGER) / 2;')" = "-3|3|-3" ] ||
  fail "SQLite integer division does not truncate toward zero"

# The engine drops late rows (window already fired) and SQLite does not, so the comparison holds only if no
# row is late. The watermark is MAX(sched_dep) - 1 minute; a tumbling window [s, e) fires once the watermark
# reaches e - 1 ms. A row with timestamp t >= (largest timestamp seen so far) - 1 minute has e > t >= watermark,
# so its window has not fired: check every row meets that (the file is sorted, so t >= largest seen holds).
# Timestamps in minutes from DAY and the HHmm SCHEDULED_DEPARTURE; every row is in January 2015.
# With parallelism N each source subtask reads a contiguous byte range, i.e. a subsequence of the file, which
# is then sorted too; the window operator takes the minimum watermark over its inputs.
awk -F, '
  $1 != 2015 || $2 != 1 || $10 !~ /^[0-2][0-9][0-5][0-9]$/ { print "unexpected date or time at line " NR ": " $0; bad = 1; exit }
  {
    t = ($3 * 24 + substr($10, 1, 2)) * 60 + substr($10, 3, 2)
    if (NR > 1 && t < max_t - 1) { print "late row at line " NR ": " $0; bad = 1; exit }
    if (t > max_t) max_t = t
  }
  END { exit bad }
' "$FLIGHTS_CSV" >&2 || fail "the input has rows the engine would drop as late; the oracle does not apply"

# --- SQLite oracle ------------------------------------------------------------------------------------------
DB="$E2E_TMP/flights.db"
load_flights_sqlite "$DB"
sqlite3 "$DB" <<SQL
-- .import stores an empty field as ''; the engine reads an empty INT field as NULL (csv.ignore-parse-errors).
UPDATE flights SET DEPARTURE_DELAY = NULL WHERE DEPARTURE_DELAY = '';
UPDATE flights SET CANCELLED = NULL WHERE CANCELLED = '';
UPDATE flights SET DAY = NULL WHERE DAY = '';
SQL

# Every value the queries use must be a clean integer (or NULL), else the engine would read NULL where
# SQLite keeps text.
check=$(sqlite3 "$DB" "SELECT COUNT(*),
  SUM(typeof(DEPARTURE_DELAY) NOT IN ('integer', 'null')),
  SUM(typeof(CANCELLED) <> 'integer'), SUM(typeof(DAY) <> 'integer'),
  SUM(DEPARTURE_DELAY IS NULL) FROM flights;")
# 55,105 rows (examples/data/README.md); 1,195 empty DEPARTURE_DELAY fields (awk -F, '\$12 == ""' | wc -l).
[ "$check" = "55105|0|0|0|1195" ] || fail "SQLite import check: got '$check', want '55105|0|0|0|1195'"

sqlite3 "$DB" > "$E2E_TMP/hourly.expected" <<'SQL'
WITH w AS (
  SELECT printf('%04d-%02d-%02d %s:00:00', YEAR, MONTH, DAY, substr(SCHEDULED_DEPARTURE, 1, 2)) AS ws,
         AIRLINE, CANCELLED, DEPARTURE_DELAY
  FROM flights)
SELECT '+I[' || strftime('%Y-%m-%dT%H:%M', ws) || ', ' || strftime('%Y-%m-%dT%H:%M', ws, '+1 hour') || ', '
       || AIRLINE || ', ' || COUNT(*) || ', ' || coalesce(SUM(CANCELLED), 'null') || ', '
       || coalesce(CAST(SUM(DEPARTURE_DELAY) AS INTEGER) / COUNT(DEPARTURE_DELAY), 'null') || ', '
       || coalesce(MAX(DEPARTURE_DELAY), 'null') || ']'
FROM w GROUP BY ws, AIRLINE;
SQL
sort -o "$E2E_TMP/hourly.expected" "$E2E_TMP/hourly.expected"

sqlite3 "$DB" > "$E2E_TMP/per_destination.expected" <<'SQL'
SELECT '+I[' || DESTINATION_AIRPORT || ', ' || COUNT(*) || ']'
FROM flights WHERE ORIGIN_AIRPORT = 'ANC' GROUP BY DESTINATION_AIRPORT;
SQL
sort -o "$E2E_TMP/per_destination.expected" "$E2E_TMP/per_destination.expected"

# The oracle itself must see the whole input: hourly counts add up to every row, ANC counts to its 154 rows
# (awk -F, '$8 == "ANC"' | wc -l).
total=$(sed -E 's/^\+I\[[^,]*, [^,]*, [^,]*, ([0-9]+),.*/\1/' "$E2E_TMP/hourly.expected" | awk '{ s += $1 } END { print s }')
[ "$total" = 55105 ] || fail "oracle hourly counts add up to $total, not 55105"
anc=$(sed -E 's/.*, ([0-9]+)\]$/\1/' "$E2E_TMP/per_destination.expected" | awk '{ s += $1 } END { print s }')
[ "$anc" = 154 ] || fail "oracle ANC counts add up to $anc, not 154"

# --- the engine ---------------------------------------------------------------------------------------------
if [ "$SOURCE" = kafka ]; then
  # examples/kafka/flights.sql must stay the main job with a Kafka source: the same statements after its DDL.
  diff <(sed -n '/^CREATE TABLE hourly_airline_stats/,$p' tests/e2e/flights_main_job.sql) \
    <(sed -n '/^CREATE TABLE hourly_airline_stats/,$p' examples/kafka/flights.sql) >&2 ||
    fail "examples/kafka/flights.sql no longer runs the main job's queries"
  set +e
  SLUICE=$SLUICE SLUICE_PARALLELISM=$PARALLELISM SLUICE_SCAN_PARALLELISM=${SCAN_PARALLELISM:-} timeout --kill-after=10 "${SLUICE_TIMEOUT:-300}" \
    bash examples/kafka/run.sh flights >"$E2E_TMP/out" 2>"$E2E_TMP/err" </dev/null
  RC=$?
  set -e
else
  run_sluice "$E2E_TMP/out" "$E2E_TMP/err" run -p "$PARALLELISM" "${EXTRA_ARGS[@]}" tests/e2e/flights_main_job.sql
fi
expect_success "$E2E_TMP/out" "$E2E_TMP/err"

sink_lines hourly "$E2E_TMP/out" | sort > "$E2E_TMP/hourly.actual"
# A window aggregate is append-only: every hourly row must be an insertion, each exactly once.
if grep -v '^+I\[' "$E2E_TMP/hourly.actual" | head -n 5 | grep -q .; then
  grep -v '^+I\[' "$E2E_TMP/hourly.actual" | head -n 5 >&2
  fail "hourly printed rows that are not +I"
fi
compare_rows "hourly at -p $PARALLELISM" "$E2E_TMP/hourly.expected" "$E2E_TMP/hourly.actual"

sink_lines per_destination "$E2E_TMP/out" > "$E2E_TMP/per_destination.changelog"
if [ "$BATCH" = 1 ]; then
  # BATCH: final results only, each destination's count once as +I.
  if grep -v '^+I\[' "$E2E_TMP/per_destination.changelog" | head -n 5 | grep -q .; then
    grep -v '^+I\[' "$E2E_TMP/per_destination.changelog" | head -n 5 >&2
    fail "per_destination printed rows that are not +I in BATCH mode"
  fi
  sort "$E2E_TMP/per_destination.changelog" > "$E2E_TMP/per_destination.actual"
else
  materialize < "$E2E_TMP/per_destination.changelog" > "$E2E_TMP/per_destination.actual"
fi
compare_rows "per_destination at -p $PARALLELISM" "$E2E_TMP/per_destination.expected" "$E2E_TMP/per_destination.actual"

# Every printed line belongs to one of the two sinks.
other=$(grep -v -E '^(hourly|per_destination)(:[0-9]+)?> ' "$E2E_TMP/out" | head -n 5 || true)
[ -z "$other" ] || fail "unexpected lines on stdout: $other"
