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
_FF = np.uint64(0xFF)
_MAX_BITS = np.uint64(56)  # 7 carried bits + 56 fit one 64-bit word


# Word-at-a-time readers. An unaligned 8-byte load replaces eight byte loads and
# shifts; the decoders call them only where they proved idx + 8 <= len(arr) (bounded
# fast loops, tails handled separately), so they are unchecked. They are intrinsics
# (inlined into the calling kernel, like gorilla.clz64), not kernels.
def _byte_array(arr: types.Type, idx: types.Type) -> bool:
    return (
        isinstance(arr, types.Array)
        and arr.dtype == types.uint8
        and arr.ndim == 1
        and arr.layout == "C"
        and isinstance(idx, types.Integer)
    )


def _load64(context, builder, signature, args):  # type: ignore[no-untyped-def]
    ary = context.make_array(signature.args[0])(context, builder, args[0])
    i = context.cast(builder, args[1], signature.args[1], types.intp)
    p64 = builder.bitcast(builder.gep(ary.data, [i]), ir.IntType(64).as_pointer())
    return builder.load(p64, align=1)


@intrinsic
def load_le64(typingctx, arr, idx):  # type: ignore[no-untyped-def]
    """arr[idx:idx+8] as a little-endian uint64 (uint8 C-contiguous arr; unchecked)."""
    if not _byte_array(arr, idx):
        return None
    return types.uint64(arr, idx), _load64


@intrinsic
def load_be64(typingctx, arr, idx):  # type: ignore[no-untyped-def]
    """arr[idx:idx+8] as a big-endian uint64 (MSB-first bit streams; unchecked)."""
    if not _byte_array(arr, idx):
        return None

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        return builder.bswap(_load64(context, builder, signature, args))

    return types.uint64(arr, idx), codegen


@kernel
def store_le64(data, p, v):
    """``data[p:p+8]`` = ``v`` little-endian, as eight byte stores (LLVM merges them into
    one unaligned store once this is inlined; ``data`` needs the 8 bytes)."""
    data[p] = np.uint8(v & np.uint64(0xFF))
    data[p + np.uint64(1)] = np.uint8((v >> np.uint64(8)) & np.uint64(0xFF))
    data[p + np.uint64(2)] = np.uint8((v >> np.uint64(16)) & np.uint64(0xFF))
    data[p + np.uint64(3)] = np.uint8((v >> np.uint64(24)) & np.uint64(0xFF))
    data[p + np.uint64(4)] = np.uint8((v >> np.uint64(32)) & np.uint64(0xFF))
    data[p + np.uint64(5)] = np.uint8((v >> np.uint64(40)) & np.uint64(0xFF))
    data[p + np.uint64(6)] = np.uint8((v >> np.uint64(48)) & np.uint64(0xFF))
    data[p + np.uint64(7)] = np.uint8(v >> np.uint64(56))


