#!/usr/bin/env python3
"""Times NVIDIA nvCOMP's batched decompressors on the chunks that warpread dumped.

    python3 scripts/nvcomp_bench.py DUMP_DIR [--runs 11] [--warmup 3]
        [--algorithms Deflate] [--api both|c|py] [--json OUT.json]
    python3 scripts/nvcomp_bench.py --selftest

DUMP_DIR holds, per dataset NAME (written by `warpread bench codecs --codec deflate --dump DIR`):
  NAME.deflate  independent raw Deflate streams (RFC 1951, no zlib/gzip header),
                concatenated, one per chunk;
  NAME.jobs     little-endian u64 triples (in_off, in_len, out_len), one per
                chunk: the stream's byte range in NAME.deflate and its exact
                decompressed size.

For each dataset (sorted by name) the compressed bytes are uploaded once, all
chunks are decompressed in ONE batched nvCOMP call per run, `--warmup` untimed
runs precede `--runs` timed ones, CUDA events on the decode stream bracket the
call only, and the median is reported (GB/s = 1e9 decompressed bytes/s).
Two nvCOMP entry points are timed (`--api`):
  c   the low-level C API, nvcompBatchedDeflateDecompressAsync, called through
      ctypes on libnvcomp.so.6: device pointer/size arrays, scratch and status
      buffers are built once, outside the timed region (what libcudf does);
  py  the Python API: nvcomp.as_arrays -> Codec(algorithm="Deflate",
      bitstream_kind=BitstreamKind.RAW) -> codec.decompression_config(batch)
      (outside the timed region) -> codec.decode(batch, out=..., decompression_
      config=cfg), timed as the API does it (see each row's timing_note).
Every chunk's output (or `--verify-chunks N` of them, at least 32, spread over
the dataset) is compared with zlib.decompressobj(-15) of the same bytes, and the
per-chunk sizes nvCOMP reports must equal the out_len of NAME.jobs.

stdout carries one line per dataset and API:
    NAME  Deflate  <ratio>  <median ms>  <GB/s>  verified  api=<c|py>
progress and details go to stderr. Exit status: 0 all verified, 1 a mismatch or
an nvCOMP failure (the other rows still run), 2 bad arguments or dump files.

nvCOMP comes from <repo>/.nvcomp (scripts/fetch-nvcomp.sh), put first on
sys.path here (or NVCOMP_DIR=...). nvidia/libnvcomp/load.py dlopen()s
lib64/libnvcomp.so.6 next to itself, so LD_LIBRARY_PATH is not needed; if that
fails, start python with
LD_LIBRARY_PATH=<repo>/.nvcomp/nvidia/libnvcomp/lib64 (it is read only at start).
"""

import argparse
import ctypes
import dataclasses
import gc
import json
import os
import statistics
import sys
import tempfile
import time
import traceback
import zlib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
NVCOMP_DIR = Path(os.environ.get("NVCOMP_DIR", REPO / ".nvcomp"))
# Before anything imports the `nvidia` namespace package (cupy may), so that
# .nvcomp's nvidia/nvcomp wins over any other installed copy.
if NVCOMP_DIR.is_dir() and str(NVCOMP_DIR) not in sys.path:
    sys.path.insert(0, str(NVCOMP_DIR))

try:
    sys.stdout.reconfigure(line_buffering=True)
    sys.stderr.reconfigure(line_buffering=True)
except AttributeError:  # pragma: no cover
    pass

try:
    import numpy as np  # noqa: E402
except ImportError:  # pragma: no cover
    sys.exit("nvcomp_bench.py needs numpy (python3 -m pip install numpy)")

MIN_VERIFY = 32
SENTINEL = 0xA5  # output buffers are filled with this before each API runs
LIB_HINT = (
    f"run scripts/fetch-nvcomp.sh (expects {NVCOMP_DIR}/nvidia/...), or start python with "
    f"PYTHONPATH={NVCOMP_DIR} LD_LIBRARY_PATH={NVCOMP_DIR}/nvidia/libnvcomp/lib64:$LD_LIBRARY_PATH"
)


def info(*args):
    print(*args, file=sys.stderr, flush=True)


def out(*args):
    print(*args, flush=True)


class DumpError(Exception):
    """The dump files are missing, malformed, or disagree with zlib."""


class Mismatch(Exception):
    """nvCOMP's output differs from the reference."""


# --------------------------------------------------------------------------
# Algorithms. Each one says which dump files it reads, how the host reference
# decodes a chunk, and how to build its low-level nvCOMP options. To add one
# (e.g. GDeflate once warpread dumps GDeflate chunks), add a spec here and take
# its name out of REFUSED.


class DeflateDecompressOpts(ctypes.Structure):
    """nvcompBatchedDeflateDecompressOpts_t (nvcomp/deflate.h, 64 bytes)."""

    _fields_ = [
        ("backend", ctypes.c_int),  # nvcompDecompressBackend_t
        ("sort_before_hw_decompress", ctypes.c_int),
        ("reserved", ctypes.c_char * 56),
    ]


def inflate_raw(data):
    """Host reference for one raw Deflate chunk: (output bytes, trailing bytes, complete)."""
    d = zlib.decompressobj(-15)
    res = d.decompress(data)
    res += d.flush()
    return res, len(d.unused_data), d.eof


@dataclasses.dataclass(frozen=True)
class AlgoSpec:
    name: str  # nvCOMP's name, as Codec(algorithm=...) takes it
    suffix: str  # the dump's data file: NAME<suffix>
    what: str  # what the data file holds
    c_prefix: str  # low-level C API: <prefix>DecompressAsync, ...
    opts_type: type
    reference: object  # bytes -> (output, trailing bytes, complete)


ALGORITHMS = {
    "deflate": AlgoSpec(
        name="Deflate",
        suffix=".deflate",
        what="raw Deflate streams (RFC 1951)",
        c_prefix="nvcompBatchedDeflate",
        opts_type=DeflateDecompressOpts,
        reference=inflate_raw,
    ),
}

