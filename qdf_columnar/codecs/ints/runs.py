"""EB PackRLE: kind, uvarint(n), then runs of (uvarint value, zigzag for int64;
uvarint length >= 1) until n rows.

Exact cost from the run kernel; Go's gate: at least 8 rows and a 32-row probe showing
runs (at most 16 run starts among the first 32 rows). Reading validates every run
before anything is allocated (a 5-byte payload may declare 2**24 rows), and expands
in the same pass when the caller knows (and has budgeted) the row count.
"""

from __future__ import annotations

import numpy as np
from qdf_kernels import columns as ck
from qdf_kernels import intcodecs, intdecode
from qdf_kernels._status import ERR_LIMIT

from ...columns.runs import run_index
from ...format.reader import ByteReader
from ...format.tags import QPackTag
from ...format.varint import uvarint_len, write_uvarint
from ..stats import IntStats
from . import unit
from .unit import ChildEncoder, ChildReader, IntPayload, Plan

#: From this many rows per run on average, runs stay unexpanded until asked for. The
#: check gives up after n / LONG_RUNS runs, so a payload averaging L rows a run pays an
#: extra parse of L / LONG_RUNS of its runs (6% for runs of two, nafld2's ``days``).
LONG_RUNS = 32


class _Runs:
    """Checked runs of one payload, expanded (``values``) or looked up (``take``) on demand."""

    def __init__(self, src: np.ndarray, pos: int, end: int, n: int, signed: bool) -> None:
        self.src, self.pos, self.end, self.n, self.signed = src, pos, end, n, signed
        self._pairs: tuple[np.ndarray, np.ndarray] | None = None

    def values(self) -> np.ndarray:
        arr, u = unit.output(self.n, self.signed)
        intdecode.rle_decode(self.src, self.pos, self.end, self.n, self.signed, u, np.zeros(1, np.int64), -1)
        return arr

    def runs(self) -> tuple[np.ndarray, np.ndarray]:
        """(value of each run: int64 or uint64, the row each run ends before), parsed once."""
        if self._pairs is None:
            body = self.src[self.pos : self.end]
            # Checked input: every uvarint ends in the one byte of it below 0x80.
            pairs = np.empty(int(np.count_nonzero(body < 0x80)), dtype=np.uint64)
            intdecode.uvarints_into(self.src, self.pos, self.end, pairs)
            values, lengths = pairs[0::2], pairs[1::2]
            if self.signed:
                values = ((values >> np.uint64(1)) ^ (np.uint64(0) - (values & np.uint64(1)))).view(np.int64)
            self._pairs = (np.ascontiguousarray(values), np.cumsum(lengths.astype(np.int64)))
        return self._pairs

    def take(self, rows: np.ndarray) -> np.ndarray:
        values, ends = self.runs()
        return values[run_index(ends, rows)]

    def gather(self, table: np.ndarray, out: np.ndarray) -> int:
        """``out[i] = table[value of row i]``, run by run (the values are dictionary codes):
        the row count, or a negative status when a code is outside ``table``."""
        values, ends = self.runs()
        return int(ck.runs_take_into(values, ends, table, out))


class RunLength:
    name = "rle"
    reference = "PackRLE"
    tag = int(QPackTag.RLE)

    def estimate(self, s: IntStats, to_beat: int | None) -> Plan | None:
        if s.n < 8 or s.probe_runs * 2 > min(32, s.n):
            return None
        return Plan(self.name, 2 + uvarint_len(s.n) + s.rle_body_size())

    def encode(self, out: bytearray, s: IntStats, plan: Plan, child: ChildEncoder) -> None:
        out += bytes((self.tag, unit.kind64(s.signed)))
        write_uvarint(out, s.n)
        buf = unit.zero_body(s.rle_body_size())
        k = intcodecs.rle_encode(s.u, s.signed, buf)
        out += buf[:k].tobytes()

    def _runs(self, r: ByteReader, expect: int | None, decode: bool) -> IntPayload | None:
        signed = unit.read_kind64(r, self.tag)
        c, start = unit.count(r, "RLE element count", expect)
        unit.cap(r, c, expect, "RLE element count", start)
        buf = r.array()
        errpos = np.zeros(1, dtype=np.int64)
        if decode and expect is not None:
            # Few long runs (a sorted or low-cardinality column): check them all now, for
            # the price of a few runs, and keep them unexpanded, so a selective filter
            # takes its rows from the runs. Many short runs: stop at the limit, then
            # check and expand in one pass.
            end = intdecode.rle_decode(buf, r.pos, r.end, c, signed, unit.EMPTY_U64, errpos, c // LONG_RUNS)
            if end != ERR_LIMIT:
                unit.status(r, end, "RLE runs", int(errpos[0]))
                runs = _Runs(buf, r.pos, int(end), c, signed)
                r.pos = int(end)
                return IntPayload(runs.values, runs.take, runs=runs.runs, gather=None if signed else runs.gather)
            arr, u = unit.output(c, signed)
            end = intdecode.rle_decode(buf, r.pos, r.end, c, signed, u, errpos, -1)
            unit.status(r, end, "RLE runs", int(errpos[0]))
            r.pos = int(end)
            return IntPayload(values=arr)
        # Validate the runs before allocating: a 5-byte payload may declare 2**24 rows.
        end = intdecode.rle_decode(buf, r.pos, r.end, c, signed, unit.EMPTY_U64, errpos, -1)
        unit.status(r, end, "RLE runs", int(errpos[0]))
        payload = None
        if decode:
            arr, u = unit.output(c, signed)
            if c:
                intdecode.rle_decode(buf, r.pos, r.end, c, signed, u, errpos, -1)
            payload = IntPayload(values=arr)
        r.pos = int(end)
        return payload

    def read(self, r: ByteReader, expect: int | None, copy: bool, depth: int, child: ChildReader) -> IntPayload:
        payload = self._runs(r, expect, True)
        assert payload is not None
        return payload

    def skip(self, r: ByteReader, expect: int | None, depth: int, child: ChildReader) -> None:
        self._runs(r, expect, False)

    def capped(self, plan: Plan) -> bool:
        return True


RLE = RunLength()
