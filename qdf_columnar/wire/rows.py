"""Row-major record batches (speed mode): a table <-> a v1 array of maps, one map per row.

This is the reference's own batch shape, so a Go reader sees plain rows. What plain
maps cannot say (an int32 or a date column, a map column rather than a struct, a
timestamp's unit and zone, categoricals, the pandas index and dtypes) travels as in
the columnar modes, in a schema note: the first row's map gets one extra key,
``__qdf_schema__`` + JSON (the same JSON as the columnar note, plus ``"names"`` for a
batch with no rows), whose value is nil. This decoder removes that key; a Go reader
sees it as one more (nil) field of the first row. A batch with no rows is written as
one map holding only the note key, so its columns and types survive too.

Values are written as their storage: dates, times and durations as their integer
ticks, decimals as scaled integers (also as leaves of nested values,
:mod:`qdf_columnar.columns.nested_storage`), dictionaries decoded, float16 widened to float32 (exact); the note's types
turn them back.
"""

from __future__ import annotations

import datetime
import json
from typing import Any

import numpy as np
import pyarrow as pa

from ..columns.chunked import one_array
from ..columns.nested_storage import from_storage as nested_from_storage
from ..columns.nested_storage import needs_storage, storage_type
from ..columns.nested_storage import to_storage as nested_to_storage
from ..columns.outputs import empty_table
from ..errors import CorruptDataError, DecodeError, UnsupportedTypeError
from .schema_note import PREFIX, note_document, parse_note_document

__all__ = ["rows_for_speed", "rows_table", "split_note"]

_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)

#: Arrow types a plain row's values decode to without a note (see :func:`_infer_column`).
_PLAIN = (pa.int64(), pa.float64(), pa.float32(), pa.string(), pa.binary(), pa.bool_(), pa.timestamp("ns", tz="UTC"))


def rows_for_speed(tbl: pa.Table) -> list[dict[str, Any]]:
    """Rows as plain Python values, with the schema note in the first row when one is needed.

    Arrow maps become dicts (``to_pylist`` gives lists of pairs); float32 columns stay
    numpy float32 scalars, so they are written as 4-byte floats (``CB``, as the
    reference writes a Go float32) with their exact bits.
    """
    types = {f.name: f.type for f in tbl.schema if f.type not in _PLAIN or tbl.column(f.name).null_count == len(tbl)}
    try:
        cols = [_storage_values(tbl.column(f.name)) for f in tbl.schema]
    except KeyError as exc:  # a map with a repeated key cannot be a qdf map
        raise UnsupportedTypeError(f"a map value repeats a key, which a qdf map cannot hold: {exc}") from None
    rows = [dict(zip(tbl.column_names, row)) for row in zip(*cols)] if cols else [{} for _ in range(tbl.num_rows)]
    doc = note_document(types, tbl.schema.metadata or {})
    if doc is None and rows:
        return rows
    doc = doc or {"v": 1, "types": {}}
    if not rows:
        doc["names"] = tbl.column_names
        return [{PREFIX + json.dumps(doc, separators=(",", ":"), ensure_ascii=False): None}]
    rows[0][PREFIX + json.dumps(doc, separators=(",", ":"), ensure_ascii=False)] = None
    return rows


def _storage_values(col: pa.ChunkedArray) -> list[Any]:
    t = col.type
    if pa.types.is_dictionary(t):
        col = col.cast(t.value_type)
        t = t.value_type
    if pa.types.is_float16(t):
        col, t = col.cast(pa.float32()), pa.float32()
    if pa.types.is_float32(t):
        return _f32_values(col)
    if needs_storage(t):  # decimals / dates / times / durations, also as leaves of nested values
        col = pa.chunked_array([nested_to_storage(c) for c in col.chunks], storage_type(t))
    return col.to_pylist(maps_as_pydicts="strict")


def _f32_values(col: pa.ChunkedArray) -> list[Any]:
    arr = one_array(col)
    vals = arr.fill_null(0).to_numpy(zero_copy_only=False)
    valid = np.asarray(arr.is_valid())
    return [v if ok else None for v, ok in zip(vals, valid)]


def split_note(rows: list[Any]) -> tuple[list[Any], dict[str, Any] | None, int]:
    """(the rows without the schema note key, the note document or None, how many rows hold notes)."""
    if not rows or not isinstance(rows[0], dict):
        return rows, None, 0
    first = rows[0]
    keys = [k for k in first if isinstance(k, str) and k.startswith(PREFIX)]
    if not keys:
        return rows, None, 0
    if len(keys) > 1:
        raise CorruptDataError("the first row holds two schema notes")
    doc_text = keys[0][len(PREFIX):]
    try:
        doc = json.loads(doc_text)
    except ValueError as exc:
        raise CorruptDataError(f"unreadable schema note key: {exc}") from None
    first = {k: v for k, v in first.items() if k != keys[0]}
    if not first and isinstance(doc, dict) and "names" in doc:
        return rows[1:], doc, 1  # a batch with no rows
    return [first, *rows[1:]], doc, 1


