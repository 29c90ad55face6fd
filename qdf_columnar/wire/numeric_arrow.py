"""Numeric columns as Arrow arrays: nullable scatter, row selection, logical types.

The v1 presence mask of a nullable column is already an Arrow validity bitmap
(LSB-first, 1 = present), so full-column nulls cost no conversion; present values are
scattered by a kernel into a buffer from :mod:`..columns.alloc`. Logical types from the schema
note (int32, timestamp units, dates, durations, decimals, float16, dictionaries) are restored
from their storage without copying where Arrow allows a view.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pyarrow as pa
from qdf_kernels import columns as ck

from ..columns import alloc
from ..columns.decimals import from_scaled_int64
from ..errors import CorruptDataError


def to_arrow(
    vals: np.ndarray,
    valid: np.ndarray | None,
    rows: np.ndarray | None,
    typ: pa.DataType,
    bitmap: np.ndarray | None = None,
) -> pa.Array:
    validity = None
    if valid is not None and rows is not None:  # only the selected rows' values move
        sel_valid, present = present_positions(bitmap, rows)
        if len(present) and present[-1] >= len(vals):
            raise CorruptDataError("presence mask and value count disagree")
        return present_to_arrow(vals[present], sel_valid, typ)
    if valid is not None:
        vals, bits = spread_present(vals, bitmap, len(valid))
        if not pa.types.is_boolean(typ):
            validity = bits
    elif rows is not None:
        vals = vals[rows]
    return _finish(vals, valid, validity, typ)


_UNSIGNED_BY_BITS = {8: np.dtype(np.uint8), 16: np.dtype(np.uint16), 32: np.dtype(np.uint32), 64: np.dtype(np.uint64)}


@functools.lru_cache(maxsize=256)  # a few types recur in every column
def bits_dtype(t: pa.DataType) -> np.dtype | None:
    """The unsigned numpy dtype that holds the values of an integer, float or temporal
    Arrow type bit for bit (one fixed width, not bool or decimal), or None."""
    if pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_temporal(t):
        return _UNSIGNED_BY_BITS.get(t.bit_width)
    return None


def read_only(a: np.ndarray) -> np.ndarray:
    """A read-only view of ``a`` for a kernel: Arrow buffers are read-only or not
    depending on who made them, and Numba compiles a kernel once per flag; the
    read-only build is the one warmed up."""
    view = a.view()
    view.flags.writeable = False
    return view


def spread_present(vals: np.ndarray, bitmap: np.ndarray, n: int,
                   float_bits: np.dtype | None = None) -> tuple[np.ndarray, pa.Buffer]:
    """The present values ``vals`` spread over ``n`` rows by the v1 presence ``bitmap``,
    and the validity buffer (:func:`validity_buffer`). Null rows hold
    :func:`null_fill` (NaN for floats, marked so a DataFrame takes the buffer as it is)."""
    full = alloc.empty(n, vals.dtype)
    src = np.ascontiguousarray(vals)
    fill, nan = null_fill(vals.dtype, float_bits)
    if ck.scatter_present_into(src, np.ascontiguousarray(bitmap), full, fill, ck.PRESENT_RANKS) != len(src):
        raise CorruptDataError("presence mask and value count disagree")
    if nan:
        alloc.mark_nan_under_nulls(full)
    return full, validity_buffer(bitmap)


def null_fill(dtype: np.dtype, float_bits: np.dtype | None = None) -> tuple[Any, bool]:
    """What a nullable column's spread writes under its nulls, as a ``dtype`` scalar, and
    whether that is NaN: NaN when the values are floats (a float ``dtype``, or
    ``float_bits``: the float dtype whose bits ``dtype`` holds), which is what pandas
    wants there (:func:`..columns.alloc.mark_nan_under_nulls`), else 0."""
    as_float = dtype if dtype.kind == "f" else float_bits
    if as_float is None:
        return dtype.type(0), False
    return np.array(np.nan, dtype=as_float).view(dtype)[()], True


def validity_buffer(bitmap: np.ndarray) -> pa.Buffer:
    """The Arrow validity buffer of a v1 presence ``bitmap`` (bit for bit the same
    layout), copied because the input may be a bytearray its owner changes later."""
    return pa.py_buffer(np.array(bitmap, dtype=np.uint8))


def present_positions(bitmap: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For ascending ``rows`` of a nullable column with the v1 presence ``bitmap``: which
    of them are present, and the positions of those among the column's present values
    (one pass over the bitmap, which says both)."""
    sel_valid = np.empty(len(rows), dtype=bool)
    ranks = np.empty(len(rows), dtype=np.int64)
    bitmap = np.ascontiguousarray(bitmap)
    before = np.empty((len(bitmap) + 7) // 8, dtype=np.int64)  # the kernel's per-word prefix counts
    k = ck.present_ranks(bitmap, np.ascontiguousarray(rows, dtype=np.int64), sel_valid, ranks, before)
    return sel_valid, ranks[:k]


def present_to_arrow(present: np.ndarray, sel_valid: np.ndarray, typ: pa.DataType) -> pa.Array:
    """Selected rows of a nullable column, ``present`` holding the values of the rows
    where ``sel_valid`` (see :func:`present_positions`)."""
    vals = np.zeros(len(sel_valid), dtype=present.dtype)
    vals[sel_valid] = present
    validity = None
    storage = _storage_type(typ)
    if not pa.types.is_boolean(storage) and not pa.types.is_decimal(storage):  # those two take a mask
        validity = pa.py_buffer(np.packbits(sel_valid, bitorder="little"))
    return _finish(vals, sel_valid, validity, typ)


#: Arrow types whose values are the numpy dtype's bytes as they are (the common case,
#: answered before the general logical-type restoration below).
_PLAIN = {pa.int64(): np.dtype(np.int64), pa.uint64(): np.dtype(np.uint64), pa.float64(): np.dtype(np.float64),
          pa.int32(): np.dtype(np.int32), pa.float32(): np.dtype(np.float32)}


def _finish(vals: np.ndarray, valid: np.ndarray | None, validity: pa.Buffer | None, typ: pa.DataType) -> pa.Array:
    """Values (all rows, nulls' slots ignored) as an array of the column's logical type."""
    plain = _PLAIN.get(typ)  # (never compare None with a dtype: np.dtype(None) is float64)
    if plain is not None and vals.dtype == plain and (valid is None or validity is not None) \
            and vals.flags.c_contiguous:
        return pa.Array.from_buffers(typ, len(vals), [validity, pa.py_buffer(vals)])
    if pa.types.is_decimal(typ):
        return from_scaled_int64(vals, typ, validity, mask=None if valid is None else ~valid)
    storage = _storage_type(typ)
    if vals.dtype != storage.to_pandas_dtype() and not pa.types.is_boolean(storage):
        vals = vals.astype(storage.to_pandas_dtype())
    mask = None if valid is None else ~valid
    if pa.types.is_boolean(storage):
        arr = pa.array(vals, type=pa.bool_(), mask=mask)
    elif (mask is None or validity is not None) and vals.flags.c_contiguous:
        arr = pa.Array.from_buffers(storage, len(vals), [validity, pa.py_buffer(vals)])
    else:
        arr = pa.array(vals, type=storage, mask=mask)
    if storage != typ:
        if pa.types.is_float16(typ):
            arr = arr.cast(typ)
        elif pa.types.is_dictionary(typ):
            arr = _restore(arr, typ.value_type).dictionary_encode()
            arr = arr.cast(typ) if arr.type != typ else arr
        else:
            arr = arr.view(typ)
    return arr


def _storage_type(typ: pa.DataType) -> pa.DataType:
    if pa.types.is_dictionary(typ):
        return _storage_type(typ.value_type)
    if pa.types.is_timestamp(typ) or pa.types.is_duration(typ) or pa.types.is_date64(typ) or pa.types.is_time64(typ):
        return pa.int64()
    if pa.types.is_date32(typ) or pa.types.is_time32(typ):
        return pa.int32()
    if pa.types.is_float16(typ):
        return pa.float32()
    return typ


def _restore(arr: pa.Array, typ: pa.DataType) -> pa.Array:
    if arr.type == typ:
        return arr
    return arr.cast(typ) if pa.types.is_float16(typ) else arr.view(typ)


#: The string and binary types, and the numpy dtype of their offsets.
OFFSET_TYPES = {
    pa.string(): np.int32, pa.binary(): np.int32, pa.large_string(): np.int64, pa.large_binary(): np.int64,
}


def scatter(dense_arr: pa.Array, valid: np.ndarray) -> pa.Array:
    """Spread present values over rows where ``valid`` is True (nulls elsewhere).

    Strings and bytes keep their value bytes: only the offsets are spread (a null row
    is an empty slot), so a nullable string column costs one pass over its rows
    instead of a second copy of every string.
    """
    n = len(valid)
    if n == 0:
        return pa.array([], type=dense_arr.type)
    if len(dense_arr) == 0:
        return pa.nulls(n, type=dense_arr.type)
    off_dtype = OFFSET_TYPES.get(dense_arr.type)
    if off_dtype is not None and dense_arr.null_count == 0:
        bufs = dense_arr.buffers()
        start = dense_arr.offset
        dense_off = np.frombuffer(bufs[1], dtype=off_dtype)[start: start + len(dense_arr) + 1]
        offsets = alloc.empty(n + 1, off_dtype)
        if ck.spread_offsets_into(dense_off, np.ascontiguousarray(valid, dtype=np.bool_), offsets) != len(dense_arr):
            raise CorruptDataError("presence mask and value count disagree")
        validity = pa.py_buffer(np.packbits(valid, bitorder="little"))
        return pa.Array.from_buffers(dense_arr.type, n, [validity, pa.py_buffer(offsets), bufs[2]],
                                     null_count=n - len(dense_arr))
    idx = np.cumsum(valid) - 1
    idx = np.where(valid, idx, 0)
    return dense_arr.take(pa.array(idx, mask=~valid))


def spread_strings(dense_arr: pa.Array, bitmap: np.ndarray, n: int) -> pa.Array:
    """:func:`scatter` of a string / binary column's present values ``dense_arr`` (no
    nulls) over ``n`` rows by the v1 presence ``bitmap`` itself: the offsets are spread
    in one pass over the bitmap's bytes (no unpacked mask), and the validity buffer is
    the bitmap."""
    if len(dense_arr) == 0:
        if np.count_nonzero(bitmap):
            raise CorruptDataError("presence mask and value count disagree")
        return pa.nulls(n, type=dense_arr.type)
    off_dtype = OFFSET_TYPES[dense_arr.type]
    bufs = dense_arr.buffers()
    start = dense_arr.offset
    dense_off = np.frombuffer(bufs[1], dtype=off_dtype)[start: start + len(dense_arr) + 1]
    offsets = alloc.empty(n + 1, off_dtype)
    if ck.spread_offsets_present_into(dense_off, np.ascontiguousarray(bitmap), offsets) != len(dense_arr):
        raise CorruptDataError("presence mask and value count disagree")
    return pa.Array.from_buffers(dense_arr.type, n, [validity_buffer(bitmap), pa.py_buffer(offsets), bufs[2]],
                                 null_count=n - len(dense_arr))
