#!/usr/bin/env python3
"""How fast this host puts 10.1 GB (lineitem SF 10 as Arrow IPC) into one
file's page cache: the floor under `warpread cat -o FILE`.

    sink_bench.py [ROUNDS] [--dir /tmp/stream]

- write() of 64 MiB pieces from one hot 64 MiB buffer, and from a cold
  2 GiB source, each into a fresh file and into one whose blocks are
  reserved first (fallocate);
- copies into a shared mapping of a reserved file from 4, 8 and 16
  threads (what `cat --output-io map` does with its workers faulting
  pages in).
"""
import ctypes, mmap, os, sys, time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
N = int(os.environ.get("SINK_BYTES", 10_126_101_514))
SRC = np.random.default_rng(1).integers(0, 255, 2 << 30, dtype=np.uint8)
libc = ctypes.CDLL(None, use_errno=True)
libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long]
path = os.path.join(sys.argv[sys.argv.index("--dir") + 1] if "--dir" in sys.argv else "/tmp/stream", "sink")
CH = 64 << 20
HOT = bytearray(CH)
def plain_write(reserve, source):
    os.sync(); t = time.time()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    if reserve: assert libc.fallocate(fd, 1, 0, N) == 0
    mv = memoryview(source); off = 0
    while off < N:
        s = off % len(source); n = min(CH, N - off, len(source) - s)
        off += os.write(fd, mv[s:s + n])
    os.ftruncate(fd, N); os.close(fd)
    return time.time() - t
def mapped(threads):
    os.sync(); t = time.time()
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC)
    assert libc.fallocate(fd, 0, 0, N) == 0
    m = mmap.mmap(fd, N, mmap.MAP_SHARED, mmap.PROT_WRITE | mmap.PROT_READ)
    dst = np.frombuffer(m, dtype=np.uint8)
    chunks = [(o, min(CH, N - o)) for o in range(0, N, CH)]
    def copy(c):
        o, n = c; s = o % len(SRC); n1 = min(n, len(SRC) - s)
        dst[o:o + n1] = SRC[s:s + n1]
        if n1 < n: dst[o + n1:o + n] = SRC[:n - n1]
    with ThreadPoolExecutor(threads) as ex: list(ex.map(copy, chunks))
    t1 = time.time() - t
    del dst; m.close(); os.close(fd)
    return t1, time.time() - t
rounds = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 2
for rep in range(rounds):
    for name, source in (("hot 64 MiB", HOT), ("cold 2 GiB", SRC)):
        for r in (False, True):
            secs = plain_write(r, source)
            print("write() from a %s source, %s: %.2f s" % (name, "reserved" if r else "not reserved", secs), flush=True)
            os.remove(path)
    for th in (4, 8, 16):
        a, b = mapped(th)
        print("mapped, %d threads: copies %.2f s, with unmap %.2f s" % (th, a, b), flush=True)
        os.remove(path)
