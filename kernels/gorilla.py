"""MSB-first bit-stream kernels and the Gorilla XOR codec behind v1 tag E7 PackGorilla
(kind 0x0B float64, kind 0x0A float32). Chimp128 (E7 kind 0x0F) lives in chimp.py and
reuses the bit helpers defined here.

Wire body (qdf-wire-v1.md §2.4, verified against the Go writePackedGorillaFloat64Slice /
readPackedGorillaFloat64Slice): per value after the first, ``0`` when xor == 0; else
``1`` + ``0`` + meaningful bits of the previous window; else ``1`` + ``1`` + lz (5 bits,
clamped to 31) + (mb - 1) (6 bits) + mb bits. float32 uses 4-bit lz (clamp 15) and a
5-bit (mb - 1). Bits are written MSB-first within each byte, padding bits are 0.

Values are IEEE bit patterns (uint64 or uint32 arrays) so NaN payloads, -0.0 and
subnormals survive untouched; all arithmetic is done in uint64 with ``width`` (64/32)
as a runtime argument, so one specialisation per input dtype serves both codecs.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba.core import types
from numba.extending import intrinsic

from ._jit import kernel
from ._status import ERR_CORRUPT, ERR_TRUNCATED
from .bitpack import load_be64

_U0 = np.uint64(0)
_U1 = np.uint64(1)
_U3 = np.uint64(3)
_U7 = np.uint64(7)
_U8 = np.uint64(8)
_U9 = np.uint64(9)
_U32 = np.uint64(32)
_U56 = np.uint64(56)
_U64 = np.uint64(64)
_FF = np.uint64(0xFF)
_LO32 = np.uint64(0xFFFFFFFF)


# Leading/trailing-zero counts are the inner-loop cost of every XOR codec; LLVM's
# ctlz/cttz compile to one lzcnt/tzcnt instruction where a loop would take ~6 branches.
# They are intrinsics (inlined into the calling kernel), not kernels of their own.
@intrinsic
def clz64(typingctx, x):  # type: ignore[no-untyped-def]
    """Leading zeros of a uint64 (64 for 0)."""
    sig = types.uint64(types.uint64)

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        return builder.ctlz(args[0], ir.Constant(ir.IntType(1), 0))

    return sig, codegen


@intrinsic
def ctz64(typingctx, x):  # type: ignore[no-untyped-def]
    """Trailing zeros of a uint64 (64 for 0)."""
    sig = types.uint64(types.uint64)

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        return builder.cttz(args[0], ir.Constant(ir.IntType(1), 0))

    return sig, codegen


@intrinsic
def word_bits(typingctx, arr):  # type: ignore[no-untyped-def]
    """Bit width of ``arr``'s dtype as a compile-time uint64 constant (64 or 32 here), so
    the per-width header constants fold into immediates instead of taking registers."""
    if not isinstance(arr, types.Array):
        return None
    bits = arr.dtype.bitwidth

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        return context.get_constant(types.uint64, bits)

    return types.uint64(arr), codegen


@kernel
def put_bits(out, pos, acc, have, v, count):
    """Append the low ``count`` (0..32) bits of ``v`` MSB-first; return (pos, acc, have).

    ``acc`` holds ``have`` (< 8) pending bits right-aligned; complete bytes go to out[pos].
    """
    if count == _U0:
        return pos, acc, have
    acc = (acc << count) | (v & ((_U1 << count) - _U1))
    have += count
    while have >= _U8:
        have -= _U8
        out[pos] = np.uint8((acc >> have) & _FF)
        pos += _U1
    return pos, acc, have


@kernel
def put_bits64(out, pos, acc, have, v, count):
    """Like :func:`put_bits` for 0..64 bits (split in two so the accumulator never overflows)."""
    if count > _U32:
        pos, acc, have = put_bits(out, pos, acc, have, v >> _U32, count - _U32)
        return put_bits(out, pos, acc, have, v & _LO32, _U32)
    return put_bits(out, pos, acc, have, v, count)


@kernel
def flush_bits(out, pos, acc, have):
    """Write the pending partial byte (zero padded); return the final byte count."""
    if have > _U0:
        out[pos] = np.uint8((acc << (_U8 - have)) & _FF)
        pos += _U1
    return pos


@kernel
def gorilla_encode(vals, width, out, limit):
    """Gorilla-encode ``vals[1:]`` (uint64 or uint32 bit patterns, n >= 2) into ``out``.

    width: 64 or 32 (selects the 5/6-bit or 4/5-bit window header). ``out`` must hold
    ceil((n-1)*77/8) bytes (the f64 worst case per value). Returns the exact bit count
    (the body is ceil(bits/8) bytes), or -1 as soon as more than ``limit`` bytes of body
    are written (``limit`` < 0: no limit; a picker's trial stops once it cannot win).
    """
    n = np.uint64(vals.shape[0])
    w = np.uint64(width)
    shift_lz = _U64 - w  # clz64 of a 32-bit value counts 32 extra zeros
    lz_bits = np.uint64(5) if w == _U64 else np.uint64(4)
    mb_bits = np.uint64(6) if w == _U64 else np.uint64(5)
    clamp = np.uint64(31) if w == _U64 else np.uint64(15)
    hdr_bits = np.uint64(2) + lz_bits + mb_bits
    pos = _U0
    acc = _U0
    have = _U0
    prev = np.uint64(vals[0])
    prev_lz = w  # sentinel: no window yet (Go prevLZ == 64 / 32)
    prev_tz = _U0
    cap = np.uint64(limit) if limit >= 0 else ~_U0
    for i in range(_U1, n):
        if pos > cap:
            return np.int64(-1)
        cur = np.uint64(vals[i])
        x = cur ^ prev
        prev = cur
        if x == _U0:
            pos, acc, have = put_bits(out, pos, acc, have, _U0, _U1)
            continue
        lz = clz64(x) - shift_lz
        tz = ctz64(x)
        if lz > clamp:
            lz = clamp
        if prev_lz != w and lz >= prev_lz and tz >= prev_tz:
            pos, acc, have = put_bits(out, pos, acc, have, np.uint64(2), np.uint64(2))
            pos, acc, have = put_bits64(out, pos, acc, have, x >> prev_tz, w - prev_lz - prev_tz)
        else:
            mb = w - lz - tz
            head = (np.uint64(3) << (lz_bits + mb_bits)) | (lz << mb_bits) | (mb - _U1)
            pos, acc, have = put_bits(out, pos, acc, have, head, hdr_bits)
            pos, acc, have = put_bits64(out, pos, acc, have, x >> tz, mb)
            prev_lz = lz
            prev_tz = tz
    if pos > cap:
        return np.int64(-1)
    total = pos * _U8 + have
    flush_bits(out, pos, acc, have)
    return np.int64(total)


_U2 = np.uint64(2)
_U5 = np.uint64(5)
_U62 = np.uint64(62)
_U63 = np.uint64(63)
_FAST_SLACK = np.uint64(12)  # > bytes read past bp >> 3: header word, payload word + 1 byte at <= +2


@kernel
def _gorilla_fast(src, jlim, out, i, bp, prev, pmb, ptz):
    """The bulk of :func:`gorilla_decode`: values i.. while bp >> 3 <= jlim <= len(src) - 12.

    Returns (status, i, bp, prev, pmb, ptz); status is 0 or ERR_CORRUPT. No truncation
    checks: a value spans at most 2 + 11 + 64 bits, so every value started at a byte
    <= len(src) - 12 ends inside ``src`` (the tail is :func:`_gorilla_checked`'s).
    (pmb, ptz) is the previous window as (meaningful bits, trailing zeros); pmb == 0
    means no window yet.

    Word-at-a-time: one unaligned big-endian load for the control bits and header, one
    (plus a byte) for the payload. The three cases stay branches: on real data the
    reuse-window case dominates, and a predicted branch takes the payload load off the
    bit-position chain (bp += 2 + pmb). A branch-free variant (masks, header words
    loaded a value ahead as in chimp._chimp_fast) ran at a constant ~4.2 ns/value, this
    one at 1.4-1.6 (3.2 on a 50 % random repeat mix; the previous kernel: 2.3 and 3.8).
    The header field widths are
    derived from the output dtype at compile time (``word_bits``: 64 for uint64, 32
    for uint32), which keeps the hot loop's state in registers.
    """
    n = np.uint64(out.shape[0])
    w = word_bits(out)
    while i < n:
        j = bp >> _U3
        if j > jlim:
            break
        h = load_be64(src, j) << (bp & _U7)
        if h >> _U63:
            if (h >> _U62) & _U1 == _U0:
                if pmb == _U0:
                    return ERR_CORRUPT, i, bp, prev, pmb, ptz
                bp += _U2
            else:
                lz_bits = _U5 if w == _U64 else np.uint64(4)
                hb = lz_bits + lz_bits + _U1
                lz = (h >> (_U62 - lz_bits)) & ((_U1 << lz_bits) - _U1)
                mb = ((h >> (_U62 - hb)) & ((_U1 << (lz_bits + _U1)) - _U1)) + _U1
                if lz + mb > w:
                    return ERR_CORRUPT, i, bp, prev, pmb, ptz
                pmb = mb
                ptz = w - lz - mb
                bp += _U2 + hb
            j2 = bp >> _U3
            s2 = bp & _U7
            w2 = (load_be64(src, j2) << s2) | (np.uint64(src[j2 + _U8]) >> (_U8 - s2))
            prev ^= (w2 >> (_U64 - pmb)) << ptz
            bp += pmb
        else:
            bp += _U1  # a repeat
        out[i] = prev
        i += _U1
    return np.int64(0), i, bp, prev, pmb, ptz


@kernel
def _gorilla_checked(src, jlim, nbits, w, out, i, bp, prev, pmb, ptz):
    """:func:`_gorilla_fast` with every truncation check against ``nbits``, Go's order
    kept; ``w`` (64 or 32) is a runtime argument here. Used on the zero-padded copy of
    the last bytes (and for a width that does not match the output dtype).
    """
    n = np.uint64(out.shape[0])
    lz_bits = _U5 if w == _U64 else np.uint64(4)
    mb_bits = np.uint64(6) if w == _U64 else _U5
    hb = lz_bits + mb_bits
    sh_lz = _U62 - lz_bits
    sh_mb = _U62 - hb
    lz_mask = (_U1 << lz_bits) - _U1
    mb_mask = (_U1 << mb_bits) - _U1
    while i < n:
        j = bp >> _U3
        if j > jlim:
            break
        if bp >= nbits:
            return ERR_TRUNCATED, i, bp, prev, pmb, ptz
        h = load_be64(src, j) << (bp & _U7)
        if (h >> _U63) == _U0:
            bp += _U1
            out[i] = prev
            i += _U1
            continue
        if (h >> _U62) & _U1 == _U0:
            if pmb == _U0:
                return ERR_CORRUPT, i, bp, prev, pmb, ptz
            bp += _U2
        else:
            if bp + _U2 + hb > nbits:
                return ERR_TRUNCATED, i, bp, prev, pmb, ptz
            lz = (h >> sh_lz) & lz_mask
            mb = ((h >> sh_mb) & mb_mask) + _U1
            if lz + mb > w:
                return ERR_CORRUPT, i, bp, prev, pmb, ptz
            pmb = mb
            ptz = w - lz - mb
            bp += _U2 + hb
        if bp + pmb > nbits:
            return ERR_TRUNCATED, i, bp, prev, pmb, ptz
        j2 = bp >> _U3
        s2 = bp & _U7
        w2 = (load_be64(src, j2) << s2) | (np.uint64(src[j2 + _U8]) >> (_U8 - s2))
        prev ^= (w2 >> (_U64 - pmb)) << ptz
        bp += pmb
        out[i] = prev
        i += _U1
    return np.int64(0), i, bp, prev, pmb, ptz


@kernel
def gorilla_decode(src, width, first, out):
    """Decode a Gorilla body into ``out`` (uint64 or uint32, length n >= 1).

    ``src`` is exactly the ceil(totalBits/8) body bytes (Go bounds its reader by those
    bytes, not by totalBits). Returns n, ERR_TRUNCATED when the body ends early, or
    ERR_CORRUPT for a reuse-window with no window or a window wider than the word.

    Word-at-a-time reader: :func:`_gorilla_fast` decodes in place while 12 bytes remain
    past the bit position; the rest is copied into a zero-padded scratch buffer and
    finished by :func:`_gorilla_checked`.
    """
    n = np.uint64(out.shape[0])
    end = np.uint64(src.shape[0])
    nbits = end * _U8
    w = np.uint64(width)
    prev = np.uint64(first)
    out[0] = prev
    i = _U1
    bp = _U0
    pmb = _U0
    ptz = _U0
    if end >= _FAST_SLACK and n > _U1 and w == word_bits(out):
        st, i, bp, prev, pmb, ptz = _gorilla_fast(src, end - _FAST_SLACK, out, i, bp, prev, pmb, ptz)
        if st < 0:
            return st
    if i < n:
        j0 = bp >> _U3  # every byte before j0 is consumed
        tail = np.zeros(np.int64(end - j0) + 32, dtype=np.uint8)
        for k in range(j0, end):
            tail[k - j0] = src[k]
        off = j0 * _U8
        jl = np.uint64(tail.shape[0]) - _FAST_SLACK
        st, i, bp, prev, pmb, ptz = _gorilla_checked(tail, jl, nbits - off, w, out, i, bp - off, prev, pmb, ptz)
        if st < 0:
            return st
    return np.int64(n)


def _warmup() -> None:
    """Compile both codecs for the uint64 (f64) and uint32 (f32) dtypes, writable and read-only src."""
    buf = np.zeros(64, dtype=np.uint8)
    for dt, w in ((np.uint64, 64), (np.uint32, 32)):
        vals = np.array([1, 1, 3, 7, 7, 2], dtype=dt)
        ro = vals.copy()
        ro.flags.writeable = False  # columns arrive as read-only views of Arrow buffers
        gorilla_encode(ro, w, buf, np.int64(-1))
        bits = gorilla_encode(vals, w, buf, np.int64(-1))
        body = buf[: (bits + 7) // 8]
        out = np.empty(6, dtype=dt)
        gorilla_decode(body, w, dt(1), out)
        gorilla_decode(np.frombuffer(body.tobytes(), dtype=np.uint8), w, dt(1), out)
