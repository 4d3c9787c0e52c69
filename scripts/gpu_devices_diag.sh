#!/usr/bin/env bash
# Where several devices of one process lose time: the host's NUMA layout,
# then TPC-H queries (QUERIES, default 1,6,14) at SCALE (default 30) on one
# device (16 cores) and on all four (64 cores), each traced
# (WARPREAD_TRACE) and summarised by span, and the four-device run again
# with memory interleaved over the NUMA nodes (numactl, where installed).
# FLAGS: more warpread flags for every run; ONLY="NAME ..." runs only
# those (one-device, four-devices, four-devices-interleaved); TAG is
# appended to the names of the output files.
#   [SCALE=30 QUERIES=1,6,14 RUNS=3 FLAGS=... ONLY=...] bash scripts/gpu_devices_diag.sh BUNDLE OUT
set -u
B=$1 out=$2
root=$PWD
. scripts/gpu_bundle_env.sh
unpack_bundle "$B"
N=$root/$B/warpread
export WARPREAD_KERNEL_CACHE=/tmp/kc WARPREAD_CACHE=/tmp/wc
nvidia-smi topo -m
lscpu | grep -iE "numa|socket|model name"
command -v numactl && numactl -H | head -12
q=${QUERIES:-1,6,14}
bench() { # NAME PREFIX... -- FLAGS...
  local name=$1
  shift
  [[ -z "${ONLY:-}" || " $ONLY " == *" $name "* ]] || return 0
  echo "== $name ${FLAGS:-}"
  name=$name${TAG:-}
  WARPREAD_TRACE=$out/$name.json /usr/bin/time -f "wall %e s, peak %M KiB" "$@" 2>&1 |
    grep -E "^ +Q|total|wall|scan agg" | tail -8
  python3 scripts/trace_summary.py "$out/$name.json" --runs "${RUNS:-3}" 2>&1 |
    awk '/run\(s\)/ {n=0} {n++} n <= 12' > "$out/$name.spans.txt"
  cat "$out/$name.spans.txt"
  rm -f "$out/$name.json"
}
sql="${FLAGS:-} bench sql --scale ${SCALE:-30} --format parquet --compression gzip --queries $q --runs ${RUNS:-3} --warmup 1 --datafusion-runs 1"
# Generates the data first (untimed here).
$N --backend cpu $sql --runs 1 --warmup 0 --queries 6 > /dev/null 2>&1
bench one-device taskset -c 0-15 $N --backend cuda --devices 0 $sql
bench four-devices taskset -c 0-63 $N --backend cuda --devices 0,1,2,3 $sql
if command -v numactl > /dev/null; then
  bench four-devices-interleaved numactl --interleave=all taskset -c 0-63 $N --backend cuda --devices 0,1,2,3 $sql
fi
