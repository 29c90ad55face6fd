"""F8 ColStrRaw: the raw slab, every row as (``uvarint(len)``, bytes).

Layout after the tag: ``uvarint(n)``, ``uvarint(totalBytes)``, n x (``uvarint(len)``,
bytes). The floor of the self-contained forms: CASCADE's picker starts from it.
The reference writes it when n >= 16 and it is no larger than per-value strings
(:meth:`RawSlab.gate`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from qdf_kernels import strings as sk
from qdf_kernels._status import ERR_TRUNCATED

from ...format.reader import ByteReader
from ...format.tags import StrColTag
from ...format.varint import write_uvarint
from .per_value import PER_VALUE, estimate
from .unit import MIN_ROWS, Column, IntCodes, StringSlices, StrPlan


class RawSlab:
    name = "raw"
    tags = {int(StrColTag.RAW): "ColStrRaw"}
    self_contained = True
    compression_only = False

    def gate(self, col: Column) -> StrPlan | None:
        """n >= 16 and no larger than per-value strings. Both sizes are exact; where the
        reference's estimate of per-value strings and the exact sizes disagree the
        strictly smaller form wins, and an exact tie keeps the estimate's choice."""
        if col.n < MIN_ROWS:
            return None
        values = PER_VALUE.gate(col)
        raw = self.plan(col, None)
        if raw.cost < values.cost or (raw.cost == values.cost and raw.cost <= estimate(col)):
            return raw
        return None

    def plan(self, col: Column, to_beat: int | None) -> StrPlan | None:
        if to_beat is not None and 3 + col.total + col.n >= to_beat:  # tag, n, total, then n x (uvarint(len), bytes)
            return None
        head = bytearray((StrColTag.RAW,))
        write_uvarint(head, col.n)
        write_uvarint(head, col.total)
        return StrPlan(self.name, len(head) + col.bulk, head)

    def encode(self, out: bytearray, col: Column, plan: StrPlan) -> None:
        buf = np.empty(col.bulk, np.uint8)
        end = sk.encode_lenprefixed_into(col.data, col.offsets, buf, np.int64(0))
        assert end == col.bulk
        out += plan.detail
        out += memoryview(buf)

    def read(self, r: ByteReader, n: int, dense: Any, ints: IntCodes, *, skip: bool = False,
             end: int | None = None) -> StringSlices:
        src = r.array()
        r.u8("a string column")
        start = r.pos
        n2 = r.uvarint("raw string count")
        if n2 != n:
            raise r.corrupt(f"raw string block holds {n2} rows, the container declares {n}", start)
        total = r.uvarint("raw string total")
        if total > r.remaining:
            raise r.truncated("a raw string block", total)
        r.need(n, "raw string lengths")  # each row takes at least its length byte
        starts = np.empty(n, dtype=np.int64)
        lens = np.empty(n, dtype=np.int64)
        body_start = r.pos
        pos = sk.scan_lenprefixed_into(src, np.int64(r.pos), np.int64(r.end), starts, lens)
        if pos < 0:
            if pos == ERR_TRUNCATED:
                raise r.truncated("a raw string block", 1)
            raise r.corrupt("malformed length in a raw string block")
        if int(lens.sum()) != total:
            raise r.corrupt(f"raw string lengths add up to {int(lens.sum())}, the block declares {total}", body_start)
        r.pos = int(pos)
        return StringSlices(src, starts, lens)


SLAB = RawSlab()
