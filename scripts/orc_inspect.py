#!/usr/bin/env python3
"""Dump the physical layout of an ORC file, independently of pyarrow's reader.

Usage: orc_inspect.py FILE.orc... [--json]
       orc_inspect.py FILE.orc --raw COLUMN_ID [STRIPE]   (decoded integer streams)

Prints the postscript (compression, block size, version), the footer's type
tree (ORC type names, incl. CHAR/VARCHAR/UNION/TIMESTAMP_INSTANT), each stripe's
rows, column encodings (DIRECT/DICTIONARY/DIRECT_V2/DICTIONARY_V2) and writer
timezone, and a count of the integer-RLE run kinds found in the integer streams
(RLE v1 runs/literals; RLE v2 SHORT_REPEAT/DIRECT/PATCHED_BASE/DELTA).

It is a small hand-written protobuf + ORC stream walker (no dependency beyond
the standard library and pyarrow's codecs), used by gen_orc_fixtures.py to check
that the fixtures really contain the encodings they claim to, and to report the
writer timezone of corpus files (pyarrow.orc.ORCFile does not expose it).
"""
import json
import struct
import sys
import zlib
from collections import Counter

# ---------------------------------------------------------------- protobuf

def _varint(buf, pos):
    result = 0
    shift = 0
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7


def pb_fields(buf):
    """Yield (field_number, wire_type, value) for a protobuf message."""
    pos = 0
    n = len(buf)
    while pos < n:
        key, pos = _varint(buf, pos)
        fnum, wt = key >> 3, key & 7
        if wt == 0:
            v, pos = _varint(buf, pos)
        elif wt == 1:
            v = buf[pos:pos + 8]
            pos += 8
        elif wt == 2:
            ln, pos = _varint(buf, pos)
            v = bytes(buf[pos:pos + ln])
            pos += ln
        elif wt == 5:
            v = buf[pos:pos + 4]
            pos += 4
        else:
            raise ValueError(f"unsupported wire type {wt}")
        yield fnum, wt, v


def pb_packed_uints(v, wt):
    if wt == 0:
        return [v]
    out = []
    pos = 0
    while pos < len(v):
        x, pos = _varint(v, pos)
        out.append(x)
    return out


COMPRESSION = {0: "NONE", 1: "ZLIB", 2: "SNAPPY", 3: "LZO", 4: "LZ4", 5: "ZSTD"}
TYPE_KIND = {0: "BOOLEAN", 1: "BYTE", 2: "SHORT", 3: "INT", 4: "LONG", 5: "FLOAT",
             6: "DOUBLE", 7: "STRING", 8: "BINARY", 9: "TIMESTAMP", 10: "LIST",
             11: "MAP", 12: "STRUCT", 13: "UNION", 14: "DECIMAL", 15: "DATE",
             16: "VARCHAR", 17: "CHAR", 18: "TIMESTAMP_INSTANT"}
STREAM_KIND = {0: "PRESENT", 1: "DATA", 2: "LENGTH", 3: "DICTIONARY_DATA",
               4: "DICTIONARY_COUNT", 5: "SECONDARY", 6: "ROW_INDEX",
               7: "BLOOM_FILTER", 8: "BLOOM_FILTER_UTF8", 9: "ENCRYPTED_INDEX",
               10: "ENCRYPTED_DATA", 100: "STRIPE_STATISTICS", 101: "FILE_STATISTICS"}
ENC_KIND = {0: "DIRECT", 1: "DICTIONARY", 2: "DIRECT_V2", 3: "DICTIONARY_V2"}

# ---------------------------------------------------------------- codecs

def _lz4_block(src):
    """Decode one raw LZ4 block (no frame)."""
    out = bytearray()
    i = 0
    n = len(src)
    while i < n:
        token = src[i]
        i += 1
        lit = token >> 4
        if lit == 15:
            while True:
                b = src[i]
                i += 1
                lit += b
                if b != 255:
                    break
        out += src[i:i + lit]
        i += lit
        if i >= n:
            break
        off = src[i] | (src[i + 1] << 8)
        i += 2
        ml = token & 15
        if ml == 15:
            while True:
                b = src[i]
                i += 1
                ml += b
                if b != 255:
                    break
        ml += 4
        start = len(out) - off
        for k in range(ml):
            out.append(out[start + k])
    return bytes(out)


