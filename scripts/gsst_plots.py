#!/usr/bin/env python3
"""Plots GSST against nvCOMP's codecs from one GPU run (run-gpu.sh gsst).

    python3 scripts/gsst_plots.py RESULTS.json OUT_DIR [--blocks N]

RESULTS.json is {"gsst": <warpread bench gsst --json>, "nvcomp":
<scripts/nvcomp_codecs_bench.py --json>}; either part may be missing. Writes
to OUT_DIR:

  ratio_vs_throughput.png  compression ratio against decompression GB/s, one
                           point per GSST layout and per nvCOMP codec;
  ingestion.png            the GSST thesis's ingestion-throughput model
                           (chapter 3) for link speeds of 1 to 100 GB/s;
  ingestion.json           the model's numbers and, per codec, the link speeds
                           at which it ingests fastest.

The model (thesis eq. 3.4): transfer of the compressed bytes, then
decompression, not overlapped:  t = S_c / B + S_u / D, so with r = S_u / S_c

    T(B) = r*B*D / (r*B + D)     (= 1 / (1/(r*B) + 1/D))

where B is the link's GB/s, r the compression ratio and D the decompression
GB/s (of uncompressed output). The thesis also derives (sec. 3.3, app. A) the
case where independent blocks overlap transfer and decompression:
t = max(S_c/B + S_u/(N*D), S_u/D + S_c/(N*B)), i.e.
T = min(r*B*N*D / (N*D + r*B), D*r*N*B / (r*N*B + D)); it is drawn dashed
with N = --blocks (default 64) and was untested in the thesis. Uncompressed
data (r = 1, D infinite) ingests at B and is drawn for reference.

Needs matplotlib (runs where the JSON was fetched to, not on the GPU host).
"""

import argparse
import json
import math
import sys
from pathlib import Path


def points(results):
    """(label, family, ratio, decompress GB/s) for every measured codec."""
    out = []
    g = results.get("gsst") or {}
    for row in g.get("rows", []):
        gbps = row.get("gpu_gbps")
        if gbps:
            out.append((f"GSST {row['layout']}", "gsst", float(row["ratio"]), float(gbps)))
    n = results.get("nvcomp") or {}
    for row in n.get("rows", []):
        if row.get("ok") and row.get("decompress_gbps"):
            out.append((f"nvCOMP {row['codec']}", "nvcomp", float(row["ratio"]), float(row["decompress_gbps"])))
    return out


def ingest_serial(b, r, d):
    """Thesis eq. 3.4: transfer then decompress."""
    return r * b * d / (r * b + d)


def ingest_overlap(b, r, d, n):
    """Thesis eqs. 3.5, 3.6 and A.3: N blocks, transfer and decompression overlapped."""
    transfer_bound = r * b * n * d / (n * d + r * b)
    decode_bound = d * r * n * b / (r * n * b + d)
    return min(transfer_bound, decode_bound)


def link_speeds(lo=1.0, hi=100.0, steps=200):
    return [lo * (hi / lo) ** (i / (steps - 1)) for i in range(steps)]


def best_ranges(pts, speeds):
    """Per codec, the link speeds (GB/s) where its serial-model ingestion is the highest."""
    ranges = {}
    for b in speeds:
        label = max(pts, key=lambda p: ingest_serial(b, p[2], p[3]))[0]
        lo, hi = ranges.get(label, (b, b))
        ranges[label] = (min(lo, b), max(hi, b))
    return ranges


def plot(results, out_dir, blocks):
    import matplotlib  # noqa: PLC0415

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    pts = points(results)
    if not pts:
        raise SystemExit("no measured GSST GPU rows or nvCOMP codecs in the results")
    out_dir.mkdir(parents=True, exist_ok=True)
    device = (results.get("gsst") or {}).get("device") or (results.get("nvcomp") or {}).get("device", "?")

    fig, ax = plt.subplots(figsize=(7, 5))
    for label, family, r, d in pts:
        ax.scatter(d, r, marker="*" if family == "gsst" else "o", s=140 if family == "gsst" else 60,
                   color="tab:red" if family == "gsst" else "tab:blue", zorder=3)
        ax.annotate(label, (d, r), textcoords="offset points", xytext=(6, 4), fontsize=8)
    ax.set_xscale("log")
    ax.set_xlabel("decompression throughput, GB/s of output (log)")
    ax.set_ylabel("compression ratio")
    ax.set_title(f"Same bytes, same run: GSST and nvCOMP\n{device}", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(out_dir / "ratio_vs_throughput.png", dpi=150)
    plt.close(fig)

    speeds = link_speeds()
    fig, ax = plt.subplots(figsize=(8, 5.5))
    ax.plot(speeds, speeds, color="gray", linestyle=":", label="uncompressed (r = 1)")
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    model = {"link_gbps": speeds, "blocks": blocks, "codecs": {}}
    for i, (label, family, r, d) in enumerate(pts):
        c = colors[i % len(colors)]
        serial = [ingest_serial(b, r, d) for b in speeds]
        overlap = [ingest_overlap(b, r, d, blocks) for b in speeds]
        ax.plot(speeds, serial, color=c, linewidth=2.2 if family == "gsst" else 1.2, label=label)
        ax.plot(speeds, overlap, color=c, linewidth=0.8, linestyle="--")
        model["codecs"][label] = {"ratio": r, "decompress_gbps": d, "serial": serial, "overlapped": overlap}
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("link throughput B, GB/s (compressed bytes)")
    ax.set_ylabel("ingestion throughput, GB/s of uncompressed data")
    ax.set_title(
        "Ingestion model (GSST thesis ch. 3): solid r·B·D/(r·B + D), transfer then decompress;\n"
        f"dashed: {blocks} blocks overlapping transfer and decompression (thesis app. A)",
        fontsize=9,
    )
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    fig.savefig(out_dir / "ingestion.png", dpi=150)
    plt.close(fig)

    ranges = best_ranges(pts, speeds)
    model["best_serial"] = {k: {"from_gbps": v[0], "to_gbps": v[1]} for k, v in ranges.items()}
    (out_dir / "ingestion.json").write_text(json.dumps(model, indent=2) + "\n")
    for label, (lo, hi) in sorted(ranges.items(), key=lambda kv: kv[1][0]):
        print(f"fastest ingestion (serial model) from {lo:.1f} to {hi:.1f} GB/s: {label}")
    return pts


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("results", type=Path)
    p.add_argument("out_dir", type=Path)
    p.add_argument("--blocks", type=int, default=64, help="blocks of the overlapped model")
    args = p.parse_args(argv)
    if args.blocks < 1:
        p.error("--blocks must be positive")
    results = json.loads(args.results.read_text())
    pts = plot(results, args.out_dir, args.blocks)
    for label, _, r, d in pts:
        if not (math.isfinite(r) and math.isfinite(d)):
            print(f"warning: {label} has a non-finite ratio or throughput", file=sys.stderr)
    print(f"wrote {args.out_dir}/ratio_vs_throughput.png, ingestion.png, ingestion.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
