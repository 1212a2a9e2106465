#!/usr/bin/env bash
# Savepoints of a STREAMING job without execution.checkpointing.interval and without a checkpoint directory
# (Flink takes them of any streaming job: its CheckpointCoordinator exists, only the periodic trigger is off).
# The job: a datagen sequence 1..3000 at 300 rows/s -> per key id % 3: COUNT(*), SUM(id) -> print.
# Run A (rest.port = 0, no interval): `sluice savepoint ID` without DIR fails naming
# execution.checkpointing.savepoint-dir; `sluice savepoint ID DIR` prints a path under DIR holding a _metadata;
# `sluice stop --savepointPath DIR ID` exits 0 with the path (the run ends with its job, but not before the
# client read the result: never "Connection refused"). A's summary has no checkpoint figures.
# Run B restores the stop savepoint, again without an interval, and runs to the end: its first row per key
# retracts the last row A printed for that key (the state continued from the savepoint) and its last rows are
# per key k: (k, #{id in 1..3000 : id % 3 = k}, their sum), computed here. While B runs, SIGUSR1 takes a
# savepoint into its execution.checkpointing.savepoint-dir.
# Run C, the same job in BATCH mode: `sluice savepoint` and `sluice stop` are refused with "Job <id> is not a
# streaming job"; `sluice cancel` ends it.
# Waits block on the processes' printed lines (reader threads), never on a sleep.
#   $1 sluice binary, $2 source tree.
source "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || fail "python3 is needed"

cat >"$E2E_TMP/job.sql" <<SQL
SET 'pipeline.name' = 'savepoint-e2e';
CREATE TABLE gen (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '300',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '3000');
CREATE TABLE sink (k BIGINT, c BIGINT, s BIGINT) WITH ('connector' = 'print');
INSERT INTO sink SELECT id % 3, COUNT(*), SUM(id) FROM gen GROUP BY id % 3;
SQL

PYTHONDONTWRITEBYTECODE=1 PYTHONPATH="$PWD/tests/e2e" python3 - "$SLUICE" "$E2E_TMP" <<'PY'
import os, re, signal, sys, time
from sluice_processes import WAIT, Run, cli, fail

sluice, tmp = sys.argv[1], sys.argv[2]
sql = os.path.join(tmp, "job.sql")
N = 3000
ROW = re.compile(r"^([+-][IU])\[(\d+), (\d+), (\d+)\]$")
SAVEPOINT = re.compile(r"^Savepoint completed\. Path: (.+)$", re.M)


def rows(out):
    """(kind, key, count, sum) of every changelog row printed."""
    return [(m.group(1), int(m.group(2)), int(m.group(3)), int(m.group(4))) for m in map(ROW.match, out) if m]


def expect_error(args, needle):
    r = cli(sluice, *args, rc=1)
    if needle not in r.stderr:
        fail(f"sluice {' '.join(args)}: stderr lacks {needle!r}:\n{r.stderr}")


def running_job(m):
    """The id of the one RUNNING job `sluice list` shows; polls the REST API until the run registered it
    (bounded by WAIT seconds)."""
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        ids = re.findall(r" : ([0-9a-f]{32}) : savepoint-e2e \(RUNNING\)$", cli(sluice, "list", *m).stdout, re.M)
        if ids:
            return ids[0]
    fail("no RUNNING job listed")


# --- Run A: no interval, no checkpoint directory.
a = Run(sluice, sql, "-D", "rest.port=0")
port = a.wait_line(a.err, r"REST API at http://127\.0\.0\.1:(\d+)", "REST API line").group(1)
m = ["-m", f"127.0.0.1:{port}"]
a.wait_line(a.out, ROW.pattern, "first row of run A")
job_id = running_job(m)

expect_error(["savepoint", *m, job_id], "Config key [execution.checkpointing.savepoint-dir] is not set")
sp = cli(sluice, "savepoint", *m, job_id, f"{tmp}/sp").stdout
hit = SAVEPOINT.search(sp)
if not hit or os.path.dirname(hit.group(1)) != f"{tmp}/sp" or not os.path.isfile(os.path.join(hit.group(1), "_metadata")):
    fail("sluice savepoint printed:\n" + sp)

