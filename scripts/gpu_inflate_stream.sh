#!/usr/bin/env bash
# On the GPU host: speculative span inflate (issue "one deflate stream, the
# whole GPU"). Runs the span-inflate and deflate differential tests (CUDA
# against the CPU reference), the span-inflate tests under
# compute-sanitizer's memcheck, racecheck, initcheck and synccheck, and
# `bench inflate-stream` (zlib on one core, the CPU span inflate on every
# core, the GPU span inflate and one warp per stream, same streams).
#
#   bash scripts/gpu_inflate_stream.sh BUNDLE [tests|sanitize|bench|all] [MiB] [span KiB list]
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/gpu_bundle_env.sh
b=${1:-bundle}
what=${2:-all}
mib=${3:-64}
spans=${4:-64}
unpack_bundle "$b"
root=$(pwd)
export WARPREAD_KERNEL_CACHE=${WARPREAD_KERNEL_CACHE:-/tmp/kc}
if [ "$what" = tests ] || [ "$what" = all ]; then
  echo "== differential tests"
  (cd "$b" && it_tests_env "$root" && ./it-tests --test-threads=1 span_inflate deflate_differential 2>&1 | tail -15)
fi
if [ "$what" = sanitize ] || [ "$what" = all ]; then
  for tool in memcheck racecheck initcheck synccheck; do
    echo "== compute-sanitizer --tool $tool"
    (cd "$b" && it_tests_env "$root" && WARPREAD_SEED=7 compute-sanitizer --tool "$tool" --error-exitcode 9 \
      ./it-tests --test-threads=1 damaged_long_streams 2>&1 | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|test result|panicked|Error" | head -8)
  done
fi
if [ "$what" = bench ] || [ "$what" = all ]; then
  for s in $spans; do
    echo "== bench inflate-stream, $s KiB spans"
    (cd "$b" && it_tests_env "$root" && ./warpread bench inflate-stream --inputs english,taxi-passengers,tpch \
      --size-mib "$mib" --span-kib "$s" --runs 9 --warmup 2 --one-warp 2>&1 | tail -6)
  done
fi
