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
(65) by flags 00/01. The MSB-first bit writers are shared with gorilla.py, the
word reader (bitpack.load_be64) with every decoder.
"""

from __future__ import annotations

import numpy as np

from ._jit import kernel
from ._status import ERR_CORRUPT, ERR_TRUNCATED
from .bitpack import load_be64
from .gorilla import clz64, ctz64, flush_bits, put_bits, put_bits64

_U0 = np.uint64(0)
_U1 = np.uint64(1)
_U2 = np.uint64(2)
_U3 = np.uint64(3)
_U7 = np.uint64(7)
_U8 = np.uint64(8)
_FF = np.uint64(0xFF)
_U64 = np.uint64(64)
_RING_MASK = np.uint64(127)  # chimpN - 1
_THRESHOLD = np.uint64(13)  # chimpThreshold = 6 + log2(128)
_LSB_MASK = np.uint64((1 << 14) - 1)  # chimpLsbMask
_NO_LZ = np.uint64(65)

# chimpLeadingRound / chimpLeadingRep (Go), indexed by the true leading-zero count 0..64.
_ROUND = np.array([0] * 8 + [8] * 4 + [12] * 4 + [16, 16, 18, 18, 20, 20, 22, 22] + [24] * 41, dtype=np.uint64)
_REP = np.array([0] * 8 + [1] * 4 + [2] * 4 + [3, 3, 4, 4, 5, 5, 6, 6] + [7] * 41, dtype=np.uint64)


@kernel
def chimp_encode(vals, out, limit):
    """Chimp128-encode uint64 bit patterns ``vals`` (n >= 2) into ``out``; return the bit
    count, or -1 as soon as more than ``limit`` bytes of body are written (``limit`` < 0:
    no limit; a picker's trial stops once it cannot win).

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
    cap = np.uint64(limit) if limit >= 0 else ~_U0
    for i in range(_U1, n):
        if pos > cap:
            return np.int64(-1)
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
    if pos > cap:
        return np.int64(-1)
    total = pos * _U8 + have
    flush_bits(out, pos, acc, have)
    return np.int64(total)


# Packed byte tables (byte k = entry k for lz code k), read with a shift instead of a
# memory load so the lookup stays off the load-latency chain of the bit position:
# the rounded lz, and the bits a flag-11 value consumes (2 + 3 + 64 - lz).
_LZ_OF_CODE = (0, 8, 12, 16, 18, 20, 22, 24)
_LZ8 = np.uint64(sum(lz << (8 * k) for k, lz in enumerate(_LZ_OF_CODE)))
_CONS11 = np.uint64(sum((5 + 64 - lz) << (8 * k) for k, lz in enumerate(_LZ_OF_CODE)))
_U5 = np.uint64(5)
_U40 = np.uint64(40)
_U63 = np.uint64(63)
# Bytes read past the current byte j: the next header's word at <= j + 9 (flag 01 with
# 50 significant bits), 8 bytes long.
_FAST_SLACK = np.uint64(17)


@kernel
def _chimp_fast(src, jlim, out, i, bp, smb, prev):
    """The bulk of :func:`chimp_decode`: values i.. while bp >> 3 <= jlim <= len(src) - 17.

    Returns (status, i, bp, smb, prev); status is 0 or ERR_CORRUPT. No truncation checks:
    a value of a valid stream spans at most 69 bits (flag 11 with lz 0; a corrupt flag 01
    header is rejected after its 18 bits), so every value started at a byte <= len - 17
    ends inside ``src``; the last bytes go through :func:`_chimp_checked`. ``smb`` is
    the stored (64 - lz) of flags 10/11, 0 when invalid (after flags 00/01).

    Latency matters more than instruction count: each value's bit position depends on
    the previous value's header, so the loop keeps loads off that chain. The header is
    read from a big-endian word ``wh`` loaded at byte q, starting t bits into it (t <=
    46, so its <= 18 bits are inside). Flags 10/11 (the common case, and unpredictable
    on sensor data: branches on them cost ~5.5 ns/value) are decoded without branches,
    with the lz-code tables packed into 64-bit constants; they consume >= 42 bits (2 + mb
    with mb >= 40, or 5 + mb), so the next header lies past byte j + 5 (j: the current
    byte) and the word there is loaded before this header is even decoded; the next
    t = (bp & 7) + consumed - 40 (2..36). Flags 00/01 load the word where the next header
    starts. The ring of the last 128 values is ``out`` itself: slot k seen by value i
    holds the newest index < i congruent to k mod 128 (0 before any, as in the Go ring).
    """
    n = np.uint64(out.shape[0])
    q = bp >> _U3
    t = bp & _U7
    if i >= n or q > jlim:
        return np.int64(0), i, bp, smb, prev
    wh = load_be64(src, q)
    while i < n:
        j = q + (t >> _U3)  # byte of the current bit position
        if j > jlim:
            break
        h = wh << t
        s = t & _U7
        bp = (j << _U3) + s
        if h >> _U63:
            wh = load_be64(src, j + _U5)  # next header's word (see the docstring)
            # flag 10: reuse stored (64 - lz); flag 11: 3-bit lz code follows
            is3 = (h >> np.uint64(62)) & _U1
            cons3 = (_CONS11 >> ((h >> np.uint64(56)) & np.uint64(0x38))) & _FF
            sel = _U0 - is3
            cons = (cons3 & sel) | ((smb + _U2) & ~sel)
            hl = _U2 + (is3 + is3 + is3)
            mb = cons - hl
            if mb == _U0:  # flag 10 with no stored lz
                return ERR_CORRUPT, i, bp, smb, prev
            p = bp + hl
            j2 = p >> _U3
            s2 = p & _U7
            w2 = (load_be64(src, j2) << s2) | (np.uint64(src[j2 + _U8]) >> (_U8 - s2))
            v = prev ^ (w2 >> (_U64 - mb))  # mb in 40..64
            smb = mb
            q = j + _U5
            t = s + cons - _U40
        else:
            slot = (h >> np.uint64(55)) & _RING_MASK
            d = (i - _U1 - slot) & _RING_MASK
            base = out[i - _U1 - d] if d < i else _U0
            smb = _U0
            if h >> np.uint64(62):  # flag 01: slot, lz code, sig, sig bits (tz > 13)
                sig = (h >> np.uint64(46)) & _U63
                lz = (_LZ8 >> ((h >> np.uint64(49)) & np.uint64(0x38))) & _FF
                if sig == _U0 or lz + sig > _U64 - _THRESHOLD - _U1:
                    return ERR_CORRUPT, i, bp, smb, prev
                p = bp + np.uint64(18)
                j2 = p >> _U3
                s2 = p & _U7
                w2 = (load_be64(src, j2) << s2) | (np.uint64(src[j2 + _U8]) >> (_U8 - s2))
                v = base ^ ((w2 >> (_U64 - sig)) << (_U64 - lz - sig))
                nb = p + sig
            else:  # flag 00: a value among the previous 128
                v = base
                nb = bp + np.uint64(9)
            q = nb >> _U3  # <= j + 9
            t = nb & _U7
            wh = load_be64(src, q)
        out[i] = v
        prev = v
        i += _U1
    return np.int64(0), i, (q << _U3) + t, smb, prev


@kernel
def _chimp_checked(src, jlim, nbits, out, i, bp, smb, prev):
    """:func:`_chimp_fast` with every truncation check, Go's order kept (header bits,
    then corrupt fields, then payload bits against ``nbits``). Used on the zero-padded
    copy of the last bytes, which holds 17 readable bytes past any position jlim allows.
    """
    n = np.uint64(out.shape[0])
    q = bp >> _U3
    t = bp & _U7
    if i >= n or q > jlim:
        return np.int64(0), i, bp, smb, prev
    wh = load_be64(src, q)
    while i < n:
        j = q + (t >> _U3)  # byte of the current bit position
        if j > jlim:
            break
        h = wh << t
        s = t & _U7
        bp = (j << _U3) + s
        if h >> _U63:
            wh = load_be64(src, j + _U5)  # next header's word (see the docstring)
            # flag 10: reuse stored (64 - lz); flag 11: 3-bit lz code follows
            is3 = (h >> np.uint64(62)) & _U1
            cons3 = (_CONS11 >> ((h >> np.uint64(56)) & np.uint64(0x38))) & _FF
            sel = _U0 - is3
            cons = (cons3 & sel) | ((smb + _U2) & ~sel)
            hl = _U2 + (is3 + is3 + is3)
            mb = cons - hl
            if (bp + cons > nbits) | (mb == _U0):
                if bp + hl > nbits:
                    return ERR_TRUNCATED, i, bp, smb, prev
                if mb == _U0:  # flag 10 with no stored lz
                    return ERR_CORRUPT, i, bp, smb, prev
                return ERR_TRUNCATED, i, bp, smb, prev
            p = bp + hl
            j2 = p >> _U3
            s2 = p & _U7
            w2 = (load_be64(src, j2) << s2) | (np.uint64(src[j2 + _U8]) >> (_U8 - s2))
            v = prev ^ (w2 >> (_U64 - mb))  # mb in 40..64
            smb = mb
            q = j + _U5
            t = s + cons - _U40
        else:
            slot = (h >> np.uint64(55)) & _RING_MASK
            d = (i - _U1 - slot) & _RING_MASK
            base = out[i - _U1 - d] if d < i else _U0
            smb = _U0
            if h >> np.uint64(62):  # flag 01: slot, lz code, sig, sig bits (tz > 13)
                if bp + np.uint64(18) > nbits:
                    return ERR_TRUNCATED, i, bp, smb, prev
                sig = (h >> np.uint64(46)) & _U63
                lz = (_LZ8 >> ((h >> np.uint64(49)) & np.uint64(0x38))) & _FF
                if sig == _U0 or lz + sig > _U64 - _THRESHOLD - _U1:
                    return ERR_CORRUPT, i, bp, smb, prev
                p = bp + np.uint64(18)
                if p + sig > nbits:
                    return ERR_TRUNCATED, i, bp, smb, prev
                j2 = p >> _U3
                s2 = p & _U7
                w2 = (load_be64(src, j2) << s2) | (np.uint64(src[j2 + _U8]) >> (_U8 - s2))
                v = base ^ ((w2 >> (_U64 - sig)) << (_U64 - lz - sig))
                nb = p + sig
            else:  # flag 00: a value among the previous 128
                if bp + np.uint64(9) > nbits:
                    return ERR_TRUNCATED, i, bp, smb, prev
                v = base
                nb = bp + np.uint64(9)
            q = nb >> _U3  # <= j + 9
            t = nb & _U7
            wh = load_be64(src, q)
        out[i] = v
        prev = v
        i += _U1
    return np.int64(0), i, (q << _U3) + t, smb, prev


@kernel
def chimp_decode(src, first, out):
    """Decode a Chimp128 body (exactly its ceil(bits/8) bytes) into uint64 ``out`` (n >= 1).

    Returns n, ERR_TRUNCATED, or ERR_CORRUPT for the streams Go rejects with ErrBadTag
    (flag 01 with sig == 0 or tz <= 13; flag 10 with no stored lz). Word-at-a-time
    reader: :func:`_chimp_fast` decodes in place while 17 bytes remain past the bit
    position; the rest (< 17 + 9 bytes of stream) is copied into a zero-padded scratch
    buffer and finished by :func:`_chimp_checked`.
    """
    n = np.uint64(out.shape[0])
    end = np.uint64(src.shape[0])
    nbits = end * _U8
    out[0] = first
    i = _U1
    bp = _U0
    smb = _U0
    prev = np.uint64(first)
    if end >= _FAST_SLACK and n > _U1:
        st, i, bp, smb, prev = _chimp_fast(src, end - _FAST_SLACK, out, i, bp, smb, prev)
        if st < 0:
            return st
    if i < n:
        j0 = bp >> _U3  # every byte before j0 is consumed
        tail = np.zeros(np.int64(end - j0) + 32, dtype=np.uint8)
        for k in range(j0, end):
            tail[k - j0] = src[k]
        off = j0 * _U8
        jl = np.uint64(tail.shape[0]) - _FAST_SLACK
        st, i, bp, smb, prev = _chimp_checked(tail, jl, nbits - off, out, i, bp - off, smb, prev)
        if st < 0:
            return st
    return np.int64(n)


def _warmup() -> None:
    """Compile both kernels with the dtypes the glue passes (uint64 values, uint8 bodies)."""
    vals = np.array([1, 1, 3, 1 << 40, 7, 3, 3], dtype=np.uint64)
    buf = np.zeros(128, dtype=np.uint8)
    ro = vals.copy()
    ro.flags.writeable = False  # columns arrive as read-only views of Arrow buffers
    chimp_encode(ro, buf, np.int64(-1))
    bits = chimp_encode(vals, buf, np.int64(-1))
    body = buf[: (bits + 7) // 8]
    out = np.empty(7, dtype=np.uint64)
    chimp_decode(body, np.uint64(1), out)
    chimp_decode(np.frombuffer(body.tobytes(), dtype=np.uint8), np.uint64(1), out)
