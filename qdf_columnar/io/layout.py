"""The bytes of a ``.qdf`` file (docs/FORMAT.md Part 4): magics, trailer, footer.

A file is ``header | row group 0 | ... | row group k-1 | footer | trailer``. In
container version 2.0 a row group is one **column chunk** per top-level column, each a
complete qdf v1 buffer (or a zstd frame or xz stream holding one); in version 1.0 it is one v1
buffer for the whole group. The footer is one more v1 buffer (a ``dumps``-ed map)
holding the Arrow schema, the row-group and chunk directories and per-column
statistics. This module builds the footer and parses it back, validating every field
of a possibly hostile footer before anything uses it: a bad one raises
``CorruptDataError``.
"""

from __future__ import annotations

import functools
import struct
import zlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

from ..errors import CorruptDataError, DecodeError, EncodeError, TruncatedError, UnsupportedVersionError
from ..format.header import FILE_MAGIC

__all__ = [
    "MAGIC",
    "VERSION",
    "HEADER",
    "TRAILER_SIZE",
    "ColumnStats",
    "RowGroup",
    "Chunk",
    "FileMeta",
    "header_for",
    "SchemaMismatchError",
    "pack_trailer",
    "build_footer",
    "parse_header",
    "parse_trailer",
    "parse_footer",
    "stat_kind",
    "ZONE_ROWS",
    "ZoneArrays",
]

MAGIC = FILE_MAGIC  # b"QDFC"
#: Container version (major, minor) new files get. A reader refuses a major it does
#: not know; a newer minor only adds optional footer keys, which this reader ignores.
VERSION = (2, 0)
#: Majors this reader reads: 1 (a row group is one v1 buffer), 2 (column chunks).
READ_MAJORS = (1, 2)
HEADER = MAGIC + bytes([VERSION[0], VERSION[1], 0, 0])
HEADER_SIZE = len(HEADER)
#: Column-chunk codecs (footer ``chunks.codec``): the bytes as they are, a zstd frame,
#: or an xz stream (LZMA2) of the v1 buffer.
CHUNK_V1, CHUNK_ZSTD, CHUNK_XZ = 0, 1, 2
CHUNK_CODECS = (CHUNK_V1, CHUNK_ZSTD, CHUNK_XZ)
#: What a chunk codec is called (``columns_summary``, errors).
CHUNK_CODEC_NAMES = {CHUNK_V1: "v1", CHUNK_ZSTD: "zstd", CHUNK_XZ: "xz"}
#: A packed (zstd or xz) chunk may not claim to unpack to more than this many times its
#: size plus 1 MiB (:func:`max_unpacked`): a hostile footer cannot make the reader
#: allocate without bound, and the writer keeps a chunk that would compress further
#: unwrapped. Periodic columns reach a few hundred (a 51-value cycle of state codes: 325x).
MAX_ZSTD_RATIO = 1024


def max_unpacked(length: int) -> int:
    """The largest v1 buffer a packed chunk of ``length`` bytes may hold."""
    return MAX_ZSTD_RATIO * length + (1 << 20)
_TRAILER = struct.Struct("<QI4s")  # footer length, footer CRC-32, trailing magic
TRAILER_SIZE = _TRAILER.size
V1_HEADER_SIZE = 5
MIN_FILE_SIZE = HEADER_SIZE + V1_HEADER_SIZE + 1 + TRAILER_SIZE
#: The reference's row cap per v1 container, hence per row group.
MAX_GROUP_ROWS = 1 << 24
#: A footer larger than this is refused before it is read (a hostile length field).
MAX_FOOTER_BYTES = 1 << 31
#: Zone maps (footer ``zones``, version 2 only): statistics per run of this many rows of
#: a row group longer than one zone, so a filter skips rows inside a group it reads.
ZONE_ROWS = 8192
#: The zone size a footer may declare, and how many zones it may hold in all (a hostile
#: footer cannot make the reader build an unbounded zone table).
MIN_ZONE_ROWS, MAX_ZONES = 1024, 1 << 22


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
class ZoneArrays:
    """One column's statistics over consecutive zones, as arrays (for vectorised pruning).

    ``lo`` / ``hi`` are None when no zone keeps numeric bounds (string, bool, binary and
    decimal columns); where ``has`` is False a zone's bounds are unknown.
    """

    rows: np.ndarray
    nulls: np.ndarray
    nans: np.ndarray
    has: np.ndarray
    lo: np.ndarray | None
    hi: np.ndarray | None

    def __getitem__(self, k: slice) -> ZoneArrays:
        lo, hi = (None, None) if self.lo is None or self.hi is None else (self.lo[k], self.hi[k])
        return ZoneArrays(self.rows[k], self.nulls[k], self.nans[k], self.has[k], lo, hi)


