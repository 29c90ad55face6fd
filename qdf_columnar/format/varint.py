"""ULEB128 uvarints (at most 10 bytes, the 10th may only be 0 or 1) and zigzag mapping.

Writers append to a ``bytearray``; readers live on :class:`~qdf_columnar.format.reader.ByteReader`.
"""

from __future__ import annotations

MASK64 = (1 << 64) - 1


def zigzag(v: int) -> int:
    """Map a signed 64-bit int to unsigned: (v << 1) ^ (v >> 63)."""
    return ((v << 1) ^ (v >> 63)) & MASK64


def unzigzag(u: int) -> int:
    """Inverse of :func:`zigzag`."""
    return (u >> 1) ^ -(u & 1)


def uvarint_len(v: int) -> int:
    """Number of bytes :func:`write_uvarint` uses for ``v`` (0 <= v < 2**64)."""
    n = 1
    while v >= 0x80:
        v >>= 7
        n += 1
    return n


def write_uvarint(out: bytearray, v: int) -> None:
    """Append ``v`` (0 <= v < 2**64) as ULEB128."""
    if v < 0x80:
        out.append(v)
        return
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)


def encode_uvarint(v: int) -> bytes:
    """Return ``v`` as ULEB128 bytes."""
    out = bytearray()
    write_uvarint(out, v)
    return bytes(out)
