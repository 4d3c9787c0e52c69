#!/usr/bin/env bash
# Every GPU of a host, and one worker process per GPU: TPC-H through SQL
# (Parquet GZIP) on 1, 2, 4 ... devices, 16 cores per device (taskset; a
# run's workers inherit its cores), every result checked against
# DataFusion's own reader by `bench sql` (DataFusion runs once per query:
# --datafusion-runs 1). DuckDB (a wheel carried in WHEELS) reads the same
# files with all cores as the anchor.
#   [SCALE=30 RUNS=1 WARMUP=1 COUNTS="1 2 4" WHEELS=duckdb-whl FLAGS="..."] \
#     bash scripts/gpu_devices.sh BUNDLE [tests|sql|dist|duckdb|scan|all]...
# scan: the lineitem scan alone (`bench read-devices`): each device alone,
# then all of them at once on one byte range of the file each.
# FLAGS: more warpread flags for every run (e.g. "--host-threads 64" to
# give every device's host share all of the host's threads).
set -u
B=$1
shift
modes=${*:-all}
root=$PWD
. scripts/gpu_bundle_env.sh
unpack_bundle "$B"
N=$root/$B/warpread
export WARPREAD_KERNEL_CACHE=/tmp/kc WARPREAD_CACHE=/tmp/wc
SCALE=${SCALE:-30}
gpus=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)
nvidia-smi --query-gpu=index,name --format=csv,noheader
nproc
$N --backend cuda info
has() { [[ " $modes " == *" $1 "* || " $modes " == *" all "* ]]; }
bench() { # CORES DEVICES [bench sql flags...]
  local cores=$1 devices=$2
  shift 2
  /usr/bin/time -f "wall %e s, peak %M KiB" taskset -c "$cores" $N --backend cuda --devices "$devices" \
    bench sql --scale "$SCALE" --format parquet --compression gzip --runs "${RUNS:-1}" \
    --warmup "${WARMUP:-1}" --datafusion-runs 1 ${FLAGS:-} "$@" 2>&1 | grep -vE "^\s*$" | tail -32
}
if has tests; then
  (cd "$B" && it_tests_env "$root" && ./it-tests --test-threads=4 2>&1 | grep -E "test result|FAILED|panicked" | head -20)
fi
for n in ${COUNTS:-1 2 4}; do
  [ "$n" -le "$gpus" ] || continue
  list=$(seq -s, 0 $((n - 1)))
  cores="0-$((16 * n - 1))"
  if has sql; then
    echo "== one process, --devices $list, cores $cores"
    bench "$cores" "$list"
  fi
  if has dist; then
    echo "== $n worker processes (one device each), cores $cores"
    bench "$cores" "$list" --workers "$n"
  fi
done
if has scan; then
  d=$WARPREAD_CACHE/tpch-sf$SCALE-parquet-gzip
  [ -f "$d/lineitem.parquet" ] || $N gen tpch --scale "$SCALE" --format parquet --compression gzip "$d" > /dev/null
  for n in ${COUNTS:-1 2 4}; do
    [ "$n" -gt 1 ] && [ "$n" -le "$gpus" ] || continue
    echo "== lineitem scan, --devices $(seq -s, 0 $((n - 1))), cores 0-$((16 * n - 1))"
    taskset -c "0-$((16 * n - 1))" $N --backend cuda --devices "$(seq -s, 0 $((n - 1)))" ${FLAGS:-} \
      bench read-devices --runs "${RUNS:-3}" --warmup "${WARMUP:-1}" "$d/lineitem.parquet"
  done
fi
if has duckdb; then
  python3 -m pip install --quiet --no-index --target /tmp/pyduck "${WHEELS:-duckdb-whl}"/duckdb-*.whl
  echo "== DuckDB, all $(nproc) cores"
  PYTHONPATH=/tmp/pyduck python3 scripts/duckdb_tpch.py "$WARPREAD_CACHE/tpch-sf$SCALE-parquet-gzip" \
    --runs "${RUNS:-1}" --warmup "${WARMUP:-1}"
fi
