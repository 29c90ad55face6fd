"""EB PackRLE: kind, uvarint(n), then runs of (uvarint value, zigzag for int64;
uvarint length >= 1) until n rows.

Exact cost from the run kernel; Go's gate: at least 8 rows and a 32-row probe showing
runs (at most 16 run starts among the first 32 rows). Reading validates every run
before anything is allocated (a 5-byte payload may declare 2**24 rows), and expands
in the same pass when the caller knows (and has budgeted) the row count.
"""

from __future__ import annotations

import numpy as np
from qdf_kernels import intcodecs, intdecode

from ...format.reader import ByteReader
from ...format.tags import QPackTag
from ...format.varint import uvarint_len, write_uvarint
from ..stats import IntStats
from .unit import (
    EMPTY_U64,
    ChildEncoder,
    ChildReader,
    IntPayload,
    Plan,
    cap,
    count,
    kind64,
    output,
    read_kind64,
    status,
    zero_body,
)


class RunLength:
    name = "rle"
    reference = "PackRLE"
    tag = int(QPackTag.RLE)

    def estimate(self, s: IntStats, to_beat: int | None) -> Plan | None:
        if s.n < 8 or s.probe_runs * 2 > min(32, s.n):
            return None
        return Plan(self.name, 2 + uvarint_len(s.n) + s.rle_body_size())

    def encode(self, out: bytearray, s: IntStats, plan: Plan, child: ChildEncoder) -> None:
        out += bytes((self.tag, kind64(s.signed)))
        write_uvarint(out, s.n)
        buf = zero_body(s.rle_body_size())
        k = intcodecs.rle_encode(s.u, s.signed, buf)
        out += buf[:k].tobytes()

    def _runs(self, r: ByteReader, expect: int | None, decode: bool) -> np.ndarray | None:
        signed = read_kind64(r, self.tag)
        c, start = count(r, "RLE element count", expect)
        cap(r, c, expect, "RLE element count", start)
        buf = r.array()
        errpos = np.zeros(1, dtype=np.int64)
        if decode and expect is not None:
            # The caller knows the rows (and has budgeted them): validate and expand in one pass.
            arr, u = output(c, signed)
            end = intdecode.rle_decode(buf, r.pos, r.end, c, signed, u, errpos)
            status(r, end, "RLE runs", int(errpos[0]))
            r.pos = int(end)
            return arr
        # Validate the runs before allocating: a 5-byte payload may declare 2**24 rows.
        end = intdecode.rle_decode(buf, r.pos, r.end, c, signed, EMPTY_U64, errpos)
        status(r, end, "RLE runs", int(errpos[0]))
        arr = None
        if decode:
            arr, u = output(c, signed)
            if c:
                intdecode.rle_decode(buf, r.pos, r.end, c, signed, u, errpos)
        r.pos = int(end)
        return arr

    def read(self, r: ByteReader, expect: int | None, copy: bool, depth: int, child: ChildReader) -> IntPayload:
        return IntPayload(values=self._runs(r, expect, True))

    def skip(self, r: ByteReader, expect: int | None, depth: int, child: ChildReader) -> None:
        self._runs(r, expect, False)

    def capped(self, plan: Plan) -> bool:
        return True


RLE = RunLength()
