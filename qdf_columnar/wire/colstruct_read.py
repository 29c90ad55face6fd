"""Read an ``EF`` tagColStruct container into Arrow arrays, with projection and filter pushdown.

The header (row count, shape, names, kinds, optional column index) is parsed first.
With a column index, unneeded self-contained column bodies are skipped by seeking;
without one they are walked without materialising values. Per-value string bodies
are always walked, because they update the Dense intern state later columns may
reference. With a filter, only the filter columns are decoded in full; the matching
row numbers then select what is materialised of the projected columns.
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
from qdf_kernels import columns as ck

from ..codecs.floatdec import scan_float
from ..codecs.intdec import IntPayload, scan_int
from ..codecs.qpack import (
    MAX_ROWS,
    decode_bool_payload,
    decode_int_payload,
    skip_payload,
)
from ..codecs.zone import dtype_of, read_zone_header, skip_to_end, zones_for_range
from ..columns import alloc
from ..columns.coded import CodedColumn
from ..columns.kinds import DEFAULT_TYPES, LOGICAL, kind_for
from ..columns.runs import RunColumn
from ..errors import CorruptDataError, DecodeError, QdfError
from ..format.reader import ByteReader
from ..format.tags import NULLABLE, STR_BLOCK_TAGS, ColKind, QPackTag
from .bits import unpack_mask
from .numeric_arrow import OFFSET_TYPES, present_positions, present_to_arrow, scatter, spread_strings, to_arrow
from .residual import is_residual_type, read_residual_rows
from .residual import to_arrow as residual_to_arrow
from .schema_note import is_note, parse_note
from .strcol_arrow import slices_to_arrow, slices_to_coded, slices_to_dictionary, slices_to_runs
from .strcol_scan import StringSlices, read_str_bytes, scan_string_column

_BASE_KINDS = {int(k) for k in ColKind if k != ColKind.RESIDUAL}
_PER_SEC = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}


@dataclass(slots=True)
class ColumnInfo:
    name: str
    kind: int  # base ColKind
    nullable: bool
    index: int  # position on the wire
    start: int = -1  # body offset, when known
    length: int = -1  # body length, when a column index exists
    arrow_type: pa.DataType = field(default_factory=pa.null)


@dataclass
class ColStructHeader:
    n_rows: int
    columns: list[ColumnInfo]  # user-visible columns, wire order
    all_columns: list[ColumnInfo]  # including the schema note
    has_index: bool
    body_start: int
    end: int = -1  # end of the container, when a column index exists
    metadata: dict[bytes, bytes] = field(default_factory=dict)  # schema metadata to restore
    hybrid: bool = False
    #: level 0 of a shredded batch: its top-level columns, nested ones with their type
    shred: list[tuple[str, pa.DataType | None]] | None = None
    #: level 0 of a batch with dictionary levels: the dictionary columns, in level order
    dicts: list[str] | None = None
    #: level 0 of a batch of levels whose note says ``"indep": true``: no string body in
    #: any level is per-value, so no level depends on the Dense state of another's bodies
    independent: bool = False

    @property
    def pandas_metadata(self) -> bytes | None:
        return self.metadata.get(b"pandas")

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    def logical_schema(self) -> dict[str, str]:
        return {c.name: _logical(c) for c in self.columns}


def _logical(c: ColumnInfo) -> str:
    """The query layer's kind of one column (binary and decimal columns are told apart by
    their Arrow type; a kind holds only one of them, so only that kind looks)."""
    if c.kind == ColKind.RESIDUAL:
        return "nested"
    if c.kind == ColKind.STRING and _is_binary(c.arrow_type):
        return "binary"
    if c.kind == ColKind.INT and pa.types.is_decimal(c.arrow_type):
        return "decimal"
    return LOGICAL[c.kind]


def _is_binary(t: pa.DataType) -> bool:
    return pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_binary_view(t)


def read_header(r: ByteReader, ctx, *, hybrid: bool = False, light: bool = False) -> ColStructHeader:
    """Parse from just after the EF (or, with ``hybrid``, F7) tag up to the first column body.

    ``light`` stops after the column names, kinds and index: no schema note is parsed
    and no logical type set (for a level that is only sought past)."""
    start = r.pos
    n = r.uvarint("the row count")
    if n > MAX_ROWS:
        raise CorruptDataError(f"columnar container declares {n} rows, more than the limit {MAX_ROWS}", offset=start)
    shape_at = r.pos
    shape_id = r.uvarint("the columnar shape id")
    if shape_id == 0:
        k = r.count("the column count", min_bytes_each=2)
        decl = []
        for _ in range(k):
            name_at = r.pos
            try:
                name = read_str_bytes(r, ctx.dense).decode("utf-8")
            except UnicodeDecodeError:
                raise CorruptDataError("column name is not valid UTF-8", offset=name_at) from None
            kind_at = r.pos
            kb = r.u8("a column kind byte")
            if kb == ColKind.RESIDUAL and hybrid:
                decl.append((name, ColKind.RESIDUAL, False))
                continue
            base = kb & ~NULLABLE
            if base not in _BASE_KINDS or kb == ColKind.RESIDUAL:
                raise CorruptDataError(f"unknown column kind byte {kb:#04x} for column {name!r}", offset=kind_at)
            decl.append((name, base, bool(kb & NULLABLE)))
        shapes = getattr(ctx, "hybrid_shapes" if hybrid else "col_shapes", None)
        if shapes is not None:
            shapes.append(decl)
    else:  # columnar and hybrid shapes have separate id spaces (qdf-wire-v1.md §2.5)
        shapes = getattr(ctx, "hybrid_shapes" if hybrid else "col_shapes", None) or []
        if shape_id > len(shapes):
            raise CorruptDataError(f"columnar shape id {shape_id} was never declared", offset=shape_at)
        decl = shapes[shape_id - 1]
    seen: set[str] = set()
    infos = []
    for i, (name, base, nul) in enumerate(decl):
        if name in seen:
            raise CorruptDataError(f"column name {name!r} appears twice", offset=start)
        seen.add(name)
        infos.append(ColumnInfo(name, base, nul, i))
    has_index = bool(ctx.flags & 0x08) and not hybrid
    if has_index:
        bodies = [c for c in infos if c.kind != ColKind.RESIDUAL]
        r.need(4 * len(bodies), "the column index")
        lens = struct.unpack_from(f"<{len(bodies)}I", r.buf, r.pos)  # Python ints: no numpy for a few values
        r.pos += 4 * len(bodies)
        total = sum(lens)
        if total > r.remaining:
            raise r.truncated("the column bodies the index declares", total)
    body_start = r.pos
    if has_index:
        off = body_start
        for info, ln in zip(bodies, lens):
            info.start, info.length = off, ln
            off += ln
    header = ColStructHeader(n, infos, infos, has_index, body_start, end=(off if has_index else -1), hybrid=hybrid)
    if light:
        if infos and is_note(infos[-1].name, infos[-1].kind):
            header.columns = infos[:-1]
        return header
    if infos and is_note(infos[-1].name, infos[-1].kind):
        types, meta, header.shred, header.dicts, header.independent = parse_note(infos[-1].name)
        header.columns = infos[:-1]
        header.metadata = meta
    else:
        types = {}
    for info in header.columns:
        typ = types.get(info.name)
        if info.kind == ColKind.RESIDUAL:
            if typ is not None and not is_residual_type(typ):
                raise CorruptDataError(f"schema note gives residual column a flat type {typ}", column=info.name)
            info.arrow_type = typ  # None: infer from the values (a buffer from another writer)
            continue
        if typ is None:
            typ = DEFAULT_TYPES[info.kind]
        else:
            noted_kind = _noted_kind(typ)
            if noted_kind != info.kind:
                raise CorruptDataError(
                    f"schema note says {typ} but the column kind is {ColKind(info.kind).name}",
                    column=info.name,
                    offset=start,
                )
        info.arrow_type = typ
    return header


def widen_strings(columns: Iterable[ColumnInfo]) -> None:
    """Make the ``string`` columns among ``columns`` decode as ``large_string`` (64-bit
    offsets), the type pandas converts every string column to (see ``api.decode_arrow``)."""
    for c in columns:
        if c.arrow_type == pa.string():
            c.arrow_type = pa.large_string()


@functools.lru_cache(maxsize=256)  # the few types notes name
def _noted_kind(typ: pa.DataType) -> int:
    """:func:`kind_for` of a type a schema note gives, or -1 for one no column can have."""
    try:
        return kind_for("", typ)
    except QdfError:
        return -1


class Deferred:
    """A scanned column: call with ``None`` for every row or an int array of row numbers.

    ``for_filter()`` gives the cheapest array a predicate can be evaluated on: for a
    dictionary-coded string column that is a DictionaryArray (codes + the small
    table), so a comparison runs once per distinct value instead of once per row.
    """

    __slots__ = ("name", "_make", "_make_filter", "_make_runs", "_make_coded", "zones", "payload")

    def __init__(self, name: str, make, make_filter=None, zones=None, payload=None, make_runs=None,
                 make_coded=None) -> None:
        self.name = name
        self._make = make
        self._make_filter = make_filter
        #: () -> RunColumn or None: the column as runs, while its payload keeps them
        self._make_runs = make_runs
        #: () -> CodedColumn or None: the column as its dictionary codes, while still packed
        self._make_coded = make_coded
        self.zones = zones  # a ZonedColumn when the body is an F1 zone chunk
        #: (IntPayload, row count, presence bitmap or None, present count) of an integer
        #: column: dictionary codes expand straight from it
        self.payload = payload

    def __call__(self, rows: np.ndarray | None = None) -> pa.Array:
        try:
            return self._make(rows)
        except QdfError as exc:
            raise exc.with_location(column=self.name) from None

    def release(self) -> None:
        """Drop what the scan kept for this column (its payload and the closures over its
        bytes), once the column is built for the last time: the next column is then built
        without this one's scanned buffers (dictionary codes, present values) still held."""
        self._make = self._make_filter = self._make_runs = self._make_coded = self.zones = self.payload = None

    def runs(self) -> tuple[np.ndarray, np.ndarray] | None:
        """An integer column without nulls whose payload is kept as runs: (value of each
        run, the row each run ends before); else None (see :meth:`IntPayload.runs`)."""
        src = self.payload
        if src is None or src[2] is not None:
            return None
        return src[0].runs()

    def for_filter_rows(self, rows: np.ndarray) -> pa.Array:
        """The filter input restricted to ``rows``: only those rows are materialised (zone
        chunks decode only their zones) unless the filter form differs from the values."""
        if self.zones is not None or self._make_filter is None:
            return self(rows)
        # runs take per row cheaply; packed codes do not (they map all rows at once), so
        # a row subset reads the dictionary array instead
        form = self._form(self._make_runs)
        return form.take(rows) if form is not None else self._filter_array().take(pa.array(rows))

    def for_filter_all(self, rows: np.ndarray | None = None) -> pa.Array:
        """:meth:`for_filter` in the maker signature, as an Arrow array of every row (or of ``rows``)."""
        return self._filter_array() if rows is None else self.for_filter_rows(rows)

    def for_filter(self) -> pa.Array | RunColumn | CodedColumn:
        """The cheapest form a predicate evaluates on: a :class:`RunColumn` for run-length
        coded integers or dictionary codes (one entry per run), a :class:`CodedColumn` for
        dictionary-coded strings whose codes are still packed, a DictionaryArray for other
        dictionary-coded strings, else the values."""
        form = self._form(self._make_runs)
        if form is None:
            form = self._form(self._make_coded)
        return self._filter_array() if form is None else form

    def _form(self, make):
        """``make()`` (None when there is no maker), its errors located at this column."""
        if make is None:
            return None
        try:
            return make()
        except QdfError as exc:
            raise exc.with_location(column=self.name) from None

    def _filter_array(self) -> pa.Array:
        if self._make_filter is None:
            return self(None)
        try:
            return self._make_filter()
        except QdfError as exc:
            raise exc.with_location(column=self.name) from None


