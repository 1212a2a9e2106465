#!/usr/bin/env bash
# The REST API of `sluice run` (rest.port = 0: the OS picks the port, printed on stderr). An unbounded
# job (datagen without number-of-rows -> GROUP BY -> blackhole) runs at parallelism 2; its name, its two
# vertices (the hash exchange of GROUP BY ends the source's chain) and their parallelism are known from
# the SQL. The test reads /overview, /jobs, /jobs/overview, /jobs/:id, its plan, a vertex and its
# metrics, /jobs/:id/checkpoints, takes a savepoint through POST /jobs/:id/savepoints (its directory
# must hold a _metadata file), checks bad requests (unknown job, malformed PATCH and body, oversized
# body, wrong method), then cancels with PATCH: the process exits 0 with the "cancelled" line.
# Every wait is a bounded poll on an observable condition.
#   $1 sluice binary, $2 source tree.
source "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || fail "python3 is needed"

cat >"$E2E_TMP/job.sql" <<SQL
SET 'pipeline.name' = 'rest-e2e';
CREATE TABLE gen (k INT, v BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '500',
  'fields.k.min' = '1', 'fields.k.max' = '20');
CREATE TABLE sink (k INT, total BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO sink SELECT k, SUM(v) FROM gen GROUP BY k;
SQL

timeout --kill-after=10 180 "$SLUICE" run -p 2 -D rest.port=0 -D rest.server.max-content-length=4096 \
  -D execution.checkpointing.interval=300ms -D execution.checkpointing.dir="$E2E_TMP/ck" \
  "$E2E_TMP/job.sql" >"$E2E_TMP/out" 2>"$E2E_TMP/err" </dev/null &
pid=$!

set +e
python3 - "$E2E_TMP/err" "$E2E_TMP/sp" "$pid" <<'PY'
import json, os, re, sys, time, urllib.error, urllib.request

err_path, sp_dir, pid = sys.argv[1], sys.argv[2], int(sys.argv[3])

def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)

def poll(what, cond, tries=600):
    # Bounded poll on an observable condition (at most tries x 0.1 s); the condition decides, not the clock.
    for _ in range(tries):
        v = cond()
        if v:
            return v
        try:
            os.kill(pid, 0)
        except OSError:
            fail(f"sluice exited while waiting for {what}:\n" + open(err_path).read())
        time.sleep(0.1)
    fail("gave up waiting for " + what)

def port():
    m = re.search(r"REST API at http://127\.0\.0\.1:(\d+)", open(err_path).read())
    return m and int(m.group(1))

base = f"http://127.0.0.1:{poll('the REST API line', port)}"

def call(method, path, body=None, raw=None):
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    req = urllib.request.Request(base + path, data=data, method=method)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")

def get(path):
    status, body = call("GET", path)
    if status != 200:
        fail(f"GET {path}: {status} {body}")
    return body

def expect_error(method, path, status, body=None, raw=None):
    got, doc = call(method, path, body, raw)
    if got != status or not isinstance(doc, dict) or not doc.get("errors"):
        fail(f"{method} {path}: expected {status} with errors, got {got} {doc}")

jobs = poll("a RUNNING job", lambda: [j for j in get("/jobs/overview")["jobs"] if j["state"] == "RUNNING"])
if len(jobs) != 1:
    fail(f"expected one job, got {jobs}")
jid = jobs[0]["jid"]
if jobs[0]["name"] != "rest-e2e" or jobs[0]["tasks"]["total"] != 4:
    fail(f"/jobs/overview: {jobs[0]}")
if get("/jobs") != {"jobs": [{"id": jid, "status": "RUNNING"}]}:
    fail(f"/jobs: {get('/jobs')}")
ov = get("/overview")
if ov["jobs-running"] != 1 or ov["jobs-finished"] != 0 or ov["taskmanagers"] != 1:
    fail(f"/overview: {ov}")
if "flink-version" not in get("/config"):
    fail("/config has no flink-version")

# Both vertices' subtasks are deployed at once (STREAMING): wait until all four run.
def all_running():
    d = get(f"/jobs/{jid}")
    return d if all(v["status"] == "RUNNING" and v["tasks"]["RUNNING"] == 2 for v in d["vertices"]) else None
d = poll("every subtask RUNNING", all_running)
if d["name"] != "rest-e2e" or d["state"] != "RUNNING" or d["job-type"] != "STREAMING":
    fail(f"/jobs/:id: {d['name']} {d['state']} {d['job-type']}")
if [v["parallelism"] for v in d["vertices"]] != [2, 2]:
    fail(f"vertices: {[(v['name'], v['parallelism']) for v in d['vertices']]}")
if not d["vertices"][0]["name"].startswith("Source: gen") or "GroupAggregate" not in d["vertices"][1]["name"]:
    fail(f"vertex names: {[v['name'] for v in d['vertices']]}")
plan = get(f"/jobs/{jid}/plan")["plan"]
if plan["jid"] != jid or len(plan["nodes"]) != 2 or plan["nodes"][1]["inputs"][0]["ship_strategy"] != "HASH":
    fail(f"plan: {plan}")

agg = d["vertices"][1]["id"]
v = get(f"/jobs/{jid}/vertices/{agg}")
if v["id"] != agg or [s["subtask"] for s in v["subtasks"]] != [0, 1] or v["parallelism"] != 2:
    fail(f"vertex: {v}")
