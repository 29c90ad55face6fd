"""FB ColStrAlpha: alphabet packing for high-cardinality strings over few distinct bytes.

Layout after the tag: ``uvarint(a in 2..64)``, the a alphabet bytes in first-seen order,
``uvarint(n)``, a flags byte (bit 0: every row has the same length), then
``uvarint(L)`` or n x ``uvarint(len)``, then every byte as its ceil(log2 a)-bit code,
LSB-first and continuous across rows. This is how 32-character hex trace ids cost 16
bytes. The body stays packed until a caller materialises it
(:meth:`.slices.StringSlices.unpack_alpha`, or only the rows a filter kept).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from qdf_kernels import alpha as ak
from qdf_kernels import strings as sk
from qdf_kernels._status import ERR_TRUNCATED

from ...format.reader import ByteReader
from ...format.tags import StrColTag
from ...format.varint import write_uvarint
from .bits import bits_for_distinct
from .unit import MIN_ROWS, Column, IntCodes, StringSlices, StrPlan, high_cardinality_sample


class Alpha:
    name = "alpha"
    tags = {int(StrColTag.ALPHA): "ColStrAlpha"}
    self_contained = True
    compression_only = False

    def gate(self, col: Column) -> StrPlan | None:
        """The reference's: n >= 16, a high-cardinality head, and smaller than the raw floor."""
        if col.n < MIN_ROWS or not high_cardinality_sample(col.arr, col.n):
            return None
        plan = self._sized(col)
        if plan is None or plan.cost >= col.bulk:  # must beat the raw floor
            return None
        return plan

    def plan(self, col: Column, to_beat: int | None) -> StrPlan | None:
        # tag, a, >= 2 alphabet bytes, n, flags, then L or the lengths: at least 6 bytes,
        # and at least a bit per character.
        if to_beat is not None and 6 + ((col.total + 7) >> 3) >= to_beat:
            return None
        return self._sized(col)

    def _sized(self, col: Column) -> StrPlan | None:
        """The FB block's exact size (alphabet of 2..64 bytes), or None; cached on ``col``."""
        if self.name in col.cache:
            return col.cache[self.name]
        col.cache[self.name] = None
        n = col.n
        chars = col.data[col.offsets[0] : col.offsets[n]]
        code = np.full(256, -1, dtype=np.int16)
        alphabet = np.zeros(64, dtype=np.uint8)
        a = int(ak.alpha_scan(chars, code, alphabet))
        if a < 2:
            return None
        cbits = bits_for_distinct(a)
        lens = col.lens
        fixed = bool(np.all(lens == lens[0]))
        head = bytearray((StrColTag.ALPHA,))
        write_uvarint(head, a)
        head += alphabet[:a].tobytes()
        write_uvarint(head, n)
        head.append(1 if fixed else 0)
        if fixed:
            write_uvarint(head, int(lens[0]))
        len_bytes = 0 if fixed else col.bulk - col.total
        body_bytes = (col.total * cbits + 7) >> 3
        plan = StrPlan(self.name, len(head) + len_bytes + body_bytes, (head, code, cbits, len_bytes, body_bytes))
        col.cache[self.name] = plan
        return plan

    def encode(self, out: bytearray, col: Column, plan: StrPlan) -> None:
        head, code, cbits, len_bytes, body_bytes = plan.detail
        buf = np.empty(len_bytes + body_bytes, np.uint8)
        if len_bytes:
            sk.write_lens_into(col.offsets, buf, np.int64(0))
        chars = col.data[col.offsets[0] : col.offsets[col.n]]
        ak.alpha_pack_into(chars, code, np.int64(cbits), buf[len_bytes:])
        out += head
        out += memoryview(buf)

    def read(self, r: ByteReader, n: int, dense: Any, ints: IntCodes, *, skip: bool = False,
             end: int | None = None) -> StringSlices:
        """The lengths are checked now; the codes stay packed until materialised."""
        r.u8("a string column")
        at = r.pos
        a = r.uvarint("alphabet size")
        if a < 2 or a > 64:
            raise r.corrupt(f"alphabet size {a} is outside 2..64", at)
        alphabet = np.ascontiguousarray(r.take_array(a, "the alphabet"))
        at = r.pos
        n2 = r.uvarint("alpha string count")
        if n2 != n:
            raise r.corrupt(f"alpha string block holds {n2} rows, the container declares {n}", at)
        flags = r.u8("alpha flags")
        if flags & ~1:
            raise r.corrupt(f"unknown alpha flags {flags:#04x}", r.pos - 1)
        cbits = bits_for_distinct(a)
        if flags & 1:
            ln = r.uvarint("alpha fixed length")
            total = n * ln
            if total * cbits > 8 * r.remaining:
                raise r.truncated("an alpha string body", (total * cbits + 7) >> 3)
            offsets = np.arange(n + 1, dtype=np.int64) * ln
        else:
            r.need(n, "alpha string lengths")
            lens = np.empty(n, dtype=np.int64)
            pos = ak.scan_uvarints_into(r.array(), np.int64(r.pos), np.int64(r.end), lens)
            if pos < 0 or (n and int(lens.min()) < 0):
                if pos == ERR_TRUNCATED:
                    raise r.truncated("alpha string lengths", 1)
                raise r.corrupt("malformed alpha string length")
            r.pos = int(pos)
            total = int(lens.sum())
            if total * cbits > 8 * r.remaining:
                raise r.truncated("an alpha string body", (total * cbits + 7) >> 3)
            offsets = np.zeros(n + 1, dtype=np.int64)
            np.cumsum(lens, out=offsets[1:])
        body = r.take_array((total * cbits + 7) >> 3, "an alpha string body")
        sl = StringSlices(body, None, None, offsets=offsets)
        sl.n = n
        sl.alpha = (body, alphabet, a, cbits)
        sl.ascii = bool(np.all(alphabet < 0x80))
        return sl


ALPHA = Alpha()
