"""Ahead-of-time compilation of every kernel (``qdf warmup``).

Each kernel module registers a function that calls its kernels once on tiny,
canonically-typed inputs (the same dtypes the glue passes), so the on-disk Numba
cache holds every specialisation the library uses and no later call compiles.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable

#: Kernel modules; each defines ``_warmup()`` exercising its kernels with canonical dtypes.
KERNEL_MODULES: list[str] = [
    "strings",
    "alpha",
    "columns",
    "bitpack",
    "intcodecs",
    "intdecode",
    "blocks",
    "block_encode",
    "span_dict",
    "string_dict",
    "tans",
    "fsst",
    "fsst_train",
    "gorilla",
    "chimp",
    "alp",
    "dense_strings",
    "transcode_dec",
    "transcode_enc",
]


def warmup(progress: Callable[[str, float], None] | None = None) -> float:
    """Compile (or load from cache) every kernel; return the seconds it took."""
    t0 = time.perf_counter()
    for name in KERNEL_MODULES:
        t = time.perf_counter()
        mod = importlib.import_module(f"qdf_kernels.{name}")
        mod._warmup()
        if progress is not None:
            progress(name, time.perf_counter() - t)
    return time.perf_counter() - t0
