#!/usr/bin/env bash
# Builds a self-contained folder for a CUDA host without a Rust toolchain:
# the stripped `warpread` binary (warpread-cli, DataFusion included), the
# stripped integration tests of the reader crate (`warpread`: every
# GPU-vs-CPU differential test; no DataFusion in them) as it-tests, with
# BUNDLE_UNIT=1 the unit tests of warpread-exec and warpread, the ORC and
# Parquet corpus, and run-gpu.sh; the benchmark's real-data files go to a
# sibling folder OUT_DIR-data, so a device call carries only what it needs
# (64 MiB a call).
#
#   scripts/gpu-bundle.sh [OUT_DIR]      (default: bundle/, git-ignored)
#   BUNDLE_CORPUS=0 leaves the corpus out (a call that needs room for nvCOMP)
#   BUNDLE_PYTHON=1 adds the Python native module (see below)
#   BUNDLE_PROFILE=release builds with the release profile (thin LTO) instead
#     of `gpu` (no LTO, incremental: minutes after a small change)
#
# On the GPU host:  bash OUT_DIR/run-gpu.sh [tests|bench|all]
#                   bash OUT_DIR/run-gpu.sh gsst RESULTS_DIR
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-bundle}
# Over this, the binaries are xz-compressed (the device call carries 64 MiB
# in all, nvCOMP's ~27 MiB included).
limit_mib=30
profile=${BUNDLE_PROFILE:-gpu}

# The executables a `cargo test --no-run` built, as "KIND NAME PATH" lines.
test_executables() {
  cargo test --profile "$profile" --no-run "$@" --message-format=json 2>/dev/null |
    python3 -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"]:
        print(m["target"]["kind"][0], m["package_id"].split("#")[0].rsplit("/", 1)[-1], m["executable"])
'
}

rm -rf "$out" "$out-data"
mkdir -p "$out" "$out-data/realdata"
# With the Python module, one cargo invocation builds both: built apart,
# their different feature sets of Arrow and DataFusion would build those
# twice.
if [ "${BUNDLE_PYTHON:-0}" = 1 ]; then
  # As maturin builds it: an extension module leaves libpython unlinked
  # (the interpreter that imports it provides the symbols).
  PYO3_BUILD_EXTENSION_MODULE=1 \
    cargo build --profile "$profile" -p warpread-cli --bin warpread -p warpread-python --lib
else
  cargo build --profile "$profile" -p warpread-cli --bin warpread
