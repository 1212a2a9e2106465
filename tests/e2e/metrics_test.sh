#!/usr/bin/env bash
# `sluice run --metrics=FILE.json` writes every job's final metrics with Flink's names (shape in
# src/cli/README.md). A filter + GROUP BY over the flights file at -p 2: the record counts of the source and
# aggregate vertices equal the rows awk counts; each subtask's busy/idle/back-pressured time adds up to
# 1000 ms per second; pool usages and buffer counts stay within their bounds; a source under a watermark-lag
# threshold is backlog from its first row and reports none once it finished, and its aggregate sorts every
# row, spilling only when its sort memory is small. Then, under a terminal (`script`),
# the progress line shows busy and back-pressured percentages per vertex.
#   $1 sluice binary, $2 source tree.
source "$(dirname "$0")/lib.sh"
command -v jq >/dev/null || fail "jq is needed (scripts/install-deps.sh installs it)"

# The flights table of the main example (all 31 columns), then a filtered count per airline.
sed -n '/^CREATE TABLE flights (/,/^);/p' examples/flights.sql >"$E2E_TMP/job.sql"
cat >>"$E2E_TMP/job.sql" <<'SQL'
CREATE TABLE long_flights (airline STRING, flights BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO long_flights SELECT AIRLINE, COUNT(*) FROM flights WHERE DISTANCE > 1000 GROUP BY AIRLINE;
SQL

run_sluice "$E2E_TMP/out" "$E2E_TMP/err" run -p 2 --metrics="$E2E_TMP/metrics.json" "$E2E_TMP/job.sql"
expect_success "$E2E_TMP/out" "$E2E_TMP/err"
M="$E2E_TMP/metrics.json"
jq -e . "$M" >/dev/null || fail "the metrics file is not JSON"

# Rows with DISTANCE (18th field) above 1000, counted by awk.
long=$(awk -F, '$18 > 1000' "$FLIGHTS_CSV" | wc -l)
[ "$long" -gt 0 ] || fail "no long flights in the data"

check() {  # check DESCRIPTION JQ_FILTER: the filter must print true
  local got
  got=$(jq -r "$2" "$M") || fail "$1: jq failed"
  [ "$got" = "true" ] || fail "$1 (got: $got)"
  echo "ok: $1"
}
check "one finished job" '(.jobs | length) == 1 and .jobs[0].state == "FINISHED"'
check "two vertices" '(.jobs[0].vertices | length) == 2'
src='.jobs[0].vertices[] | select(.name | startswith("Source: flights"))'
agg='.jobs[0].vertices[] | select(.name | startswith("GroupAggregate"))'
got=$(jq -r "$src | .metrics.numRecordsOut" "$M")
[ "$got" = "$long" ] || fail "source numRecordsOut: got $got, want $long (awk)"
got=$(jq -r "$agg | .metrics.numRecordsIn" "$M")
[ "$got" = "$long" ] || fail "aggregate numRecordsIn: got $got, want $long (awk)"
echo "ok: numRecordsOut of the source and numRecordsIn of the aggregate = $long (awk)"
check "a source reads no network records, a sink writes none" \
  "([$src | .metrics.numRecordsIn] == [0]) and ([$agg | .metrics.numRecordsOut] == [0])"
check "subtask records add up to the vertex's" \
  '[.jobs[0].vertices[] | ([.subtasks[].metrics.numRecordsOut] | add) == .metrics.numRecordsOut and
    ([.subtasks[].metrics.numRecordsIn] | add) == .metrics.numRecordsIn] | all'
check "one entry per subtask" '[.jobs[0].vertices[] | (.subtasks | length) == .parallelism and .parallelism == 2] | all'
check "busy + idle + backPressured = 1000 ms/s for every subtask that ran" \
  '[.jobs[0].vertices[].subtasks[].metrics | select(.runningTimeMs > 0) |
    (.busyTimeMsPerSecond + .idleTimeMsPerSecond + .backPressuredTimeMsPerSecond - 1000 | fabs) < 0.001 and
    .accumulatedBusyTimeMs + .accumulatedIdleTimeMs + .accumulatedBackPressuredTimeMs == .runningTimeMs] | all'
