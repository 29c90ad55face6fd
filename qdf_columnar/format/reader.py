"""Bounds-checked cursor over an immutable byte buffer.

Every read checks the remaining length first and raises :class:`TruncatedError`
with the byte offset; nothing is ever clamped. Counts read from the wire are
checked with :meth:`ByteReader.count` against what the remaining bytes could
possibly hold *before* anything is allocated from them.
"""

from __future__ import annotations

import struct

import numpy as np

from ..errors import CorruptDataError, TruncatedError

_U16 = struct.Struct("<H")
_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")
_F32 = struct.Struct("<f")
_F64 = struct.Struct("<d")


class ByteReader:
    """A cursor over ``buf`` (bytes, bytearray, memoryview or uint8 ndarray)."""

    __slots__ = ("buf", "pos", "end", "column", "_arr")

    def __init__(self, buf: bytes | bytearray | memoryview | np.ndarray, pos: int = 0, end: int | None = None) -> None:
        if isinstance(buf, np.ndarray):
            buf = memoryview(np.ascontiguousarray(buf, dtype=np.uint8))
        self.buf = memoryview(buf).cast("B") if not isinstance(buf, bytes) else buf
        self.pos = pos
        self.end = len(self.buf) if end is None else end
        self.column: str | None = None
        self._arr: np.ndarray | None = None

    # ------------------------------------------------------------------ basics
    @property
    def remaining(self) -> int:
        return self.end - self.pos

    def array(self) -> np.ndarray:
        """The whole underlying buffer as a read-only uint8 array (no copy)."""
        if self._arr is None:
            self._arr = np.frombuffer(self.buf, dtype=np.uint8)
        return self._arr

    def truncated(self, what: str, need: int) -> TruncatedError:
        return TruncatedError(
            f"input ends inside {what}: needs {need} more bytes, {self.remaining} left",
            column=self.column,
            offset=self.pos,
        )

    def corrupt(self, what: str, offset: int | None = None) -> CorruptDataError:
        return CorruptDataError(what, column=self.column, offset=self.pos if offset is None else offset)

    def need(self, n: int, what: str) -> None:
        if n > self.end - self.pos:
            raise self.truncated(what, n)

    def u8(self, what: str = "a byte") -> int:
        if self.pos >= self.end:
            raise self.truncated(what, 1)
        b = self.buf[self.pos]
        self.pos += 1
        return b

    def peek(self, what: str = "a tag") -> int:
        if self.pos >= self.end:
            raise self.truncated(what, 1)
        return self.buf[self.pos]

    def take(self, n: int, what: str = "a byte run") -> memoryview | bytes:
        """Return the next ``n`` bytes (a slice of the input, no copy for memoryviews)."""
        if n < 0 or n > self.end - self.pos:
            raise self.truncated(what, n)
        start = self.pos
        self.pos += n
        return self.buf[start : self.pos]

    def take_bytes(self, n: int, what: str = "a byte run") -> bytes:
        return bytes(self.take(n, what))

    def take_array(self, n: int, what: str = "a byte run") -> np.ndarray:
        """The next ``n`` bytes as a uint8 array view of the input."""
        self.need(n, what)
        start = self.pos
        self.pos += n
        return self.array()[start : start + n]

    def skip(self, n: int, what: str = "a byte run") -> None:
        self.need(n, what)
        self.pos += n

    # ------------------------------------------------------------- fixed width
    def u16(self, what: str = "a u16") -> int:
        self.need(2, what)
        v = _U16.unpack_from(self.buf, self.pos)[0]
        self.pos += 2
        return v

    def u32(self, what: str = "a u32") -> int:
        self.need(4, what)
        v = _U32.unpack_from(self.buf, self.pos)[0]
        self.pos += 4
        return v

    def u64(self, what: str = "a u64") -> int:
        self.need(8, what)
        v = _U64.unpack_from(self.buf, self.pos)[0]
        self.pos += 8
        return v

    def f32(self, what: str = "a float32") -> float:
        self.need(4, what)
        v = _F32.unpack_from(self.buf, self.pos)[0]
        self.pos += 4
        return v

    def f64(self, what: str = "a float64") -> float:
        self.need(8, what)
        v = _F64.unpack_from(self.buf, self.pos)[0]
        self.pos += 8
        return v

    # ----------------------------------------------------------------- varints
    def uvarint(self, what: str = "a uvarint") -> int:
        """Read a ULEB128 (max 10 bytes; the 10th byte may only be 0 or 1)."""
        buf = self.buf
        pos = self.pos
        end = self.end
        if pos < end and buf[pos] < 0x80:  # one byte: most counts, widths and ids
            self.pos = pos + 1
            return buf[pos]
        result = 0
        shift = 0
        for i in range(10):
            if pos >= end:
                self.pos = pos
                raise self.truncated(what, 1)
            b = buf[pos]
            pos += 1
            if b < 0x80:
                if i == 9 and b > 1:
                    raise self.corrupt(f"{what} overflows 64 bits", pos - 1)
                self.pos = pos
                return result | (b << shift)
            result |= (b & 0x7F) << shift
            shift += 7
        raise self.corrupt(f"{what} is longer than 10 bytes", pos - 1)

    def zigzag(self, what: str = "a zigzag varint") -> int:
        u = self.uvarint(what)
        return (u >> 1) ^ -(u & 1)

    def count(self, what: str, *, min_bytes_each: float = 1.0, limit: int | None = None) -> int:
        """Read a uvarint element count and reject it if the input cannot hold it.

        ``min_bytes_each`` is the least number of bytes each element needs on the
        wire (may be fractional, e.g. 1/8 for a bit per element, or 0 when
        elements may take no bytes, in which case ``limit`` must bound it).
        """
        start = self.pos
        n = self.uvarint(what)
        if limit is not None and n > limit:
            raise self.corrupt(f"{what} {n} exceeds the limit {limit}", start)
        if min_bytes_each > 0:
            need = -(-n * min_bytes_each // 1) if n < (1 << 62) else n  # ceil, in Python numbers
            if need > self.end - self.pos:
                raise TruncatedError(
                    f"{what} declares {n} elements but only {self.end - self.pos} bytes remain",
                    column=self.column,
                    offset=start,
                )
        return n
