#!/usr/bin/env bash
# TPC-H through DataFusion on the GPU host, A/B over scan partitions:
#   bash scripts/gpu_sql_ab.sh BUNDLE FORMAT [PARTITIONS...]
# Each run: `warpread-sql bench sql --scale ${SCALE:-10} --format FORMAT
# --backends cuda --runs 1 --warmup ${WARMUP:-0}` with WARPREAD_SCAN_PARTITIONS
# set, the variables in ENVS, and each KEY=VALUE of SETS passed as `--set`
# (e.g. SETS="warpread.group_mib=64 warpread.read_ahead=3") (a first,
# untimed, Q1 run generates the data into /tmp/wc and compiles the
# kernels).
set -u
B=$1; fmt=$2; shift 2
cd "$B"; [ -f warpread-sql ] || xz -dk warpread-sql.xz; chmod +x warpread-sql; cd ..
export WARPREAD_KERNEL_CACHE=/tmp/kc WARPREAD_CACHE=/tmp/wc
# Generates the data and compiles the kernels before the timed runs.
./$B/warpread-sql bench sql --scale "${SCALE:-10}" --format "$fmt" --backends cuda --runs 1 --queries 1 > /dev/null 2>&1
sets=(); for s in ${SETS:-}; do sets+=(--set "$s"); done
for p in "${@:-4}"; do
  t=$(date +%s)
  echo "== WARPREAD_SCAN_PARTITIONS=$p ${ENVS:-} ${SETS:-}"
  env ${ENVS:-} WARPREAD_SCAN_PARTITIONS=$p ./$B/warpread-sql bench sql --scale "${SCALE:-10}" --format "$fmt" --backends cuda --runs 1 --warmup "${WARMUP:-0}" "${sets[@]}"
  echo "== $(( $(date +%s) - t )) s"
done
