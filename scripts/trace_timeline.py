#!/usr/bin/env python3
"""Prints when spans ran inside the last `bench.run` span of each query in a
WARPREAD_TRACE file: start and end in ms from the run's start, so a scan's
reads can be laid against the query's end.

    python3 scripts/trace_timeline.py TRACE.json [--prefix scan.read] [--merge]

--merge joins spans of the same name into one line (first start, last end,
count, thread-seconds).
"""
import argparse
import json
from collections import defaultdict


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--prefix", default="scan.read")
    ap.add_argument("--merge", action="store_true")
    args = ap.parse_args()
    events = json.load(open(args.trace))
    last = {}
    for e in events:
        if e["name"].startswith("bench.run"):
            if e["name"] not in last or e["ts"] > last[e["name"]]["ts"]:
                last[e["name"]] = e
    for name, run in sorted(last.items(), key=lambda kv: kv[1]["ts"]):
        a, b = run["ts"], run["ts"] + run["dur"]
        print(f"== {name}: {run['dur'] / 1000:.1f} ms")
        inside = [e for e in events if e["name"].startswith(args.prefix)
                  and e["ts"] >= a and e["ts"] + e["dur"] <= b]
        if args.merge:
            by = defaultdict(list)
            for e in inside:
                by[e["name"]].append(e)
            rows = []
            for n, es in by.items():
                s = min(e["ts"] for e in es) - a
                t = max(e["ts"] + e["dur"] for e in es) - a
                rows.append((s, t, n, len(es), sum(e["dur"] for e in es)))
            for s, t, n, c, d in sorted(rows):
                print(f"  {s / 1000:8.1f} {t / 1000:8.1f}  x{c:<4} {d / 1e6:6.3f} s  {n}")
        else:
            for e in sorted(inside, key=lambda e: e["ts"]):
                s = e["ts"] - a
                print(f"  {s / 1000:8.1f} {(s + e['dur']) / 1000:8.1f}  {e['name']}")


if __name__ == "__main__":
    main()
