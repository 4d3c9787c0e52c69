#!/usr/bin/env bash
# Streaming `cat` on the GPU host: TPC-H lineitem SF ${SCALE:-10} Parquet
# GZIP to an Arrow IPC file on each backend, wall clock and peak resident
# memory by /usr/bin/time -v, both outputs compared byte for byte.
#   [ROUNDS=2] bash scripts/gpu_streaming.sh BUNDLE
set -u
B=$1
root=$PWD
. scripts/gpu_bundle_env.sh
unpack_bundle "$B"
N=$root/$B/warpread
export WARPREAD_KERNEL_CACHE=/tmp/kc WARPREAD_LOG=info
d=/tmp/stream; mkdir -p $d
f=$d/lineitem.parquet
if [ ! -f $f ]; then
  t=$(date +%s)
  $N gen tpch --scale "${SCALE:-10}" --tables lineitem --format parquet --compression gzip $d > /dev/null
  echo "== generated lineitem SF ${SCALE:-10} in $(( $(date +%s) - t )) s: $(stat -c %s $f) bytes"
fi
nvidia-smi --query-gpu=name --format=csv,noheader
nproc
for round in $(seq "${ROUNDS:-2}"); do
  for b in cuda cpu; do
    rm -f $d/out-$b.arrow
    /usr/bin/time -v $N --backend $b cat --format arrow -o $d/out-$b.arrow $f 2> $d/time-$b.txt
    rc=$?
    echo "-- round $round $b rc=$rc: $(grep -E 'Elapsed \(wall' $d/time-$b.txt | sed 's/.*): //') wall, $(grep 'Maximum resident' $d/time-$b.txt | sed 's/.*: //') KB max RSS, out $(stat -c %s $d/out-$b.arrow 2>/dev/null) bytes"
    grep -E "rows decoded|rror" $d/time-$b.txt | head -3
  done
  cmp $d/out-cuda.arrow $d/out-cpu.arrow && echo "outputs identical"
done
rm -f $d/out-*.arrow
