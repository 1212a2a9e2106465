#!/usr/bin/env python3
"""Writes oracle.test and proctime.test of this folder: OVER aggregates whose expected rows come from SQLite's
window functions over the same input rows (python3's sqlite3 module). Run it from anywhere after changing a
case; the .test files it writes are checked in.

Event time: the rows are in timestamp order and the watermark trails by 1 s, so no row is late and every
row is emitted once; ROWS frames order ties by arrival (SQLite: ORDER BY ts, seq), RANGE frames treat rows of
one timestamp as peers (ORDER BY the epoch seconds). Flink's AVG of an INT is the truncated integer
quotient: SQLite computes it as SUM / COUNT in integers.
"""
import os
import sqlite3

HERE = os.path.dirname(os.path.abspath(__file__))

# seq, k, v (None = NULL), ts (whole seconds of 2024-01-01 00:00:00 + n)
ROWS = [
    (1, "a", 5, 1), (2, "b", 3, 1), (3, "a", None, 2), (4, "a", 7, 4), (5, "b", 2, 4),
    (6, "a", 1, 4), (7, "c", 9, 5), (8, "b", None, 6), (9, "a", 4, 7), (10, "b", 8, 9),
    (11, "a", 6, 10), (12, "c", 2, 10), (13, "a", 3, 10), (14, "b", 5, 13), (15, "a", 2, 15),
]


def ts_text(n):
    return "2024-01-01 00:00:%02d" % n


def csv():
    return "\n".join("%d,%s,%s,%s" % (s, k, "null" if v is None else v, ts_text(t)) for s, k, v, t in ROWS)


def db():
    c = sqlite3.connect(":memory:")
    c.execute("CREATE TABLE t (seq INT, k TEXT, v INT, ts INT)")
    c.executemany("INSERT INTO t VALUES (?, ?, ?, ?)", ROWS)
    return c


def fmt(v):
    return "null" if v is None else str(v)


def expected(sqlite_query):
    return sorted(", ".join(fmt(x) for x in r) for r in db().execute(sqlite_query).fetchall())


DDL = """statement ok
CREATE TABLE t (seq INT, k STRING, v INT, ts TIMESTAMP(3), pt AS PROCTIME(),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
WITH ('connector' = 'filesystem', 'path' = '${t}', 'format' = 'csv', 'csv.null-literal' = 'null',
  'scan.parallelism' = '1')"""

# (comment, Flink SQL, SQLite SQL); the SQLite window w is spelled out per query.
AGGS = "COUNT(*) OVER w, COUNT(v) OVER w, SUM(v) OVER w, MIN(v) OVER w, MAX(v) OVER w, AVG(v) OVER w"
SQLITE_AGGS = ("COUNT(*) OVER w, COUNT(v) OVER w, SUM(v) OVER w, MIN(v) OVER w, MAX(v) OVER w, "
               "SUM(v) OVER w / COUNT(v) OVER w")

