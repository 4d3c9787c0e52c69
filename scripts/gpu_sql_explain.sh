#!/usr/bin/env bash
# EXPLAIN ANALYZE of TPC-H queries on the GPU host, per environment setting:
#   [SQL_SCALE=10] [EXPLAIN_QUERIES=3,4] [EXPLAIN_DATAFUSION=1] bash scripts/gpu_sql_explain.sh BUNDLE OUT_DIR [NAME:VAR=VALUE,...]...
# For each query and configuration (the defaults first, as "new"), one
# untimed run then EXPLAIN ANALYZE through warpread's reader on the CUDA
# backend; the plans kept in OUT_DIR/qN-NAME.txt, and per operator its
# rows and times printed (the scan's dynamic-filter time beside the join's
# probe and repartition times it competes with). With EXPLAIN_DATAFUSION=1
# each query is also explained through DataFusion's own Parquet reader
# (configuration "datafusion", OUT_DIR/qN-datafusion.txt), whose host
# operators are the ones to compare against.
set -u
B=$1; out=$2; shift 2
. scripts/gpu_bundle_env.sh
unpack_bundle "$B"
export WARPREAD_KERNEL_CACHE=/tmp/kc
d=$(tpch_parquet "$B" "${SQL_SCALE:-10}")
T=""; for t in lineitem orders customer part partsupp supplier nation region; do T="$T --table $t=$d/$t.parquet"; done
IFS=, read -r -a eq <<< "${EXPLAIN_QUERIES-3,4}"
configs=("new:" "$@")
[ "${EXPLAIN_DATAFUSION:-0}" = 1 ] && configs+=("datafusion:")
for q in "${eq[@]}"; do for config in "${configs[@]}"; do
  name=${config%%:*}; vars=${config#*:}
  IFS=, read -r -a env_vars <<< "$vars"
  sql=$(grep -v '^--' "queries/tpch/q$q.sql" | sed 's/;[[:space:]]*$//')
  f="$out/q$q-$name.txt"
  reader=(); [ "$name" = datafusion ] && reader=(--parquet-reader datafusion)
  env "${env_vars[@]}" "$B/warpread-sql" --backend cuda sql "${reader[@]}" $T -- "$sql; EXPLAIN ANALYZE $sql" > "$f" 2>&1
  echo "== Q$q $name ${vars:-(defaults)}"
  sed -n '/Plan with Metrics/,$p' "$f" | sed -E 's/^\|[^|]*\| *//' |
    grep -oE "^[A-Za-z]+Exec(: mode=[A-Za-z]+)?|[a-z]+\.parquet|output_rows=[0-9.]+ ?[KMB]?|elapsed_compute=[0-9.]+[a-zµ]+|(join|build|repartition|send|warpread_dynamic_filter|warpread_decode)_time=[0-9.]+[a-zµ]+|warpread_rows_dynamic_filtered=[0-9.]+ ?[KMB]?" |
    tr '\n' ' ' | sed -E 's/ ([A-Za-z]+Exec)/\n\1/g; s/(\.parquet) [a-z]+\.parquet/\1/g' | cut -c1-300
  echo
done; done
