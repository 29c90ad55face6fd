"""LSB-first bit packing kernels behind the v1 QPack codecs (E5 PackFor, E6 PackDeltaFor,
ED PackDict indices, EE PackPFor body).

Value i occupies bits [i*b, (i+1)*b) of a little-endian bit stream (docs/FORMAT.md,
qdf-wire-v1.md §2.4). Widths are 0..56 so a 64-bit accumulator never overflows
(<= 7 carried bits + 56 new bits). Values are always uint64 (the glue views int64 as
uint64; wrapping arithmetic is exactly what the wire specifies). Payload bytes are
``uint8[::1]`` (read-only or writable: the two specialisations warmed up).
"""

from __future__ import annotations

import numpy as np

from ._jit import kernel
from ._status import ERR_CORRUPT, ERR_TRUNCATED

_U0 = np.uint64(0)
_U1 = np.uint64(1)
_U8 = np.uint64(8)
_FF = np.uint64(0xFF)


@kernel
def pack_for(values, base, bits, out):
    """Pack ``(values[i] - base) & mask`` at ``bits`` bits into ``out``; return bytes written.

    values: uint64[::1]; base: uint64; bits: 0..56; out: uint8[::1] of at least
    ceil(n*bits/8) bytes (caller sized it). Used for FOR (base=min), PFOR (masked
    low bits) and dict indices (base=0).
    """
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


@kernel
def pack_delta(values, min_delta, bits, out):
    """Pack ``(values[i] - values[i-1]) - min_delta`` for i >= 1 (wrapping uint64); return bytes.

    ``out`` holds at least ceil((n-1)*bits/8) bytes. Same stream layout as :func:`pack_for`.
    """
    n = np.uint64(values.shape[0])
    b = np.uint64(bits)
    if b == _U0 or n < np.uint64(2):
        return np.int64(0)
    mask = (_U1 << b) - _U1
    acc = _U0
    have = _U0
    pos = _U0
    prev = values[0]
    for i in range(_U1, n):
        v = values[i]
        acc |= ((v - prev - min_delta) & mask) << have
        prev = v
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


@kernel
def unpack_for(src, bits, base, out):
    """Fill ``out[i] = unpack(i) + base`` (wrapping); return n or ERR_TRUNCATED.

    src: uint8[::1] body; bits 0..56 (caller checked); out: uint64[::1] of length n.
    bits == 0 broadcasts ``base`` (E5 constant column).
    """
    n = np.uint64(out.shape[0])
    b = np.uint64(bits)
    if b == _U0:
        for i in range(n):
            out[i] = base
        return np.int64(n)
    if (n * b + np.uint64(7)) // _U8 > np.uint64(src.shape[0]):
        return ERR_TRUNCATED
    mask = (_U1 << b) - _U1
    acc = _U0
    have = _U0
    pos = _U0
    for i in range(n):
        while have < b:
            acc |= np.uint64(src[pos]) << have
            pos += _U1
            have += _U8
        out[i] = (acc & mask) + base
        acc >>= b
        have -= b
    return np.int64(n)


@kernel
def unpack_delta(src, bits, first, min_delta, out):
    """Delta+FOR decode: out[0] = first, out[i] = out[i-1] + unpack(i-1) + min_delta (wrapping).

    Unpack and prefix sum are fused in one pass (numba-kernels.md §8.3). Returns n
    or ERR_TRUNCATED when ``src`` is shorter than ceil((n-1)*bits/8).
    """
    n = np.uint64(out.shape[0])
    if n == _U0:
        return np.int64(0)
    b = np.uint64(bits)
    v = first
    out[0] = v
    if b == _U0:
        for i in range(_U1, n):
            v += min_delta
            out[i] = v
        return np.int64(n)
    if ((n - _U1) * b + np.uint64(7)) // _U8 > np.uint64(src.shape[0]):
        return ERR_TRUNCATED
    mask = (_U1 << b) - _U1
    acc = _U0
    have = _U0
    pos = _U0
    for i in range(_U1, n):
        while have < b:
            acc |= np.uint64(src[pos]) << have
            pos += _U1
            have += _U8
        v += (acc & mask) + min_delta
        out[i] = v
        acc >>= b
        have -= b
    return np.int64(n)


@kernel
def unpack_dict(src, bits, table, out):
    """Dictionary decode: out[i] = table[unpack(i)]; ERR_CORRUPT on an index >= len(table).

    bits == 0 (one entry) broadcasts table[0]. Returns n, ERR_TRUNCATED or ERR_CORRUPT.
    """
    n = np.uint64(out.shape[0])
    d = np.uint64(table.shape[0])
    b = np.uint64(bits)
    if b == _U0:
        for i in range(n):
            out[i] = table[0]
        return np.int64(n)
    if (n * b + np.uint64(7)) // _U8 > np.uint64(src.shape[0]):
        return ERR_TRUNCATED
    mask = (_U1 << b) - _U1
    acc = _U0
    have = _U0
    pos = _U0
    for i in range(n):
        while have < b:
            acc |= np.uint64(src[pos]) << have
            pos += _U1
            have += _U8
        k = acc & mask
        if k >= d:
            return ERR_CORRUPT
        out[i] = table[k]
        acc >>= b
        have -= b
    return np.int64(n)


def _warmup() -> None:
    """Compile every kernel here with the dtypes the glue passes (read-only and writable src)."""
    vals = np.arange(5, dtype=np.uint64)
    buf = np.zeros(16, dtype=np.uint8)
    pack_for(vals, np.uint64(0), 3, buf)
    pack_delta(vals, np.uint64(1), 1, buf)
    out = np.empty(5, dtype=np.uint64)
    table = np.arange(4, dtype=np.uint64)
    ro = np.frombuffer(bytes(16), dtype=np.uint8)
    for src in (buf, ro):
        unpack_for(src, 3, np.uint64(0), out)
        unpack_delta(src, 1, np.uint64(0), np.uint64(1), out)
        unpack_dict(src, 2, table, out)
