"""Where decoded columns' buffers come from: numpy's allocator (the C library's malloc).

Every output buffer of a decode is allocated here, so the policy is one line.
Decoded columns become Arrow arrays as zero-copy views of these numpy arrays.

An earlier version took buffers of 64 KiB and more from pyarrow's pool (mimalloc),
which keeps freed pages mapped. Measured on bench-real's tables, one process,
interleaved (peak RSS growth of a full decode to pandas, from a trimmed heap):
the pool's retained pages raised the peak by 20-55% on string and float tables
(seattlepets 16.7 -> 10.9 MB with malloc, weather 13.8 -> 8.5, diamonds 15.9 -> 12.7,
flights 90.6 -> 79.4), while the time of repeated decodes was the same within noise
(0.91-1.03x on six tables): large malloc blocks are mmapped and given back on free,
and glibc raises its mmap threshold after the first frees, so a second decode
reuses the heap instead of faulting in fresh pages.

A float column's decoder writes NaN under its nulls as it spreads the present values
(Arrow leaves those slots undefined; pandas wants NaN there) and says so with
:func:`mark_nan_under_nulls`, so a DataFrame built on the buffer needs no pass of its
own to write them (:func:`holds_nan_under_nulls`).
"""

from __future__ import annotations

import weakref

import numpy as np

#: Decoded float arrays holding NaN in every null row's slot, by data address. Weak:
#: an entry goes with its array, so a later array at the same address is not taken
#: for it.
_NAN_UNDER_NULLS: weakref.WeakValueDictionary[int, np.ndarray] = weakref.WeakValueDictionary()


def empty(n: int, dtype: np.dtype | type) -> np.ndarray:
    """An uninitialised, writable 1-D array of ``n`` elements for a decoded column."""
    return np.empty(n, dtype=np.dtype(dtype))


def mark_nan_under_nulls(a: np.ndarray) -> None:
    """Record that ``a`` (from :func:`empty`) holds NaN in every null row's slot."""
    _NAN_UNDER_NULLS[a.ctypes.data] = a


def holds_nan_under_nulls(address: int, nbytes: int) -> bool:
    """Whether the ``nbytes`` from ``address`` lie in an array marked by
    :func:`mark_nan_under_nulls` that starts there (an Arrow values buffer made from it)."""
    a = _NAN_UNDER_NULLS.get(address)
    return a is not None and a.nbytes >= nbytes
