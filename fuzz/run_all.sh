#!/usr/bin/env bash
# Runs each fuzz target in turn for SECONDS (default 60) from its corpus,
# one at a time, and prints libFuzzer's final stats per target. Logs go to
# fuzz/logs/<target>.log (git-ignored). Usage: run_all.sh [SECONDS] [TARGET...]
set -uo pipefail
cd "$(dirname "$0")"
secs=${1:-60}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(orc_file parquet_file orc_rle_v2 orc_rle_v1 inflate deflate_speculative parquet_hybrid
        parquet_ops parquet_delta_binary_packed parquet_dict parquet_plain
        parquet_delta_byte_array parquet_byte_stream_split orc_byte_rle
        orc_bool_rle gsst_block huffman lzo block gsst_container)
fi
mkdir -p logs
for t in "${targets[@]}"; do
    mkdir -p "corpus/$t"
    cargo +nightly fuzz run "$t" "corpus/$t" -- -max_total_time="$secs" \
        -rss_limit_mb=4096 -timeout=10 -max_len=1048576 -print_final_stats=1 \
        >"logs/$t.log" 2>&1
    rc=$?
    execs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "logs/$t.log" | awk '{print $2}')
    done_line=$(grep -o 'Done [0-9]* runs in [0-9]* second(s)' "logs/$t.log" | tail -1)
    printf '%-28s rc=%-3s execs=%-10s %s\n' "$t" "$rc" "${execs:-?}" "${done_line:-no Done line}"
done