@kernel
def pack_for(values, base, bits, out):
    """Pack ``(values[i] - base) & mask`` at ``bits`` bits into ``out``; return bytes written.

    values: uint64[::1]; base: uint64; bits: 0..56; out: uint8[::1] of at least
    ceil(n*bits/8) bytes (caller sized it). Used for FOR (base=min), PFOR (masked
    low bits) and dict indices (base=0). Bytes are stored a word at a time while 8
    fit in ``out``: the up to 7 bytes after the packed ones may be overwritten (with
    zeros), so ``out`` is either the body's exact size or the rest of a buffer written
    in order; nothing in ``out`` needs to be zero beforehand.
    """
    n = np.uint64(values.shape[0])
    b = np.uint64(bits)
    if b == _U0:
        return np.int64(0)
    mask = (_U1 << b) - _U1
    acc = _U0
    have = _U0
    pos = _U0
    i = _U0
    cap = np.uint64(out.shape[0])
    if b < _U8:
        # Eight values of b bits are exactly b bytes: build each group in one word and
        # store it whole (its bytes past b are rewritten by the next group), while 8
        # bytes fit from ``pos``. Groups end on a byte, so the byte loop below carries on
        # with an empty accumulator.
        while i + _U8 <= n and pos + _U8 <= cap:
            w = _U0
            for k in range(8):
                w |= ((values[i + np.uint64(k)] - base) & mask) << (np.uint64(k) * b)
            store_le64(out, pos, w)
            pos += b
            i += _U8
    else:
        # Whole words while 8 bytes fit from ``pos``: each value is or-ed into the
        # accumulator (at most 7 carried + 56 bits), the accumulator is stored whole and
        # its completed bytes dropped; the bytes past them are rewritten by the next
        # store. No loop per byte: 0.36-0.69x the time at 11-48 bits (336,776 values);
        # fewer bits take the groups of eight above.
        while i < n and pos + _U8 <= cap:
            acc |= ((values[i] - base) & mask) << have
            have += b
            store_le64(out, pos, acc)
            k = have >> _U3
            pos += k
            acc >>= k << _U3
            have &= _U7
            i += _U1
    while i < n:
        acc |= ((values[i] - base) & mask) << have
        have += b
        while have >= _U8:
            out[pos] = np.uint8(acc & _FF)
            acc >>= _U8
            have -= _U8
            pos += _U1
        i += _U1
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
def fast_count(nbytes, b, n):
    """How many of values 0..n-1 at b bits (b >= 1) have their whole 8-byte word
    (bytes (i*b >> 3) .. +7) inside ``nbytes``: those decode with one unchecked load."""
    if nbytes < _U8:
        return _U0
    k = ((nbytes - _U8) * _U8 + _U7) // b + _U1
    return k if k < n else n


@kernel
def load_le64_tail(src, pos):
    """src[pos:pos+8] as a little-endian uint64, zero past the end (the few last values)."""
    end = np.uint64(src.shape[0])
    w = _U0
    for k in range(8):
        if pos + np.uint64(k) < end:
            w |= np.uint64(src[pos + np.uint64(k)]) << np.uint64(8 * k)
    return w


@kernel
def unpack_for(src, bits, base, out):
    """Fill ``out[i] = unpack(i) + base`` (wrapping); return n or ERR_TRUNCATED.

    src: uint8[::1] body; bits 0..56 (caller checked; wider: ERR_CORRUPT); out: uint64[::1]
    of length n.
    bits == 0 broadcasts ``base`` (E5 constant column). Value i is one unaligned
    little-endian load at byte i*b >> 3, shifted by (i*b) & 7 (<= 7 + 56 bits: it
    always fits); only the values whose word would cross the end take a checked read.
    """
    n = np.uint64(out.shape[0])
    b = np.uint64(bits)
    if b == _U0:
        for i in range(n):
            out[i] = base
        return np.int64(n)
    if b > _MAX_BITS:
        return ERR_CORRUPT
    nbytes = np.uint64(src.shape[0])
    if (n * b + _U7) // _U8 > nbytes:
        return ERR_TRUNCATED
    mask = (_U1 << b) - _U1
    nf = fast_count(nbytes, b, n)
    for i in range(nf):
        bit = i * b
        out[i] = ((load_le64(src, bit >> _U3) >> (bit & _U7)) & mask) + base
    for i in range(nf, n):
        bit = i * b
        out[i] = ((load_le64_tail(src, bit >> _U3) >> (bit & _U7)) & mask) + base
    return np.int64(n)


@kernel
def unpack_for_gather(src, bits, base, table, out):
    """``out[i] = table[unpack(i) + base]``: a dictionary column expanded straight from its
    PackFor codes, no code array in between. The body was sized by the caller's scan
    (bits <= 56). Returns n, or ERR_CORRUPT at the first code outside ``table``."""
    n = np.uint64(out.shape[0])
    b = np.uint64(bits)
    d = np.uint64(table.shape[0])
    if b == _U0:
        if n and base >= d:
            return ERR_CORRUPT
        for i in range(n):
            out[i] = table[base]
        return np.int64(n)
    nbytes = np.uint64(src.shape[0])
    mask = (_U1 << b) - _U1
    nf = fast_count(nbytes, b, n)
    for i in range(n):
        bit = i * b
        w = load_le64(src, bit >> _U3) if i < nf else load_le64_tail(src, bit >> _U3)
        c = ((w >> (bit & _U7)) & mask) + base
        if c >= d:
            return ERR_CORRUPT
        out[i] = table[c]
    return np.int64(n)