fi
cp "target/$profile/warpread" "$out/warpread"
read -r _ _ it < <(test_executables -p warpread --test it)
cp "$it" "$out/it-tests"
bins=("$out/warpread" "$out/it-tests")
# BUNDLE_SQL_TESTS=1: the DataFusion and CLI integration tests too
# (df-it-tests, cli-it-tests), for their CUDA cases (SQL cancellation,
# concurrent queries on one device).
if [ "${BUNDLE_SQL_TESTS:-0}" = 1 ]; then
  for crate in warpread-datafusion warpread-cli; do
    read -r _ _ exe < <(test_executables -p "$crate" --test it)
    name=${crate#warpread-}
    cp "$exe" "$out/$name-it-tests"
    bins+=("$out/$name-it-tests")
  done
fi
# BUNDLE_PYTHON=1: the Python package's native module (as
# _warpread.abi3.so, beside the repository's python/warpread sources on the
# GPU host), and the wheels in BUNDLE_WHEELS (a folder; nanoarrow for the
# device tests) copied to OUT_DIR/wheels.
if [ "${BUNDLE_PYTHON:-0}" = 1 ]; then
  cp "target/$profile/lib_warpread.so" "$out/_warpread.abi3.so"
  bins+=("$out/_warpread.abi3.so")
  if [ -n "${BUNDLE_WHEELS:-}" ]; then
    mkdir -p "$out/wheels" && cp "$BUNDLE_WHEELS"/*.whl "$out/wheels/"
  fi
fi
if [ "${BUNDLE_UNIT:-0}" = 1 ]; then
  for crate in warpread-exec warpread; do
    read -r _ _ exe < <(test_executables -p "$crate" --lib)
    cp "$exe" "$out/unit-tests-$crate"
    bins+=("$out/unit-tests-$crate")
  done
fi
strip "${bins[@]}"

realdata=${WARPREAD_REALDATA:-../shared/realdata}
if [ -d "$realdata" ]; then
  for f in fannie_mae_performance_2007Q3_10k.parquet nyc_yellow_taxi_2018_2020_sample_360k.parquet \
           criteo_kaggle_train_head999.parquet snap_ego_twitter_edges.parquet \
           genome_hg38_chr2_1-2333275.fa.xz english_corpus_19mb.txt.xz; do
    [ -f "$realdata/$f" ] && cp "$realdata/$f" "$out-data/realdata/"
  done
fi

# The ORC and Parquet part of the third-party corpus (~14 MiB), for the
# GPU-vs-CPU differential tests; never committed, only carried in the bundle.
corpus=${WARPREAD_CORPUS:-../shared/corpora}
if [ "${BUNDLE_CORPUS:-1}" = 1 ] && [ -f "$corpus/INDEX.tsv" ]; then
  mkdir -p "$out/corpus"
  head -1 "$corpus/INDEX.tsv" > "$out/corpus/INDEX.tsv"
  grep -P '\tfmt:(orc|parquet)|,fmt:(orc|parquet)' "$corpus/INDEX.tsv" >> "$out/corpus/INDEX.tsv" || true
  tail -n +2 "$out/corpus/INDEX.tsv" | cut -f1 | while read -r f; do
    mkdir -p "$out/corpus/$(dirname "$f")" && cp "$corpus/$f" "$out/corpus/$f"
  done
fi

size_mib=$(( $(du -sb "$out" | cut -f1) / 1048576 ))
if [ "$size_mib" -gt "$limit_mib" ]; then
  xz -9 -T0 "${bins[@]}"
fi

cat > "$out/run-gpu.sh" <<'RUN'
#!/usr/bin/env bash
# Runs warpread's GPU tests and benchmarks from this folder.
#   run-gpu.sh tests | bench | deflate | sanitize | orc | parquet | all   (default all)
#   run-gpu.sh gsst [RESULTS_DIR]   (default RESULTS_DIR: ./gsst-results)
#   run-gpu.sh variants             (kernel variants in ./variants/NAME/, see below)
#   run-gpu.sh sql [SCALE]          (TPC-H through DataFusion; the warpread binary carries DataFusion)
# `deflate` also runs nvCOMP Deflate on the same chunks when the nvCOMP
# folder from scripts/fetch-nvcomp.sh is at ../.nvcomp.
set -uo pipefail
cd "$(dirname "$0")"
for f in *.xz; do [ -e "$f" ] && xz -dkf "$f"; done
chmod +x warpread it-tests unit-tests-* 2>/dev/null
# Real data travels in the sibling folder <bundle>-data when a call needs it.
export WARPREAD_REALDATA="$PWD-data/realdata"
ln -sfn "$PWD-data/realdata" realdata
export WARPREAD_BIN="$PWD/warpread"
export WARPREAD_KERNEL_CACHE="${WARPREAD_KERNEL_CACHE:-$PWD/.kernel-cache}"
# Fixtures and scripts live in the repository copy around this folder.
export WARPREAD_ROOT="$(cd .. && pwd)"
[ -d corpus ] && export WARPREAD_CORPUS="$PWD/corpus"
export WARPREAD_EXPECTED_CACHE="$PWD/.corpus-expected"
what=${1:-all}
rc=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv || true
./warpread info || rc=1
if [ "$what" = tests ] || [ "$what" = all ]; then
  for u in unit-tests-*; do [ -x "$u" ] && { ./"$u" --test-threads=2 || rc=1; }; done
  ./it-tests --test-threads=1 || rc=1
fi
if [ "$what" = sanitize ]; then
  # memcheck over the corrupt-input and differential tests: any out-of-bounds
  # access in a kernel fails the run.
  compute-sanitizer --tool memcheck --error-exitcode 9 ./it-tests --test-threads=1 \
    corrupt int_rle deflate gsst orc || rc=1
fi
if [ "$what" = bench ] || [ "$what" = all ]; then
  ./warpread --backend cuda bench codecs --codec orc-rle-v1 --suite codag || rc=1
fi
if [ "$what" = deflate ]; then
  dump=$(mktemp -d)
  ./warpread --backend cuda bench codecs --codec deflate --suite codag --dump "$dump" || rc=1
  if [ -d ../.nvcomp ]; then
    PYTHONPATH="$PWD/../.nvcomp${PYTHONPATH:+:$PYTHONPATH}" \
    LD_LIBRARY_PATH="$PWD/../.nvcomp/nvidia/libnvcomp/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
      python3 ../scripts/nvcomp_bench.py "$dump" || rc=1
  else
    echo "nvCOMP not bundled (run scripts/fetch-nvcomp.sh): skipped the nvCOMP comparison"
  fi
fi
if [ "$what" = gsst ]; then
  # GSST (both layouts) and nvCOMP's codecs on the same 1 GiB of TPC-H
  # comment text, same run; RESULTS_DIR gets gsst.json, nvcomp_codecs.json
  # and results.json (both, for scripts/gsst_plots.py).
  res=${2:-$PWD/gsst-results}
  mkdir -p "$res"
  dump=$(mktemp -d)
  ./warpread --backend cuda bench gsst --input tpch --size-mib "${GSST_MIB:-1024}" --layout both \
    --json --dump "$dump/tpch-comments.txt" > "$res/gsst.json" || rc=1
  if [ -d ../.nvcomp ]; then
    PYTHONPATH="$PWD/../.nvcomp${PYTHONPATH:+:$PYTHONPATH}" \
    LD_LIBRARY_PATH="$PWD/../.nvcomp/nvidia/libnvcomp/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
      python3 ../scripts/nvcomp_codecs_bench.py "$dump/tpch-comments.txt" --chunk-kib "${NVCOMP_CHUNK_KIB:-64}" \
        --json "$res/nvcomp_codecs.json" > "$res/nvcomp_codecs.txt" || rc=1
    cat "$res/nvcomp_codecs.txt" | sed -n '1,/^{/p' | head -n -1
  else
    echo "nvCOMP not bundled (run scripts/fetch-nvcomp.sh): skipped the nvCOMP codecs"
  fi
  python3 - "$res" <<'PY' || rc=1
import json, pathlib, sys
res = pathlib.Path(sys.argv[1])
out = {}
for key, name in (("gsst", "gsst.json"), ("nvcomp", "nvcomp_codecs.json")):
    try:
        out[key] = json.loads((res / name).read_text())
    except (OSError, ValueError) as e:
        print(f"{name}: {e}", file=sys.stderr)
(res / "results.json").write_text(json.dumps(out, indent=2) + "\n")
print(f"wrote {res / 'results.json'}: {', '.join(out) or 'nothing'}")
PY
  rm -rf "$dump"
fi
if [ "$what" = variants ]; then
  # Each variants/NAME/ holds replacement kernel sources (the binary's
  # --kernel-dir, the test harness's WARPREAD_KERNEL_DIR): the tests of that
  # kernel run on it, then its benchmark; NAME's prefix
  # (inflate or gsst) says which. Per kernel, the built-in source runs first
  # as the baseline; nvCOMP runs right after the baseline on the same bytes.
  if [ -d ../.nvcomp ]; then
    export PYTHONPATH="$PWD/../.nvcomp${PYTHONPATH:+:$PYTHONPATH}"
    export LD_LIBRARY_PATH="$PWD/../.nvcomp/nvidia/libnvcomp/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  fi
  for k in ${VARIANT_KINDS:-inflate gsst}; do
    for v in builtin variants/$k-*/; do
      [ "$v" = builtin ] || [ -d "$v" ] || continue
      name=$(basename "$v")
      kdir=()
      if [ "$v" = builtin ]; then unset WARPREAD_KERNEL_DIR; else export WARPREAD_KERNEL_DIR="$PWD/$v"; kdir=(--kernel-dir "$PWD/$v"); fi
      echo "=== $k: $name"
      case $k in
        inflate)
          ./it-tests --test-threads=1 deflate || { rc=1; echo "=== $name FAILED its tests"; continue; }
          dump=$PWD/.deflate-dump; rm -rf "$dump"; mkdir -p "$dump"
          ./warpread --backend cuda "${kdir[@]}" bench codecs --codec deflate --suite codag --dump "$dump" || rc=1
          if [ "$v" = builtin ] && [ -d ../.nvcomp ]; then python3 ../scripts/nvcomp_bench.py "$dump" || rc=1; fi ;;
        gsst)
          ./it-tests --test-threads=1 gsst || { rc=1; echo "=== $name FAILED its tests"; continue; }
          ./warpread --backend cuda "${kdir[@]}" bench gsst --input tpch --size-mib "${GSST_MIB:-1024}" --layout both || rc=1
          ./warpread --backend cuda "${kdir[@]}" bench gsst --input english --layout both --dump .english.txt || rc=1
          if [ "$v" = builtin ] && [ -d ../.nvcomp ] && [ -f .english.txt ]; then
            python3 ../scripts/nvcomp_codecs_bench.py .english.txt --chunk-kib 64 | sed -n '1,/^{/p' | head -n -1 || rc=1
          fi ;;
      esac
    done
  done
  unset WARPREAD_KERNEL_DIR
