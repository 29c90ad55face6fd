"""LSB-first bit packing of dictionary codes (F5 / FA indices, FB alphabet widths).

Value i occupies bits [i*b, (i+1)*b) of a little-endian bit stream (qdf-wire-v1.md
§2.4). Moved here from ``wire/bits.py`` (which keeps the presence masks) because the
string units below the wire layer are now their only users.
"""

from __future__ import annotations

import numpy as np
from qdf_kernels import bitpack

from ...errors import CorruptDataError


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
