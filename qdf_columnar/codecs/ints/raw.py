"""E4 PackRaw for integers: kind byte, uvarint(n), n little-endian values of the kind's width.

The picker's floor: every other codec must be strictly smaller to replace it. The
encoder writes the 64-bit kinds (0x07 / 0x03); the driver writes the native 4-byte
kinds for <= 32-bit input when nothing beats them. The reader takes every int kind.
"""

from __future__ import annotations

import numpy as np

from ...columns import alloc
from ...format.reader import ByteReader
from ...format.tags import Kind, QPackTag
from ...format.varint import uvarint_len, write_uvarint
from ..stats import IntStats
from . import unit
from .unit import ChildEncoder, ChildReader, IntPayload, Plan

_LE = np.dtype("<u8")


def cost(n: int, width: int = 8) -> int:
    """Bytes of a raw payload of ``n`` values of ``width`` bytes."""
    return 2 + uvarint_len(n) + width * n


def emit_native32(out: bytearray, values: np.ndarray, signed: bool) -> None:
    """E4 with kind 0x06 / 0x02: the never-larger floor for <= 32-bit input."""
    out += bytes((QPackTag.RAW, Kind.I32 if signed else Kind.U32))
    write_uvarint(out, int(values.shape[0]))
    out += values.astype("<i4" if signed else "<u4").tobytes()


class Raw:
    name = "raw"
    reference = "PackRaw"
    tag = int(QPackTag.RAW)

    def estimate(self, s: IntStats, to_beat: int | None) -> Plan | None:
        return Plan(self.name, cost(s.n))

    def encode(self, out: bytearray, s: IntStats, plan: Plan, child: ChildEncoder) -> None:
        out += bytes((self.tag, unit.kind64(s.signed)))
        write_uvarint(out, s.n)
        out += s.u.astype(_LE, copy=False).tobytes()

    def read(self, r: ByteReader, expect: int | None, copy: bool, depth: int, child: ChildReader) -> IntPayload:
        at = r.pos
        kind = r.u8("a kind byte")
        if kind > Kind.I64:
            raise r.corrupt(f"kind 0x{kind:02x} is not an integer kind", at)
        width = 1 << (kind & 3)
        signed = bool(kind & 4)
        c, start = unit.count(r, "raw element count", expect)
        data = unit.body(r, c * width, "raw payload", start).view(np.dtype(("<i" if signed else "<u") + str(width)))
        dtype = np.int64 if signed else np.uint64

        def decode() -> np.ndarray:
            if width == 8 and not copy:
                view = data.view(dtype)
                view.flags.writeable = False
                return view
            out = alloc.empty(c, dtype)
            out[:] = data
            return out

        return IntPayload(decode, lambda rows: data[rows].astype(dtype, copy=False))

    def skip(self, r: ByteReader, expect: int | None, depth: int, child: ChildReader) -> None:
        self.read(r, expect, False, depth, child)

    def capped(self, plan: Plan) -> bool:
        return False


RAW = Raw()