REFUSED = {
    "gdeflate": "GDeflate is NVIDIA's own bitstream, not RFC 1951: it needs chunks compressed "
    "as GDeflate (a NAME.gdeflate dump), which warpread does not write yet",
    "gzip": "Gzip needs gzip-framed (RFC 1952) streams; the dump holds raw Deflate",
    "lz4": "LZ4 needs LZ4-compressed chunks; the dump holds raw Deflate",
    "snappy": "Snappy needs Snappy-compressed chunks; the dump holds raw Deflate",
    "zstd": "Zstd needs Zstandard frames; the dump holds raw Deflate",
    "cascaded": "Cascaded needs nvCOMP Cascaded-compressed chunks; the dump holds raw Deflate",
    "bitcomp": "Bitcomp needs Bitcomp-compressed chunks; the dump holds raw Deflate",
    "ans": "ANS needs nvCOMP ANS-compressed chunks; the dump holds raw Deflate",
}

BACKENDS = {"default": 0, "hardware": 1, "cuda": 2}  # nvcompDecompressBackend_t
STATUS_NAMES = {
    0: "nvcompSuccess",
    10: "nvcompErrorInvalidValue",
    11: "nvcompErrorNotSupported",
    12: "nvcompErrorCannotDecompress",
    13: "nvcompErrorBadChecksum",
    14: "nvcompErrorCannotVerifyChecksums",
    15: "nvcompErrorOutputBufferTooSmall",
    16: "nvcompErrorWrongHeaderLength",
    17: "nvcompErrorAlignment",
    18: "nvcompErrorChunkSizeTooLarge",
    19: "nvcompErrorCannotCompress",
    20: "nvcompErrorWrongInputLength",
    21: "nvcompErrorBatchSizeTooLarge",
    1000: "nvcompErrorCudaError",
    10000: "nvcompErrorInternal",
}


def status_name(code):
    return STATUS_NAMES.get(int(code), f"status {int(code)}")


def resolve_algorithms(text):
    """Comma-separated names -> specs; raises SystemExit(2) for refused or unknown ones."""
    specs = []
    for raw in [t.strip() for t in text.split(",") if t.strip()]:
        key = raw.lower()
        if key in ALGORITHMS:
            if ALGORITHMS[key] not in specs:
                specs.append(ALGORITHMS[key])
        elif key in REFUSED:
            info(f"refused: --algorithms {raw}: {REFUSED[key]}")
            raise SystemExit(2)
        else:
            known = sorted([s.name for s in ALGORITHMS.values()] + [k for k in REFUSED])
            info(f"error: unknown nvCOMP algorithm {raw!r} (known: {', '.join(known)})")
            raise SystemExit(2)
    if not specs:
        info("error: --algorithms is empty")
        raise SystemExit(2)
    return specs


# --------------------------------------------------------------------------
# Dump files (host side)


@dataclasses.dataclass
class Dump:
    name: str
    comp: np.ndarray  # uint8, the whole data file
    in_off: np.ndarray  # int64 per chunk
    in_len: np.ndarray
    out_len: np.ndarray

    @property
    def chunks(self):
        return len(self.in_off)

    @property
    def compressed_bytes(self):
        return int(self.in_len.sum())

    @property
    def uncompressed_bytes(self):
        return int(self.out_len.sum())


def find_datasets(dump_dir, spec, only=None):
    dump_dir = Path(dump_dir)
    if not dump_dir.is_dir():
        raise DumpError(f"{dump_dir}: not a directory")
    names = sorted(p.name[: -len(spec.suffix)] for p in dump_dir.glob("*" + spec.suffix))
    found = []
    for name in names:
        if not (dump_dir / f"{name}.jobs").is_file():
            info(f"warning: {name}{spec.suffix} has no {name}.jobs beside it, skipped")
            continue
        if only and name not in only:
            continue
        found.append(name)
    if only:
        missing = sorted(set(only) - set(found))
        if missing:
            raise DumpError(f"--only: no {spec.suffix} + .jobs pair for {', '.join(missing)} in {dump_dir}")
    return found


def load_dump(dump_dir, name, spec):
    data_path = Path(dump_dir) / f"{name}{spec.suffix}"
    jobs_path = Path(dump_dir) / f"{name}.jobs"
    comp = np.fromfile(data_path, dtype=np.uint8)
    raw = jobs_path.read_bytes()
    if len(raw) == 0 or len(raw) % 24:
        raise DumpError(f"{jobs_path}: {len(raw)} bytes, not a non-empty multiple of 24 (u64 triples)")
    jobs = np.frombuffer(raw, dtype="<u8").reshape(-1, 3)
    if int(jobs.max()) >= 1 << 62:
        raise DumpError(f"{jobs_path}: implausible value {int(jobs.max())}")
    jobs = jobs.astype(np.int64)
    in_off, in_len, out_len = jobs[:, 0].copy(), jobs[:, 1].copy(), jobs[:, 2].copy()
    bad = np.nonzero((in_len <= 0) | (out_len <= 0) | (in_off + in_len > comp.size))[0]
    if bad.size:
        i = int(bad[0])
        raise DumpError(
            f"{jobs_path}: chunk {i} (in_off {in_off[i]}, in_len {in_len[i]}, out_len {out_len[i]}) "
            f"is empty or runs past the {comp.size}-byte {data_path.name} ({bad.size} such chunks)"
        )
    return Dump(name, comp, in_off, in_len, out_len)


def spread_indices(n, want):
    """`want` chunk indices spread evenly over 0..n-1, first and last included (all if want<=0)."""
    if want <= 0 or want >= n:
        return np.arange(n, dtype=np.int64)
    want = max(want, MIN_VERIFY)
    if want >= n:
        return np.arange(n, dtype=np.int64)
    return np.unique(np.linspace(0, n - 1, want).round().astype(np.int64))


def align_up(x, a):
    return (x + a - 1) // a * a


