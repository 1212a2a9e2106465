#!/usr/bin/env python3
"""Writes oracle.test of this folder: SQL queries run in execution.runtime-mode BATCH whose expected rows come
from SQLite over the same input rows (python3's sqlite3 module). Run it from anywhere after changing a case;
the .test file it writes is checked in.

`query rows streaming` cases also run in STREAMING mode and must materialize to the same rows (the
watermark trails by 1 hour and the rows are in time order within it, so streaming drops no row as late);
`query ordered` cases (ORDER BY any column, BATCH only) compare the exact order. Flink's AVG of an INT is
the truncated integer quotient: SQLite computes it as SUM / COUNT in integers (which truncates toward zero).
"""
import datetime
import os
import sqlite3

HERE = os.path.dirname(os.path.abspath(__file__))
EPOCH = datetime.datetime(2024, 1, 1)

# Orders: id, cust, amount (None = NULL), minutes after 2024-01-01 00:00. Times ascend except a few rows
# up to 40 minutes early (less than the 1 hour watermark delay).
CUSTS = ["ann", "bob", "cid", "dan", "eve"]
ORDERS = []
for i in range(1, 49):
    cust = CUSTS[(i * 7) % 5] if i % 11 != 0 else "zed"
    amount = None if i % 9 == 0 else (i * 37) % 50 - 10
    minute = 60 + i * 7 - (40 if i % 8 == 3 else 0)
    ORDERS.append((i, cust, amount, minute))
# Customers: some without orders (fay), some orders without a customer (zed, eve).
CUSTOMERS = [("ann", "north"), ("bob", "south"), ("cid", "north"), ("dan", "west"), ("fay", "south")]


def ts_text(minute):
    return (EPOCH + datetime.timedelta(minutes=minute)).strftime("%Y-%m-%d %H:%M:%S")


def v(x):
    return "null" if x is None else str(x)


def db():
    c = sqlite3.connect(":memory:")
    c.execute("CREATE TABLE o (id INT, cust TEXT, amount INT, ts TEXT, m INT)")
    c.executemany("INSERT INTO o VALUES (?, ?, ?, ?, ?)", [(i, k, a, ts_text(m), m) for i, k, a, m in ORDERS])
    c.execute("CREATE TABLE c (cust TEXT, region TEXT)")
    c.executemany("INSERT INTO c VALUES (?, ?)", CUSTOMERS)
    return c


