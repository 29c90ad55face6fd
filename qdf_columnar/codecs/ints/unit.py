"""The contract of an integer codec unit, and the helpers the units share.

A unit is an object with a ``name`` (the ``force=`` spelling and the picker's plan
name), a ``reference`` name (what ``qdf.explain`` prints), its QPack ``tag``, and four
methods:

* ``estimate(stats, to_beat)``: the exact payload size (PFOR: Go's conservative upper
  bound) as a :class:`Plan`, or None when the codec's gate fails or it cannot beat
  ``to_beat`` bytes;
* ``encode(out, stats, plan, child)``: append the payload for a plan ``estimate`` gave;
* ``read(r, expect, copy, depth, child)``: with ``r`` just after the tag, check the
  payload's structure, leave ``r`` after it and return an :class:`IntPayload` whose
  values may be decoded later (``take`` answers selected rows where the codec can);
* ``skip(r, expect, depth, child)``: the same checks, nothing decoded or allocated;
* ``capped(plan)``: whether the payload's body does not bound its row count, so the
  decoder caps it at MAX_ROWS and the driver writes raw above that.

``child`` is how a container codec (F0 PackBlock) reaches the picker and the reader for
the payloads it holds, without importing the registry that imports it. Leaf codecs ignore it.
Kernels report problems as status codes; :func:`status` turns them into
TruncatedError / CorruptDataError carrying the byte offset.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from qdf_kernels import columns as ck
from qdf_kernels._status import ERR_CORRUPT, ERR_TRUNCATED

from ...columns import alloc
from ...errors import CorruptDataError, TruncatedError
from ...format.reader import ByteReader
from ...format.tags import Kind
from ..stats import MASK64, IntStats

#: qpackMaxStandaloneCount: the cap for payloads whose body does not bound n.
MAX_ROWS = 1 << 24
#: qpackForMaxBits: the packer's 64-bit accumulator bound.
FOR_MAX_BITS = 56
#: FOR, Delta, RLE, Dict and PFOR carry the 64-bit kinds only.
CODEC_KINDS = (int(Kind.I64), int(Kind.U64))
EMPTY_U64 = np.empty(0, dtype=np.uint64)


@dataclass(frozen=True)
class Plan:
    """A chosen codec (its unit's ``name``), its payload size and its bit width."""

    codec: str
    cost: int
    bits: int = 0


class IntPayload:
    """One integer payload, located and checked by a unit's ``read``, decoded on demand.

    ``values()`` is the whole column (decoded once, then kept); ``take(rows)`` the values
    at ascending row numbers of the payload, straight from the encoded bytes when the
    unit supplies a ``take`` (the other rows are never unpacked), else from ``values()``;
    ``gather(table, out)`` a dictionary's entries by these values as codes, straight
    from the encoded bytes when the unit can (:attr:`gathers`), else from ``values()``;
    ``runs()`` the payload as runs (one value and the end row of each run), when the
    unit holds runs it has not expanded.
    """

    __slots__ = ("_decode", "_take", "_values", "_gather", "_runs")

    def __init__(self, decode: Callable[[], np.ndarray] | None = None,
                 take: Callable[[np.ndarray], np.ndarray] | None = None, values: np.ndarray | None = None,
                 gather: Callable[[np.ndarray, np.ndarray], int] | None = None,
                 runs: Callable[[], tuple[np.ndarray, np.ndarray]] | None = None) -> None:
        self._decode = decode
        self._take = take
        self._values = values
        self._gather = gather
        self._runs = runs

    @property
    def decoded(self) -> bool:
        """Whether the values are already decoded (the codec decodes while it checks)."""
        return self._values is not None

    def values(self) -> np.ndarray:
        if self._values is None:
            assert self._decode is not None
            self._values = self._decode()
        return self._values

    def take(self, rows: np.ndarray) -> np.ndarray:
        if self._take is None or self._values is not None:
            return self.values()[rows]
        return self._take(rows)

    @property
    def has_runs(self) -> bool:
        """Whether :meth:`runs` answers (the unit keeps runs and nothing is expanded yet)."""
        return self._runs is not None and self._values is None

    def runs(self) -> tuple[np.ndarray, np.ndarray] | None:
        """(value of each run, the row each run ends before: ascending int64, the last one
        the row count) while the values are kept as runs, else None: a filter then
        compares once per run instead of once per row."""
        if self._runs is None or self._values is not None:
            return None
        return self._runs()

    @property
    def gathers(self) -> bool:
        """Whether :meth:`gather` can expand codes straight from the encoded bytes (the
        unit supplies it and nothing is decoded yet)."""
        return self._gather is not None and self._values is None

    def gather(self, table: np.ndarray, out: np.ndarray) -> int:
        """``out[i] = table[value i]`` for every value: the number of values, or a negative
        status when a value is outside ``table`` (or ``out`` is not one slot a value).
        Straight from the encoded bytes while :attr:`gathers`, else from the decoded
        values by one pass that checks each of them (``table`` read-only, as the
        callers pass it: one compiled form)."""
        if self.gathers:
            assert self._gather is not None
            return self._gather(table, out)
        codes = np.ascontiguousarray(self.values()).astype(np.uint64, copy=False)
        if len(codes) != len(out):
            return ERR_CORRUPT
        view = codes.view()
        view.flags.writeable = False  # the kernels see read-only inputs: one compiled form
        return int(ck.dictionary_take_into(view, table, out))


class ChildEncoder(Protocol):
    """How a container codec has the payloads inside it picked and written."""

    def encode(self, out: bytearray, u: np.ndarray, signed: bool) -> None: ...


class ChildReader(Protocol):
    """How a container codec reads (or skips) the payloads inside it."""

    def read(self, r: ByteReader, expect: int | None, copy: bool, depth: int) -> np.ndarray: ...

    def skip(self, r: ByteReader, expect: int | None, depth: int) -> None: ...


class IntCodec(Protocol):
    """What every integer codec unit provides (see the module docstring)."""

    name: str
    reference: str
    tag: int

    def estimate(self, s: IntStats, to_beat: int | None) -> Plan | None: ...

    def encode(self, out: bytearray, s: IntStats, plan: Plan, child: ChildEncoder) -> None: ...

    def read(self, r: ByteReader, expect: int | None, copy: bool, depth: int, child: ChildReader) -> IntPayload: ...

    def skip(self, r: ByteReader, expect: int | None, depth: int, child: ChildReader) -> None: ...

    def capped(self, plan: Plan) -> bool: ...


# ----------------------------------------------------------------- shared helpers
def kind64(signed: bool) -> int:
    """The kind byte of the 64-bit family the codecs carry."""
    return int(Kind.I64 if signed else Kind.U64)


def read_kind64(r: ByteReader, tag: int) -> bool:
    """Read the kind byte after ``tag``; True for int64, False for uint64, else CorruptDataError."""
    at = r.pos
    kind = r.u8("a kind byte")
    if kind not in CODEC_KINDS:
        raise r.corrupt(f"kind 0x{kind:02x} is not allowed under tag 0x{tag:02x}", at)
    return kind == Kind.I64


def status(r: ByteReader, st: int, what: str, offset: int) -> None:
    """Raise for a negative kernel status: truncated input or an inconsistent payload."""
    if st == ERR_TRUNCATED:
        raise TruncatedError(f"input ends inside {what}", column=r.column, offset=offset)
    if st < 0:
        raise CorruptDataError(f"inconsistent {what}", column=r.column, offset=offset)


def count(r: ByteReader, what: str, expect: int | None) -> tuple[int, int]:
    """A payload's element count and its offset, checked against the expected rows."""
    start = r.pos
    c = r.uvarint(what)
    if expect is not None and c != expect:
        raise r.corrupt(f"{what} is {c} but the column has {expect} rows", start)
    return c, start


def cap(r: ByteReader, c: int, expect: int | None, what: str, start: int) -> None:
    """Payloads whose size does not grow with n may not declare more than MAX_ROWS."""
    if expect is None and c > MAX_ROWS:
        raise r.corrupt(f"{what} {c} exceeds the limit {MAX_ROWS} for a constant body", start)


def body(r: ByteReader, nbytes: int, what: str, start: int) -> np.ndarray:
    """The next ``nbytes`` as a uint8 view, TruncatedError (at ``start``) if they are not there."""
    if nbytes > r.remaining:
        raise TruncatedError(
            f"{what} needs {nbytes} body bytes but only {r.remaining} remain", column=r.column, offset=start
        )
    return r.take_array(nbytes, what)


def output(c: int, signed: bool) -> tuple[np.ndarray, np.ndarray]:
    """A fresh int64 / uint64 output of ``c`` values and its uint64 view."""
    arr = alloc.empty(c, np.int64 if signed else np.uint64)
    return arr, arr.view(np.uint64)


def wire_value(raw: int, signed: bool) -> np.uint64:
    """A header uvarint as a uint64 bit pattern (unzigzag for signed kinds)."""
    v = ((raw >> 1) ^ -(raw & 1)) & MASK64 if signed else raw
    return np.uint64(v)


def read_bits(r: ByteReader) -> int:
    """A bit-width byte, at most FOR_MAX_BITS."""
    at = r.pos
    b = r.u8("a bit width")
    if b > FOR_MAX_BITS:
        raise r.corrupt(f"bit width {b} exceeds {FOR_MAX_BITS}", at)
    return b


def zero_body(size: int) -> np.ndarray:
    """A zeroed scratch buffer the packing kernels write into."""
    return np.zeros(max(size, 0), dtype=np.uint8)