fi
if [ "$what" = sql ]; then
  # TPC-H through DataFusion at SCALE (default 10): warpread's provider on
  # ORC ZLIB and Parquet GZIP, CPU and CUDA backends, against DataFusion's
  # own Parquet reader, one run; the warpread binary.
  sql=./warpread
  chmod +x "$sql"
  export WARPREAD_CACHE=${WARPREAD_CACHE:-/tmp/warpread-cache}
  "$sql" bench sql --scale "${2:-10}" --format orc,parquet --backends cpu,cuda \
    --runs "${SQL_RUNS:-1}" ${SQL_QUERIES:+--queries $SQL_QUERIES} || rc=1
fi
if [ "$what" = orc ]; then
  # End to end, ORC ZLIB file to host Arrow: TPC-H lineitem (SF 1) and the
  # NYC taxi sample tiled 16 times, ORC 0.11 (RLE v1) and 0.12 (RLE v2);
  # warpread on both backends and pyarrow, same files, same run.
  d=$(mktemp -d)
  ./warpread gen tpch --scale "${TPCH_SCALE:-1}" --tables lineitem --compression snappy "$d" || rc=1
  files=()
  for v in 0.11 0.12; do
    python3 ../scripts/parquet_to_orc.py "$d/lineitem.parquet" "$d/lineitem_v$v.orc" --version $v || rc=1
    python3 ../scripts/parquet_to_orc.py realdata/nyc_yellow_taxi_2018_2020_sample_360k.parquet \
      "$d/taxi_v$v.orc" --version $v --tile 16 || rc=1
    files+=("$d/lineitem_v$v.orc" "$d/taxi_v$v.orc")
  done
  ./warpread --backend cpu bench read "${files[@]}" || rc=1
  ./warpread --backend cuda bench read "${files[@]}" || rc=1
  python3 ../scripts/orc_read_bench.py "${files[@]}" || rc=1
