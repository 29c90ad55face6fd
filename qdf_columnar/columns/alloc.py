"""Output buffers from Arrow's memory pool.

Decoded columns end up as Arrow buffers, so they are allocated from pyarrow's pool
(mimalloc / jemalloc) rather than numpy's malloc: the pool keeps freed pages mapped,
so decoding a batch does not pay page faults and kernel page zeroing for every
fresh megabyte (measured: ~25 ms of a 60 ms 1M-row decode), and the numpy array is
a writable, zero-copy view of the very buffer Arrow later wraps.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

_SMALL = 1 << 16  # below this, numpy's allocator is as fast and simpler


def empty(n: int, dtype: np.dtype | type) -> np.ndarray:
    """An uninitialised 1-D array of ``n`` elements backed by an Arrow buffer when large."""
    dt = np.dtype(dtype)
    nbytes = n * dt.itemsize
    if nbytes < _SMALL:
        return np.empty(n, dtype=dt)
    return np.frombuffer(pa.allocate_buffer(nbytes), dtype=dt, count=n)