@dataclass(frozen=True)
class Chunk:
    """One column chunk of a version-2 row group: its bytes, their checksum and codec.

    ``raw_length`` is the length of the v1 buffer the chunk holds (its own length for a
    plain chunk, the unpacked length of a zstd or xz one).
    """

    offset: int
    length: int
    crc32: int
    codec: int = CHUNK_V1
    raw_length: int = 0


@dataclass(frozen=True)
class RowGroup:
    """One row group: where its bytes lie, how many rows, and per-column statistics.

    In a version-1 file ``offset`` / ``length`` / ``crc32`` are those of its one v1
    buffer; in a version-2 file ``offset`` / ``length`` span its ``chunks`` (one per
    schema field, in schema order) and ``crc32`` is 0.
    """

    index: int
    offset: int
    length: int
    num_rows: int
    crc32: int
    statistics: Mapping[str, ColumnStats] = field(repr=False)
    chunks: tuple[Chunk, ...] = field(default=(), repr=False)
    #: Zone maps: per zone of :attr:`FileMeta.zone_rows` rows (the last one shorter), the
    #: statistics of every column; empty for a group of at most one zone (its own
    #: statistics say the same) and in files written without them.
    zones: Sequence[Mapping[str, ColumnStats]] = field(default=(), repr=False)


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
    #: Rows per zone of the groups' zone maps (0: the file has none).
    zone_rows: int = 0


# ----------------------------------------------------------------------------- kinds


@functools.lru_cache(maxsize=256)  # a footer asks once per field; files repeat a few types
def stat_kind(t: pa.DataType) -> str | None:
    """How min / max of a column of type ``t`` are stored, or None when they are not kept."""
    if pa.types.is_dictionary(t):
        t = t.value_type
    if pa.types.is_signed_integer(t) or pa.types.is_temporal(t) or pa.types.is_decimal(t):
        return "int"  # timestamps, dates, times, durations: by storage value; decimals scaled
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


def header_for(major: int) -> bytes:
    """The 8 leading bytes of a file of container version ``major``.0."""
    return MAGIC + bytes([major, 0, 0, 0])


def pack_trailer(footer: bytes) -> bytes:
    return _TRAILER.pack(len(footer), zlib.crc32(footer), MAGIC)


_LOHI_DTYPES = {"int": np.int64, "uint": np.uint64, "float": np.float64, "bool": np.bool_}


def _stats_columns(kind: str | None, st: list[ColumnStats]) -> dict[str, Any]:
    """One column's statistics over all row groups (or zones), as arrays (QPack slices on the wire)."""
    d: dict[str, Any] = {
        "n": np.array([s.null_count for s in st], dtype=np.int64),
        "nan": np.array([s.nan_count for s in st], dtype=np.int64),
        "ab": np.array([s.arrow_bytes for s in st], dtype=np.uint64),
    }
    has = np.array([kind is not None and s.min is not None and s.max is not None for s in st], dtype=np.bool_)
    if has.any():
        d["has"] = has
        if kind in _LOHI_DTYPES:
            dt = _LOHI_DTYPES[kind]
            d["lo"] = np.array([s.min if h else 0 for s, h in zip(st, has)], dtype=dt)
            d["hi"] = np.array([s.max if h else 0 for s, h in zip(st, has)], dtype=dt)
        else:  # str / bytes: one value per group, None where not kept
            d["lo"] = [s.min if h else None for s, h in zip(st, has)]
            d["hi"] = [s.max if h else None for s, h in zip(st, has)]
        d["exact"] = np.array([s.exact for s in st], dtype=np.bool_)
    return d


