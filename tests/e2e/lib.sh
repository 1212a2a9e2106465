# Helpers shared by the end-to-end tests (sourced by the *_test.sh scripts).
# Every test script takes: $1 = the sluice binary, $2 = the source tree; it runs with the source
# tree as its working directory (so the examples' relative paths resolve) and exits non-zero on failure.
set -euo pipefail

SLUICE=${1:?usage: $0 SLUICE_BINARY SOURCE_DIR [CASE]}
SRC_DIR=${2:?usage: $0 SLUICE_BINARY SOURCE_DIR [CASE]}
cd "$SRC_DIR"
export LC_ALL=C

E2E_TMP=$(mktemp -d "${TMPDIR:-/tmp}/sluice-e2e.XXXXXX")
trap 'rm -rf "$E2E_TMP"' EXIT

FLIGHTS_CSV=examples/data/flights_2015-01-01_to_04.csv

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# run_sluice OUT ERR ARGS...: runs the binary under a timeout (SLUICE_TIMEOUT seconds, default 300)
# with stdout to OUT and stderr to ERR; sets RC. Never fails by itself.
run_sluice() {
  local out=$1 err=$2
  shift 2
  set +e
  timeout --kill-after=10 "${SLUICE_TIMEOUT:-300}" "$SLUICE" "$@" >"$out" 2>"$err" </dev/null
  RC=$?
  set -e
}

# expect_success OUT ERR: fails (showing stderr) unless the last run_sluice exited 0.
expect_success() {
  if [ "$RC" -ne 0 ]; then
    echo "--- stderr:" >&2
    head -n 40 "$2" >&2
    [ "$RC" -eq 124 ] && fail "sluice timed out"
    [ "$RC" -gt 128 ] && fail "sluice died of signal $((RC - 128))"
    fail "sluice exited with $RC"
  fi
}

# sink_lines ID FILE: the rows printed by the print sink with identifier ID ("ID> row" at parallelism 1,
# "ID:N> row" above), prefix removed.
sink_lines() {
  sed -n -E "s/^$1(:[0-9]+)?> //p" "$2"
}

# materialize: reads changelog rows ("+I[...]", "-U[...]", "+U[...]", "-D[...]") on stdin and prints the
# final table as "+I[...]" rows, sorted: +I/+U add the row, -U/-D remove one copy of the identical row
# (Flink's retract semantics). Fails on a line that is no changelog row or on retracting a row not present.
materialize() {
  awk '
    {
      kind = substr($0, 1, 2); row = substr($0, 3)
      if (substr(row, 1, 1) != "[" || substr(row, length(row)) != "]") {
        print "not a changelog row: " $0 > "/dev/stderr"; bad = 1; next
      }
      if (kind == "+I" || kind == "+U") n[row]++
      else if (kind == "-U" || kind == "-D") {
        if (n[row] > 0) n[row]--
        else { print "retracts a row that is not present: " $0 > "/dev/stderr"; bad = 1 }
      } else { print "unknown row kind: " $0 > "/dev/stderr"; bad = 1 }
    }
    END { for (r in n) for (i = 0; i < n[r]; i++) print "+I" r; exit bad }
  ' | sort
}

# compare_rows NAME EXPECTED ACTUAL: both files sorted; fails with a diff (first 40 lines) when they differ.
compare_rows() {
  local name=$1 expected=$2 actual=$3
  if [ ! -s "$expected" ]; then fail "$name: the expected result is empty"; fi
  if ! diff -u --label "expected ($name)" --label "actual ($name)" "$expected" "$actual" >"$E2E_TMP/diff"; then
    echo "--- $name: $(wc -l <"$expected") expected rows, $(wc -l <"$actual") actual rows; diff (first 40 lines):" >&2
    head -n 40 "$E2E_TMP/diff" >&2
    fail "$name differs"
  fi
  echo "ok: $name ($(wc -l <"$expected") rows)"
}

# load_flights_sqlite DB: imports $FLIGHTS_CSV into table `flights` (the 31 columns of the CSV) of the SQLite
# database DB. Empty fields are stored as ''.
load_flights_sqlite() {
  sqlite3 "$1" <<SQL
CREATE TABLE flights (
  YEAR INTEGER, MONTH INTEGER, DAY INTEGER, DAY_OF_WEEK INTEGER, AIRLINE TEXT, FLIGHT_NUMBER INTEGER,
  TAIL_NUMBER TEXT, ORIGIN_AIRPORT TEXT, DESTINATION_AIRPORT TEXT, SCHEDULED_DEPARTURE TEXT,
  DEPARTURE_TIME TEXT, DEPARTURE_DELAY INTEGER, TAXI_OUT INTEGER, WHEELS_OFF TEXT, SCHEDULED_TIME INTEGER,
  ELAPSED_TIME INTEGER, AIR_TIME INTEGER, DISTANCE INTEGER, WHEELS_ON TEXT, TAXI_IN INTEGER,
  SCHEDULED_ARRIVAL TEXT, ARRIVAL_TIME TEXT, ARRIVAL_DELAY INTEGER, DIVERTED INTEGER, CANCELLED INTEGER,
  CANCELLATION_REASON TEXT, AIR_SYSTEM_DELAY INTEGER, SECURITY_DELAY INTEGER, AIRLINE_DELAY INTEGER,
  LATE_AIRCRAFT_DELAY INTEGER, WEATHER_DELAY INTEGER);
.mode csv
.import $FLIGHTS_CSV flights
SQL
}

# Sends one SIGINT to PID (sluice under `timeout --foreground`, which forwards it once), waits for it, then
# for the stdout drainer DRAIN; sets RC to sluice's exit status.
sigint_and_wait() {
  kill -INT "$1"
  set +e
  wait "$1"
  RC=$?
  set -e
  wait "$2" || true
}
