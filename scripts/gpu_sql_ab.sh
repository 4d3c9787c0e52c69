#!/usr/bin/env bash
# TPC-H through DataFusion on the GPU host, A/B over scan partitions:
#   bash scripts/gpu_sql_ab.sh BUNDLE FORMAT [PARTITIONS...]
# Each run: `warpread-sql --scan-partitions N bench sql --scale ${SCALE:-10}
# --format FORMAT --backends cuda --runs 1 --warmup ${WARMUP:-0}`, with the
# flags in FLAGS (e.g. FLAGS="--no-host-share") and the variables in ENVS
# (e.g. ENVS=WARPREAD_GROUP_MIB=64, read by the DataFusion layer) (a first,
# untimed, Q1 run generates the data into /tmp/wc and compiles the kernels).
set -u
B=$1; fmt=$2; shift 2
cd "$B"; [ -f warpread-sql ] || xz -dk warpread-sql.xz; chmod +x warpread-sql; cd ..
export WARPREAD_KERNEL_CACHE=/tmp/kc WARPREAD_CACHE=/tmp/wc
# Generates the data and compiles the kernels before the timed runs.
./$B/warpread-sql bench sql --scale "${SCALE:-10}" --format "$fmt" --backends cuda --runs 1 --queries 1 > /dev/null 2>&1
for p in "${@:-4}"; do
  t=$(date +%s)
  echo "== --scan-partitions $p ${FLAGS:-} ${ENVS:-}"
  env ${ENVS:-} ./$B/warpread-sql --scan-partitions "$p" ${FLAGS:-} bench sql --scale "${SCALE:-10}" --format "$fmt" --backends cuda --runs 1 --warmup "${WARMUP:-0}"
  echo "== $(( $(date +%s) - t )) s"
done