class ColumnDecoder:
    """Walks the column bodies in wire order, materialising only what is asked for."""

    def __init__(self, r: ByteReader, header: ColStructHeader, ctx, *, copy: bool = True) -> None:
        self.r = r
        self.h = header
        self.ctx = ctx
        self.copy = copy
        #: Whether skipped per-value string bodies are replayed for the intern state
        #: (:meth:`run` clears it when no wanted column needs that state).
        self.replay = True
        self.budget = max(256 << 20, 64 * (r.end - r.pos))

    def _charge(self, nbytes: int) -> None:
        self.budget -= nbytes
        if self.budget < 0:
            raise CorruptDataError("declared output is larger than the decoder's allocation limit", offset=self.r.pos)

    def run(self, wanted: set[str], *, walk_all: bool = False) -> dict[str, Deferred]:
        """Scan the columns named in ``wanted`` in one pass over the bodies.

        Returns, per column, a :class:`Deferred` that materialises all rows or only
        the selected ones. Numeric payloads are decoded here; string bytes are only
        located (no copy) until materialised.
        """
        out: dict[str, Deferred] = {}
        r = self.r
        residual = [c for c in self.h.all_columns if c.kind == ColKind.RESIDUAL]
        need_rows = bool(residual) and (walk_all or any(c.name in wanted for c in residual))
        last_needed = max((c.index for c in self.h.all_columns if c.name in wanted), default=-1)
        # The Dense intern state matters only to per-value string bodies. When no wanted
        # column is one (every wanted string body is a self-contained block: always so
        # in a CASCADE batch), skipped columns are sought past without reading a byte of
        # them, so a column never depends on the others' bytes.
        self.replay = walk_all or need_rows or not self.h.has_index or any(
            info.name in wanted and _body_touches_state(r, info, self.h.n_rows) for info in self.h.all_columns)
        n_user = len(self.h.columns)  # the user's columns come first: the schema note is last
        for info in self.h.all_columns:
            if info.kind == ColKind.RESIDUAL:
                continue  # residual fields follow all the column bodies, row by row
            if (
                not walk_all
                and not need_rows
                and info.index > last_needed
                and (self.h.has_index or not _may_touch_state(info))
            ):
                break
            if info.start >= 0:
                r.pos = info.start
            else:
                info.start = r.pos
            r.column = info.name
            try:
                if info.name in wanted and info.index < n_user:
                    out[info.name] = self._decode(info)
                else:
                    self._skip(info)
                if info.length >= 0 and r.pos != info.start + info.length:
                    raise CorruptDataError(
                        f"column body is {r.pos - info.start} bytes, the column index says {info.length}",
                        column=info.name,
                        offset=info.start,
                    )
            except QdfError as exc:
                raise exc.with_location(column=info.name) from None
            finally:
                r.column = None
        if need_rows:
            values = read_residual_rows(r, self.h.n_rows, len(residual), self.ctx)
            for info, vals in zip(residual, values):
                if info.name in wanted:
                    out[info.name] = Deferred(info.name, _ResidualColumn(info, vals))
        return out

    # ------------------------------------------------------------------ skip
    def _skip(self, info: ColumnInfo) -> None:
        r = self.r
        if info.length >= 0 and (not self.replay or not _body_touches_state(r, info, self.h.n_rows)):
            r.pos = info.start + info.length
            return
        n = self._present_count(info)
        if info.kind in _ZONE_KINDS and r.peek("a column payload") == QPackTag.ZONE:
            r.pos += 1
            skip_to_end(r, read_zone_header(r, load_map=False))
            return
        if info.kind == ColKind.STRING:
            scan_string_column(r, n, self.ctx.dense, skip=True)
        elif info.kind == ColKind.TIME:
            skip_payload(r)
            skip_payload(r)
        else:
            skip_payload(r)

    def _present_count(self, info: ColumnInfo) -> int:
        if not info.nullable:
            return self.h.n_rows
        valid = self._mask(info)
        return int(np.count_nonzero(valid))

    def _mask(self, info: ColumnInfo) -> np.ndarray:
        return self._mask_bytes(info)[1]

    def _mask_bytes(self, info: ColumnInfo) -> tuple[np.ndarray, np.ndarray]:
        """(raw LSB-first bitmap, bool array) of a nullable column's presence mask."""
        n = self.h.n_rows
        at = self.r.pos
        raw = self.r.take_array((n + 7) >> 3, "a presence mask")
        return raw, unpack_mask(raw, n, column=info.name, offset=at)

    # ---------------------------------------------------------------- decode
    def _decode(self, info: ColumnInfo) -> Deferred:
        n = self.h.n_rows
        bitmap, valid = self._mask_bytes(info) if info.nullable else (None, None)
        n_present = int(np.count_nonzero(valid)) if valid is not None else n
        self._charge(8 * n_present)
        kind = info.kind
        if valid is None and kind in _ZONE_KINDS and self.r.peek("a column payload") == QPackTag.ZONE:
            start = self.r.pos
            self.r.pos += 1
            h = read_zone_header(self.r)
            skip_to_end(self.r, h)
            end = self.r.pos
            zc = ZonedColumn(self.r, h, info, start, end)
            return Deferred(info.name, zc, zones=zc)
        if kind == ColKind.STRING:
            sl = scan_string_column(self.r, n_present, self.ctx.dense,
                                    end=info.start + info.length if info.length >= 0 else None)
            make_filter = make_runs = make_coded = None
            if isinstance(sl, StringSlices) and sl.is_dict:
                vt = info.arrow_type.value_type if pa.types.is_dictionary(info.arrow_type) else info.arrow_type
                if not pa.types.is_null(vt):
                    make_coded = lambda: slices_to_coded(sl, vt, bitmap, valid)  # noqa: E731
                    if valid is None:
                        make_filter = lambda: slices_to_dictionary(sl, vt)  # noqa: E731
                        make_runs = lambda: slices_to_runs(sl, vt)  # noqa: E731
            return Deferred(info.name, lambda rows: self._strings(info, sl, valid, bitmap, rows), make_filter,
                            make_runs=make_runs, make_coded=make_coded)
        if kind in (ColKind.INT, ColKind.UINT):
            # Checked now, unpacked when materialised: on the decode threads, and for a
            # selective filter only at the surviving rows where the codec allows.
            payload = scan_int(self.r, n_present, self.copy)
            dtype = np.int64 if kind == ColKind.INT else np.uint64
            make_runs = None
            if valid is None and payload.has_runs:
                make_runs = lambda: _run_column(info, payload, dtype)  # noqa: E731
            return Deferred(info.name, lambda rows: _payload_array(info, payload, dtype, valid, bitmap, rows),
                            payload=(payload, n, bitmap, n_present), make_runs=make_runs)
        if kind == ColKind.FLOAT64:
            # Checked now; ALP reconstructs when materialised, for a filter only its rows.
            payload = scan_float(self.r, n_present, self.copy)
            return Deferred(info.name, lambda rows: _payload_array(info, payload, np.float64, valid, bitmap, rows))
        if kind == ColKind.FLOAT32:
            bits = decode_int_payload(self.r, n=n_present)
            if n_present and int(bits.max()) > 0xFFFFFFFF:
                raise CorruptDataError("float32 column holds a bit pattern wider than 32 bits", offset=self.r.pos)
            vals = bits.astype(np.uint32).view(np.float32)
        elif kind == ColKind.BOOL:
            vals = decode_bool_payload(self.r, n=n_present)
        elif kind == ColKind.TIME:
            sec, nsec, at = self._time_parts(n_present)
            if valid is None:
                return Deferred(info.name, _TimeColumn(self, info, sec, nsec, at))
            vals = self._combine(info, sec, nsec, at, in_place=True)
        else:  # pragma: no cover - header validation rejects other kinds
            raise CorruptDataError(f"unexpected column kind {kind}")
        return Deferred(info.name, lambda rows: to_arrow(vals, valid, rows, info.arrow_type, bitmap))

    def _time_parts(self, n: int) -> tuple[np.ndarray, np.ndarray, int]:
        at = self.r.pos
        sec = decode_int_payload(self.r, n=n).astype(np.int64, copy=False)
        nsec = decode_int_payload(self.r, n=n)
        return sec, nsec, at

    def _combine(self, info: ColumnInfo, sec: np.ndarray, nsec: np.ndarray, at: int, *, in_place: bool) -> np.ndarray:
        """Seconds + nanoseconds -> ticks of the column's unit (into ``sec`` when ``in_place``)."""
        n = len(sec)
        t = info.arrow_type.value_type if pa.types.is_dictionary(info.arrow_type) else info.arrow_type
        unit = t.unit if pa.types.is_timestamp(t) else "ns"  # a categorical of timestamps: its values' unit
        per = _PER_SEC[unit]
        own = in_place and sec.flags.writeable and sec.flags.c_contiguous and sec.dtype == np.int64
        out = sec if own else alloc.empty(n, np.int64)
        status = ck.combine_time_into(
            np.ascontiguousarray(sec), np.ascontiguousarray(nsec, dtype=np.uint64), np.int64(per),
            np.int64(1_000_000_000 // per), out,
        )
        if status < 0:
            raise CorruptDataError(
                f"time column holds a value timestamp[{unit}] cannot represent exactly "
                "(nanoseconds out of range, finer than the unit, or seconds out of range)",
                offset=at,
            )
        return out

    def _strings(self, info: ColumnInfo, sl, valid, bitmap, rows) -> pa.Array:
        typ = info.arrow_type
        if pa.types.is_null(typ):
            if len(sl):
                raise CorruptDataError("a column noted as all-null holds values")
            return pa.nulls(self.h.n_rows if rows is None else len(rows))
        dict_out = pa.types.is_dictionary(typ)
        value_type = typ.value_type if dict_out else typ
        if valid is None:
            if dict_out and isinstance(sl, StringSlices) and sl.is_dict:
                arr = slices_to_dictionary(sl, value_type, rows)
                return arr.cast(typ) if arr.type != typ else arr
            arr = slices_to_arrow(sl, value_type, rows)
            return arr.dictionary_encode().cast(typ) if dict_out else arr
        # Nullable: map output rows to present-value positions.
        if rows is None:
            dense_arr = slices_to_arrow(sl, value_type, None)  # every present value, in order
            if dense_arr.type in OFFSET_TYPES and not dense_arr.null_count:
                arr = spread_strings(dense_arr, bitmap, len(valid))
            else:
                arr = scatter(dense_arr, valid)
        else:
            sel_valid, present_idx = present_positions(bitmap, rows)
            arr = scatter(slices_to_arrow(sl, value_type, present_idx), sel_valid)
        return arr.dictionary_encode().cast(typ) if dict_out else arr


def _payload_array(info: ColumnInfo, payload: IntPayload, dtype: type, valid: np.ndarray | None,
               bitmap: np.ndarray | None, rows: np.ndarray | None) -> pa.Array:
    """An integer or float column's Arrow array: every row, or only ``rows`` taken from the payload."""
    if rows is None:
        return to_arrow(payload.values().astype(dtype, copy=False), valid, None, info.arrow_type, bitmap)
    if valid is None:
        return to_arrow(payload.take(rows).astype(dtype, copy=False), None, None, info.arrow_type)
    sel_valid, present = present_positions(bitmap, rows)
    return present_to_arrow(payload.take(present).astype(dtype, copy=False), sel_valid, info.arrow_type)


def _run_column(info: ColumnInfo, payload: IntPayload, dtype: type) -> RunColumn | None:
    """A null-free integer column as runs, while its payload keeps them unexpanded."""
    runs = payload.runs()
    if runs is None:  # expanded meanwhile (another use of the column)
        return None
    values, ends = runs
    return RunColumn(to_arrow(values.astype(dtype, copy=False), None, None, info.arrow_type), ends)


_ZONE_KINDS = (ColKind.INT, ColKind.UINT, ColKind.FLOAT64)


class ZonedColumn:
    """An F1 zone-chunked column: zones decode on demand and are cached.

    ``candidate_zones(lo, hi)`` lets a filter skip zones whose zone map rules out
    every row; materialising selected rows decodes only the zones they fall in.
    """

    def __init__(self, r: ByteReader, h, info: ColumnInfo, start: int, end: int) -> None:
        self.r = ByteReader(r.buf, start, end)  # a private cursor: zones are read out of order later
        self.r.column = info.name
        self.h, self.info = h, info
        self.decoded: dict[int, np.ndarray] = {}
        self.zones_decoded = 0

    def _zone(self, z: int) -> np.ndarray:
        if z not in self.decoded:
            from ..codecs.zone import _decode_zone

            self.decoded[z] = _decode_zone(self.r, self.h, z)
            self.zones_decoded += 1
        return self.decoded[z]

    def candidate_zones(self, lo: float, hi: float) -> np.ndarray:
        return zones_for_range(self.h, lo, hi)

    def row_mask(self, zones: np.ndarray) -> np.ndarray:
        return np.repeat(zones, self.h.blk)[: self.h.n]

    def values(self, rows: np.ndarray | None) -> np.ndarray:
        h = self.h
        if rows is None:
            return np.concatenate([self._zone(z) for z in range(h.zones)]) if h.zones else np.zeros(0, dtype_of(h))
        out = np.empty(len(rows), dtype=dtype_of(h))
        zone_of = rows // h.blk
        for z in np.unique(zone_of):
            sel = zone_of == z
            out[sel] = self._zone(int(z))[rows[sel] - int(z) * h.blk]
        return out

    def __call__(self, rows: np.ndarray | None) -> pa.Array:
        return to_arrow(self.values(rows), None, None, self.info.arrow_type)


class _ResidualColumn:
    """A residual (nested) column: Python values back to the noted Arrow type."""

    def __init__(self, info: ColumnInfo, values: list) -> None:
        self.info, self.values = info, values

    def __call__(self, rows: np.ndarray | None) -> pa.Array:
        vals = self.values if rows is None else [self.values[i] for i in rows]
        if self.info.arrow_type is None:
            try:
                return pa.array(vals)
            # OverflowError: ints no single Arrow int type holds (-1 next to 2**64 - 1).
            except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError) as exc:
                raise CorruptDataError(f"residual values do not form one Arrow type: {exc}",
                                       column=self.info.name) from None
        return residual_to_arrow(vals, self.info.arrow_type, self.info.name)


