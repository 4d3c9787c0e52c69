#!/usr/bin/env bash
# Where TPC-H's join queries spend their time on the GPU host:
#   [SQL_SCALE=10] [TRACE_QUERIES=3,5,9,18,21] [EXPLAIN_QUERIES=9,18] bash scripts/gpu_sql_diag.sh BUNDLE OUT_DIR
# 1. generates TPC-H at SQL_SCALE (Parquet GZIP) unless there;
# 2. traces TRACE_QUERIES on the CUDA backend (one run after an untimed one)
#    and prints when each scan read ran against the query's end
#    and the pinned-memory allocations (scripts/trace_timeline.py), the
#    trace kept in OUT_DIR;
# 3. EXPLAIN ANALYZE of EXPLAIN_QUERIES over warpread's and DataFusion's
#    readers, the plans kept in OUT_DIR.
set -u
B=$1; out=$2
. scripts/gpu_bundle_env.sh
unpack_bundle "$B"
export WARPREAD_KERNEL_CACHE=/tmp/kc
scale=${SQL_SCALE:-10}
d=$(tpch_parquet "$B" "$scale")
WARPREAD_CACHE=/tmp/wc WARPREAD_TRACE="$out/trace.json" "$B/warpread-sql" bench sql --scale "$scale" \
  --format parquet --backends cuda --runs 1 --warmup 1 --queries "${TRACE_QUERIES:-3,5,9,18,21}" 2>&1 | tail -12
python3 scripts/trace_timeline.py "$out/trace.json" --prefix scan.read --merge | cut -c1-150
python3 scripts/trace_timeline.py "$out/trace.json" --prefix "pinned.alloc" --merge | cut -c1-150
T=""; for t in lineitem orders customer part partsupp supplier nation region; do T="$T --table $t=$d/$t.parquet"; done
IFS=, read -r -a eq <<< "${EXPLAIN_QUERIES-9,18}"
for q in "${eq[@]}"; do for r in warpread datafusion; do
  "$B/warpread-sql" --backend cuda sql $T --parquet-reader $r "$(cat queries/tpch/q$q.sql)" > /dev/null 2>&1
  "$B/warpread-sql" --backend cuda sql $T --parquet-reader $r "EXPLAIN ANALYZE $(cat queries/tpch/q$q.sql)" > "$out/q$q-$r.txt" 2>&1
  echo "== Q$q $r: $(grep -o 'elapsed_compute=[0-9.a-zµ]*' "$out/q$q-$r.txt" | head -1)"
done; done
