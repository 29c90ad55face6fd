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
"""

from __future__ import annotations

import numpy as np


def empty(n: int, dtype: np.dtype | type) -> np.ndarray:
    """An uninitialised, writable 1-D array of ``n`` elements for a decoded column."""
    return np.empty(n, dtype=np.dtype(dtype))
