"""F4 kind 0x0F: ALP-RD float64 (Go qpack_alprd.go), for doubles with no short decimal form.

Layout: ``F4 0F uvarint(n)``; n > 0: ``leftBW`` (8..16), ``D`` (1..8), D x u16 LE
dictionary of left bit patterns, ceil(n*ceil(log2 D)/8) LSB-first code bytes (none
when D == 1), ceil(n*(64-leftBW)/8) LSB-first right-bit bytes, ``uvarint(excN)``,
excN x (``uvarint(position)``, u16 LE left bits); an exception's code slot is 0.

Plan (Go alprdPlanFloat64, reproduced exactly): cut 8..16 and <= 8 left patterns from a
<= 2048-value sample, exceptions counted over the whole column; n >= 16; the estimate
charges 7 B per exception (an upper bound) and must be below raw.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from qdf_kernels import alp as kalp
from qdf_kernels._status import ERR_CORRUPT

from ...columns import alloc
from ...errors import TruncatedError
from ...format.reader import ByteReader
from ...format.tags import QPackTag
from ...format.varint import uvarint_len
from . import unit
from .unit import FloatPlan, Fmt

MIN_ROWS = 16  # Go: "header + dictionary dominate tiny slices"


@dataclass(frozen=True)
class AlpRdPlan:
    """Go alprdPlan: cut (left bit width), dictionary of left patterns, exception count."""

    left_bw: int
    dictionary: tuple[int, ...]
    exc: int


def search(u: np.ndarray) -> AlpRdPlan | None:
    """The planner without the size gates (None only when there is nothing to sample)."""
    if u.shape[0] == 0:
        return None
    keys = np.zeros(4096, dtype=np.uint16)
    cnts = np.zeros(4096, dtype=np.int32)
    dct = np.zeros(kalp.ALPRD_MAX_DICT, dtype=np.uint16)
    meta = np.zeros(3, dtype=np.int64)
    kalp.alprd_plan(u, keys, cnts, dct, meta)
    left_bw, d, exc = (int(x) for x in meta)
    if d == 0:
        return None
    return AlpRdPlan(left_bw, tuple(int(x) for x in dct[:d]), exc)


def size(n: int, plan: AlpRdPlan) -> int:
    """Go's ALP-RD estimate: exact bodies plus 7 B per exception (an upper bound)."""
    d = len(plan.dictionary)
    return (2 + uvarint_len(n) + 2 + 2 * d + (n * int(kalp.alprd_code_bits(d)) + 7) // 8
            + (n * (64 - plan.left_bw) + 7) // 8 + uvarint_len(plan.exc) + plan.exc * 7)


def lower_bound(n: int) -> int:
    """No ALP-RD payload of ``n`` values is smaller: :func:`size` with the widest cut (16
    left bits, so 48 right bits a value), one dictionary entry and no exception."""
    return 2 + uvarint_len(n) + 2 + 2 + (n * 48 + 7) // 8 + 1


def alprd_plan(a: np.ndarray) -> tuple[AlpRdPlan | None, int]:
    """Go alprdPlanFloat64: (plan, size upper bound); plan None for float32, n < 16, above
    the row cap, or when the estimate is not below raw."""
    n = int(a.shape[0])
    if a.dtype.itemsize != 8 or n < MIN_ROWS or n > unit.MAX_ROWS:
        return None, 0
    plan = search(np.ascontiguousarray(a).view(np.uint64))
    if plan is None:
        return None, 0
    est = size(n, plan)
    if est >= unit.raw_size(n, 8):
        return None, 0
    return plan, est


def _header(r: ByteReader, expect: int | None) -> tuple[int, int, np.ndarray]:
    c, start = unit.count(r, "ALP-RD element count", expect)
    if c > r.remaining // 6 + 1:  # every value carries >= 48 right bits
        raise TruncatedError(f"ALP-RD payload declares {c} values", column=r.column, offset=start)
    if c == 0:
        return 0, 0, np.empty(0, np.uint64)
    at = r.pos
    left_bw = r.u8("ALP-RD left width")
    dn = r.u8("ALP-RD dictionary size")
    if not (8 <= left_bw <= 16 and 1 <= dn <= 8):
        raise r.corrupt(f"ALP-RD left width {left_bw} / dictionary size {dn} out of range", at)
    table = r.take_array(2 * dn, "ALP-RD dictionary").view("<u2").astype(np.uint64)
    return c, left_bw, table


class AlpRd:
    name = "alprd"
    reference = "PackALP"
    wire = ((int(QPackTag.ALP), unit.KIND_0F),)
    memory_speed = True

    def estimate(self, a: np.ndarray, f: Fmt, to_beat: int | None = None) -> FloatPlan | None:
        # Its cost is an upper bound, which displaces a plan only when strictly smaller
        # (floats.unit.replaces), and never below the right bits alone: no plan is
        # searched for a column that another form already codes in that much.
        if to_beat is not None and lower_bound(int(a.shape[0])) >= to_beat:
            return None
        plan, est = alprd_plan(a)
        return None if plan is None else FloatPlan(self.name, est, False, plan)

    def force(self, a: np.ndarray, f: Fmt) -> FloatPlan:
        plan = search(a.view(np.uint64))
        return FloatPlan(self.name, 0 if plan is None else size(int(a.shape[0]), plan), False, plan)

    def encode(self, out: bytearray, a: np.ndarray, f: Fmt, plan: FloatPlan) -> None:
        if plan.payload is not None:
            out += plan.payload
            return
        n = int(a.shape[0])
        unit.header(out, QPackTag.ALP, unit.KIND_0F, n)
        if n == 0:
            return
        p: AlpRdPlan = plan.detail
        d = len(p.dictionary)
        out += bytes((p.left_bw, d))
        dct = np.asarray(p.dictionary, dtype="<u2")
        out += dct.tobytes()
        u = a.view(np.uint64)
        cb = int(kalp.alprd_code_bits(d))
        cap = (n * cb + 7) // 8 + (n * (64 - p.left_bw) + 7) // 8 + 10 + 12 * n
        buf = np.empty(cap, dtype=np.uint8)
        end = int(kalp.alprd_encode(u, p.left_bw, dct.astype(np.uint16), d, buf, 0, np.empty(n, dtype=np.int64)))
        out += buf[:end].tobytes()

    def read(self, r: ByteReader, f: Fmt, kind: int, expect: int | None, copy: bool) -> np.ndarray:
        c, left_bw, table = _header(r, expect)
        out = alloc.empty(c, np.uint64)
        if c == 0:
            return out.view(np.float64)
        dn = table.shape[0]
        cbits = (dn - 1).bit_length()
        rbw = 64 - left_bw
        at = r.pos
        need = (c * cbits + 7) // 8 + (c * rbw + 7) // 8
        if need > r.remaining:
            raise TruncatedError(f"ALP-RD bodies need {need} bytes", column=r.column, offset=at)
        codes = r.take_array((c * cbits + 7) // 8)
        rights = r.take_array((c * rbw + 7) // 8)
        rc = int(kalp.alprd_decode(codes, cbits, rights, rbw, table, out))
        if rc == ERR_CORRUPT:
            raise r.corrupt("ALP-RD dictionary code out of range", at)
        unit.check(r, rc, "ALP-RD bodies", at)
        k = unit.exception_count(r, c, 3)
        if k:
            at = r.pos
            tail = r.array()[r.pos : r.end]
            end = int(kalp.alprd_patch(tail, 0, k, rbw, out))
            unit.check(r, end, "ALP-RD exception list", at)
            r.pos += end
        return out.view(np.float64)

    def skip(self, r: ByteReader, f: Fmt, kind: int) -> None:
        c, left_bw, table = _header(r, None)
        if c:
            cb = (table.shape[0] - 1).bit_length()
            r.skip((c * cb + 7) // 8 + (c * (64 - left_bw) + 7) // 8, "ALP-RD bodies")
            for _ in range(unit.exception_count(r, c, 3)):
                r.uvarint("ALP-RD exception position")
                r.skip(2, "ALP-RD exception left bits")


ALPRD = AlpRd()
