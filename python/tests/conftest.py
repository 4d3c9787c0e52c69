"""Shared fixtures of warpread's Python tests: the repository's paths, a CPU
backend, the third-party corpus when it is present, and the guard that
fails a run in which no test passed (a suite that collects or runs
nothing must not look green)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Callable, List, Optional, Tuple

import pytest

import warpread

ROOT = Path(__file__).resolve().parents[2]
TESTDATA = ROOT / "testdata"


def corpus_dir() -> Optional[Path]:
    """``../shared/corpora`` beside the repository or beside a folder of
    worktrees, when it has its index."""
    for d in (ROOT / "../shared/corpora", ROOT / "../../shared/corpora"):
        if (d / "INDEX.tsv").is_file():
            return d.resolve()
    return None


def target_dir() -> Path:
    """Cargo's target folder (``CARGO_TARGET_DIR`` or the workspace's)."""
    out = subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--no-deps"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return Path(json.loads(out)["target_directory"])


@pytest.fixture(scope="session")
def cpu() -> warpread.Backend:
    return warpread.Backend("cpu")


def remote_cases(n: int) -> List[Tuple[Callable, Path]]:
    """The reader and path of the first ``n`` Parquet and first ``n`` ORC
    fixtures: what the tests of remote stores read there and locally."""
    parquet = sorted((TESTDATA / "parquet").glob("*.parquet"))[:n]
    orc = sorted((TESTDATA / "orc").glob("*.orc"))[:n]
    return [(warpread.read_parquet, p) for p in parquet] + [(warpread.read_orc, p) for p in orc]


def fixture_url(root: str, path: Path) -> str:
    """The fixture ``path`` (under ``testdata/``) as a URL under ``root``."""
    return f"{root}/{path.relative_to(TESTDATA).as_posix()}"


TPCH_TABLES = ["lineitem", "orders", "customer", "part", "partsupp", "supplier", "nation", "region"]


@pytest.fixture(scope="session")
def tpch(tmp_path_factory) -> Path:
    """TPC-H at scale 0.01 made once per run by `warpread gen tpch`: GZIP
    Parquet, whose pages inflate in warpread's decoder, with several row
    groups per large table (lineitem has 60,000 rows) so that scans split
    and prune them."""
    out = tmp_path_factory.mktemp("tpch")
    exe = target_dir() / "debug" / "warpread"
    if not exe.is_file():
        pytest.fail(f"{exe} is missing: `cargo test` (scripts/test.sh runs it first) builds it")
    args = ["gen", "tpch", "--scale", "0.01", "--format", "parquet", "--compression", "gzip"]
    args += ["--rows-per-group", "16384", str(out)]
    subprocess.run([str(exe)] + args, cwd=ROOT, check=True)
    for t in TPCH_TABLES:
        assert (out / f"{t}.parquet").is_file(), t
    return out


_passed = 0


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    global _passed
    if report.when == "call" and report.passed:
        _passed += 1


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if exitstatus == 0 and _passed == 0:
        session.exitstatus = pytest.ExitCode.NO_TESTS_COLLECTED
