#!/usr/bin/env python3
"""Compresses the same bytes with each nvCOMP codec on the GPU and times decompression.

    python3 scripts/nvcomp_codecs_bench.py INPUT_FILE [--chunk-kib 64] [--runs 11]
        [--warmup 3] [--codecs LZ4,Snappy,Zstd,Deflate,GDeflate,ANS,Bitcomp] [--json OUT.json]

INPUT_FILE is taken as bytes, e.g. the TPC-H comment text that
`warpread bench gsst --dump PATH` measured GSST on, so that GSST and nvCOMP
see identical input. The bytes are uploaded once and cut into chunks of
--chunk-kib; per codec, through nvCOMP's Python API (RAW bitstreams, no
nvCOMP header, one batched call for all chunks):

  compress    Codec(algorithm=NAME, bitstream_kind=RAW, uncomp_chunk_size=chunk)
              .encode(batch); ratio = input bytes / sum of compressed chunk sizes;
  decompress  decompression_config once (untimed), then codec.decode(compressed,
              out=preallocated batch, decompression_config=cfg), --warmup untimed
              runs and --runs timed ones, CUDA events around the call, median;
              GB/s = 1e9 uncompressed bytes per second;
  verify      the output buffer is filled with a sentinel, decoded once more and
              compared with the input on the device.

A codec that fails (not in this nvCOMP, a chunk size it rejects, a wrong
result) is reported as such and the others still run. stdout gets a table,
then the JSON report (also written to --json). Exit status: 0 when every codec
ran and verified, 1 when some failed, 2 without a GPU, cupy or nvCOMP.

nvCOMP comes from <repo>/.nvcomp (scripts/fetch-nvcomp.sh) or NVCOMP_DIR.
"""

import argparse
import json
import os
import statistics
import sys
import time
import traceback
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
NVCOMP_DIR = Path(os.environ.get("NVCOMP_DIR", REPO / ".nvcomp"))
# Before anything imports the `nvidia` namespace package (cupy may), so that
# the fetched nvCOMP wins over any other installed copy.
if NVCOMP_DIR.is_dir() and str(NVCOMP_DIR) not in sys.path:
    sys.path.insert(0, str(NVCOMP_DIR))

DEFAULT_CODECS = ["LZ4", "Snappy", "Zstd", "Deflate", "GDeflate", "ANS", "Bitcomp"]
SENTINEL = 0xA5


def info(*args):
    print(*args, file=sys.stderr, flush=True)


def median_event_ms(cp, stream, launch, warmup, runs):
    """Median CUDA-event milliseconds of launch() over `runs` timed calls."""
    for _ in range(warmup):
        launch()
    stream.synchronize()
    ms = []
    for _ in range(runs):
        start, end = cp.cuda.Event(), cp.cuda.Event()
        start.record(stream)
        launch()
        end.record(stream)
        end.synchronize()
        ms.append(cp.cuda.get_elapsed_time(start, end))
    return statistics.median(ms), ms


def bench_codec(cp, nc, stream, name, d_in, offsets, sizes, chunk, args):
    row = {"codec": name, "ok": False, "verified": False, "error": None}
    total = int(d_in.size)
    sp = stream.ptr
    try:
        codec = nc.Codec(
            algorithm=name,
            bitstream_kind=nc.BitstreamKind.RAW,
            uncomp_chunk_size=chunk,
            device_id=cp.cuda.Device().id,
            cuda_stream=sp,
        )
        with stream:
            src = nc.as_arrays(d_in, offsets, sizes, cuda_stream=sp)
            t0 = time.perf_counter()
            start, end = cp.cuda.Event(), cp.cuda.Event()
            start.record(stream)
            comp = codec.encode(src)
            end.record(stream)
            end.synchronize()
            row["compress_ms"] = cp.cuda.get_elapsed_time(start, end)
            row["compress_wall_s"] = time.perf_counter() - t0
            comp_sizes = [int(s) for s in comp.buffer_sizes]
            comp_total = sum(comp_sizes)
            row.update(
                compressed_bytes=comp_total,
                ratio=total / max(comp_total, 1),
                compress_gbps=total / (row["compress_ms"] * 1e-3) / 1e9,
            )
            d_out = cp.empty(total, dtype=cp.uint8)
            out = nc.as_arrays(d_out, offsets, sizes, cuda_stream=sp)
            cfg = codec.decompression_config(comp)

            def launch():
                codec.decode(comp, out=out, decompression_config=cfg)

            med, ms = median_event_ms(cp, stream, launch, args.warmup, args.runs)
            row.update(
                decompress_median_ms=med,
                decompress_ms=ms,
                decompress_gbps=total / (med * 1e-3) / 1e9,
            )
            d_out.fill(SENTINEL)
            res = codec.decode(comp, out=out, decompression_config=cfg)
            stream.synchronize()
            got = [int(s) for s in res.buffer_sizes]
            if got != list(sizes):
                raise RuntimeError("decoded chunk sizes differ from the input's")
            if not bool(cp.array_equal(d_out, d_in)):
                first = int(cp.argmax(d_out != d_in))
                raise RuntimeError(f"decoded bytes differ from the input at byte {first}")
        row["ok"] = row["verified"] = True
    except Exception as e:  # noqa: BLE001  (a failing codec is a result, not the end)
        row["error"] = f"{e.__class__.__name__}: {e}"
        info(f"{name}: failed: {row['error']}")
        info(traceback.format_exc())
    finally:
        stream.synchronize()
        cp.get_default_memory_pool().free_all_blocks()
    return row


