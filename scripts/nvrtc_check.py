#!/usr/bin/env python3
"""Compiles every crates/warpread-exec/kernels/*.cu with NVRTC exactly as warpread does (same
defines, same options), without a GPU: catches compile errors and prints the
register / spill report before a device run is spent on them.

    LIBNVRTC=/path/to/libnvrtc.so.13 python3 scripts/nvrtc_check.py [sm_90]
    KERNELS="huffman.cu" ... checks only the files named
    CUBIN_DIR=DIR ... also writes each file's cubin there (for nvdisasm,
    from the PyPI wheel `nvidia-cuda-nvdisasm`: SASS without a GPU)

With WARPREAD_KERNEL_DIR set, files of that folder replace their namesakes in
kernels/ (codag.cuh and deflate.cuh offered as headers), as warpread's --kernel-dir does; the GSST
launch shape variables (WARPREAD_GSST_THREADS, WARPREAD_GSST_MIN_BLOCKS,
WARPREAD_GSST_RING) change the defines as warpread's --gsst-threads,
--gsst-min-blocks and --gsst-ring do (not re-validated here: warpread
rejects what does not hold).

libnvrtc comes with any CUDA toolkit, or from the PyPI wheel
`nvidia-cuda-nvrtc` (unzip it; no GPU needed).
"""
import ctypes, os, pathlib, re, sys

root = pathlib.Path(__file__).resolve().parent.parent
arch = sys.argv[1] if len(sys.argv) > 1 else "sm_90"
lib = ctypes.CDLL(os.environ.get("LIBNVRTC", "libnvrtc.so.13"))
launch = "".join((root / f).read_text() for f in (
    "crates/warpread-exec/src/gpu/launch.rs", "crates/warpread-codecs/src/gsst/shape.rs"))
consts = dict(re.findall(r"pub const (\w+): u32 = ([^;]+);", launch))
wpb = int(consts["WARPS_PER_BLOCK"])
ring = int(consts["RING_BYTES"])
# The GSST launch shape as warpread takes it (warpread-codecs gsst/shape.rs):
# the compiled-in constants unless WARPREAD_GSST_THREADS / _MIN_BLOCKS / _RING
# (this script's stand-ins for warpread's --gsst-* flags) replace them; the coalesced decoder's ring shrinks from 8 to fit 48 KiB.
gsst_threads = int(os.environ.get("WARPREAD_GSST_THREADS", consts["GSST_THREADS_PER_BLOCK"]))
gsst_min_blocks = int(os.environ.get("WARPREAD_GSST_MIN_BLOCKS", consts["GSST_MIN_BLOCKS_PER_SM"]))
gsst_ring = int(os.environ.get("WARPREAD_GSST_RING", consts["GSST_RING_GRANULES"]))
wide_max = int(consts["GSST_WIDE_RING_GRANULES"])
wide_fixed = 512 * 8 + 512 + 512 * 8 + 64 + gsst_threads * 16
gsst_wide_ring = min(wide_max, max(0, (48 * 1024 - wide_fixed) // (gsst_threads * 16)))
print(f"GSST shape: {gsst_threads} threads, {gsst_min_blocks} blocks/SM, ring {gsst_ring} (coalesced {gsst_wide_ring})")
opts = [f"--gpu-architecture={arch}", "--std=c++17", "--device-as-default-execution-space",
        "-lineinfo", f"-DCODAG_WARPS_PER_BLOCK={wpb}", f"-DCODAG_RING_BYTES={ring}",
        f"-DGSST_THREADS={gsst_threads}", f"-DGSST_RING_GRANULES={gsst_ring}",
        f"-DGSST_MIN_BLOCKS={gsst_min_blocks}", f"-DGSST_WIDE_RING_GRANULES={gsst_wide_ring}",
        "-Xptxas=-v"]
# The other launch constants launch.rs passes (`defines`).
opts += [f"-D{name}={consts[key]}" for name, key in (
    ("HUFF_THREADS", "HUFFMAN_THREADS"), ("HUFF_ENC_THREADS", "HUFFMAN_ENCODE_THREADS"),
    ("SPAN_WARPS", "SPAN_WARPS"),
    ("SPAN_THREADS", "SPAN_THREADS"), ("SPAN_TAIL_THREADS", "SPAN_TAIL_THREADS"))]
override = pathlib.Path(os.environ["WARPREAD_KERNEL_DIR"]) if os.environ.get("WARPREAD_KERNEL_DIR") else None
def source(name):
    if override is not None and (override / name).exists():
        return override / name
    return root / "crates/warpread-exec/kernels" / name
# The headers warpread offers every compilation (gpu/kernels.rs, HEADERS).
header_names = ["codag.cuh", "deflate.cuh"]
headers = [source(h).read_bytes() for h in header_names]
failed = False
only = set(os.environ.get("KERNELS", "").split())
for cu in sorted(source(k.name) for k in (root / "crates/warpread-exec/kernels").glob("*.cu")
                 if not only or k.name in only):
    prog = ctypes.c_void_p()
    hdrs = (ctypes.c_char_p * len(headers))(*headers)
    names = (ctypes.c_char_p * len(headers))(*[h.encode() for h in header_names])
    r = lib.nvrtcCreateProgram(ctypes.byref(prog), cu.read_bytes(), cu.name.encode(), len(headers), hdrs, names)
    assert r == 0, r
    o = (ctypes.c_char_p * len(opts))(*[x.encode() for x in opts])
    r = lib.nvrtcCompileProgram(prog, len(opts), o)
    size = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetProgramLog(prog, log)
    print(f"== {cu.name}: {'ok' if r == 0 else 'FAILED'}")
    print(log.value.decode(errors="replace"))
    failed |= r != 0
    if r == 0 and os.environ.get("CUBIN_DIR"):
        lib.nvrtcGetCUBINSize(prog, ctypes.byref(size))
        cubin = ctypes.create_string_buffer(size.value)
        lib.nvrtcGetCUBIN(prog, cubin)
        out = pathlib.Path(os.environ["CUBIN_DIR"]) / (cu.stem + ".cubin")
        out.write_bytes(cubin.raw[:size.value])
sys.exit(1 if failed else 0)
