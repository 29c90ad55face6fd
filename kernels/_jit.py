"""The single decorator every kernel uses.

``kernel = njit(cache=..., nogil=True)`` with lazy compilation (no signatures).
Caching is on unless ``QDF_NUMBA_CACHE=0``. When Numba cannot find a writable cache
location (read-only install, no writable $HOME) decorating with ``cache=True``
raises ``RuntimeError``; we then fall back to ``cache=False`` and warn once, so the
package still imports (numba-kernels.md §5, case A). ``boundscheck`` is left unset
so ``NUMBA_BOUNDSCHECK=1`` can turn it on globally for the hardening tests.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

import numba

F = TypeVar("F", bound=Callable[..., Any])

_CACHE = os.environ.get("QDF_NUMBA_CACHE", "1") != "0"
_warned = False

#: Every dispatcher created through :func:`kernel`, for warmup and the no-compile-at-import test.
REGISTRY: list[Any] = []


def kernel(func: F) -> F:
    """Compile ``func`` lazily with Numba (nopython, nogil, cached when possible)."""
    global _warned
    try:
        disp = numba.njit(cache=_CACHE, nogil=True)(func)
    except RuntimeError as exc:  # "cannot cache function ...: no locator available"
        if not _warned:
            _warned = True
            warnings.warn(
                f"Numba cache not writable ({exc}); kernels will be recompiled in every process. "
                "Set NUMBA_CACHE_DIR to a writable directory to avoid this.",
                stacklevel=2,
            )
        disp = numba.njit(cache=False, nogil=True)(func)
    REGISTRY.append(disp)
    return disp  # type: ignore[return-value]
