"""Residual (row-major) columns of the ``F7`` hybrid container: nested list/struct/map data.

Columns v1 cannot store columnar (lists, structs, maps) are written after the
columnar bodies as N rows x (residual fields in declaration order) of ordinary
row-major values through the Dense writer, as the reference does for nested struct
fields (qdf-wire-v1.md §2.5). Arrow maps become qdf maps (not lists of pairs); the
Arrow type itself travels in the schema note, so decoding gives back the same nested
Arrow types; decimal, date, time and duration leaves are written as their integer
storage (:mod:`qdf_columnar.columns.nested_storage`).
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from ..columns.nested_storage import from_storage as nested_from_storage
from ..columns.nested_storage import needs_storage, storage_type
from ..columns.nested_storage import to_storage as nested_to_storage
from ..errors import CorruptDataError, UnsupportedTypeError


def is_residual_type(typ: pa.DataType) -> bool:
    """Nested types that go row-major in a hybrid container."""
    t = pa.types
    return (
        t.is_list(typ) or t.is_large_list(typ) or t.is_fixed_size_list(typ) or t.is_struct(typ) or t.is_map(typ)
        or getattr(t, "is_list_view", lambda _: False)(typ)
    )


def write_residual_rows(out: bytearray, columns: list[pa.Array], ctx: Any) -> None:
    """N rows x residual fields, each a row-major v1 value."""
    from .values import write_value

    # pyarrow turns maps into dicts in C ("strict" refuses duplicate keys rather than
    # silently keeping one): much faster than walking every value by type in Python.
    # Decimal / date / time / duration leaves have no v1 value tag: written as their integer storage.
    columns = [nested_to_storage(col) if needs_storage(col.type) else col for col in columns]
    try:
        values = [col.to_pylist(maps_as_pydicts="strict") for col in columns]
    except KeyError as exc:  # a map with a repeated key: qdf maps (like Go maps) cannot hold it
        raise UnsupportedTypeError(f"a map value repeats a key, which a qdf map cannot hold: {exc}") from None
    for row in zip(*values):
        for v in row:
            write_value(out, v, ctx)


def read_residual_rows(r: Any, n_rows: int, n_fields: int, ctx: Any) -> list[list[Any]]:
    """Inverse of :func:`write_residual_rows`: one Python list per residual field."""
    from .values import read_value

    if n_fields and n_rows > r.remaining:  # every value takes at least one byte
        raise r.truncated("the residual rows", n_rows * n_fields)
    cols: list[list[Any]] = [[] for _ in range(n_fields)]
    for _ in range(n_rows):
        for c in cols:
            c.append(read_value(r, ctx))
    return cols


def to_arrow(values: list[Any], typ: pa.DataType, name: str) -> pa.Array:
    """Build the residual column back as ``typ``; a value of the wrong shape is corrupt data."""
    try:
        if needs_storage(typ):
            return nested_from_storage(pa.array(values, type=storage_type(typ)), typ)
        return pa.array(values, type=typ)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError) as exc:
        raise CorruptDataError(f"residual values do not fit {typ}: {exc}", column=name) from None
