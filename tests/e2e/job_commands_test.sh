#!/usr/bin/env bash
# Flink's CLI job commands against the REST API of a running `sluice run`: `sluice list`, `sluice savepoint`,
# `sluice stop`, `sluice cancel`, and their bad input.
# The job: a datagen sequence 1..3000 at 300 rows/s -> COUNT(*), SUM(id) (one group) -> print. Run A serves
# the REST API (rest.port = 0, the address read from its "REST API at" line); once its first row is out,
# `sluice list` must show its id RUNNING, `sluice savepoint ID DIR` writes a savepoint, `sluice stop` ends it
# FINISHED with a second one. Run B restores the stop savepoint and runs to the end: its last row must be
# (3000, 3000*3001/2), computed here, and every row it printed must continue the count (> the count A
# printed last, as A emits nothing after the stop barrier). Run C restores the first savepoint with the
# REST API and is cancelled by `sluice cancel`. Bad input: unknown flag, missing and malformed job id,
# an unknown job (404), a dead peer (A's port once A exited); each exits 1 with a clear error.
# Waits block on the processes' printed lines (reader threads), never on a sleep.
#   $1 sluice binary, $2 source tree.
source "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || fail "python3 is needed"

cat >"$E2E_TMP/job.sql" <<SQL
SET 'pipeline.name' = 'cli-e2e';
CREATE TABLE gen (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '300',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '3000');
CREATE TABLE sink (c BIGINT, s BIGINT) WITH ('connector' = 'print');
INSERT INTO sink SELECT COUNT(*), SUM(id) FROM gen;
SQL

PYTHONDONTWRITEBYTECODE=1 PYTHONPATH="$PWD/tests/e2e" python3 - "$SLUICE" "$E2E_TMP" <<'PY'
import os, re, signal, sys
from sluice_processes import Run, cli as sluice_cli, fail

sluice, tmp = sys.argv[1], sys.argv[2]
sql = os.path.join(tmp, "job.sql")
N = 3000


def run(*args):
    return Run(sluice, sql, *args)


def cli(*args, rc=0):
    return sluice_cli(sluice, *args, rc=rc)

ROW = re.compile(r"^[+-][IU]\[(\d+), (\d+)\]$")

def rows(out):
    return [(int(m.group(1)), int(m.group(2))) for m in map(ROW.match, out) if m]

# --- Run A: list, savepoint, stop.
a = run("-D", "rest.port=0", "-D", "execution.checkpointing.interval=1 h",
        "-D", f"execution.checkpointing.dir={tmp}/ck")
port = a.wait_line(a.err, r"REST API at http://127\.0\.0\.1:(\d+)", "REST API line").group(1)
m = ["-m", f"127.0.0.1:{port}"]
a.wait_line(a.out, ROW.pattern, "first row of run A")  # the job runs

listed = cli("list", *m).stdout.splitlines()
running = [l for l in listed if re.fullmatch(r"\d\d\.\d\d\.\d{4} \d\d:\d\d:\d\d : [0-9a-f]{32} : cli-e2e \(RUNNING\)", l)]
if listed[:2] != ["Waiting for response...", "------------------ Running/Restarting Jobs -------------------"] \
        or len(running) != 1 or listed[-1] != "No scheduled jobs.":
    fail("sluice list printed:\n" + "\n".join(listed))
job_id = running[0].split(" : ")[1]
if cli("list", "-r", *m).stdout.splitlines()[1:] != listed[1:-1]:
    fail("sluice list -r differs from the running part of sluice list")

# Bad input while A runs.
def expect_error(args, needle):
    r = cli(*args, rc=1)
    if needle not in r.stderr:
        fail(f"sluice {' '.join(args)}: stderr lacks {needle!r}:\n{r.stderr}")
expect_error(["list", "--bogus", *m], "Error: The following argument was not expected: --bogus")
expect_error(["cancel", *m], "Missing JobID")
expect_error(["savepoint", *m, "not-a-job-id"], 'Cannot parse JobID from "not-a-job-id"')
unknown = "0123456789abcdef0123456789abcdef"
expect_error(["cancel", *m, unknown], f"Job {unknown} not found")
expect_error(["stop", *m, unknown], "404")
# No directory given and none configured: Flink's error from the server.
expect_error(["savepoint", *m, job_id], "Config key [execution.checkpointing.savepoint-dir] is not set")

