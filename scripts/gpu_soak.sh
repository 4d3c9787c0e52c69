#!/usr/bin/env bash
# The soak: TPC-H at SCALE (default 1), its 22 queries over and over in
# one `warpread sql` session on the CUDA backend for SOAK_SECONDS (default 1800),
# the process's resident memory and device memory sampled every INTERVAL
# seconds (default 10). Prints the samples, then the last against the
# sample at the end of the first minute, and the statements that failed.
# After every pass the shell's `\memory` reports what the backend holds
# (pinned pool, device memory live and kept by idle lanes, the device
# pool's mapping); each sample shows the latest report.
#   [SCALE=1 SOAK_SECONDS=1800 INTERVAL=10 BACKEND=cuda] bash scripts/gpu_soak.sh BUNDLE
set -u
B=$1
. scripts/gpu_bundle_env.sh
unpack_bundle "$B"
bdir=$(cd "$B" && pwd)
N=$bdir/warpread
export WARPREAD_KERNEL_CACHE=/tmp/kc
d=$(tpch_parquet "$bdir" "${SCALE:-1}")
tables=()
for t in lineitem orders customer part partsupp supplier nation region; do
  tables+=(--table "$t=$d/$t.parquet")
done
total=${SOAK_SECONDS:-1800}
step=${INTERVAL:-10}
# The loop ends when the session does (cat fails on the closed pipe).
(while cat queries/tpch/*.sql && echo '\memory'; do :; done) 2> /dev/null |
  "$N" --backend ${BACKEND:-cuda} sql "${tables[@]}" --format csv > /tmp/soak.out 2> /tmp/soak.err &
sleep 1
pid=$(pgrep -n -f "$N --backend ${BACKEND:-cuda} sql")
echo "seconds rss_mib device_mib output_lines"
first=""
for ((s = step; s <= total; s += step)); do
  sleep "$step"
  kill -0 "$pid" 2> /dev/null || { echo "the session ended early"; break; }
  rss=$(( $(ps -o rss= -p "$pid") / 1024 ))
  dev=$(nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits |
    awk -F', ' -v p="$pid" '$1 == p {print $2}')
  echo "$s $rss ${dev:-0} $(wc -l < /tmp/soak.out)"
  grep '^memory' /tmp/soak.err | tail -2 | sed 's/^/    /'
  [ "$s" -ge 60 ] && [ -z "$first" ] && first="$rss ${dev:-0}"
done
pkill -f "$N --backend ${BACKEND:-cuda} sql"
echo "after the first minute (rss, device MiB): $first; at the end: $rss ${dev:-0}"
echo "statements that failed: $(grep -c '^error' /tmp/soak.err)"
grep '^error' /tmp/soak.err | head -3
