#!/usr/bin/env bash
# The README's test command: the tests of every crate (`cargo test`), then
# the Python package built into a virtual environment beside the build
# (Cargo's target folder, `python-env`) and its pytest suite. The extension
# is built in the dev profile by `maturin develop`, reusing the artifacts
# `cargo test` just built; `pip install .` builds users' release wheel.
#
# The environment sees the system's site-packages, so pyarrow, datafusion,
# pytest and maturin already installed there are used as they are;
# missing ones are installed into it from PyPI.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo test

target_dir=$(cargo metadata --format-version 1 --no-deps \
    | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
venv="$target_dir/python-env"
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv --system-site-packages "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    'maturin>=1.9.4,<2' 'pyarrow>=15' 'pytest>=7' 'datafusion>=55,<56'
VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH" \
    maturin develop --quiet --profile dev --manifest-path crates/warpread-python/Cargo.toml

# pytest exits non-zero when it collects nothing, and conftest.py fails a
# run in which no test passed.
"$venv/bin/python" -m pytest -q -ra python/tests "$@"