def build_footer(
    schema: pa.Schema, groups: list[RowGroup], dictionaries: dict[str, pa.Array], created_by: str,
    major: int = VERSION[0], zone_rows: int = ZONE_ROWS,
) -> bytes:
    """The footer as a qdf v1 buffer (a ``dumps``-ed map); see docs/FORMAT.md §4.3.

    ``major`` 2 adds the chunk directory (``chunks``); every group must then have one
    chunk per schema field. Groups with zone maps (``RowGroup.zones``, of ``zone_rows``
    rows each) add ``zones``.
    """
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
        "version": [major, 0],
        "created_by": created_by,
        "schema": schema.serialize().to_pybytes(),
        "num_rows": sum(g.num_rows for g in groups),
        "checksum": "crc32",
        "dictionaries": dicts,
        # Columnar: one array per field over the row groups (QPack slices), so a reader
        # decodes the directory and the statistics of thousands of groups in a few calls.
        "row_groups": {
            "offset": np.array([g.offset for g in groups], dtype=np.uint64),
            "length": np.array([g.length for g in groups], dtype=np.uint64),
            "rows": np.array([g.num_rows for g in groups], dtype=np.uint64),
            "crc32": np.array([g.crc32 for g in groups], dtype=np.uint64),
        },
        # Each column's statistics are a v1 buffer of their own, decoded only when a
        # filter or a summary needs that column.
        "stats": [dumps(_stats_columns(stat_kind(t), [g.statistics[n] for g in groups]), mode="balanced")
                  for n, t in zip(names, schema.types)],
    }
    if major >= 2:
        chunks = [c for g in groups for c in g.chunks]
        if any(len(g.chunks) != len(names) for g in groups):  # pragma: no cover - the writer's invariant
            raise EncodeError("a version-2 row group needs one chunk per column")
        # Group-major: chunk j of group i is entry i * len(schema) + j.
        footer["chunks"] = {
            "offset": np.array([c.offset for c in chunks], dtype=np.uint64),
            "length": np.array([c.length for c in chunks], dtype=np.uint64),
            "crc32": np.array([c.crc32 for c in chunks], dtype=np.uint64),
            "codec": np.array([c.codec for c in chunks], dtype=np.uint64),
            "raw": np.array([c.raw_length for c in chunks], dtype=np.uint64),
        }
        if any(g.zones for g in groups):
            # Like ``stats``, one buffer per field, over the zones of all groups in order;
            # ``count`` says how many zones each group has (0 or all of its zones).
            footer["zones"] = {
                "rows": zone_rows,
                "count": np.array([len(g.zones) for g in groups], dtype=np.uint64),
                "stats": [dumps(_stats_columns(stat_kind(t), [z[n] for g in groups for z in g.zones]),
                                mode="balanced") for n, t in zip(names, schema.types)],
            }
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
    if major not in READ_MAJORS:
        raise UnsupportedVersionError(
            f".qdf container version {major}.{minor}; this reader reads versions "
            + " and ".join(f"{m}.x" for m in READ_MAJORS), offset=4
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


def _int_array(v: Any, what: str, n: int, at: int) -> np.ndarray:
    """A length-``n`` integer array from the footer (QPack slices decode to numpy; an
    empty list is a zero-length slice)."""
    if isinstance(v, list) and not v:
        v = np.zeros(0, dtype=np.int64)
    _need(isinstance(v, np.ndarray) and v.ndim == 1 and v.dtype.kind in "iu" and len(v) == n,
          f"{what} is not {n} integers", at)
    if v.dtype.kind == "u" and n and int(v.max()) >= 1 << 63:
        raise CorruptDataError(f"bad footer: {what} holds a value beyond 2**63", offset=at)
    return v.astype(np.int64)


def _bool_array(v: Any, what: str, n: int, at: int) -> np.ndarray:
    if isinstance(v, list) and not v:
        v = np.zeros(0, dtype=np.bool_)
    _need(isinstance(v, np.ndarray) and v.ndim == 1 and v.dtype == np.bool_ and len(v) == n,
          f"{what} is not {n} booleans", at)
    return v


def _bounds(v: Any, kind: str, what: str, has: np.ndarray, at: int) -> list[Any]:
    """min or max of every row group as Python values (None where not kept), type-checked."""
    n = len(has)
    if kind in _LOHI_DTYPES:
        if isinstance(v, list) and not v:
            v = np.zeros(0, dtype=_LOHI_DTYPES[kind])
        ok = isinstance(v, np.ndarray) and v.ndim == 1 and len(v) == n
        if kind == "bool":
            ok = ok and v.dtype == np.bool_
        elif kind == "float":
            ok = ok and v.dtype.kind == "f"
        else:
            ok = ok and v.dtype.kind in "iu"
        _need(ok, f"{what} is not {n} {kind} values", at)
        if kind == "float":
            _need(not np.isnan(v[has]).any(), f"{what} holds NaN", at)
        elif kind == "int" and v.dtype.kind == "u" and n:
            _need(int(v.max()) < 1 << 63, f"{what} is out of the int64 range", at)
        vals = v.tolist()
    else:
        typ = str if kind == "string" else bytes
        _need(isinstance(v, list) and len(v) == n, f"{what} is not a list of {n} values", at)
        vals = v
        _need(all(type(x) is typ for x, h in zip(vals, has) if h), f"{what} holds a value that is not {typ.__name__}",
              at)
    return [x if h else None for x, h in zip(vals, has)]


def _column_stats(entry: Any, kind: str | None, rows: np.ndarray, name: str, at: int) -> list[ColumnStats]:
    """Validate one column's statistics arrays; return its ColumnStats for every row group."""
    g = len(rows)
    _need(isinstance(entry, dict), f"statistics of column {name!r} are not a map", at)
    n = _int_array(entry.get("n"), f"null counts of {name!r}", g, at)
    nan = _int_array(entry.get("nan"), f"NaN counts of {name!r}", g, at)
    ab = _int_array(entry.get("ab"), f"Arrow sizes of {name!r}", g, at)
    _need(bool((n >= 0).all() and (nan >= 0).all() and (ab >= 0).all()), f"negative count for {name!r}", at)
    bad = np.flatnonzero(n + nan > rows)
    if bad.size:
        raise CorruptDataError(f"bad footer: column {name!r} has more nulls + NaNs than rows", offset=at,
                               row_group=int(bad[0]))
    _need(kind == "float" or not nan.any(), f"column {name!r} is not float but counts NaNs", at)
    n_l, nan_l, ab_l = n.tolist(), nan.tolist(), ab.tolist()
    if "has" not in entry or kind is None:
        return [ColumnStats(a, b, arrow_bytes=c) for a, b, c in zip(n_l, nan_l, ab_l)]
    has = _bool_array(entry.get("has"), f"min/max flags of {name!r}", g, at)
    exact = _bool_array(entry.get("exact"), f"exactness flags of {name!r}", g, at)
    lo = _bounds(entry.get("lo"), kind, f"min of {name!r}", has, at)
    hi = _bounds(entry.get("hi"), kind, f"max of {name!r}", has, at)
    bad = np.flatnonzero(has & (n + nan >= rows))
    if bad.size:
        raise CorruptDataError(f"bad footer: column {name!r} has min / max but no present value", offset=at,
                               row_group=int(bad[0]))
    out = []
    for i, (a, b, c, x, y, e) in enumerate(zip(n_l, nan_l, ab_l, lo, hi, exact.tolist())):
        if x is None:
            out.append(ColumnStats(a, b, arrow_bytes=c))
            continue
        if not x <= y:
            raise CorruptDataError(f"bad footer: min {x!r} > max {y!r} for column {name!r}", offset=at, row_group=i)
        out.append(ColumnStats(a, b, x, y, e, c))
    return out


class _StatsTable:
    """Every column's statistics over the row groups (or over the zones of the zone maps,
    ``what``), decoded and validated on first use."""

    def __init__(self, blobs: dict[str, tuple[bytes, str | None]], rows: np.ndarray, at: int,
                 what: str = "statistics") -> None:
        self.blobs, self.rows, self.at, self.what = blobs, rows, at, what
        self.parsed: dict[str, list[ColumnStats]] = {}
        self._arrays: dict[str, ZoneArrays] = {}

    def arrays(self, name: str) -> ZoneArrays:
        """:meth:`column` as arrays over every entry (built once per column)."""
        got = self._arrays.get(name)
        if got is None:
            st = self.column(name)
            has = np.array([s.min is not None for s in st], dtype=np.bool_)
            dtype = _LOHI_DTYPES.get(self.blobs[name][1] or "")
            lo = hi = None
            if dtype is not None and dtype is not np.bool_ and has.any():
                lo = np.array([0 if s.min is None else s.min for s in st], dtype=dtype)
                hi = np.array([0 if s.max is None else s.max for s in st], dtype=dtype)
            else:
                has[:] = False
            got = self._arrays[name] = ZoneArrays(
                self.rows, np.array([s.null_count for s in st], dtype=np.int64),
                np.array([s.nan_count for s in st], dtype=np.int64), has, lo, hi)
        return got

    def column(self, name: str) -> list[ColumnStats]:
        got = self.parsed.get(name)
        if got is None:
            from ..wire.values_read import read_root

            blob, kind = self.blobs[name]
            try:
                entry = read_root(blob)
            except DecodeError as exc:
                raise CorruptDataError(f"bad footer: {self.what} of {name!r}: {exc.reason}", offset=self.at) from None
            try:
                got = self.parsed[name] = _column_stats(entry, kind, self.rows, name, self.at)
            except CorruptDataError as exc:
                if self.what == "statistics":
                    raise
                # the indexes _column_stats reports are zones, not row groups
                raise CorruptDataError(f"{exc.reason} (in the {self.what})", offset=self.at) from None
        return got


class _GroupStats(Mapping):
    """``RowGroup.statistics``: a read-only mapping column -> ColumnStats, lazily decoded."""

    def __init__(self, table: _StatsTable, index: int) -> None:
        self._t, self._i = table, index

    def __getitem__(self, name: str) -> ColumnStats:
        if name not in self._t.blobs:
            raise KeyError(name)
        return self._t.column(name)[self._i]

    def __iter__(self) -> Iterator[str]:
        return iter(self._t.blobs)

    def __len__(self) -> int:
        return len(self._t.blobs)


class _ZoneList(Sequence):
    """``RowGroup.zones`` of a parsed footer: ``count`` zones from ``start`` of the zone
    table, each a lazily decoded mapping column -> ColumnStats."""

    def __init__(self, table: _StatsTable, start: int, count: int) -> None:
        self._t, self._start, self._n = table, start, count

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(self._n))]
        k = range(self._n)[i]  # IndexError outside, negative indexes from the end
        return _GroupStats(self._t, self._start + k)

    def arrays(self, name: str) -> ZoneArrays:
        """Column ``name`` over these zones, as arrays."""
        return self._t.arrays(name)[self._start:self._start + self._n]


