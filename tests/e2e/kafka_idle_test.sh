#!/usr/bin/env bash
# Source idleness end to end: `sluice kafka-mock` with topic `ev` of 4 partitions, rows produced with kcat
# into partition 0 only, and an unbounded `sluice run` (scan.parallelism 2, so one source subtask reads
# partitions 0 and 2 and the other 1 and 3, which stay empty) of a 10 s TUMBLE window with
# `table.exec.source.idle-timeout`. Without idleness the empty subtask holds the watermark back and no
# window ever fires; with it the windows whose end the watermark of partition 0 passed are printed while
# the job runs. The test reads them from sluice's stdout, then stops the job with SIGINT (exit 130), and
# compares with an awk oracle over the same rows.
#   $1 sluice binary, $2 source tree.
# Synchronisation: the tools' stdout lines; no sleeps (timeouts are failure guards only).
source "$(dirname "$0")/lib.sh"
command -v kcat >/dev/null || fail "kcat is not installed (scripts/install-deps.sh installs it)"

ROWS="$E2E_TMP/rows.csv"  # k,v,ts in ascending ts
cat >"$ROWS" <<'CSV'
a,1,2015-01-01 00:00:01
b,2,2015-01-01 00:00:04
a,3,2015-01-01 00:00:09
b,4,2015-01-01 00:00:12
a,5,2015-01-01 00:00:15
a,6,2015-01-01 00:00:27
c,7,2015-01-01 00:00:33
CSV

# --- the mock cluster ------------------------------------------------------------------------------------------
exec 3< <(exec timeout --foreground --kill-after=10 "${SLUICE_TIMEOUT:-300}" "$SLUICE" kafka-mock --topic ev:4 \
  2>"$E2E_TMP/mock.err")
MOCK_PID=$!
trap 'kill -INT $MOCK_PID 2>/dev/null || true; rm -rf "$E2E_TMP"' EXIT
BOOTSTRAP=""
while IFS= read -r line <&3; do
  case $line in
    bootstrap.servers=*) BOOTSTRAP=${line#bootstrap.servers=} ;;
    ready) break ;;
  esac
done
[ -n "$BOOTSTRAP" ] && [ "$line" = ready ] || { cat "$E2E_TMP/mock.err" >&2; fail "the mock cluster did not start"; }
kcat -b "$BOOTSTRAP" -P -t ev -p 0 <"$ROWS" || fail "kcat could not produce to partition 0"

# --- oracle: 10 s windows of [00:00:00, 00:01:00), fired when end - 1 ms <= max(ts) - 2 s -------------------------
# Rows are ascending, so none is late; only the windows the final watermark passed are expected.
awk -F, '
  { s = substr($3, 18, 2) + 0; w = int(s / 10) * 10; sum[w, $1] += $2; cnt[w, $1]++; keys[w, $1] = 1
    if (s > max) max = s }
  END {
    for (wk in keys) {
      split(wk, p, SUBSEP); w = p[1]
      if ((w + 10) * 1000 - 1 > (max - 2) * 1000) continue
      start = w == 0 ? "2015-01-01T00:00" : sprintf("2015-01-01T00:00:%02d", w)
      printf "+I[%s, 2015-01-01T00:00:%02d, %s, %d, %d]\n", start, w + 10, p[2], sum[wk], cnt[wk]
    }
  }' "$ROWS" | sort >"$E2E_TMP/expected"
EXPECTED=$(wc -l <"$E2E_TMP/expected")
[ "$EXPECTED" -gt 0 ] || fail "the oracle expects no window"

cat >"$E2E_TMP/job.sql" <<SQL
SET 'table.exec.source.idle-timeout' = '300 ms';
CREATE TABLE t (k STRING, v INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '2' SECOND) WITH (
  'connector' = 'kafka', 'topic' = 'ev', 'properties.bootstrap.servers' = '$BOOTSTRAP', 'format' = 'csv',
  'scan.startup.mode' = 'earliest-offset', 'scan.parallelism' = '2');
SELECT window_start, window_end, k, SUM(v) AS s, COUNT(*) AS c
FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY window_start, window_end, k;
SQL

# --- the unbounded job: read the expected number of rows while it runs, then SIGINT ------------------------------
coproc SL { exec timeout --foreground --kill-after=10 120 "$SLUICE" run -p 2 "$E2E_TMP/job.sql" \
  2>"$E2E_TMP/err" </dev/null; }
pid=$SL_PID
trap 'kill -INT $pid $MOCK_PID 2>/dev/null || true; rm -rf "$E2E_TMP"' EXIT
exec 4<&"${SL[0]}"
: >"$E2E_TMP/got"
for _ in $(seq "$EXPECTED"); do
  IFS= read -r -t 60 row <&4 || { cat "$E2E_TMP/err" >&2; fail "only $(wc -l <"$E2E_TMP/got") window rows while running"; }
  echo "$row" >>"$E2E_TMP/got"
done
cat <&4 >>"$E2E_TMP/got" &
drain=$!
sigint_and_wait "$pid" "$drain"
[ "$RC" -eq 130 ] || { cat "$E2E_TMP/err" >&2; fail "sluice exited with $RC on SIGINT, expected 130"; }
sort "$E2E_TMP/got" >"$E2E_TMP/actual"
diff "$E2E_TMP/expected" "$E2E_TMP/actual" >&2 || fail "window rows differ from the oracle"
echo "ok: $EXPECTED window rows fired while the job ran, with partitions 1 to 3 empty"
