"""Per-column statistics of one row group, computed at write time for the footer.

null count, NaN count (floats), min and max over the present non-NaN values, typed by
``layout.stat_kind``: Python ints for integers, decimals (scaled) and temporal columns (their
storage value), floats, bools, str and bytes. Long strings keep a 64-byte prefix as the min and
a prefix rounded *up* as the max, so the pair stays a sound bound for pruning.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..columns.decimals import scaled_int64
from .layout import ColumnStats, stat_kind

__all__ = ["column_stats", "STAT_MAX_BYTES"]

#: Strings and bytes longer than this keep only a bounded prefix in the footer.
STAT_MAX_BYTES = 64
_MAX_CODE_POINT = 0x10FFFF


def _storage(chunk: pa.Array) -> pa.Array:
    """Temporal arrays as their integer storage (what the footer records)."""
    t = chunk.type
    if pa.types.is_decimal(t):  # the scaled integers, as stored (columns/decimals.py)
        return pa.array(scaled_int64(chunk), pa.int64(), mask=np.asarray(chunk.is_null()) if chunk.null_count else None)
    if pa.types.is_temporal(t):
        return chunk.view(pa.int32() if t.bit_width == 32 else pa.int64())
    if pa.types.is_float16(t):
        return chunk.cast(pa.float32())  # exact; min_max has no half-float kernel
    if pa.types.is_string_view(t) or pa.types.is_binary_view(t):  # min_max has no view kernels either
        return chunk.cast(pa.string() if pa.types.is_string_view(t) else pa.binary())
    return chunk


def _values(chunk: pa.Array) -> pa.Array:
    """The values a chunk actually holds (a dictionary's used entries, not all of them)."""
    if pa.types.is_dictionary(chunk.type):
        if pa.types.is_floating(chunk.type.value_type):
            return _storage(chunk.dictionary_decode())  # NaN counts are per row
        used = pc.unique(chunk.indices.drop_null())
        return _storage(chunk.dictionary.take(used))
    return _storage(chunk)


def _round_down(s: str | bytes) -> str | bytes:
    if isinstance(s, bytes):
        return s[:STAT_MAX_BYTES]
    return s.encode()[:STAT_MAX_BYTES].decode(errors="ignore")  # drop a split last character


def _round_up(s: str | bytes) -> str | bytes | None:
    """The smallest short value >= every value having the prefix of ``s``; None if none exists."""
    if isinstance(s, bytes):
        b = bytearray(s[:STAT_MAX_BYTES])
        while b and b[-1] == 0xFF:
            b.pop()
        if not b:
            return None
        b[-1] += 1
        return bytes(b)
    chars = list(s.encode()[:STAT_MAX_BYTES].decode(errors="ignore"))
    while chars and ord(chars[-1]) == _MAX_CODE_POINT:
        chars.pop()
    if not chars:
        return None
    nxt = ord(chars[-1]) + 1
    chars[-1] = chr(0xE000 if 0xD800 <= nxt <= 0xDFFF else nxt)  # skip surrogates (not valid UTF-8)
    return "".join(chars)


def _too_long(v: str | bytes) -> bool:
    return len(v.encode() if isinstance(v, str) else v) > STAT_MAX_BYTES


def column_stats(col: pa.ChunkedArray) -> ColumnStats:
    """Statistics of one column of a row group."""
    kind = stat_kind(col.type)
    nulls = col.null_count
    nbytes = col.nbytes
    if kind is None or nulls == len(col):
        return ColumnStats(nulls, arrow_bytes=nbytes)
    nans = 0
    lo: Any = None
    hi: Any = None
    for chunk in col.chunks:
        vals = _values(chunk)
        if kind == "float":
            nans += int(pc.sum(pc.is_nan(vals)).as_py() or 0)
        mm = pc.min_max(vals)
        c_lo, c_hi = mm["min"].as_py(), mm["max"].as_py()
        if c_lo is None or (kind == "float" and math.isnan(c_lo)):
            continue  # all null or all NaN (min_max ignores NaN unless nothing else is left)
        lo = c_lo if lo is None else min(lo, c_lo)
        hi = c_hi if hi is None else max(hi, c_hi)
    if kind == "float" and lo is not None:
        lo, hi = float(lo), float(hi)
    exact = True
    if kind in ("string", "binary") and lo is not None:
        if _too_long(lo):
            lo, exact = _round_down(lo), False
        if _too_long(hi):
            hi, exact = _round_up(hi), False
        if hi is None:
            lo = None  # no finite upper bound: keep neither (pruning needs both)
    return ColumnStats(nulls, nans, lo, hi, exact, nbytes)
