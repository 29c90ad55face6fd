"""The bytes of a ``.qdf`` file (docs/FORMAT.md Part 4): magics, trailer, footer.

A file is ``header | row group 0 | ... | row group k-1 | footer | trailer``. Every row
group is a complete qdf v1 buffer; the footer is one more v1 buffer (a ``dumps``-ed map)
holding the Arrow schema, the row-group directory and per-column statistics. This
module builds the footer and parses it back, validating every field of a possibly
hostile footer before anything uses it: a bad one raises ``CorruptDataError``.
"""

from __future__ import annotations

import math
import struct
import zlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

from ..errors import CorruptDataError, DecodeError, EncodeError, TruncatedError, UnsupportedVersionError

__all__ = [
    "MAGIC",
    "VERSION",
    "HEADER",
    "TRAILER_SIZE",
    "ColumnStats",
    "RowGroup",
    "FileMeta",
    "SchemaMismatchError",
    "pack_trailer",
    "build_footer",
    "parse_header",
    "parse_trailer",
    "parse_footer",
    "stat_kind",
]

MAGIC = b"QDFC"
#: Container version (major, minor). A reader refuses another major; a newer minor only
#: adds optional footer keys, which this reader ignores.
VERSION = (1, 0)
HEADER = MAGIC + bytes([VERSION[0], VERSION[1], 0, 0])
HEADER_SIZE = len(HEADER)
_TRAILER = struct.Struct("<QI4s")  # footer length, footer CRC-32, trailing magic
TRAILER_SIZE = _TRAILER.size
V1_HEADER_SIZE = 5
MIN_FILE_SIZE = HEADER_SIZE + V1_HEADER_SIZE + 1 + TRAILER_SIZE
#: The reference's row cap per v1 container, hence per row group.
MAX_GROUP_ROWS = 1 << 24
#: A footer larger than this is refused before it is read (a hostile length field).
MAX_FOOTER_BYTES = 1 << 31


class SchemaMismatchError(EncodeError, ValueError):
    """Appended data (or a later input batch) does not have the file's columns and types."""


@dataclass(frozen=True)
class ColumnStats:
    """Statistics of one column in one row group.

    ``min`` / ``max`` are bounds over the present, non-NaN values, in the column's
    storage domain (ints for timestamps, dates, times and durations), or None when not
    kept. ``exact`` is False when they are truncated string bounds.
    """

    null_count: int
    nan_count: int = 0
    min: Any = None
    max: Any = None
    exact: bool = True
    arrow_bytes: int = 0


@dataclass(frozen=True)
class RowGroup:
    """One row group: where its v1 buffer lies, how many rows, and per-column statistics."""

    index: int
    offset: int
    length: int
    num_rows: int
    crc32: int
    statistics: dict[str, ColumnStats] = field(repr=False)


@dataclass(frozen=True)
class FileMeta:
    """The parsed footer."""

    version: tuple[int, int]
    schema: pa.Schema
    num_rows: int
    row_groups: list[RowGroup]
    dictionaries: dict[str, pa.Array]
    created_by: str
    footer_offset: int
    footer_length: int


# ----------------------------------------------------------------------------- kinds


def stat_kind(t: pa.DataType) -> str | None:
    """How min / max of a column of type ``t`` are stored, or None when they are not kept."""
    if pa.types.is_dictionary(t):
        t = t.value_type
    if pa.types.is_signed_integer(t) or pa.types.is_temporal(t):
        return "int"  # timestamps, dates, times, durations: by storage value
    if pa.types.is_unsigned_integer(t):
        return "uint"
    if pa.types.is_floating(t):
        return "float"
    if pa.types.is_boolean(t):
        return "bool"
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return "string"
    if (pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_binary_view(t)
            or pa.types.is_fixed_size_binary(t)):
        return "binary"
    return None


_PY_TYPES: dict[str, tuple[type, ...]] = {
    "int": (int,), "uint": (int,), "float": (float, np.floating), "bool": (bool,), "string": (str,), "binary": (bytes,),
}  # fmt: skip


