"""The encoder's integer kernels give what the loops they replaced gave.

``bitpack.pack_for`` writes the bytes the byte-at-a-time packer wrote, and nothing past
them; ``intcodecs.int_stats`` and ``bitlen_hist`` give the statistics of the one-loop
versions. The references below are verbatim copies of the replaced kernels, compiled
with plain ``numba.njit``. Packing: every width 0-56, lengths on both sides of the
word-at-a-time loops' ends, values wider than the width (masked) and a base that
wraps: same byte count, same bytes, and the bytes after the output untouched.
"""

from __future__ import annotations

import numba
import numpy as np
import pytest
from qdf_kernels import bitpack, intcodecs
from qdf_kernels.intcodecs import _bitlen

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


_SIGN = np.uint64(1 << 63)


@numba.njit(cache=False)
def ref_int_stats(values, flip, out):  # type: ignore[no-untyped-def]
    n = np.uint64(values.shape[0])
    mn = values[0] ^ flip
    mx = mn
    dmn = np.uint64(0xFFFFFFFFFFFFFFFF)
    dmx = _U0
    runs = np.uint64(1)
    probe = min(n, np.uint64(32))
    prev = values[0]
    for i in range(_U1, n):
        v = values[i]
        x = v ^ flip
        mn = min(mn, x)
        mx = max(mx, x)
        d = (v - prev) ^ _SIGN
        dmn = min(dmn, d)
        dmx = max(dmx, d)
        if i < probe and v != prev:
            runs += _U1
        prev = v
    out[0] = mn ^ flip
    out[1] = mx ^ flip
    if n < np.uint64(2):
        out[2] = _U0
        out[3] = _U0
    else:
        out[2] = dmn ^ _SIGN
        out[3] = dmx ^ _SIGN
    out[4] = runs
    return np.int64(n)


@numba.njit(cache=False)
def ref_bitlen_hist(values, base, hist):  # type: ignore[no-untyped-def]
    for i in range(np.uint64(values.shape[0])):
        hist[_bitlen(values[i] - base)] += 1
    return np.int64(values.shape[0])


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 31, 32, 33, 1000, 1003])
def test_int_stats_and_width_histogram_are_the_one_loop_kernels(n: int) -> None:
    rng = np.random.default_rng(n)
    for trial in range(40):
        if trial % 3 == 0:  # runs
            v = np.repeat(rng.integers(0, 9, n).astype(np.uint64), 3)[:n].copy()
        else:
            v = rng.integers(0, 2**63, n, dtype=np.int64).view(np.uint64) >> np.uint64(rng.integers(0, 64))
        for flip in (np.uint64(0), _SIGN):
            got, want = np.zeros(5, np.uint64), np.zeros(5, np.uint64)
            assert intcodecs.int_stats(v, flip, got) == ref_int_stats(v, flip, want) == n
            assert got.tolist() == want.tolist()
        for base in (v.min(), np.uint64(0), np.uint64(2**63)):  # the last wraps every value
            got_h, want_h = np.full(65, 3, np.int64), np.full(65, 3, np.int64)  # it adds to the counts
            assert intcodecs.bitlen_hist(v, base, got_h) == ref_bitlen_hist(v, base, want_h) == n
            assert got_h.tolist() == want_h.tolist()
