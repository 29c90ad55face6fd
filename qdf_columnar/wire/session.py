"""Encode / decode sessions: one body value at a time over Dense state that can outlive it.

``dumps`` / ``loads`` run one session per call; a stream (:mod:`qdf_columnar.stream`)
keeps one session for all its messages, so intern ids, map shapes, the predictors and
the per-field string-delta bases carry over from message to message (qdf-wire-v1.md
§2.9). Sessions only produce and consume *bodies*: the 5-byte header and the framing
belong to the caller.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from ..errors import CorruptDataError, UnsupportedTypeError
from ..format.reader import ByteReader
from ..format.tags import ContainerTag
from ..options import Options, columnar_enabled
from .context import MAX_DEPTH, DecodeContext, EncodeContext, ensure_recursion_room
from .values_read import read_value
from .values_write import write_fast, write_value

try:  # the Numba transcoding fast path; without it the Python reader does all
    from . import fast_dec as _fast_dec
except ImportError:  # pragma: no cover - msgpack is a dependency
    _fast_dec = None

__all__ = ["EncodeSession", "DecodeSession", "STREAM_FORBIDDEN"]

#: Option bits a stream never uses (§2.9): no entropy pass, no column index.
STREAM_FORBIDDEN = Options.RANS | Options.COLUMN_INDEX


class EncodeSession:
    """Encoder state for a run of bodies written with one set of options."""

    def __init__(self, opts: Options, *, stream: bool = False) -> None:
        opts = Options(opts)
        if stream:
            opts &= ~STREAM_FORBIDDEN
        self.opts = opts
        self.ctx = EncodeContext(opts)
        ensure_recursion_room(self.ctx.max_depth)
        try:
            from .fast_enc import try_write
        except ImportError:  # the kernels cannot load: the Python writer does everything
            try_write = None
        self._try_write = try_write

    def write(self, out: bytearray, obj: object) -> None:
        """Append the body bytes of one value to ``out``.

        Atomic: when it raises (a value that cannot be encoded), nothing is appended and
        the Dense state is as before, so the next value of a stream is still read right.
        """
        ctx = self.ctx
        ctx.depth = 0
        mark = len(out)
        try:
            # Atomic by construction: the fast paths decline before changing anything. A map
            # (the usual stream message) cannot be a columnar list: straight to the transcoder.
            fast = self._try_write
            if fast is not None and type(obj) is dict:
                if fast(out, obj, ctx):
                    return
            elif write_fast(out, obj, ctx):
                return
        except BaseException:
            del out[mark:]
            raise
        cp = ctx.dense.checkpoint()
        try:
            write_value(out, obj, ctx)
        except BaseException as err:
            del out[mark:]
            ctx.depth = 0
            ctx.in_repeated = False
            ctx.dense.rollback(cp)
            if isinstance(err, UnsupportedTypeError) and getattr(err, "qdf_path", None) == []:
                raise UnsupportedTypeError(err.reason) from None
            raise

    def write_table(self, out: bytearray, table: Any) -> None:
        """Append one record batch as a columnar container (EF, or F7 with nested columns).

        In speed mode (no columnar option) the batch is written row-major, one map per row.
        """
        from ..columns.inputs import to_arrow_table

        tbl = to_arrow_table(table)
        mark = len(out)
        try:
            if columnar_enabled(self.opts):
                from .colstruct_write import write_table_columnar

                write_table_columnar(out, tbl, self.ctx)
            else:
                from .rows import rows_for_speed

                write_value(out, rows_for_speed(tbl), self.ctx)
        except BaseException:
            del out[mark:]
            self.ctx.depth = 0
            raise


class DecodeSession:
    """Decoder state for a run of bodies read with one header."""

    def __init__(self, flags: int = 0) -> None:
        self.ctx = DecodeContext(flags=flags)
        ensure_recursion_room(MAX_DEPTH)

    def read(self, buf: bytes | bytearray | memoryview, start: int, end: int) -> object:
        """Decode the one value that must fill ``buf[start:end]`` exactly."""
        self.ctx.depth = 0
        if _fast_dec is not None:
            ok, value = _fast_dec.try_read(buf, start, end, self.ctx)
            if ok:
                return value
        r = ByteReader(buf, start, end)
        value = read_value(r, self.ctx)
        if r.pos != end:
            raise CorruptDataError(f"{end - r.pos} trailing bytes after the message value", offset=r.pos)
        return value

    def read_table(self, buf: bytes | bytearray | memoryview, start: int, end: int) -> pa.Table:
        """Decode a message holding a record batch (columnar container or list of maps) as Arrow."""
        from ..api import _decode_columnar, _decode_rows

        r = ByteReader(buf, start, end)
        self.ctx.depth = 0
        root = r.peek("the message value")
        if root in (ContainerTag.COL_STRUCT, ContainerTag.HYBRID_COL_STRUCT):
            r.pos += 1
            return _decode_columnar(r, self.ctx, None, None, copy=True, threads=False,
                                    hybrid=root == ContainerTag.HYBRID_COL_STRUCT)
        return _decode_rows(r, self.ctx, None, None)