def _decompress_chunk(kind, data, block_size):
    if kind == "ZLIB":
        return zlib.decompress(data, -15)
    import pyarrow as pa
    if kind == "SNAPPY":
        size, _ = _varint(data, 0)
        return pa.Codec("snappy").decompress(data, decompressed_size=size).to_pybytes()
    if kind == "ZSTD":
        # ORC's writers record the content size in the zstd frame header
        size = _zstd_content_size(data)
        if size is None:
            raise NotImplementedError("zstd frame without content size")
        return pa.Codec("zstd").decompress(data, decompressed_size=size).to_pybytes()
    if kind == "LZ4":
        return _lz4_block(data)
    raise NotImplementedError(f"codec {kind}")


def _zstd_content_size(data):
    # RFC 8878 frame header
    assert data[:4] == b"\x28\xb5\x2f\xfd", "not a zstd frame"
    fhd = data[4]
    fcs_flag = fhd >> 6
    single = (fhd >> 5) & 1
    dict_flag = fhd & 3
    pos = 5
    if not single:
        pos += 1
    pos += [0, 1, 2, 4][dict_flag]
    size_bytes = [1 if single else 0, 2, 4, 8][fcs_flag]
    if size_bytes == 0:
        return None
    v = int.from_bytes(data[pos:pos + size_bytes], "little")
    if size_bytes == 2:
        v += 256
    return v


def decompress_stream(kind, raw, block_size):
    """ORC compressed stream: sequence of 3-byte-header chunks."""
    if kind == "NONE":
        return bytes(raw), 0
    out = bytearray()
    pos = 0
    chunks = 0
    while pos < len(raw):
        h = raw[pos] | (raw[pos + 1] << 8) | (raw[pos + 2] << 16)
        pos += 3
        ln = h >> 1
        original = h & 1
        piece = raw[pos:pos + ln]
        pos += ln
        chunks += 1
        out += piece if original else _decompress_chunk(kind, bytes(piece), block_size)
    return bytes(out), chunks

# ---------------------------------------------------------------- RLE walkers

_W5 = list(range(1, 25)) + [26, 28, 30, 32, 40, 48, 56, 64]


def walk_rle_v2(buf):
    """Count RLE v2 sub-encodings in an integer stream (signedness does not matter)."""
    c = Counter()
    pos = 0
    n = len(buf)
    while pos < n:
        b = buf[pos]
        enc = b >> 6
        if enc == 0:  # SHORT_REPEAT
            w = ((b >> 3) & 7) + 1
            pos += 1 + w
            c["SHORT_REPEAT"] += 1
        elif enc == 1:  # DIRECT
            w = _W5[(b >> 1) & 0x1F]
            ln = (((b & 1) << 8) | buf[pos + 1]) + 1
            pos += 2 + (ln * w + 7) // 8
            c["DIRECT"] += 1
        elif enc == 2:  # PATCHED_BASE
            w = _W5[(b >> 1) & 0x1F]
            ln = (((b & 1) << 8) | buf[pos + 1]) + 1
            b3, b4 = buf[pos + 2], buf[pos + 3]
            bw = ((b3 >> 5) & 7) + 1
            pw = _W5[b3 & 0x1F]
            pgw = ((b4 >> 5) & 7) + 1
            pll = b4 & 0x1F
            pos += 4 + bw + (ln * w + 7) // 8
            cfb = _closest_fixed_bits(pgw + pw)
            pos += (pll * cfb + 7) // 8
            c["PATCHED_BASE"] += 1
        else:  # DELTA
            code = (b >> 1) & 0x1F
            w = 0 if code == 0 else _W5[code]
            ln = (((b & 1) << 8) | buf[pos + 1]) + 1
            pos += 2
            _, pos = _varint(buf, pos)  # base
            _, pos = _varint(buf, pos)  # delta base
            if w:
                pos += ((ln - 2) * w + 7) // 8
            c["DELTA_FIXED" if w == 0 else "DELTA"] += 1
    if pos != n:
        raise ValueError(f"RLEv2 walk overran: {pos} != {n}")
    return c


def _closest_fixed_bits(n):
    if n == 0:
        return 1
    if n <= 24:
        return n
    for w in (26, 28, 30, 32, 40, 48, 56, 64):
        if n <= w:
            return w
    return 64


def walk_rle_v1(buf):
    c = Counter()
    pos = 0
    n = len(buf)
    while pos < n:
        ctl = buf[pos]
        pos += 1
        if ctl < 0x80:
            pos += 1  # delta byte
            _, pos = _varint(buf, pos)
            c["RUN"] += 1
        else:
            for _ in range(256 - ctl):
                _, pos = _varint(buf, pos)
            c["LITERAL"] += 1
    if pos != n:
        raise ValueError("RLEv1 walk overran")
    return c


