"""Device-resident reads (``device=True``), checked through consumers
warpread did not write: PyTorch and CuPy take columns through DLPack,
nanoarrow takes batches through the Arrow C Device Data Interface, and
every device table copied back equals the CPU backend's host read.

Without a CUDA device the device tests skip ("skipped: no CUDA device");
asking for device output on the CPU is a clear error everywhere. The file
also runs without pytest (``python3 python/tests/test_device.py``), as on
the GPU host, which has the consumers but may lack pytest.
"""

from __future__ import annotations

import ctypes
import sys
from pathlib import Path
from typing import Any, Callable, List, Tuple

import pyarrow as pa

import warpread

TESTDATA = Path(__file__).resolve().parents[2] / "testdata"
PARQUET = sorted((TESTDATA / "parquet").glob("*.parquet"))
ORC = sorted((TESTDATA / "orc").glob("*.orc"))
CASES: List[Tuple[Callable[..., Any], Path]] = [(warpread.read_parquet, p) for p in PARQUET] + [
    (warpread.read_orc, p) for p in ORC
]


class Skip(Exception):
    """A test that cannot run here."""


def _skip(why: str) -> None:
    try:
        import pytest
    except ImportError:
        raise Skip(why)
    pytest.skip(why)


_CUDA: List[Any] = []


def cuda() -> warpread.Backend:
    """The CUDA backend, shared by the tests; skips without a device."""
    if not _CUDA:
        try:
            _CUDA.append(warpread.Backend("cuda"))
        except warpread.WarpreadError as e:
            _CUDA.append(e)
    b = _CUDA[0]
    if isinstance(b, Exception):
        _skip(f"skipped: no CUDA device ({b})")
    return b


def test_device_output_on_the_cpu_is_a_clear_error():
    cpu = warpread.Backend("cpu")
    for read, path in CASES[:1] + CASES[-1:]:
        try:
            read(path, backend=cpu, device=True)
        except warpread.UnsupportedError as e:
            assert "device output needs the CUDA backend" in str(e), e
            assert "cpu" in str(e), e
        else:
            raise AssertionError("device=True on the CPU backend must fail")


def _same(a: pa.Table, b: pa.Table) -> bool:
    """Equal schemas and values, NaN equal to NaN (as arrow-rs compares)."""
    if a.schema != b.schema or a.num_rows != b.num_rows:
        return False
    import numpy as np

    for x, y in zip(a.columns, b.columns):
        x, y = x.combine_chunks(), y.combine_chunks()
        if pa.types.is_floating(x.type):
            if not x.is_null().equals(y.is_null()):
                return False
            xv = x.fill_null(0).to_numpy(zero_copy_only=False)
            yv = y.fill_null(0).to_numpy(zero_copy_only=False)
            if not np.array_equal(xv, yv, equal_nan=True):
                return False
        elif not x.equals(y):
            return False
    return True


def test_device_tables_copied_back_equal_the_cpu_read():
    gpu, cpu = cuda(), warpread.Backend("cpu")
    decoded = 0
    for read, path in CASES:
        host = read(path, backend=cpu)
        table = read(path, backend=gpu, device=True)
        assert table.num_rows == host.num_rows, path
        assert table.schema == host.schema, path
        assert _same(table.to_arrow(), host), path
        decoded += table.device_bytes()["decoded"]
    assert decoded > 0


def _fixed_width_columns(table: pa.Table) -> List[str]:
    ok = []
    for f in table.schema:
        t = f.type
        if pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_boolean(t):
            ok.append(f.name)
    return ok


def _consumers() -> List[Tuple[str, Callable[[Any], Any]]]:
    out = []
    try:
        import torch

        out.append(("torch", lambda c: torch.from_dlpack(c).cpu().numpy()))
    except ImportError:
        pass
    try:
        import cupy

        out.append(("cupy", lambda c: cupy.asnumpy(cupy.from_dlpack(c))))
    except ImportError:
        pass
    return out


