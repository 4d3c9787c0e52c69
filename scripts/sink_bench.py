#!/usr/bin/env python3
"""How fast this host puts 10.1 GB (lineitem SF 10 as Arrow IPC) into one
file: the floor under `warpread cat -o FILE`, and the ways around it that
were measured (benchmarks/streaming.md, "The sink").

    [SINK_BYTES=N] sink_bench.py [ROUNDS] [--dir /tmp/stream] [--only WAY,WAY,...]

Ways (all by default):
- write:   write() of 64 MiB pieces from a hot 64 MiB buffer and from a
           cold 2 GiB source, into a fresh file and into one whose blocks
           are reserved first (fallocate);
- map:     copies into a shared mapping of a reserved file from 4, 8 and
           16 threads (what a mapped writer does with workers faulting
           pages in);
- prefill: write() while helper threads make the page-cache pages just
           ahead of it, up to the length set 256-512 MiB ahead over
           unwritten extents (POSIX_FADV_WILLNEED or pread of the range);
- pwrite:  4 and 8 threads each writing its own 64 MiB pieces at their
           offsets into a reserved file;
- direct:  O_DIRECT writes of 8 and 32 MiB pieces from 1 to 8 threads
           (straight to the disk, no page cache);
- tmpfs:   the hot-buffer write() into /dev/shm, if it has room.
"""
import ctypes
import mmap
import os
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

N = int(os.environ.get("SINK_BYTES", 10_126_101_514))
CH = 64 << 20
STEP = 256 << 20
libc = ctypes.CDLL(None, use_errno=True)
libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long]
KEEP_SIZE = 1


def arg(name, default):
    if name not in sys.argv:
        return default
    i = sys.argv.index(name) + 1
    if i >= len(sys.argv):
        sys.exit("%s needs a value" % name)
    return sys.argv[i]


DIR = arg("--dir", "/tmp/stream")
ONLY = arg("--only", "write,map,prefill,pwrite,direct,tmpfs").split(",")
ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 2
PATH = os.path.join(DIR, "sink")
HOT = bytearray(os.urandom(1 << 20)) * 64
COLD = None


def cold():
    global COLD
    if COLD is None:
        COLD = np.random.default_rng(1).integers(0, 255, 2 << 30, dtype=np.uint8)
    return COLD


def fresh(path=PATH, flags=0):
    if os.path.exists(path):
        os.remove(path)
    os.sync()
    return os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC | flags)


def fallocate(fd, mode, offset, length):
    if libc.fallocate(fd, mode, offset, length) != 0:
        raise OSError(ctypes.get_errno(), "fallocate")


def plain_write(reserve, source, path=PATH):
    fd = fresh(path)
    t = time.time()
    if reserve:
        fallocate(fd, KEEP_SIZE, 0, N)
    mv = memoryview(source)
    off = 0
    while off < N:
        s = off % len(source)
        n = min(CH, N - off, len(source) - s)
        off += os.write(fd, mv[s:s + n])
    os.ftruncate(fd, N)
    os.close(fd)
    return time.time() - t


def start_threads(target, args_list):
    """Starts `target` once per argument tuple on its own thread; returns
    the join, which raises the first exception of any, so that a failed
    thread fails the case."""
    errors = []

    def guarded(*a):
        try:
            target(*a)
        except BaseException as e:  # noqa: BLE001 - re-raised below
            errors.append(e)

    threads = [threading.Thread(target=guarded, args=a) for a in args_list]
    for th in threads:
        th.start()

    def join():
        for th in threads:
            th.join()
        if errors:
            raise errors[0]

    return join


def run_threads(target, args_list):
    """`start_threads`, joined."""
    start_threads(target, args_list)()


def mapped(threads):
    src = cold()
    fd = fresh()
    t = time.time()
    fallocate(fd, 0, 0, N)
    m = mmap.mmap(fd, N, mmap.MAP_SHARED, mmap.PROT_WRITE | mmap.PROT_READ)
    dst = np.frombuffer(m, dtype=np.uint8)

    def copy(o):
        n = min(CH, N - o)
        s = o % len(src)
        n1 = min(n, len(src) - s)
        dst[o:o + n1] = src[s:s + n1]
        if n1 < n:
            dst[o + n1:o + n] = src[:n - n1]

    with ThreadPoolExecutor(threads) as ex:
        list(ex.map(copy, range(0, N, CH)))  # re-raises a copy's exception
    copied = time.time() - t
    del dst
    m.close()
    os.close(fd)
    return copied, time.time() - t