def walk_byte_rle(buf):
    c = Counter()
    pos = 0
    while pos < len(buf):
        ctl = buf[pos]
        pos += 1
        if ctl < 0x80:
            pos += 1
            c["BYTE_RUN"] += 1
        else:
            pos += 256 - ctl
            c["BYTE_LITERAL"] += 1
    return c

# ---------------------------------------------------------------- file

def _parse_type(msg):
    t = {"kind": None, "subtypes": [], "fieldNames": []}
    for f, wt, v in pb_fields(msg):
        if f == 1:
            t["kind"] = TYPE_KIND.get(v, v)
        elif f == 2:
            t["subtypes"] += pb_packed_uints(v, wt)
        elif f == 3:
            t["fieldNames"].append(v.decode())
        elif f == 4:
            t["maximumLength"] = v
        elif f == 5:
            t["precision"] = v
        elif f == 6:
            t["scale"] = v
    return t


def inspect(path, walk=True):
    data = open(path, "rb").read()
    ps_len = data[-1]
    ps = data[-1 - ps_len:-1]
    info = {"file": path, "compression": "NONE", "blockSize": 262144, "version": []}
    for f, wt, v in pb_fields(ps):
        if f == 1:
            info["footerLength"] = v
        elif f == 2:
            info["compression"] = COMPRESSION[v]
        elif f == 3:
            info["blockSize"] = v
        elif f == 4:
            info["version"] += pb_packed_uints(v, wt)
        elif f == 5:
            info["metadataLength"] = v
        elif f == 6:
            info["writerVersion"] = v
    comp = info["compression"]
    bs = info["blockSize"]
    fend = len(data) - 1 - ps_len
    footer_raw = data[fend - info["footerLength"]:fend]
    footer, _ = decompress_stream(comp, footer_raw, bs)
    types, stripes = [], []
    info["rows"] = 0
    for f, wt, v in pb_fields(footer):
        if f == 3:
            s = {}
            for g, _, x in pb_fields(v):
                s[{1: "offset", 2: "indexLength", 3: "dataLength", 4: "footerLength",
                   5: "rows"}.get(g, g)] = x
            stripes.append(s)
        elif f == 4:
            types.append(_parse_type(v))
        elif f == 6:
            info["rows"] = v
        elif f == 8:
            info["rowIndexStride"] = v
        elif f == 9:
            info["writer"] = v
        elif f == 12:
            info["softwareVersion"] = v.decode()
    info["types"] = types
    info["typeString"] = type_string(types, 0) if types else ""
    runs = Counter()
    info["chunks"] = 0
    for s in stripes:
        foff = s["offset"] + s.get("indexLength", 0) + s["dataLength"]
        sf, _ = decompress_stream(comp, data[foff:foff + s["footerLength"]], bs)
        streams, encs = [], []
        s["writerTimezone"] = None
        for f, wt, v in pb_fields(sf):
            if f == 1:
                st = {"kind": 1, "column": 0, "length": 0}
                for g, _, x in pb_fields(v):
                    st[{1: "kind", 2: "column", 3: "length"}[g]] = x
                st["kind"] = STREAM_KIND.get(st["kind"], st["kind"])
                streams.append(st)
            elif f == 2:
                e = {"kind": 0}
                for g, _, x in pb_fields(v):
                    if g == 1:
                        e["kind"] = x
                    elif g == 2:
                        e["dictionarySize"] = x
                e["kind"] = ENC_KIND.get(e["kind"], f"UNKNOWN({e['kind']})")
                encs.append(e)
            elif f == 3:
                s["writerTimezone"] = v.decode()
        s["encodings"] = [e["kind"] for e in encs]
        s["streams"] = streams
        if not walk:
            continue
        off = s["offset"]
        for st in streams:
            raw = data[off:off + st["length"]]
            off += st["length"]
            if st["kind"] in ("ROW_INDEX", "BLOOM_FILTER", "BLOOM_FILTER_UTF8"):
                continue
            col = st["column"]
            kind = types[col]["kind"]
            enc = encs[col]["kind"]
            buf, nch = decompress_stream(comp, raw, bs)
            info["chunks"] += nch
            if st["kind"] == "PRESENT":
                runs.update(walk_byte_rle(buf))
                continue
            if not _is_int_stream(kind, st["kind"], enc):
                if kind in ("BYTE", "BOOLEAN") or (kind == "UNION" and st["kind"] == "DATA"):
                    runs.update(walk_byte_rle(buf))
                continue
            if enc in ("DIRECT_V2", "DICTIONARY_V2"):
                runs.update(walk_rle_v2(buf))
            else:
                runs.update(walk_rle_v1(buf))
    info["stripes"] = stripes
    info["runs"] = dict(sorted(runs.items()))
    return info


