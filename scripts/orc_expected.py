#!/usr/bin/env python3
"""Read an ORC file with pyarrow and write what it reads as an Arrow IPC *file*.

Usage: orc_expected.py IN.orc OUT.arrow

Exit status: 0 on success; 3 when pyarrow cannot read IN.orc (its error goes to
stderr, one line); 2 on bad usage, a missing IN.orc or no pyarrow.  Other failures (e.g. OUT not writable) are
ordinary Python errors (status 1).

The IPC file holds pyarrow.orc.ORCFile(IN).read() unchanged: the schema exactly
as pyarrow maps the ORC types, one record batch per chunk pyarrow returns (one
per stripe), no IPC body compression (warpread's arrow has no ipc_compression
feature).  A file with 0 rows gives an IPC file with the schema and no batches.
Value slots under nulls (undefined in Arrow, left uninitialised by pyarrow's ORC
reader) are zeroed so the output is byte-for-byte reproducible.  The ORC user
metadata pyarrow copies into the schema metadata is kept, except entries that are
not UTF-8 (arrow-rs cannot read those; a note goes to stderr).

pyarrow's ORC reader does not depend on the process's TZ: it reads ORC
TIMESTAMP with reader timezone GMT (the value is the writer's wall clock as a
zone-less timestamp[ns]) and TIMESTAMP_INSTANT as timestamp[ns, tz=UTC].  TZ is
pinned to UTC here anyway so that no future pyarrow default can make the
expected output machine-dependent.
"""
import os
import sys
import time

os.environ["TZ"] = "UTC"
if hasattr(time, "tzset"):
    time.tzset()


def read_orc(path):
    import pyarrow.orc as orc
    return orc.ORCFile(path).read()


def _mask_bits(buf, length, valid=None):
    """Copy of a bitmap with bits >= length cleared (and, with valid, ANDed with it).
    Plain Python (no numpy: CI's pyarrow may come without it)."""
    import pyarrow as pa
    nbytes = (length + 7) // 8
    b = int.from_bytes(buf.to_pybytes()[:nbytes], "little")
    if valid is not None:
        b &= int.from_bytes(valid.to_pybytes()[:nbytes], "little")
    b &= (1 << length) - 1
    return pa.py_buffer(b.to_bytes(nbytes, "little"))


def zero_undefined(arr):
    """The same array with the bytes Arrow leaves undefined set to zero.

    pyarrow's ORC reader leaves whatever was in memory in the value slots of null
    entries (and in bitmap bits past the end), so without this two runs write
    different IPC bytes for the same logical table.  Logical content is unchanged:
    only value slots under nulls and trailing bitmap bits are touched."""
    import pyarrow as pa
    import pyarrow.types as pt

    t = arr.type
    if arr.offset != 0:
        arr = pa.concat_arrays([arr])  # re-based copy
    if arr.offset != 0:
        return arr
    n = len(arr)
    bufs = arr.buffers()
    validity = bufs[0]
    nulls = arr.null_count
    new_validity = _mask_bits(validity, n) if (validity is not None and n) else validity
    if pt.is_boolean(t):
        data = _mask_bits(bufs[1], n, validity if nulls else None) if n else bufs[1]
        return pa.Array.from_buffers(t, n, [new_validity, data], nulls)
    if pt.is_integer(t) or pt.is_floating(t) or pt.is_temporal(t) or pt.is_decimal(t):
        width = t.bit_width // 8
        data = bufs[1]
        if nulls and n:
            d = bytearray(data.to_pybytes()[:n * width])
            zero = bytes(width)
            for i, ok in enumerate(arr.is_valid().to_pylist()):
                if not ok:
                    d[i * width:(i + 1) * width] = zero
            data = pa.py_buffer(bytes(d))
        return pa.Array.from_buffers(t, n, [new_validity, data], nulls)
    if pt.is_string(t) or pt.is_binary(t) or pt.is_large_string(t) or pt.is_large_binary(t):
        return pa.Array.from_buffers(t, n, [new_validity] + bufs[1:], nulls)
    if pt.is_map(t) or pt.is_list(t) or pt.is_large_list(t):
        return pa.Array.from_buffers(t, n, [new_validity, bufs[1]], nulls, children=[zero_undefined(arr.values)])
    if pt.is_struct(t):
        kids = [zero_undefined(arr.field(i)) for i in range(t.num_fields)]
        return pa.Array.from_buffers(t, n, [new_validity], nulls, children=kids)
    if pt.is_union(t):
        kids = [zero_undefined(arr.field(i)) for i in range(t.num_fields)]
        own = bufs[:3 if t.mode == "dense" else 2]  # buffers() lists the children's buffers after the union's own
        return pa.Array.from_buffers(t, n, own, nulls, children=kids)
    return arr


def utf8_metadata(schema):
    """pyarrow copies the ORC footer's user metadata into the Arrow schema metadata.
    Arrow IPC stores metadata as flatbuffer strings, which arrow-rs requires to be
    UTF-8 (its Schema metadata is HashMap<String, String>), so entries whose key or
    value is not UTF-8 are dropped.  Returns (schema, dropped keys)."""
    md = schema.metadata
    if not md:
        return schema, []
    keep, dropped = {}, []
    for k, v in md.items():
        try:
            k.decode("utf-8")
            v.decode("utf-8")
            keep[k] = v
        except UnicodeDecodeError:
            dropped.append(k.decode("utf-8", "backslashreplace"))
    if not dropped:
        return schema, []
    return schema.with_metadata(keep) if keep else schema.remove_metadata(), dropped


def write_ipc(table, out_path):
    import pyarrow as pa
    schema, dropped = utf8_metadata(table.schema)
    if dropped:
        print(f"note: dropped schema metadata that is not UTF-8: {', '.join(dropped)}", file=sys.stderr)
    cols = []
    for col in table.columns:
        cols.append(pa.chunked_array([zero_undefined(c) for c in col.chunks], type=col.type))
    clean = pa.Table.from_arrays(cols, schema=schema)
    with pa.OSFile(out_path, "wb") as sink:
        with pa.ipc.new_file(sink, schema) as writer:
            writer.write_table(clean)


def main(argv):
    if len(argv) != 3:
        print("usage: orc_expected.py IN.orc OUT.arrow", file=sys.stderr)
        return 2
    try:
        import pyarrow  # noqa: F401
    except ImportError as e:
        print(f"pyarrow not importable: {e}", file=sys.stderr)
        return 2
    if not os.path.isfile(argv[1]):
        print(f"no such file: {argv[1]}", file=sys.stderr)
        return 2
    try:
        table = read_orc(argv[1])
    except Exception as e:  # noqa: BLE001 - any reader failure is "pyarrow can't read it"
        msg = " ".join(str(e).split())
        print(f"pyarrow failed to read {argv[1]}: {type(e).__name__}: {msg}", file=sys.stderr)
        return 3
    write_ipc(table, argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