names = [m["id"] for m in get(f"/jobs/{jid}/vertices/{agg}/metrics")]
if "0.numRecordsIn" not in names or "1.busyTimeMsPerSecond" not in names:
    fail(f"metric names: {names}")
# Records reach the aggregate over the network: its numRecordsIn grows above 0.
def records_in():
    m = get(f"/jobs/{jid}/vertices/{agg}/metrics?get=0.numRecordsIn,1.numRecordsIn,no.such")
    return m if len(m) == 2 and sum(int(x["value"]) for x in m) > 0 else None
m = poll("records into the aggregate", records_in)
if [x["id"] for x in m] != ["0.numRecordsIn", "1.numRecordsIn"]:
    fail(f"metrics ?get=: {m}")
ck = poll("a completed checkpoint", lambda: (lambda c: c if c["counts"]["completed"] >= 1 else None)(
    get(f"/jobs/{jid}/checkpoints")))
if ck["latest"]["completed"]["status"] != "COMPLETED":
    fail(f"checkpoints: {ck}")
ex = get(f"/jobs/{jid}/exceptions")
if ex["root-exception"] is not None or ex["exceptionHistory"]["entries"]:
    fail(f"exceptions of a healthy job: {ex}")
if len(get("/taskmanagers")["taskmanagers"]) != 1:
    fail("/taskmanagers")

# Bad requests.
expect_error("GET", "/jobs/0123456789abcdef0123456789abcdef", 404)
expect_error("PATCH", "/jobs/0123456789abcdef0123456789abcdef", 404)
expect_error("GET", f"/jobs/{jid}/vertices/ffffffffffffffffffffffffffffffff", 404)
expect_error("GET", "/no/such/path", 404)
expect_error("DELETE", f"/jobs/{jid}", 405)
expect_error("PATCH", f"/jobs/{jid}?mode=stop", 400)
expect_error("POST", f"/jobs/{jid}/savepoints", 400, raw=b"{not json")
expect_error("POST", f"/jobs/{jid}/savepoints", 400, raw=b'{"target-directory": 5}')
expect_error("POST", f"/jobs/{jid}/savepoints", 413, raw=b"x" * 10000)
expect_error("GET", f"/jobs/{jid}/savepoints/0000", 404)

# Savepoint.
status, t = call("POST", f"/jobs/{jid}/savepoints", {"target-directory": sp_dir, "cancel-job": False})
if status != 202 or "request-id" not in t:
    fail(f"savepoint trigger: {status} {t}")
op = poll("the savepoint", lambda: (lambda s: s if s["status"]["id"] == "COMPLETED" else None)(
    get(f"/jobs/{jid}/savepoints/{t['request-id']}")))
loc = op["operation"].get("location")
if not loc or os.path.dirname(loc) != sp_dir or not os.path.isfile(os.path.join(loc, "_metadata")):
    fail(f"savepoint result: {op}, in {sp_dir}: {os.listdir(sp_dir) if os.path.isdir(sp_dir) else 'none'}")

# Cancel.
status, body = call("PATCH", f"/jobs/{jid}?mode=cancel")
if status != 202:
    fail(f"cancel: {status} {body}")
print("ok: REST API checks passed")
PY
py_rc=$?
set -e
if [ "$py_rc" -ne 0 ]; then
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  echo "--- stderr:" >&2
  cat "$E2E_TMP/err" >&2
  fail "REST checks failed"
fi
set +e
wait "$pid"
RC=$?
set -e
[ "$RC" -eq 0 ] || { cat "$E2E_TMP/err" >&2; fail "sluice exited with $RC after the REST cancel"; }
grep -q "^Job 'rest-e2e' cancelled: [0-9]* rows read" "$E2E_TMP/err" ||
  { cat "$E2E_TMP/err" >&2; fail "no 'Job ... cancelled' line"; }

# Ctrl-C still cancels while the REST server runs (its threads must not take SIGINT): exit 130.
# --foreground: otherwise timeout signals the whole process group and sluice gets SIGINT twice.
timeout --foreground --kill-after=10 120 "$SLUICE" run -D rest.port=0 "$E2E_TMP/job.sql" \
  >"$E2E_TMP/out2" 2>"$E2E_TMP/err2" </dev/null &
pid=$!
set +e
python3 - "$E2E_TMP/err2" <<'PY'
import json, re, sys, time, urllib.request
for _ in range(600):  # bounded poll: the port line, then a RUNNING job
    m = re.search(r"REST API at (http://[0-9.:]+)", open(sys.argv[1]).read())
    if m:
        try:
            with urllib.request.urlopen(m.group(1) + "/jobs", timeout=30) as r:
                if [j["status"] for j in json.loads(r.read())["jobs"]] == ["RUNNING"]:
                    sys.exit(0)
        except OSError:
            pass
    time.sleep(0.1)
sys.exit(1)
PY
py_rc=$?
set -e
[ "$py_rc" -eq 0 ] || { kill "$pid"; cat "$E2E_TMP/err2" >&2; fail "the second run never showed a RUNNING job"; }
kill -INT "$pid"
set +e
wait "$pid"
RC=$?
set -e
[ "$RC" -eq 130 ] || { cat "$E2E_TMP/err2" >&2; fail "SIGINT with the REST server up: exit $RC, expected 130"; }
grep -q "SIGINT received: cancelling the job" "$E2E_TMP/err2" || fail "no SIGINT message"
echo "ok: REST API of sluice run (overview, jobs, vertices, metrics, checkpoints, savepoint, cancel, errors, SIGINT)"