@dataclasses.dataclass
class Layout:
    """Where each chunk sits in the device input and output buffers."""

    comp: np.ndarray  # the bytes to upload (the data file itself, or a re-aligned copy)
    in_off: np.ndarray
    out_off: np.ndarray
    out_total: int
    alignment: int
    repacked: bool


def make_layout(dump, alignment):
    """Input chunks at multiples of `alignment` (copying only if they are not already),
    outputs back to back, each at a multiple of `alignment`."""
    ends = dump.out_len + (-dump.out_len % alignment)
    out_off = np.concatenate(([0], np.cumsum(ends)[:-1])).astype(np.int64)
    out_total = int(out_off[-1] + dump.out_len[-1]) if dump.chunks else 0
    if np.all(dump.in_off % alignment == 0):
        return Layout(dump.comp, dump.in_off, out_off, out_total, alignment, False)
    padded = dump.in_len + (-dump.in_len % alignment)
    in_off = np.concatenate(([0], np.cumsum(padded)[:-1])).astype(np.int64)
    comp = np.zeros(int(in_off[-1] + padded[-1]), dtype=np.uint8)
    for src, dst, n in zip(dump.in_off.tolist(), in_off.tolist(), dump.in_len.tolist()):
        comp[dst : dst + n] = dump.comp[src : src + n]
    return Layout(comp, in_off, out_off, out_total, alignment, True)


def host_reference(dump, spec, indices):
    """zlib output of the chosen chunks: {index: bytes}; raises DumpError where it
    disagrees with the dump's out_len or the stream does not end in its range."""
    ref = {}
    trailing = 0
    for i in indices.tolist():
        lo, n = int(dump.in_off[i]), int(dump.in_len[i])
        try:
            res, extra, complete = spec.reference(dump.comp[lo : lo + n].tobytes())
        except zlib.error as e:
            raise DumpError(f"{dump.name}: chunk {i}: zlib cannot decode it: {e}") from e
        if not complete:
            raise DumpError(f"{dump.name}: chunk {i}: the stream does not end within its {n} bytes")
        if len(res) != int(dump.out_len[i]):
            raise DumpError(
                f"{dump.name}: chunk {i}: zlib gives {len(res)} bytes, the .jobs file says {int(dump.out_len[i])}"
            )
        trailing += extra
        ref[i] = res
    if trailing:
        info(f"warning: {dump.name}: {trailing} bytes after the end of the streams, inside their ranges")
    return ref


def compare_chunks(dump, layout, ref, read_chunk):
    """Compares read_chunk(i) (bytes-like) with the reference for every i in ref;
    returns a list of (index, description) mismatches."""
    bad = []
    for i, want in ref.items():
        got = bytes(read_chunk(i))
        if got != want:
            if len(got) != len(want):
                bad.append((i, f"{len(got)} bytes, want {len(want)}"))
            else:
                diff = np.nonzero(np.frombuffer(got, np.uint8) != np.frombuffer(want, np.uint8))[0]
                bad.append((i, f"{diff.size} bytes differ, first at offset {int(diff[0])}"))
    return bad


# --------------------------------------------------------------------------
# nvCOMP loading


def load_libnvcomp():
    """The libnvcomp.so.6 handle: through nvidia.libnvcomp (which finds lib64/ next
    to itself), else the dynamic loader's search path. Returns (CDLL, where)."""
    errors = []
    try:
        import nvidia.libnvcomp as libpkg

        lib = libpkg.load_library()
        if lib is not None:
            return lib, getattr(lib, "_name", "?")
        errors.append("nvidia.libnvcomp.load_library() found nothing")
    except Exception as e:  # noqa: BLE001
        errors.append(f"nvidia.libnvcomp: {e}")
    try:
        lib = ctypes.CDLL("libnvcomp.so.6", mode=ctypes.RTLD_LOCAL)
        return lib, "libnvcomp.so.6 (loader search path)"
    except OSError as e:
        errors.append(str(e))
    raise RuntimeError("cannot load libnvcomp.so.6: " + "; ".join(errors) + "\n  hint: " + LIB_HINT)


class NvcompProperties(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("cudart_version", ctypes.c_uint32)]


class AlignmentRequirements(ctypes.Structure):
    _fields_ = [("input", ctypes.c_size_t), ("output", ctypes.c_size_t), ("temp", ctypes.c_size_t)]


class CApi:
    """The low-level batched C API of one algorithm, through ctypes. The host-side
    queries (properties, alignments, temp size) work without a GPU."""

    def __init__(self, lib, spec, backend):
        self.lib, self.spec = lib, spec
        self.opts = spec.opts_type()
        self.opts.backend = BACKENDS[backend]
        p, vp, sz = spec.c_prefix, ctypes.c_void_p, ctypes.c_size_t
        opts_t = spec.opts_type
        self.f_align = self._fn(f"{p}DecompressGetRequiredAlignments", [opts_t, ctypes.POINTER(AlignmentRequirements)])
        self.f_temp = self._fn(
            f"{p}DecompressGetTempSize", [sz, sz, opts_t, ctypes.POINTER(sz), sz, vp]
        )
        # (comp_ptrs, comp_bytes, out_buffer_bytes, out_actual_bytes, num_chunks,
        #  temp_ptr, temp_bytes, out_ptrs, opts, statuses, stream)
        self.f_decompress = self._fn(
            f"{p}DecompressAsync", [vp, vp, vp, vp, sz, vp, sz, vp, opts_t, vp, vp]
        )
        self.f_props = self._fn("nvcompGetProperties", [ctypes.POINTER(NvcompProperties)])

    def _fn(self, name, argtypes):
        f = getattr(self.lib, name)
        f.argtypes = argtypes
        f.restype = ctypes.c_int
        return f

    def _check(self, what, rc):
        if rc != 0:
            raise RuntimeError(f"{what} returned {status_name(rc)}")

    def version(self):
        p = NvcompProperties()
        self._check("nvcompGetProperties", self.f_props(ctypes.byref(p)))
        v = p.version  # e.g. 6000 for 6.0.0
        return f"{v // 1000}.{v // 100 % 10}.{v % 100}", p.cudart_version

    def alignments(self):
        a = AlignmentRequirements()
        self._check(f"{self.spec.c_prefix}DecompressGetRequiredAlignments", self.f_align(self.opts, ctypes.byref(a)))
        return a.input, a.output, a.temp

    def temp_bytes(self, chunks, max_out, total_out, stream_ptr=0):
        t = ctypes.c_size_t(0)
        rc = self.f_temp(chunks, max_out, self.opts, ctypes.byref(t), total_out, stream_ptr or None)
        self._check(f"{self.spec.c_prefix}DecompressGetTempSize", rc)
        return t.value