def _parse_zones(raw: Any, major: int, schema: pa.Schema, kinds: list[str | None], rows: np.ndarray,
                 at: int) -> tuple[int, list[Sequence[Mapping[str, ColumnStats]]]]:
    """(rows per zone, each group's zones) of the footer's optional ``zones`` map."""
    if raw is None:
        return 0, [() for _ in range(len(rows))]
    _need(major >= 2 and isinstance(raw, dict), "zones is not a map of a version-2 footer", at)
    z = _uint(raw.get("rows"), "zones.rows", at)
    _need(MIN_ZONE_ROWS <= z <= MAX_GROUP_ROWS, f"zones.rows {z} is outside [{MIN_ZONE_ROWS}, {MAX_GROUP_ROWS}]", at)
    count = _int_array(raw.get("count"), "zone counts", len(rows), at)
    zoned = count > 0
    ok = ~zoned | ((rows > z) & (count == (rows + z - 1) // z))
    if not ok.all():
        i = int(np.flatnonzero(~ok)[0])
        raise CorruptDataError(f"bad footer: row group {i} of {rows[i]} rows has {count[i]} zones of {z} rows",
                               offset=at, row_group=i)
    total = int(count.sum())
    _need(total <= MAX_ZONES, f"{total} zones, more than {MAX_ZONES}", at)
    stats = raw.get("stats")
    _need(isinstance(stats, list) and len(stats) == len(schema) and all(isinstance(b, bytes) for b in stats),
          "zone statistics are not one buffer per schema field", at)
    ends = np.cumsum(count)
    zone_rows = np.full(total, z, dtype=np.int64)  # every zone is full but each group's last
    zone_rows[ends[zoned] - 1] = rows[zoned] - z * (count[zoned] - 1)
    table = _StatsTable(dict(zip(schema.names, zip(stats, kinds))), zone_rows, at, what="zone maps")
    return z, [_ZoneList(table, s, c) if c else () for s, c in zip((ends - count).tolist(), count.tolist())]


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


def _check_field_names(schema: pa.Schema) -> None:
    """Decode the name of every field, nested ones included (raises UnicodeDecodeError), and
    resolve every timestamp's time zone (raises ArrowInvalid): Arrow reads both unchecked and
    fails only later, when a name is read or the column is converted to pandas."""
    stack = list(schema)
    while stack:
        f = stack.pop()
        f.name  # noqa: B018 - decoding the name is the check
        t = f.type.value_type if pa.types.is_dictionary(f.type) else f.type
        if pa.types.is_timestamp(t) and t.tz is not None:
            pa.lib.string_to_tzinfo(t.tz)
        stack.extend(t.field(i) for i in range(t.num_fields))


def _known_codec(codecs: np.ndarray) -> np.ndarray:
    """Which chunk codec numbers are known (np.isin costs ~50 us on a handful of values)."""
    ok = np.zeros(len(codecs), dtype=bool)
    for c in CHUNK_CODECS:
        ok |= codecs == c
    return ok


def _chunks(raw: Any, n_groups: int, n_cols: int, g_offs: np.ndarray, g_ends: np.ndarray,
            at: int) -> list[tuple[Chunk, ...]]:
    """Validate the chunk directory of a version-2 footer; the chunks of every group."""
    _need(isinstance(raw, dict), "chunks is not a map of arrays", at)
    n = n_groups * n_cols
    offs = _int_array(raw.get("offset"), "chunk offsets", n, at)
    lens = _int_array(raw.get("length"), "chunk lengths", n, at)
    crcs = _int_array(raw.get("crc32"), "chunk checksums", n, at)
    codecs = _int_array(raw.get("codec"), "chunk codecs", n, at)
    raws = _int_array(raw.get("raw"), "chunk raw lengths", n, at)
    ends = offs + lens
    group_of = np.repeat(np.arange(n_groups), n_cols)
    starts_ok = offs >= np.concatenate(([HEADER_SIZE], ends[:-1])) if n else np.zeros(0, bool)
    inside = (offs >= g_offs[group_of]) & (ends <= g_ends[group_of]) if n else np.zeros(0, bool)
    plain = codecs == CHUNK_V1
    raw_ok = np.where(plain, raws == lens, (raws >= V1_HEADER_SIZE) & (raws <= max_unpacked(lens)))
    ok = starts_ok & inside & (lens >= V1_HEADER_SIZE) & (crcs < 1 << 32) & _known_codec(codecs) & raw_ok
    if not ok.all():
        i = int(np.flatnonzero(~ok)[0])
        raise CorruptDataError(
            f"bad footer: chunk {i % n_cols} of row group {i // n_cols} at bytes [{offs[i]}, {ends[i]}) overlaps "
            "another, lies outside its row group, or has an impossible checksum, codec or unpacked length",
            offset=at, row_group=i // n_cols)
    flat = [Chunk(o, ln, c, k, r) for o, ln, c, k, r in
            zip(offs.tolist(), lens.tolist(), crcs.tolist(), codecs.tolist(), raws.tolist())]
    return [tuple(flat[i * n_cols:(i + 1) * n_cols]) for i in range(n_groups)]


def parse_footer(buf: bytes | memoryview, footer_offset: int, crc: int, data_end: int,
                 header_major: int | None = None) -> FileMeta:
    """Validate and parse the footer at ``footer_offset`` (``data_end``: where row groups
    must end; ``header_major``: the file header's version, which the footer must repeat)."""
    from ..wire.values_read import read_root

    at = footer_offset
    if zlib.crc32(buf) != crc:
        raise CorruptDataError("footer checksum mismatch: the footer is damaged", offset=at)
    try:
        f = read_root(buf)
    except DecodeError as exc:
        raise CorruptDataError(f"bad footer: {exc.reason}", offset=at) from None
    _need(isinstance(f, dict) and f.get("format") == "qdf-file", "not a qdf-file footer map", at)
    ver = f.get("version")
    _need(isinstance(ver, list) and len(ver) == 2 and all(isinstance(v, int) for v in ver), "bad version", at)
    if ver[0] not in READ_MAJORS:
        raise UnsupportedVersionError(f"footer of container version {ver[0]}.{ver[1]}", offset=at)
    _need(header_major is None or ver[0] == header_major,
          f"footer of version {ver[0]}.{ver[1]} in a file whose header says {header_major}.x", at)
    _need(f.get("checksum") == "crc32", f"unknown checksum {f.get('checksum')!r}", at)
    blob = f.get("schema")
    _need(isinstance(blob, bytes), "schema is not bytes", at)
    try:
        schema = pa.ipc.read_schema(pa.py_buffer(blob))
        # Arrow accepts field names that are not UTF-8 and fails only when a name is
        # read (a UnicodeDecodeError from schema.names, far from here): read them all now.
        _check_field_names(schema)
    except (pa.ArrowException, OSError, ValueError) as exc:  # UnicodeDecodeError is a ValueError
        raise CorruptDataError(f"bad footer: the schema is not an Arrow IPC schema: {exc}", offset=at) from None
    _need(len(set(schema.names)) == len(schema.names), "the schema repeats a column name", at)
    kinds = [stat_kind(t) for t in schema.types]
    rg = f.get("row_groups")
    _need(isinstance(rg, dict), "row_groups is not a map of arrays", at)
    off_v = rg.get("offset")
    n_groups = len(off_v) if isinstance(off_v, (np.ndarray, list)) else -1
    _need(n_groups >= 0, "row_groups.offset is not an array", at)
    offs = _int_array(off_v, "row group offsets", n_groups, at)
    lens = _int_array(rg.get("length"), "row group lengths", n_groups, at)
    rows = _int_array(rg.get("rows"), "row group row counts", n_groups, at)
    crcs = _int_array(rg.get("crc32"), "row group checksums", n_groups, at)
    ends = offs + lens
    starts_ok = offs >= np.concatenate(([HEADER_SIZE], ends[:-1])) if n_groups else np.zeros(0, bool)
    # A version-2 group is its chunks: none at all when the schema has no columns.
    min_len = V1_HEADER_SIZE if ver[0] == 1 or len(schema) else 0
    ok = starts_ok & (lens >= min_len) & (ends <= data_end) & (rows <= MAX_GROUP_ROWS) & (crcs < 1 << 32)
    if not ok.all():
        i = int(np.flatnonzero(~ok)[0])
        raise CorruptDataError(
            f"bad footer: row group {i} at bytes [{offs[i]}, {ends[i]}) with {rows[i]} rows overlaps another, "
            "lies outside the data or has an impossible row count or checksum", offset=at, row_group=i)
    if ver[0] >= 2:
        group_chunks = _chunks(f.get("chunks"), n_groups, len(schema), offs, ends, at)
        _need(not crcs.any(), "a version-2 row group has a checksum of its own (its chunks carry them)", at)
    else:
        group_chunks = [() for _ in range(n_groups)]
    stats = f.get("stats")
    _need(isinstance(stats, list) and len(stats) == len(schema) and all(isinstance(b, bytes) for b in stats),
          "stats are not one buffer per schema field", at)
    table = _StatsTable(dict(zip(schema.names, zip(stats, kinds))), rows, at)
    zone_rows, zones = _parse_zones(f.get("zones"), ver[0], schema, kinds, rows, at)
    groups = [
        RowGroup(i, o, ln, r, c, _GroupStats(table, i), group_chunks[i], zones[i])
        for i, (o, ln, r, c) in enumerate(zip(offs.tolist(), lens.tolist(), rows.tolist(), crcs.tolist()))
    ]
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
        zone_rows=zone_rows,
    )
