#!/usr/bin/env bash
# Device-resident reads on the GPU host: the reader crate's device-output
# tests, the Python package's device tests (PyTorch, CuPy and nanoarrow as
# consumers), then files in page cache to Arrow in GPU memory against
# pyarrow plus a CuPy copy of every buffer (scripts/device_read_bench.py).
#   bash scripts/gpu_device_reads.sh BUNDLE [tests|bench|all] [OUT]
# BUNDLE is built with BUNDLE_PYTHON=1 (and BUNDLE_WHEELS holding nanoarrow
# wheels); OUT (default /tmp/device-reads) gets device.json. SKIP_LINEITEM=1
# benchmarks the taxi files only (a call that carries BUNDLE-data alone);
# RUNS (default 5) and GROUP_MIB (read-group sizes to time besides the
# default) tune the benchmark.
set -u
B=$1
what=${2:-all}
out=${3:-/tmp/device-reads}
root=$PWD
. scripts/gpu_bundle_env.sh
unpack_bundle "$B"
export WARPREAD_KERNEL_CACHE=/tmp/kc
mkdir -p "$out"
rc=0

# The package: the repository's Python sources, the bundle's native module,
# nanoarrow's wheel for this interpreter when the bundle has one.
py=/tmp/warpread-py
rm -rf "$py" && mkdir -p "$py"
cp -r python/warpread "$py/" && cp "$B/_warpread.abi3.so" "$py/warpread/"
tag=$(python3 -c 'import sys; print("cp%d%d" % sys.version_info[:2])')
whl=$(ls "$B"/wheels/nanoarrow-*-"$tag"-*.whl 2>/dev/null | head -1)
if [ -n "$whl" ]; then
  python3 -m pip install --quiet --no-deps --no-index --target "$py" "$whl" || echo "nanoarrow not installed"
fi
export PYTHONPATH=$py
python3 -c 'import warpread, pyarrow; print("warpread", warpread.__version__, "pyarrow", pyarrow.__version__)'

if [ "$what" = tests ] || [ "$what" = all ]; then
  (cd "$B" && it_tests_env "$root" &&
    ./it-tests --test-threads=1 device_output a_cuda_backend_without_a_limit) || rc=1
  python3 python/tests/test_device.py || rc=1
fi

if [ "$what" = bench ] || [ "$what" = all ]; then
  d=/tmp/stream
  mkdir -p "$d" /tmp/dev
  if [ "${SKIP_LINEITEM:-0}" != 1 ] && [ ! -f $d/lineitem.parquet ]; then
    t=$(date +%s)
    "$B/warpread" gen tpch --scale 10 --tables lineitem --format parquet --compression gzip $d > /dev/null
    echo "== generated lineitem SF 10 in $(( $(date +%s) - t )) s"
  fi
  taxi="$B-data/realdata/nyc_yellow_taxi_2018_2020_sample_360k.parquet"
  files=()
  [ "${SKIP_LINEITEM:-0}" = 1 ] || files+=($d/lineitem.parquet)
  if [ -f "$taxi" ]; then
    [ -f /tmp/dev/taxi_gzip.parquet ] ||
      python3 scripts/parquet_rewrite.py "$taxi" /tmp/dev/taxi_gzip.parquet --compression gzip --tile 16
    [ -f /tmp/dev/taxi_zlib.orc ] ||
      python3 scripts/parquet_to_orc.py "$taxi" /tmp/dev/taxi_zlib.orc --compression zlib --tile 16
    files+=(/tmp/dev/taxi_gzip.parquet /tmp/dev/taxi_zlib.orc)
  fi
  nvidia-smi --query-gpu=name --format=csv,noheader
  nproc
  # GROUP_MIB="256 64": device reads with those read-group sizes too.
  python3 scripts/device_read_bench.py --runs "${RUNS:-5}" --json "$out/device.json" \
    ${GROUP_MIB:+--group-mib $GROUP_MIB} "${files[@]}" || rc=1
fi
exit $rc
