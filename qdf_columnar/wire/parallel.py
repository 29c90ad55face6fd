"""Materialise scanned columns on a small thread pool.

Column bodies are scanned in one sequential pass (the Dense state demands wire
order), but turning each scanned column into its Arrow array is independent work
done by Numba kernels that release the GIL, so large batches can use a few threads.
On the 2-vCPU benchmark host two threads measured 49 -> 34 ms for a 1M-row,
12-column decode when the host was quiet, but swung to 100+ ms whenever a neighbour
took a vCPU (single-threaded stayed at 45 ms). So the automatic choice uses threads
only on machines with at least 4 CPUs; ``threads=N`` asks for N anywhere.
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from typing import Any, NamedTuple

import numpy as np
import pyarrow as pa

from ..errors import CorruptDataError, InvalidOptionError, QueryError

#: Below this many output cells a pool costs more than it saves.
MIN_PARALLEL_CELLS = 1 << 16
MAX_AUTO_THREADS = 4
MIN_AUTO_CPUS = 4

_pool: ThreadPoolExecutor | None = None
_pool_size = 0
_lock = threading.Lock()


def _executor(n: int) -> ThreadPoolExecutor:
    """The decoder's pool of at least ``n`` threads, started once and kept (grown when
    asked for more)."""
    global _pool, _pool_size
    with _lock:
        if _pool is None or _pool_size < n:
            if _pool is not None:
                _pool.shutdown(wait=False)
            _pool = ThreadPoolExecutor(max_workers=n, thread_name_prefix="qdf-decode")
            _pool_size = n
        return _pool


def map_on_pool(n: int, fn: Callable[[Any], Any], items: Sequence[Any]) -> list[Any]:
    """``[fn(x) for x in items]`` on the long-lived pool of :func:`_executor`, in order.
    When one call raises, the others not started are cancelled and the running ones
    waited for before the error propagates: no call outlives this one (they may read a
    memory-mapped file or a buffer the caller changes once it has the error)."""
    pool = _executor(n)
    futures = [pool.submit(fn, x) for x in items]
    try:
        return [f.result() for f in futures]
    except BaseException:
        for f in futures:
            f.cancel()
        wait(futures)
        raise


@functools.lru_cache(maxsize=1)
def available_cpus() -> int:
    """``os.cpu_count()``, read once."""
    # os.cpu_count() reads /sys on every call (~15 us): a file read pays it once per chunk.
    return os.cpu_count() or 1


def thread_count(threads: bool | int | None, n_cells: int, n_columns: int) -> int:
    """How many threads to use for ``threads=`` (None = automatic)."""
    if threads is None:
        cpus = available_cpus()
        if n_cells < MIN_PARALLEL_CELLS or cpus < MIN_AUTO_CPUS:
            return 1
        return max(1, min(MAX_AUTO_THREADS, cpus, n_columns))
    if isinstance(threads, bool):
        return thread_count(None, n_cells, n_columns) if threads else 1
    if not isinstance(threads, int) or threads < 1:
        raise InvalidOptionError(f"threads must be None, a bool or a positive int, not {threads!r}")
    return min(threads, max(1, n_columns))


class RowSelection(NamedTuple):
    """Rows asked for from outside (``api.decode_rows``): ascending row numbers of a batch
    that must hold exactly ``n_rows`` rows."""

    rows: np.ndarray
    n_rows: int


def check_rows(sel: RowSelection, n: int) -> np.ndarray:
    """The rows of ``sel`` for a batch of ``n`` rows: CorruptDataError when the batch has
    another row count, QueryError when the rows are not ascending numbers below it."""
    if n != sel.n_rows:
        raise CorruptDataError(f"the batch holds {n} rows, expected {sel.n_rows}")
    rows = np.asarray(sel.rows, dtype=np.int64)
    if rows.ndim != 1 or (rows.size and (rows[0] < 0 or rows[-1] >= n or bool(np.any(np.diff(rows) <= 0)))):
        raise QueryError(f"rows must be ascending row numbers below {n}")
    return rows


def materialize(
    makers: Sequence[Callable[[np.ndarray | None], pa.Array]],
    rows: np.ndarray | None,
    n_rows: int,
    threads: bool | int | None,
    *,
    last_use: bool = False,
) -> list[pa.Array]:
    """Call every maker with ``rows``, on up to ``threads`` threads, preserving order.

    ``last_use``: no maker is called again, so each one's owner (a scanned column,
    ``Deferred``) releases what it holds as soon as its array is built. A full decode's
    peak memory is then the arrays built so far plus one column's scan, not every
    column's scan at once."""
    k = thread_count(threads, n_rows * len(makers), len(makers))

    def build(make: Callable[[np.ndarray | None], pa.Array]) -> pa.Array:
        arr = make(rows)
        release = getattr(getattr(make, "__self__", make), "release", None) if last_use else None
        if release is not None:
            release()
        return arr

    if k <= 1:
        return [build(make) for make in makers]
    return map_on_pool(k, build, makers)
