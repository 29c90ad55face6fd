"""E6 PackDeltaFor: kind, bit width, uvarint(first), uvarint(zigzag(min delta)), uvarint(n),
then n-1 values of ``delta - min_delta`` bit-packed.

Exact cost; applicable from 4 rows while the delta range fits FOR_MAX_BITS. Values
depend on every row before them, so selected rows come from a full decode, except under
a constant step (width 0: a row counter), where any row's value is arithmetic.
"""

from __future__ import annotations

import numpy as np
from qdf_kernels import bitpack

from ...format.reader import ByteReader
from ...format.tags import QPackTag
from ...format.varint import uvarint_len, write_uvarint, zigzag
from ..stats import IntStats, as_signed
from . import unit
from .unit import ChildEncoder, ChildReader, IntPayload, Plan


class DeltaFor:
    name = "delta"
    reference = "PackDeltaFor"
    tag = int(QPackTag.DELTA_FOR)

    def estimate(self, s: IntStats, to_beat: int | None) -> Plan | None:
        db = s.delta_bits
        if s.n < 4 or db > unit.FOR_MAX_BITS:
            return None
        first = s.wire_value(int(s.u[0]))
        hdr = 3 + uvarint_len(first) + uvarint_len(zigzag(as_signed(s.min_delta))) + uvarint_len(s.n)
        return Plan(self.name, hdr + ((s.n - 1) * db + 7) // 8, db)

    def encode(self, out: bytearray, s: IntStats, plan: Plan, child: ChildEncoder) -> None:
        bits = plan.bits
        out += bytes((self.tag, unit.kind64(s.signed), bits))
        write_uvarint(out, s.wire_value(int(s.u[0])) if s.n else 0)
        write_uvarint(out, zigzag(as_signed(s.min_delta)))
        write_uvarint(out, s.n)
        if bits and s.n >= 2:
            buf = unit.zero_body(((s.n - 1) * bits + 7) // 8)
            k = bitpack.pack_delta(s.u, np.uint64(s.min_delta), bits, buf)
            out += buf[:k].tobytes()

    def _header(self, r: ByteReader,
                expect: int | None) -> tuple[bool, int, np.uint64, np.uint64, int, int, np.ndarray]:
        signed = unit.read_kind64(r, self.tag)
        bits = unit.read_bits(r)
        first = unit.wire_value(r.uvarint("the first value"), signed)
        min_delta = unit.wire_value(r.uvarint("the minimum delta"), True)
        c, start = unit.count(r, "Delta+FOR element count", expect)
        if bits == 0:
            unit.cap(r, c, expect, "Delta+FOR element count", start)
        src = unit.body(r, (max(c - 1, 0) * bits + 7) // 8, "Delta+FOR body", start)
        return signed, bits, first, min_delta, c, start, src

    def read(self, r: ByteReader, expect: int | None, copy: bool, depth: int, child: ChildReader) -> IntPayload:
        signed, bits, first, min_delta, c, start, src = self._header(r, expect)
        dtype = np.int64 if signed else np.uint64

        # _header checked the body holds every delta and read_bits the width, so decoding
        # cannot fail any more: it waits until the values (or some rows) are asked for.
        def decode() -> np.ndarray:
            arr, u = unit.output(c, signed)
            bitpack.unpack_delta(src, bits, first, min_delta, u)
            return arr

        def step(rows: np.ndarray) -> np.ndarray:
            # A constant step (a row counter): any row's value by arithmetic, wrapping as
            # the decode does. Other widths decode whole: a prefix sum that writes only
            # the selected rows measured no faster than the fused unpack-and-sum.
            at = np.asarray(rows, dtype=np.int64).astype(np.uint64) * min_delta + first
            return at.view(dtype)

        return IntPayload(decode, step if bits == 0 else None)

    def skip(self, r: ByteReader, expect: int | None, depth: int, child: ChildReader) -> None:
        self._header(r, expect)

    def capped(self, plan: Plan) -> bool:
        return plan.bits == 0


DELTA = DeltaFor()