def load_nvcomp_py():
    from nvidia import nvcomp as nc  # noqa: PLC0415  (also preloads libnvcomp.so.6)

    missing = [
        n
        for n in ("as_arrays", "Codec", "BitstreamKind", "DecompressBackend", "ExecutionPolicy", "set_device_allocator")
        if not hasattr(nc, n)
    ]
    missing += [f"Codec.{n}" for n in ("decode", "decompression_config", "get_required_decompression_alignment")
                if not hasattr(getattr(nc, "Codec", object), n)]
    if not hasattr(getattr(nc, "BitstreamKind", object), "RAW"):
        missing.append("BitstreamKind.RAW")
    if missing:
        raise RuntimeError(f"nvidia.nvcomp {getattr(nc, '__version__', '?')} lacks {', '.join(missing)}")
    if NVCOMP_DIR.is_dir() and not Path(nc.__file__).resolve().is_relative_to(NVCOMP_DIR.resolve()):
        info(f"warning: nvidia.nvcomp came from {nc.__file__}, not {NVCOMP_DIR} (another `nvidia` package shadows it?)")
    return nc


# --------------------------------------------------------------------------
# GPU side


def gpu_available():
    """(cupy module, None) or (None, reason)."""
    try:
        import cupy as cp  # noqa: PLC0415
    except Exception as e:  # noqa: BLE001
        return None, f"cupy not importable ({e.__class__.__name__}: {e})"
    try:
        n = cp.cuda.runtime.getDeviceCount()
    except Exception as e:  # noqa: BLE001
        return None, f"{e.__class__.__name__}: {e}"
    if n < 1:
        return None, "no CUDA device"
    return cp, None


def time_runs(cp, stream, launch, finish, warmup, runs):
    """Runs launch() warmup+runs times on `stream`; CUDA events around launch() only.
    finish() is called after each run, once the stream is idle. Returns (event ms, wall ms)."""
    for _ in range(warmup):
        launch()
        stream.synchronize()
        finish()
    events = [(cp.cuda.Event(), cp.cuda.Event()) for _ in range(runs)]
    ev_ms, wall_ms = [], []
    gc.collect()
    gc.disable()
    try:
        for start, end in events:
            stream.synchronize()
            t0 = time.perf_counter()
            start.record(stream)
            launch()
            end.record(stream)
            end.synchronize()
            wall_ms.append((time.perf_counter() - t0) * 1e3)
            ev_ms.append(cp.cuda.get_elapsed_time(start, end))
            finish()
    finally:
        gc.enable()
    return ev_ms, wall_ms


class CPath:
    """nvcomp<Algo>DecompressAsync: one launch for the whole batch, everything it
    reads or writes allocated and filled before the timed region."""

    api = "c"

    def __init__(self, cp, capi, stream):
        self.cp, self.capi, self.stream = cp, capi, stream

    def alignment(self):
        a_in, a_out, _ = self.capi.alignments()
        return max(a_in, a_out)

    def prepare(self, dump, layout, d_comp, d_out):
        cp, n = self.cp, dump.chunks
        base_in, base_out = d_comp.data.ptr, d_out.data.ptr
        self.n = n
        self.temp = self.capi.temp_bytes(n, int(dump.out_len.max()), int(dump.out_len.sum()), self.stream.ptr)
        with self.stream:
            self.d_in_ptrs = cp.asarray((base_in + layout.in_off).astype(np.uint64))
            self.d_in_bytes = cp.asarray(dump.in_len.astype(np.uint64))
            self.d_out_cap = cp.asarray(dump.out_len.astype(np.uint64))
            self.d_out_ptrs = cp.asarray((base_out + layout.out_off).astype(np.uint64))
            self.d_out_bytes = cp.zeros(n, dtype=np.uint64)
            self.d_status = cp.full(n, -1, dtype=np.int32)
            self.d_temp = cp.empty(max(self.temp, 256), dtype=np.uint8)
        self.stream.synchronize()
        self.note = (
            f"low-level {self.capi.spec.c_prefix}DecompressAsync via ctypes, one call for all {n} chunks; "
            f"device pointer/size/status arrays and {self.temp} B of scratch built once outside the timed "
            f"region; CUDA events bracket the launch only"
        )

    def launch(self):
        rc = self.capi.f_decompress(
            self.d_in_ptrs.data.ptr,
            self.d_in_bytes.data.ptr,
            self.d_out_cap.data.ptr,
            self.d_out_bytes.data.ptr,
            self.n,
            self.d_temp.data.ptr,
            self.temp,
            self.d_out_ptrs.data.ptr,
            self.capi.opts,
            self.d_status.data.ptr,
            self.stream.ptr,
        )
        if rc != 0:
            raise RuntimeError(f"{self.capi.spec.c_prefix}DecompressAsync returned {status_name(rc)}")

    def finish(self):
        pass

    def results(self, dump, layout, d_out):
        """(per-chunk decompressed sizes, chunk reader); raises Mismatch on bad statuses."""
        st = self.d_status.get()
        bad = np.nonzero(st != 0)[0]
        if bad.size:
            first = ", ".join(f"chunk {int(i)}: {status_name(st[i])}" for i in bad[:5])
            raise Mismatch(f"{bad.size} chunks failed ({first})")
        sizes = self.d_out_bytes.get().astype(np.int64)
        host = d_out.get()
        return sizes, lambda i: host[layout.out_off[i] : layout.out_off[i] + dump.out_len[i]]

    def release(self):
        for k in ("d_in_ptrs", "d_in_bytes", "d_out_cap", "d_out_ptrs", "d_out_bytes", "d_status", "d_temp"):
            self.__dict__.pop(k, None)


