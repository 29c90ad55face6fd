"""F4 PackALP (kind 0x0B float64, 0x0A float32): decimals as scaled integers.

Layout: ``F4 kind uvarint(n)``; n > 0: exponent byte ``d`` (0..18; bit 0x80: divide
("exact") reconstruction, float64 only), zigzag uvarint FOR base, bit width,
ceil(n*width/8) body bytes, ``uvarint(excN)``, excN x (uvarint index, raw value).

Plan (Go alpPlanFloat64/32): d in 0..15 picked on an evenly spaced sample (``s[::n//32]``
when n > 32) by ``ceil(w*len/8) + 10*exc`` (6*exc for float32); for float64 each
exponent keeps the cheaper of multiply / divide reconstruction by bytes (13 B per
exception). The estimate charges 5 + width bytes per exception: an upper bound.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
from qdf_kernels import alp as kalp

from ...columns import alloc
from ...errors import CorruptDataError, TruncatedError
from ...format.reader import ByteReader
from ...format.tags import Kind, QPackTag
from ...format.varint import MASK64, uvarint_len, write_uvarint, zigzag
from ..ints.unit import IntPayload
from . import unit
from .unit import FloatPlan, Fmt

ALP_EXACT = 0x80
ALP_MAX_EXP = 18  # the decoder accepts 0..18, the encoder searches 0..15
ALP_SEARCH = 15
# Go builds alpPow10 by repeated *10 (exact through 10**22) and alpInv10 as 1.0/p.
_POW10 = [float(10**i) for i in range(ALP_MAX_EXP + 1)]
_INV10 = [1.0 / p for p in _POW10]
_I64_MAX = (1 << 63) - 1


@dataclass(frozen=True)
class AlpPlan:
    """Go alpFloatPlan: exponent, FOR base, bit width, exception count, divide flag."""

    d: int
    for_min: int
    width: int
    exc: int
    exact: bool


def _width_of(lo: int, hi: int) -> int:
    return 0 if lo > hi else ((hi - lo) & MASK64).bit_length()


def _score(a: np.ndarray, f: Fmt, d: int) -> tuple[int, int, int, bool]:
    """Go alpScoreExp / alpScoreExpF32: (forMin, width, exc, exact) at exponent d."""
    st = np.empty(6, dtype=np.int64)
    kalp.alp_score(a, a.view(f.udt), f.udt.type(f.sign), _POW10[d], _INV10[d], st)
    return _verdict(st.tolist(), f, int(a.shape[0]))


#: 10^d and 10^-d for the exponents the encoder searches, as the kernel takes them.
_SEARCH_POW = np.array(_POW10[: ALP_SEARCH + 1])
_SEARCH_INV = np.array(_INV10[: ALP_SEARCH + 1])


def _scores(a: np.ndarray, f: Fmt) -> list[tuple[int, int, int, bool]]:
    """:func:`_score` at every searched exponent, from one kernel call."""
    st = np.empty((ALP_SEARCH + 1, 6), dtype=np.int64)
    kalp.alp_score_exponents(a, a.view(f.udt), f.udt.type(f.sign), _SEARCH_POW, _SEARCH_INV, st)
    n = int(a.shape[0])
    return [_verdict(row, f, n) for row in st.tolist()]


def _verdict(st: list[int], f: Fmt, n: int) -> tuple[int, int, int, bool]:
    mn_m, mx_m, exc_m, mn_d, mx_d, exc_d = st
    exact = False
    if f.width == 8:
        # Reconstruction chosen by bytes (13 B per exception); ties keep multiply.
        cost_d = (_width_of(mn_d, mx_d) * n + 7) // 8 + exc_d * 13
        cost_m = (_width_of(mn_m, mx_m) * n + 7) // 8 + exc_m * 13
        exact = cost_d < cost_m
    mn, mx, exc = (mn_d, mx_d, exc_d) if exact else (mn_m, mx_m, exc_m)
    if mn > mx:
        return 0, 0, exc, exact
    return mn, _width_of(mn, mx), exc, exact


def alp_plan(a: np.ndarray) -> tuple[AlpPlan | None, int]:
    """Go alpPlanFloat64/32: (plan, conservative size estimate), plan None when ALP cannot apply."""
    f = unit.fmt_of(a)
    n = int(a.shape[0])
    if n == 0:
        return AlpPlan(0, 0, 0, 0, False), 3
    if n > unit.MAX_ROWS:
        return None, 0
    sample = a[:: n // 32] if n > 32 else a
    sample = np.ascontiguousarray(sample)
    exc_cost = 10 if f.width == 8 else 6
    best_d, best_cost = 0, None
    for d, (_, w, exc, _) in enumerate(_scores(sample, f)):
        cost = (w * sample.shape[0] + 7) // 8 + exc * exc_cost
        if best_cost is None or cost < best_cost:
            best_d, best_cost = d, cost
    for_min, width, exc, exact = _score(a, f, best_d)
    if width > unit.FOR_MAX_BITS or exc >= n:
        return None, 0
    est = (2 + uvarint_len(n) + 1 + uvarint_len(zigzag(for_min)) + 1 + (width * n + 7) // 8
           + uvarint_len(exc) + exc * (5 + f.width))
    return AlpPlan(best_d, for_min, width, exc, exact), est


class Alp:
    name = "alp"
    reference = "PackALP"
    wire = ((int(QPackTag.ALP), int(Kind.F64)), (int(QPackTag.ALP), int(Kind.F32)))
    memory_speed = True

    def estimate(self, a: np.ndarray, f: Fmt, to_beat: int | None = None) -> FloatPlan | None:
        plan, est = alp_plan(a)
        return None if plan is None else FloatPlan(self.name, est, False, (plan, False))

    def force(self, a: np.ndarray, f: Fmt) -> FloatPlan:
        plan, est = alp_plan(a)
        if plan is None:  # width > 56 or nothing packs: still lossless, every value an exception
            return FloatPlan(self.name, 0, False, (AlpPlan(0, 0, 0, int(a.shape[0]), False), True))
        return FloatPlan(self.name, est, False, (plan, False))

    def byte_aligned(self, plan: FloatPlan, n: int) -> FloatPlan:
        """``plan`` (for ``n`` values) with its integers at a whole-byte width (Options.ALIGNED)."""
        p, all_exc = plan.detail
        width = -(-p.width // 8) * 8
        extra = (n * (width - p.width) + 7) // 8
        return FloatPlan(self.name, plan.cost + extra, plan.exact, (dataclasses.replace(p, width=width), all_exc))

    def encode(self, out: bytearray, a: np.ndarray, f: Fmt, plan: FloatPlan) -> None:
        if plan.payload is not None:
            out += plan.payload
            return
        p, all_exc = plan.detail
        # all_exc: every value an exception (forced ALP on data ALP cannot represent: a
        # NaN scale never round-trips, and the wire needs no scale then).
        n = int(a.shape[0])
        unit.header(out, QPackTag.ALP, f.kind, n)
        if n == 0:
            return
        out.append(p.d | (ALP_EXACT if p.exact else 0))
        write_uvarint(out, zigzag(p.for_min))
        out.append(p.width)
        u = a.view(f.udt)
        body = np.empty((n * p.width + 7) // 8, dtype=np.uint8)
        idx = np.empty(n, dtype=np.int64)
        mode = 2 if f.width == 4 else (1 if p.exact else 0)
        pe, ie = (float("nan"), float("nan")) if all_exc else (_POW10[p.d], _INV10[p.d])
        sign = f.udt.type(f.sign)
        nexc = int(kalp.alp_pack(a, u, sign, pe, ie, mode, np.int64(p.for_min), p.width, body, idx))
        out += body.tobytes()
        write_uvarint(out, nexc)
        if nexc:
            ebuf = np.empty(nexc * (10 + f.width), dtype=np.uint8)
            end = kalp.alp_put_exceptions(idx, nexc, u, f.width, ebuf, 0)
            out += ebuf[:end].tobytes()

    def _header(self, r: ByteReader, f: Fmt, expect: int | None) -> tuple[int, int, bool, int, int, int]:
        """(n, d, exact, forMin, width, body start); raises before anything is allocated."""
        c, start = unit.count(r, "ALP element count", expect)
        if c == 0:
            return 0, 0, False, 0, 0, start
        if c > unit.MAX_ROWS:
            raise r.corrupt(f"ALP element count {c} exceeds the limit {unit.MAX_ROWS}", start)
        at = r.pos
        e = r.u8("the ALP exponent byte")
        d = e & ~ALP_EXACT
        if d > ALP_MAX_EXP:
            raise r.corrupt(f"ALP exponent {d} exceeds {ALP_MAX_EXP}", at)
        u = r.uvarint("ALP frame of reference")
        for_min = (u >> 1) ^ -(u & 1)
        at = r.pos
        width = r.u8("the ALP bit width")
        if width > unit.FOR_MAX_BITS:
            raise r.corrupt(f"ALP bit width {width} exceeds {unit.FOR_MAX_BITS}", at)
        if (c * width + 7) // 8 > r.remaining:
            raise TruncatedError(f"ALP body of {c} x {width} bits exceeds the input", column=r.column, offset=at)
        return c, d, bool(e & ALP_EXACT), for_min, width, r.pos

    def read(self, r: ByteReader, f: Fmt, kind: int, expect: int | None, copy: bool) -> np.ndarray:
        c, d, exact, for_min, width, start = self._header(r, f, expect)
        out = alloc.empty(c, f.fdt)
        if c == 0:
            return out
        body = r.take_array((c * width + 7) // 8, "ALP body")
        rc = kalp.alp_decode(body, width, np.int64(for_min), _POW10[d], _INV10[d], exact, out)
        unit.check(r, int(rc), "ALP body", start)
        k = unit.exception_count(r, c, 1 + f.width)
        if k:
            at = r.pos
            tail = r.array()[r.pos : r.end]
            end = int(kalp.alp_patch(tail, 0, k, f.width, out.view(f.udt)))
            unit.check(r, end, "ALP exception list", at)
            r.pos += end
        return out

    def scan(self, r: ByteReader, f: Fmt, kind: int, expect: int | None, copy: bool) -> IntPayload:
        """:meth:`read` with the decode left to the values' first use: the header, body
        size and exception list are checked now, and ``take(rows)`` reconstructs only
        those rows. A body whose FOR base lets some value overflow int64 decodes here,
        so that error still names its offset and a later decode cannot fail."""
        begin = r.pos
        c, d, exact, for_min, width, start = self._header(r, f, expect)
        if c and for_min > 0 and (1 << width) - 1 > _I64_MAX - for_min:
            r.pos = begin
            return IntPayload(values=self.read(r, f, kind, expect, copy))
        if c == 0:
            return IntPayload(values=alloc.empty(0, f.fdt))
        body = r.take_array((c * width + 7) // 8, "ALP body")
        k = unit.exception_count(r, c, 1 + f.width)
        if k:
            where = np.empty(k, dtype=np.int64)
            bits = np.empty(k, dtype=np.uint64)
            at = r.pos
            tail = r.array()[r.pos : r.end]
            end = int(kalp.alp_exceptions_into(tail, 0, k, f.width, c, where, bits))
            unit.check(r, end, "ALP exception list", at)
            r.pos += end
            patch = bits.astype(f.udt, copy=False)
        else:  # most columns: nothing to patch, no arrays to make
            where = patch = None
        pe, ie, base = _POW10[d], _INV10[d], np.int64(for_min)

        def decode() -> np.ndarray:
            out = alloc.empty(c, f.fdt)
            if kalp.alp_decode(body, width, base, pe, ie, exact, out) != c:  # pragma: no cover - checked above
                raise CorruptDataError("ALP body", column=r.column, offset=start)
            if k:
                out.view(f.udt)[where] = patch
            return out

        def take(rows: np.ndarray) -> np.ndarray:
            rows = np.ascontiguousarray(rows, dtype=np.int64)
            out = alloc.empty(len(rows), f.fdt)
            if kalp.alp_decode_at(body, width, base, pe, ie, exact, rows, out) != len(rows):  # pragma: no cover
                raise CorruptDataError("ALP body", column=r.column, offset=start)
            if k and len(rows):
                at = np.searchsorted(rows, where)
                hit = at < len(rows)
                hit[hit] = rows[at[hit]] == where[hit]
                out.view(f.udt)[at[hit]] = patch[hit]
            return out

        return IntPayload(decode, take)

    def skip(self, r: ByteReader, f: Fmt, kind: int) -> None:
        c, _, _, _, width, _ = self._header(r, f, None)
        if c:
            r.skip((c * width + 7) // 8, "ALP body")
            for _ in range(unit.exception_count(r, c, 1 + f.width)):
                r.uvarint("ALP exception index")
                r.skip(f.width, "ALP exception value")


ALP = Alp()
