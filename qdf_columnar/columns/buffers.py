"""An Arrow array's buffers as numpy, without a copy: its fixed-width values and its validity.

For code that reads Arrow arrays in place (filters, zone maps, dictionary codes):
pyarrow's own conversions build a new array (a boolean array unpacked by
``to_numpy`` costs 10x a numpy unpack of its bitmap).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa


def data_values(arr: pa.Array) -> np.ndarray:
    """The values of a fixed-width integer or float array as numpy, straight from its data
    buffer (no copy; the slots of null rows hold anything, the validity says which)."""
    dtype = np.dtype(arr.type.to_pandas_dtype())
    return np.frombuffer(arr.buffers()[1], dtype=dtype, count=len(arr), offset=arr.offset * dtype.itemsize)


def checked_dictionary(codes: np.ndarray, dictionary: pa.Array) -> pa.DictionaryArray:
    """A DictionaryArray of unsigned ``codes`` the decoder has checked to be below
    ``len(dictionary)``: Arrow's own check would be a second pass over every row
    (~0.25 ms on 400k codes)."""
    return pa.DictionaryArray.from_arrays(pa.array(codes.astype(np.int32)), dictionary, safe=False)


def validity_mask(arr: pa.Array) -> np.ndarray | None:
    """Which rows of ``arr`` are not null, unpacked from its validity bitmap (None: every
    row is valid; an array without a bitmap but with nulls, the null type, is all null)."""
    if arr.null_count == 0:
        return None
    bitmap = arr.buffers()[0]
    if bitmap is None:
        return np.zeros(len(arr), dtype=bool)
    bits = np.unpackbits(np.frombuffer(bitmap, dtype=np.uint8), count=arr.offset + len(arr), bitorder="little")
    return bits[arr.offset:].view(bool)


__all__ = ["checked_dictionary", "data_values", "validity_mask"]
