#!/usr/bin/env python3
"""Compiles every kernels/*.cu with NVRTC exactly as warpread does (same
defines, same options), without a GPU: catches compile errors and prints the
register / spill report before a device run is spent on them.

    LIBNVRTC=/path/to/libnvrtc.so.13 python3 scripts/nvrtc_check.py [sm_90]

With WARPREAD_KERNEL_DIR set, files of that folder replace their namesakes in
kernels/ (codag.cuh included), as they do for warpread itself.

libnvrtc comes with any CUDA toolkit, or from the PyPI wheel
`nvidia-cuda-nvrtc` (unzip it; no GPU needed).
"""
import ctypes, os, pathlib, re, sys

root = pathlib.Path(__file__).resolve().parent.parent
arch = sys.argv[1] if len(sys.argv) > 1 else "sm_90"
lib = ctypes.CDLL(os.environ.get("LIBNVRTC", "libnvrtc.so.13"))
launch = (root / "src/gpu/launch.rs").read_text()
consts = dict(re.findall(r"pub const (\w+): u32 = ([^;]+);", launch))
wpb = int(consts["WARPS_PER_BLOCK"])
ring = int(consts["RING_BYTES"])
gsst_threads = int(consts["GSST_THREADS_PER_BLOCK"])
gsst_ring = int(consts["GSST_RING_GRANULES"])
opts = [f"--gpu-architecture={arch}", "--std=c++17", "--device-as-default-execution-space",
        "-lineinfo", f"-DCODAG_WARPS_PER_BLOCK={wpb}", f"-DCODAG_RING_BYTES={ring}",
        f"-DGSST_THREADS={gsst_threads}", f"-DGSST_RING_GRANULES={gsst_ring}",
        f"-DGSST_MIN_BLOCKS={int(consts['GSST_MIN_BLOCKS_PER_SM'])}",
        "-Xptxas=-v"]
override = pathlib.Path(os.environ["WARPREAD_KERNEL_DIR"]) if os.environ.get("WARPREAD_KERNEL_DIR") else None
def source(name):
    if override is not None and (override / name).exists():
        return override / name
    return root / "kernels" / name
header = source("codag.cuh").read_bytes()
failed = False
for cu in sorted(source(k.name) for k in (root / "kernels").glob("*.cu")):
    prog = ctypes.c_void_p()
    hdrs = (ctypes.c_char_p * 1)(header)
    names = (ctypes.c_char_p * 1)(b"codag.cuh")
    r = lib.nvrtcCreateProgram(ctypes.byref(prog), cu.read_bytes(), cu.name.encode(), 1, hdrs, names)
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
sys.exit(1 if failed else 0)