def test_dlpack_columns_equal_the_host_values():
    gpu, cpu = cuda(), warpread.Backend("cpu")
    consumers = _consumers()
    if not consumers:
        _skip("skipped: neither PyTorch nor CuPy is installed")
    import numpy as np

    checked = 0
    for read, path in CASES:
        host = read(path, backend=cpu)
        if host.num_rows == 0:
            continue
        table = read(path, backend=gpu, device=True)
        for name in _fixed_width_columns(host):
            col = host.column(name).combine_chunks()
            valid = np.asarray(col.is_valid())
            # Nulls filled: a nullable integer column would otherwise come
            # back as float64, which loses 64-bit values.
            fill = False if pa.types.is_boolean(col.type) else 0
            want = col.fill_null(fill).to_numpy(zero_copy_only=False)
            dev = table.column(name)
            assert len(dev) == len(col)
            assert dev.null_count == col.null_count
            for who, take in consumers:
                got = take(dev)
                if pa.types.is_boolean(col.type):
                    got = got.astype(bool)
                same = np.array_equal(got[valid], want[valid].astype(got.dtype), equal_nan=got.dtype.kind == "f")
                assert same, (path, name, who)
                if dev.validity is None:
                    assert col.null_count == 0
                else:
                    assert np.array_equal(take(dev.validity).astype(bool), valid), (path, name, who)
            checked += 1
    assert checked > 20, checked


def test_nanoarrow_takes_device_batches():
    gpu = cuda()
    try:
        import nanoarrow.device as nd
    except ImportError:
        _skip("skipped: nanoarrow is not installed")
    read, path = warpread.read_parquet, TESTDATA / "parquet" / "types_gzip_v1.parquet"
    table = read(path, backend=gpu, device=True)
    for i in range(table.num_batches):
        batch = table.batch(i)
        arr = nd.c_device_array(batch)
        assert arr.device_type_id == 2  # ARROW_DEVICE_CUDA
        assert arr.device_id == table.device_id
        assert arr.array.length == batch.num_rows
        assert arr.array.n_children == len(table.schema)
        assert arr.schema.n_children == len(table.schema)


class _DeviceStream(ctypes.Structure):
    pass


_DeviceStream._fields_ = [
    ("device_type", ctypes.c_int32),
    ("get_schema", ctypes.c_void_p),
    ("get_next", ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(_DeviceStream), ctypes.c_void_p)),
    ("get_last_error", ctypes.c_void_p),
    ("release", ctypes.CFUNCTYPE(None, ctypes.POINTER(_DeviceStream))),
    ("private_data", ctypes.c_void_p),
]


class _DeviceArray(ctypes.Structure):
    _fields_ = [
        ("length", ctypes.c_int64),
        ("null_count", ctypes.c_int64),
        ("offset", ctypes.c_int64),
        ("n_buffers", ctypes.c_int64),
        ("n_children", ctypes.c_int64),
        ("buffers", ctypes.c_void_p),
        ("children", ctypes.c_void_p),
        ("dictionary", ctypes.c_void_p),
        ("release", ctypes.CFUNCTYPE(None, ctypes.c_void_p)),
        ("private_data", ctypes.c_void_p),
        ("device_id", ctypes.c_int64),
        ("device_type", ctypes.c_int32),
        ("sync_event", ctypes.c_void_p),
        ("reserved", ctypes.c_int64 * 3),
    ]


def test_device_stream_hands_out_every_batch():
    gpu = cuda()
    path = TESTDATA / "parquet" / "enc_dict_many_pages.parquet"
    table = warpread.read_parquet(path, backend=gpu, device=True, batch_size=1000)
    capsule = table.__arrow_c_device_stream__()
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    stream = ctypes.cast(get(capsule, b"arrow_device_array_stream"), ctypes.POINTER(_DeviceStream))
    assert stream.contents.device_type == 2
    rows, batches = 0, 0
    while True:
        out = _DeviceArray()
        assert stream.contents.get_next(stream, ctypes.addressof(out)) == 0
        if not out.release:
            break
        assert out.device_type == 2 and out.device_id == table.device_id and out.sync_event
        rows += out.length
        batches += 1
        out.release(ctypes.addressof(out))
    assert (rows, batches) == (table.num_rows, table.num_batches)
    # The table is still whole: the stream shared its device memory.
    assert table.to_arrow().num_rows == rows


def _main() -> int:
    failed = 0
    for name, fn in sorted(globals().items()):
        if not (name.startswith("test_") and callable(fn)):
            continue
        try:
            fn()
            print(f"PASS {name}")
        except Skip as s:
            print(f"SKIP {name}: {s}")
        except Exception as e:  # noqa: BLE001 - a report of every failure
            failed += 1
            print(f"FAIL {name}: {type(e).__name__}: {e}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(_main())