class PyPath:
    """The Python API: as_arrays -> Codec(RAW) -> decompression_config -> decode."""

    api = "py"

    def __init__(self, cp, nc, stream, spec, backend, policy, allocator):
        self.cp, self.nc, self.stream, self.spec = cp, nc, stream, spec
        self.kwargs = {
            "algorithm": spec.name,
            "bitstream_kind": nc.BitstreamKind.RAW,
            "device_id": cp.cuda.Device().id,
            "cuda_stream": stream.ptr,
        }
        if backend != "default":
            self.kwargs["decompress_backend"] = nc.DecompressBackend(BACKENDS[backend])
        if policy != "default":
            self.kwargs["execution_policy"] = getattr(nc.ExecutionPolicy, policy.upper())
        self.allocator = allocator
        if allocator == "cupy":
            # Stream-ordered reuse from cupy's pool: nvCOMP works on `stream`, which
            # is cupy's current stream whenever nvCOMP allocates (inside `with stream`).
            nc.set_device_allocator(lambda nbytes, _stream: cp.cuda.alloc(nbytes))
        self.codec = nc.Codec(**self.kwargs)

    def alignment(self):
        return int(self.codec.get_required_decompression_alignment())

    def prepare(self, dump, layout, d_comp, d_out):
        nc, sp = self.nc, self.stream.ptr
        self.batch = nc.as_arrays(d_comp, layout.in_off.tolist(), dump.in_len.tolist(), cuda_stream=sp)
        self.out_batch = nc.as_arrays(d_out, layout.out_off.tolist(), dump.out_len.tolist(), cuda_stream=sp)
        self.extra_note = ""
        try:
            self._configure()
        except Exception as e:  # noqa: BLE001
            # A RAW codec's chunk size defaults to 64 KiB; in case that is what
            # stops it, retry once with the dump's largest chunk (a power of two).
            chunk = 1 << max(16, (int(dump.out_len.max()) - 1).bit_length())
            if chunk == 65536 or "uncomp_chunk_size" in self.kwargs:
                raise
            info(f"  py: decompression_config/decode failed ({e}); retrying with uncomp_chunk_size={chunk}")
            self.kwargs["uncomp_chunk_size"] = chunk
            self.codec = self.nc.Codec(**self.kwargs)
            self._configure()
        if "uncomp_chunk_size" in self.kwargs:
            self.extra_note = f"; Codec needed uncomp_chunk_size={self.kwargs['uncomp_chunk_size']} (the default 64 KiB failed)"
        self.result = None
        alloc = (
            "its scratch comes from cupy's memory pool (--py-allocator cupy)"
            if self.allocator == "cupy"
            else "any scratch/status memory it needs comes from nvCOMP's own device allocator"
        )
        self.note = (
            f"Python API codec.decode(batch, out=..., decompression_config=cfg), Codec(algorithm="
            f"{self.spec.name!r}, bitstream_kind=RAW), one call for all {dump.chunks} chunks into "
            f"preallocated outputs; decompression_config (which walks each RAW stream for its size) "
            f"runs once, untimed; the call is timed as the API does it: whatever host work, "
            f"pointer-array uploads and allocations it makes per call are inside the timed region; "
            f"{alloc}" + self.extra_note
        )

    def _configure(self):
        """decompression_config (synchronizes; walks each RAW stream for its size),
        then one untimed decode, so that an error shows here, not in the timing."""
        with self.stream:
            self.cfg = self.codec.decompression_config(self.batch)
            res = self.codec.decode(self.batch, out=self.out_batch, decompression_config=self.cfg)
        self.stream.synchronize()
        del res

    def launch(self):
        with self.stream:
            self.result = self.codec.decode(self.batch, out=self.out_batch, decompression_config=self.cfg)

    def finish(self):
        self.result = None

    def results(self, dump, layout, d_out):
        cp = self.cp
        with self.stream:
            res = self.codec.decode(self.batch, out=self.out_batch, decompression_config=self.cfg)
        sizes = np.asarray(res.buffer_sizes, dtype=np.int64)
        base = d_out.data.ptr
        host = d_out.get()
        # Did decode write into our buffers? Check each entry's address.
        moved = []
        for i in range(dump.chunks):
            ptr = res[i].__cuda_array_interface__["data"][0]
            if ptr != base + int(layout.out_off[i]):
                moved.append(i)
        if moved:
            self.note += f"; decode returned {len(moved)} entries outside the out= buffers (read from there)"

        moved_set = set(moved)

        def read(i):
            if i in moved_set:
                return cp.asarray(res[i]).view(cp.uint8).get()
            return host[layout.out_off[i] : layout.out_off[i] + dump.out_len[i]]

        self._res = res
        return sizes, read

    def release(self):
        for k in ("batch", "out_batch", "cfg", "result", "_res"):
            self.__dict__.pop(k, None)


