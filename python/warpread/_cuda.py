"""Finding NVRTC from NVIDIA's ``nvidia-cuda-nvrtc`` wheel (the
``warpread[cuda]`` extra), so that the CUDA backend runs on a machine with
a driver but no CUDA toolkit, without environment variables.

The backend loads NVRTC by its library name; loading the wheel's copy
first, by its path, makes that name resolve to it (the dynamic loader
matches a loaded library's soname).
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import sys
from typing import Iterable, List, Optional

#: The NVRTC the backend's CUDA 13 bindings load, as the wheel lays it out
#: under its ``nvidia`` namespace package.
WHEEL_LIBRARY = os.path.join("cu13", "lib", "libnvrtc.so.13")


def nvidia_dirs() -> List[str]:
    """The folders of the installed ``nvidia`` namespace package (empty
    when no NVIDIA wheel is installed)."""
    try:
        spec = importlib.util.find_spec("nvidia")
    except (ImportError, ValueError):
        return []
    if spec is None or spec.submodule_search_locations is None:
        return []
    return list(spec.submodule_search_locations)


def find_nvrtc(nvidia_folders: Optional[Iterable[str]] = None) -> Optional[str]:
    """The path of the wheel's NVRTC under the first of ``nvidia_folders``
    (default: the installed ``nvidia`` package's folders) that has it, or
    ``None``. Linux only: elsewhere the wheel's layout differs and ``None``
    is returned."""
    if not sys.platform.startswith("linux"):
        return None
    folders = nvidia_dirs() if nvidia_folders is None else nvidia_folders
    for folder in folders:
        path = os.path.join(folder, WHEEL_LIBRARY)
        if os.path.isfile(path):
            return path
    return None


def preload_nvrtc(nvidia_folders: Optional[Iterable[str]] = None) -> Optional[str]:
    """Loads the wheel's NVRTC when it is installed, and returns its path.
    A library that fails to load is left to the backend, which then reports
    NVRTC missing as it would without the wheel."""
    path = find_nvrtc(nvidia_folders)
    if path is None:
        return None
    try:
        ctypes.CDLL(path, mode=getattr(ctypes, "RTLD_GLOBAL", 0))
    except OSError:
        return None
    return path
