#!/usr/bin/env bash
# The Huffman codec on the GPU host, inside the bundle (scripts/gpu-bundle.sh):
# GPU = CPU checks, then ratio and decode throughput of both GPU decoders on
# each data set, and nvCOMP ANS, Bitcomp, Zstd, Deflate and GDeflate on the
# same bytes in the same command.
#
#   cd bundle && bash ../scripts/gpu_huffman.sh [RESULTS_DIR]
#
#   HUFF_MIB     MiB per data set (default 256)
#   HUFF_SETS    data sets (default "tpch english taxi-codes")
#   HUFF_RUNS    timed runs, median reported (default 21)
#   NVCOMP_CHUNK_KIB  nvCOMP chunk size (default 64)
#   HUFF_AB      a folder of other kernel sources (say an earlier huffman.cu):
#                each set is decoded with them too, same call (huffman-SET-ab.json)
#   HUFF_NCU=1   an Nsight Compute profile of each decoder on the first set
#                (64 MiB, 8-bit symbols; ncu-*.txt)
#   HUFF_NVCOMP=0  skips nvCOMP (the decoders alone)
#   HUFF_EXTRA_SETS  sets that also get the sampled and gap-free rows
#                (default: every set)
#   HUFF_WAYS    ways settings to add, as log2 (say "7 8"): each set is also
#                encoded in that many parallel ways a block (E²MC's decoding
#                ways) and decoded (huffman-SET-waysW-Kk.json: W the log2, K the KiB)
#   HUFF_WAYS_KIB  block sizes in KiB for the ways rows (default 32)
#   HUFF_KERNEL_DIR  kernel sources to run instead of the built-in ones
#                (warpread --kernel-dir, WARPREAD_KERNEL_DIR for the tests)
#
# RESULTS_DIR (default ./huffman-results) gets, per data set, huffman-SET.json
# (warpread bench huffman: 8- and 16-bit symbols, gap and sync decoders, CPU
# encode and decode GB/s on this host's cores), nvcomp-SET.json and .txt
# (scripts/nvcomp_codecs_bench.py on the dumped bytes), the GPU=CPU test log
# and a summary table. Exit status 1 if anything failed or mismatched.
set -uo pipefail
res=${1:-$PWD/huffman-results}
mib=${HUFF_MIB:-256}
runs=${HUFF_RUNS:-21}
chunk=${NVCOMP_CHUNK_KIB:-64}
sets=${HUFF_SETS:-tpch english taxi-codes}
wr=${WARPREAD:-./warpread}
extra_sets=${HUFF_EXTRA_SETS:-$sets}
kdir=()
if [ -n "${HUFF_KERNEL_DIR:-}" ]; then
  kdir=(--kernel-dir "$HUFF_KERNEL_DIR")
  export WARPREAD_KERNEL_DIR="$HUFF_KERNEL_DIR"
fi
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$res"
rc=0

# 1. The kernels against the CPU reference: every setting, then damaged
#    frames (statuses must match job for job).
if [ -x ./it-tests ]; then
  ./it-tests huffman_ --test-threads=1 --nocapture 2>&1 | tee "$res/gpu-equals-cpu.log"
  [ "${PIPESTATUS[0]}" = 0 ] || rc=1
  grep -q "skipped: no CUDA device" "$res/gpu-equals-cpu.log" && { echo "no CUDA device"; rc=1; }
else
  echo "no ./it-tests in this folder: GPU=CPU tests not run"; rc=1
fi

