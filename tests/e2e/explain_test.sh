#!/usr/bin/env bash
# `sluice explain --format=json` prints one JSON document for any number of jobs: {"jobs": [plan, ...]},
# each plan in the shape of Flink's /jobs/:id/plan (jid, name, nodes). A script with two INSERTs gives
# two plans, one with one INSERT gives one.
#   $1 sluice binary, $2 source tree.
source "$(dirname "$0")/lib.sh"
command -v jq >/dev/null || fail "jq is needed (scripts/install-deps.sh installs it)"

cat >"$E2E_TMP/two.sql" <<'SQL'
CREATE TABLE gen (id BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '10');
CREATE TABLE a (id BIGINT) WITH ('connector' = 'blackhole');
CREATE TABLE b (k BIGINT, c BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO a SELECT id FROM gen;
INSERT INTO b SELECT id % 3, COUNT(*) FROM gen GROUP BY id % 3;
SQL
head -n 4 "$E2E_TMP/two.sql" >"$E2E_TMP/one.sql"

check_plans() {  # check_plans SQL_FILE EXPECTED_JOBS
  run_sluice "$E2E_TMP/out" "$E2E_TMP/err" explain --format=json "$1"
  expect_success "$E2E_TMP/out" "$E2E_TMP/err"
  # jq reads a stream of documents; slurping counts them: exactly one.
  [ "$(jq -s 'length' "$E2E_TMP/out")" = "1" ] || fail "$1: not exactly one JSON document"
  if command -v python3 >/dev/null; then
    python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$E2E_TMP/out" || fail "$1: python's json.load rejects it"
  fi
  [ "$(jq '.jobs | length' "$E2E_TMP/out")" = "$2" ] || fail "$1: expected $2 plans"
  [ "$(jq '[.jobs[] | has("jid") and has("name") and (.nodes | length > 0)] | all' "$E2E_TMP/out")" = "true" ] ||
    fail "$1: a plan without jid, name or nodes"
  echo "ok: $1 gives one document with $2 plan(s)"
}
check_plans "$E2E_TMP/two.sql" 2
check_plans "$E2E_TMP/one.sql" 1

# BATCH: the text explain of the GROUP BY job names the mode, its two regions (source; aggregate and sink,
# split by the blocking HASH exchange), a slot sharing group per region and the FinalResult behind the
# aggregate; the JSON plan gives the same mode and regions.
sed -n '1,3p;5p' "$E2E_TMP/two.sql" >"$E2E_TMP/batch.sql"
run_sluice "$E2E_TMP/out" "$E2E_TMP/err" explain -p 2 -D execution.runtime-mode=batch "$E2E_TMP/batch.sql"
expect_success "$E2E_TMP/out" "$E2E_TMP/err"
for want in "BATCH, 2 pipelined region(s)" "<- [1] HASH[0] blocking" "slot-sharing-group=default-region-0 pipelined-region=0" \
  "slot-sharing-group=default-region-1 pipelined-region=1" "GroupAggregate -> FinalResult -> Calc -> Sink: b"; do
  grep -q -F -- "$want" "$E2E_TMP/out" || { cat "$E2E_TMP/out" >&2; fail "BATCH explain lacks '$want'"; }
done
run_sluice "$E2E_TMP/out" "$E2E_TMP/err" explain --format=json -p 2 -D execution.runtime-mode=batch "$E2E_TMP/batch.sql"
expect_success "$E2E_TMP/out" "$E2E_TMP/err"
[ "$(jq -r '.jobs[0].type' "$E2E_TMP/out")" = "BATCH" ] || fail "BATCH JSON plan: type is not BATCH"
[ "$(jq '[.jobs[0].nodes[].pipelined_region] | unique | length' "$E2E_TMP/out")" = "2" ] ||
  fail "BATCH JSON plan: not 2 pipelined regions"
echo "ok: BATCH explain shows the mode, blocking edge, regions and slot sharing groups"

# Sorted inputs (FLIP-327): in BATCH the aggregate's vertex (not the source's) sorts its input; in STREAMING
# only with interval-during-backlog 0, and then during backlog; otherwise nothing is marked.
run_sluice "$E2E_TMP/out" "$E2E_TMP/err" explain -p 2 -D execution.runtime-mode=batch "$E2E_TMP/batch.sql"
[ "$(grep -c -F "sorted-input=batch" "$E2E_TMP/out")" = 1 ] || { cat "$E2E_TMP/out" >&2; fail "BATCH: not one sorted input"; }
grep -q -F "GroupAggregate -> FinalResult -> Calc -> Sink: b  parallelism=2 max-parallelism=128 slot-sharing-group=default-region-1 pipelined-region=1 sorted-input=batch" "$E2E_TMP/out" ||
  { cat "$E2E_TMP/out" >&2; fail "BATCH: the aggregate's vertex is not marked sorted-input=batch"; }
run_sluice "$E2E_TMP/out" "$E2E_TMP/err" explain -p 2 -D execution.checkpointing.interval-during-backlog=0 "$E2E_TMP/batch.sql"
expect_success "$E2E_TMP/out" "$E2E_TMP/err"
[ "$(grep -c -F "sorted-input=during-backlog" "$E2E_TMP/out")" = 1 ] || { cat "$E2E_TMP/out" >&2; fail "mixed mode: not one vertex sorting during backlog"; }
grep -q -F "[2] GroupAggregate -> Calc -> Sink: b  parallelism=2 max-parallelism=128 slot-sharing-group=default pipelined-region=0 sorted-input=during-backlog" "$E2E_TMP/out" ||
  { cat "$E2E_TMP/out" >&2; fail "mixed mode: the aggregate's vertex is not the one marked sorted-input=during-backlog"; }
run_sluice "$E2E_TMP/out" "$E2E_TMP/err" explain -p 2 "$E2E_TMP/batch.sql"
! grep -q -F "sorted-input" "$E2E_TMP/out" || { cat "$E2E_TMP/out" >&2; fail "plain STREAMING marks a sorted input"; }
echo "ok: explain marks the vertices with sorted inputs"

# Mixed mode, a stateless job (a filter) and a regular join: no vertex of the filter sorts; the join's
# vertex (a two-input keyed operator) sorts both inputs during backlog, its sources' vertices do not. The
# JSON plan says the same in its nodes' "sorted_input".
cat >"$E2E_TMP/mixed.sql" <<'SQL'
CREATE TABLE gen (id BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '10');
CREATE TABLE gen2 (id BIGINT, w BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '10');
CREATE TABLE a (id BIGINT) WITH ('connector' = 'blackhole');
CREATE TABLE j (id BIGINT, w BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO a SELECT id FROM gen WHERE id > 3;
INSERT INTO j SELECT gen.id, gen2.w FROM gen JOIN gen2 ON gen.id = gen2.id;
SQL
run_sluice "$E2E_TMP/out" "$E2E_TMP/err" explain -p 2 -D execution.checkpointing.interval-during-backlog=0 "$E2E_TMP/mixed.sql"
expect_success "$E2E_TMP/out" "$E2E_TMP/err"
sorting=$(grep -E '^\[[0-9]+\] ' "$E2E_TMP/out" | grep -F "sorted-input=during-backlog" || true)
[ "$(printf '%s\n' "$sorting" | grep -c .)" = 1 ] || { cat "$E2E_TMP/out" >&2; fail "mixed mode: not exactly one vertex of the two jobs sorts"; }
case "$sorting" in
  "[3] Join -> Calc -> Sink: j  "*) ;;
  *) cat "$E2E_TMP/out" >&2; fail "mixed mode: the sorting vertex is not the join's: $sorting" ;;
esac
grep -q -F "[1] Source: gen -> Calc -> Sink: a  parallelism=2 max-parallelism=128 slot-sharing-group=default pipelined-region=0" "$E2E_TMP/out" ||
  { cat "$E2E_TMP/out" >&2; fail "mixed mode: the filter job's vertex is missing"; }
run_sluice "$E2E_TMP/out" "$E2E_TMP/err" explain --format=json -p 2 -D execution.checkpointing.interval-during-backlog=0 "$E2E_TMP/mixed.sql"
expect_success "$E2E_TMP/out" "$E2E_TMP/err"
[ "$(jq -c '[.jobs[] | [.nodes[] | .sorted_input]]' "$E2E_TMP/out")" = '[[null],[null,null,"during-backlog"]]' ] ||
  { cat "$E2E_TMP/out" >&2; fail "mixed mode JSON: sorted_input is not only on the join's node"; }
echo "ok: explain marks the join's vertex as sorting during backlog and no vertex of a stateless job"
