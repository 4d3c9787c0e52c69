"""Reads of ``s3://`` URLs through the Python package, against an
S3-compatible server (moto) that this module starts on the loopback and
stops: fixtures and TPC-H tables uploaded to it read as the local files do,
through ``read_parquet`` / ``read_orc``, the file classes and the
datafusion-python table provider. Credentials and the endpoint come from
the usual ``AWS_*`` environment, as for the command line.

Without moto (``pip install 'moto[server]'``) the module is skipped,
unless ``WARPREAD_REQUIRE_S3`` is set (``.ci/run`` sets it): then it fails.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Iterator, List

import pytest
from datafusion import SessionContext

import warpread
from compare import check_remote_read, same_rows
from conftest import ROOT, TPCH_TABLES, fixture_url, remote_cases
from warpread.datafusion import table_provider

BUCKET = "warpread"
CASES = remote_cases(6)
# A scan, joins of three to six tables, a subquery over lineitem.
QUERIES = ["q1", "q3", "q5", "q6", "q18"]


def _moto_command(port: int) -> List[str]:
    args = ["-H", "127.0.0.1", "-p", str(port)]
    exe = shutil.which("moto_server")
    if exe is not None:
        return [exe] + args
    try:
        import moto.server  # noqa: F401
    except ImportError:
        message = "no moto server (pip install 'moto[server]')"
        if os.environ.get("WARPREAD_REQUIRE_S3"):
            pytest.fail(f"WARPREAD_REQUIRE_S3 is set, but there is {message}")
        pytest.skip(f"skipped: {message}")
    return [sys.executable, "-m", "moto.server"] + args


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _put(endpoint: str, key: str, body: bytes = b"") -> None:
    # moto's server takes unsigned requests, so plain PUTs upload; the type
    # keeps it from parsing the body as a form (urllib's default type).
    headers = {"Content-Type": "application/octet-stream"}
    req = urllib.request.Request(f"{endpoint}/{key}", data=body, method="PUT", headers=headers)
    with urllib.request.urlopen(req, timeout=30) as r:
        assert r.status == 200, (key, r.status)


def _wait_for(endpoint: str, server: subprocess.Popen) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f"the moto server exited with status {server.returncode}")
        try:
            urllib.request.urlopen(endpoint, timeout=1).close()
            return
        except urllib.error.HTTPError:
            return  # it answers
        except OSError:
            time.sleep(0.1)
    pytest.fail("the moto server did not answer within 30 s")


@pytest.fixture(scope="module")
def s3(tpch: Path) -> Iterator[str]:
    """The bucket's URL prefix (``s3://warpread``), with the fixtures under
    ``testdata/`` and the TPC-H tables under ``tpch/`` uploaded, and the
    environment pointing at the server."""
    port = _free_port()
    server = subprocess.Popen(
        _moto_command(port),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    endpoint = f"http://127.0.0.1:{port}"
    try:
        _wait_for(endpoint, server)
        _put(endpoint, BUCKET)
        for _, path in CASES:
            _put(endpoint, fixture_url(f"{BUCKET}/testdata", path), path.read_bytes())
        for t in TPCH_TABLES:
            _put(endpoint, f"{BUCKET}/tpch/{t}.parquet", (tpch / f"{t}.parquet").read_bytes())
        with pytest.MonkeyPatch.context() as env:
            env.setenv("AWS_ENDPOINT_URL", endpoint)
            env.setenv("AWS_ALLOW_HTTP", "true")
            env.setenv("AWS_ACCESS_KEY_ID", "testing")
            env.setenv("AWS_SECRET_ACCESS_KEY", "testing")
            env.setenv("AWS_REGION", "us-east-1")
            yield f"s3://{BUCKET}"
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def _url(s3: str, path: Path) -> str:
    return fixture_url(f"{s3}/testdata", path)


@pytest.mark.parametrize("read, path", CASES, ids=lambda c: getattr(c, "name", ""))
def test_fixtures_on_s3_equal_the_local_reads(s3: str, read, path: Path, cpu):
    check_remote_read(read, path, _url(s3, path), cpu)


def test_files_on_s3_have_their_metadata_and_stream_their_batches(s3: str, cpu):
    path = CASES[0][1]  # the first Parquet fixture
    local = warpread.ParquetFile(path, backend=cpu)
    remote = warpread.ParquetFile(_url(s3, path), backend=cpu)
    assert remote.path == _url(s3, path)
    assert remote.schema == local.schema and remote.num_rows == local.num_rows
    assert remote.row_groups == local.row_groups
    got = list(remote.iter_batches(batch_size=100))
    assert sum(b.num_rows for b in got) == local.num_rows
    assert all(b.num_rows <= 100 for b in got)


def test_a_missing_object_is_an_error_naming_it(s3: str, cpu):
    url = f"{s3}/testdata/{os.urandom(4).hex()}-missing.orc"
    with pytest.raises(warpread.errors.WarpreadError) as e:
        warpread.read_orc(url, backend=cpu)
    assert "missing.orc" in str(e.value)


@pytest.fixture(scope="module")
def sessions(s3: str, tpch: Path, cpu):
    ours, theirs = SessionContext(), SessionContext()
    for t in TPCH_TABLES:
        ours.register_table(t, table_provider(f"{s3}/tpch/{t}.parquet", backend=cpu))
        theirs.register_parquet(t, str(tpch / f"{t}.parquet"))
    return ours, theirs


@pytest.mark.parametrize("query", QUERIES)
def test_tpch_on_s3_matches_datafusions_reader_of_the_local_files(query: str, sessions):
    ours, theirs = sessions
    text = (ROOT / "queries" / "tpch" / f"{query}.sql").read_text()
    got = ours.sql(text).to_arrow_table()
    want = theirs.sql(text).to_arrow_table()
    assert got.schema.names == want.schema.names
    assert got.num_rows == want.num_rows
    assert same_rows(got, want), f"{query}: results differ"
