"""The contract of a string-column body unit, and the facts the units share.

A string column body (qdf-wire-v1.md §2.5, docs/FORMAT.md) is one block, whose first
byte is a :class:`~qdf_columnar.format.tags.StrColTag`, or M per-value Dense strings
(no tag of their own). Each form is a unit with:

* ``name``: the form's name (what ``write_string_column`` returns, the picker's plan name);
* ``tags``: every StrColTag the unit reads, each with the reference name ``qdf.explain``
  prints for it (per-value strings read no tag: ``{}``, and carry a ``reference``);
* ``self_contained``: whether the body neither reads nor changes the Dense intern
  state (every block; not per-value strings), so Options.CASCADE may write it;
* ``compression_only``: whether the picker tries it only with ``fsst=True`` (FSST);
* ``gate(col)``: the reference writer's (``writeStringColumn``) gate for this form: its
  exact-size :class:`StrPlan` when the gate passes, else None;
* ``plan(col, to_beat)``: the form's exact-size plan without the reference's gate, or
  None when the form does not apply or (a lower bound shows) it cannot be strictly
  smaller than ``to_beat`` bytes; a plan may still be larger, the picker compares;
* ``encode(out, col, plan)``: append the body of a plan ``gate`` or ``plan`` gave;
* ``read(r, n, dense, ints, skip=..., end=...)``: with ``r`` at the body's first byte
  (the block tag), check the body, leave ``r`` after it and return its
  :class:`StringSlices` (per-value strings: a list of bytes when a row needed the Python
  reader). ``skip``: only move past the body; ``end``: where the body ends, when a
  column index says so.

Sizes are exact, so the picker's "strictly smaller" comparisons decide the bytes.
``dense`` is the Dense writer or reader state and ``ints`` the QPack integer driver
(:class:`IntCodes`); both are passed in because they live above this layer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from qdf_kernels import strings as sk

from ...format.reader import ByteReader
from ..ints.unit import IntPayload
from .slices import StringSlices

__all__ = ["HEAD_ROWS", "MIN_ROWS", "SAMPLE", "SAMPLE_MAX_PCT", "Column", "IntCodes", "StrPlan", "StringCodec",
           "StringSlices", "high_cardinality_sample", "offsets_data"]

#: The reference's n >= 16 for block forms (dictionary, alphabet packing, raw slab, FSST).
MIN_ROWS = 16
#: The reference's head sample: rows, and the distinct share above which it is high-cardinality.
SAMPLE = 64
SAMPLE_MAX_PCT = 70
#: Rows checked before hashing a whole column (the dictionary and per-value candidates).
HEAD_ROWS = 1024


@dataclass(frozen=True)
class StrPlan:
    """A sized form: its unit's ``name``, its exact size and what its ``encode`` needs."""

    codec: str
    cost: int
    detail: Any = None


class IntCodes(Protocol):
    """The QPack integer driver, for a form whose body holds an integer payload (FC's
    codes). Passed in: the driver imports the registry that imports the units."""

    def encode(self, out: bytearray, values: np.ndarray) -> None: ...

    def scan(self, r: ByteReader, n: int) -> IntPayload: ...


def offsets_data(arr: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """int64 offsets (n+1) and a read-only uint8 view of the data of a string/binary Arrow array.

    The data view is always read-only (Arrow buffers come through writable or not
    depending on where they were allocated), so each kernel has one specialisation.
    """
    if pa.types.is_string(arr.type) or pa.types.is_binary(arr.type):
        off_t = np.int32
    else:
        off_t = np.int64
    bufs = arr.buffers()
    n = len(arr)
    offsets = np.frombuffer(bufs[1], dtype=off_t, count=n + 1, offset=arr.offset * np.dtype(off_t).itemsize)
    data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None else np.zeros(0, np.uint8)
    offsets = offsets.astype(np.int64)
    data = data.view()
    data.flags.writeable = False
    return offsets, data


class Column:
    """A non-null string column's Arrow buffers and the facts the units share (each
    computed once); ``cache`` holds each unit's own facts and plans, by the unit's name,
    so the reference order and the smallest-of pass never size a form twice."""

    def __init__(self, arr: pa.Array, dense: Any, ints: IntCodes, enc: pa.DictionaryArray | None = None) -> None:
        self.arr = arr
        self.n = len(arr)
        self.dense = dense  # wire.dense.DenseWriter: per-value strings size and write through it
        self.ints = ints
        self.offsets, self.data = offsets_data(arr)
        self.binary = pa.types.is_binary(arr.type) or pa.types.is_large_binary(arr.type)
        self.lens = np.diff(self.offsets)
        self.total = int(self.offsets[-1] - self.offsets[0])
        self.cache: dict[str, Any] = {}
        self._bulk: int | None = None
        self._enc: pa.DictionaryArray | None = enc
        self._head_distinct: int | None = None

    @property
    def bulk(self) -> int:
        """sum(uvarint_len(len) + len): the F8 body after its header, and the alphabet raw floor."""
        if self._bulk is None:
            self._bulk = int(sk.uvarint_lens_total(self.offsets))
        return self._bulk

    @property
    def enc(self) -> pa.DictionaryArray:
        """The column dictionary-encoded in first-seen order (as Go's tables)."""
        if self._enc is None:
            self._enc = self.arr.dictionary_encode()
        return self._enc

    def head_distinct(self) -> int:
        """Distinct values among the first HEAD_ROWS rows."""
        if self._head_distinct is None:
            self._head_distinct = int(pc.count_distinct(self.arr.slice(0, HEAD_ROWS)).as_py())
        return self._head_distinct


def high_cardinality_sample(arr: pa.Array, n: int) -> bool:
    """The reference's dictSampleHighCard: > 70 % distinct among the first min(n, 64) rows."""
    m = min(n, SAMPLE)
    return len(pc.unique(arr.slice(0, m))) * 100 > m * SAMPLE_MAX_PCT


class StringCodec(Protocol):
    """What every string-column body unit provides (see the module docstring)."""

    name: str
    tags: dict[int, str]
    self_contained: bool
    compression_only: bool

    def gate(self, col: Column) -> StrPlan | None: ...

    def plan(self, col: Column, to_beat: int | None) -> StrPlan | None: ...

    def encode(self, out: bytearray, col: Column, plan: StrPlan) -> None: ...

    def read(self, r: ByteReader, n: int, dense: Any, ints: IntCodes, *, skip: bool = False,
             end: int | None = None) -> StringSlices | list[bytes]: ...
