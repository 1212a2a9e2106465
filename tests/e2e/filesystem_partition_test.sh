#!/usr/bin/env bash
# The partitioned filesystem sink (PARTITIONED BY) and source, against a Python reference over the same rows.
#   $1 sluice binary, $2 source tree, $3 parallelism.
# 30000 datagen rows (id 0..29999) go into a table PARTITIONED BY (m, grp): m = id % 3, grp one of 'a:b',
# 'c/d', '' and NULL (id % 4), so the directories need Flink's escaping (':' -> %3A, '/' -> %2F) and the default
# partition name (empty and NULL). The files hold the other columns (id, v) only. Checked for each run:
#  - the partition directories and, per directory, the rows of its part files, as the reference computes them;
#  - every partition has its success file, and nothing hidden is left (in-progress files, commit files);
#  - reading the table back through a partitioned source gives every row with its partition values.
# Runs: csv without checkpoints; csv with checkpoints every 20 ms and a failure injected into the sink
# (sluice.test.fail-*), which must say "1 restarts" and still hold each row exactly once; json with
# 'partition.default-name' and 'sink.partition-commit.success-file.name' set.
source "$(dirname "$0")/lib.sh"
P=${3:?usage: $0 SLUICE SOURCE_DIR PARALLELISM}
N=30000

# reference FORMAT DEFAULT_NAME: "<partition dir>\t<file row>" per row, sorted.
reference() {
  python3 - "$1" "$2" "$N" <<'PY'
import sys
fmt, default, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
# Flink's PartitionPathUtils: bytes below 0x20, 0x7F and these characters become %XX.
special = set('"#%\'*/:=?\\{}[]^')
def esc(s):
    return "".join("%%%02X" % ord(c) if ord(c) < 0x20 or ord(c) == 0x7F or c in special else c for c in s)
out = []
for i in range(n):
    grp = ["a:b", "c/d", "", None][i % 4]
    v = "v%d" % (i * 7 % 11)
    d = "m=%d/grp=%s" % (i % 3, esc(grp) if grp else default)
    row = "%d,%s" % (i, v) if fmt == "csv" else '{"id":%d,"v":"%s"}' % (i, v)
    out.append(d + "\t" + row)
for line in sorted(out):
    print(line)
PY
}

# readback DEFAULT_NAME: the rows of the partitioned source, as the print sink writes them, sorted.
readback_reference() {
  python3 - "$N" <<'PY'
import sys
out = []
for i in range(int(sys.argv[1])):
    grp = ["a:b", "c/d", "null", "null"][i % 4]  # '' was written to the default partition: read as NULL
    out.append("+I[%d, %s, v%d, %d]" % (i, grp, i * 7 % 11, i % 3))
for line in sorted(out):
    print(line)
PY
}

# layout DIR: "<partition dir>\t<row>" for every row of every visible part file below DIR, sorted.
layout() {
  (cd "$1" && find . -type f -name 'part-*' | sed 's|^\./||' | while read -r f; do
     awk -v d="${f%/*}" '{ print d "\t" $0 }' <"$f"  # not a file argument: awk takes 'k=v' as an assignment
   done) | sort
}

job_sql() {  # job_sql DIR FORMAT EXTRA_OPTIONS
  cat <<SQL
CREATE TABLE gen (id BIGINT) WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence',
  'fields.id.start' = '0', 'fields.id.end' = '$((N - 1))', 'rows-per-second' = '300000');
CREATE TABLE out_t (id BIGINT, grp STRING, v STRING, m INT) PARTITIONED BY (m, grp) WITH (
  'connector' = 'filesystem', 'path' = 'file://$1', 'format' = '$2',
  'sink.partition-commit.policy.kind' = 'success-file'$3);
INSERT INTO out_t SELECT id, CASE id % 4 WHEN 0 THEN 'a:b' WHEN 1 THEN 'c/d' WHEN 2 THEN '' END,
  'v' || CAST(id * 7 % 11 AS STRING), CAST(id % 3 AS INT) FROM gen;
SQL
}

