"""Chimp128 XOR codec behind v1 tag E7 PackGorilla with kind 0x0F (float64 only).

Verified against the Go writePackedChimpFloat64Slice / readPackedChimpFloat64Slice
(qdf-wire-v1.md §2.4). After the raw first value, per value (2-bit flag, MSB-first):

* ``00`` + 7-bit ring slot: equal to a value among the previous 128;
* ``01`` + slot(7) + lz code(3) + sig(6) + sig bits: XOR against that slot has > 13
  trailing zeros;
* ``10`` + (64 - storedLZ) bits: XOR against the previous value, same rounded lz;
* ``11`` + lz code(3) + (64 - lz) bits: new rounded lz.

lz is rounded down onto {0,8,12,16,18,20,22,24}; the candidate slot comes from a
14-bit low-bits hash of the last index that had those bits. storedLZ is invalidated
(65) by flags 00/01. The MSB-first bit helpers are shared with gorilla.py.
"""

from __future__ import annotations

import numpy as np

from ._jit import kernel
from ._status import ERR_CORRUPT, ERR_TRUNCATED
from .gorilla import clz64, ctz64, flush_bits, put_bits, put_bits64

_U0 = np.uint64(0)
_U1 = np.uint64(1)
_U2 = np.uint64(2)
_U3 = np.uint64(3)
_U7 = np.uint64(7)
_U8 = np.uint64(8)
_U9 = np.uint64(9)
_U64 = np.uint64(64)
_RING_MASK = np.uint64(127)  # chimpN - 1
_THRESHOLD = np.uint64(13)  # chimpThreshold = 6 + log2(128)
_LSB_MASK = np.uint64((1 << 14) - 1)  # chimpLsbMask
_NO_LZ = np.uint64(65)

# chimpLeadingRound / chimpLeadingRep (Go), indexed by the true leading-zero count 0..64.
_ROUND = np.array([0] * 8 + [8] * 4 + [12] * 4 + [16, 16, 18, 18, 20, 20, 22, 22] + [24] * 41, dtype=np.uint64)
_REP = np.array([0] * 8 + [1] * 4 + [2] * 4 + [3, 3, 4, 4, 5, 5, 6, 6] + [7] * 41, dtype=np.uint64)
_REP_TO_LZ = np.array([0, 8, 12, 16, 18, 20, 22, 24], dtype=np.uint64)


@kernel
def chimp_encode(vals, out):
    """Chimp128-encode uint64 bit patterns ``vals`` (n >= 2) into ``out``; return the bit count.

    ``out`` must hold ceil((n-1)*69/8) bytes (flag 11 with lz 0 is the worst case).
    The hash table stores the insertion index of the newest value per 14-bit key
    (-1 = empty, the Go epoch stamp's "not this slice").
    """
    n = np.uint64(vals.shape[0])
    indices = np.full(16384, -1, dtype=np.int64)
    stored = np.zeros(128, dtype=np.uint64)
    pos = _U0
    acc = _U0
    have = _U0
    first = vals[0]
    stored[0] = first
    indices[first & _LSB_MASK] = 0
    index = np.int64(0)  # insertion index of the newest value
    current = _U0  # ring slot of the newest value
    stored_lz = _NO_LZ
    for i in range(_U1, n):
        v = vals[i]
        key = v & _LSB_MASK
        ref = current
        xor = stored[current] ^ v
        tz = _U0
        cand_idx = indices[key]
        if cand_idx >= 0 and index - cand_idx < 128:
            cand = np.uint64(cand_idx) & _RING_MASK
            temp = v ^ stored[cand]
            tz = ctz64(temp)
            if tz > _THRESHOLD:
                ref = cand
                xor = temp
        if xor == _U0:
            pos, acc, have = put_bits(out, pos, acc, have, ref, np.uint64(9))
            stored_lz = _NO_LZ
        elif tz > _THRESHOLD:
            lz = _ROUND[clz64(xor)]
            sig = _U64 - lz - tz
            head = ((np.uint64(128) + ref) << np.uint64(9)) | (_REP[lz] << np.uint64(6)) | sig
            pos, acc, have = put_bits(out, pos, acc, have, head, np.uint64(18))
            pos, acc, have = put_bits64(out, pos, acc, have, xor >> tz, sig)
            stored_lz = _NO_LZ
        else:
            lz = _ROUND[clz64(xor)]
            if lz == stored_lz:
                pos, acc, have = put_bits(out, pos, acc, have, _U2, _U2)
            else:
                stored_lz = lz
                pos, acc, have = put_bits(out, pos, acc, have, np.uint64(24) + _REP[lz], np.uint64(5))
            pos, acc, have = put_bits64(out, pos, acc, have, xor, _U64 - lz)
        current = (current + _U1) & _RING_MASK
        stored[current] = v
        index += 1
        indices[key] = index
    total = pos * _U8 + have
    flush_bits(out, pos, acc, have)
    return np.int64(total)


