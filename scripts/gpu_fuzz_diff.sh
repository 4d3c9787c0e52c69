#!/usr/bin/env bash
# GPU differential fuzzing (issue 34, point 2): fuzz/diff's gpu_fuzz_diff
# reads deterministic mutants of the ORC and Parquet fixtures and of GSST
# containers on the CPU and the CUDA backend in one process per GPU slot,
# under compute-sanitizer, and this script adds up the verdicts.
#
# Here (a Rust toolchain; the GPU host has none):
#   scripts/gpu_fuzz_diff.sh pack
#     builds fuzz/diff (stable, release, CARGO_TARGET_DIR=fuzz/target-diff),
#     strips and xz-compresses it into fuzz/gpu-carry/diff/, with the GSST
#     containers seed.sh wrote from the fixtures (fuzz/corpus/gsst_container/
#     {gsst,huffman,auto}-*.arrow, under 256 KiB) as container seeds,
#     gsst-seeds.tar.xz. fuzz/gpu-carry is
#     git-ignored: name it in the device call's carry.
# On the GPU host, from the repository root:
#   scripts/gpu_fuzz_diff.sh run OUT_DIR [SECONDS] [PROCS_PER_GPU] [FIRST] [TOOLS]
#     PROCS_PER_GPU (default 3) processes on every GPU, each under
#     `compute-sanitizer --tool memcheck`, each taking 100,000 mutant numbers
#     from FIRST (default 0) and stopping after SECONDS (default 420);
#     TOOLS (default "racecheck initcheck synccheck"; "none" for none) each
#     run over the same TOOL_MUTANTS (default 200) mutants from FIRST +
#     8,000,000 at the same time (stopping after SECONDS too),
#     the first tool on GPU 0, the next on GPU 1, ...
#     (the unsanitized warm-up reads 200 from FIRST + 9,000,000).
#     Per-process logs and dumped disagreements go to OUT_DIR; the
#     counts come last.
set -uo pipefail
cd "$(dirname "$0")/.."
carry=fuzz/gpu-carry/diff
cmd=${1:-}
case $cmd in
pack)
  set -e
  export CARGO_TARGET_DIR=$PWD/fuzz/target-diff
  nice -n 10 cargo +stable build --release --manifest-path fuzz/diff/Cargo.toml
  rm -rf "$carry" && mkdir -p "$carry/gsst-seeds"
  strip -o "$carry/gpu_fuzz_diff" "$CARGO_TARGET_DIR/release/gpu_fuzz_diff"
  xz -9 -T0 "$carry/gpu_fuzz_diff"
  find fuzz/corpus/gsst_container -maxdepth 1 -type f \
    \( -name 'gsst-*.arrow' -o -name 'huffman-*.arrow' -o -name 'auto-*.arrow' \) \
    -size -256k -exec cp {} "$carry/gsst-seeds/" \;
  tar -C "$carry" -cf - gsst-seeds | xz -9 -T0 > "$carry/gsst-seeds.tar.xz"
  rm -rf "$carry/gsst-seeds"
  du -sh "$carry" "$carry"/*
  ;;
run)
  out=${2:?OUT_DIR}
  secs=${3:-420}
  per_gpu=${4:-3}
  first=${5:-0}
  tools=${6:-racecheck initcheck synccheck}
  mkdir -p "$out"
  bin=/tmp/gpu_fuzz_diff
  xz -dc "$carry/gpu_fuzz_diff.xz" > "$bin" && chmod +x "$bin"
  # DIFF_EXTRA: more runner arguments (--cpu-only for a dry run without a GPU).
  seeds=(--seeds testdata/orc --seeds testdata/parquet ${DIFF_EXTRA:-})
  if [ -f "$carry/gsst-seeds.tar.xz" ]; then
    tar -C /tmp -xJf "$carry/gsst-seeds.tar.xz" && seeds+=(--containers /tmp/gsst-seeds)
  fi
  export WARPREAD_KERNEL_CACHE=/tmp/warpread-kc RAYON_NUM_THREADS=2
  gpus=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)
  nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader
  compute-sanitizer --version | tail -1
  # Compiles the kernels once into the cache the sanitized processes read,
  # and measures the unsanitized rate: 200 mutants on GPU 0.
  CUDA_VISIBLE_DEVICES=0 "$bin" "${seeds[@]}" --kernel-cache /tmp/warpread-kc \
    --first $((first + 9000000)) --mutants 200 --dump "$out/dump" --log "$out/plain.log" \
    > "$out/plain.out" 2>&1
  echo "unsanitized: $(grep SUMMARY "$out/plain.out")"
  pids=()
  for ((g = 0; g < gpus; g++)); do
    for ((p = 0; p < per_gpu; p++)); do
      k=$((g * per_gpu + p))
      # Stopped 90 s past SECONDS should one mutant run long.
      CUDA_VISIBLE_DEVICES=$g timeout $((secs + 90)) compute-sanitizer --tool memcheck --error-exitcode 9 \
        --print-limit 20 "$bin" "${seeds[@]}" --kernel-cache /tmp/warpread-kc \
        --first $((first + k * 100000)) --mutants 100000 --time-limit "$secs" \
        --dump "$out/dump" --log "$out/memcheck-$k.log" > "$out/memcheck-$k.out" 2>&1 &
      pids+=($!)
    done
  done
  if [ "$tools" != none ]; then
    i=0
    for t in $tools; do
      CUDA_VISIBLE_DEVICES=$((i % gpus)) timeout $((secs + 90)) compute-sanitizer --tool "$t" \
        --error-exitcode 9 --print-limit 20 "$bin" "${seeds[@]}" --kernel-cache /tmp/warpread-kc \
        --first $((first + 8000000)) --mutants "${TOOL_MUTANTS:-200}" --time-limit "$secs" --dump "$out/dump" \
        --log "$out/$t.log" > "$out/$t.out" 2>&1 &
      pids+=($!)
      i=$((i + 1))
    done
  fi
  for pid in "${pids[@]}"; do wait "$pid"; done
  # The counts.
  python3 - "$out" <<'PY'
import pathlib, re, sys
out = pathlib.Path(sys.argv[1])
for tool in ["memcheck", "racecheck", "initcheck", "synccheck"]:
    files = sorted(out.glob(f"{tool}*.out"))
    if not files:
        continue
    tot, procs, errs, warns, bad = {}, 0, 0, 0, []
    for f in files:
        text = f.read_text(errors="replace")
        m = re.search(r"^SUMMARY (.*)$", text, re.M)
        if not m:
            # Killed: its per-mutant log still counts what it read.
            log = f.with_suffix(".log")
            lines = log.read_text(errors="replace").splitlines() if log.exists() else []
            n = sum(1 for l in lines if not l.startswith("DISAGREEMENT"))
            tot["mutants_of_unfinished"] = tot.get("mutants_of_unfinished", 0) + n
            bad.append(f.name)
        else:
            procs += 1
            for k, v in re.findall(r"(\w+)=([0-9.]+)\b", m.group(1)):
                if k not in ("slowest_ms", "seconds"):
                    tot[k] = tot.get(k, 0) + int(v)
        for n in re.findall(r"ERROR SUMMARY: (\d+) error", text):
            errs += int(n)
        # racecheck sums up its own way: hazards as errors and warnings.
        for e, w in re.findall(r"RACECHECK SUMMARY: \d+ hazards? displayed \((\d+) errors?, (\d+) warnings?\)", text):
            errs += int(e)
            warns += int(w)
        if "ERROR SUMMARY" not in text and "RACECHECK SUMMARY" not in text:
            bad.append(f"{f.name} (no sanitizer summary)")
        reports = [l for l in text.splitlines() if l.startswith("=========")
                   and not re.match(r"=+ (COMPUTE-SANITIZER|ERROR SUMMARY)|=+\s*$", l)]
        for l in reports[:3]:
            print(f"  {f.name}: {l}")
        for line in re.findall(r"^DISAGREEMENT .*$", text, re.M)[:5]:
            print(f"  {f.name}: {line}")
    print(f"{tool}: processes={procs} " + " ".join(f"{k}={v}" for k, v in tot.items())
          + f" sanitizer_errors={errs}" + (f" racecheck_warnings={warns}" if tool == "racecheck" else "")
          + (f" unfinished={bad}" if bad else ""))
PY
  ls "$out/dump" 2>/dev/null | head -20
  ;;
*)
  sed -n '2,25p' "$0"
  exit 2
  ;;
esac
