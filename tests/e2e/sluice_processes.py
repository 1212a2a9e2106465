"""Driving the `sluice` binary from the Python parts of the end-to-end tests.

Run: a `sluice run` whose stdout and stderr lines are collected by reader threads, so a test waits on a
printed line (bounded by WAIT seconds, never a sleep). cli: one `sluice` job command (list, savepoint,
stop, cancel) with its exit status checked. fail: print FAIL and exit 1.
"""
import re
import subprocess
import sys
import threading

WAIT = 120  # seconds: a bound on each wait for a printed line, not a synchronisation


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


class Run:
    """`sluice run ARGS... SQL` under `timeout`; its output lines are in `out` and `err` (None ends a stream)."""

    def __init__(self, sluice, sql, *args):
        self.p = subprocess.Popen(["timeout", "--kill-after=10", "300", sluice, "run", *args, sql],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
        self.out, self.err = [], []
        self.cv = threading.Condition()
        self.threads = [threading.Thread(target=self._read, args=(s, l), daemon=True)
                        for s, l in ((self.p.stdout, self.out), (self.p.stderr, self.err))]
        for t in self.threads:
            t.start()

    def _read(self, stream, lines):
        for line in stream:
            with self.cv:
                lines.append(line.rstrip("\n"))
                self.cv.notify_all()
        with self.cv:
            lines.append(None)  # end of stream
            self.cv.notify_all()

    def wait_line(self, lines, pattern, what, after=0):
        """The match of the first line from index `after` on that matches `pattern`; fails when the stream
        ends without one or after WAIT seconds."""
        rx = re.compile(pattern)

        def found():
            for l in lines[after:]:
                if l is not None and rx.search(l):
                    return rx.search(l)
            return None

        with self.cv:
            self.cv.wait_for(lambda: found() or None in lines[after:], WAIT)
            hit = found()
            if hit:
                return hit
        fail(f"no {what} (pattern {pattern!r}); stderr:\n" + "\n".join(l for l in self.err if l))

    def finish(self):
        """Waits for the exit; returns (status, stdout lines, stderr lines)."""
        rc = self.p.wait(timeout=WAIT)
        for t in self.threads:
            t.join(WAIT)
        return rc, [l for l in self.out if l is not None], [l for l in self.err if l is not None]


def cli(sluice, *args, rc=0):
    """`sluice ARGS...`; fails unless it exits with `rc`. Returns the CompletedProcess."""
    r = subprocess.run(["timeout", "--kill-after=10", "120", sluice, *args], capture_output=True, text=True,
                       stdin=subprocess.DEVNULL)
    if r.returncode != rc:
        fail(f"sluice {' '.join(args)}: exit {r.returncode}, expected {rc}\nstdout:\n{r.stdout}\nstderr:\n{r.stderr}")
    return r