# ----------------------------------------------------------------------------- write


def pack_trailer(footer: bytes) -> bytes:
    return _TRAILER.pack(len(footer), zlib.crc32(footer), MAGIC)


def _stats_entry(s: ColumnStats) -> dict[str, Any]:
    d: dict[str, Any] = {"n": s.null_count, "nan": s.nan_count, "ab": s.arrow_bytes}
    if s.min is not None and s.max is not None:
        d["lo"], d["hi"] = s.min, s.max
        if not s.exact:
            d["x"] = False
    return d


def build_footer(
    schema: pa.Schema, groups: list[RowGroup], dictionaries: dict[str, pa.Array], created_by: str
) -> bytes:
    """The footer as a qdf v1 buffer (a ``dumps``-ed map); see docs/FORMAT.md §4.3."""
    from ..wire.values import dumps

    names = schema.names
    dicts = {}
    for name, values in dictionaries.items():
        sink = pa.BufferOutputStream()
        batch = pa.record_batch([values], names=["values"])
        with pa.ipc.new_stream(sink, batch.schema) as w:
            w.write_batch(batch)
        dicts[name] = sink.getvalue().to_pybytes()
    footer = {
        "format": "qdf-file",
        "version": list(VERSION),
        "created_by": created_by,
        "schema": schema.serialize().to_pybytes(),
        "num_rows": sum(g.num_rows for g in groups),
        "checksum": "crc32",
        "dictionaries": dicts,
        "row_groups": [
            {"offset": g.offset, "length": g.length, "rows": g.num_rows, "crc32": g.crc32,
             "stats": [_stats_entry(g.statistics[n]) for n in names]}
            for g in groups
        ],
    }
    # Shape interning (balanced mode) declares the repeated stats map layouts once.
    return dumps(footer, mode="balanced")


# ----------------------------------------------------------------------------- read


def parse_header(head: bytes) -> tuple[int, int]:
    """Check the leading magic; return the container version."""
    if len(head) < HEADER_SIZE:
        raise TruncatedError(f"file is {len(head)} bytes, shorter than the {HEADER_SIZE}-byte .qdf header", offset=0)
    if head[:4] != MAGIC:
        if head[:4] == b"QDF\x01":
            raise DecodeError("this is a plain qdf v1 buffer, not a .qdf file; read it with qdf.decode()", offset=0)
        raise CorruptDataError(f"not a .qdf file: leading magic {bytes(head[:4])!r}, expected {MAGIC!r}", offset=0)
    major, minor = head[4], head[5]
    if major != VERSION[0]:
        raise UnsupportedVersionError(
            f".qdf container version {major}.{minor}; this reader reads version {VERSION[0]}.x", offset=4
        )
    return major, minor


def parse_trailer(tail: bytes, size: int) -> tuple[int, int, int]:
    """(footer offset, footer length, footer CRC-32) from the last ``TRAILER_SIZE`` bytes of a ``size``-byte file."""
    at = size - TRAILER_SIZE
    flen, fcrc, magic = _TRAILER.unpack(bytes(tail[-TRAILER_SIZE:]))
    if magic != MAGIC:
        raise TruncatedError(
            "no trailing magic: the file is truncated or was not completely written", offset=size - 4
        )
    if not V1_HEADER_SIZE + 1 <= flen <= min(at - HEADER_SIZE, MAX_FOOTER_BYTES):
        raise CorruptDataError(f"footer length {flen} does not fit a {size}-byte file", offset=at)
    return at - flen, flen, fcrc


def _need(cond: bool, msg: str, offset: int, row_group: int | None = None) -> None:
    if not cond:
        raise CorruptDataError(f"bad footer: {msg}", offset=offset, row_group=row_group)


def _uint(v: Any, what: str, at: int, hi: int = 1 << 64, row_group: int | None = None) -> int:
    if not (type(v) is int and 0 <= v < hi):  # bool is not an int here
        raise CorruptDataError(f"bad footer: {what} is {v!r}", offset=at, row_group=row_group)
    return v


