#!/usr/bin/env bash
# Interleaved A/B/... of end-to-end reads on the GPU host by option flags
# (or environment variables) of one binary, after gpu_read_bench.sh's genpq
# and sf10gen. Each config is NAME:ITEM,ITEM where an ITEM is a flag
# (--no-host-share, --group-mib=512), VAR=VALUE, or BIN=FILE, which runs
# BUNDLE/FILE instead of BUNDLE/warpread (NAME: alone is the default);
# the order rotates between rounds (a fixed order biased an earlier call).
# Each line ends with the process's user and system CPU seconds.
#   ROUNDS=2 FILES="..." bash scripts/gpu_env_ab.sh BUNDLE CONFIG...
set -u
B=$1; shift
root=$PWD
export WARPREAD_KERNEL_CACHE=/tmp/kc
d=/tmp/d
W=$root/$B/${BIN:-warpread}
files=${FILES:-$d/sf10/lineitem.parquet}
configs=("$@")
k=${#configs[@]}
for i in $(seq "${ROUNDS:-2}"); do
  for j in $(seq 0 $((k - 1))); do
    c=${configs[$(((i - 1 + j) % k))]}
    name=${c%%:*}; vars=${c#*:}
    envs=(); [ -n "$vars" ] && IFS=, read -ra envs <<< "$vars"
    bin=$W; rest=(); flags=()
    for e in "${envs[@]}"; do
      case $e in BIN=*) bin=$root/$B/${e#BIN=};; -*) flags+=("$e");; *) rest+=("$e");; esac
    done
    envs=("${rest[@]}")
    for f in $files; do
      case $f in *sf10*) runs="--runs 3 --warmup 1";; *) runs="--runs 7 --warmup 2";; esac
      TIMEFORMAT="%U user %S sys"
      { time env "${envs[@]}" $bin --backend cuda "${flags[@]}" bench read $runs $f > /tmp/ab.out 2>&1; } 2> /tmp/ab.time
      echo "round $i $name $(basename $f) $(grep -E "parquet " /tmp/ab.out | awk '{print $5" s "$6" GB/s"}') $(cat /tmp/ab.time)"
    done
  done
done
