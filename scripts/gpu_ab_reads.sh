#!/usr/bin/env bash
# Interleaved A/B of end-to-end reads on the GPU host, after
# gpu_read_bench.sh's genpq and sf10gen: BUNDLE/warpread (N) against
# BUNDLE/warpread-old (O), ROUNDS rounds, the order alternating between
# rounds (a fixed order biased an earlier call), then pyarrow on the same
# files.
#   ROUNDS=3 bash scripts/gpu_ab_reads.sh BUNDLE
set -u
B=$1
root=$PWD
export WARPREAD_KERNEL_CACHE=/tmp/kc
d=/tmp/d
N=$root/$B/warpread
O=$root/$B/warpread-old
PQ="$d/lineitem_gzip.parquet $d/taxi_gzip.parquet"
for i in $(seq "${ROUNDS:-3}"); do
  if [ $((i % 2)) = 1 ]; then order="N O"; else order="O N"; fi
  for b in $order; do
    [ $b = N ] && W=$N || W=$O
    echo "-- round $i $b"
    $W --backend cuda bench read --runs 7 --warmup 2 $PQ | grep -E "parquet "
    $W --backend cuda bench read --runs 3 --warmup 1 $d/sf10/lineitem.parquet | grep -E "parquet |cuda events"
  done
done
python3 scripts/orc_read_bench.py --runs 5 $PQ
python3 scripts/orc_read_bench.py --runs 2 $d/sf10/lineitem.parquet
