"""Finding NVRTC from the ``nvidia-cuda-nvrtc`` wheel (no GPU needed: the
lookup logic over folder layouts)."""

from __future__ import annotations

import sys

import pytest

from warpread import _cuda

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the wheel layout looked for is Linux's")


@linux
def test_finds_the_wheel_layout(tmp_path):
    empty, wheel = tmp_path / "a", tmp_path / "b"
    (empty / "cu12" / "lib").mkdir(parents=True)
    (empty / "cu12" / "lib" / "libnvrtc.so.12").write_bytes(b"")
    (wheel / "cu13" / "lib").mkdir(parents=True)
    lib = wheel / "cu13" / "lib" / "libnvrtc.so.13"
    lib.write_bytes(b"")
    # The first folder holding the CUDA 13 library wins; CUDA 12's is not
    # what the backend's bindings load.
    assert _cuda.find_nvrtc([str(empty), str(wheel)]) == str(lib)
    assert _cuda.find_nvrtc([str(empty)]) is None
    assert _cuda.find_nvrtc([]) is None


@linux
def test_a_library_that_does_not_load_is_left_alone(tmp_path):
    (tmp_path / "cu13" / "lib").mkdir(parents=True)
    (tmp_path / "cu13" / "lib" / "libnvrtc.so.13").write_bytes(b"not a library")
    assert _cuda.preload_nvrtc([str(tmp_path)]) is None


def test_installed_nvidia_folders_are_listed():
    # Without NVIDIA wheels the list is empty; with them, each folder exists.
    import os

    assert all(os.path.isdir(d) for d in _cuda.nvidia_dirs())
