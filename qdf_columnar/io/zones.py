"""Zone maps of a row group, computed at write time for the footer (docs/FORMAT.md §4.3).

A row group longer than one zone gets, per zone of ``zone_rows`` rows (the last one
shorter), the statistics of every column: null count always; for integers, temporal
columns (by storage value) and floats also min / max over the present non-NaN values
and the NaN count, exactly as :func:`.stats.column_stats` gives them for a whole group.
A filter that rules a zone out by these statistics (``prune.Pruner``, under SQL
three-valued logic) never evaluates or decodes that zone's rows of its columns.

String, binary, bool and decimal columns keep only their null counts per zone: their
bounds would cost a pass per zone in Python, and a row group's own statistics already
prune on them. Every figure here is computed for all zones of a column at once with
numpy reductions, so a write pays a few milliseconds per million rows.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pyarrow as pa

from ..columns.buffers import data_values
from ..columns.chunked import one_array
from .layout import ColumnStats

__all__ = ["zone_stats"]


def zone_stats(table: pa.Table, zone_rows: int) -> tuple[Mapping[str, ColumnStats], ...]:
    """Per zone of ``table`` (a row group), column -> statistics; () for at most one zone."""
    n = table.num_rows
    if n <= zone_rows:
        return ()
    starts = np.arange(0, n, zone_rows, dtype=np.int64)
    per_column = {name: _column_zones(table.column(i), starts, zone_rows) for i, name in enumerate(table.column_names)}
    return tuple({name: per_column[name][k] for name in table.column_names} for k in range(len(starts)))


def _column_zones(col: pa.ChunkedArray, starts: np.ndarray, zone_rows: int) -> list[ColumnStats]:
    arr = one_array(col)
    n = len(arr)
    sizes = np.minimum(starts + zone_rows, n) - starts
    valid = _validity(arr)
    nulls = (sizes - np.add.reduceat(valid.astype(np.int64), starts)) if valid is not None else np.zeros_like(sizes)
    values = _numbers(arr)
    if values is None:
        return [ColumnStats(int(k)) for k in nulls.tolist()]
    present = valid if valid is not None else np.ones(n, dtype=bool)
    nans = np.zeros_like(sizes)
    if values.dtype.kind == "f":
        is_nan = np.isnan(values)
        nans = np.add.reduceat((is_nan & present).astype(np.int64), starts)
        present = present & ~is_nan
        lo_fill, hi_fill = np.inf, -np.inf
    else:
        info = np.iinfo(values.dtype)
        lo_fill, hi_fill = info.max, info.min
    lo = np.minimum.reduceat(np.where(present, values, lo_fill), starts)
    hi = np.maximum.reduceat(np.where(present, values, hi_fill), starts)
    has = np.add.reduceat(present.astype(np.int64), starts) > 0
    cast = float if values.dtype.kind == "f" else int
    return [
        ColumnStats(int(k), int(m), cast(a), cast(b)) if h else ColumnStats(int(k), int(m))
        for k, m, a, b, h in zip(nulls.tolist(), nans.tolist(), lo.tolist(), hi.tolist(), has.tolist())
    ]


def _validity(arr: pa.Array) -> np.ndarray | None:
    """Which rows are present (None: all of them)."""
    if not arr.null_count:
        return None
    return np.asarray(arr.is_valid().to_numpy(zero_copy_only=False), dtype=bool)


def _numbers(arr: pa.Array) -> np.ndarray | None:
    """The values of an integer, temporal or float column as numpy, straight from its
    data buffer (null rows hold anything; the validity masks them), or None for a column
    whose zones keep only null counts."""
    t = arr.type
    if pa.types.is_temporal(t) and t.bit_width in (32, 64):
        arr = arr.view(pa.int32() if t.bit_width == 32 else pa.int64())
    elif pa.types.is_float16(t):
        arr = arr.cast(pa.float32())  # exact
    elif not (pa.types.is_integer(t) or pa.types.is_floating(t)):
        return None
    return None if arr.buffers()[1] is None else data_values(arr)
