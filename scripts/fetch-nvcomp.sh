#!/usr/bin/env bash
# Fetches NVIDIA nvCOMP's Python bindings and shared library (from PyPI wheels)
# into .nvcomp/ (git-ignored), keeping only what `from nvidia import nvcomp`
# needs, for scripts/nvcomp_bench.py on a GPU host without internet:
#
#   scripts/fetch-nvcomp.sh            # here, where PyPI is reachable
#   # carry .nvcomp/ to the GPU host, then from the repo root:
#   PYTHONPATH=$PWD/.nvcomp python3 -c "from nvidia import nvcomp; print(nvcomp.__version__)"
#
# nvidia/libnvcomp/load.py dlopen()s lib64/libnvcomp.so.6 relative to its own
# file, so LD_LIBRARY_PATH is not needed (adding .nvcomp/nvidia/libnvcomp/lib64
# to it is harmless). The wheels' .so files ship stripped already: strip(1)
# would save ~2 KB, so they are left untouched.
#
# Environment overrides:
#   NVCOMP_VERSION  (default 6.0.0.12)
#   NVCOMP_CUDA     (default cu13: the CUDA major of the GPU host)
#   NVCOMP_PY_ABIS  (default "312": CPython ABI tags of nvcomp_impl to keep,
#                    space-separated, e.g. "311 312")
#   NVCOMP_DIR      (default <repo>/.nvcomp)
set -euo pipefail
cd "$(dirname "$0")/.."

version=${NVCOMP_VERSION:-6.0.0.12}
cuda=${NVCOMP_CUDA:-cu13}
abis=${NVCOMP_PY_ABIS:-312}
dest=${NVCOMP_DIR:-$PWD/.nvcomp}
stamp="$dest/VERSION"
want_stamp="nvidia-nvcomp-$cuda==$version abis=$abis"

files=(
  nvidia/libnvcomp/__init__.py
  nvidia/libnvcomp/load.py
  nvidia/libnvcomp/lib64/libnvcomp.so.6
  nvidia/nvcomp/__init__.py
  nvidia/nvcomp/external_memory.py
)
for abi in $abis; do
  files+=("nvidia/nvcomp/nvcomp_impl.cpython-$abi-x86_64-linux-gnu.so")
done

report_size() {
  local bytes
  bytes=$(du -sb "$dest" | cut -f1)
  echo "nvCOMP $version ($cuda) in $dest: $bytes bytes ($(( (bytes + 524288) / 1048576 )) MiB)"
}

complete=1
for f in "${files[@]}"; do
  [ -s "$dest/$f" ] || complete=0
done
if [ "$complete" = 1 ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want_stamp" ]; then
  echo "already present: $want_stamp"
  report_size
  exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The wheels are tagged py3-none-manylinux_2_2{4,7}_x86_64.manylinux_2_28_x86_64;
# --python-version 3.12 only selects among them (the nvcomp wheel carries the
# extension for every CPython 3.9-3.14, the unzip below keeps $abis).
python3 -m pip download --quiet --no-deps --only-binary=:all: \
  --python-version 3.12 --platform manylinux_2_28_x86_64 \
  --dest "$tmp" \
  "nvidia-nvcomp-$cuda==$version" "nvidia-libnvcomp-$cuda==$version"

shopt -s nullglob
libwhl=("$tmp"/nvidia_libnvcomp_"$cuda"-"$version"-*.whl)
pywhl=("$tmp"/nvidia_nvcomp_"$cuda"-"$version"-*.whl)
if [ "${#libwhl[@]}" -ne 1 ] || [ "${#pywhl[@]}" -ne 1 ]; then
  echo "error: expected one wheel of each package in $tmp, got:" >&2
  ls -l "$tmp" >&2
  exit 1
fi

# Unpack into a fresh staging folder, then swap it in, so an interrupted run
# never leaves a half-filled .nvcomp/ that looks complete.
stage="$tmp/stage"
mkdir -p "$stage"
lib_members=() py_members=()
for f in "${files[@]}"; do
  case "$f" in
    nvidia/libnvcomp/*) lib_members+=("$f") ;;
    nvidia/nvcomp/*) py_members+=("$f") ;;
  esac
done
unzip -q -o "${libwhl[0]}" "${lib_members[@]}" -d "$stage"
unzip -q -o "${pywhl[0]}" "${py_members[@]}" -d "$stage"
for f in "${files[@]}"; do
  if [ ! -s "$stage/$f" ]; then
    echo "error: $f missing from the wheels" >&2
    exit 1
  fi
done
chmod 0755 "$stage"/nvidia/libnvcomp/lib64/libnvcomp.so.6 "$stage"/nvidia/nvcomp/*.so
echo "$want_stamp" >"$stage/VERSION"

rm -rf "$dest"
mkdir -p "$(dirname "$dest")"
mv "$stage" "$dest"

# Import check with a local python of a kept ABI, if any (loading needs no
# GPU: only creating a Codec does).
checked=0
for py in python3 $(for abi in $abis; do echo "python${abi:0:1}.${abi:1}"; done); do
  command -v "$py" >/dev/null 2>&1 || continue
  py_abi=$("$py" -c 'import sys; print(f"{sys.version_info[0]}{sys.version_info[1]}")' 2>/dev/null) || continue
  [[ " $abis " == *" $py_abi "* ]] || continue
  PYTHONPATH="$dest" "$py" -c \
    'from nvidia import nvcomp; print("import ok:", nvcomp.__file__, nvcomp.__version__, "cuda", nvcomp.__cuda_version__)'
  checked=1
  break
done
[ "$checked" = 1 ] || echo "note: no local python of ABI '$abis': import not checked here"
report_size
