#!/usr/bin/env bash
# Every GPU of a host: TPC-H through SQL on one device and on all of them
# (results checked against DataFusion's own reader by `bench sql`), after
# the reader tests that share backends.
#   [SCALE=10 RUNS=3] bash scripts/gpu_devices.sh BUNDLE
set -u
B=$1
root=$PWD
. scripts/gpu_bundle_env.sh
unpack_bundle "$B"
N=$root/$B/warpread
export WARPREAD_KERNEL_CACHE=/tmp/kc WARPREAD_CACHE=/tmp/wc
nvidia-smi --query-gpu=index,name --format=csv,noheader
$N --backend cuda info
(cd "$B" && it_tests_env "$root" && ./it-tests --test-threads=4 reader_builders concurrent_reads huffman 2>&1 | tail -3)
for devices in 0 all; do
  echo "== --devices $devices"
  $N --backend cuda --devices "$devices" bench sql --scale "${SCALE:-10}" --format parquet \
    --compression gzip --runs "${RUNS:-3}" --warmup 1 2>&1 | grep -vE "^\s*$" | tail -30
done
