"""The third-party corpus (``../shared/corpora``, when present): every
Parquet and ORC file pyarrow reads must read the same through warpread, or
fail with a warpread error (a feature warpread refuses); files pyarrow
itself rejects are skipped as references but must not crash warpread
either. Files are read in child processes, so that a crash is reported as
that file's failure instead of ending the run."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path
from typing import List, Tuple

import pytest

from conftest import ROOT, corpus_dir

CORPUS = corpus_dir()

# Reads each `path\tformat` line of stdin with pyarrow and warpread and
# prints one `path\tverdict` line per file as soon as it is known.
CHILD = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {tests!r})
    import pyarrow.orc as po, pyarrow.parquet as pq
    import warpread
    from compare import difference
    cpu = warpread.Backend("cpu")
    for line in sys.stdin:
        path, fmt = line.rstrip("\\n").split("\\t")
        try:
            want = pq.read_table(path) if fmt == "parquet" else po.ORCFile(path).read()
        except Exception:
            want = None
        read = warpread.read_parquet if fmt == "parquet" else warpread.read_orc
        try:
            got = read(path, backend=cpu)
        except warpread.WarpreadError as e:
            verdict = ("REFUSED " if want is not None else "BOTH_REJECT ") + type(e).__name__
        except Exception as e:
            verdict = "FOREIGN_ERROR " + type(e).__name__ + ": " + str(e)[:300]
        else:
            if want is None:
                verdict = "PYARROW_REJECTS"
            else:
                try:
                    d = difference(got, want)
                    verdict = "MATCH" if d is None else "DIFFER " + d[:300]
                except Exception as e:
                    verdict = "COMPARE_ERROR " + type(e).__name__ + ": " + str(e)[:300]
        print(path + "\\t" + verdict.replace("\\n", " "), flush=True)
    """
).format(tests=str(Path(__file__).parent))

OK = {"MATCH", "REFUSED", "BOTH_REJECT", "PYARROW_REJECTS"}

# Files where pyarrow is not the reference: warpread reads them as the
# parquet crate's Arrow reader does (crates/warpread/tests/it compares the
# two on the whole corpus), and the two Arrow readers differ.
ALLOWED = {
    "duckdb/data/parquet-testing/empty-group/empty_group_test.parquet": (
        "a group with no fields: pyarrow gives an empty struct column, the "
        "parquet crate and warpread leave the column out"
    ),
    "parquet-testing/data/int96_from_spark.parquet": (
        "INT96 values outside timestamp[ns]'s range: pyarrow and the parquet "
        "crate overflow differently"
    ),
}


def corpus_files() -> List[Tuple[str, str]]:
    out = []
    assert CORPUS is not None
    for line in (CORPUS / "INDEX.tsv").read_text().splitlines()[1:]:
        path, _, tags = line.partition("\t")
        tag_set = set(tags.split(","))
        for fmt in ("parquet", "orc"):
            if f"fmt:{fmt}" in tag_set:
                out.append((str(CORPUS / path), fmt))
    return out


def run_children(files: List[Tuple[str, str]]) -> dict:
    """Verdicts by path; a child that dies blames the file it was reading
    and a new child goes on with the rest."""
    verdicts: dict = {}
    todo = list(files)
    while todo:
        feed = "".join(f"{p}\t{f}\n" for p, f in todo)
        r = subprocess.run(
            [sys.executable, "-c", CHILD], input=feed, capture_output=True, text=True, cwd=ROOT, timeout=1800
        )
        for line in r.stdout.splitlines():
            path, _, verdict = line.partition("\t")
            verdicts[path] = verdict
        todo = [(p, f) for p, f in todo if p not in verdicts]
        if todo:
            if r.returncode == 0:
                raise AssertionError(f"child ended without verdicts for {len(todo)} files:\n{r.stderr[-2000:]}")
            path = todo.pop(0)[0]
            verdicts[path] = f"CRASH exit {r.returncode}: {r.stderr[-500:]}"
    return verdicts


@pytest.mark.skipif(CORPUS is None, reason="no ../shared/corpora")
def test_corpus_reads_as_pyarrow_or_errors_cleanly():
    files = corpus_files()
    assert len(files) > 100
    verdicts = run_children(files)
    counts = Counter(v.split(" ")[0] for v in verdicts.values())
    print("corpus verdicts:", dict(counts))
    refused = sorted(p for p, v in verdicts.items() if v.startswith("REFUSED"))
    print("refused by warpread, read by pyarrow:", len(refused))
    for p in refused:
        print("  ", Path(p).relative_to(CORPUS), verdicts[p])
    allowed = {p: v for p, v in verdicts.items() if str(Path(p).relative_to(CORPUS)) in ALLOWED}
    for p, v in sorted(allowed.items()):
        print("   allowed:", Path(p).relative_to(CORPUS), v, "--", ALLOWED[str(Path(p).relative_to(CORPUS))])
    bad = {p: v for p, v in verdicts.items() if v.split(" ")[0] not in OK and p not in allowed}
    assert not bad, "\n".join(f"{Path(p).relative_to(CORPUS)}: {v}" for p, v in sorted(bad.items()))
    assert counts["MATCH"] > len(files) // 2
