"""F0 PackBlock encoding: every 256-row block picked and written in one call.

A per-block payload holds each block as its own QPack integer payload, chosen by the
v1 picker on that block alone (qdf-wire-v1.md §3.1: raw, FOR, Delta+FOR, RLE, Dict,
PFOR, in that order, a later codec replacing the best only when strictly smaller).
Picking in Python costs about 60 microseconds a block (statistics, six estimates,
one packing call), which made the per-block trial most of the encode time on long
columns. This kernel computes the same exact costs with the encode-side kernels of
:mod:`.intcodecs` and :mod:`.bitpack` and writes the winner, so its bytes equal those
of the Python codec units (``qdf_columnar/codecs/ints/``) block for block; the tests
check that they do.
"""

from __future__ import annotations

import numpy as np

from ._jit import kernel
from .bitpack import pack_delta, pack_for, store_le64
from .blocks import _DELTA, _DICT, _DICT_MAX, _FOR, _K_I64, _K_U64, _MAX_BITS, _PFOR, _RAW, _RLE
from .intcodecs import (
    _bitlen,
    _put_uvarint,
    _uvlen,
    _zz,
    bitlen_hist,
    dict_probe,
    int_stats,
    pfor_write_exceptions,
    rle_encode,
    rle_size,
)

_U0 = np.uint64(0)
_SIGN = np.uint64(1 << 63)
#: Bytes a block may take at most: its raw payload (every other pick is no larger).
BLOCK_BOUND = 2 + 2 + 8 * 256


@kernel
def _pfor_plan(n, fb, hdr, spread_len, hist):
    """Go pforPlan*: (width, cost) minimising the conservative PFOR cost over widths fb-1..0."""
    gap_len = _uvlen(np.uint64(n))
    best_b = -1
    best_c = 0
    suffix = 0
    for cand in range(fb - 1, -1, -1):
        suffix += hist[cand + 1]
        c = hdr + (n * cand + 7) // 8 + _uvlen(np.uint64(suffix)) + suffix * (gap_len + spread_len)
        if best_b < 0 or c < best_c:
            best_b = cand
            best_c = c
    return best_b, best_c


