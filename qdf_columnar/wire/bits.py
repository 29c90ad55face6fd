"""LSB-first bit packing helpers for the glue (dictionary indices, presence masks).

Value i occupies bits [i*b, (i+1)*b) of a little-endian bit stream (qdf-wire-v1.md
§2.4). Presence masks are the 1-bit case with the padding bits required to be 0.
"""

from __future__ import annotations

import numpy as np
from qdf_kernels import bitpack

from ..errors import CorruptDataError


def bits_for_distinct(d: int) -> int:
    """ceil(log2 d): the index width for ``d`` distinct values (0 when d <= 1)."""
    return 0 if d <= 1 else int(d - 1).bit_length()


def pack_bits(values: np.ndarray, bits: int) -> bytes:
    """Pack unsigned ``values`` (< 2**bits) at ``bits`` bits each, LSB-first."""
    n = len(values)
    if bits == 0 or n == 0:
        return b""
    out = np.zeros((n * bits + 7) >> 3, dtype=np.uint8)
    bitpack.pack_for(np.ascontiguousarray(values, dtype=np.uint64), np.uint64(0), np.int64(bits), out)
    return out.tobytes()


def unpack_bits(body: np.ndarray, n: int, bits: int) -> np.ndarray:
    """Unpack ``n`` values of ``bits`` bits from ``body`` (uint8) into uint64."""
    if bits == 0 or n == 0:
        return np.zeros(n, dtype=np.uint64)
    out = np.empty(n, dtype=np.uint64)
    status = bitpack.unpack_for(np.ascontiguousarray(body, dtype=np.uint8), np.int64(bits), np.uint64(0), out)
    if status < 0:
        raise CorruptDataError(f"bit-packed body too short for {n} values of {bits} bits")
    return out


def pack_mask(valid: np.ndarray) -> bytes:
    """Presence mask: ceil(n/8) bytes, LSB-first, padding bits 0."""
    return np.packbits(np.ascontiguousarray(valid, dtype=bool), bitorder="little").tobytes()


def unpack_mask(mask: np.ndarray, n: int, *, column: str | None = None, offset: int | None = None) -> np.ndarray:
    """Inverse of :func:`pack_mask`; rejects set padding bits (as the reference does)."""
    if n & 7 and int(mask[-1]) >> (n & 7):
        raise CorruptDataError("presence mask has padding bits set", column=column, offset=offset)
    return np.unpackbits(mask, count=n, bitorder="little").view(bool)