# 2. Per data set: warpread's decoders (verified against the input inside
#    the command) and nvCOMP on the dumped bytes.
for set in $sets; do
  dump="$res/$set.bin"
  "$wr" --backend cuda "${kdir[@]}" bench huffman --input "$set" --size-mib "$mib" --symbols both \
    --runs "$runs" --json --dump "$dump" > "$res/huffman-$set.json" || { echo "bench huffman $set failed"; rc=1; }
  # The rows with 1-in-16 sampling and without gap arrays: the ratio cost
  # of sampling and of the gaps on the same bytes.
  if [[ " $extra_sets " == *" $set "* ]]; then
    "$wr" --backend cuda "${kdir[@]}" bench huffman --input "$dump" --size-mib "$mib" --symbols both \
      --sample-every 16 --runs "$runs" --json > "$res/huffman-$set-sampled.json" || rc=1
    "$wr" --backend cuda "${kdir[@]}" bench huffman --input "$dump" --size-mib "$mib" --symbols both \
      --gap-log2 0 --runs "$runs" --json > "$res/huffman-$set-nogap.json" || rc=1
  fi
  for w in ${HUFF_WAYS:-}; do
    for kib in ${HUFF_WAYS_KIB:-32}; do
      "$wr" --backend cuda "${kdir[@]}" bench huffman --input "$dump" --size-mib "$mib" --symbols both \
        --ways-log2 "$w" --block-kib "$kib" --runs "$runs" --json \
        > "$res/huffman-$set-ways$w-${kib}k.json" || { echo "bench huffman $set ways $w failed"; rc=1; }
    done
  done
  if [ -n "${HUFF_AB:-}" ]; then
    "$wr" --backend cuda --kernel-dir "$HUFF_AB" bench huffman --input "$dump" --size-mib "$mib" \
      --symbols both --runs "$runs" --json > "$res/huffman-$set-ab.json" || rc=1
  fi
  if [ "${HUFF_NCU:-0}" = 1 ] && [ "$set" = "${sets%% *}" ]; then
    for k in huffman_gap huffman_sync; do
      ncu --clock-control none --kernel-name "$k" --launch-skip 2 --launch-count 1 --section SpeedOfLight \
        --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats \
        --section MemoryWorkloadAnalysis --section InstructionStats --section SourceCounters \
        "$wr" --backend cuda "${kdir[@]}" bench huffman --input "$dump" --size-mib 64 --symbols 8 --runs 1 \
        --warmup 2 > "$res/ncu-$k.txt" 2>&1 || echo "ncu $k failed"
    done
  fi
  if [ "${HUFF_NVCOMP:-1}" = 0 ]; then
    :
  elif [ -d ../.nvcomp ]; then
    PYTHONPATH="$PWD/../.nvcomp${PYTHONPATH:+:$PYTHONPATH}" \
    LD_LIBRARY_PATH="$PWD/../.nvcomp/nvidia/libnvcomp/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
      python3 "$here/nvcomp_codecs_bench.py" "$dump" --chunk-kib "$chunk" --runs "$runs" \
        --codecs ANS,Bitcomp,Zstd,Deflate,GDeflate \
        --json "$res/nvcomp-$set.json" > "$res/nvcomp-$set.txt" || rc=1
  else
    echo "nvCOMP not bundled (run scripts/fetch-nvcomp.sh): skipped nvCOMP on $set"; rc=1
  fi
  rm -f "$dump"
done

# 3. One table: ratio and decode GB/s of every codec on every set.
python3 - "$res" $sets <<'PY' | tee "$res/summary.txt"
import json, math, sys, pathlib
res = pathlib.Path(sys.argv[1])
print(f"{'set':<12} {'codec':<34} {'ratio':>7} {'H ratio':>7} {'decode GB/s':>11} {'GPU enc GB/s':>12} {'CPU enc GB/s':>12}")
best, best_ways = [], []
for s in sys.argv[2:]:
    ways_files = sorted(res.glob(f"huffman-{s}-ways*.json"))
    for suffix in ["", "-sampled", "-nogap", "-ab"] + [p.stem[len(f"huffman-{s}"):] for p in ways_files]:
        p = res / f"huffman-{s}{suffix}.json"
        if not p.exists():
            continue
        for r in json.loads(p.read_text())["rows"]:
            name = f"huffman{r['symbol_bits']}/{r['decoder']} len{r['max_len']} {r['sampling']} gap{r['gap_bits']}{suffix}"
            g = r.get("gpu_gbps")
            e = r.get("gpu_encode_gbps")
            print(f"{s:<12} {name:<34} {r['ratio']:>7.4f} {r['entropy_ratio']:>7.4f} {g if g is None else round(g, 1)!s:>11} {e if e is None else round(e, 1)!s:>12} {round(r['cpu_encode_gbps'], 2)!s:>12}")
    per_set = [r.get("gpu_gbps") or 0 for r in json.loads((res / f"huffman-{s}.json").read_text())["rows"]] if (res / f"huffman-{s}.json").exists() else []
    if per_set:
        best.append(max(per_set))
    per_set_ways = [r.get("gpu_gbps") or 0 for p in ways_files for r in json.loads(p.read_text())["rows"]]
    if per_set_ways:
        best_ways.append(max(per_set + per_set_ways))
    p = res / f"nvcomp-{s}.json"
    if p.exists():
        rep = json.loads(p.read_text())
        rows = rep.get("codecs", rep.get("rows", []))
        for r in rows if isinstance(rows, list) else []:
            d, c = r.get('decompress_gbps'), r.get('compress_gbps')
            print(f"{s:<12} {'nvcomp ' + str(r.get('codec', r.get('name'))):<34} {r.get('ratio', float('nan')):>7.4f} {'':>7} {d if d is None else round(d, 1)!s:>11} {c if c is None else round(c, 1)!s:>12}")
if best and all(b > 0 for b in best):
    print(f"geomean of the faster Huffman decoder per set: {math.exp(sum(map(math.log, best)) / len(best)):.1f} GB/s")
if best_ways and len(best_ways) == len(best) and all(b > 0 for b in best_ways):
    print(f"geomean of the fastest per set, ways included: {math.exp(sum(map(math.log, best_ways)) / len(best_ways)):.1f} GB/s")
PY
exit $rc
