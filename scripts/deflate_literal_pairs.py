#!/usr/bin/env python3
"""How many symbols of raw deflate streams two-literal table entries would
save: the share of symbols that are a literal following an unpaired
literal whose two codes fit in the inflate kernel's 10 lookup bits.

    python3 scripts/deflate_literal_pairs.py FILE... [--mib 1] [--chunk-kib 128] [--level 9]

Each file's first MiB is cut into chunks, each compressed on its own as raw
deflate (zlib, as the CODAG suite's chunks are) and decoded here symbol by
symbol. Dynamic and fixed blocks are followed; stored blocks are skipped.
"""
import argparse
import zlib

LOOKUP_BITS = 10
LEN_EXTRA = [0] * 8 + [1] * 4 + [2] * 4 + [3] * 4 + [4] * 4 + [5] * 4 + [0]
DIST_EXTRA = [0, 0, 0, 0] + [n // 2 - 1 for n in range(4, 30)]
CL_ORDER = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15]


class Bits:
    def __init__(self, data):
        self.data, self.pos = data, 0

    def take(self, n):
        v = 0
        for k in range(n):
            byte = self.data[self.pos >> 3]
            v |= ((byte >> (self.pos & 7)) & 1) << k
            self.pos += 1
        return v


def canonical(lengths):
    """(code, length) -> symbol of the canonical code of `lengths`."""
    top = max(lengths)
    count = [0] * (top + 1)
    for n in lengths:
        if n:
            count[n] += 1
    code, first = 0, [0] * (top + 2)
    for n in range(1, top + 1):
        code = (code + count[n - 1]) << 1 if n > 1 else 0
        first[n] = code
    table = {}
    for sym, n in enumerate(lengths):
        if n:
            table[(first[n], n)] = sym
            first[n] += 1
    return table


def symbol(bits, table):
    code = 0
    for n in range(1, 16):
        code = (code << 1) | bits.take(1)
        if (code, n) in table:
            return table[(code, n)], n
    raise ValueError("no code matches")


def block_tables(bits, kind):
    if kind == 1:
        lengths = [8] * 144 + [9] * 112 + [7] * 24 + [8] * 8
        return canonical(lengths), canonical([5] * 30)
    nlit, ndist, ncl = bits.take(5) + 257, bits.take(5) + 1, bits.take(4) + 4
    cl = [0] * 19
    for i in range(ncl):
        cl[CL_ORDER[i]] = bits.take(3)
    cl_table, lengths = canonical(cl), []
    while len(lengths) < nlit + ndist:
        s, _ = symbol(bits, cl_table)
        if s < 16:
            lengths.append(s)
        elif s == 16:
            lengths += [lengths[-1]] * (3 + bits.take(2))
        elif s == 17:
            lengths += [0] * (3 + bits.take(3))
        else:
            lengths += [0] * (11 + bits.take(7))
    return canonical(lengths[:nlit]), canonical(lengths[nlit:])


def count(stream):
    """(literals, copies, pairs) of one raw deflate stream."""
    bits = Bits(stream)
    literals = copies = pairs = 0
    while True:
        last, kind = bits.take(1), bits.take(2)
        if kind == 0:
            bits.pos = (bits.pos + 7) & ~7
            n = bits.take(16)
            bits.take(16)
            bits.pos += 8 * n
        else:
            lit, dist = block_tables(bits, kind)
            open_len = None  # code length of the literal before, if unpaired
            while True:
                s, n = symbol(bits, lit)
                if s < 256:
                    literals += 1
                    if open_len is not None and open_len + n <= LOOKUP_BITS:
                        pairs += 1
                        open_len = None
                    else:
                        open_len = n
                    continue
                open_len = None
                if s == 256:
                    break
                bits.take(LEN_EXTRA[s - 257])
                d, _ = symbol(bits, dist)
                bits.take(DIST_EXTRA[d])
                copies += 1
        if last:
            return literals, copies, pairs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--mib", type=float, default=1)
    ap.add_argument("--chunk-kib", type=int, default=128)
    ap.add_argument("--level", type=int, default=9)
    a = ap.parse_args()
    for path in a.files:
        data = open(path, "rb").read()[: int(a.mib * (1 << 20))]
        step = a.chunk_kib << 10
        totals = [0, 0, 0]
        for at in range(0, len(data), step):
            c = zlib.compressobj(a.level, zlib.DEFLATED, -15)
            stream = c.compress(data[at : at + step]) + c.flush()
            for i, v in enumerate(count(stream)):
                totals[i] += v
        literals, copies, pairs = totals
        symbols = literals + copies
        print(
            f"{path}: {symbols} symbols, {literals} literals, {copies} copies; "
            f"{pairs} pairs save {100 * pairs / max(symbols, 1):.1f}% of the lookups"
        )


if __name__ == "__main__":
    main()