fi
if [ "$what" = parquet ]; then
  # End to end, Parquet file to host Arrow: TPC-H lineitem and the NYC taxi
  # sample tiled 16 times, each as GZIP, Snappy and Zstd (pyarrow writer);
  # warpread on both backends and pyarrow (all cores), same files, same run.
  d=$(mktemp -d)
  ./warpread gen tpch --scale "${TPCH_SCALE:-1}" --tables lineitem --compression snappy "$d" || rc=1
  files=()
  for c in gzip snappy zstd; do
    python3 ../scripts/parquet_rewrite.py "$d/lineitem.parquet" "$d/lineitem_$c.parquet" --compression $c || rc=1
    python3 ../scripts/parquet_rewrite.py realdata/nyc_yellow_taxi_2018_2020_sample_360k.parquet \
      "$d/taxi_$c.parquet" --compression $c --tile 16 || rc=1
    files+=("$d/lineitem_$c.parquet" "$d/taxi_$c.parquet")
  done
  ./warpread --backend cpu bench read "${files[@]}" || rc=1
  ./warpread --backend cuda bench read "${files[@]}" || rc=1
  python3 ../scripts/orc_read_bench.py "${files[@]}" || rc=1
fi
exit $rc
RUN
chmod +x "$out/run-gpu.sh"
du -sh "$out" "$out-data"
ls -la "$out"
