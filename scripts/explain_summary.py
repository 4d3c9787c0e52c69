#!/usr/bin/env python3
"""Summarizes EXPLAIN ANALYZE outputs (scripts/gpu_sql_explain.sh's qN-NAME.txt).

    python3 scripts/explain_summary.py DIR [TOP]

Per file: the operators with the most compute time (elapsed_compute plus the
join, build, repartition and scan times DataFusion reports outside it),
summed over partitions, which is thread time, not wall time.
"""
import re
import sys
from pathlib import Path

UNITS = {"ns": 1e-9, "µs": 1e-6, "us": 1e-6, "ms": 1e-3, "s": 1.0}
TIME = re.compile(r"(\w+_time|elapsed_compute)=([0-9.]+)(ns|µs|us|ms|s)\b")
ROWS = re.compile(r"output_rows=([0-9.]+) ?([KMB]?)")


def seconds(text):
    return {k: float(v) * UNITS[u] for k, v, u in TIME.findall(text)}


def main():
    folder = Path(sys.argv[1])
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 8
    for f in sorted(folder.glob("q*.txt"), key=lambda p: (int(re.match(r"q(\d+)", p.name)[1]), p.name)):
        text = f.read_text(errors="replace")
        if "Plan with Metrics" not in text:
            print(f"== {f.name}: no metrics")
            continue
        body = text.split("Plan with Metrics", 1)[1]
        ops = []
        for line in body.splitlines():
            line = re.sub(r"^\|[^|]*\| *", "", line).strip()
            m = re.match(r"([A-Za-z]+Exec)(: mode=\w+)?", line)
            if not m:
                continue
            t = seconds(line)
            # Time a scan or join spends beside elapsed_compute.
            extra = sum(v for k, v in t.items() if k != "elapsed_compute" and k.startswith(
                ("join", "build", "repartition", "send", "warpread_dynamic_filter", "time_elapsed_processing")))
            total = t.get("elapsed_compute", 0.0) + extra
            rows = ROWS.search(line)
            table = re.search(r"(\w+)\.parquet", line)
            label = m[1] + (m[2] or "") + (f" {table[1]}" if table else "")
            ops.append((total, label, rows[0] if rows else ""))
        ops.sort(reverse=True)
        total = sum(o[0] for o in ops)
        print(f"== {f.name}: {total:.2f} s thread time in {len(ops)} operators")
        for t, label, rows in ops[:top]:
            print(f"   {t:7.3f}  {label}  {rows}")


if __name__ == "__main__":
    main()
