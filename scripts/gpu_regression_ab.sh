#!/usr/bin/env bash
# The must-not-regress check of a change on the GPU host: BUNDLE/warpread
# (new) against BUNDLE/warpread-old (the build before the change, copied
# into the bundle by hand), interleaved, each measurement the median of
# `--runs` after `--warmup` runs, every read verified against the CPU
# backend by `bench read` itself.
#   bash scripts/gpu_regression_ab.sh BUNDLE gen     TPC-H lineitem SF 1 and the taxi sample x16 as
#                                                    ORC 0.11/0.12 ZLIB and Parquet GZIP (in /tmp/d)
#   bash scripts/gpu_regression_ab.sh BUNDLE reads   ROUNDS (default 3) rounds of both builds' reads
#   bash scripts/gpu_regression_ab.sh BUNDLE sql     TPC-H SF ${SCALE:-10} Parquet GZIP through
#                                                    DataFusion, both builds, ROUNDS rounds of
#                                                    RUNS (default 1) timed runs after a warm-up
#                                                    (each run's whole output appended to LOG if set)
# The order of the two builds alternates between rounds (SHIFT=1: old first).
set -u
B=$1; shift
root=$PWD
. scripts/gpu_bundle_env.sh
unpack_bundle "$B"
N=$root/$B/warpread
O=$root/$B/warpread-old
export WARPREAD_KERNEL_CACHE=/tmp/kc WARPREAD_CACHE=/tmp/wc
d=/tmp/d; mkdir -p $d
taxi=${TAXI:-$root/$B-data/realdata/nyc_yellow_taxi_2018_2020_sample_360k.parquet}
ORC="$d/lineitem_v0.11.orc $d/taxi_v0.12.orc"
PQ="$d/lineitem_gzip.parquet $d/taxi_gzip.parquet"
rounds=${ROUNDS:-3}
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
for part in "$@"; do
t=$(date +%s)
case $part in
gen)
  [ -f $d/lineitem.parquet ] || $N gen tpch --scale 1 --tables lineitem --compression snappy $d >/dev/null
  python3 scripts/parquet_to_orc.py $d/lineitem.parquet $d/lineitem_v0.11.orc --version 0.11 &
  python3 scripts/parquet_to_orc.py $taxi $d/taxi_v0.12.orc --version 0.12 --tile 16 &
  python3 scripts/parquet_rewrite.py $d/lineitem.parquet $d/lineitem_gzip.parquet --compression gzip &
  python3 scripts/parquet_rewrite.py $taxi $d/taxi_gzip.parquet --compression gzip --tile 16 &
  wait
  ls -la $d ;;
reads)
  for i in $(seq "$rounds"); do
    if [ $(((i + ${SHIFT:-0}) % 2)) = 1 ]; then order="new old"; else order="old new"; fi
    for b in $order; do
      [ $b = new ] && W=$N || W=$O
      echo "-- round $i $b"
      $W --backend cuda bench read --runs 3 --warmup 1 $ORC $PQ 2>&1 | grep -E "^/tmp/d/|^end-to-end|rror"
    done
  done ;;
sql)
  tpch_parquet "$B" "${SCALE:-10}" > /dev/null
  for i in $(seq "$rounds"); do
    if [ $(((i + ${SHIFT:-0}) % 2)) = 1 ]; then order="new old"; else order="old new"; fi
    for b in $order; do
      [ $b = new ] && W=$N || W=$O
      echo "-- round $i $b"
      $W bench sql --scale "${SCALE:-10}" --format parquet --backends cuda --runs "${RUNS:-1}" --warmup 1 2>&1 | tee -a "${LOG:-/dev/null}" | grep -E "^total:| NO$|rror"
    done
  done ;;
esac
echo "== $part: $(( $(date +%s) - t )) s"
done