check() {  # check NAME DIR FORMAT DEFAULT_NAME SUCCESS_NAME EXTRA_OPTIONS
  local name=$1 dir=$2 format=$3 default=$4 success=$5 extra=$6
  reference "$format" "$default" >"$E2E_TMP/want"
  layout "$dir" >"$E2E_TMP/got"
  compare_rows "$name: partition directories and file rows" "$E2E_TMP/want" "$E2E_TMP/got"
  cut -f1 "$E2E_TMP/want" | sort -u >"$E2E_TMP/partitions"
  [ "$(wc -l <"$E2E_TMP/partitions")" -eq 9 ] || fail "$name: expected 9 partitions"
  while read -r d; do
    [ -f "$dir/$d/$success" ] || fail "$name: no $success in $d"
  done <"$E2E_TMP/partitions"
  hidden=$(find "$dir" -name '.*' | head -n 3)
  [ -z "$hidden" ] || fail "$name: hidden files left: $hidden"
  # Read the table back: the partition columns come from the directory names.
  cat >"$E2E_TMP/read.sql" <<SQL
CREATE TABLE back_t (id BIGINT, grp STRING, v STRING, m INT) PARTITIONED BY (m, grp) WITH (
  'connector' = 'filesystem', 'path' = '$dir', 'format' = '$format'$extra);
CREATE TABLE shown (id BIGINT, grp STRING, v STRING, m INT) WITH ('connector' = 'print', 'print-identifier' = 'back');
INSERT INTO shown SELECT * FROM back_t;
SQL
  run_sluice "$E2E_TMP/read.out" "$E2E_TMP/read.err" run -p "$P" "$E2E_TMP/read.sql"
  expect_success "$E2E_TMP/read.out" "$E2E_TMP/read.err"
  readback_reference >"$E2E_TMP/want_back"
  sink_lines back "$E2E_TMP/read.out" | sort >"$E2E_TMP/got_back"
  compare_rows "$name: read back through the partitioned source" "$E2E_TMP/want_back" "$E2E_TMP/got_back"
}

# 1. csv, no checkpoints: the bounded job commits files and partitions at its end.
job_sql "$E2E_TMP/csv" csv "" >"$E2E_TMP/job.sql"
run_sluice "$E2E_TMP/out" "$E2E_TMP/err" run -p "$P" "$E2E_TMP/job.sql"
expect_success "$E2E_TMP/out" "$E2E_TMP/err"
check "csv at -p $P" "$E2E_TMP/csv" csv __DEFAULT_PARTITION__ _SUCCESS ""

# 2. csv with checkpoints and a failure in the sink after a third of what its subtask receives.
job_sql "$E2E_TMP/ckpt" csv "" >"$E2E_TMP/job.sql"
subtask=$((P - 1))
run_sluice "$E2E_TMP/out" "$E2E_TMP/err" run -p "$P" -D execution.checkpointing.interval=20ms \
  -D restart-strategy.type=fixed-delay -D restart-strategy.fixed-delay.attempts=3 -D restart-strategy.fixed-delay.delay=0 \
  -D sluice.test.fail-operator=out_t -D sluice.test.fail-after-records=$((N / P / 3)) -D sluice.test.fail-subtask=$subtask \
  "$E2E_TMP/job.sql"
expect_success "$E2E_TMP/out" "$E2E_TMP/err"
grep -q -E "^Job '.*' finished: .*, 1 restarts$" "$E2E_TMP/err" || { tail -n 5 "$E2E_TMP/err" >&2; fail "no restart"; }
check "csv at -p $P, failure in subtask $subtask" "$E2E_TMP/ckpt" csv __DEFAULT_PARTITION__ _SUCCESS ""

# 3. json, its own default partition name and success file name.
JSON_OPTS=", 'partition.default-name' = 'none', 'sink.partition-commit.success-file.name' = '_DONE'"
job_sql "$E2E_TMP/json" json "$JSON_OPTS" >"$E2E_TMP/job.sql"
run_sluice "$E2E_TMP/out" "$E2E_TMP/err" run -p "$P" "$E2E_TMP/job.sql"
expect_success "$E2E_TMP/out" "$E2E_TMP/err"
check "json at -p $P" "$E2E_TMP/json" json none _DONE ", 'partition.default-name' = 'none'"