def run_dataset(cp, stream, paths, dump, spec, layout_alignment, args, device_desc, versions):
    """Runs every API path on one dataset; returns (rows, failed)."""
    rows, failed = [], False
    want = spread_indices(dump.chunks, args.verify_chunks)
    t0 = time.perf_counter()
    ref = host_reference(dump, spec, want)
    info(f"  zlib reference of {len(want)}/{dump.chunks} chunks: {time.perf_counter() - t0:.2f} s")
    layout = make_layout(dump, layout_alignment)
    with stream:
        d_comp = cp.asarray(layout.comp)
        d_out = cp.empty(max(layout.out_total, 1), dtype=cp.uint8)
    stream.synchronize()
    ratio = dump.uncompressed_bytes / dump.compressed_bytes
    for path in paths:
        row = {
            "dataset": dump.name,
            "algorithm": spec.name,
            "api": path.api,
            "uncompressed_bytes": dump.uncompressed_bytes,
            "compressed_bytes": dump.compressed_bytes,
            "ratio": round(ratio, 4),
            "chunks": dump.chunks,
            "median_ms": None,
            "gbps": None,
            "verified": False,
            "timing_note": "",
            "input_alignment": layout.alignment,
            "input_repacked": layout.repacked,
            "backend": args.backend,
            "device": device_desc,
            **versions,
        }
        try:
            with stream:
                d_out.fill(SENTINEL)
            stream.synchronize()
            path.prepare(dump, layout, d_comp, d_out)
            ev, wall = time_runs(cp, stream, path.launch, path.finish, args.warmup, args.runs)
            med = statistics.median(ev)
            row.update(
                median_ms=round(med, 4),
                gbps=round(dump.uncompressed_bytes / (med / 1e3) / 1e9, 3),
                min_ms=round(min(ev), 4),
                max_ms=round(max(ev), 4),
                median_wall_ms=round(statistics.median(wall), 4),
                runs_ms=[round(x, 4) for x in ev],
                warmup=args.warmup,
                runs=args.runs,
                timing_note=path.note,
            )
            if statistics.median(wall) > 3 * med + 1.0:
                row["timing_note"] += (
                    f"; WARNING: wall time {statistics.median(wall):.3f} ms >> event time {med:.3f} ms: "
                    f"the API may not run (only) on the timed stream"
                )
            sizes, read = path.results(dump, layout, d_out)
            if sizes.shape != dump.out_len.shape or int(sizes.sum()) != dump.uncompressed_bytes:
                raise Mismatch(
                    f"decompressed total {int(sizes.sum())} bytes over {sizes.size} chunks, "
                    f"want {dump.uncompressed_bytes} over {dump.chunks}"
                )
            wrong = np.nonzero(sizes != dump.out_len)[0]
            if wrong.size:
                i = int(wrong[0])
                raise Mismatch(f"{wrong.size} chunk sizes differ (chunk {i}: {sizes[i]}, want {dump.out_len[i]})")
            bad = compare_chunks(dump, layout, ref, read)
            if bad:
                first = "; ".join(f"chunk {i}: {d}" for i, d in bad[:5])
                raise Mismatch(f"{len(bad)} of {len(ref)} checked chunks differ from zlib ({first})")
            row["verified"] = True
            row["verified_chunks"] = len(ref)
            out(
                f"{dump.name}  {spec.name}  {ratio:.3f}  {row['median_ms']:.3f}  {row['gbps']:.2f}  verified  api={path.api}"
            )
            info(
                f"    {dump.chunks} chunks, {dump.uncompressed_bytes} B out; min {row['min_ms']:.3f} ms, "
                f"median wall {row['median_wall_ms']:.3f} ms; {len(ref)} chunks checked against zlib"
            )
        except Mismatch as e:
            failed = True
            row["error"] = f"mismatch: {e}"
            info(f"ERROR: {dump.name} {spec.name} api={path.api}: nvCOMP output is wrong: {e}")
            out(f"{dump.name}  {spec.name}  {ratio:.3f}  -  -  MISMATCH  api={path.api}")
        except Exception as e:  # noqa: BLE001
            failed = True
            row["error"] = f"{e.__class__.__name__}: {e}"
            info(f"ERROR: {dump.name} {spec.name} api={path.api}: {e.__class__.__name__}: {e}")
            info(traceback.format_exc().rstrip())
            out(f"{dump.name}  {spec.name}  {ratio:.3f}  -  -  FAILED  api={path.api}")
        finally:
            path.release()
            gc.collect()
        rows.append(row)
    del d_comp, d_out
    cp.get_default_memory_pool().free_all_blocks()
    return rows, failed


def bench(args, specs):
    cp, why = gpu_available()
    if cp is None:
        info(f"error: no usable CUDA device: {why}")
        return 1
    props = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
    device_desc = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
    versions = {
        "cupy_version": cp.__version__,
        "cuda_driver": cp.cuda.runtime.driverGetVersion(),
        "cuda_runtime_cupy": cp.cuda.runtime.runtimeGetVersion(),
    }
    # A blocking stream: should nvCOMP put work on the legacy default stream, that
    # work is still ordered with this stream, and so inside the timed events.
    stream = cp.cuda.Stream(non_blocking=False)
    rows, failed = [], False
    apis = ["c", "py"] if args.api == "both" else [args.api]
    for spec in specs:
        paths = []
        if "c" in apis:
            try:
                lib, where = load_libnvcomp()
                capi = CApi(lib, spec, args.backend)
                ver, cudart = capi.version()
                versions.update(nvcomp_version=ver, nvcomp_cudart=cudart, libnvcomp=where)
                paths.append(CPath(cp, capi, stream))
            except Exception as e:  # noqa: BLE001
                failed = True
                info(f"ERROR: C API unavailable: {e}")
        if "py" in apis:
            try:
                nc = load_nvcomp_py()
                versions.update(nvcomp_python=nc.__version__, nvcomp_python_file=nc.__file__)
                paths.append(PyPath(cp, nc, stream, spec, args.backend, args.policy, args.py_allocator))
            except Exception as e:  # noqa: BLE001
                failed = True
                info(f"ERROR: nvCOMP Python API unavailable: {e.__class__.__name__}: {e}\n  hint: {LIB_HINT}")
                info(traceback.format_exc().rstrip())
        if not paths:
            return 1
        alignment = max([args.align] + [p.alignment() for p in paths])
        info(f"{device_desc}; {json.dumps(versions)}; {spec.name}: chunk alignment {alignment} B, "
             f"apis {[p.api for p in paths]}, backend {args.backend}, warmup {args.warmup}, runs {args.runs}")
        try:
            names = find_datasets(args.dump_dir, spec, args.only)
        except DumpError as e:
            info(f"error: {e}")
            return 2
        if not names:
            info(f"error: no {spec.suffix} + .jobs pairs in {args.dump_dir}")
            return 2
        for name in names:
            try:
                dump = load_dump(args.dump_dir, name, spec)
            except DumpError as e:
                info(f"error: {e}")
                return 2
            info(f"{name}: {dump.chunks} chunks, {dump.compressed_bytes} -> {dump.uncompressed_bytes} B")
            try:
                r, f = run_dataset(cp, stream, paths, dump, spec, alignment, args, device_desc, versions)
            except DumpError as e:
                info(f"error: {e}")
                return 2
            rows += r
            failed |= f
            if args.json:  # rewritten after each dataset, so a crash keeps what ran
                Path(args.json).write_text(json.dumps(rows, indent=2) + "\n")
    if args.json:
        info(f"wrote {args.json} ({len(rows)} rows)")
    return 1 if failed else 0


