"""Reads of ``http://`` URLs through the Python package: a server started
here on the loopback (ranged GETs, as an object store serves them) gives
the bytes of the repository's fixtures, and every read over it must equal
the read of the local file; a missing object is an error naming it."""

from __future__ import annotations

import email.utils
import http.server
import os
import threading
from pathlib import Path
from typing import Iterator

import pytest

import warpread
from compare import check_remote_read
from conftest import TESTDATA, fixture_url, remote_cases


class _RangeHandler(http.server.SimpleHTTPRequestHandler):
    """``SimpleHTTPRequestHandler`` with ``Range: bytes=a-b`` answered by a
    206 and ``Content-Range``, which object_store's HTTP store relies on."""

    ranged = 0  # ranged answers given, to check reads fetch ranges

    def __init__(self, *args, **kwargs):
        super().__init__(*args, directory=str(TESTDATA), **kwargs)

    def log_message(self, *args) -> None:  # keep pytest's output clean
        pass

    def do_GET(self) -> None:
        spec = self.headers.get("Range")
        path = Path(self.translate_path(self.path))
        if spec is None or not path.is_file():
            return super().do_GET()
        size = path.stat().st_size
        first, _, last = spec.removeprefix("bytes=").partition("-")
        start = int(first) if first else max(size - int(last), 0)
        end = min(int(last), size - 1) if first and last else size - 1
        if start >= size or start > end:
            self.send_response(416)
            self.send_header("Content-Range", f"bytes */{size}")
            self.end_headers()
            return
        with open(path, "rb") as f:
            f.seek(start)
            body = f.read(end - start + 1)
        type(self).ranged += 1
        self.send_response(206)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
        self.send_header("Content-Length", str(len(body)))
        mtime = email.utils.formatdate(path.stat().st_mtime, usegmt=True)
        self.send_header("Last-Modified", mtime)
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _RangeHandler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        thread.join()


CASES = remote_cases(8)


@pytest.mark.parametrize("read, path", CASES, ids=lambda c: getattr(c, "name", ""))
def test_fixtures_over_http_equal_the_local_reads(server: str, read, path: Path, cpu):
    check_remote_read(read, path, fixture_url(server, path), cpu)


def test_files_over_http_stream_their_batches_and_metadata(server: str, cpu):
    path = TESTDATA / "orc" / "rowgroups_v12_zlib.orc"
    local = warpread.OrcFile(path, backend=cpu)
    remote = warpread.OrcFile(fixture_url(server, path), backend=cpu)
    assert remote.path.startswith("http://127.0.0.1:")
    assert remote.num_rows == local.num_rows and remote.schema == local.schema
    before = _RangeHandler.ranged
    got = list(remote.iter_batches(batch_size=1000))
    assert sum(b.num_rows for b in got) == local.num_rows
    assert all(b.num_rows <= 1000 for b in got)
    # The footer and the stripes came as ranges, not as the whole file.
    assert _RangeHandler.ranged > before


def test_a_missing_object_is_an_error_naming_it(server: str, cpu):
    url = f"{server}/parquet/{os.urandom(4).hex()}-missing.parquet"
    with pytest.raises(warpread.errors.WarpreadError) as e:
        warpread.read_parquet(url, backend=cpu)
    assert "missing.parquet" in str(e.value)
