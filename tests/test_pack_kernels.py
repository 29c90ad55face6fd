"""``bitpack.pack_for`` writes the bytes the byte-at-a-time packer wrote, and nothing past them.

The reference below is a verbatim copy of the packer the word-at-a-time loop replaced
(bits of 8 and more are stored a whole 64-bit word at a time while 8 bytes fit, then
byte by byte), compiled with plain ``numba.njit``. Every width 0-56, lengths on both
sides of the word-at-a-time loop's end, values wider than the width (masked) and a
base that wraps: same byte count, same bytes, and the bytes after the output untouched.
"""

from __future__ import annotations

import numba
import numpy as np
import pytest
from qdf_kernels import bitpack

_U0, _U1, _U8, _FF = np.uint64(0), np.uint64(1), np.uint64(8), np.uint64(0xFF)
GUARD = 16


@numba.njit(cache=False)
def ref_pack_for(values, base, bits, out):  # type: ignore[no-untyped-def]
    n = np.uint64(values.shape[0])
    b = np.uint64(bits)
    if b == _U0:
        return np.int64(0)
    mask = (_U1 << b) - _U1
    acc = _U0
    have = _U0
    pos = _U0
    for i in range(n):
        acc |= ((values[i] - base) & mask) << have
        have += b
        while have >= _U8:
            out[pos] = np.uint8(acc & _FF)
            acc >>= _U8
            have -= _U8
            pos += _U1
    if have > _U0:
        out[pos] = np.uint8(acc & _FF)
        pos += _U1
    return np.int64(pos)


@pytest.mark.parametrize("bits", range(57))
def test_pack_for_writes_the_reference_bytes_and_nothing_past_them(bits: int) -> None:
    rng = np.random.default_rng(bits)
    for n in (0, 1, 2, 7, 8, 9, 15, 16, 17, 63, 64, 65, 1000, 1003):
        values = rng.integers(0, 2**63, n, dtype=np.int64).view(np.uint64) * np.uint64(2) + np.uint64(1)
        base = np.uint64(rng.integers(0, 2**62)) if n % 2 else np.uint64(0)  # wraps below it
        size = (n * bits + 7) // 8
        want = np.zeros(size, np.uint8)
        got = np.full(size + GUARD, 0xA5, np.uint8)
        got[:size] = 0  # the writer hands a zeroed body
        assert bitpack.pack_for(values, base, bits, got[:size]) == ref_pack_for(values, base, bits, want) == size
        assert got[:size].tobytes() == want.tobytes(), (bits, n)
        assert (got[size:] == 0xA5).all(), (bits, n)
        out = np.empty(n, np.uint64)
        if n and bits:
            assert bitpack.unpack_for(got[:size], bits, base, out) == n
            assert ((out - base) == ((values - base) & np.uint64((1 << bits) - 1))).all()
