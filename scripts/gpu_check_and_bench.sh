#!/usr/bin/env bash
# One device call that checks a bundle and measures the end-to-end reads:
#   bash scripts/gpu_check_and_bench.sh BUNDLE OUT_DIR
# 0. with SQL_SCALE=S, first TPC-H through DataFusion at scale S on Parquet
#    GZIP (BUNDLE/warpread-sql bench sql, CUDA backend against DataFusion's
#    own reader, an untimed run of each query first; its table also in
#    OUT_DIR/sql.log; SQL_TRACE=1 traces it into OUT_DIR);
# 1. generates the benchmark files in the background (gpu_read_bench.sh
#    genpq and sf10gen side by side: lineitem SF 1 and the taxi sample x16 as
#    Parquet GZIP by pyarrow, lineitem SF 10 GZIP by warpread) while the
#    integration tests run on the GPU (CHECKS=0 skips them), then
#    compute-sanitizer memcheck over the Parquet kernel tests;
# 2. ROUNDS (default 2) rounds of `bench read` on CUDA over the three files,
#    then the CPU backend on the small ones and pyarrow on all three;
# 3. a traced taxi read (WARPREAD_TRACE), its summary, and the trace
#    xz-compressed into OUT_DIR.
# Extra configurations for an interleaved A/B go in CONFIGS (as for
# gpu_env_ab.sh: "name:VAR=VALUE,BIN=FILE"); the default build alone otherwise.
set -u
B=$1; out=$2
root=$PWD
. scripts/gpu_bundle_env.sh
unpack_bundle "$B"
export WARPREAD_KERNEL_CACHE=/tmp/kc
d=/tmp/d
if [ -n "${SQL_SCALE:-}" ]; then
  t=$(date +%s)
  # Into the folder bench sql reads (datagen::cache::tpch_dir_name).
  "$B/warpread-sql" gen tpch --scale "$SQL_SCALE" --format parquet \
    --compression gzip "/tmp/wc/tpch-sf$SQL_SCALE-parquet-gzip" > /dev/null 2>&1
  echo "== generated TPC-H SF $SQL_SCALE (warpread gen, all tables) in $(( $(date +%s) - t )) s"
  trace=(); [ "${SQL_TRACE:-0}" = 1 ] && trace=(WARPREAD_TRACE="$out/sql.json")
  env WARPREAD_CACHE=/tmp/wc "${trace[@]}" "$B/warpread-sql" bench sql --scale "$SQL_SCALE" \
    --format parquet --backends cuda --runs 1 --warmup 1 2>&1 | tee "$out/sql.log"
  if [ -f "$out/sql.json" ]; then
    python3 scripts/trace_summary.py "$out/sql.json" | head -60
    xz -9 -T0 "$out/sql.json"
  fi
  echo "== sql $(( $(date +%s) - t )) s"
fi
bash scripts/gpu_read_bench.sh "$B" genpq > "$out/gen.log" 2>&1 &
gen=$!
bash scripts/gpu_read_bench.sh "$B" sf10gen > "$out/gen10.log" 2>&1 &
gen10=$!

t=$(date +%s)
[ "${CHECKS:-1}" = 1 ] && (
  cd "$B"
  it_tests_env "$root"
  ./it-tests --test-threads=1 > "$out/tests.log" 2>&1
  echo "it-tests rc=$?"
  grep -E "^test result|FAILED|panicked" "$out/tests.log" | head -20
  compute-sanitizer --tool memcheck --error-exitcode 9 ./it-tests --test-threads=1 \
    parquet_kernels crc32 parquet_corrupt parquet_gzip > "$out/sanitize.log" 2>&1
  echo "sanitize rc=$?"
  grep -E "^test result|ERROR SUMMARY|FAILED" "$out/sanitize.log" | head -10
)
echo "== checks $(( $(date +%s) - t )) s"
wait $gen $gen10
tail -n 3 "$out/gen.log" "$out/gen10.log"

files="$d/sf10/lineitem.parquet $d/taxi_gzip.parquet $d/lineitem_gzip.parquet"
# shellcheck disable=SC2086
ROUNDS=${ROUNDS:-2} FILES="$files" bash scripts/gpu_env_ab.sh "$B" "new:" ${CONFIGS:-}
W=$root/$B/warpread
python3 scripts/pcie_bandwidth.py
$W --backend cpu bench read --runs 3 --warmup 1 $d/taxi_gzip.parquet $d/lineitem_gzip.parquet | grep -E "parquet "
python3 scripts/orc_read_bench.py --runs 5 $d/taxi_gzip.parquet $d/lineitem_gzip.parquet
python3 scripts/orc_read_bench.py --runs 2 $d/sf10/lineitem.parquet
WARPREAD_TRACE=$out/taxi.json $W --backend cuda bench read --runs 5 --warmup 1 $d/taxi_gzip.parquet | grep -v "^file"
python3 scripts/trace_summary.py "$out/taxi.json"
xz -9 "$out/taxi.json"