check "time metrics within [0, 1000]" \
  '[.jobs[0].vertices[] | (.metrics, .subtasks[].metrics) | .busyTimeMsPerSecond, .idleTimeMsPerSecond,
    .backPressuredTimeMsPerSecond | . >= 0 and . <= 1000] | all'
check "pool usages within [0, 1]" \
  '[.jobs[0].vertices[] | (.metrics, .subtasks[].metrics, .subtasks[].gates[]) | .inPoolUsage // empty, .outPoolUsage // empty |
    . >= 0 and . <= 1] | all'
# Each source subtask writes to 2 subpartitions: its pool holds at most 2 * 10 buffers
# (taskmanager.network.memory.max-buffers-per-channel = 10 by default).
check "output pools within the configured buffers" \
  "[$src | .subtasks[].partitions[] | .subpartitions == 2 and .maxBuffers == 20 and .peakBuffersInUse <= .maxBuffers] | all"
check "every byte written into buffers was read" \
  "([$src | .metrics.numBytesOut] == [$agg | .metrics.numBytesIn]) and ([$src | .metrics.numBytesOut][0] > 0) and
   ([$agg | .subtasks[].gates[].inFlightBytes] | all(. == 0))"

check "no source reports backlog without a lag threshold" '[.jobs[0].vertices[].metrics.backlogSubtasks == 0] | all'

# FLIP-328: the flights are from 2015, so every watermark lags the wall clock by years, far above a 1 min
# threshold: the source is backlog from its first row to its end, so in mixed mode (interval-during-backlog
# 0) the aggregate sorts every row it gets; once the source has finished it reports backlog no more.
run_sluice "$E2E_TMP/out" "$E2E_TMP/err" run -p 1 -D pipeline.backlog.watermark-lag-threshold='1 min' \
  -D execution.checkpointing.interval-during-backlog=0 --metrics="$E2E_TMP/backlog.json" "$E2E_TMP/job.sql"
expect_success "$E2E_TMP/out" "$E2E_TMP/err"
M="$E2E_TMP/backlog.json"
check "the aggregate sorted every row from the first (awk: $long)" "[$agg | .metrics.numRecordsSorted] == [$long]"
check "no vertex reports backlog once the source finished" '[.jobs[0].vertices[].metrics.backlogSubtasks == 0] | all'
check "nothing sorts once the job finished" '[.jobs[0].vertices[].metrics.sortingSubtasks == 0] | all'
# The default 128 mb of sort memory hold the long flights' airline rows: nothing spilled. With 1 kb (the
# smallest setting) the same rows spill, and the same number of them is sorted.
check "128 mb of sort memory spill nothing" "[$agg | .metrics.numBytesSpilled] == [0]"
run_sluice "$E2E_TMP/out" "$E2E_TMP/err" run -p 1 -D pipeline.backlog.watermark-lag-threshold='1 min' \
  -D execution.checkpointing.interval-during-backlog=0 -D execution.sorted-inputs.memory='1 kb' \
  --metrics="$E2E_TMP/spill.json" "$E2E_TMP/job.sql"
expect_success "$E2E_TMP/out" "$E2E_TMP/err"
M="$E2E_TMP/spill.json"
check "1 kb of sort memory: the aggregate sorted $long rows (awk) and spilled" \
  "[$agg | .metrics.numRecordsSorted] == [$long] and ([$agg | .metrics.numBytesSpilled][0] > 0)"
check "only the aggregate sorts: the source's vertex spilled and sorted nothing" \
  "[$src | .metrics.numRecordsSorted, .metrics.numBytesSpilled] == [0, 0]"
M="$E2E_TMP/metrics.json"

# On a terminal, the progress line shows per vertex how busy and back pressured it was (a job of about 3 s:
# the line is redrawn every 2 s). `script` gives sluice a terminal.
if command -v script >/dev/null; then
  cat >"$E2E_TMP/slow.sql" <<'SQL'
