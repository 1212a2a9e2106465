#!/usr/bin/env python3
"""Independent reference for the Nexmark queries: computes a query's final rows from the events that Sluice
dumped (csv files of the flattened person / auction / bid views, written by the filesystem sink) and prints
them as the print sink does ("+I[a, b, c]"), sorted, so that the test can compare them with Sluice's
materialized output.

  nexmark_reference.py QUERY DUMP_DIR
  nexmark_reference.py q10-files OUTPUT_DIR

DUMP_DIR holds bid/, auction/ and person/ directories of csv part files. Only the standard library is used.
q10 writes files partitioned by day and minute: its reference rows are "<partition directory>\t[auction, bidder,
price, dateTime, extra]" (dateTime as the csv files write it); `q10-files` prints the rows of the part files below
OUTPUT_DIR in the same form, the directory taken from each file's path.
"""

import csv
import datetime
import glob
import os
import re
import sys
from collections import defaultdict
from decimal import Decimal


def read_rows(directory):
    rows = []
    for path in sorted(glob.glob(os.path.join(directory, "*.csv"))):
        with open(path, newline="") as f:
            rows.extend(csv.reader(f))
    return rows


def bids(dump):
    # auction, bidder, price, channel, url, dateTime, extra
    out = []
    for r in read_rows(os.path.join(dump, "bid")):
        out.append({"auction": int(r[0]), "bidder": int(r[1]), "price": int(r[2]), "channel": r[3], "url": r[4],
                    "dateTime": r[5], "extra": r[6]})
    return out


def ts(text):
    """A csv TIMESTAMP(3) ('2023-11-14 23:59:55.001') as the print sink shows it (Java's LocalDateTime.toString:
    '2023-11-14T23:59:55.001', no fraction when the millis are 0, no seconds when both are 0)."""
    date, _, time_part = text.partition(" ")
    hms, _, frac = time_part.partition(".")
    millis = int((frac + "000")[:3]) if frac else 0
    h, m, sec = hms.split(":")
    out = "%sT%s:%s" % (date, h, m)
    if int(sec) != 0 or millis != 0:
        out += ":" + sec
    if millis != 0:
        out += ".%03d" % millis
    return out


def millis(text):
    """A csv TIMESTAMP(3) as ms since the epoch (UTC)."""
    date, _, time_part = text.partition(" ")
    hms, _, frac = time_part.partition(".")
    d = datetime.datetime.strptime(date + " " + hms, "%Y-%m-%d %H:%M:%S").replace(tzinfo=datetime.timezone.utc)
    return int(d.timestamp()) * 1000 + (int((frac + "000")[:3]) if frac else 0)