# (comment, Flink SQL, SQLite SQL, mode): mode 'rows streaming', 'rows' or 'ordered'.
HOUR = "strftime('%Y-%m-%dT%H:00', ts)"
CASES = [
    ("GROUP BY with every basic aggregate (Flink's AVG of INT truncates)",
     "SELECT cust, COUNT(*), COUNT(amount), SUM(amount), MIN(amount), MAX(amount), AVG(amount) FROM o GROUP BY cust",
     "SELECT cust, COUNT(*), COUNT(amount), SUM(amount), MIN(amount), MAX(amount), "
     "CAST(SUM(amount) AS INTEGER) / COUNT(amount) FROM o GROUP BY cust", "rows streaming"),
    ("A global aggregate",
     "SELECT COUNT(*), SUM(amount), MAX(id) FROM o",
     "SELECT COUNT(*), SUM(amount), MAX(id) FROM o", "rows streaming"),
    ("A global aggregate over no rows still has its one row (BATCH only: streaming emits nothing)",
     "SELECT COUNT(*), COUNT(DISTINCT cust), SUM(amount), MAX(id), AVG(amount) FROM o WHERE id > 1000",
     "SELECT COUNT(*), COUNT(DISTINCT cust), SUM(amount), MAX(id), CAST(SUM(amount) AS INTEGER) / COUNT(amount) "
     "FROM o WHERE id > 1000", "rows"),
    ("", "SELECT COUNT(*) FROM o WHERE id > 1000 HAVING COUNT(*) < 3",
     "SELECT COUNT(*) FROM o WHERE id > 1000 HAVING COUNT(*) < 3", "rows"),
    ("", "SELECT cust FROM c WHERE EXISTS (SELECT COUNT(*) FROM o WHERE id > 1000)",
     "SELECT cust FROM c WHERE EXISTS (SELECT COUNT(*) FROM o WHERE id > 1000)", "rows"),
    ("", "SELECT cust FROM c WHERE NOT EXISTS (SELECT MAX(id) FROM o WHERE id > 1000)",
     "SELECT cust FROM c WHERE NOT EXISTS (SELECT MAX(id) FROM o WHERE id > 1000)", "rows"),
    ("DISTINCT and COUNT(DISTINCT ...)",
     "SELECT DISTINCT cust FROM o", "SELECT DISTINCT cust FROM o", "rows streaming"),
    ("", "SELECT cust, COUNT(DISTINCT amount) FROM o GROUP BY cust",
     "SELECT cust, COUNT(DISTINCT amount) FROM o GROUP BY cust", "rows streaming"),
    ("HAVING over an aggregate of an aggregate",
     "SELECT n, COUNT(*) FROM (SELECT cust, COUNT(*) AS n FROM o GROUP BY cust HAVING COUNT(*) > 3) GROUP BY n",
     "SELECT n, COUNT(*) FROM (SELECT cust, COUNT(*) AS n FROM o GROUP BY cust HAVING COUNT(*) > 3) GROUP BY n",
     "rows streaming"),
    ("Regular joins: INNER, LEFT, RIGHT, FULL",
     "SELECT o.id, c.region FROM o JOIN c ON o.cust = c.cust WHERE o.amount > 20",
     "SELECT o.id, c.region FROM o JOIN c ON o.cust = c.cust WHERE o.amount > 20", "rows streaming"),
    ("", "SELECT o.id, c.region FROM o LEFT JOIN c ON o.cust = c.cust WHERE o.id < 20",
     "SELECT o.id, c.region FROM o LEFT JOIN c ON o.cust = c.cust WHERE o.id < 20", "rows streaming"),
    ("", "SELECT c.cust, o.id FROM o RIGHT JOIN c ON o.cust = c.cust AND o.amount > 30",
     "SELECT c.cust, o.id FROM o RIGHT JOIN c ON o.cust = c.cust AND o.amount > 30", "rows streaming"),
    ("", "SELECT o.cust, c.cust, COUNT(*) FROM o FULL JOIN c ON o.cust = c.cust GROUP BY o.cust, c.cust",
     "SELECT o.cust, c.cust, COUNT(*) FROM o FULL JOIN c ON o.cust = c.cust GROUP BY o.cust, c.cust",
     "rows streaming"),
    ("Joins sort both inputs by their join keys (MultiInputSortingDataInput): two key columns of two types",
     "SELECT a.id, b.id FROM o a JOIN o b ON a.cust = b.cust AND a.amount = b.amount WHERE a.id < b.id",
     "SELECT a.id, b.id FROM o a JOIN o b ON a.cust = b.cust AND a.amount = b.amount WHERE a.id < b.id",
     "rows streaming"),
    ("Interval joins on event time (the watermark trails by 1 hour: no row is late in STREAMING either)",
     "SELECT a.id, b.id FROM o a, o b WHERE a.cust = b.cust AND a.ts BETWEEN b.ts - INTERVAL '30' MINUTE AND "
     "b.ts + INTERVAL '30' MINUTE AND a.id < b.id",
     "SELECT a.id, b.id FROM o a, o b WHERE a.cust = b.cust AND a.m BETWEEN b.m - 30 AND b.m + 30 AND a.id < b.id",
     "rows streaming"),
    ("", "SELECT a.id, b.id FROM o a LEFT JOIN o b ON a.cust = b.cust AND b.ts BETWEEN a.ts AND a.ts + INTERVAL '10' "
     "MINUTE AND a.id <> b.id",
     "SELECT a.id, b.id FROM o a LEFT JOIN o b ON a.cust = b.cust AND b.m BETWEEN a.m AND a.m + 10 AND a.id <> b.id",
     "rows streaming"),
    ("Semi and anti joins",
     "SELECT id FROM o WHERE cust IN (SELECT cust FROM c WHERE region = 'north')",
     "SELECT id FROM o WHERE cust IN (SELECT cust FROM c WHERE region = 'north')", "rows streaming"),
    ("", "SELECT cust, region FROM c WHERE NOT EXISTS (SELECT * FROM o WHERE o.cust = c.cust AND o.amount > 35)",
     "SELECT cust, region FROM c WHERE NOT EXISTS (SELECT * FROM o WHERE o.cust = c.cust AND o.amount > 35)",
     "rows streaming"),
    ("", "SELECT cust, region FROM c WHERE EXISTS (SELECT cust FROM o GROUP BY cust HAVING SUM(amount) > 100)",
     "SELECT cust, region FROM c WHERE EXISTS (SELECT cust FROM o GROUP BY cust HAVING SUM(amount) > 100)",
     "rows streaming"),
    ("", "SELECT id FROM o WHERE NOT EXISTS (SELECT * FROM c WHERE region = 'nowhere') AND amount > 36",
     "SELECT id FROM o WHERE NOT EXISTS (SELECT * FROM c WHERE region = 'nowhere') AND amount > 36",
     "rows streaming"),
    ("A join's output aggregated per region",
     "SELECT c.region, COUNT(*), SUM(o.amount) FROM o JOIN c ON o.cust = c.cust GROUP BY c.region",
     "SELECT c.region, COUNT(*), SUM(o.amount) FROM o JOIN c ON o.cust = c.cust GROUP BY c.region",
     "rows streaming"),
    ("ORDER BY any column (BATCH only): NULLs first ascending, last descending, in Flink and SQLite alike",
     "SELECT id, amount FROM o ORDER BY amount DESC, id",
     "SELECT id, amount FROM o ORDER BY amount DESC, id", "ordered"),
    ("", "SELECT cust, amount, id FROM o WHERE id > 30 ORDER BY cust, amount, id DESC",
     "SELECT cust, amount, id FROM o WHERE id > 30 ORDER BY cust, amount, id DESC", "ordered"),
    ("ORDER BY ... LIMIT with OFFSET, and over an aggregate",
     "SELECT id, amount FROM o ORDER BY amount DESC, id LIMIT 5 OFFSET 2",
     "SELECT id, amount FROM o ORDER BY amount DESC, id LIMIT 5 OFFSET 2", "ordered"),
    ("", "SELECT cust, SUM(amount) AS s FROM o GROUP BY cust ORDER BY s DESC LIMIT 3",
     "SELECT cust, SUM(amount) AS s FROM o GROUP BY cust ORDER BY s DESC LIMIT 3", "ordered"),
    ("Top-N per customer via ROW_NUMBER (ties broken by id)",
     "SELECT cust, id, amount, rn FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY cust ORDER BY amount DESC, id) "
     "AS rn FROM o) WHERE rn <= 2",
     "SELECT cust, id, amount, rn FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY cust ORDER BY amount DESC NULLS "
     "LAST, id) AS rn FROM o) WHERE rn <= 2", "rows streaming"),
    ("Deduplication: the first and the last order of each customer by row time",
     "SELECT cust, id FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY cust ORDER BY ts) AS rn FROM o) WHERE rn = 1",
     "SELECT cust, id FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY cust ORDER BY m) AS rn FROM o) WHERE rn = 1",
     "rows streaming"),
    ("", "SELECT cust, id FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY cust ORDER BY ts DESC) AS rn FROM o) "
     "WHERE rn = 1",
     "SELECT cust, id FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY cust ORDER BY m DESC) AS rn FROM o) "
     "WHERE rn = 1", "rows streaming"),
    ("OVER: running sum and count per customer in row time order",
     "SELECT id, SUM(amount) OVER w, COUNT(*) OVER w FROM o "
     "WINDOW w AS (PARTITION BY cust ORDER BY ts ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)",
     "SELECT id, SUM(amount) OVER w, COUNT(*) OVER w FROM o "
     "WINDOW w AS (PARTITION BY cust ORDER BY m ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)",
     "rows streaming"),
    ("TUMBLE window TVF (1 hour)",
     "SELECT window_start, cust, COUNT(*), SUM(amount) FROM TABLE(TUMBLE(TABLE o, DESCRIPTOR(ts), INTERVAL '1' HOUR)) "
     "GROUP BY window_start, window_end, cust",
     "SELECT " + HOUR + ", cust, COUNT(*), SUM(amount) FROM o GROUP BY " + HOUR + ", cust", "rows streaming"),
    ("HOP window TVF (size 1 hour, slide 30 minutes): every row is in the windows starting at its half hour and "
     "the half hour before",
     "SELECT window_start, COUNT(*), MAX(amount) FROM TABLE(HOP(TABLE o, DESCRIPTOR(ts), INTERVAL '30' MINUTE, "
     "INTERVAL '1' HOUR)) GROUP BY window_start, window_end",
     "SELECT strftime('%Y-%m-%dT%H:%M', '2024-01-01', (ws * 30) || ' minutes'), COUNT(*), MAX(amount) FROM "
     "(SELECT m / 30 AS ws, amount FROM o UNION ALL SELECT m / 30 - 1, amount FROM o) GROUP BY ws",
     "rows streaming"),
    ("CUMULATE window TVF (step 30 minutes, max 1 hour): [h, h+30 min) holds the first half hour's rows",
     "SELECT window_start, window_end, COUNT(*) FROM TABLE(CUMULATE(TABLE o, DESCRIPTOR(ts), INTERVAL '30' MINUTE, "
     "INTERVAL '1' HOUR)) GROUP BY window_start, window_end",
     "SELECT strftime('%Y-%m-%dT%H:%M', '2024-01-01', (h * 60) || ' minutes'), "
     "strftime('%Y-%m-%dT%H:%M', '2024-01-01', (h * 60 + e) || ' minutes'), COUNT(*) FROM "
     "(SELECT m / 60 AS h, 60 AS e FROM o UNION ALL SELECT m / 60, 30 FROM o WHERE m % 60 < 30) GROUP BY h, e",
     "rows streaming"),
    ("Legacy group window",
     "SELECT TUMBLE_START(ts, INTERVAL '2' HOUR), COUNT(*) FROM o GROUP BY TUMBLE(ts, INTERVAL '2' HOUR)",
     "SELECT strftime('%Y-%m-%dT%H:%M', '2024-01-01', ((m / 120) * 120) || ' minutes'), COUNT(*) FROM o "
     "GROUP BY m / 120", "rows streaming"),
    ("Set operations",
     "SELECT cust FROM o UNION SELECT cust FROM c", "SELECT cust FROM o UNION SELECT cust FROM c", "rows streaming"),
    ("", "SELECT cust FROM o INTERSECT SELECT cust FROM c", "SELECT cust FROM o INTERSECT SELECT cust FROM c",
     "rows streaming"),
    ("", "SELECT cust FROM c EXCEPT SELECT cust FROM o WHERE amount > 30",
     "SELECT cust FROM c EXCEPT SELECT cust FROM o WHERE amount > 30", "rows streaming"),
    ("", "SELECT cust FROM c UNION ALL SELECT cust FROM o WHERE id < 4",
     "SELECT cust FROM c UNION ALL SELECT cust FROM o WHERE id < 4", "rows streaming"),
]


