#!/usr/bin/env bash
# Nexmark: the benchmark's query files (bench/nexmark/queries) run unmodified over the nexmark connector, and
# their results equal an independent reference (nexmark_reference.py, Python) computed from the same events,
# which Sluice dumps first through the filesystem sink of the flattened person/auction/bid views. The events
# are the same in both runs: sluice.test.nexmark.base-time fixes their event-time origin (5 s before a
# midnight, so the per-day queries see two days). Each query's blackhole sink is swapped for a print sink;
# its changelog is materialized and compared with the reference's rows.
#   $1 sluice binary, $2 source tree, $3 parallelism.
source "$(dirname "$0")/lib.sh"
P=${3:?missing parallelism}
EVENTS=20000
TPS=1000
BASE=1700006395000   # 2023-11-14 23:59:55 UTC
Q_DIR=bench/nexmark/queries
# The queries Sluice runs today; q18 (last bid per bidder and auction) only at -p 1, where no two bids share a
# millisecond (at -p 2 the generators' timelines overlap, and keep-last on equal times depends on arrival).
DEFAULT_QUERIES="q0 q1 q2 q10 q11 q12 q14 q15 q16 q17 q21 q22"
[ "$P" -eq 1 ] && DEFAULT_QUERIES="$DEFAULT_QUERIES q18"
QUERIES=${NEXMARK_TEST_QUERIES:-$DEFAULT_QUERIES}

ddl() {
  sed -e "s/\${TPS}/$TPS/g" -e "s/\${EVENTS_NUM}/$EVENTS/g" -e 's/${PERSON_PROPORTION}/1/' \
      -e 's/${AUCTION_PROPORTION}/3/' -e 's/${BID_PROPORTION}/46/' "$Q_DIR/ddl_gen.sql"
  sed -e 's/${NEXMARK_TABLE}/datagen/g' "$Q_DIR/ddl_views.sql"
}

# The events, through the filesystem sink of the views.
{
  ddl
  cat <<SQL
CREATE TABLE bid_dump (auction BIGINT, bidder BIGINT, price BIGINT, channel STRING, url STRING,
  \`dateTime\` TIMESTAMP(3), extra STRING) WITH ('connector' = 'filesystem', 'path' = '$E2E_TMP/dump/bid', 'format' = 'csv');
INSERT INTO bid_dump SELECT * FROM bid;
SQL
} > "$E2E_TMP/dump.sql"
run_sluice "$E2E_TMP/dump.out" "$E2E_TMP/dump.err" run -p "$P" -D "sluice.test.nexmark.base-time=$BASE" "$E2E_TMP/dump.sql"
expect_success "$E2E_TMP/dump.out" "$E2E_TMP/dump.err"
bids=$(cat "$E2E_TMP"/dump/bid/*.csv | wc -l)
# 20000 events from id 2 on: 400 epochs of 46 bids.
[ "$bids" -eq 18400 ] || fail "dumped $bids bids, want 18400"

# q12's windows follow the clock: fold its rows "+I[bidder, count, start, end]" into each bidder's total,
# failing on a window that is not 10 s long.
fold_q12() {
  python3 -c '
import sys, datetime
from collections import defaultdict
def ms(t):
    for f in ("%Y-%m-%dT%H:%M:%S.%f", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M"):
        try:
            return datetime.datetime.strptime(t, f).timestamp() * 1000
        except ValueError:
            pass
    sys.exit("q12: not a timestamp: " + t)
total = defaultdict(int)
for line in sys.stdin:
    bidder, count, start, end = line.strip()[3:-1].split(", ")
    if ms(end) - ms(start) != 10000:
        sys.exit("q12: window " + start + " .. " + end + " is not 10 s long")
    total[int(bidder)] += int(count)
for line in sorted("+I[%d, %d]" % (b, n) for b, n in total.items()):
    print(line)
'
}

# q10 writes files partitioned by day and minute (the events span a midnight): compare the part files' rows,
# each with its partition directory, and check that every partition was committed (_SUCCESS).
run_q10() {
  local out=$E2E_TMP/q10
  { ddl; sed -e "s|\${NEXMARK_DIR}|$out|" -e 's/${SUBMIT_TIME}/1/' "$Q_DIR/q10.sql"; } > "$E2E_TMP/q10.sql"
  run_sluice "$E2E_TMP/q10.out" "$E2E_TMP/q10.err" run -p "$P" -D "sluice.test.nexmark.base-time=$BASE" "$E2E_TMP/q10.sql"
  expect_success "$E2E_TMP/q10.out" "$E2E_TMP/q10.err"
  local dir=$out/data/output/1/bid
  python3 tests/e2e/nexmark_reference.py q10-files "$dir" > "$E2E_TMP/q10.got"
  python3 tests/e2e/nexmark_reference.py q10 "$E2E_TMP/dump" > "$E2E_TMP/q10.want"
  [ -s "$E2E_TMP/q10.want" ] || fail "q10: the reference has no rows"
  if ! cmp -s "$E2E_TMP/q10.got" "$E2E_TMP/q10.want"; then
    diff "$E2E_TMP/q10.want" "$E2E_TMP/q10.got" | head -n 20 >&2
    fail "q10 at -p $P differs from the reference ($(wc -l <"$E2E_TMP/q10.got") rows, want $(wc -l <"$E2E_TMP/q10.want"))"
  fi
  local parts
  parts=$(cut -f1 "$E2E_TMP/q10.want" | sort -u)
  [ "$(echo "$parts" | grep -c '^dt=')" -ge 2 ] || fail "q10: expected partitions of two days"
  for d in $parts; do [ -f "$dir/$d/_SUCCESS" ] || fail "q10: partition $d has no _SUCCESS"; done
  echo "ok: q10 at -p $P ($(wc -l <"$E2E_TMP/q10.want") rows in $(echo "$parts" | wc -l) partitions)"
}

for q in $QUERIES; do
  if [ "$q" = q10 ]; then
    run_q10
    continue
  fi
  { ddl; sed -e "s/'connector' = 'blackhole'/'connector' = 'print', 'print-identifier' = '$q'/" "$Q_DIR/$q.sql"; } \
    > "$E2E_TMP/$q.sql"
  run_sluice "$E2E_TMP/$q.out" "$E2E_TMP/$q.err" run -p "$P" -D "sluice.test.nexmark.base-time=$BASE" "$E2E_TMP/$q.sql"
  expect_success "$E2E_TMP/$q.out" "$E2E_TMP/$q.err"
  sink_lines "$q" "$E2E_TMP/$q.out" | materialize > "$E2E_TMP/$q.got"
  if [ "$q" = q12 ]; then
    fold_q12 < "$E2E_TMP/$q.got" > "$E2E_TMP/$q.folded" || fail "q12: bad windows"
    mv "$E2E_TMP/$q.folded" "$E2E_TMP/$q.got"
  fi
  python3 tests/e2e/nexmark_reference.py "$q" "$E2E_TMP/dump" > "$E2E_TMP/$q.want"
  [ -s "$E2E_TMP/$q.want" ] || fail "$q: the reference has no rows"
  if ! cmp -s "$E2E_TMP/$q.got" "$E2E_TMP/$q.want"; then
    diff "$E2E_TMP/$q.want" "$E2E_TMP/$q.got" | head -n 20 >&2
    fail "$q at -p $P differs from the reference ($(wc -l <"$E2E_TMP/$q.got") rows, want $(wc -l <"$E2E_TMP/$q.want"))"
  fi
  echo "ok: $q at -p $P ($(wc -l <"$E2E_TMP/$q.want") rows)"
done
