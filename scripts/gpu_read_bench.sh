#!/usr/bin/env bash
# End-to-end read benchmarks on the GPU host, in parts (data kept in /tmp/d):
#   bash scripts/gpu_read_bench.sh BUNDLE PART...
# PART: gen (TPC-H lineitem SF 1 and the taxi sample x16 as ORC 0.11/0.12 ZLIB
# and Parquet GZIP, converted in parallel; genorc / genpq: the ORC / Parquet
# files only), orc, pq (warpread cuda/cpu and
# pyarrow on them), orcab / pqab (A/B runs through option flags),
# rel (BUNDLE/warpread-rel, another build of the same source), tests
# (run-gpu.sh tests), sf10gen, sf10 (lineitem SF 10 GZIP), groups (SF 10 with
# read groups of 1 and 4 GiB), old (BUNDLE/warpread-old, an earlier build:
# Parquet SF 1 files and SF 10 on CUDA, for A/B in one call), share (the
# Parquet files with --no-host-share: every inflate job on the
# device), sf10b (SF 10 on CUDA with and without the host share, the old
# build if the bundle has one, and pyarrow), flight / flight10 (interleaved
# A/B on the Parquet SF 1 and taxi files / on SF 10: read groups in flight
# 2 against 1, CRC32 on the device against the host, smaller groups).
set -u
B=$1; shift
root=$PWD
# Unpacked once: parts may run as several invocations side by side.
. scripts/gpu_bundle_env.sh
unpack_bundle "$B"
W=$root/$B/warpread
export WARPREAD_KERNEL_CACHE=/tmp/kc
d=/tmp/d; mkdir -p $d
taxi=${TAXI:-$root/$B-data/realdata/nyc_yellow_taxi_2018_2020_sample_360k.parquet}
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
ORC="$d/lineitem_v0.11.orc $d/taxi_v0.11.orc $d/lineitem_v0.12.orc $d/taxi_v0.12.orc"
PQ="$d/lineitem_gzip.parquet $d/taxi_gzip.parquet"
# The conversions start in the background; the caller waits.
gen_orc() {
  for v in 0.11 0.12; do
    python3 scripts/parquet_to_orc.py $d/lineitem.parquet $d/lineitem_v$v.orc --version $v &
    python3 scripts/parquet_to_orc.py $taxi $d/taxi_v$v.orc --version $v --tile 16 &
  done
}
gen_parquet() {
  python3 scripts/parquet_rewrite.py $d/lineitem.parquet $d/lineitem_gzip.parquet --compression gzip &
  python3 scripts/parquet_rewrite.py $taxi $d/taxi_gzip.parquet --compression gzip --tile 16 &
}
for part in "$@"; do
t=$(date +%s)
case $part in
gen|genorc|genpq)
  [ -f $d/lineitem.parquet ] || $W gen tpch --scale 1 --tables lineitem --compression snappy $d >/dev/null
  [ $part = genpq ] || gen_orc
  [ $part = genorc ] || gen_parquet
  wait ;;
orc)
  $W --backend cuda bench read --runs 7 $ORC
  $W --backend cuda --column-sets 1 bench read --runs 7 $d/taxi_v0.12.orc $d/lineitem_v0.11.orc
  $W --backend cpu bench read --runs 3 $ORC
  python3 scripts/orc_read_bench.py --runs 5 $ORC ;;
pq)
  $W --backend cuda bench read --runs 7 $PQ
  $W --backend cpu bench read --runs 3 $PQ
  python3 scripts/orc_read_bench.py --runs 5 $PQ ;;
orcab)
  $W --backend cuda --device-mirror-mib 0 bench read --runs 7 $ORC
  $W --backend cuda --column-sets 1 bench read --runs 7 $ORC
  $W --backend cuda --pinned-pool-mib 0 bench read --runs 7 $ORC ;;
rel)
  R=$root/$B/warpread-rel
  $R --backend cuda bench read --runs 7 $ORC $PQ
  $R --backend cpu bench read --runs 3 $ORC $PQ ;;
