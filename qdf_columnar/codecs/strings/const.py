"""F9 ColStrConst: one string repeated n times. Read only.

Layout after the tag: ``uvarint(len)``, the bytes, ``uvarint(n)``. The reference's
non-Dense (code-generated) writers produce it; its Dense writer, whose forms this
library's picker follows, never does, so the unit never plans a body. It reads as a
one-entry dictionary.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...format.reader import ByteReader
from ...format.tags import StrColTag
from .unit import Column, IntCodes, StringSlices, StrPlan


class Const:
    name = "const"
    tags = {int(StrColTag.CONST): "ColStrConst"}
    self_contained = True
    compression_only = False

    def gate(self, col: Column) -> StrPlan | None:
        return None  # never written (module docstring)

    def plan(self, col: Column, to_beat: int | None) -> StrPlan | None:
        return None

    def encode(self, out: bytearray, col: Column, plan: StrPlan) -> None:
        raise AssertionError("F9 is read only: no plan is ever made for it")

    def read(self, r: ByteReader, n: int, dense: Any, ints: IntCodes, *, skip: bool = False,
             end: int | None = None) -> StringSlices:
        src = r.array()
        r.u8("a string column")
        ln = r.uvarint("const string length")
        if ln > r.remaining:
            raise r.truncated("a const string", ln)
        s0 = r.pos
        r.pos += ln
        start = r.pos
        n2 = r.uvarint("const string count")
        if n2 != n:
            raise r.corrupt(f"const string block holds {n2} rows, the container declares {n}", start)
        ts = np.array([s0], dtype=np.int64)
        tl = np.array([ln], dtype=np.int64)
        codes = np.zeros(n, dtype=np.uint64)
        return StringSlices(src, None, None, codes=codes, table_starts=ts, table_lens=tl)


CONST = Const()