def row_text(r):
    return ", ".join(v(x) for x in r)


def main():
    c = db()
    out = ["# BATCH SQL (execution.runtime-mode = batch) against SQLite over the same rows; generate.py writes this",
           "# file (the SQLite query is in the comment above each case). The runner checks every row is +I.", ""]
    out.append("input o")
    out += ["%d,%s,%s,%s" % (i, k, v(a), ts_text(m)) for i, k, a, m in ORDERS]
    out.append("")
    out.append("input c")
    out += ["%s,%s" % r for r in CUSTOMERS]
    out += ["", "statement ok", "SET 'execution.runtime-mode' = 'batch'", "",
            "statement ok",
            "CREATE TABLE o (id INT, cust STRING, amount INT, ts TIMESTAMP(3), "
            "WATERMARK FOR ts AS ts - INTERVAL '1' HOUR)",
            "WITH ('connector' = 'filesystem', 'path' = '${o}', 'format' = 'csv', 'csv.null-literal' = 'null')", "",
            "statement ok",
            "CREATE TABLE c (cust STRING, region STRING) WITH ('connector' = 'filesystem', 'path' = '${c}', "
            "'format' = 'csv')", ""]
    for comment, flink, lite, mode in CASES:
        rows = c.execute(lite).fetchall()
        if comment:
            out.append("# " + comment)
        out.append("# SQLite: " + lite)
        out.append("query " + mode)
        out.append(flink)
        out.append("----")
        for r in rows:
            out.append(("+I[%s]" if mode == "ordered" else "%s") % row_text(r))
        out.append("")
    with open(os.path.join(HERE, "oracle.test"), "w") as f:
        f.write("\n".join(out).rstrip("\n") + "\n")


if __name__ == "__main__":
    main()
