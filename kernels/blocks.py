"""F0 PackBlock decoding: every block of a per-block integer payload in one call.

A PackBlock payload holds 256- or 1024-row blocks, each its own QPack integer payload
(raw, FOR, Delta+FOR, RLE, dictionary or PFOR). Decoding them one Python call per
block costs tens of microseconds a block, far from memory speed, so this kernel walks
the blocks itself with the single-payload kernels of :mod:`.bitpack` and
:mod:`.intdecode`. It accepts only what the Python reader (``codecs/ints/``)
accepts; on anything else (a nested block payload, a malformed block) it returns a
negative status and the caller re-reads the payload in Python, which either decodes
it (nested blocks) or raises the precise error.
"""

from __future__ import annotations

import numpy as np

from ._jit import kernel
from ._status import ERR_CORRUPT, ERR_TRUNCATED
from .bitpack import unpack_delta, unpack_dict, unpack_for
from .intdecode import _get_uvarint, pfor_patch, rle_decode, uvarints_into

_U0 = np.uint64(0)
_U1 = np.uint64(1)
#: Not decodable here (a nested block payload): the caller takes the Python path.
ERR_UNSUPPORTED = -4

_RAW, _FOR, _DELTA, _RLE, _DICT, _PFOR = 0xE4, 0xE5, 0xE6, 0xEB, 0xED, 0xEE
_K_U64, _K_I64 = 0x03, 0x07
_MAX_BITS = 56
_DICT_MAX = 64


@kernel
def _clz(x):
    """Leading zero bits of a non-zero uint64."""
    n = 0
    while (x >> np.uint64(63 - n)) == _U0:
        n += 1
    return n


@kernel
def _value(src, pos, end, signed):
    """A header uvarint as a uint64 bit pattern (unzigzagged for signed kinds); (value, pos)."""
    v, p = _get_uvarint(src, pos, end)
    if signed:
        v = (v >> _U1) ^ (_U0 - (v & _U1))
    return v, p


@kernel
def _count(src, pos, end, rows):
    """The element count, which must equal the block's rows; the position after it or < 0."""
    c, p = _get_uvarint(src, pos, end)
    if p < 0:
        return p
    if c != np.uint64(rows):
        return np.int64(ERR_CORRUPT)
    return p


@kernel
def _raw(src, pos, end, rows, signed, out):
    kind = np.int64(src[pos])
    if kind > _K_I64 or ((kind & 4) != 0) != signed:
        return np.int64(ERR_CORRUPT)
    width = np.int64(1) << (kind & 3)
    pos = _count(src, pos + 1, end, rows)
    if pos < 0:
        return pos
    if pos + rows * width > end:
        return np.int64(ERR_TRUNCATED)
    sh = np.uint64(64 - 8 * width)
    for i in range(rows):
        v = _U0
        at = pos + i * width
        for k in range(width):
            v |= np.uint64(src[at + k]) << np.uint64(8 * k)
        if signed and width < 8:  # sign-extend through the int64 view
            v = np.uint64(np.int64(v << sh) >> np.int64(sh))
        out[i] = v
    return pos + rows * width


@kernel
def _bits(src, pos, end):
    if pos >= end:
        return np.int64(-1), np.int64(ERR_TRUNCATED)
    b = np.int64(src[pos])
    if b > _MAX_BITS:
        return b, np.int64(ERR_CORRUPT)
    return b, pos + 1


@kernel
def _packed(src, pos, end, nbytes):
    """(body view, position after it) of ``nbytes`` packed bytes, or position < 0."""
    if pos + nbytes > end:
        return src[pos:pos], np.int64(ERR_TRUNCATED)
    return src[pos:pos + nbytes], pos + nbytes


@kernel
def _counted(src, pos, end, rows, nbytes):
    """The element count (== ``rows``) then ``nbytes`` packed bytes: (body view, position
    after it), the position < 0 on failure."""
    pos = _count(src, pos, end, rows)
    if pos < 0:
        return src[0:0], pos
    return _packed(src, pos, end, nbytes)