def table(report):
    lines = [
        f"nvCOMP {report.get('nvcomp_version', '?')} on {report.get('device', '?')}: "
        f"{report['bytes']} bytes of {report['input']}, chunks of {report['chunk_bytes']} bytes, "
        f"decompression median of {report['runs']} runs (CUDA events)",
        f"{'codec':<10} {'ratio':>7} {'comp GB/s':>10} {'decomp ms':>10} {'decomp GB/s':>12}  verified",
    ]
    for r in report["rows"]:
        if r["ok"]:
            lines.append(
                f"{r['codec']:<10} {r['ratio']:>7.3f} {r['compress_gbps']:>10.2f} "
                f"{r['decompress_median_ms']:>10.3f} {r['decompress_gbps']:>12.2f}  yes"
            )
        else:
            lines.append(f"{r['codec']:<10} failed: {r['error']}")
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("input", type=Path)
    p.add_argument("--chunk-kib", type=int, default=64)
    p.add_argument("--runs", type=int, default=11)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--codecs", default=",".join(DEFAULT_CODECS))
    p.add_argument("--json", type=Path)
    args = p.parse_args(argv)
    if args.chunk_kib <= 0 or args.runs <= 0 or args.warmup < 0:
        p.error("--chunk-kib and --runs must be positive, --warmup not negative")
    try:
        import cupy as cp  # noqa: PLC0415
        import numpy as np  # noqa: PLC0415

        if cp.cuda.runtime.getDeviceCount() < 1:
            raise RuntimeError("no CUDA device")
        from nvidia import nvcomp as nc  # noqa: PLC0415
    except Exception as e:  # noqa: BLE001
        info(f"cannot run: {e.__class__.__name__}: {e} (needs cupy, a GPU and nvCOMP in {NVCOMP_DIR})")
        return 2

    data = np.fromfile(args.input, dtype=np.uint8)
    chunk = args.chunk_kib << 10
    offsets = list(range(0, data.size, chunk))
    sizes = [min(chunk, data.size - o) for o in offsets]
    props = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
    name = props["name"]
    report = {
        "input": str(args.input),
        "bytes": int(data.size),
        "chunk_bytes": chunk,
        "chunks": len(offsets),
        "runs": args.runs,
        "warmup": args.warmup,
        "device": name.decode() if isinstance(name, bytes) else str(name),
        "nvcomp_version": getattr(nc, "__version__", "?"),
        "api": "nvidia.nvcomp Python API, BitstreamKind.RAW, batched",
        "rows": [],
    }
    stream = cp.cuda.Stream(non_blocking=False)
    d_in = cp.asarray(data)
    failed = False
    for codec in [c.strip() for c in args.codecs.split(",") if c.strip()]:
        info(f"{codec}: compressing and decoding {data.size} bytes")
        row = bench_codec(cp, nc, stream, codec, d_in, offsets, sizes, chunk, args)
        failed |= not row["ok"]
        report["rows"].append(row)
    print(table(report))
    text = json.dumps(report, indent=2)
    if args.json:
        args.json.write_text(text + "\n")
    print(text)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
