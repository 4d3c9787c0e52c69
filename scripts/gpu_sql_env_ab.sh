#!/usr/bin/env bash
# TPC-H through DataFusion on the GPU host, A/B over session settings:
#   [SQL_SCALE=10] [QUERIES=1,6] [RUNS=3] [CHECKS=1] bash scripts/gpu_sql_env_ab.sh BUNDLE OUT_DIR [NAME:KEY=VALUE,...]...
# A KEY of a `warpread.` or `datafusion.` setting (e.g.
# off:warpread.join_key_sets=false) is passed as `--set KEY=VALUE`, one of
# `df.` (e.g. df.datafusion.optimizer.prefer_hash_join=false) as
# `--datafusion-set` for DataFusion's own reader; any other is an
# environment variable of the process (the readers' own, e.g.
# WARPREAD_SCAN_PARTITIONS=8).
# 0. with CHECKS=1 (or quick), the aggregate-program tests on the GPU (and
#    under compute-sanitizer memcheck), then (CHECKS=1) every integration
#    test;
# 1. generates TPC-H at SQL_SCALE (Parquet GZIP, warpread gen) unless there;
# 2. for each configuration (the default build first, as "new"), `bench sql`
#    on the CUDA backend against DataFusion's own reader over QUERIES
#    (empty: all 22), median of RUNS after an untimed run; tables in
#    OUT_DIR/sql-NAME.log.
set -u
B=$1; out=$2; shift 2
root=$PWD
. scripts/gpu_bundle_env.sh
unpack_bundle "$B"
export WARPREAD_KERNEL_CACHE=/tmp/kc
scale=${SQL_SCALE:-10}
if [ "${CHECKS:-1}" != 0 ]; then
  t=$(date +%s)
  (
    cd "$B"
    it_tests_env "$root"
    ./it-tests --test-threads=1 --nocapture aggregate 2>&1 | grep -E "^test |result|skipped|mirrors|panicked" | head -20
    compute-sanitizer --tool memcheck --error-exitcode 9 ./it-tests --test-threads=1 aggregate \
      > "$out/sanitize-aggregate.log" 2>&1
    echo "sanitize rc=$?"; grep -E "ERROR SUMMARY|test result" "$out/sanitize-aggregate.log" | head -5
    if [ "${CHECKS:-1}" = 1 ]; then
      ./it-tests --test-threads=1 > "$out/tests.log" 2>&1
      echo "it-tests rc=$?"; grep -E "^test result|FAILED|panicked" "$out/tests.log" | head -20
    fi
  )
  echo "== checks $(( $(date +%s) - t )) s"
fi
tpch_parquet "$B" "$scale" > /dev/null
q=(); [ -n "${QUERIES-1,6}" ] && q=(--queries "${QUERIES-1,6}")
for config in "new:" "$@"; do
  name=${config%%:*}; vars=${config#*:}
  IFS=, read -r -a pairs <<< "$vars"
  env_vars=(); sets=()
  for p in "${pairs[@]}"; do
    case $p in
      warpread.*|datafusion.*) sets+=(--set "$p");;
      df.*) sets+=(--datafusion-set "${p#df.}");;
      *) env_vars+=("$p");;
    esac
  done
  echo "== $name ${vars:-(defaults)}"
  env WARPREAD_CACHE=/tmp/wc "${env_vars[@]}" "$B/warpread-sql" bench sql --scale "$scale" \
    --format parquet --backends cuda --runs "${RUNS:-3}" --warmup 1 "${q[@]}" "${sets[@]}" 2>&1 | tee "$out/sql-$name.log"
done