@kernel
def unpack_delta(src, bits, first, min_delta, out):
    """Delta+FOR decode: out[0] = first, out[i] = out[i-1] + unpack(i-1) + min_delta (wrapping).

    Unpack and prefix sum are fused in one pass (numba-kernels.md §8.3), with the
    word-at-a-time reader of :func:`unpack_for`. Returns n or ERR_TRUNCATED when ``src``
    is shorter than ceil((n-1)*bits/8).
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
    if b > _MAX_BITS:
        return ERR_CORRUPT
    nbytes = np.uint64(src.shape[0])
    m = n - _U1
    if (m * b + _U7) // _U8 > nbytes:
        return ERR_TRUNCATED
    mask = (_U1 << b) - _U1
    nf = fast_count(nbytes, b, m)
    for i in range(nf):
        bit = i * b
        v += ((load_le64(src, bit >> _U3) >> (bit & _U7)) & mask) + min_delta
        out[i + _U1] = v
    for i in range(nf, m):
        bit = i * b
        v += ((load_le64_tail(src, bit >> _U3) >> (bit & _U7)) & mask) + min_delta
        out[i + _U1] = v
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
    if b > _MAX_BITS:
        return ERR_CORRUPT
    nbytes = np.uint64(src.shape[0])
    if (n * b + _U7) // _U8 > nbytes:
        return ERR_TRUNCATED
    mask = (_U1 << b) - _U1
    nf = fast_count(nbytes, b, n)
    for i in range(nf):
        bit = i * b
        k = (load_le64(src, bit >> _U3) >> (bit & _U7)) & mask
        if k >= d:
            return ERR_CORRUPT
        out[i] = table[k]
    for i in range(nf, n):
        bit = i * b
        k = (load_le64_tail(src, bit >> _U3) >> (bit & _U7)) & mask
        if k >= d:
            return ERR_CORRUPT
        out[i] = table[k]
    return np.int64(n)



@kernel
def take_for(src, bits, base, rows, out):
    """Late materialisation of E5 PackFor: ``out[k] = unpack(rows[k]) + base`` (wrapping).

    src: uint8[::1] body already checked to hold every value of the payload (the scan
    did it); rows: int64 row numbers, each below the payload's count (the caller's
    RowSelection guarantees it); out: uint64[::1] of len(rows). A value whose 8-byte
    word would cross the end takes the checked tail read. Returns len(rows), or
    ERR_CORRUPT for a width above 56 bits.
    """
    m = np.uint64(out.shape[0])
    b = np.uint64(bits)
    if b == _U0:
        for k in range(m):
            out[k] = base
        return np.int64(m)
    if b > _MAX_BITS:
        return ERR_CORRUPT
    nbytes = np.uint64(src.shape[0])
    mask = (_U1 << b) - _U1
    for k in range(m):
        bit = np.uint64(rows[k]) * b
        at = bit >> _U3
        w = load_le64(src, at) if at + _U8 <= nbytes else load_le64_tail(src, at)
        out[k] = ((w >> (bit & _U7)) & mask) + base
    return np.int64(m)


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
        take_for(src, 3, np.uint64(0), np.arange(3, dtype=np.int64), out[:3])
        for dt in (np.uint8, np.uint16, np.uint32, np.uint64):  # dictionary values: read-only Arrow buffers
            values = np.frombuffer(np.zeros(8, dt).tobytes(), dtype=dt)
            unpack_for_gather(src, 3, np.uint64(0), values, np.empty(5, dt))
