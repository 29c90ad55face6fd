"""Arrow types stored through another type: extension types, fixed-size binary, string / binary views.

qdf v1 has no column kind for an Arrow extension type (``arrow.uuid``, pandas'
Period and Interval, any registered ``pa.ExtensionType``), nor for fixed-size binary
or the view layouts. The encoder stores such a column as its storage (an extension
type's storage type, ``binary`` for ``fixed_size_binary(n)``, ``string`` / ``binary``
for the views) and lists the original type under the schema-metadata key
``qdf.logical`` (``{column: type spelling}``, carried in the schema note); the decoder
casts back. A Go reader sees the storage values (a uuid as its 16 bytes, a Period as
its int64 ordinal, an Interval as a ``{left, right}`` struct).

An extension type must be registered with pyarrow when the data is read (pandas
registers Period and Interval when imported); otherwise the column comes back as its
storage type.
"""

from __future__ import annotations

import json

import pyarrow as pa

from ..errors import CorruptDataError
from .kinds import type_from_str, type_to_str

__all__ = ["LOGICAL_KEY", "to_storage", "from_storage", "has_logical_types"]

#: Schema-metadata key: ``{column: type spelling}`` of the columns stored through another type.
LOGICAL_KEY = b"qdf.logical"


def _storage_type(t: pa.DataType) -> pa.DataType | None:
    """The type a column of type ``t`` is stored as, or None when it is stored as itself."""
    if isinstance(t, pa.BaseExtensionType):
        inner = t.storage_type
        return _storage_type(inner) or inner
    if pa.types.is_fixed_size_binary(t) and not pa.types.is_decimal(t):
        return pa.binary()
    if pa.types.is_string_view(t):
        return pa.string()
    if pa.types.is_binary_view(t):
        return pa.binary()
    return None


def _to_storage(arr: pa.Array) -> pa.Array:
    t = arr.type
    if isinstance(t, pa.BaseExtensionType):
        return _to_storage(arr.storage)
    st = _storage_type(t)
    return arr if st is None else arr.cast(st)


def to_storage(table: pa.Table) -> pa.Table:
    """``table`` with every column qdf stores through another type replaced by its storage."""
    logical = {f.name: type_to_str(f.type) for f in table.schema if _storage_type(f.type) is not None}
    if not logical:
        return table
    cols = []
    fields = []
    for f, col in zip(table.schema, table.columns):
        if f.name in logical:
            col = pa.chunked_array([_to_storage(c) for c in col.chunks], _storage_type(f.type))
            f = pa.field(f.name, col.type, f.nullable)
        cols.append(col)
        fields.append(f)
    meta = dict(table.schema.metadata or {})
    meta[LOGICAL_KEY] = json.dumps(logical, separators=(",", ":")).encode()
    return pa.Table.from_arrays(cols, schema=pa.schema(fields, metadata=meta))


def _from_storage(arr: pa.Array, t: pa.DataType) -> pa.Array:
    if isinstance(t, pa.BaseExtensionType):
        return pa.ExtensionArray.from_storage(t, _from_storage(arr, t.storage_type))
    return arr if arr.type == t else arr.cast(t)


def has_logical_types(metadata: dict[bytes, bytes] | None) -> bool:
    """Whether schema ``metadata`` lists columns that :func:`from_storage` converts."""
    return bool(metadata) and LOGICAL_KEY in metadata


def from_storage(table: pa.Table) -> pa.Table:
    """Inverse of :func:`to_storage` for the columns ``table`` has (CorruptDataError if they do not fit)."""
    meta = table.schema.metadata or {}
    raw = meta.get(LOGICAL_KEY)
    if raw is None:
        return table
    try:
        logical = json.loads(raw)
        if not isinstance(logical, dict):
            raise ValueError("not an object")
        types = {str(k): type_from_str(v) for k, v in logical.items()}
    except (ValueError, TypeError) as exc:
        raise CorruptDataError(f"unreadable {LOGICAL_KEY.decode()} metadata: {exc}") from None
    rest = {k: v for k, v in meta.items() if k != LOGICAL_KEY}
    cols = []
    fields = []
    for f, col in zip(table.schema, table.columns):
        t = types.get(f.name)
        if t is not None:
            if pa.types.is_dictionary(col.type):
                col = col.cast(col.type.value_type)
            try:
                col = pa.chunked_array([_from_storage(c, t) for c in col.chunks], t)
            except (pa.ArrowException, ValueError, TypeError) as exc:
                raise CorruptDataError(f"a {col.type} column does not convert to its type {t}: {exc}",
                                       column=f.name) from None
            f = pa.field(f.name, t, f.nullable)
        cols.append(col)
        fields.append(f)
    return pa.Table.from_arrays(cols, schema=pa.schema(fields, metadata=rest or None))