stop = cli(sluice, "stop", "--savepointPath", f"{tmp}/stop", *m, job_id)
hit = SAVEPOINT.search(stop.stdout)
if not stop.stdout.startswith(f'Suspending job "{job_id}" with a CANONICAL savepoint.') or not hit \
        or os.path.dirname(hit.group(1)) != f"{tmp}/stop" or not os.path.isfile(os.path.join(hit.group(1), "_metadata")) \
        or "Connection refused" in stop.stdout + stop.stderr:
    fail(f"sluice stop printed:\n{stop.stdout}\nstderr:\n{stop.stderr}")
stopped = hit.group(1)
rc, out_a, err_a = a.finish()
finished = [l for l in err_a if re.match(r"^Job 'savepoint-e2e' finished: ", l)]
if rc != 0 or len(finished) != 1:
    fail(f"run A after stop: exit {rc}\n" + "\n".join(err_a))
if "checkpoint" in finished[0]:
    fail("run A took no checkpoint, yet its summary names some: " + finished[0])
if any("not read within" in l for l in err_a):
    fail("run A closed its REST API before the stop's result was read:\n" + "\n".join(err_a))
last_a = {}
for kind, k, c, s in rows(out_a):
    if kind in ("+I", "+U"):
        last_a[k] = (k, c, s)
if sorted(last_a) != [0, 1, 2] or sum(c for _, c, _ in last_a.values()) >= N:
    fail(f"run A should have been stopped before its end with every key seen; its last rows: {last_a}")

# --- Run B: restore the stop savepoint, without an interval; SIGUSR1 while it runs.
b = Run(sluice, sql, "-s", stopped, "-D", f"execution.checkpointing.savepoint-dir={tmp}/sp-usr1")
b.wait_line(b.out, ROW.pattern, "first row of run B")
with open(f"/proc/{b.p.pid}/task/{b.p.pid}/children") as f:
    os.kill(int(f.read().split()[0]), signal.SIGUSR1)  # sluice, the child of `timeout`
hit = b.wait_line(b.err, r"^Savepoint (completed\. Path: (.+)|failed: .*)$", "SIGUSR1 savepoint line")
if not hit.group(2) or os.path.dirname(hit.group(2)) != f"{tmp}/sp-usr1" \
        or not os.path.isfile(os.path.join(hit.group(2), "_metadata")):
    fail("SIGUSR1 printed: " + hit.group(0))
rc, out_b, err_b = b.finish()
rows_b = rows(out_b)
if rc != 0 or not rows_b:
    fail(f"run B: exit {rc}\n" + "\n".join(err_b))
first_b, last_b = {}, {}
for kind, k, c, s in rows_b:
    first_b.setdefault(k, (kind, (k, c, s)))
    if kind in ("+I", "+U"):
        last_b[k] = (k, c, s)
# A emitted nothing after the savepoint's barrier: B's first change of a key retracts A's last row of it.
for k in range(3):
    if first_b.get(k) != ("-U", last_a[k]):
        fail(f"key {k}: run B starts with {first_b.get(k)}, run A ended at {last_a[k]}")
expected = {k: (k, sum(1 for i in range(1, N + 1) if i % 3 == k), sum(i for i in range(1, N + 1) if i % 3 == k))
            for k in range(3)}
if last_b != expected:
    fail(f"run B's final rows {last_b} != {expected}")

# --- Run C: the same job in BATCH mode takes no savepoint.
c = Run(sluice, sql, "-D", "rest.port=0", "-D", "execution.runtime-mode=batch")
port_c = c.wait_line(c.err, r"REST API at http://127\.0\.0\.1:(\d+)", "REST API line of run C").group(1)
mc = ["-m", f"127.0.0.1:{port_c}"]
job_c = running_job(mc)
refused = f"Job {job_c} is not a streaming job"
expect_error(["savepoint", *mc, job_c, f"{tmp}/sp-batch"], refused)
expect_error(["stop", "--savepointPath", f"{tmp}/sp-batch", *mc, job_c], refused)
if os.path.exists(f"{tmp}/sp-batch"):
    fail("a refused savepoint created its directory")
cli(sluice, "cancel", *mc, job_c)
rc, _, err_c = c.finish()
if rc != 0 or not any(re.match(r"^Job 'savepoint-e2e' cancelled: ", l) for l in err_c):
    fail(f"run C after cancel: exit {rc}\n" + "\n".join(err_c))
print(f"ok: savepoint/stop without an interval; A stopped at {sorted(last_a.values())}, B ended at "
      f"{sorted(last_b.values())}; BATCH refused")
PY