# --------------------------------------------------------------------------
# Self-test: the host-side parts here, the whole run where a GPU is present.


def write_dump(d, name, chunks, levels):
    data, jobs = bytearray(), []
    for raw, level in zip(chunks, levels):
        c = zlib.compressobj(level, zlib.DEFLATED, -15)
        z = c.compress(raw) + c.flush()
        jobs.append((len(data), len(z), len(raw)))
        data += z
    (Path(d) / f"{name}.deflate").write_bytes(bytes(data))
    (Path(d) / f"{name}.jobs").write_bytes(np.asarray(jobs, dtype="<u8").tobytes())
    return jobs


def selftest(args):
    results = {"passed": 0, "failed": 0}

    def check(what, cond, detail=""):
        results["passed" if cond else "failed"] += 1
        out(f"  {'ok  ' if cond else 'FAIL'} {what}" + (f": {detail}" if detail and not cond else ""))

    rng = np.random.default_rng(7)
    words = [b"alpha", b"beta", b"warp", b"read", b"deflate", b"\x00\x01", b"chunk "]
    text = b"".join(words[i] for i in rng.integers(0, len(words), 200_000))
    noise = rng.integers(0, 256, 300_000, dtype=np.uint8).tobytes()
    with tempfile.TemporaryDirectory(prefix="nvcomp_bench_selftest_") as d:
        out(f"selftest: dump in {d}")
        spec = ALGORITHMS["deflate"]
        cs = 65536
        text_chunks = [text[i : i + cs] for i in range(0, len(text), cs)]
        jobs_a = write_dump(d, "alpha", text_chunks, [6, 1, 9, 0] * 10)
        noise_chunks = [noise[i : i + 100_003] for i in range(0, len(noise), 100_003)]
        write_dump(d, "beta", noise_chunks, [1, 6, 0, 9])
        (Path(d) / "orphan.deflate").write_bytes(b"\x03\x00")  # no .jobs: skipped with a warning

        names = find_datasets(d, spec)
        check("datasets found and sorted", names == ["alpha", "beta"], str(names))
        a = load_dump(d, "alpha", spec)
        check("alpha parsed", a.chunks == len(text_chunks) and a.uncompressed_bytes == len(text),
              f"{a.chunks} chunks, {a.uncompressed_bytes} B")
        check("offsets as written", a.in_off.tolist() == [j[0] for j in jobs_a])
        check("in_off not all 4-aligned (exercises repacking)", bool(np.any(a.in_off % 4)))

        for alignment in (1, 4, 16):
            lay = make_layout(a, alignment)
            same = all(
                lay.comp[lay.in_off[i] : lay.in_off[i] + a.in_len[i]].tobytes()
                == a.comp[a.in_off[i] : a.in_off[i] + a.in_len[i]].tobytes()
                for i in range(a.chunks)
            )
            aligned = bool(np.all(lay.in_off % alignment == 0) and np.all(lay.out_off % alignment == 0))
            check(f"layout at {alignment} B keeps every chunk's bytes, aligned", same and aligned)
        check("layout at 1 B is the file itself", make_layout(a, 1).repacked is False)

        idx = spread_indices(2048, 32)
        check("32 spread indices of 2048, first and last", len(idx) == 32 and idx[0] == 0 and idx[-1] == 2047)
        check("at least 32 verified", len(spread_indices(2048, 5)) == 32)
        check("all when fewer chunks", len(spread_indices(10, 32)) == 10 and len(spread_indices(50, 0)) == 50)

        ref = host_reference(a, spec, spread_indices(a.chunks, 0))
        check("zlib reference equals the source", b"".join(ref[i] for i in range(a.chunks)) == text)

        # A fake device output in the output layout, as the GPU paths read it.
        lay = make_layout(a, 16)
        buf = np.full(lay.out_total, SENTINEL, dtype=np.uint8)
        for i, r in ref.items():
            buf[lay.out_off[i] : lay.out_off[i] + len(r)] = np.frombuffer(r, np.uint8)

        def reader(i):
            return buf[lay.out_off[i] : lay.out_off[i] + a.out_len[i]]

        check("correct output verifies", compare_chunks(a, lay, ref, reader) == [])
        buf[lay.out_off[3] + 100] ^= 0xFF
        bad = compare_chunks(a, lay, ref, reader)
        check("a flipped byte is caught in the right chunk", [i for i, _ in bad] == [3], str(bad))
        buf[lay.out_off[3] + 100] ^= 0xFF

        b = load_dump(d, "beta", spec)
        refb = host_reference(b, spec, spread_indices(b.chunks, 0))
        check("beta (stored + compressed blocks) round-trips", b"".join(refb[i] for i in range(b.chunks)) == noise)

        # Broken dumps are refused with DumpError.
        jobs = np.frombuffer((Path(d) / "alpha.jobs").read_bytes(), "<u8").reshape(-1, 3).copy()
        for label, mutate in [
            ("wrong out_len", lambda j: j.__setitem__((2, 2), j[2, 2] + 1)),
            ("range past the file", lambda j: j.__setitem__((1, 1), 10**9)),
            ("truncated stream", lambda j: j.__setitem__((4, 1), j[4, 1] - 3)),
        ]:
            bad_dir = Path(d) / "broken"
            bad_dir.mkdir(exist_ok=True)
            (bad_dir / "x.deflate").write_bytes((Path(d) / "alpha.deflate").read_bytes())
            j = jobs.copy()
            mutate(j)
            (bad_dir / "x.jobs").write_bytes(j.astype("<u8").tobytes())
            try:
                x = load_dump(bad_dir, "x", spec)
                host_reference(x, spec, spread_indices(x.chunks, 0))
                check(f"{label} refused", False, "accepted")
            except DumpError as e:
                check(f"{label} refused", True)
                info(f"    ({e})")
        (Path(d) / "broken" / "x.jobs").write_bytes(b"\x00" * 25)
        try:
            load_dump(Path(d) / "broken", "x", spec)
            check(".jobs size not a multiple of 24 refused", False, "accepted")
        except DumpError:
            check(".jobs size not a multiple of 24 refused", True)

        # Argument handling.
        p = build_parser()
        a1 = p.parse_args([d, "--runs", "5", "--warmup", "1", "--algorithms", "Deflate", "--json", "x.json"])
        check("arguments parse", (a1.runs, a1.warmup, a1.algorithms, a1.json) == (5, 1, "Deflate", "x.json"))
        check("algorithm names are case-insensitive", resolve_algorithms("deflate,DEFLATE") == [spec])
        for name in ("GDeflate", "Bogus"):
            try:
                resolve_algorithms(f"Deflate,{name}")
                check(f"--algorithms {name} refused", False, "accepted")
            except SystemExit as e:
                check(f"--algorithms {name} refused", e.code == 2)

        # nvCOMP's host-side pieces (no GPU needed).
        try:
            lib, where = load_libnvcomp()
            capi = CApi(lib, spec, "default")
            ver, cudart = capi.version()
            a_in, a_out, a_tmp = capi.alignments()
            tmp = capi.temp_bytes(2048, 131072, 2048 * 131072)
            check("libnvcomp C API: properties, alignments, temp size", ver.startswith(("5.", "6.")),
                  f"{ver}")
            out(f"    {where}: nvCOMP {ver} (cudart {cudart}), Deflate decompression alignment "
                f"in/out/temp {a_in}/{a_out}/{a_tmp} B, temp for 2048 x 128 KiB: {tmp} B")
        except Exception as e:  # noqa: BLE001
            out(f"  skipped: libnvcomp C API ({e})")
        try:
            nc = load_nvcomp_py()
            check("nvidia.nvcomp Python API names present", True)
            out(f"    nvidia.nvcomp {nc.__version__} from {nc.__file__}")
        except ImportError as e:
            out(f"  skipped: nvidia.nvcomp Python module not importable here ({e})")
        except Exception as e:  # noqa: BLE001
            check("nvidia.nvcomp Python API names present", False, str(e))

        cp, why = gpu_available()
        if cp is None:
            out(f"  skipped: no CUDA device ({why})")
        else:
            out("  GPU present: running the benchmark on the self-test dump")
            gargs = p.parse_args([d, "--runs", "3", "--warmup", "1", "--api", args.api,
                                  "--backend", args.backend, "--policy", args.policy,
                                  "--py-allocator", args.py_allocator])
            rc = bench(gargs, [spec])
            check("GPU benchmark on the self-test dump", rc == 0, f"exit {rc}")
    out(f"selftest: {results['passed']} passed, {results['failed']} failed")
    return 0 if results["failed"] == 0 else 1


