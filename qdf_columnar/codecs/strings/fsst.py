"""F6 ColStrFSST as a string unit: the picker's last candidate in compression mode and
under the CASCADE presets, over :mod:`qdf_columnar.codecs.fsst` (layout, training,
the gate and the reader live there).

Only strictly smaller than the best other form: :func:`..fsst.fsst_block` checks a lower
bound before training and a held-out projection before the full encode, and writes
the block only when it passes, so sizing it is writing it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...format.reader import ByteReader
from ...format.tags import StrColTag
from .. import fsst as fsst_codec  # through the module, so a test can watch fsst_block
from .unit import Column, IntCodes, StringSlices, StrPlan


class Fsst:
    name = "fsst"
    tags = {int(StrColTag.FSST): "ColStrFSST"}
    self_contained = True
    compression_only = True

    def gate(self, col: Column) -> StrPlan | None:
        return None  # not in the reference order here: tried last, when smaller (docs/FORMAT.md)

    def plan(self, col: Column, to_beat: int | None, cap: int | None = None) -> StrPlan | None:
        """The whole block when it is strictly smaller than ``to_beat``, ``cap`` (and
        sum(len) + n, the reference's gate), with n >= 16; else None. ``cap`` (the
        string picker's caller limit) only stops work early: the held-out projection
        judges against ``to_beat`` alone (:func:`..fsst.fsst_block`)."""
        block = fsst_codec.fsst_block(col.offsets, col.data, col.n, limit=to_beat, cap=cap)
        return None if block is None else StrPlan(self.name, len(block), block)

    def encode(self, out: bytearray, col: Column, plan: StrPlan) -> None:
        out += plan.detail

    def read(self, r: ByteReader, n: int, dense: Any, ints: IntCodes, *, skip: bool = False,
             end: int | None = None) -> StringSlices:
        """Framed now, decoded when materialised (only a filter's rows, when it has one)."""
        r.u8("a string column")
        if skip:
            fsst_codec.skip_fsst(r, n)
            return StringSlices(np.zeros(0, np.uint8), np.zeros(n, np.int64), np.zeros(n, np.int64))
        sl = StringSlices(np.zeros(0, np.uint8), None, None)
        sl.fsst = fsst_codec.scan_fsst(r, n, end)
        sl.n = n
        return sl


FSST = Fsst()
