"""Read dictionary levels (:mod:`.dict_write`): codes in level 0, values in a level of their own.

A dictionary column decodes late: a filter runs on the dictionary once per distinct
value and gathers the verdict through the codes (the Arrow ``DictionaryArray`` the
evaluator already handles), and only the surviving rows' codes are expanded, into the
plain column or, with ``categories=``, into an Arrow dictionary array without
expanding at all.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import CorruptDataError, QdfError
from ..format.reader import ByteReader
from ..format.tags import ColKind, ContainerTag
from .colstruct_read import ColStructHeader, Deferred, read_header, scan_level


@dataclass
class DictionaryLevel:
    """One dictionary level as read: its values (None when not asked for) and their type."""

    values: pa.Array | None
    arrow_type: pa.DataType
    logical: str  # the query layer's kind of the values ("int", "string", ...)


def check_dictionary_columns(h0: ColStructHeader, flat: list[str]) -> None:
    """Every dictionary column of level 0's note is a flat uint column of level 0."""
    kinds = {c.name: c.kind for c in h0.columns}
    for name in h0.dicts or []:
        if name not in flat or kinds.get(name) != ColKind.UINT:
            raise CorruptDataError(f"the schema note lists {name!r} as a dictionary column, but level 0 has no "
                                   "flat uint column of that name", column=name)


def read_dictionary_levels(r: ByteReader, ctx, names: list[str], wanted: set[str], *,
                           copy: bool, independent: bool = False) -> dict[str, DictionaryLevel]:
    """Read one dictionary level per name of ``names`` (in order), decoding the ``wanted``
    ones (and walking the others unless the batch's levels are ``independent``)."""
    out: dict[str, DictionaryLevel] = {}
    for name in names:
        at = r.pos
        if r.u8(f"the dictionary level of {name!r}") != ContainerTag.COL_STRUCT:
            raise CorruptDataError(f"the dictionary level of {name!r} is not a columnar container", offset=at,
                                   column=name)
        h = read_header(r, ctx)
        if h.shred is not None or h.dicts is not None or h.names != [name]:
            raise CorruptDataError(f"the dictionary level of {name!r} has columns {h.names}, expected [{name!r}]",
                                   offset=at, column=name)
        info = h.columns[0]
        if info.nullable:
            raise CorruptDataError(f"the dictionary level of {name!r} holds nulls", offset=at, column=name)
        scanned = scan_level(r, h, ctx, {name} if name in wanted else set(), copy=copy, independent=independent)
        if h.has_index and r.pos != h.end:
            raise CorruptDataError("dictionary level ends before its column index says", offset=r.pos, column=name)
        values = scanned[name](None) if name in wanted else None
        out[name] = DictionaryLevel(values, info.arrow_type, h.logical_schema()[name])
    return out


#: numpy dtypes that hold fixed-width Arrow values bit for bit, by bit width.
_FIXED_WIDTH = {8: np.dtype(np.uint8), 16: np.dtype(np.uint16), 32: np.dtype(np.uint32), 64: np.dtype(np.uint64)}


def _fixed_width(t: pa.DataType) -> bool:
    return pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_temporal(t)


class DictionaryColumn:
    """A scanned dictionary column, with the interface of :class:`.colstruct_read.Deferred`."""

    __slots__ = ("name", "codes", "values", "as_dictionary", "zones")

    def __init__(self, name: str, codes: Deferred, values: pa.Array, *, as_dictionary: bool) -> None:
        self.name = name
        self.codes = codes
        self.values = values
        self.as_dictionary = as_dictionary
        self.zones = None

    def _codes(self, rows: np.ndarray | None) -> pa.Array:
        """The uint64 codes of ``rows``, each checked to be below the dictionary's size."""
        codes = self.codes(rows)
        if len(codes) > codes.null_count:
            top = pc.max(codes).as_py()
            if top >= len(self.values):
                raise CorruptDataError(f"dictionary code {top} is outside a dictionary of {len(self.values)} values",
                                       column=self.name)
        return codes

    def _indices(self, rows: np.ndarray | None) -> pa.Array:
        return self._codes(rows).cast(pa.int32())

    def _expand(self, rows: np.ndarray | None) -> pa.Array:
        """The values of ``rows``. Fixed-width values are gathered with numpy straight from
        the codes' buffer (a third of pyarrow's take on uint64 codes cast to int32)."""
        values = self.values
        width = _FIXED_WIDTH.get(values.type.bit_width) if _fixed_width(values.type) else None
        codes = self._codes(rows)
        if width is None or values.null_count or codes.offset or values.offset:
            return values.take(codes.cast(pa.int32()))
        n = len(codes)
        idx = np.frombuffer(codes.buffers()[1], dtype=np.int64, count=n)
        table = np.frombuffer(values.buffers()[1], dtype=width, count=len(values))
        # Null slots may hold any code: clip keeps them in range (their value is masked).
        out = np.take(table, idx, mode="clip")
        return pa.Array.from_buffers(values.type, n, [codes.buffers()[0] if codes.null_count else None,
                                                      pa.py_buffer(out)], null_count=codes.null_count)

    def _dictionary(self, rows: np.ndarray | None) -> pa.DictionaryArray:
        return pa.DictionaryArray.from_arrays(self._indices(rows), self.values)

    def __call__(self, rows: np.ndarray | None = None) -> pa.Array:
        try:
            if self.as_dictionary:
                return self._dictionary(rows)
            return self._expand(rows)
        except QdfError as exc:
            raise exc.with_location(column=self.name) from None

    def for_filter(self) -> pa.Array:
        return self._dictionary(None)

    def for_filter_rows(self, rows: np.ndarray) -> pa.Array:
        return self._dictionary(rows)

    def for_filter_all(self, rows: np.ndarray | None = None) -> pa.Array:
        return self._dictionary(rows)


__all__ = ["DictionaryColumn", "DictionaryLevel", "check_dictionary_columns", "read_dictionary_levels"]