def _is_int_stream(kind, skind, enc):
    if skind == "LENGTH":
        return kind in ("STRING", "VARCHAR", "CHAR", "BINARY", "LIST", "MAP")
    if skind == "DATA":
        return kind in ("SHORT", "INT", "LONG", "DATE", "TIMESTAMP", "TIMESTAMP_INSTANT") or (
            kind in ("STRING", "VARCHAR", "CHAR") and enc.startswith("DICTIONARY"))
    if skind == "SECONDARY":
        return kind in ("TIMESTAMP", "TIMESTAMP_INSTANT", "DECIMAL")
    return False


def type_string(types, i):
    t = types[i]
    k = t["kind"]
    if k == "STRUCT":
        return "struct<" + ",".join(f"{n}:{type_string(types, c)}" for n, c in zip(t["fieldNames"], t["subtypes"])) + ">"
    if k == "LIST":
        return f"array<{type_string(types, t['subtypes'][0])}>"
    if k == "MAP":
        return f"map<{type_string(types, t['subtypes'][0])},{type_string(types, t['subtypes'][1])}>"
    if k == "UNION":
        return "uniontype<" + ",".join(type_string(types, c) for c in t["subtypes"]) + ">"
    if k == "DECIMAL":
        return f"decimal({t.get('precision', '?')},{t.get('scale', '?')})"
    if k in ("CHAR", "VARCHAR"):
        return f"{k.lower()}({t.get('maximumLength', '?')})"
    return {"TIMESTAMP_INSTANT": "timestamp with local time zone"}.get(k, k.lower())


def summary(info):
    encs = Counter()
    for s in info["stripes"]:
        encs.update(s["encodings"])
    tzs = sorted({s["writerTimezone"] or "" for s in info["stripes"]})
    return {
        "rows": info["rows"], "stripes": len(info["stripes"]),
        "compression": info["compression"], "blockSize": info["blockSize"],
        "version": ".".join(map(str, info["version"])),
        "encodings": dict(sorted(encs.items())), "runs": info["runs"],
        "writerTimezones": tzs, "chunks": info["chunks"],
    }


# ---------------------------------------------------------------- RLE decoders (values)

def _unzig(v):
    return (v >> 1) ^ -(v & 1)


def _unpack(buf, pos, n, w):
    """n big-endian bit-packed values of width w starting at byte pos; returns (values, new_pos)."""
    out = []
    acc = 0
    bits = 0
    for _ in range(n):
        while bits < w:
            acc = (acc << 8) | buf[pos]
            pos += 1
            bits += 8
        bits -= w
        out.append((acc >> bits) & ((1 << w) - 1))
        acc &= (1 << bits) - 1
    return out, pos


def decode_rle_v2(buf, signed):
    out = []
    pos = 0
    n = len(buf)
    while pos < n:
        b = buf[pos]
        enc = b >> 6
        if enc == 0:
            w = ((b >> 3) & 7) + 1
            cnt = (b & 7) + 3
            v = int.from_bytes(buf[pos + 1:pos + 1 + w], "big")
            pos += 1 + w
            out += [_unzig(v) if signed else v] * cnt
        elif enc == 1:
            w = _W5[(b >> 1) & 0x1F]
            ln = (((b & 1) << 8) | buf[pos + 1]) + 1
            vals, pos = _unpack(buf, pos + 2, ln, w)
            out += [_unzig(v) for v in vals] if signed else vals
        elif enc == 2:
            w = _W5[(b >> 1) & 0x1F]
            ln = (((b & 1) << 8) | buf[pos + 1]) + 1
            b3, b4 = buf[pos + 2], buf[pos + 3]
            bw = ((b3 >> 5) & 7) + 1
            pw = _W5[b3 & 0x1F]
            pgw = ((b4 >> 5) & 7) + 1
            pll = b4 & 0x1F
            pos += 4
            base = int.from_bytes(buf[pos:pos + bw], "big")
            pos += bw
            msb = 1 << (bw * 8 - 1)
            if base & msb:
                base = -(base & (msb - 1))
            vals, pos = _unpack(buf, pos, ln, w)
            cfb = _closest_fixed_bits(pgw + pw)
            patches, pos = _unpack(buf, pos, pll, cfb)
            idx = 0
            for p in patches:
                idx += p >> pw
                vals[idx] |= (p & ((1 << pw) - 1)) << w
            out += [base + v for v in vals]
        else:
            code = (b >> 1) & 0x1F
            w = 0 if code == 0 else _W5[code]
            ln = (((b & 1) << 8) | buf[pos + 1]) + 1
            base, pos = _varint(buf, pos + 2)
            if signed:
                base = _unzig(base)
            db, pos = _varint(buf, pos)
            db = _unzig(db)
            vals = [base]
            if ln > 1:
                vals.append(base + db)
            if w == 0:
                for _ in range(ln - 2):
                    vals.append(vals[-1] + db)
            else:
                deltas, pos = _unpack(buf, pos, ln - 2, w)
                for d in deltas:
                    vals.append(vals[-1] - d if db < 0 else vals[-1] + d)
            out += vals
    return out


