#!/usr/bin/env bash
# Streaming `cat` on the GPU host: TPC-H lineitem SF ${SCALE:-10} Parquet
# GZIP to an Arrow IPC file on each backend, wall clock and peak resident
# memory by /usr/bin/time, outputs compared byte for byte.
#   [ROUNDS=3] [OLD=OTHER_BUNDLE] bash scripts/gpu_streaming.sh BUNDLE [cat|trace|sweep|sink|all]
# cat:   rounds alternating CUDA and CPU, to /dev/null and to a file in /tmp
#        (previous output removed and `sync`ed first), then cmp; with OLD,
#        each round runs that bundle's binary too, after this one's;
# trace: one traced `cat` into a file per backend: how long the writer
#        waited for batches and wrote them, when its first write began, and
#        the spans that ran before it;
# sweep: CUDA to /dev/null over group MiB x groups in flight;
# sink:  how fast this host writes 10 GB into one file (the floor of `cat`;
#        scripts/sink_bench.py).
set -u
B=$1
what=${2:-all}
root=$PWD
. scripts/gpu_bundle_env.sh
unpack_bundle "$B"
N=$root/$B/warpread
export WARPREAD_KERNEL_CACHE=/tmp/kc WARPREAD_LOG=info,warpread_cli=debug
d=/tmp/stream; mkdir -p $d
f=$d/lineitem.parquet
if [ ! -f $f ]; then
  t=$(date +%s)
  $N gen tpch --scale "${SCALE:-10}" --tables lineitem --format parquet --compression gzip $d > /dev/null
  echo "== generated lineitem SF ${SCALE:-10} in $(( $(date +%s) - t )) s: $(stat -c %s $f) bytes"
fi
nvidia-smi --query-gpu=name --format=csv,noheader
nproc
# Kernels compiled into the cache before anything is timed.
$N --backend cuda cat --format arrow -o /dev/null $f 2> /dev/null
# One timed `cat`: "opened" is the backend's creation, "inside" cat's own
# span (input opened to footer written), "writer" what its writer thread
# used over that span; wall and peak RSS are /usr/bin/time's.
run() {
  /usr/bin/time -f "%e s wall, %M KB peak" "$@" 2>&1 |
    grep -E "wall|rror|rows decoded|opened in|writer thread" |
    sed -e 's/.*written in/inside/; s/.*writer thread from the input.s opening:/writer:/; s/.*DEBUG.* opened in/opened/' |
    tr '\n' ' '
  echo
}
bins="new=$N"
if [ -n "${OLD:-}" ]; then
  unpack_bundle "$OLD"
  bins="$bins old=$root/$OLD/warpread"
fi
if [ "$what" = cat ] || [ "$what" = all ]; then
  for round in $(seq "${ROUNDS:-3}"); do
    for nb in $bins; do
      name=${nb%%=*} bin=${nb#*=}
      for b in cuda cpu; do
        echo -n "round $round $name $b /dev/null: "; run $bin --backend $b cat --format arrow -o /dev/null $f
        rm -f $d/out-$b.arrow; sync
        echo -n "round $round $name $b file: "; run $bin --backend $b cat --format arrow -o $d/out-$b.arrow $f
      done
      cmp $d/out-cuda.arrow $d/out-cpu.arrow && echo "outputs identical ($(stat -c %s $d/out-cpu.arrow) bytes)"
      rm -f $d/out-*.arrow; sync
    done
  done
fi
if [ "$what" = trace ] || [ "$what" = all ]; then
  for b in cuda cpu cuda cpu; do
    rm -f $d/out.arrow; sync
    WARPREAD_TRACE=$d/trace.json $N --backend $b cat --format arrow -o $d/out.arrow $f 2> /dev/null
    python3 - "$b" $d/trace.json <<'PY'
import json, sys
ev = json.load(open(sys.argv[2]))
t0 = min(e["ts"] for e in ev)
def total(name):
    return sum(e["dur"] for e in ev if e["name"] == name) / 1e6
writes = [e for e in ev if e["name"] == "cat.write"]
first = min(e["ts"] for e in writes) - t0
last = max(e["ts"] + e["dur"] for e in writes) - t0
print("trace %s: waited %.3f s, wrote %.3f s, first write at %.3f s, last ends %.3f s"
      % (sys.argv[1], total("cat.wait"), total("cat.write"), first / 1e6, last / 1e6))
# What ran before the first write: spans begun before it, by name (a
# column's or kernel's spans under their kind), summed up to it.
w = first + t0
acc = {}
for e in ev:
    if "dur" not in e or e["ts"] >= w:
        continue
    name = e["name"]
    name = name.split("/")[0] if name.startswith("cuda ") else name.split(" ")[0]
    a = acc.setdefault(name, [0, 0.0, e["ts"]])
    a[0] += 1
    a[1] += min(e["dur"], w - e["ts"])
    a[2] = min(a[2], e["ts"])
for name, (n, tot, begun) in sorted(acc.items(), key=lambda kv: kv[1][2]):
    print("  before the first write: %-34s x%-4d %8.1f ms summed, first at %6.1f ms"
          % (name, n, tot / 1e3, (begun - t0) / 1e3))
PY
  done
  rm -f $d/out.arrow $d/trace.json
fi
if [ "$what" = sweep ] || [ "$what" = all ]; then
  for gf in "64 1" "32 2" "32 3" "32 4" "64 2" "16 4" "24 4"; do
    set -- $gf
    echo -n "CUDA /dev/null, $1 MiB x $2 in flight: "
    run $N --backend cuda --group-mib $1 --groups-in-flight $2 cat --format arrow -o /dev/null $f
  done
fi
if [ "$what" = sink ] || [ "$what" = all ]; then
  python3 scripts/sink_bench.py "${SINK_ROUNDS:-1}" --dir $d
fi