pqab)
  $W --backend cuda bench read --runs 7 $PQ
  $W --backend cuda --device-mirror-mib 0 bench read --runs 7 $PQ
  $W --backend cuda --column-sets 1 bench read --runs 7 $PQ
  $W --backend cpu bench read --runs 3 $PQ
  python3 scripts/orc_read_bench.py --runs 5 $PQ ;;
tests)
  bash "$B/run-gpu.sh" tests 2>&1 | grep -E "test result|FAILED|panicked|failed|skipped: no CUDA" | head -20 ;;
sf10gen)
  [ -f $d/sf10/lineitem.parquet ] || $W gen tpch --scale 10 --tables lineitem --format parquet --compression gzip $d/sf10 >/dev/null
  ls -la $d/sf10 ;;
sf10)
  $W --backend cuda bench read --runs 3 --warmup 1 $d/sf10/lineitem.parquet
  $W --backend cuda --device-mirror-mib 0 bench read --runs 3 --warmup 1 $d/sf10/lineitem.parquet
  $W --backend cpu bench read --runs 2 --warmup 0 $d/sf10/lineitem.parquet
  python3 scripts/orc_read_bench.py --runs 2 $d/sf10/lineitem.parquet ;;
old)
  O=$root/$B/${OLD:-warpread-old}
  $O --backend cuda bench read --runs 7 $PQ
  [ -f $d/sf10/lineitem.parquet ] && $O --backend cuda bench read --runs 3 --warmup 1 $d/sf10/lineitem.parquet ;;
share)
  $W --backend cuda --no-host-share bench read --runs 7 $PQ ;;
sf10b)
  $W --backend cuda bench read --runs 3 --warmup 1 $d/sf10/lineitem.parquet
  $W --backend cuda --no-host-share bench read --runs 3 --warmup 1 $d/sf10/lineitem.parquet
  O=$root/$B/${OLD:-warpread-old}
  [ -x $O ] && $O --backend cuda bench read --runs 3 --warmup 1 $d/sf10/lineitem.parquet
  python3 scripts/orc_read_bench.py --runs 2 $d/sf10/lineitem.parquet ;;
flight)
  for i in 1 2; do
    echo "-- round $i: default (1 in flight, device CRC32)"; $W --backend cuda bench read --runs 7 $PQ
    echo "-- round $i: 2 in flight"; $W --backend cuda --groups-in-flight 2 bench read --runs 7 $PQ
    echo "-- round $i: host CRC32"; $W --backend cuda --no-device-crc bench read --runs 7 $PQ
    for g in 50 34; do
      echo "-- round $i: taxi, groups of $g MiB"; $W --backend cuda --group-mib $g bench read --runs 7 $d/taxi_gzip.parquet
    done
  done
  python3 scripts/orc_read_bench.py --runs 5 $PQ ;;
flight10)
  for i in 1 2; do
    echo "-- round $i: SF 10 default"; $W --backend cuda bench read --runs 3 --warmup 1 $d/sf10/lineitem.parquet
    echo "-- round $i: SF 10 2 in flight"; $W --backend cuda --groups-in-flight 2 bench read --runs 3 --warmup 1 $d/sf10/lineitem.parquet
    echo "-- round $i: SF 10 host CRC32"; $W --backend cuda --no-device-crc bench read --runs 3 --warmup 1 $d/sf10/lineitem.parquet
    echo "-- round $i: SF 10 groups of 512 MiB"; $W --backend cuda --group-mib 512 bench read --runs 3 --warmup 1 $d/sf10/lineitem.parquet
  done
  python3 scripts/orc_read_bench.py --runs 2 $d/sf10/lineitem.parquet ;;
groups)
  for g in 1024 4096; do
    $W --backend cuda --group-mib $g bench read --runs 3 --warmup 1 $d/sf10/lineitem.parquet
  done ;;
esac
echo "== $part $(( $(date +%s) - t )) s"
done
