#!/usr/bin/env bash
# Long coverage-guided fuzz runs (issue 34, point 1) on the many CPU cores
# of the GPU host: the cargo-fuzz binaries (AddressSanitizer) are built
# here, since the host has no Rust toolchain, and run there.
#
# Here:
#   scripts/gpu_fuzz_cpu.sh pack SET TARGET...
#     strips and xz-compresses fuzz/target/x86_64-unknown-linux-gnu/release/
#     TARGET (built by `cd fuzz && cargo +nightly fuzz build -O`) into
#     fuzz/gpu-carry/SET/bin/, and packs each target's corpus into
#     fuzz/gpu-carry/SET/corpus-TARGET.tar.xz: fuzz/carry-min/TARGET when a
#     `-merge=1` there made one, else fuzz/corpus/TARGET; a corpus over
#     CORPUS_MIB (default 4) compressed is cut to its smallest files.
#     fuzz/gpu-carry is git-ignored: name fuzz/gpu-carry/SET in the device
#     call's carry.
# On the GPU host, from the repository root:
#   scripts/gpu_fuzz_cpu.sh run SET OUT_DIR SECONDS TARGET:JOBS...
#     runs each TARGET with `-jobs=JOBS -workers=JOBS -max_total_time=SECONDS`
#     (all targets at once), flags as fuzz/run_all.sh (-timeout FUZZ_TIMEOUT,
#     default 10); prints per target
#     the executions (libFuzzer's stat::number_of_executed_units summed over
#     its jobs), the CPU seconds (user + sys of the target's processes) and
#     the crash, timeout and out-of-memory artifacts; logs and artifacts go
#     to OUT_DIR/fuzz-results.tar.xz.
set -uo pipefail
cd "$(dirname "$0")/.."
cmd=${1:-}
case $cmd in
pack)
  set -e
  set_=$2
  shift 2
  dir=fuzz/gpu-carry/$set_
  rel=fuzz/target/x86_64-unknown-linux-gnu/release
  mkdir -p "$dir/bin"
  for t in "$@"; do
    strip -o "$dir/bin/$t" "$rel/$t"
    rm -f "$dir/bin/$t.xz"
    xz -9 -T0 "$dir/bin/$t"
    src=fuzz/carry-min/$t
    [ -d "$src" ] && [ -n "$(ls -A "$src")" ] || src=fuzz/corpus/$t
    limit=$(( ${CORPUS_MIB:-4} * 1048576 ))
    tmp=$(mktemp -d)
    mkdir -p "$tmp/$t"
    # Smallest files first until the compressed size would pass the limit
    # (estimated from the raw size at 1/12, as merged corpora compressed here).
    total=0
    while read -r size f; do
      total=$((total + size))
      [ $((total / 12)) -gt "$limit" ] && break
      cp "$f" "$tmp/$t/"
    done < <(find "$src" -maxdepth 1 -type f -printf '%s %p\n' | sort -n)
    tar -C "$tmp" -cf - "$t" | xz -9 -T0 > "$dir/corpus-$t.tar.xz"
    echo "$t: $(ls "$tmp/$t" | wc -l) of $(ls "$src" | wc -l) corpus files"
    rm -rf "$tmp"
  done
  du -sh "$dir"
  ;;
run)
  set_=$2 out=$3 secs=$4
  shift 4
  dir=$PWD/fuzz/gpu-carry/$set_
  work=/tmp/fuzz-work
  # One core a job: the reader targets would otherwise start a rayon
  # thread per core in every job.
  export RAYON_NUM_THREADS=${RAYON_NUM_THREADS:-1}
  mkdir -p "$out" "$work"
  nproc
  for spec in "$@"; do
    t=${spec%%:*}
    mkdir -p "$work/$t" "$work/bin"
    xz -dc "$dir/bin/$t.xz" > "$work/bin/$t" && chmod +x "$work/bin/$t"
    tar -C "$work/$t" -xJf "$dir/corpus-$t.tar.xz"
    mv "$work/$t/$t" "$work/$t/corpus"
  done
  pids=()
  for spec in "$@"; do
    t=${spec%%:*} jobs=${spec##*:}
    (
      cd "$work/$t" || exit 1
      TIMEFORMAT="CPU $t real=%R user=%U sys=%S"
      { time "$work/bin/$t" corpus -jobs="$jobs" -workers="$jobs" -max_total_time="$secs" \
          -rss_limit_mb=4096 -timeout="${FUZZ_TIMEOUT:-10}" -max_len=1048576 -print_final_stats=1 \
          > master.log 2>&1; } 2> cpu.txt
      echo "files after: $(ls corpus | wc -l)" >> cpu.txt
    ) &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid"; done
  printf '%-28s %5s %12s %10s %8s %s\n' target jobs executions cpu_s cpu_min artifacts
  for spec in "$@"; do
    t=${spec%%:*} jobs=${spec##*:}
    execs=$(cat "$work/$t"/fuzz-*.log 2>/dev/null | grep -o 'stat::number_of_executed_units: [0-9]*' |
      awk '{s += $2} END {print s + 0}')
    cpu=$(awk '/^CPU/ {split($4, u, "="); split($5, s, "="); print u[2] + s[2]}' "$work/$t/cpu.txt")
    arts=$(cd "$work/$t" && ls -d crash-* timeout-* oom-* leak-* slow-unit-* 2>/dev/null | wc -l)
    printf '%-28s %5s %12s %10s %8.1f %s\n' "$t" "$jobs" "$execs" "$cpu" "$(awk -v c="$cpu" 'BEGIN {print c / 60}')" "$arts"
    grep -h 'Done [0-9]* runs\|ERROR: \|SUMMARY: ' "$work/$t"/fuzz-*.log 2>/dev/null | sort | uniq -c | head -5
  done
  # Logs (the final stats of every job), the CPU times and the artifacts.
  (cd "$work" && tar -cf - */fuzz-*.log */master.log */cpu.txt \
    $(ls -d */crash-* */timeout-* */oom-* */leak-* 2>/dev/null) | xz -T0 > "$out/fuzz-results.tar.xz")
  ls -la "$out"
  ;;
*)
  sed -n '2,24p' "$0"
  exit 2
  ;;
esac
