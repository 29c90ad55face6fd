"""Presence masks: one bit a row, LSB-first, the padding bits required to be 0
(qdf-wire-v1.md §2.4). Dictionary-code packing is in ``codecs/strings/bits.py``.
"""

from __future__ import annotations

import numpy as np

from ..errors import CorruptDataError


def pack_mask(valid: np.ndarray) -> bytes:
    """Presence mask: ceil(n/8) bytes, LSB-first, padding bits 0."""
    return np.packbits(np.ascontiguousarray(valid, dtype=bool), bitorder="little").tobytes()


def unpack_mask(mask: np.ndarray, n: int, *, column: str | None = None, offset: int | None = None) -> np.ndarray:
    """Inverse of :func:`pack_mask`; rejects set padding bits (as the reference does)."""
    if n & 7 and int(mask[-1]) >> (n & 7):
        raise CorruptDataError("presence mask has padding bits set", column=column, offset=offset)
    return np.unpackbits(mask, count=n, bitorder="little").view(bool)