_SCALAR_TYPES = {"int": (int,), "uint": (int,), "bool": (bool,), "string": (str,), "binary": (bytes,)}


def _fast_stats(e: Any, kind: str | None, rows: int) -> ColumnStats | None:
    """The stats entry when it is well-formed, else None (then ``_parse_stats`` says why).

    Exists because a footer holds groups x columns entries: this path builds no message.
    """
    if type(e) is not dict:
        return None
    n, nan, ab = e.get("n"), e.get("nan", 0), e.get("ab", 0)
    if type(n) is not int or type(nan) is not int or type(ab) is not int:
        return None
    if n < 0 or nan < 0 or not 0 <= ab < 1 << 64 or n + nan > rows or (nan and kind != "float"):
        return None
    lo, hi = e.get("lo"), e.get("hi")
    if lo is None or hi is None or kind is None:
        return ColumnStats(n, nan, arrow_bytes=ab)
    if kind == "float":
        if not (isinstance(lo, (float, np.floating)) and isinstance(hi, (float, np.floating))):
            return None
        lo, hi = float(lo), float(hi)
        if lo != lo or hi != hi:  # NaN
            return None
    elif type(lo) not in _SCALAR_TYPES[kind] or type(hi) not in _SCALAR_TYPES[kind]:
        return None
    exact = e.get("x", True)
    if not lo <= hi or n + nan >= rows or type(exact) is not bool:
        return None
    return ColumnStats(n, nan, lo, hi, exact, ab)


def _parse_stats(entry: Any, kind: str | None, rows: int, name: str, at: int, g: int) -> ColumnStats:
    fast = _fast_stats(entry, kind, rows)
    if fast is not None:
        return fast
    # Something is wrong: find what, for the message.
    _need(isinstance(entry, dict), f"statistics of column {name!r} are not a map", at, g)
    n = _uint(entry.get("n"), f"null count of {name!r}", at, rows + 1, g)
    nan = _uint(entry.get("nan", 0), f"NaN count of {name!r}", at, rows + 1, g)
    _need(n + nan <= rows, f"column {name!r} has {n} nulls + {nan} NaNs in {rows} rows", at, g)
    _need(nan == 0 or kind == "float", f"column {name!r} is not float but counts NaNs", at, g)
    ab = _uint(entry.get("ab", 0), f"Arrow size of {name!r}", at, row_group=g)
    lo, hi = entry.get("lo"), entry.get("hi")
    if lo is None or hi is None or kind is None:
        return ColumnStats(n, nan, arrow_bytes=ab)
    types = _PY_TYPES[kind]
    ok = all(isinstance(v, types) and not (kind != "bool" and isinstance(v, bool)) for v in (lo, hi))
    _need(ok, f"min / max of {kind} column {name!r} are {type(lo).__name__} / {type(hi).__name__}", at, g)
    if kind == "float":
        lo, hi = float(lo), float(hi)
        _need(not (math.isnan(lo) or math.isnan(hi)), f"min / max of {name!r} are NaN", at, g)
    _need(lo <= hi, f"min {lo!r} > max {hi!r} for column {name!r}", at, g)
    _need(n + nan < rows, f"column {name!r} has min / max but no present value", at, g)
    exact = entry.get("x", True)
    _need(isinstance(exact, bool), f"exactness flag of {name!r} is {exact!r}", at, g)
    raise CorruptDataError(f"bad footer: statistics of column {name!r} are malformed", offset=at, row_group=g)