def prefilled(helpers, how, piece):
    """write() with `helpers` threads making pages ahead of it, `piece`
    bytes at a time, up to the length, which is set 256-512 MiB past the
    writes (pages past it cannot be read in). Returns (seconds, the
    helpers' busy seconds summed)."""
    fd = fresh()
    t = time.time()
    sized = [0]
    written = [0]
    nxt = [0]
    busy = [0.0]
    done = [False]
    lock = threading.Lock()

    def size_to(end):
        while sized[0] < end:
            sized[0] = min(sized[0] + STEP, N)
            fallocate(fd, 0, 0, sized[0])

    def helper():
        scratch = bytearray(piece)
        while True:
            with lock:
                o = nxt[0]
                if o >= N or done[0]:
                    return
                if o >= min(sized[0], written[0] + (1 << 30)):
                    o = None
                else:
                    nxt[0] = o + piece
            if o is None:
                time.sleep(0.0005)
                continue
            h = time.time()
            n = min(piece, N - o)
            if how == "fadvise":
                os.posix_fadvise(fd, o, n, os.POSIX_FADV_WILLNEED)
            else:
                os.preadv(fd, [memoryview(scratch)[:n]], o)
            with lock:
                busy[0] += time.time() - h

    with lock:
        size_to(min(2 * STEP, N))
    join_helpers = start_threads(helper, [()] * helpers)
    try:
        off = 0
        while off < N:
            with lock:
                size_to(min(off + 2 * STEP, N))
            off += os.write(fd, memoryview(HOT)[: min(CH, N - off)])
            written[0] = off
    finally:
        done[0] = True
        join_helpers()
    os.ftruncate(fd, N)
    os.close(fd)
    return time.time() - t, busy[0]


def positioned(threads, piece=CH, flags=0, mode=KEEP_SIZE):
    """`threads` threads each writing whole pieces at their offsets."""
    n_total = N if not flags else N // (1 << 20) * (1 << 20)
    # Page-aligned sources, as O_DIRECT needs, filled before the clock.
    bufs = []
    for _ in range(threads):
        buf = mmap.mmap(-1, piece)
        for o in range(0, piece, len(HOT)):
            buf[o:o + min(len(HOT), piece - o)] = HOT[: min(len(HOT), piece - o)]
        bufs.append(buf)
    fd = fresh(flags=flags)
    t = time.time()
    if mode is not None:
        fallocate(fd, mode, 0, n_total)
    offsets = list(range(0, n_total, piece))
    lock = threading.Lock()

    def writer(buf):
        while True:
            with lock:
                if not offsets:
                    return
                o = offsets.pop(0)
            n = min(piece, n_total - o)
            if flags:
                # A short O_DIRECT write would leave the rest misaligned.
                if os.pwrite(fd, memoryview(buf)[:n], o) != n:
                    raise OSError("short O_DIRECT write at %d" % o)
                continue
            done = 0
            while done < n:
                done += os.pwrite(fd, memoryview(buf)[done:n], o + done)

    try:
        run_threads(writer, [(b,) for b in bufs])
    finally:
        os.close(fd)
    return time.time() - t, n_total


for rep in range(ROUNDS):
    if "write" in ONLY:
        for name, source in (("a hot 64 MiB", HOT), ("a cold 2 GiB", None)):
            for r in (False, True):
                secs = plain_write(r, cold() if source is None else source)
                print("write() from %s source, %s: %.2f s"
                      % (name, "reserved" if r else "not reserved", secs), flush=True)
    if "map" in ONLY:
        for th in (4, 8, 16):
            a, b = mapped(th)
            print("mapped, %d threads: copies %.2f s, with unmap %.2f s" % (th, a, b), flush=True)
    if "prefill" in ONLY:
        for helpers, how, piece in ((2, "fadvise", 128 << 10), (2, "fadvise", 2 << 20),
                                    (4, "fadvise", 128 << 10), (4, "pread", 8 << 20)):
            secs, busy = prefilled(helpers, how, piece)
            print("write(), pages made ahead by %d threads (%s, %d KiB): %.2f s, helpers busy %.2f s"
                  % (helpers, how, piece >> 10, secs, busy), flush=True)
    if "pwrite" in ONLY:
        for th in (4, 8):
            secs, _ = positioned(th)
            print("pwrite() from %d threads, reserved: %.2f s" % (th, secs), flush=True)
    if "direct" in ONLY:
        for th, piece, mode in ((1, 8 << 20, 0), (4, 8 << 20, 0), (8, 8 << 20, 0),
                                (4, 32 << 20, 0), (4, 8 << 20, KEEP_SIZE), (4, 8 << 20, None)):
            secs, n = positioned(th, piece, os.O_DIRECT, mode)
            how = {0: "length set first", KEEP_SIZE: "reserved", None: "fresh"}[mode]
            print("O_DIRECT, %d threads, %d MiB pieces, %s: %.2f s (%.2f GB/s)"
                  % (th, piece >> 20, how, secs, n / secs / 1e9), flush=True)
    if "tmpfs" in ONLY:
        st = os.statvfs("/dev/shm")
        if st.f_bavail * st.f_frsize > N + (1 << 30):
            print("write() into /dev/shm: %.2f s" % plain_write(True, HOT, "/dev/shm/sink"), flush=True)
            os.remove("/dev/shm/sink")
        else:
            print("/dev/shm has no room for %d bytes" % N)
if os.path.exists(PATH):
    os.remove(PATH)
