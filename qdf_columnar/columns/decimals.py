"""Decimal columns as v1 scaled integers: ``decimal128(p, s)`` value ``v`` is stored as ``v * 10**s``.

Arrow keeps a decimal as a two's-complement integer of 32, 64, 128 or 256 bits, the
value times ``10**scale``. A v1 ``int`` column holds 64-bit integers, so a decimal
column is stored as those integers when every value fits in int64 (18 digits: any
money column) and its type goes in the schema note; a Go reader sees the scaled
integers. A value that needs more than 64 bits raises UnsupportedTypeError naming
the column and row. Filters and footer statistics compare in the same scaled domain
(a literal ``Decimal("1.25")`` on a scale-2 column is the integer 125, exactly).
"""

from __future__ import annotations

import decimal
from fractions import Fraction
from typing import Any

import numpy as np
import pyarrow as pa

from ..errors import CorruptDataError, UnsupportedTypeError
from .chunked import one_array

__all__ = ["is_decimal", "scaled_int64", "from_scaled_int64", "scaled_literal", "fits_int64"]


def is_decimal(t: pa.DataType) -> bool:
    return pa.types.is_decimal(t)


def _words(arr: pa.Array) -> np.ndarray:
    """The array's 64-bit little-endian words, one row per value (2 for decimal128, 4 for
    decimal256, 1 for decimal64; a decimal32's 32-bit integers widened to one word)."""
    buf = arr.buffers()[1]
    if arr.type.byte_width == 4:
        narrow = np.frombuffer(buf, dtype="<i4", count=arr.offset + len(arr))[arr.offset:]
        return narrow.astype(np.int64).reshape(-1, 1)
    width = arr.type.byte_width // 8
    words = np.frombuffer(buf, dtype="<i8", count=(arr.offset + len(arr)) * width)
    return words.reshape(-1, width)[arr.offset:]


def fits_int64(arr: pa.Array) -> np.ndarray:
    """Per row: does the (scaled) value fit in int64? Nulls count as fitting."""
    w = _words(arr)
    ok = np.all(w[:, 1:] == (w[:, :1] >> 63), axis=1)
    if arr.null_count:
        ok |= ~np.asarray(arr.is_valid())
    return ok


def scaled_int64(arr: pa.Array, column: str | None = None) -> np.ndarray:
    """The scaled integers of a decimal array (0 at nulls), or UnsupportedTypeError naming a row too large."""
    arr = one_array(arr)
    ok = fits_int64(arr)
    if not ok.all():
        row = int(np.argmin(ok))
        raise UnsupportedTypeError(
            f"row {row} holds {arr[row].as_py()}, which as a {arr.type} needs more than 64 bits; qdf v1 stores "
            "decimals as scaled int64 (up to 18 digits)", column=column)
    vals = np.ascontiguousarray(_words(arr)[:, 0])
    if arr.null_count:
        vals = np.where(np.asarray(arr.is_valid()), vals, 0)
    return vals


def from_scaled_int64(vals: np.ndarray, typ: pa.DataType, validity: pa.Buffer | None = None,
                      mask: np.ndarray | None = None) -> pa.Array:
    """A decimal array of type ``typ`` from its scaled int64 values (sign-extended to 128 /
    256 bits; a decimal32 takes them as 32-bit integers, CorruptDataError if one does not fit)."""
    vals = np.ascontiguousarray(vals, dtype=np.int64)
    if validity is None and mask is not None and mask.any():
        validity = pa.array(~mask).buffers()[1]
    if typ.byte_width == 4:
        if len(vals) and (int(vals.min()) < -(1 << 31) or int(vals.max()) >= 1 << 31):
            raise CorruptDataError(f"a scaled value of a {typ} column does not fit in 32 bits")
        return pa.Array.from_buffers(typ, len(vals), [validity, pa.py_buffer(vals.astype("<i4"))])
    width = typ.byte_width // 8
    words = np.empty((len(vals), width), dtype="<i8")
    words[:, 0] = vals
    words[:, 1:] = (vals >> 63)[:, None]
    return pa.Array.from_buffers(typ, len(vals), [validity, pa.py_buffer(words)])


def scaled_literal(value: Any, scale: int) -> Fraction | float:
    """An int / Decimal / float literal in a scale-``scale`` column's integer domain, exactly."""
    if isinstance(value, decimal.Decimal):
        if not value.is_finite():
            return float(value)
        return Fraction(value) * 10**scale
    if isinstance(value, (int, np.integer)):
        return Fraction(int(value)) * 10**scale
    f = float(value)
    return f if not np.isfinite(f) else Fraction(f) * 10**scale