def rows_table(rows: list[dict[str, Any]], start: int, note: dict[str, Any] | None = None) -> pa.Table:
    """A table from row dicts, keeping what ``Table.from_pylist`` would lose: timestamps
    finer than microseconds, float32 bits, uint64 values above the int64 range, and
    every type the schema note names."""
    types: dict[str, pa.DataType] = {}
    meta: dict[bytes, bytes] = {}
    names: dict[str, None] = {}
    if note is not None:
        types, meta = parse_note_document(note)[:2]
        if "names" in note:
            if not isinstance(note["names"], list) or not all(isinstance(n, str) for n in note["names"]):
                raise CorruptDataError("the schema note's names are not a list of column names", offset=start)
            names.update(dict.fromkeys(note["names"]))
    for row in rows:
        names.update(dict.fromkeys(row))
    # A qdf map key may be any value, a column name only a str: pa.table() would raise a
    # bare TypeError for an int key (and turn None into the name "None").
    not_str = [k for k in names if not isinstance(k, str)]
    if not_str:
        raise DecodeError(f"rows do not form a table: the map key {not_str[0]!r} is not a column name (str)",
                          offset=start)
    arrays = {}
    for name in names:
        vals = [row.get(name) for row in rows]
        try:
            arrays[name] = _column(vals, types.get(name))
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, OverflowError, TypeError,
                ValueError, KeyError) as exc:
            raise DecodeError(f"rows do not form a table: column {name!r}: {exc}", offset=start) from None
    if not arrays:
        return empty_table(len(rows), meta or None)
    return pa.table(arrays, metadata=meta or None)


def _column(vals: list[Any], typ: pa.DataType | None) -> pa.Array:
    if typ is None:
        return _infer_column(vals)
    if pa.types.is_null(typ):
        if any(v is not None for v in vals):
            raise ValueError("the note says all-null but the rows hold values")
        return pa.nulls(len(vals))
    if pa.types.is_dictionary(typ):
        inner = _column(vals, typ.value_type).dictionary_encode()
        return inner.cast(typ) if inner.type != typ else inner
    if pa.types.is_float16(typ):
        return _column(vals, pa.float32()).cast(typ)
    if needs_storage(typ):
        return nested_from_storage(pa.array(vals, type=storage_type(typ)), typ)
    if pa.types.is_timestamp(typ):
        arr = _infer_column(vals)
        if pa.types.is_null(arr.type):
            return pa.nulls(len(vals), typ)
        if not pa.types.is_timestamp(arr.type):
            raise ValueError(f"the note says {typ} but the rows hold {arr.type}")
        return arr.cast(typ)
    if pa.types.is_float32(typ):
        return pa.array(np.array([np.float32(0) if v is None else v for v in vals], dtype=np.float32),
                        mask=np.array([v is None for v in vals], dtype=bool))
    return pa.array(vals, type=typ)


def _infer_column(vals: list[Any]) -> pa.Array:
    present = [v for v in vals if v is not None]
    mask = np.array([v is None for v in vals], dtype=bool) if len(present) < len(vals) else None
    if present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        if max(present) > np.iinfo(np.int64).max:
            return pa.array([0 if v is None else v for v in vals], pa.uint64(), mask=mask)
        return pa.array(vals, pa.int64())
    if present and all(isinstance(v, np.float32) for v in present):
        return pa.array(np.array([np.float32(0) if v is None else v for v in vals], dtype=np.float32), mask=mask)
    if present and all(isinstance(v, datetime.datetime) for v in present):
        ns = [0 if v is None else _ns(v) for v in vals]
        tz = "UTC" if all(v.tzinfo is not None for v in present) else None
        return pa.array(ns, pa.int64(), mask=mask).cast(pa.timestamp("ns", tz=tz))
    return pa.array(vals)


def _ns(v: Any) -> int:
    """Nanoseconds since the epoch of a datetime or pandas Timestamp (which may hold ns)."""
    if hasattr(v, "value") and hasattr(v, "nanosecond"):
        return int(v.value)
    epoch = _EPOCH if v.tzinfo is not None else _EPOCH.replace(tzinfo=None)
    d = v - epoch
    return (d.days * 86_400 + d.seconds) * 1_000_000_000 + d.microseconds * 1_000
