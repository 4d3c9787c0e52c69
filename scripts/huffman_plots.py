#!/usr/bin/env python3
"""Plots the Huffman codec against nvCOMP's codecs from one GPU run
(scripts/gpu_huffman.sh): compression ratio against decode GB/s, one panel
per data set, one point per Huffman setting and decoder and per nvCOMP
codec, all on the same bytes.

    python3 scripts/huffman_plots.py RESULTS_DIR OUT.png

RESULTS_DIR holds huffman-SET.json (warpread bench huffman --json), the
ways rows huffman-SET-waysW-KKIB.json (HUFF_WAYS) and nvcomp-SET.json
(scripts/nvcomp_codecs_bench.py --json) per data set.
Needs matplotlib (runs where the results were fetched to).
"""
import json
import pathlib
import sys

import matplotlib
import matplotlib.ticker

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def points(res, name):
    out = []
    for h in [res / f"huffman-{name}.json"] + sorted(res.glob(f"huffman-{name}-ways*.json")):
        if not h.exists():
            continue
        # A ways file's setting (say "ways7-32k") names its points.
        setting = h.stem[len(f"huffman-{name}-"):] if "-ways" in h.name else ""
        for r in json.loads(h.read_text())["rows"]:
            if r.get("gpu_gbps"):
                decoder = setting or r["decoder"]
                out.append((f"Huffman {r['symbol_bits']}-bit {decoder}", r["ratio"], r["gpu_gbps"], "o"))
    n = res / f"nvcomp-{name}.json"
    if n.exists():
        for r in json.loads(n.read_text()).get("rows", []):
            if r.get("decompress_gbps"):
                out.append((f"nvCOMP {r['codec']}", r["ratio"], r["decompress_gbps"], "s"))
    return out


def main():
    res, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    sets = sorted(p.name[len("huffman-"):-len(".json")] for p in res.glob("huffman-*.json")
                  if not any(p.name.endswith(s) for s in ("-sampled.json", "-nogap.json", "-ab.json"))
                  and "-ways" not in p.name)
    if not sets:
        sys.exit(f"no huffman-SET.json in {res}")
    cols = min(len(sets), 5)
    rows = (len(sets) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(4.6 * cols, 4.0 * rows), squeeze=False)
    for ax in axes.flat[len(sets):]:
        ax.set_visible(False)
    for ax, name in zip(axes.flat, sets):
        for label, ratio, gbps, marker in points(res, name):
            ax.scatter(gbps, ratio, marker=marker)
            ax.annotate(label, (gbps, ratio), fontsize=7, xytext=(4, 2), textcoords="offset points")
        ax.set_xscale("log")
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.xaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
        ax.set_xlabel("decode GB/s (decoded bytes)")
        ax.set_ylabel("compression ratio")
        ax.set_title(name)
        ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
