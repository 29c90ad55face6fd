"""F0 PackBlock: a container of per-block integer payloads.

Layout: kind (ColKind INT 00 / UINT 01, the container's int/uint byte), blkLog (8 or
10: 256- or 1024-row blocks), uvarint(n), one u32 LE offset per block (relative to
the first block, starting at 0 and strictly increasing), then the blocks, each its own
QPack integer payload picked on that block alone. The encoder always writes 256-row
blocks, all of them in one kernel call (``qdf_kernels.block_encode``, which applies
the picker of :mod:`..picker` to each block and writes the same bytes as these codec
units would, block for block: :meth:`PerBlock.encode_each` is that reference). It
has no estimate: the driver writes it and the whole-column payload and keeps the
smaller (PFOR's cost is only an upper bound).
"""

from __future__ import annotations

import struct

import numpy as np
from qdf_kernels import block_encode as kencode
from qdf_kernels import blocks as kblocks

from ...errors import TruncatedError
from ...format.reader import ByteReader
from ...format.tags import ColKind, QPackTag
from ...format.varint import write_uvarint
from ..stats import IntStats
from . import unit
from .unit import ChildEncoder, ChildReader, IntPayload, Plan

#: The block size the encoder writes (blkLogSmall).
BLOCK_LOG = 8
_BLOCK_SIZES = {8: 256, 10: 1024}  # blkLog -> rows (blockSizeFor)
_BLOCK_MIN_BYTES = 9  # u32 offset + the smallest possible block payload (5 bytes)
#: Blocks inside blocks are allowed to this depth, no deeper.
MAX_DEPTH = 2
_U32 = struct.Struct("<I")


class PerBlock:
    name = "block"
    reference = "PackBlock"
    tag = int(QPackTag.BLOCK)

    def estimate(self, s: IntStats, to_beat: int | None) -> Plan | None:
        return None  # measured by the driver, never estimated

    def encode(self, out: bytearray, s: IntStats, plan: Plan, child: ChildEncoder) -> None:
        blk = 1 << BLOCK_LOG
        nblocks = (s.n + blk - 1) // blk
        self._head(out, s)
        body = np.zeros(nblocks * (4 + kencode.BLOCK_BOUND), dtype=np.uint8)
        k = kencode.block_encode(s.u, s.signed, blk, body)
        out += body[:k].tobytes()

    def _head(self, out: bytearray, s: IntStats) -> None:
        out += bytes((self.tag, ColKind.INT if s.signed else ColKind.UINT, BLOCK_LOG))
        write_uvarint(out, s.n)

    def encode_each(self, out: bytearray, s: IntStats, child: ChildEncoder) -> None:
        """:meth:`encode` one Python pick per block through ``child`` (the codec units):
        the reference the kernel's bytes are tested against."""
        n = s.n
        blk = 1 << BLOCK_LOG
        nblocks = (n + blk - 1) // blk
        self._head(out, s)
        table_at = len(out)
        out += bytes(4 * nblocks)
        body_start = len(out)
        for b in range(nblocks):
            _U32.pack_into(out, table_at + 4 * b, len(out) - body_start)
            child.encode(out, s.u[b * blk : (b + 1) * blk], s.signed)

    def _read(self, r: ByteReader, expect: int | None, depth: int, child: ChildReader,
              decode: bool) -> np.ndarray | None:
        if depth >= MAX_DEPTH:
            raise r.corrupt("block payloads nested too deeply", r.pos - 1)
        at = r.pos
        kind = r.u8("the block kind")
        if kind not in (ColKind.INT, ColKind.UINT):
            raise r.corrupt(f"block kind 0x{kind:02x} is neither int (00) nor uint (01)", at)
        signed = kind == ColKind.INT
        at = r.pos
        blk = _BLOCK_SIZES.get(r.u8("the block size log"))
        if blk is None:
            raise r.corrupt("block size log must be 8 or 10", at)
        c, start = unit.count(r, "block element count", expect)
        if c == 0:
            raise r.corrupt("a block payload must hold at least one row", start)
        nblocks = (c + blk - 1) // blk
        if nblocks * _BLOCK_MIN_BYTES > r.remaining:
            raise TruncatedError(f"block payload declares {c} rows in too few bytes", column=r.column, offset=start)
        table_at = r.pos
        offs = r.take_array(4 * nblocks, "the block offset table").view("<u4").astype(np.int64)
        body = r.pos
        if offs[0] != 0 or (nblocks > 1 and bool(np.any(np.diff(offs) <= 0))):
            raise r.corrupt("block offsets must start at 0 and increase strictly", table_at)
        if body + int(offs[-1]) >= r.end:
            raise TruncatedError("a block offset points past the end of the input", column=r.column, offset=table_at)
        arr = None
        if decode:
            arr, u = unit.output(c, signed)
            # Every block in one kernel call; a nested block payload, or any damage, is
            # re-read below in Python, which decodes the former and names the latter.
            end = kblocks.block_decode(r.array(), r.end, body, offs, blk, signed, u, np.zeros(1, dtype=np.int64))
            if end >= 0:
                r.pos = int(end)
                return arr
        for b in range(nblocks):
            r.pos = body + int(offs[b])
            rows = min(blk, c - b * blk)
            v = child.read(r, rows, True, depth + 1) if decode else child.skip(r, rows, depth + 1)
            if b + 1 < nblocks and r.pos != body + int(offs[b + 1]):
                raise r.corrupt(f"block {b} does not end where block {b + 1} starts")
            if v is not None:
                if (v.dtype == np.int64) != signed:
                    raise r.corrupt(f"block {b} has the wrong signedness for its container", body + int(offs[b]))
                assert arr is not None
                arr[b * blk : b * blk + rows] = v
        return arr

    def read(self, r: ByteReader, expect: int | None, copy: bool, depth: int, child: ChildReader) -> IntPayload:
        return IntPayload(values=self._read(r, expect, depth, child, True))

    def skip(self, r: ByteReader, expect: int | None, depth: int, child: ChildReader) -> None:
        self._read(r, expect, depth, child, False)

    def capped(self, plan: Plan) -> bool:
        return False


BLOCK = PerBlock()
