"""EE PackPFor: kind, uvarint(n), bit width b, uvarint(min), n values of ``v - min`` in
b bits, uvarint(exception count), then (uvarint gap, uvarint ``v - min``) per exception
(patched over the packed value at that row).

The cost is Go's conservative upper bound (pforPlan*: every exception charged the
widest gap and value), minimised over b; the gate needs 8 rows and a FOR width of
2..56 bits. Go skips the histogram once only width 0 could still win, as
``estimate`` does when ``to_beat`` is that small.
"""

from __future__ import annotations

import numpy as np
from qdf_kernels import bitpack, intcodecs, intdecode

from ...errors import TruncatedError
from ...format.reader import ByteReader
from ...format.tags import QPackTag
from ...format.varint import uvarint_len, write_uvarint
from ..stats import MASK64, IntStats
from . import unit
from .unit import ChildEncoder, ChildReader, IntPayload, Plan


def header_cost(s: IntStats) -> int:
    return 3 + uvarint_len(s.n) + uvarint_len(s.wire_value(s.mn))


def plan(s: IntStats) -> tuple[int, int] | None:
    """Go pforPlan*: the width b minimising the conservative PFOR cost, and that cost."""
    fb = s.for_bits
    if s.n < 8 or fb < 2 or fb > unit.FOR_MAX_BITS:
        return None
    hist = s.bitlen_hist()
    val_len = uvarint_len((s.mx - s.mn) & MASK64)  # upper bound per exception value
    gap_len = uvarint_len(s.n)  # an index gap never exceeds n
    hdr = header_cost(s)
    best: tuple[int, int] | None = None
    suffix = 0
    for cand in range(fb - 1, -1, -1):
        suffix += int(hist[cand + 1])
        c = hdr + (s.n * cand + 7) // 8 + uvarint_len(suffix) + suffix * (gap_len + val_len)
        if best is None or c < best[1]:
            best = (cand, c)
    return best


def _positions(gaps: np.ndarray, n: int) -> np.ndarray | None:
    """The rows of the exceptions from their gaps, or None when Go's rules are broken (a
    zero gap after the first exception, or a row at or past ``n``)."""
    if len(gaps) == 0:
        return np.empty(0, dtype=np.int64)
    if int(gaps.max()) >= n or (len(gaps) > 1 and int(gaps[1:].min()) == 0):
        return None
    where = np.cumsum(gaps.astype(np.int64))
    return where if int(where[-1]) < n else None


class PatchedFor:
    name = "pfor"
    reference = "PackPFor"
    tag = int(QPackTag.PFOR)

    def estimate(self, s: IntStats, to_beat: int | None) -> Plan | None:
        if to_beat is not None and to_beat <= header_cost(s) + s.n // 8:
            return None  # only width 0 could still win, and it never does then
        p = plan(s)
        return None if p is None else Plan(self.name, p[1], p[0])

    def encode(self, out: bytearray, s: IntStats, plan: Plan, child: ChildEncoder) -> None:
        b = plan.bits
        out += bytes((self.tag, unit.kind64(s.signed)))
        write_uvarint(out, s.n)
        out.append(b)
        write_uvarint(out, s.wire_value(s.mn))
        base = np.uint64(s.mn)
        if b:
            buf = unit.zero_body((s.n * b + 7) // 8)
            k = bitpack.pack_for(s.u, base, b, buf)
            out += buf[:k].tobytes()
        exc_n = int(s.bitlen_hist()[b + 1 :].sum())  # deltas wider than b (b == 0: every nonzero)
        write_uvarint(out, exc_n)
        if exc_n:
            buf = unit.zero_body(20 * exc_n)
            k = intcodecs.pfor_write_exceptions(s.u, base, b, buf)
            out += buf[:k].tobytes()

    def _read(self, r: ByteReader, expect: int | None, decode: bool) -> IntPayload | None:
        signed = unit.read_kind64(r, self.tag)
        c, start = unit.count(r, "PFOR element count", expect)
        b = unit.read_bits(r)
        base = unit.wire_value(r.uvarint("the PFOR minimum"), signed)
        if b == 0:
            unit.cap(r, c, expect, "PFOR element count", start)
        src = unit.body(r, (c * b + 7) // 8, "PFOR body", start)
        at = r.pos
        exc_n = r.uvarint("the PFOR exception count")
        if exc_n > c:
            raise r.corrupt(f"PFOR exception count {exc_n} exceeds the {c} rows", at)
        if 2 * exc_n > r.remaining:
            raise TruncatedError("input ends inside the PFOR exception list", column=r.column, offset=at)
        buf, exc_at = r.array(), r.pos
        errpos = np.zeros(1, dtype=np.int64)
        if not decode:
            end = intdecode.pfor_patch(buf, exc_at, r.end, exc_n, c, base, unit.EMPTY_U64, errpos)  # check only
            unit.status(r, end, "PFOR exception list", int(errpos[0]))
            r.pos = int(end)
            return None
        # The (gap, value - min) pairs, read once and kept: a full decode patches them in,
        # a selective one looks its rows up among them.
        pairs = np.empty(2 * exc_n, dtype=np.uint64)
        end = intdecode.uvarints_into(buf, exc_at, r.end, pairs)
        where = _positions(pairs[0::2], c) if end >= 0 else None
        if where is None:  # damaged: the patch kernel names the problem and its offset
            st = intdecode.pfor_patch(buf, exc_at, r.end, exc_n, c, base, unit.EMPTY_U64, errpos)
            unit.status(r, st, "PFOR exception list", int(errpos[0]))
            raise r.corrupt("inconsistent PFOR exception list", exc_at)  # the two checks apply one rule
        r.pos = int(end)
        deltas = pairs[1::2]
        dtype = np.int64 if signed else np.uint64

        def values() -> np.ndarray:
            arr, u = unit.output(c, signed)
            # Body length and width were checked above, the exceptions by _positions.
            bitpack.unpack_for(src, b, base, u)
            u[where] = base + deltas
            return arr

        def take(rows: np.ndarray) -> np.ndarray:
            out = np.empty(len(rows), dtype=dtype)
            u = out.view(np.uint64)
            bitpack.take_for(src, b, base, np.ascontiguousarray(rows, dtype=np.int64), u)
            if exc_n:
                k = np.minimum(np.searchsorted(where, rows), exc_n - 1)
                hit = where[k] == rows
                u[hit] = base + deltas[k[hit]]
            return out

        return IntPayload(values, take)

    def read(self, r: ByteReader, expect: int | None, copy: bool, depth: int, child: ChildReader) -> IntPayload:
        payload = self._read(r, expect, True)
        assert payload is not None
        return payload

    def skip(self, r: ByteReader, expect: int | None, depth: int, child: ChildReader) -> None:
        self._read(r, expect, False)

    def capped(self, plan: Plan) -> bool:
        return plan.bits == 0


PFOR = PatchedFor()