@kernel
def _write_block(u, signed, out, pos, stats, table, idx, slots, used, hidx, hist):
    """Pick the codec of one block ``u`` (1..256 rows) and write its payload at ``pos``;
    return the position after it."""
    n = u.shape[0]
    flip = _SIGN if signed else _U0
    int_stats(u, flip, stats)
    mn, mx, dmn, dmx, runs = stats[0], stats[1], stats[2], stats[3], stats[4]
    kind = _K_I64 if signed else _K_U64
    n_len = _uvlen(np.uint64(n))
    # Widths as int64: int64 * uint64 is float64 in Numba.
    fb = np.int64(_bitlen(mx - mn))
    db = np.int64(_bitlen(dmx - dmn))
    mn_wire = _zz(mn, signed)
    # raw, the floor every other codec must beat
    best = 0
    cost = 2 + n_len + 8 * n
    if fb <= _MAX_BITS:
        c = 3 + _uvlen(mn_wire) + n_len + (n * fb + 7) // 8
        if c < cost:
            best, cost = 1, c
    if n >= 4 and db <= _MAX_BITS:
        c = 3 + _uvlen(_zz(u[0], signed)) + _uvlen(_zz(dmn, True)) + n_len + ((n - 1) * db + 7) // 8
        if c < cost:
            best, cost = 2, c
    rle_body = 0
    if n >= 8 and runs * np.uint64(2) <= np.uint64(min(32, n)):
        rle_body = rle_size(u, signed)
        c = 2 + n_len + rle_body
        if c < cost:
            best, cost = 3, c
    d = 0
    ib = 0  # the dictionary's index width
    if n >= 8:
        slots[:] = 0
        used[:] = 0
        hidx[:] = 0
        d = dict_probe(u, slots, used, hidx, table, idx)
        if d > 0:
            ib = 0 if d <= 1 else np.int64(_bitlen(np.uint64(d - 1)))
            values = 0
            for k in range(d):
                values += _uvlen(_zz(table[k], signed))
            c = 2 + _uvlen(np.uint64(d)) + values + n_len + (n * ib + 7) // 8
            if c < cost:
                best, cost = 4, c
    pfor_b = 0
    hdr = 3 + n_len + _uvlen(mn_wire)
    if cost > hdr + n // 8 and n >= 8 and 2 <= fb <= _MAX_BITS:
        hist[:] = 0
        bitlen_hist(u, mn, hist)
        b, c = _pfor_plan(n, fb, hdr, _uvlen(mx - mn), hist)
        if c < cost:
            best, cost, pfor_b = 5, c, b
    # write the winner
    if best == 0:
        out[pos] = _RAW
        out[pos + 1] = kind
        pos = _put_uvarint(out, pos + 2, np.uint64(n))
        for i in range(n):
            store_le64(out, np.uint64(pos), u[i])
            pos += 8
    elif best == 1:
        out[pos] = _FOR
        out[pos + 1] = kind
        out[pos + 2] = fb
        pos = _put_uvarint(out, pos + 3, mn_wire)
        pos = _put_uvarint(out, pos, np.uint64(n))
        pos += pack_for(u, mn, fb, out[pos:])
    elif best == 2:
        out[pos] = _DELTA
        out[pos + 1] = kind
        out[pos + 2] = db
        pos = _put_uvarint(out, pos + 3, _zz(u[0], signed))
        pos = _put_uvarint(out, pos, _zz(dmn, True))
        pos = _put_uvarint(out, pos, np.uint64(n))
        pos += pack_delta(u, dmn, db, out[pos:])
    elif best == 3:
        out[pos] = _RLE
        out[pos + 1] = kind
        pos = _put_uvarint(out, pos + 2, np.uint64(n))
        pos += rle_encode(u, signed, out[pos:pos + rle_body])
    elif best == 4:
        out[pos] = _DICT
        out[pos + 1] = kind
        pos = _put_uvarint(out, pos + 2, np.uint64(d))
        for k in range(d):
            pos = _put_uvarint(out, pos, _zz(table[k], signed))
        pos = _put_uvarint(out, pos, np.uint64(n))
        pos += pack_for(idx, _U0, ib, out[pos:])
    else:
        out[pos] = _PFOR
        out[pos + 1] = kind
        pos = _put_uvarint(out, pos + 2, np.uint64(n))
        out[pos] = pfor_b
        pos = _put_uvarint(out, pos + 1, mn_wire)
        pos += pack_for(u, mn, pfor_b, out[pos:])
        exc_n = 0
        for k in range(pfor_b + 1, 65):
            exc_n += hist[k]
        pos = _put_uvarint(out, pos, np.uint64(exc_n))
        pos += pfor_write_exceptions(u, mn, pfor_b, out[pos:])
    return pos


@kernel
def block_encode(u, signed, blk, out):
    """Write the offset table and the blocks of a PackBlock payload of ``u`` (uint64 bit
    patterns, int64 ones when ``signed``) into ``out`` (zeroed, at least
    ``4 * nblocks + nblocks * BLOCK_BOUND`` bytes); return the bytes written.

    The caller writes what comes before: the tag, the kind, the block size log and
    the row count."""
    n = u.shape[0]
    nb = (n + blk - 1) // blk
    stats = np.empty(5, dtype=np.uint64)
    table = np.zeros(_DICT_MAX, dtype=np.uint64)
    idx = np.empty(blk, dtype=np.uint64)
    slots = np.zeros(128, dtype=np.uint64)
    used = np.zeros(128, dtype=np.uint8)
    hidx = np.zeros(128, dtype=np.int64)
    hist = np.zeros(65, dtype=np.int64)
    body = 4 * nb
    pos = body
    for b in range(nb):
        rel = pos - body
        for k in range(4):
            out[4 * b + k] = np.uint8((rel >> (8 * k)) & 0xFF)
        start = b * blk
        stop = min(start + blk, n)
        pos = _write_block(u[start:stop], signed, out, pos, stats, table, idx[:stop - start], slots, used, hidx,
                           hist)
    return pos


def _warmup() -> None:
    """Compile with the glue's dtypes: uint64 values, both signednesses, a uint8 output."""
    rng = np.random.default_rng(0)
    vals = np.concatenate([np.full(300, 7), rng.integers(0, 40, 300), rng.integers(0, 1 << 40, 300),
                           np.arange(300) * 3]).astype(np.uint64)
    for signed in (False, True):
        out = np.zeros(4 * 5 + 5 * BLOCK_BOUND, dtype=np.uint8)
        block_encode(vals, signed, 256, out)
