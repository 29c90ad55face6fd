"""Read dictionary levels (:mod:`.dict_write`): codes in level 0, values in a level of their own.

A dictionary column decodes late: a filter runs on the dictionary once per distinct
value and gathers the verdict through the codes (the Arrow ``DictionaryArray`` the
evaluator already handles), and only the surviving rows' codes are expanded, into the
plain column or, with ``categories=``, into an Arrow dictionary array without
expanding at all.
"""

from __future__ import annotations

from collections.abc import Container
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from qdf_kernels import columns as ck

from ..columns import alloc
from ..columns.buffers import checked_dictionary, validity_mask
from ..columns.coded import CodedColumn
from ..columns.runs import RunColumn
from ..errors import CorruptDataError, QdfError
from ..format.reader import ByteReader
from ..format.tags import ColKind, ContainerTag
from .bits import unpack_mask
from .colstruct_read import ColStructHeader, Deferred, read_header, scan_level, widen_strings
from .numeric_arrow import OFFSET_TYPES as _OFFSET_TYPES
from .numeric_arrow import (
    bits_dtype,
    null_fill,
    read_only,
    scatter,
    spread_present,
    spread_strings,
    validity_buffer,
)
from .strcol_arrow import expand_entries


class LevelValues:
    """A dictionary level's values, decoded whole on first use (:meth:`all`), or only the
    entries a selective read refers to (:meth:`entries`) while nothing asked for all of
    them: a filter that keeps a few rows of a column with a large string table then
    decodes (FSST, UTF-8 checks) only the strings it returns."""

    __slots__ = ("_deferred", "size", "arrow_type", "_all")

    def __init__(self, deferred: Deferred, size: int, arrow_type: pa.DataType) -> None:
        self._deferred = deferred
        self.size = size
        self.arrow_type = arrow_type
        self._all: pa.Array | None = None

    @property
    def decoded(self) -> bool:
        return self._all is not None

    def all(self) -> pa.Array:
        if self._all is None:
            self._all = self._deferred(None)
        return self._all

    def entries(self, idx: np.ndarray) -> pa.Array:
        """The entries at ascending, distinct positions ``idx`` (each below :attr:`size`)."""
        if self._all is not None:
            return self._all.take(pa.array(idx))
        return self._deferred(idx)


@dataclass
class DictionaryLevel:
    """One dictionary level as read: its values (None when not asked for) and their type."""

    values: LevelValues | None
    arrow_type: pa.DataType | None  # None (with logical) for a level only sought past
    logical: str | None  # the query layer's kind of the values ("int", "string", ...)


def check_dictionary_columns(h0: ColStructHeader, flat: list[str]) -> None:
    """Every dictionary column of level 0's note is a flat uint column of level 0."""
    kinds = {c.name: c.kind for c in h0.columns}
    for name in h0.dicts or []:
        if name not in flat or kinds.get(name) != ColKind.UINT:
            raise CorruptDataError(f"the schema note lists {name!r} as a dictionary column, but level 0 has no "
                                   "flat uint column of that name", column=name)


def read_dictionary_levels(r: ByteReader, ctx, names: list[str], wanted: set[str], *,
                           copy: bool, independent: bool = False,
                           widen: Container[str] = ()) -> dict[str, DictionaryLevel]:
    """Read one dictionary level per name of ``names`` (in order), decoding the ``wanted``
    ones (and walking the others unless the batch's levels are ``independent``);
    the string values of those named in ``widen`` as ``large_string`` (:func:`.colstruct_read.widen_strings`).

    A level not wanted in an independent batch with a column index is sought past after
    its names and index (its note and types are not parsed): it comes back with no
    values and no types."""
    out: dict[str, DictionaryLevel] = {}
    seek = independent and bool(ctx.flags & 0x08)
    for name in names:
        at = r.pos
        if r.u8(f"the dictionary level of {name!r}") != ContainerTag.COL_STRUCT:
            raise CorruptDataError(f"the dictionary level of {name!r} is not a columnar container", offset=at,
                                   column=name)
        if seek and name not in wanted:
            h = read_header(r, ctx, light=True)
            if h.names != [name]:
                raise CorruptDataError(f"the dictionary level of {name!r} has columns {h.names}, "
                                       f"expected [{name!r}]", offset=at, column=name)
            r.pos = h.end
            out[name] = DictionaryLevel(None, None, None)
            continue
        h = read_header(r, ctx)
        if h.shred is not None or h.dicts is not None or h.names != [name]:
            raise CorruptDataError(f"the dictionary level of {name!r} has columns {h.names}, expected [{name!r}]",
                                   offset=at, column=name)
        info = h.columns[0]
        if name in widen:
            widen_strings([info])
        if info.nullable:
            raise CorruptDataError(f"the dictionary level of {name!r} holds nulls", offset=at, column=name)
        scanned = scan_level(r, h, ctx, {name} if name in wanted else set(), copy=copy, independent=independent)
        if h.has_index and r.pos != h.end:
            raise CorruptDataError("dictionary level ends before its column index says", offset=r.pos, column=name)
        values = LevelValues(scanned[name], h.n_rows, info.arrow_type) if name in wanted else None
        out[name] = DictionaryLevel(values, info.arrow_type, h.logical_schema()[name])
    return out