def build_parser():
    p = argparse.ArgumentParser(
        description="nvCOMP batched decompression on warpread's chunk dumps (see the module docstring).",
    )
    p.add_argument("dump_dir", nargs="?", help="folder with NAME.deflate + NAME.jobs pairs")
    p.add_argument("--runs", type=int, default=11, help="timed runs; the median is reported (default 11)")
    p.add_argument("--warmup", type=int, default=3, help="untimed runs first (default 3)")
    p.add_argument("--algorithms", default="Deflate", help="comma-separated nvCOMP algorithms (default Deflate)")
    p.add_argument("--api", choices=["both", "c", "py"], default="both",
                   help="c: nvcompBatched*DecompressAsync; py: nvidia.nvcomp Codec.decode (default both)")
    p.add_argument("--json", help="write the rows as a JSON list here")
    p.add_argument("--only", type=lambda s: [x for x in s.split(",") if x], help="comma-separated dataset names")
    p.add_argument("--verify-chunks", type=int, default=0,
                   help=f"chunks compared with zlib, spread over each dataset (0: all, default; else at least {MIN_VERIFY})")
    p.add_argument("--align", type=int, default=1,
                   help="align every input/output chunk to at least this many bytes (nvCOMP's own minimum always applies)")
    p.add_argument("--backend", choices=sorted(BACKENDS), default="default",
                   help="nvCOMP decompression backend (default: nvCOMP picks; H100 has no decompression engine)")
    p.add_argument("--policy", choices=["default", "concurrency", "latency"], default="default",
                   help="py API ExecutionPolicy (default: the API's, CONCURRENCY)")
    p.add_argument("--py-allocator", choices=["nvcomp", "cupy"], default="nvcomp",
                   help="device allocator of the py API's scratch (default: nvCOMP's own)")
    p.add_argument("--selftest", action="store_true", help="test parsing and verification on a tiny dump, then the GPU path if present")
    return p


def main(argv=None):
    p = build_parser()
    args = p.parse_args(argv)
    if args.runs < 1 or args.warmup < 0:
        p.error("--runs must be >= 1 and --warmup >= 0")
    if args.align < 1 or args.align & (args.align - 1):
        p.error("--align must be a power of two")
    if args.selftest:
        return selftest(args)
    if not args.dump_dir:
        p.error("DUMP_DIR is required (or --selftest)")
    specs = resolve_algorithms(args.algorithms)
    return bench(args, specs)


if __name__ == "__main__":
    sys.exit(main())
