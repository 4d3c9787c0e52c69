#!/usr/bin/env python3
"""Summarises a WARPREAD_TRACE file (Chrome trace JSON written by warpread).

    python3 scripts/trace_summary.py TRACE.json [--prefix bench.run]

Per span name: count, thread-seconds (the sum of durations) and wall
seconds (the union of its intervals: how long at least one was running).
When the trace has `bench.run` spans, only spans inside the last N of them
are counted (N = --runs, default: all but the first, the warm-up), and the
figures are per run.
"""
import argparse
import json
import signal
from collections import defaultdict


def union(intervals):
    total, end = 0.0, None
    start = None
    for s, e in sorted(intervals):
        if end is None or s > end:
            if end is not None:
                total += end - start
            start, end = s, e
        else:
            end = max(end, e)
    if end is not None:
        total += end - start
    return total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--runs", type=int, default=0, help="last N bench.run spans (0: all but the first)")
    args = ap.parse_args()
    events = json.load(open(args.trace))
    runs = sorted((e for e in events if e["name"].startswith("bench.run")), key=lambda e: e["ts"])
    by_file = defaultdict(list)
    for r in runs:
        by_file[r["name"]].append(r)
    windows = []
    if by_file:
        for name, rs in by_file.items():
            keep = rs[-args.runs:] if args.runs else (rs[1:] or rs)
            windows.append((name, keep))
    else:
        lo = min(e["ts"] for e in events)
        hi = max(e["ts"] + e["dur"] for e in events)
        windows.append(("whole trace", [{"ts": lo, "dur": hi - lo}]))
    for name, keep in windows:
        spans = defaultdict(list)
        for w in keep:
            a, b = w["ts"], w["ts"] + w["dur"]
            for e in events:
                if e["name"].startswith("bench.run"):
                    continue
                s, t = e["ts"], e["ts"] + e["dur"]
                if s >= a and t <= b:
                    spans[e["name"]].append((s, t))
        n = len(keep)
        wall = sum(w["dur"] for w in keep) / n / 1e6
        print(f"{name}: {n} run(s), {wall:.3f} s per run")
        print(f"  {'span':<36} {'count':>7} {'thread s':>9} {'wall s':>8} {'wall %':>7}")
        rows = []
        for k, iv in spans.items():
            thread = sum(t - s for s, t in iv) / n / 1e6
            cover = union(iv) / n / 1e6
            rows.append((cover, k, len(iv) / n, thread))
        for cover, k, cnt, thread in sorted(rows, reverse=True):
            print(f"  {k:<36} {cnt:>7.0f} {thread:>9.3f} {cover:>8.3f} {100 * cover / wall:>6.1f}%")


if __name__ == "__main__":
    # Piped into head: stop quietly when the reader goes away.
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    main()