def _parse_dicts(raw: Any, schema: pa.Schema, at: int) -> dict[str, pa.Array]:
    _need(isinstance(raw, dict), "dictionaries is not a map", at)
    out = {}
    for name, blob in raw.items():
        _need(name in schema.names and pa.types.is_dictionary(schema.field(name).type),
              f"a dictionary for {name!r}, which is not a dictionary column", at)
        _need(isinstance(blob, bytes), f"dictionary of {name!r} is not bytes", at)
        try:
            table = pa.ipc.open_stream(pa.py_buffer(blob)).read_all()
            table.validate(full=True)
        except (pa.ArrowException, OSError, ValueError) as exc:
            raise CorruptDataError(f"bad footer: dictionary of {name!r} is not an Arrow IPC stream: {exc}",
                                   offset=at, column=name) from None
        want = schema.field(name).type.value_type
        _need(table.num_columns == 1 and table.schema.field(0).type == want,
              f"dictionary of {name!r} is not one {want} column", at)
        out[name] = table.column(0).combine_chunks()
    missing = [f.name for f in schema if pa.types.is_dictionary(f.type) and f.name not in out]
    _need(not missing, f"no dictionary for the dictionary column(s) {missing}", at)
    return out


def parse_footer(buf: bytes | memoryview, footer_offset: int, crc: int, data_end: int) -> FileMeta:
    """Validate and parse the footer at ``footer_offset`` (``data_end``: where row groups must end)."""
    from ..wire.values import loads

    at = footer_offset
    if zlib.crc32(buf) != crc:
        raise CorruptDataError("footer checksum mismatch: the footer is damaged", offset=at)
    try:
        f = loads(buf)
    except DecodeError as exc:
        raise CorruptDataError(f"bad footer: {exc.reason}", offset=at) from None
    _need(isinstance(f, dict) and f.get("format") == "qdf-file", "not a qdf-file footer map", at)
    ver = f.get("version")
    _need(isinstance(ver, list) and len(ver) == 2 and all(isinstance(v, int) for v in ver), "bad version", at)
    if ver[0] != VERSION[0]:
        raise UnsupportedVersionError(f"footer of container version {ver[0]}.{ver[1]}", offset=at)
    _need(f.get("checksum") == "crc32", f"unknown checksum {f.get('checksum')!r}", at)
    blob = f.get("schema")
    _need(isinstance(blob, bytes), "schema is not bytes", at)
    try:
        schema = pa.ipc.read_schema(pa.py_buffer(blob))
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise CorruptDataError(f"bad footer: the schema is not an Arrow IPC schema: {exc}", offset=at) from None
    _need(len(set(schema.names)) == len(schema.names), "the schema repeats a column name", at)
    kinds = [stat_kind(t) for t in schema.types]
    raw_groups = f.get("row_groups")
    _need(isinstance(raw_groups, list), "row_groups is not a list", at)
    groups: list[RowGroup] = []
    end = HEADER_SIZE
    for i, g in enumerate(raw_groups):
        _need(isinstance(g, dict), f"row group {i} is not a map", at, i)
        off = _uint(g.get("offset"), "offset", at, row_group=i)
        length = _uint(g.get("length"), "length", at, row_group=i)
        rows = _uint(g.get("rows"), "row count", at, MAX_GROUP_ROWS + 1, i)
        crc32 = _uint(g.get("crc32"), "checksum", at, 1 << 32, i)
        _need(off >= end and length >= V1_HEADER_SIZE and off + length <= data_end,
              f"row group {i} at bytes [{off}, {off + length}) overlaps another or lies outside the data", at, i)
        end = off + length
        stats = g.get("stats")
        _need(isinstance(stats, list) and len(stats) == len(schema), f"row group {i} stats do not match the schema",
              at, i)
        parsed = {n: _parse_stats(s, k, rows, n, at, i) for n, s, k in zip(schema.names, stats, kinds)}
        groups.append(RowGroup(i, off, length, rows, crc32, parsed))
    num_rows = _uint(f.get("num_rows"), "num_rows", at)
    _need(num_rows == sum(g.num_rows for g in groups), "num_rows is not the sum of the row groups' rows", at)
    created = f.get("created_by", "")
    return FileMeta(
        version=(ver[0], ver[1]),
        schema=schema,
        num_rows=num_rows,
        row_groups=groups,
        dictionaries=_parse_dicts(f.get("dictionaries", {}), schema, at),
        created_by=created if isinstance(created, str) else "",
        footer_offset=footer_offset,
        footer_length=len(buf),
    )
