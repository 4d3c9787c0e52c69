#!/usr/bin/env bash
# Traced end-to-end reads on the GPU host (WARPREAD_TRACE, then
# scripts/trace_summary.py), after gpu_read_bench.sh's genpq and sf10gen:
#   bash scripts/gpu_trace_reads.sh BUNDLE OUT_DIR [FILE...]
# (TRACE_SETS1=1 also traces each file with column sets off)
set -u
B=$1; out=$2; shift 2
W=$PWD/$B/warpread
export WARPREAD_KERNEL_CACHE=/tmp/kc
files=${*:-/tmp/d/sf10/lineitem.parquet /tmp/d/taxi_gzip.parquet /tmp/d/lineitem_gzip.parquet}
for f in $files; do
  n=$(basename "$(dirname "$f")")_$(basename "$f" .parquet)
  WARPREAD_TRACE=$out/$n.json $W --backend cuda bench read --runs 3 --warmup 1 "$f" | grep -v "^file"
  python3 scripts/trace_summary.py "$out/$n.json"
  [ "${TRACE_SETS1:-0}" = 1 ] || continue
  WARPREAD_TRACE=$out/${n}_sets1.json $W --backend cuda --column-sets 1 bench read --runs 3 --warmup 1 "$f" | grep -v "^file"
  python3 scripts/trace_summary.py "$out/${n}_sets1.json"
done
