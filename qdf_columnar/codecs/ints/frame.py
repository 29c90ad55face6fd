"""E5 PackFor: kind, bit width, uvarint(min), uvarint(n), n values of ``v - min`` bit-packed.

Exact cost ``3 + len(min) + len(n) + ceil(n*bits/8)``; applicable while the range fits
FOR_MAX_BITS. Selected rows are unpacked straight from the bit stream.
"""

from __future__ import annotations

import numpy as np
from qdf_kernels import bitpack

from ...format.reader import ByteReader
from ...format.tags import QPackTag
from ...format.varint import uvarint_len, write_uvarint
from ..stats import IntStats
from . import unit
from .unit import ChildEncoder, ChildReader, IntPayload, Plan


class FrameOfReference:
    name = "for"
    reference = "PackFor"
    tag = int(QPackTag.FOR)

    def estimate(self, s: IntStats, to_beat: int | None) -> Plan | None:
        fb = s.for_bits
        if fb > unit.FOR_MAX_BITS:
            return None
        return Plan(self.name, 3 + uvarint_len(s.wire_value(s.mn)) + uvarint_len(s.n) + (s.n * fb + 7) // 8, fb)

    def encode(self, out: bytearray, s: IntStats, plan: Plan, child: ChildEncoder) -> None:
        bits = plan.bits
        out += bytes((self.tag, unit.kind64(s.signed), bits))
        write_uvarint(out, s.wire_value(s.mn))
        write_uvarint(out, s.n)
        if bits:
            buf = unit.zero_body((s.n * bits + 7) // 8)
            k = bitpack.pack_for(s.u, np.uint64(s.mn), bits, buf)
            out += buf[:k].tobytes()

    def read(self, r: ByteReader, expect: int | None, copy: bool, depth: int, child: ChildReader) -> IntPayload:
        signed = unit.read_kind64(r, self.tag)
        bits = unit.read_bits(r)
        base = unit.wire_value(r.uvarint("the FOR minimum"), signed)
        c, start = unit.count(r, "FOR element count", expect)
        if bits == 0:
            unit.cap(r, c, expect, "FOR element count", start)
        src = unit.body(r, (c * bits + 7) // 8, "FOR body", start)
        dtype = np.int64 if signed else np.uint64

        def decode() -> np.ndarray:
            arr, u = unit.output(c, signed)
            # The body length was checked above and bits <= 56 by read_bits: no status to report.
            bitpack.unpack_for(src, bits, base, u)
            return arr

        def take(rows: np.ndarray) -> np.ndarray:
            out = np.empty(len(rows), dtype=dtype)
            bitpack.take_for(src, bits, base, np.ascontiguousarray(rows, dtype=np.int64), out.view(np.uint64))
            return out

        def gather(table: np.ndarray, out: np.ndarray) -> int:
            return int(bitpack.unpack_for_gather(src, bits, base, table, out))

        return IntPayload(decode, take, gather=None if signed else gather)

    def skip(self, r: ByteReader, expect: int | None, depth: int, child: ChildReader) -> None:
        self.read(r, expect, False, depth, child)

    def capped(self, plan: Plan) -> bool:
        return plan.bits == 0


FOR = FrameOfReference()
