"""Arrow arrays row-major v1 values cannot hold, rewritten to values they can.

A v1 value has no tag for a decimal, a date, a time or a duration, so such a column,
or a list / struct / map column with such leaves, cannot be written as row-major
values (speed mode, the ``F7`` hybrid container) as it is. :func:`to_storage` rewrites the leaves to their
integer storage (decimals as scaled int64, see :mod:`.decimals`; dates, times and
durations as their ticks) keeping every offset and null; :func:`from_storage` turns the
decoded storage back into the logical type recorded in the schema note.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from .decimals import from_scaled_int64, scaled_int64

__all__ = ["needs_storage", "storage_type", "to_storage", "from_storage"]


def _leaf_storage(t: pa.DataType) -> pa.DataType | None:
    if pa.types.is_decimal(t):
        return pa.int64()
    if pa.types.is_date32(t) or pa.types.is_time32(t):
        return pa.int32()
    if pa.types.is_date64(t) or pa.types.is_time64(t) or pa.types.is_duration(t):
        return pa.int64()
    return None


def storage_type(t: pa.DataType) -> pa.DataType:
    """``t`` with every decimal / date / time / duration leaf replaced by its integer storage."""
    leaf = _leaf_storage(t)
    if leaf is not None:
        return leaf
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        make = pa.list_ if pa.types.is_list(t) else pa.large_list
        return make(t.value_field.with_type(storage_type(t.value_type)))
    if pa.types.is_map(t):
        return pa.map_(storage_type(t.key_type), t.item_field.with_type(storage_type(t.item_type)),
                       keys_sorted=t.keys_sorted)
    if pa.types.is_struct(t):
        return pa.struct([t.field(i).with_type(storage_type(t.field(i).type)) for i in range(t.num_fields)])
    return t


def needs_storage(t: pa.DataType) -> bool:
    """Is ``t`` (or a leaf of it) a type :func:`to_storage` rewrites?"""
    return storage_type(t) != t


def _mask(arr: pa.Array) -> pa.Array | None:
    return arr.is_null() if arr.null_count else None


def to_storage(arr: pa.Array) -> pa.Array:
    """``arr`` with its leaves as integer storage (type :func:`storage_type`), offsets and nulls kept."""
    t = arr.type
    if pa.types.is_decimal(t):
        return pa.array(scaled_int64(arr), pa.int64(), mask=np.asarray(arr.is_null()) if arr.null_count else None)
    leaf = _leaf_storage(t)
    if leaf is not None:
        return arr.view(leaf)
    if arr.offset and (pa.types.is_map(t) or pa.types.is_list(t) or pa.types.is_large_list(t)):
        arr = pa.concat_arrays([arr])  # a slice, rebased: from_arrays takes no null bitmap with sliced offsets
    if pa.types.is_map(t):
        return pa.MapArray.from_arrays(arr.offsets, to_storage(arr.keys), to_storage(arr.items),
                                       type=storage_type(t), mask=_mask(arr))
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        cls = pa.ListArray if pa.types.is_list(t) else pa.LargeListArray
        return cls.from_arrays(arr.offsets, to_storage(arr.values), type=storage_type(t), mask=_mask(arr))
    if pa.types.is_struct(t):
        children = [to_storage(c) for c in arr.flatten()]
        return pa.StructArray.from_arrays(children, fields=list(storage_type(t)), mask=_mask(arr))
    return arr


def from_storage(arr: pa.Array, t: pa.DataType) -> pa.Array:
    """Inverse of :func:`to_storage`: ``arr`` (of type ``storage_type(t)``) as type ``t``."""
    if pa.types.is_decimal(t):
        vals = arr.fill_null(0).to_numpy(zero_copy_only=False)
        return from_scaled_int64(vals, t, mask=np.asarray(arr.is_null()) if arr.null_count else None)
    if _leaf_storage(t) is not None:
        return arr.view(t)
    if pa.types.is_map(t):
        return pa.MapArray.from_arrays(arr.offsets, from_storage(arr.keys, t.key_type),
                                       from_storage(arr.items, t.item_type), type=t, mask=_mask(arr))
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        cls = pa.ListArray if pa.types.is_list(t) else pa.LargeListArray
        return cls.from_arrays(arr.offsets, from_storage(arr.values, t.value_type), type=t, mask=_mask(arr))
    if pa.types.is_struct(t):
        children = [from_storage(c, t.field(i).type) for i, c in enumerate(arr.flatten())]
        return pa.StructArray.from_arrays(children, fields=list(t), mask=_mask(arr))
    return arr