def text_of(ms):
    """ms since the epoch as the csv TIMESTAMP(3) text."""
    d = datetime.datetime.fromtimestamp(ms // 1000, datetime.timezone.utc)
    return d.strftime("%Y-%m-%d %H:%M:%S") + ".%03d" % (ms % 1000)


def day(text):
    return text[:10]


def minute(text):
    return text[11:16]


def fmt(v):
    if v is None:
        return "null"
    return str(v)


def row(*values):
    return "+I[" + ", ".join(fmt(v) for v in values) + "]"


CHANNEL_RE = re.compile(r"(&|^)channel_id=([^&]*)")


def regexp_extract(s, group):
    m = CHANNEL_RE.search(s)
    return m.group(group) if m else None


def bands(prices):
    return (sum(1 for p in prices if p < 10000), sum(1 for p in prices if 10000 <= p < 1000000),
            sum(1 for p in prices if p >= 1000000))


def distinct_bands(items, key):
    allk = {key(b) for b in items}
    r1 = {key(b) for b in items if b["price"] < 10000}
    r2 = {key(b) for b in items if 10000 <= b["price"] < 1000000}
    r3 = {key(b) for b in items if b["price"] >= 1000000}
    return len(allk), len(r1), len(r2), len(r3)


def stats(group):
    prices = [b["price"] for b in group]
    return [len(group), *bands(prices), *distinct_bands(group, lambda b: b["bidder"]),
            *distinct_bands(group, lambda b: b["auction"])]


def query(q, dump):
    out = []
    bs = bids(dump)
    if q == "q0":
        out = [row(b["auction"], b["bidder"], b["price"], ts(b["dateTime"]), b["extra"]) for b in bs]
    elif q == "q1":
        # DECIMAL(23, 3): 0.908 * price exactly.
        out = [row(b["auction"], b["bidder"], (Decimal("0.908") * b["price"]).quantize(Decimal("0.001")),
                   ts(b["dateTime"]), b["extra"]) for b in bs]
    elif q == "q2":
        out = [row(b["auction"], b["price"]) for b in bs if b["auction"] % 123 == 0]
    elif q == "q11":
        # Sessions per bidder: a bid at t opens [t, t + 10 s), merged with a session it overlaps or touches
        # (t <= end). No bid is late: the generators run at most a few seconds apart, within the 4 s delay
        # plus the gap.
        times = defaultdict(list)
        for b in bs:
            times[b["bidder"]].append(millis(b["dateTime"]))
        for bidder, ms in times.items():
            ms.sort()
            start, end, n = ms[0], ms[0] + 10000, 0
            for t in ms:
                if t > end:
                    out.append(row(bidder, n, ts(text_of(start)), ts(text_of(end))))
                    start, n = t, 0
                end, n = max(end, t + 10000), n + 1
            out.append(row(bidder, n, ts(text_of(start)), ts(text_of(end))))
    elif q == "q12":
        # Bids per bidder in 10 s processing-time windows: which window a bid lands in depends on the clock,
        # so the reference is each bidder's total over all windows; the test folds Sluice's windows the same
        # way (nexmark_test.sh, fold_q12) after checking that every window is 10 s long.
        counts = defaultdict(int)
        for b in bs:
            counts[b["bidder"]] += 1
        out = [row(bidder, n) for bidder, n in counts.items()]
    elif q == "q14":
        for b in bs:
            euro = Decimal("0.908") * b["price"]
            if not (1000000 < euro < 50000000):
                continue
            hour = int(b["dateTime"][11:13])
            kind = "dayTime" if 8 <= hour <= 18 else ("nightTime" if hour <= 6 or hour >= 20 else "otherTime")
            out.append(row(b["auction"], b["bidder"], euro.quantize(Decimal("0.001")), kind, ts(b["dateTime"]),
                           b["extra"], b["extra"].count("c")))
    elif q == "q15":
        groups = defaultdict(list)
        for b in bs:
            groups[day(b["dateTime"])].append(b)
        out = [row(d, *stats(g)) for d, g in groups.items()]
    elif q == "q16":
        groups = defaultdict(list)
        for b in bs:
            groups[(b["channel"], day(b["dateTime"]))].append(b)
        out = [row(c, d, max(minute(b["dateTime"]) for b in g), *stats(g)) for (c, d), g in groups.items()]
    elif q == "q17":
        groups = defaultdict(list)
        for b in bs:
            groups[(b["auction"], day(b["dateTime"]))].append(b)
        for (a, d), g in groups.items():
            prices = [b["price"] for b in g]
            # AVG over BIGINT is a BIGINT (the sum divided by the count, truncated).
            out.append(row(a, d, len(g), *bands(prices), min(prices), max(prices), sum(prices) // len(prices),
                           sum(prices)))
    elif q == "q18":
        # The last bid of each (bidder, auction) by event time (unique at -p 1: one event per millisecond).
        last = {}
        for b in bs:
            k = (b["bidder"], b["auction"])
            if k not in last or b["dateTime"] >= last[k]["dateTime"]:
                last[k] = b
        out = [row(b["auction"], b["bidder"], b["price"], b["channel"], b["url"], ts(b["dateTime"]), b["extra"])
               for b in last.values()]
    elif q == "q21":
        ids = {"apple": "0", "google": "1", "facebook": "2", "baidu": "3"}
        for b in bs:
            low = b["channel"].lower()
            extracted = regexp_extract(b["url"], 2)
            if extracted is None and low not in ids:
                continue
            out.append(row(b["auction"], b["bidder"], b["price"], b["channel"], ids.get(low, extracted)))
    elif q == "q22":
        def part(url, i):
            p = url.split("/")
            return p[i] if i < len(p) else None
        out = [row(b["auction"], b["bidder"], b["price"], b["channel"], part(b["url"], 3), part(b["url"], 4),
                   part(b["url"], 5)) for b in bs]
    elif q == "q10":
        # PARTITIONED BY (dt, hm): dt = yyyy-MM-dd and hm = HH:mm of dateTime; ':' is escaped in a directory
        # name as %3A (Flink's PartitionPathUtils); the files hold the other columns.
        out = ["dt=%s/hm=%s\t%s" % (b["dateTime"][:10], b["dateTime"][11:16].replace(":", "%3A"),
                                    row(b["auction"], b["bidder"], b["price"], b["dateTime"], b["extra"])) for b in bs]
    else:
        sys.exit("no reference for " + q)
    return sorted(out)


def q10_files(directory):
    out = []
    for path in glob.glob(os.path.join(directory, "**", "part-*"), recursive=True):
        part = os.path.relpath(os.path.dirname(path), directory)
        with open(path, newline="") as f:
            for r in csv.reader(f):
                out.append("%s\t%s" % (part, row(int(r[0]), int(r[1]), int(r[2]), r[3], r[4])))
    return sorted(out)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    lines = q10_files(sys.argv[2]) if sys.argv[1] == "q10-files" else query(sys.argv[1], sys.argv[2])
    for line in lines:
        print(line)


if __name__ == "__main__":
    main()