class DictionaryColumn:
    """A scanned dictionary column, with the interface of :class:`.colstruct_read.Deferred`."""

    __slots__ = ("name", "codes", "level", "as_dictionary", "zones")

    def __init__(self, name: str, codes: Deferred, level: LevelValues, *, as_dictionary: bool) -> None:
        self.name = name
        self.codes = codes
        self.level = level
        self.as_dictionary = as_dictionary
        self.zones = None

    @property
    def values(self) -> pa.Array:
        """Every entry of the dictionary (decoded on first use)."""
        return self.level.all()

    def _codes(self, rows: np.ndarray | None) -> pa.Array:
        """The uint64 codes of ``rows``, each checked to be below the dictionary's size."""
        codes = self.codes(rows)
        if len(codes) > codes.null_count:
            self._check_top(pc.max(codes).as_py())
        return codes

    def _check_top(self, top: int) -> None:
        if top >= self.level.size:
            raise self._outside(top)

    def _outside(self, top: int) -> CorruptDataError:
        return CorruptDataError(f"dictionary code {top} is outside a dictionary of {self.level.size} values",
                                column=self.name)

    def _referenced(self, rows: np.ndarray) -> pa.Array | None:
        """The values of ``rows`` from only the entries they refer to, for a string table
        not decoded yet and larger than the selection; None otherwise."""
        level = self.level
        if level.decoded or len(rows) >= level.size or level.arrow_type not in _OFFSET_TYPES:
            return None
        idx, valid = _present_codes(self._codes(rows))
        used, inverse = np.unique(idx, return_inverse=True)
        dense = level.entries(used.astype(np.int64)).take(pa.array(inverse.astype(np.int32, copy=False)))
        return dense if valid is None else scatter(dense, valid)

    def _indices(self, rows: np.ndarray | None) -> pa.Array:
        return self._codes(rows).cast(pa.int32())

    def _expand(self, rows: np.ndarray | None) -> pa.Array:
        """The values of ``rows``. Fixed-width values are gathered by one kernel straight
        from the codes' buffer, which also checks each code against the table (a third
        of pyarrow's take on uint64 codes cast to int32, and no separate max)."""
        if rows is not None:
            referenced = self._referenced(rows)
            if referenced is not None:
                return referenced
        values = self.values
        if values.type in _OFFSET_TYPES and not values.null_count and len(values):
            return self._expand_strings(rows)
        width = bits_dtype(values.type)
        if width is None or values.null_count or values.offset or not len(values):
            return values.take(self._codes(rows).cast(pa.int32()))
        table = np.frombuffer(values.buffers()[1], dtype=width, count=len(values))
        source = getattr(self.codes, "payload", None)
        if rows is None and source is not None and source[0].gathers:  # no code array in between
            payload, n, bitmap, n_present = source
            dense = alloc.empty(n_present, width)
            if payload.gather(table, dense) != n_present:
                raise self._outside(int(payload.values().max()))
            if bitmap is None:
                return pa.Array.from_buffers(values.type, n, [None, pa.py_buffer(dense)])
            out, validity = spread_present(dense, bitmap, n, float_bits=_float_dtype(values.type))
            return pa.Array.from_buffers(values.type, n, [validity, pa.py_buffer(out)], null_count=n - n_present)
        if rows is None and source is not None and source[2] is not None:  # nullable: from the present codes
            payload, n, bitmap, n_present = source
            present = np.ascontiguousarray(payload.values()).astype(np.uint64, copy=False)
            out = alloc.empty(n, width)
            fill, nan = null_fill(out.dtype, _float_dtype(values.type))
            if len(present) != n_present or ck.dictionary_spread_into(
                    present, np.ascontiguousarray(bitmap), table, out, fill) != n_present:
                raise CorruptDataError(f"dictionary codes: a code is outside a dictionary of {len(values)} values, "
                                       "or the presence mask and the code count disagree", column=self.name)
            if nan:
                alloc.mark_nan_under_nulls(out)
            return pa.Array.from_buffers(values.type, n, [validity_buffer(bitmap), pa.py_buffer(out)],
                                         null_count=n - n_present)
        codes = self.codes(rows)
        if codes.offset:
            return values.take(self._codes(rows).cast(pa.int32()))
        n = len(codes)
        idx = np.frombuffer(codes.buffers()[1], dtype=np.uint64, count=n)
        out = alloc.empty(n, width)
        if ck.dictionary_take_into(idx, table, out) != n:
            raise self._outside(int(idx.max()))
        return pa.Array.from_buffers(values.type, n, [codes.buffers()[0] if codes.null_count else None,
                                                      pa.py_buffer(out)], null_count=codes.null_count)

    def _expand_strings(self, rows: np.ndarray | None) -> pa.Array:
        """String / binary values of ``rows``: the present rows' entries gathered by the
        dictionary kernel (which range-checks each code), then spread over the nulls
        without copying the bytes again."""
        values = self.values
        bufs = values.buffers()
        off = np.frombuffer(bufs[1], dtype=_OFFSET_TYPES[values.type])[values.offset: values.offset + len(values) + 1]
        src = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None else np.empty(0, np.uint8)
        binary = values.type in (pa.binary(), pa.large_binary())
        source = getattr(self.codes, "payload", None)
        if rows is None and source is not None:  # from the present codes: none spread over the nulls
            payload, n, bitmap, n_present = source
            present = np.ascontiguousarray(payload.values()).astype(np.uint64, copy=False)
            if len(present) != n_present:
                raise CorruptDataError(f"dictionary codes: {len(present)} codes for {n_present} present rows",
                                       column=self.name)
            try:
                dense = expand_entries(src, off[:-1], np.diff(off), values.type, binary, codes=present, validate=False)
            except CorruptDataError:
                raise self._outside(int(present.max())) from None
            return dense if bitmap is None else spread_strings(dense, bitmap, n)
        idx, valid = _present_codes(self.codes(rows))
        try:
            dense = expand_entries(src, off[:-1], np.diff(off), values.type, binary, codes=idx, validate=False)
        except CorruptDataError:
            raise self._outside(int(idx.max())) from None
        return dense if valid is None else scatter(dense, valid)

    def _dictionary(self, rows: np.ndarray | None) -> pa.DictionaryArray:
        # _codes checked them against the dictionary: no second pass by Arrow.
        return pa.DictionaryArray.from_arrays(self._indices(rows), self.values, safe=False)

    def __call__(self, rows: np.ndarray | None = None) -> pa.Array:
        try:
            if self.as_dictionary:
                return self._dictionary(rows)
            return self._expand(rows)
        except QdfError as exc:
            raise exc.with_location(column=self.name) from None

    def release(self) -> None:
        """:meth:`.colstruct_read.Deferred.release` of the codes: the column was built for
        the last time."""
        release = getattr(self.codes, "release", None)
        if release is not None:
            release()

    def for_filter(self) -> pa.Array | RunColumn | CodedColumn:
        """The codes over the dictionary: one entry per run while the codes are kept as
        runs, else still packed while their payload can be mapped straight through a
        per-entry table, else a DictionaryArray."""
        runs = self.codes.runs()
        if runs is None:
            coded = self._coded()
            return self._dictionary(None) if coded is None else coded
        codes, ends = runs
        if len(codes):
            self._check_top(int(codes.max()))
        return RunColumn(checked_dictionary(codes, self.values), ends)

    def _coded(self) -> CodedColumn | None:
        """The rows as their codes, mapped through a per-entry table by one kernel pass:
        straight from the packed codes while their payload can (PackFor), else from the
        decoded present codes (PFOR, blocks, ...), never as an Arrow dictionary array (no
        int32 cast of the codes, no per-row mask pass over them). None for codes that are
        not an integer payload."""
        source = getattr(self.codes, "payload", None)
        if source is None:
            return None
        payload, n, bitmap, n_present = source

        def lookup(table: np.ndarray) -> np.ndarray:
            dense = alloc.empty(n_present, np.uint8)
            if payload.gather(read_only(table), dense) != n_present:
                raise self._outside(int(payload.values().max()))
            return dense if bitmap is None else spread_present(dense, bitmap, n)[0]

        valid = None if bitmap is None else unpack_mask(bitmap, n, column=self.name)
        return CodedColumn(self.values, n, lookup, valid)

    def for_filter_rows(self, rows: np.ndarray) -> pa.Array:
        return self._dictionary(rows)

    def for_filter_all(self, rows: np.ndarray | None = None) -> pa.Array:
        return self._dictionary(rows)


def _float_dtype(t: pa.DataType) -> np.dtype | None:
    """The numpy float dtype of a float Arrow type (whose bits a gathered table holds), or None."""
    return np.dtype(t.to_pandas_dtype()) if pa.types.is_floating(t) else None


def _present_codes(codes: pa.Array) -> tuple[np.ndarray, np.ndarray | None]:
    """(the uint64 codes of the present rows, which rows are present or None for all)."""
    idx = np.frombuffer(codes.buffers()[1], dtype=np.uint64, count=codes.offset + len(codes))[codes.offset:]
    valid = validity_mask(codes)
    return (idx, None) if valid is None else (idx[valid], valid)


__all__ = ["DictionaryColumn", "DictionaryLevel", "LevelValues", "check_dictionary_columns", "read_dictionary_levels"]
