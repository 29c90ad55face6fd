"""E3 PackBool, the one v1 bool codec, as a unit: uvarint(n) then ceil(n/8) bytes,
LSB-first, zero padding bits (padding is ignored on read).

It follows the shape of the integer and float units (encode / read / skip; with one
codec there is nothing to estimate) and is registered with them in :mod:`.registry`,
so a bool codec added later (runs of equal values, say) sits next to it.
"""

from __future__ import annotations

import numpy as np

from ..errors import TruncatedError
from ..format.reader import ByteReader
from ..format.tags import QPackTag
from ..format.varint import write_uvarint


class PackBool:
    name = "bool"
    reference = "PackBool"
    tag = int(QPackTag.BOOL)

    def encode(self, out: bytearray, values: np.ndarray) -> None:
        out.append(self.tag)
        write_uvarint(out, int(values.shape[0]))
        out += np.packbits(values.astype(bool, copy=False), bitorder="little").tobytes()

    def _count(self, r: ByteReader, expect: int | None) -> int:
        start = r.pos
        c = r.uvarint("bool element count")
        if expect is not None and c != expect:
            raise r.corrupt(f"bool element count is {c} but the column has {expect} rows", start)
        if (c + 7) // 8 > r.remaining:
            raise TruncatedError(f"bool payload declares {c} values in {r.remaining} bytes",
                                 column=r.column, offset=start)
        return c

    def read(self, r: ByteReader, expect: int | None) -> np.ndarray:
        """With ``r`` after the tag: the values as a bool array."""
        c = self._count(r, expect)
        data = r.take_array((c + 7) // 8, "bool payload")
        return np.unpackbits(data, count=c, bitorder="little").view(np.bool_)

    def skip(self, r: ByteReader, expect: int | None) -> None:
        c = self._count(r, expect)
        r.skip((c + 7) // 8, "bool payload")


BOOL = PackBool()