class _TimeColumn:
    """Materialise a non-null time column: all rows once (cached), or just the selected ones."""

    def __init__(self, dec: ColumnDecoder, info: ColumnInfo, sec: np.ndarray, nsec: np.ndarray, at: int) -> None:
        self.dec, self.info, self.sec, self.nsec, self.at = dec, info, sec, nsec, at
        self.full: np.ndarray | None = None

    def __call__(self, rows: np.ndarray | None) -> pa.Array:
        if rows is None:
            if self.full is None:  # the seconds array is used up by the in-place combine
                self.full = self.dec._combine(self.info, self.sec, self.nsec, self.at, in_place=True)
            vals = self.full
        elif self.full is not None:
            vals = self.full[rows]
        else:
            vals = self.dec._combine(self.info, self.sec[rows], self.nsec[rows], self.at, in_place=True)
        return to_arrow(vals, None, None, self.info.arrow_type)


def scan_level(r: ByteReader, h: ColStructHeader, ctx, wanted: set[str], *, copy: bool,
               independent: bool) -> dict[str, Deferred]:
    """Scan the ``wanted`` bodies of one level of a batch of levels, leaving ``r`` at the
    level's end: every body is walked (keeping the Dense state in step for later
    levels) unless the batch's levels are ``independent`` and this one has a column
    index, when the others are sought past."""
    seek = independent and h.has_index
    scanned = ColumnDecoder(r, h, ctx, copy=copy).run(wanted, walk_all=not seek)
    if seek:
        r.pos = h.end
    return scanned


def _may_touch_state(info: ColumnInfo) -> bool:
    return info.kind == ColKind.STRING


def _body_touches_state(r: ByteReader, info: ColumnInfo, n_rows: int) -> bool:
    """Whether a string body is per-value (Dense state tags) and so must be replayed."""
    if info.kind != ColKind.STRING or info.length == 0:
        return False
    at = info.start + (((n_rows + 7) >> 3) if info.nullable else 0)
    if at >= info.start + info.length:
        return False
    return r.buf[at] not in STR_BLOCK_TAGS


__all__ = ["ColumnDecoder", "ColStructHeader", "ColumnInfo", "read_header", "scan_level", "DecodeError"]