CREATE TABLE gen (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '2000', 'number-of-rows' = '6000',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '6000');
CREATE TABLE bh (k BIGINT, c BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO bh SELECT id % 10, COUNT(*) FROM gen GROUP BY id % 10;
SQL
  set +e
  timeout --kill-after=10 120 script -qec "'$SLUICE' run -p 1 --metrics='$E2E_TMP/slow.json' '$E2E_TMP/slow.sql'" \
    /dev/null >"$E2E_TMP/tty" </dev/null
  RC=$?
  set -e
  expect_success "$E2E_TMP/tty" "$E2E_TMP/tty"
  line=$(tr '\r' '\n' <"$E2E_TMP/tty" | grep -a -o -E '\[Source: gen[^]]*\] [0-9]+ in/[0-9]+ out busy [0-9]+% bp [0-9]+% \| \[GroupAggregate[^]]*\] [0-9]+ in/[0-9]+ out busy [0-9]+% bp [0-9]+%' | head -n 1 || true)
  [ -n "$line" ] || { cat -v "$E2E_TMP/tty" >&2; fail "no progress line with busy/bp per vertex"; }
  echo "ok: progress line: $line"
  # A datagen source at 2,000 rows/s waits for its next rows most of the time: idle, not busy.
  M="$E2E_TMP/slow.json"
  check "a rate-limited source is mostly idle" \
    '[.jobs[0].vertices[] | select(.name | startswith("Source: gen")) | .subtasks[].metrics.idleTimeMsPerSecond > 500] == [true]'

  # Result rows and print-sink lines arrive while the progress line is shown (20 rows at 5 rows/s: the line
  # is drawn at 2 s, rows keep coming): each is written after clearing it (\r ESC[K), never glued to it.
  # What the terminal shows of a line is what follows its last \r (the tty turns \n into \r\n).
  cat >"$E2E_TMP/rows.sql" <<'SQL'
CREATE TABLE gen (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '5', 'number-of-rows' = '20',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '20');
CREATE TABLE shown (id BIGINT) WITH ('connector' = 'print', 'print-identifier' = 'row');
INSERT INTO shown SELECT id FROM gen;
SELECT id FROM gen;
SQL
  set +e
  timeout --kill-after=10 120 script -qec "'$SLUICE' run -p 1 '$E2E_TMP/rows.sql'" /dev/null >"$E2E_TMP/tty2" </dev/null
  RC=$?
  set -e
  expect_success "$E2E_TMP/tty2" "$E2E_TMP/tty2"
  grep -a -q 'busy [0-9]*% bp' "$E2E_TMP/tty2" || fail "no progress line while the rows came"
  sed 's/\r$//' "$E2E_TMP/tty2" | awk -F'\r' '{ print $NF }' | sed 's/\x1b\[K//g' >"$E2E_TMP/screen"
  glued=$(grep -a -E '(\+I\[|row> )' "$E2E_TMP/screen" | grep -a -v -E '^(\+I\[[0-9]+\]|row> \+I\[[0-9]+\])$' || true)
  [ -z "$glued" ] || { cat -v "$E2E_TMP/tty2" >&2; fail "rows glued to the progress line: $glued"; }
  [ "$(grep -a -c -E '^\+I\[[0-9]+\]$' "$E2E_TMP/screen")" -eq 20 ] || fail "expected 20 result rows on the terminal"
  [ "$(grep -a -c -E '^row> \+I\[[0-9]+\]$' "$E2E_TMP/screen")" -eq 20 ] || fail "expected 20 printed rows on the terminal"
  echo "ok: rows never share a line with the progress line"
  # The same job (4 s, past the 2 s progress interval) with stdout and stderr redirected: no progress line,
  # no terminal control characters.
  run_sluice "$E2E_TMP/rows.out" "$E2E_TMP/rows.err" run -p 1 "$E2E_TMP/rows.sql"
  expect_success "$E2E_TMP/rows.out" "$E2E_TMP/rows.err"
  if grep -a -q -E $'\r|\x1b|busy' "$E2E_TMP/rows.out" "$E2E_TMP/rows.err"; then
    fail "progress line or terminal control characters in redirected output"
  fi
  echo "ok: no progress line when not on a terminal"
else
  echo "skip: no 'script' command to give sluice a terminal"
fi
