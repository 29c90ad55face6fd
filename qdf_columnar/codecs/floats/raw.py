"""E4 PackRaw for floats: kind 0x0B (float64) or 0x0A (float32), uvarint(n), the IEEE
bits little-endian. Exact size; the floor every other float codec must beat, and
the only float payload outside the compression tiers.
"""

from __future__ import annotations

import numpy as np

from ...errors import TruncatedError
from ...format.reader import ByteReader
from ...format.tags import Kind, QPackTag
from .unit import FloatPlan, Fmt, count, header, raw_size


class RawFloat:
    name = "raw"
    reference = "PackRaw"
    wire = ((int(QPackTag.RAW), int(Kind.F64)), (int(QPackTag.RAW), int(Kind.F32)))
    memory_speed = True

    def estimate(self, a: np.ndarray, f: Fmt, to_beat: int | None = None) -> FloatPlan | None:
        return FloatPlan(self.name, raw_size(int(a.shape[0]), f.width), True)

    def force(self, a: np.ndarray, f: Fmt) -> FloatPlan:
        return FloatPlan(self.name, raw_size(int(a.shape[0]), f.width), True)  # raw has no gate

    def encode(self, out: bytearray, a: np.ndarray, f: Fmt, plan: FloatPlan) -> None:
        header(out, QPackTag.RAW, f.kind, int(a.shape[0]))
        out += a.astype(f.fdt, copy=False).tobytes()

    def read(self, r: ByteReader, f: Fmt, kind: int, expect: int | None, copy: bool) -> np.ndarray:
        c, start = count(r, "float element count", expect)
        if c * f.width > r.remaining:
            raise TruncatedError(f"float payload declares {c} values in {r.remaining} bytes",
                                 column=r.column, offset=start)
        arr = r.take_array(c * f.width, "float payload").view(f.fdt)
        if copy:
            return arr.astype(f.fdt.newbyteorder("="))
        view = arr.view()
        view.flags.writeable = False
        return view

    def skip(self, r: ByteReader, f: Fmt, kind: int) -> None:
        self.read(r, f, kind, None, False)


RAW = RawFloat()
