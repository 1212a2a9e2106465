#!/usr/bin/env bash
# What checkpoints cost: the flights hourly job and a high-cardinality GROUP BY (datagen, many keys, into
# blackhole) with checkpoints off, every second on the heap backend, every second on RocksDB (full
# snapshots) and on RocksDB with incremental checkpoints (rocksdb-inc). Prints a table: rows/s, completed
# checkpoints, last checkpoint duration, its size (incremental: what it uploaded), its full size, and the
# slowest subtask's synchronous (task thread) and asynchronous part of it (from `sluice run --metrics`).
# bench/sluice_snapshot_bench isolates the task thread's share on the heap.
# Not a test: the machines are noisy; compare ratios within one run.
#   [BACKENDS="off hashmap"] bench/checkpoint_bench.sh [SLUICE_BINARY] [KEYS] [ROWS]
set -euo pipefail
cd "$(dirname "$0")/.."
SLUICE=${1:-build/release/src/cli/sluice}
KEYS=${2:-1000000}
ROWS=${3:-4000000}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/sluice-ckbench.XXXXXX")
trap 'rm -rf "$TMP" || true' EXIT

# The flights hourly query into blackhole (the main job's window aggregation without printing).
sed -n '/^CREATE TABLE flights/,/^);/p' examples/flights.sql > "$TMP/flights.sql"
cat >> "$TMP/flights.sql" <<'SQL'
CREATE TABLE out_t (ws TIMESTAMP(3), we TIMESTAMP(3), a STRING, n BIGINT, c INT, d INT, m INT)
WITH ('connector' = 'blackhole');
INSERT INTO out_t
SELECT window_start, window_end, AIRLINE, COUNT(*), SUM(CANCELLED), AVG(DEPARTURE_DELAY), MAX(DEPARTURE_DELAY)
FROM TABLE(TUMBLE(TABLE flights, DESCRIPTOR(sched_dep), INTERVAL '1' HOUR))
GROUP BY window_start, window_end, AIRLINE;
SQL

cat > "$TMP/groupby.sql" <<SQL
CREATE TABLE src (k BIGINT, v BIGINT) WITH (
  'connector' = 'datagen', 'number-of-rows' = '$ROWS', 'rows-per-second' = '1000000000',
  'fields.k.min' = '1', 'fields.k.max' = '$KEYS', 'fields.v.min' = '1', 'fields.v.max' = '100');
CREATE TABLE out_t (k BIGINT, n BIGINT, s BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO out_t SELECT k, COUNT(*), SUM(v) FROM src GROUP BY k;
SQL

run() {  # name script rows backend(off|hashmap|rocksdb|rocksdb-inc)
  local name=$1 script=$2 rows=$3 backend=$4
  local args=(-p 1)
  if [ "$backend" != off ]; then
    args+=(-D execution.checkpointing.interval=1s -D "execution.checkpointing.dir=$TMP/ck-$name-$backend"
           -D "state.backend.type=${backend%-inc}" -D "io.tmp.dirs=$TMP")
    if [ "$backend" = rocksdb-inc ]; then args+=(-D execution.checkpointing.incremental=true); fi
  fi
  "$SLUICE" run "${args[@]}" --metrics="$TMP/m.json" "$script" >/dev/null 2>"$TMP/err" || {
    cat "$TMP/err" >&2
    return 1
  }
  local ms completed dur size full sync async
  ms=$(jq '.jobs[0].duration' "$TMP/m.json")
  completed=$(jq '.jobs[0].checkpoints.numberOfCompletedCheckpoints // 0' "$TMP/m.json")
  dur=$(jq '.jobs[0].checkpoints.lastCheckpointDuration // 0' "$TMP/m.json")
  size=$(jq '.jobs[0].checkpoints.lastCheckpointSize // 0' "$TMP/m.json")
  full=$(jq '.jobs[0].checkpoints.lastCheckpointFullSize // 0' "$TMP/m.json")
  sync=$(jq '.jobs[0].checkpoints.lastCheckpointSyncDuration // 0' "$TMP/m.json")
  async=$(jq '.jobs[0].checkpoints.lastCheckpointAsyncDuration // 0' "$TMP/m.json")
  printf '%-22s %-11s %12.0f %11s %9s %12s %12s %8s %9s\n' "$name" "$backend" "$(awk -v r="$rows" -v ms="$ms" 'BEGIN { print (ms > 0 ? r * 1000 / ms : 0) }')" \
    "$completed" "$dur" "$size" "$full" "$sync" "$async"
}

printf '%-22s %-11s %12s %11s %9s %12s %12s %8s %9s\n' job checkpts rows/s completed last_ms last_bytes full_bytes sync_ms async_ms
for backend in ${BACKENDS:-off hashmap rocksdb rocksdb-inc}; do run flights_hourly "$TMP/flights.sql" 55105 "$backend"; done
for backend in ${BACKENDS:-off hashmap rocksdb rocksdb-inc}; do run "groupby_${KEYS}_keys" "$TMP/groupby.sql" "$ROWS" "$backend"; done