@kernel
def _one(src, pos, end, rows, signed, out, errpos, scratch):
    """Decode the payload of one block at ``pos`` into ``out`` (``rows`` long); its end or < 0.

    ``scratch`` (uint64, _DICT_MAX long) holds a dictionary block's table: one buffer
    for every block rather than an allocation per block."""
    if pos >= end:
        return np.int64(ERR_TRUNCATED)
    tag = np.int64(src[pos])
    pos += 1
    if tag == _RAW:
        if pos >= end:
            return np.int64(ERR_TRUNCATED)
        return _raw(src, pos, end, rows, signed, out)
    if tag != _FOR and tag != _DELTA and tag != _RLE and tag != _DICT and tag != _PFOR:
        return np.int64(ERR_UNSUPPORTED)
    if pos >= end:
        return np.int64(ERR_TRUNCATED)
    kind = np.int64(src[pos])
    if kind != (_K_I64 if signed else _K_U64):
        return np.int64(ERR_CORRUPT)
    pos += 1
    if tag == _RLE:
        pos = _count(src, pos, end, rows)
        if pos < 0:
            return pos
        return rle_decode(src, pos, end, rows, signed, out, errpos, -1)
    if tag == _DICT:
        d, pos = _get_uvarint(src, pos, end)
        if pos < 0:
            return pos
        if d == _U0 or d > np.uint64(_DICT_MAX):
            return np.int64(ERR_CORRUPT)
        table = scratch[:np.int64(d)]
        pos = uvarints_into(src, pos, end, table)
        if pos < 0:
            return pos
        if signed:
            for i in range(np.int64(d)):
                table[i] = (table[i] >> _U1) ^ (_U0 - (table[i] & _U1))
        bits = np.int64(0) if d == _U1 else np.int64(64 - _clz(d - _U1))
        body, pos = _counted(src, pos, end, rows, (rows * bits + 7) // 8)
        if pos < 0:
            return pos
        st = unpack_dict(body, bits, table, out)
        return st if st < 0 else pos
    if tag == _PFOR:
        pos = _count(src, pos, end, rows)
        if pos < 0:
            return pos
    b, pos = _bits(src, pos, end)
    if pos < 0:
        return pos
    base, pos = _value(src, pos, end, signed)
    if pos < 0:
        return pos
    if tag == _DELTA:
        min_delta, pos = _value(src, pos, end, True)
        if pos < 0:
            return pos
        body, pos = _counted(src, pos, end, rows, (max(rows - 1, 0) * b + 7) // 8)
        if pos < 0:
            return pos
        st = unpack_delta(body, b, base, min_delta, out)
        return st if st < 0 else pos
    nbytes = (rows * b + 7) // 8
    if tag == _FOR:
        body, pos = _counted(src, pos, end, rows, nbytes)
    else:  # PFOR: the count came first
        body, pos = _packed(src, pos, end, nbytes)
    if pos < 0:
        return pos
    st = unpack_for(body, b, base, out)
    if st < 0 or tag == _FOR:
        return st if st < 0 else pos
    exc_n, pos = _get_uvarint(src, pos, end)
    if pos < 0:
        return pos
    if exc_n > np.uint64(rows) or pos + 2 * np.int64(exc_n) > end:
        return np.int64(ERR_CORRUPT)
    return pfor_patch(src, pos, end, exc_n, rows, base, out, errpos)


@kernel
def block_decode(src, end, body, offs, blk, signed, out, errpos):
    """Decode every block of a PackBlock payload whose blocks start at ``body + offs[b]``.

    ``out`` (uint64, the payload's rows) receives the values; block ``b`` holds rows
    ``[b * blk, min((b + 1) * blk, n))`` and must end where block ``b + 1`` starts.
    Returns the position after the last block, or a negative status (ERR_UNSUPPORTED
    for a nested block payload) with no promise about ``out``.
    """
    n = out.shape[0]
    nb = offs.shape[0]
    pos = body
    scratch = np.empty(_DICT_MAX, dtype=np.uint64)
    for b in range(nb):
        start = b * blk
        rows = min(blk, n - start)
        pos = _one(src, body + offs[b], end, rows, signed, out[start:start + rows], errpos, scratch)
        if pos < 0:
            return pos
        if b + 1 < nb and pos != body + offs[b + 1]:
            return np.int64(ERR_CORRUPT)
    return pos


def _warmup() -> None:
    """Compile with the glue's dtypes: read-only and writable uint8 payloads, uint64 output."""
    # Two 256-row blocks: FOR (bits 0, base 5) then RLE (one run of 44), signed and unsigned.
    for signed, kind in ((False, _K_U64), (True, _K_I64)):
        one = bytes([_FOR, kind, 0, 10]) + bytes([0x80, 0x02])
        two = bytes([_RLE, kind, 44, 3, 44])
        payload = np.frombuffer(one + two, dtype=np.uint8)
        offs = np.array([0, len(one)], dtype=np.int64)
        out = np.empty(300, dtype=np.uint64)
        errpos = np.zeros(1, dtype=np.int64)
        for src in (payload, payload.copy()):
            block_decode(src, np.int64(len(src)), np.int64(0), offs, np.int64(256), signed, out, errpos)