@kernel
def chimp_decode(src, first, out):
    """Decode a Chimp128 body (exactly its ceil(bits/8) bytes) into uint64 ``out`` (n >= 1).

    Returns n, ERR_TRUNCATED, or ERR_CORRUPT for the streams Go rejects with ErrBadTag
    (flag 01 with sig == 0 or tz <= 13; flag 10 with no stored lz). The bit reader is
    inlined as in gorilla.gorilla_decode: one 64-bit window for the flag and header
    (<= 18 bits), one for the payload (<= 64 bits).
    """
    n = np.uint64(out.shape[0])
    end = np.uint64(src.shape[0])
    nbits = end * _U8
    stored = np.zeros(128, dtype=np.uint64)
    stored[0] = first
    out[0] = first
    current = _U0
    stored_lz = _NO_LZ
    bp = _U0
    for i in range(_U1, n):
        if bp + _U2 > nbits:
            return ERR_TRUNCATED
        # inline 64-bit window at bit bp (zero padded past end): see the docstring
        j = bp >> _U3
        win = _U0
        if j + _U9 <= end:
            for k in range(8):
                win = (win << _U8) | np.uint64(src[j + np.uint64(k)])
            nx = np.uint64(src[j + _U8])
        else:
            for k in range(8):
                jj = j + np.uint64(k)
                win = (win << _U8) | (np.uint64(src[jj]) if jj < end else _U0)
            nx = np.uint64(src[j + _U8]) if j + _U8 < end else _U0
        if bp & _U7:
            win = (win << (bp & _U7)) | (nx >> (_U8 - (bp & _U7)))
        flag = win >> np.uint64(62)
        mb = _U0  # payload bits still to read
        if flag == _U0:
            if bp + np.uint64(9) > nbits:
                return ERR_TRUNCATED
            base = stored[(win >> np.uint64(55)) & _RING_MASK]
            bp += np.uint64(9)
            stored_lz = _NO_LZ
        elif flag == _U1:
            if bp + np.uint64(18) > nbits:
                return ERR_TRUNCATED
            head = (win >> np.uint64(46)) & np.uint64(0xFFFF)
            lz = _REP_TO_LZ[(head >> np.uint64(6)) & np.uint64(7)]
            mb = head & np.uint64(63)
            # lz + sig may exceed 64 on hostile input: test before the unsigned subtraction.
            if mb == _U0 or lz + mb > _U64 - _THRESHOLD - _U1:
                return ERR_CORRUPT
            tz = _U64 - lz - mb
            base = stored[(head >> np.uint64(9)) & _RING_MASK]
            bp += np.uint64(18)
            stored_lz = _NO_LZ
        else:
            if flag == _U3:
                if bp + np.uint64(5) > nbits:
                    return ERR_TRUNCATED
                stored_lz = _REP_TO_LZ[(win >> np.uint64(59)) & np.uint64(7)]
                bp += np.uint64(5)
            elif stored_lz == _NO_LZ:
                return ERR_CORRUPT
            else:
                bp += _U2
            mb = _U64 - stored_lz
            tz = _U0
            base = stored[current]
        v = base
        if mb > _U0:
            if bp + mb > nbits:
                return ERR_TRUNCATED
            # inline 64-bit mdow at bit bp (zero padded past end): see the docstring
            j = bp >> _U3
            m = _U0
            if j + _U9 <= end:
                for k in range(8):
                    m = (m << _U8) | np.uint64(src[j + np.uint64(k)])
                nx = np.uint64(src[j + _U8])
            else:
                for k in range(8):
                    jj = j + np.uint64(k)
                    m = (m << _U8) | (np.uint64(src[jj]) if jj < end else _U0)
                nx = np.uint64(src[j + _U8]) if j + _U8 < end else _U0
            if bp & _U7:
                m = (m << (bp & _U7)) | (nx >> (_U8 - (bp & _U7)))
            v ^= (m >> (_U64 - mb)) << tz
            bp += mb
        current = (current + _U1) & _RING_MASK
        stored[current] = v
        out[i] = v
    return np.int64(n)


def _warmup() -> None:
    """Compile both kernels with the dtypes the glue passes (uint64 values, uint8 bodies)."""
    vals = np.array([1, 1, 3, 1 << 40, 7, 3, 3], dtype=np.uint64)
    buf = np.zeros(128, dtype=np.uint8)
    ro = vals.copy()
    ro.flags.writeable = False  # columns arrive as read-only views of Arrow buffers
    chimp_encode(ro, buf)
    bits = chimp_encode(vals, buf)
    body = buf[: (bits + 7) // 8]
    out = np.empty(7, dtype=np.uint64)
    chimp_decode(body, np.uint64(1), out)
    chimp_decode(np.frombuffer(body.tobytes(), dtype=np.uint8), np.uint64(1), out)
