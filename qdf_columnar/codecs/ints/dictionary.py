"""ED PackDict: kind, uvarint(d) (1..64), d uvarint values (zigzag for int64), uvarint(n),
then n indices of ``dict_bits(d)`` bits.

Exact cost; Go's gate: at least 8 rows and at most 64 distinct values (first-occurrence
order, from the 128-slot probe). Indices are checked against ``d`` while decoding.
"""

from __future__ import annotations

import numpy as np
from qdf_kernels import bitpack

from ...errors import InvalidOptionError
from ...format.reader import ByteReader
from ...format.tags import QPackTag
from ...format.varint import uvarint_len, write_uvarint
from ..stats import IntStats, dict_probe
from . import unit
from .unit import ChildEncoder, ChildReader, IntPayload, Plan

#: The largest table an ED payload may carry.
MAX_DISTINCT = 64


def index_bits(d: int) -> int:
    """Index width for a d-entry dictionary: 0 for one entry, else bits.Len(d-1)."""
    return 0 if d <= 1 else (d - 1).bit_length()


class Dictionary:
    name = "dict"
    reference = "PackDict"
    tag = int(QPackTag.DICT)

    def estimate(self, s: IntStats, to_beat: int | None) -> Plan | None:
        if s.n < 8:
            return None
        d, table = s.distinct()
        if d <= 0:
            return None
        values = sum(uvarint_len(s.wire_value(int(v))) for v in table)
        cost = 2 + uvarint_len(d) + values + uvarint_len(s.n) + (s.n * index_bits(d) + 7) // 8
        return Plan(self.name, cost, index_bits(d))

    def encode(self, out: bytearray, s: IntStats, plan: Plan, child: ChildEncoder) -> None:
        table = np.zeros(MAX_DISTINCT, dtype=np.uint64)
        idx = np.empty(s.n, dtype=np.uint64)
        d = dict_probe(s.u, table, idx)
        if d <= 0:
            raise InvalidOptionError(f"dict codec needs 1..{MAX_DISTINCT} distinct values")
        out += bytes((self.tag, unit.kind64(s.signed)))
        write_uvarint(out, d)
        for v in table[:d]:
            write_uvarint(out, s.wire_value(int(v)))
        write_uvarint(out, s.n)
        bits = index_bits(d)
        if bits:
            buf = unit.zero_body((s.n * bits + 7) // 8)
            k = bitpack.pack_for(idx, np.uint64(0), bits, buf)
            out += buf[:k].tobytes()

    def _header(self, r: ByteReader, expect: int | None) -> tuple[bool, np.ndarray, int, int, int, np.ndarray]:
        signed = unit.read_kind64(r, self.tag)
        at = r.pos
        d = r.uvarint("the dictionary size")
        if d == 0 or d > MAX_DISTINCT:
            raise r.corrupt(f"dictionary size {d} is outside 1..{MAX_DISTINCT}", at)
        table = np.empty(d, dtype=np.uint64)
        for i in range(d):
            table[i] = unit.wire_value(r.uvarint("a dictionary value"), signed)
        bits = index_bits(d)
        c, start = unit.count(r, "dictionary element count", expect)
        if bits == 0:
            unit.cap(r, c, expect, "dictionary element count", start)
        src = unit.body(r, (c * bits + 7) // 8, "dictionary indices", start)
        return signed, table, bits, c, start, src

    def read(self, r: ByteReader, expect: int | None, copy: bool, depth: int, child: ChildReader) -> IntPayload:
        signed, table, bits, c, start, src = self._header(r, expect)
        arr, u = unit.output(c, signed)
        unit.status(r, bitpack.unpack_dict(src, bits, table, u), "dictionary index (>= dictionary size)", start)
        return IntPayload(values=arr)

    def skip(self, r: ByteReader, expect: int | None, depth: int, child: ChildReader) -> None:
        self._header(r, expect)

    def capped(self, plan: Plan) -> bool:
        return True


DICT = Dictionary()
