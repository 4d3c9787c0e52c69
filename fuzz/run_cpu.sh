#!/usr/bin/env bash
# Runs one fuzz target from its corpus until the process has used
# CPU_SECONDS of CPU time (user + sys, read from /proc every 5 s), then
# stops it with SIGINT (libFuzzer prints its final stats), on a machine
# shared with other work where wall-clock limits say little: one core
# (RAYON_NUM_THREADS=1), nice 10. Extra arguments go to libFuzzer (for
# example -timeout=60). Log: fuzz/logs/TARGET-cpu.log; prints the target,
# the CPU seconds used and the executions.
#   run_cpu.sh TARGET CPU_SECONDS [LIBFUZZER_FLAG...]
set -uo pipefail
cd "$(dirname "$0")"
t=$1 want=$2
shift 2
mkdir -p logs "artifacts/$t" "corpus/$t"
export RAYON_NUM_THREADS=1
nice -n 10 "target/x86_64-unknown-linux-gnu/release/$t" "corpus/$t" -rss_limit_mb=4096 -timeout=10 \
    -max_len=1048576 -print_final_stats=1 -artifact_prefix="artifacts/$t/" "$@" \
    > "logs/$t-cpu.log" 2>&1 &
pid=$!
tick=$(getconf CLK_TCK)
used=0
while kill -0 "$pid" 2> /dev/null; do
    sleep 5
    # Fields 14 and 15 of /proc/PID/stat: user and system time in ticks
    # (the command name, field 2, has no spaces here).
    stat=$(cat "/proc/$pid/stat" 2> /dev/null) || break
    used=$(echo "$stat" | awk -v t="$tick" '{print int(($14 + $15) / t)}')
    if [ "$used" -ge "$want" ]; then
        kill -INT "$pid"
        break
    fi
done
wait "$pid"
rc=$?
execs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "logs/$t-cpu.log" | awk '{print $2}')
printf '%-28s rc=%-3s cpu_s=%-6s execs=%s\n' "$t" "$rc" "$used" "${execs:-?}"
