"""Shared fixtures of warpread's Python tests: the repository's paths, a CPU
backend, the third-party corpus when it is present, and the guard that
fails a run in which no test passed (a suite that collects or runs
nothing must not look green)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Optional

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


_passed = 0


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    global _passed
    if report.when == "call" and report.passed:
        _passed += 1


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if exitstatus == 0 and _passed == 0:
        session.exitstatus = pytest.ExitCode.NO_TESTS_COLLECTED
