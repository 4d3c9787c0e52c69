#!/usr/bin/env bash
# Every GPU of a host: TPC-H through SQL on one device and on all of them
# (results checked against DataFusion's own reader by `bench sql`). One
# device gets 16 cores (taskset), all devices 16 cores each.
#   [SCALE=10 RUNS=3 WARMUP=1] bash scripts/gpu_devices.sh BUNDLE [tests|sql|all]
set -u
B=$1
what=${2:-all}
root=$PWD
. scripts/gpu_bundle_env.sh
unpack_bundle "$B"
N=$root/$B/warpread
export WARPREAD_KERNEL_CACHE=/tmp/kc WARPREAD_CACHE=/tmp/wc
gpus=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)
nvidia-smi --query-gpu=index,name --format=csv,noheader
nproc
$N --backend cuda info
if [ "$what" = tests ] || [ "$what" = all ]; then
  (cd "$B" && it_tests_env "$root" && ./it-tests --test-threads=4 2>&1 | grep -E "test result|FAILED|panicked" | head -20)
fi
if [ "$what" = sql ] || [ "$what" = all ]; then
  for devices in 0 all; do
    n=1; [ "$devices" = all ] && n=$gpus
    cores="0-$(( 16 * n - 1 ))"
    echo "== --devices $devices, cores $cores"
    taskset -c "$cores" $N --backend cuda --devices "$devices" bench sql --scale "${SCALE:-10}" \
      --format parquet --compression gzip --runs "${RUNS:-3}" --warmup "${WARMUP:-1}" 2>&1 |
      grep -vE "^\s*$" | tail -30
  done
fi