def decode_rle_v1(buf, signed):
    out = []
    pos = 0
    while pos < len(buf):
        ctl = buf[pos]
        pos += 1
        if ctl < 0x80:
            delta = buf[pos] - 256 if buf[pos] > 127 else buf[pos]
            v, pos = _varint(buf, pos + 1)
            v = _unzig(v) if signed else v
            out += [v + k * delta for k in range(ctl + 3)]
        else:
            for _ in range(256 - ctl):
                v, pos = _varint(buf, pos)
                out.append(_unzig(v) if signed else v)
    return out


def decode_nanos(v):
    z = v & 7
    return (v >> 3) * (10 ** (z + 1) if z else 1)


def raw_column_streams(path, column, stripe=0):
    """Decoded integer streams of one column in one stripe: {stream kind: [values]}.

    Timestamp DATA is raw seconds relative to 2015-01-01 00:00:00 (in the writer's
    timezone, per the ORC spec); SECONDARY is decoded nanoseconds."""
    info = inspect(path, walk=False)
    data = open(path, "rb").read()
    s = info["stripes"][stripe]
    t = info["types"][column]["kind"]
    enc = s["encodings"][column]
    v2 = enc in ("DIRECT_V2", "DICTIONARY_V2")
    off = s["offset"]
    out = {"_writerTimezone": s["writerTimezone"], "_encoding": enc, "_type": t}
    for st in s["streams"]:
        raw = data[off:off + st["length"]]
        off += st["length"]
        if st["column"] != column or not _is_int_stream(t, st["kind"], enc):
            continue
        buf, _ = decompress_stream(info["compression"], raw, info["blockSize"])
        signed = (st["kind"] == "DATA" and t in ("SHORT", "INT", "LONG", "DATE", "TIMESTAMP", "TIMESTAMP_INSTANT")) or (
            st["kind"] == "SECONDARY" and t == "DECIMAL")
        vals = (decode_rle_v2 if v2 else decode_rle_v1)(buf, signed)
        if st["kind"] == "SECONDARY" and t.startswith("TIMESTAMP"):
            vals = [decode_nanos(v) for v in vals]
        out[st["kind"]] = vals
    return out


def main():
    if "--raw" in sys.argv:
        # orc_inspect.py FILE --raw COLUMN_ID [STRIPE]: decoded integer streams of one column
        i = sys.argv.index("--raw")
        col = int(sys.argv[i + 1])
        stripe = int(sys.argv[i + 2]) if len(sys.argv) > i + 2 else 0
        for k, v in raw_column_streams(sys.argv[1], col, stripe).items():
            print(f"{k}: {v if isinstance(v, str) else v[:40]}")
        return
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    for p in args:
        try:
            info = inspect(p)
        except Exception as e:  # noqa: BLE001 - report and go on
            print(f"{p}: inspect failed: {type(e).__name__}: {e}")
            continue
        if "--json" in sys.argv:
            print(json.dumps(info, indent=1, default=str))
            continue
        sm = summary(info)
        print(p)
        print(f"  type: {info['typeString']}")
        print(f"  writer={info.get('writer')} software={info.get('softwareVersion')} rowIndexStride={info.get('rowIndexStride')}")
        for k, v in sm.items():
            print(f"  {k}: {v}")


if __name__ == "__main__":
    main()
