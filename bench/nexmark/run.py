#!/usr/bin/env python3
"""Nexmark on Sluice: runs q0-q22 (queries/qN.sql over queries/ddl_gen.sql + ddl_views.sql, the placeholders
filled in as Flink's Nexmark runner fills them) at each parallelism and prints one table row per run: events,
wall time, events per CPU-second of the whole process (generator included, Nexmark's own cost measure), peak
RSS, and the ratio to Flink's published per-core figure (Nexmark V2, events/s / cores). A query Sluice
cannot run yet prints the first line of its error instead.

  bench/nexmark/run.py [--sluice build/release/src/cli/sluice] [--queries q0,q1] [--parallelism 1,2]

Environment: NEXMARK_EVENTS (events per run, default 10000000), NEXMARK_TPS (first-event.rate, which spaces
the events in event time; default 100000 as Nexmark V2), NEXMARK_TIMEOUT (seconds per run, default 1800).
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
QUERIES = os.path.join(HERE, "queries")
ALL = ["q%d" % i for i in range(23)]

# Flink 2.x, Nexmark V2: whole-job events/s divided by cores (the Benchmark section).
FLINK_PER_CORE = {
    "q0": 379e3, "q1": 395e3, "q2": 414e3, "q3": 219e3, "q4": 28e3, "q5": 74e3, "q7": 23e3, "q8": 162e3,
    "q9": 14e3, "q10": 133e3, "q11": 46e3, "q12": 195e3, "q13": 187e3, "q14": 260e3, "q15": 167e3,
    "q16": 45e3, "q17": 160e3, "q18": 65e3, "q19": 43e3, "q20": 18e3, "q21": 147e3, "q22": 212e3,
}


def fill(text, values):
    """Replaces ${NAME} as the Flink runner does; an unknown name stays as written."""
    return re.sub(r"\$\{([A-Z_]+)\}", lambda m: str(values.get(m.group(1), m.group(0))), text)


def script_for(query, values):
    parts = []
    for name in ("ddl_gen.sql", "ddl_views.sql", query + ".sql"):
        with open(os.path.join(QUERIES, name)) as f:
            parts.append(fill(f.read(), values))
    return "\n".join(parts)


def write_side_input(workdir):
    """q13's side input: ${FLINK_HOME}/data/side_input.txt, one `key,value` line per key 0..9999 (every
    mod(auction, 10000) finds its row)."""
    os.makedirs(os.path.join(workdir, "data"), exist_ok=True)
    with open(os.path.join(workdir, "data", "side_input.txt"), "w") as f:
        for key in range(10000):
            f.write("%d,value-%d\n" % (key, key))


def run_one(sluice, query, p, events, tps, timeout, workdir):
    values = {
        "TPS": tps, "EVENTS_NUM": events, "PERSON_PROPORTION": 1, "AUCTION_PROPORTION": 3,
        "BID_PROPORTION": 46, "NEXMARK_TABLE": "datagen", "NEXMARK_DIR": workdir,
        "SUBMIT_TIME": int(time.time()), "FLINK_HOME": workdir,
    }
    path = os.path.join(workdir, "%s-p%d.sql" % (query, p))
    with open(path, "w") as f:
        f.write(script_for(query, values))
    err_path = path + ".err"
    with open(err_path, "w") as err, open(os.devnull, "w") as out:
        start = time.monotonic()
        proc = subprocess.Popen([sluice, "run", "-p", str(p), path], stdout=out, stderr=err)
        deadline = start + timeout
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid != 0:
                break
            if time.monotonic() > deadline:
                proc.kill()
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.05)
        wall = time.monotonic() - start
    rc = os.waitstatus_to_exitcode(status) if hasattr(os, "waitstatus_to_exitcode") else status >> 8
    if rc != 0:
        with open(err_path) as f:
            lines = [l.strip() for l in f if l.strip()]
        first = lines[0] if lines else "exit code %d" % rc
        if time.monotonic() > deadline:
            first = "timed out after %d s" % timeout
        return None, first
    cpu = usage.ru_utime + usage.ru_stime
    return {"wall": wall, "cpu": cpu, "rss_mb": usage.ru_maxrss / 1024.0}, None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sluice", default=os.path.join(HERE, "..", "..", "build", "release", "src", "cli", "sluice"))
    ap.add_argument("--queries", default=",".join(ALL))
    ap.add_argument("--parallelism", default="1,2")
    args = ap.parse_args()
    sluice = os.path.abspath(args.sluice)
    if not os.access(sluice, os.X_OK):
        sys.exit("no sluice binary at %s (build it, or pass --sluice)" % sluice)
    events = int(os.environ.get("NEXMARK_EVENTS", "10000000"))
    tps = int(os.environ.get("NEXMARK_TPS", "100000"))
    timeout = int(os.environ.get("NEXMARK_TIMEOUT", "1800"))
    queries = [q.strip() for q in args.queries.split(",") if q.strip()]
    ps = [int(x) for x in args.parallelism.split(",")]
    workdir = tempfile.mkdtemp(prefix="nexmark-")
    write_side_input(workdir)
    print("Nexmark: %d events per run, first-event.rate %d, %d CPUs" % (events, tps, os.cpu_count() or 0))
    head = "%-5s %2s %12s %9s %14s %9s %12s %8s" % ("query", "p", "events", "wall s", "events/CPU-s", "RSS MB",
                                                   "Flink/core", "ratio")
    print(head)
    print("-" * len(head))
    sys.stdout.flush()
    try:
        for q in queries:
            for p in ps:
                res, err = run_one(sluice, q, p, events, tps, timeout, workdir)
                if err is not None:
                    print("%-5s %2d  %s" % (q, p, err[:140]))
                else:
                    rate = events / res["cpu"] if res["cpu"] > 0 else float("inf")
                    flink = FLINK_PER_CORE.get(q)
                    ratio = "%.2fx" % (rate / flink) if flink else "-"
                    print("%-5s %2d %12d %9.2f %14.0f %9.0f %12s %8s" % (
                        q, p, events, res["wall"], rate, res["rss_mb"], "%.0fK" % (flink / 1e3) if flink else "-",
                        ratio))
                sys.stdout.flush()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
