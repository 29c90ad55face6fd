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
def gorilla_encode(vals, width, out):
    """Gorilla-encode ``vals[1:]`` (uint64 or uint32 bit patterns, n >= 2) into ``out``.

    width: 64 or 32 (selects the 5/6-bit or 4/5-bit window header). ``out`` must hold
    ceil((n-1)*77/8) bytes (the f64 worst case per value). Returns the exact bit count;
    the body is ceil(bits/8) bytes.
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
    for i in range(_U1, n):
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
    total = pos * _U8 + have
    flush_bits(out, pos, acc, have)
    return np.int64(total)


@kernel
def gorilla_decode(src, width, first, out):
    """Decode a Gorilla body into ``out`` (uint64 or uint32, length n >= 1).

    ``src`` is exactly the ceil(totalBits/8) body bytes (Go bounds its reader by those
    bytes, not by totalBits). Returns n, ERR_TRUNCATED when the body ends early, or
    ERR_CORRUPT for a reuse-window with no window or a window wider than the word.

    The reader is inlined: a kernel-to-kernel call passing arrays costs ~20 ns in
    Numba (measured), 40x the bit extraction itself. Each value loads one 64-bit
    window at bit position ``bp`` for its control bits and one for its payload.
    """
    n = np.uint64(out.shape[0])
    end = np.uint64(src.shape[0])
    nbits = end * _U8
    w = np.uint64(width)
    lz_bits = np.uint64(5) if w == _U64 else np.uint64(4)
    mb_bits = np.uint64(6) if w == _U64 else np.uint64(5)
    hb = lz_bits + mb_bits
    bp = _U0
    prev = np.uint64(first)
    out[0] = prev
    prev_lz = w
    prev_tz = _U0
    for i in range(_U1, n):
        if bp >= nbits:
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
        if (win >> np.uint64(63)) == _U0:
            bp += _U1
            out[i] = prev
            continue
        if (win >> np.uint64(62)) & _U1 == _U0:
            # A reuse window before any window (prev_lz == w) has 0 meaningful bits:
            # the encoder never emits it, and Go rejects it rather than repeating prev.
            if prev_lz + prev_tz >= w:
                return ERR_CORRUPT
            mb = w - prev_lz - prev_tz
            tz = prev_tz
            bp += np.uint64(2)
        else:
            if bp + np.uint64(2) + hb > nbits:
                return ERR_TRUNCATED
            head = (win << np.uint64(2)) >> (_U64 - hb)
            lz = head >> mb_bits
            mb = (head & ((_U1 << mb_bits) - _U1)) + _U1
            if lz + mb > w:
                return ERR_CORRUPT
            tz = w - lz - mb
            prev_lz = lz
            prev_tz = tz
            bp += np.uint64(2) + hb
        if bp + mb > nbits:
            return ERR_TRUNCATED
        # inline 64-bit window at bit bp (zero padded past end): see the docstring
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
        m >>= _U64 - mb
        bp += mb
        prev ^= m << tz
        out[i] = prev
    return np.int64(n)


def _warmup() -> None:
    """Compile both codecs for the uint64 (f64) and uint32 (f32) dtypes, writable and read-only src."""
    buf = np.zeros(64, dtype=np.uint8)
    for dt, w in ((np.uint64, 64), (np.uint32, 32)):
        vals = np.array([1, 1, 3, 7, 7, 2], dtype=dt)
        ro = vals.copy()
        ro.flags.writeable = False  # columns arrive as read-only views of Arrow buffers
        gorilla_encode(ro, w, buf)
        bits = gorilla_encode(vals, w, buf)
        body = buf[: (bits + 7) // 8]
        out = np.empty(6, dtype=dt)
        gorilla_decode(body, w, dt(1), out)
        gorilla_decode(np.frombuffer(body.tobytes(), dtype=np.uint8), w, dt(1), out)
