"""The contract of a float codec unit, and the helpers the units share.

A unit has a ``name`` (the ``force=`` spelling), a ``reference`` name (what
``qdf.explain`` prints), the ``wire`` (tag, kind) pairs it reads, whether it decodes at
memory speed (``memory_speed``: the balanced mode uses only those), and methods:

* ``estimate(a, f, to_beat=None)``: a :class:`FloatPlan` whose ``cost`` is exact
  (``exact=True``, often because the payload was written to measure it) or an upper
  bound, or None when the codec's gate fails; a unit that writes its payload to
  measure it may also return None once that payload is certainly larger than
  ``to_beat`` bytes (the best cost so far: such an exact plan is never kept);
* ``force(a, f)``: the plan without the gates (tests and ``force=``);
* ``encode(out, a, f, plan)``: append the payload of a plan;
* ``read(r, f, kind, expect)``: with ``r`` just after the kind byte, the values as a
  fresh array (raw: a view when ``copy`` is off), leaving ``r`` after the payload;
* ``skip(r, f, kind)``: the same checks, nothing decoded;
* optionally ``scan(r, f, kind, expect, copy)``: ``read``'s checks, the values left to
  an :class:`..ints.unit.IntPayload` that decodes them (or only ``take(rows)``) on
  first use; :func:`..floatdec.scan_float` wraps ``read`` for units without one.

The picker (:func:`..floatenc.encode_floats`) keeps the smallest candidate by the
rule :func:`replaces` states.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from qdf_kernels._status import ERR_TRUNCATED

from ...errors import TruncatedError
from ...format.reader import ByteReader
from ...format.tags import Kind
from ...format.varint import uvarint_len, write_uvarint
from ..ints.unit import FOR_MAX_BITS, MAX_ROWS, count

#: Shared with the integer units (the same row cap, width bound and count check).
__all__ = ["FOR_MAX_BITS", "MAX_ROWS", "count"]

#: E7 / F4 kind 0x0F: Chimp128 under E7, ALP-RD float64 under F4.
KIND_0F = int(Kind.CHIMP_F64)


@dataclass(frozen=True)
class Fmt:
    """Per-width constants: float dtype, bit-pattern dtype, bytes, kind, sign mask."""

    fdt: np.dtype
    udt: np.dtype
    width: int
    kind: int
    sign: int


F64 = Fmt(np.dtype("<f8"), np.dtype("<u8"), 8, int(Kind.F64), 1 << 63)
F32 = Fmt(np.dtype("<f4"), np.dtype("<u4"), 4, int(Kind.F32), 1 << 31)


def fmt_of(a: np.ndarray) -> Fmt:
    return F64 if a.dtype.itemsize == 8 else F32


@dataclass(frozen=True)
class FloatPlan:
    """A candidate: its unit's ``name``, its size (``exact`` or an upper bound), the
    unit's own parameters, and the payload when writing it was how it was measured."""

    codec: str
    cost: int
    exact: bool
    detail: Any = None
    payload: bytes | None = None


def replaces(new: FloatPlan, best: FloatPlan, measure: Any) -> FloatPlan | None:
    """The plan to keep when ``new`` challenges ``best``, or None to keep ``best``.

    A smaller cost wins. An exact cost also wins a tie with an upper bound (the bound
    may only be higher than the truth). When both are upper bounds, ``measure(plan)``
    writes each and the really smaller one wins (ties keep ``best``). These are the Go
    picker's rules (pickF64Codec, then the ALP-RD comparison), stated once.
    """
    if new.cost < best.cost:
        if new.exact or best.exact:
            return new
        a, b = measure(new), measure(best)
        return a if len(a.payload) < len(b.payload) else b
    if new.cost == best.cost and new.exact and not best.exact:
        return new
    return None


class FloatCodec(Protocol):
    """What every float codec unit provides (see the module docstring)."""

    name: str
    reference: str
    wire: tuple[tuple[int, int], ...]
    memory_speed: bool

    def estimate(self, a: np.ndarray, f: Fmt, to_beat: int | None = None) -> FloatPlan | None: ...

    def force(self, a: np.ndarray, f: Fmt) -> FloatPlan: ...

    def encode(self, out: bytearray, a: np.ndarray, f: Fmt, plan: FloatPlan) -> None: ...

    def read(self, r: ByteReader, f: Fmt, kind: int, expect: int | None, copy: bool) -> np.ndarray: ...

    def skip(self, r: ByteReader, f: Fmt, kind: int) -> None: ...


# ----------------------------------------------------------------- shared helpers
def raw_size(n: int, width: int) -> int:
    return 2 + uvarint_len(n) + width * n


def check(r: ByteReader, rc: int, what: str, start: int) -> None:
    """Raise for a negative kernel status: a body ending early, or an inconsistent one."""
    if rc == ERR_TRUNCATED:
        raise TruncatedError(f"{what} ends before its declared values", column=r.column, offset=start)
    if rc < 0:
        raise r.corrupt(f"{what} is inconsistent", start)


def exception_count(r: ByteReader, c: int, each: int) -> int:
    """An exception count, at most ``c`` and with at least ``each`` bytes per exception left."""
    at = r.pos
    k = r.uvarint("exception count")
    if k > c:
        raise r.corrupt(f"exception count {k} exceeds the element count {c}", at)
    if k * each > r.remaining:
        raise TruncatedError(f"{k} exceptions need at least {k * each} bytes", column=r.column, offset=at)
    return k


def header(out: bytearray, tag: int, kind: int, n: int) -> None:
    out += bytes((tag, kind))
    write_uvarint(out, n)