sp = cli("savepoint", *m, job_id, f"{tmp}/sp").stdout
hit = re.search(r"^Savepoint completed\. Path: (.+)$", sp, re.M)
if not hit or not os.path.isfile(os.path.join(hit.group(1), "_metadata")):
    fail("sluice savepoint printed:\n" + sp)
savepoint1 = hit.group(1)

stop = cli("stop", "--savepointPath", f"{tmp}/stop", *m, job_id).stdout
hit = re.search(r"^Savepoint completed\. Path: (.+)$", stop, re.M)
if not stop.startswith(f'Suspending job "{job_id}" with a CANONICAL savepoint.') or not hit \
        or not os.path.isfile(os.path.join(hit.group(1), "_metadata")):
    fail("sluice stop printed:\n" + stop)
savepoint2 = hit.group(1)
rc, out_a, err_a = a.finish()
if rc != 0 or not any(re.match(r"^Job 'cli-e2e' finished: ", l) for l in err_a):
    fail(f"run A after stop: exit {rc}\n" + "\n".join(err_a))
rows_a = rows(out_a)
if not rows_a or rows_a[-1][0] >= N:
    fail(f"run A should have been stopped before its end; its last row: {rows_a[-1:]}")

# A dead peer: A's port once A exited.
expect_error(["list", *m], f"Could not connect to 127.0.0.1:{port}")

# --- Run B: restore the stop savepoint and run to the end.
b = run("-s", savepoint2, "-D", "execution.checkpointing.interval=1 h", "-D", f"execution.checkpointing.dir={tmp}/ck")
rc, out_b, err_b = b.finish()
rows_b = rows(out_b)
if rc != 0 or not rows_b:
    fail(f"run B: exit {rc}\n" + "\n".join(err_b))
expected = (N, N * (N + 1) // 2)
if rows_b[-1] != expected:
    fail(f"run B's final row {rows_b[-1]} != {expected}")
# A emitted nothing after the savepoint: B continues from A's last count (its first update retracts it).
if rows_b[0] != rows_a[-1]:
    fail(f"run B starts at {rows_b[0]}, run A ended at {rows_a[-1]}")

# --- Run C: restore the first savepoint with the REST API; cancelled from the command line.
c = run("-s", savepoint1, "-D", "rest.port=0", "-D", "execution.checkpointing.interval=1 h",
        "-D", f"execution.checkpointing.dir={tmp}/ck", "-D", f"execution.checkpointing.savepoint-dir={tmp}/sp-usr1")
port_c = c.wait_line(c.err, r"REST API at http://127\.0\.0\.1:(\d+)", "REST API line of run C").group(1)
c.wait_line(c.out, ROW.pattern, "first row of run C")
# SIGUSR1 (Flink's `flink savepoint` from the job's own process): the line names the savepoint's directory,
# the one holding _metadata, as `sluice savepoint` does. The signal goes to sluice, the child of `timeout`.
with open(f"/proc/{c.p.pid}/task/{c.p.pid}/children") as f:
    sluice_pid = int(f.read().split()[0])
os.kill(sluice_pid, signal.SIGUSR1)
hit = c.wait_line(c.err, r"^Savepoint (completed\. Path: (.+)|failed: .*)$", "SIGUSR1 savepoint line")
if not hit.group(2) or os.path.dirname(hit.group(2)) != f"{tmp}/sp-usr1" \
        or not os.path.isfile(os.path.join(hit.group(2), "_metadata")):
    fail("SIGUSR1 printed: " + hit.group(0))

mc = ["-m", f"127.0.0.1:{port_c}"]
job_c = re.search(r" : ([0-9a-f]{32}) : cli-e2e \(RUNNING\)", cli("list", *mc).stdout).group(1)
cancel = cli("cancel", *mc, job_c).stdout.splitlines()
if cancel != [f"Cancelling job {job_c}.", f"Cancelled job {job_c}."]:
    fail("sluice cancel printed:\n" + "\n".join(cancel))
rc, _, err_c = c.finish()
if rc != 0 or not any(re.match(r"^Job 'cli-e2e' cancelled: ", l) for l in err_c):
    fail(f"run C after cancel: exit {rc}\n" + "\n".join(err_c))
print(f"ok: list/savepoint/stop/cancel; A stopped at {rows_a[-1]}, B restored to {rows_b[-1]}")
PY