EVENT_TIME = [
    ("ROWS BETWEEN 2 PRECEDING AND CURRENT ROW (RowTimeRowsBoundedPrecedingFunction)",
     "SELECT seq, k, %s FROM t WINDOW w AS (PARTITION BY k ORDER BY ts ROWS BETWEEN 2 PRECEDING AND CURRENT ROW)" % AGGS,
     "SELECT seq, k, %s FROM t WINDOW w AS (PARTITION BY k ORDER BY ts, seq ROWS BETWEEN 2 PRECEDING AND CURRENT ROW)"
     % SQLITE_AGGS),
    ("RANGE BETWEEN INTERVAL '3' SECOND PRECEDING AND CURRENT ROW (RowTimeRangeBoundedPrecedingFunction): rows of one"
     " time are peers",
     "SELECT seq, k, %s FROM t WINDOW w AS (PARTITION BY k ORDER BY ts RANGE BETWEEN INTERVAL '3' SECOND PRECEDING"
     " AND CURRENT ROW)" % AGGS,
     "SELECT seq, k, %s FROM t WINDOW w AS (PARTITION BY k ORDER BY ts RANGE BETWEEN 3 PRECEDING AND CURRENT ROW)"
     % SQLITE_AGGS),
    ("ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW (RowTimeRowsUnboundedPrecedingFunction)",
     "SELECT seq, k, %s FROM t WINDOW w AS (PARTITION BY k ORDER BY ts ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)"
     % AGGS,
     "SELECT seq, k, %s FROM t WINDOW w AS (PARTITION BY k ORDER BY ts, seq ROWS BETWEEN UNBOUNDED PRECEDING AND"
     " CURRENT ROW)" % SQLITE_AGGS),
    ("ORDER BY without a frame: RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW (RowTimeRangeUnboundedPrecedingFunction)",
     "SELECT seq, k, %s FROM t WINDOW w AS (PARTITION BY k ORDER BY ts)" % AGGS,
     "SELECT seq, k, %s FROM t WINDOW w AS (PARTITION BY k ORDER BY ts)" % SQLITE_AGGS),
    ("No PARTITION BY (one subtask), ROWS 0 PRECEDING (the row alone) and the OVER clause inline, in expressions",
     "SELECT seq, SUM(v) OVER (ORDER BY ts ROWS 0 PRECEDING) AS s, COUNT(*) OVER (ORDER BY ts ROWS 0 PRECEDING) * 10 + 1"
     " AS c FROM t",
     "SELECT seq, SUM(v) OVER (ORDER BY ts, seq ROWS 0 PRECEDING), COUNT(*) OVER (ORDER BY ts, seq ROWS 0 PRECEDING)"
     " * 10 + 1 FROM t"),
    ("A WHERE clause applies before the window; DISTINCT aggregates; a computed PARTITION BY key",
     "SELECT seq, COUNT(DISTINCT k) OVER w, SUM(DISTINCT v) OVER w FROM t WHERE seq <> 4"
     " WINDOW w AS (PARTITION BY seq % 2 ORDER BY ts RANGE BETWEEN INTERVAL '5' SECOND PRECEDING AND CURRENT ROW)",
     "SELECT seq, (SELECT COUNT(DISTINCT k) FROM t u WHERE u.seq <> 4 AND u.seq % 2 = t.seq % 2 AND u.ts BETWEEN"
     " t.ts - 5 AND t.ts), (SELECT SUM(DISTINCT v) FROM t u WHERE u.seq <> 4 AND u.seq % 2 = t.seq % 2 AND u.ts"
     " BETWEEN t.ts - 5 AND t.ts) FROM t WHERE seq <> 4"),
]

PROC_TIME = [
    ("ROWS BETWEEN 1 PRECEDING AND CURRENT ROW on processing time (ProcTimeRowsBoundedPrecedingFunction): rows in"
     " arrival order",
     "SELECT seq, k, %s FROM t WINDOW w AS (PARTITION BY k ORDER BY pt ROWS BETWEEN 1 PRECEDING AND CURRENT ROW)" % AGGS,
     "SELECT seq, k, %s FROM t WINDOW w AS (PARTITION BY k ORDER BY seq ROWS BETWEEN 1 PRECEDING AND CURRENT ROW)"
     % SQLITE_AGGS),
    ("ROWS 0 PRECEDING on processing time: each row alone",
     "SELECT seq, SUM(v) OVER (PARTITION BY k ORDER BY pt ROWS 0 PRECEDING) FROM t",
     "SELECT seq, v FROM t"),
    ("UNBOUNDED on processing time (ProcTimeUnboundedPrecedingFunction): ROWS and RANGE both go row by row",
     "SELECT seq, k, %s FROM t WINDOW w AS (PARTITION BY k ORDER BY pt RANGE UNBOUNDED PRECEDING)" % AGGS,
     "SELECT seq, k, %s FROM t WINDOW w AS (PARTITION BY k ORDER BY seq ROWS UNBOUNDED PRECEDING)" % SQLITE_AGGS),
    ("RANGE BETWEEN INTERVAL '1' HOUR PRECEDING on processing time (ProcTimeRangeBoundedPrecedingFunction): rows of"
     " one millisecond are peers, so only properties that do not depend on the clock are checked: every row is"
     " emitted once (the last ones when the input ends) and its frame holds at least itself",
     "SELECT seq, COUNT(*) OVER w >= 1, COUNT(*) OVER w <= 15 FROM t"
     " WINDOW w AS (PARTITION BY k ORDER BY pt RANGE BETWEEN INTERVAL '1' HOUR PRECEDING AND CURRENT ROW)",
     "SELECT seq, 'true', 'true' FROM t"),
]


def write(name, header, cases):
    out = [header, "", "input t", csv(), "", DDL]
    for comment, flink, lite in cases:
        out += ["", "# " + comment, "# SQLite: " + lite, "query rows", flink, "----"]
        out += expected(lite)
    with open(os.path.join(HERE, name), "w") as f:
        f.write("\n".join(out) + "\n")


write("oracle.test",
      "# OVER aggregates on event time, several per window; expected rows from SQLite (generate.py writes this file).",
      EVENT_TIME)
write("proctime.test",
      "# OVER aggregates on processing time (PROCTIME()); expected rows from SQLite (generate.py writes this file).",
      PROC_TIME)
