"""ALP decimal-float kernels behind v1 tag F4 PackALP (kind 0x0B float64, 0x0A float32),
and the ALP-RD ("real doubles") encoder kernels behind F4 kind 0x0F (float64).

Verified against the Go alp.go (qdf-wire-v1.md §2.4): I = int64(RoundToEven(v * 10^d));
a value packs iff reconstructing it is bit-exact, where reconstruction is I * (1/10^d)
("multiply", Go alpInv10) or, with the exponent byte's 0x80 "exact" flag, I / 10^d
(float64 only on encode). float32 computes I through float64 and checks the float32
rounding of the float64 product. Non-packing values (NaN, +-Inf, -0.0, irrational) are
exceptions: slot 0 in the LSB-first FOR body of I - forMin plus (uvarint(index), raw LE
bits) in the exception list.

Bit-exactness without reinterpreting scalars: the reconstruction r is never NaN or
+-Inf and is +0.0 only for I == 0, so bits(r) == bits(v) iff r == v and v is not -0.0.
"""

from __future__ import annotations

import numpy as np

from ._jit import kernel
from ._status import ERR_CORRUPT, ERR_TRUNCATED
from .bitpack import fast_count, load_le64, load_le64_tail

_U0 = np.uint64(0)
_U1 = np.uint64(1)
_U3 = np.uint64(3)
_U7 = np.uint64(7)
_U8 = np.uint64(8)
_FF = np.uint64(0xFF)
_I64_MIN = np.int64(-(1 << 63))
_I64_MAX = np.int64((1 << 63) - 1)
_TWO63 = 9.223372036854775808e18


@kernel
def _round_i64(x):
    """Go int64(math.RoundToEven(x)) as compiled for amd64: out-of-range and NaN give MinInt64.

    LLVM's fptosi is undefined out of range, so the guard is needed for safety anyway;
    mimicking CVTTSD2SI keeps exception decisions identical to the Go encoder.
    """
    r = np.rint(x)  # round half to even
    if r >= -_TWO63 and r < _TWO63:
        return np.int64(r)
    return _I64_MIN


@kernel
def _packs(v, b, sign, i_v, pe, ie, mode):
    """Whether mantissa i_v reconstructs v bit-exactly. mode 0: f64 multiply, 1: f64 divide,
    2: f32 multiply (float32 of the float64 product). b / sign: v's bits and sign-bit mask."""
    if mode == 1:
        r = np.float64(i_v) / pe
    else:
        r = np.float64(i_v) * ie
    if mode == 2:
        ok = np.float32(r) == v
    else:
        ok = r == v
    return ok and b != sign


@kernel
def alp_score(vals, bits, sign, pe, ie, out):
    """Score exponent 10^d over ``vals`` (float64 or float32) for both reconstructions.

    out (int64[6]) = [mnMul, mxMul, excMul, mnDiv, mxDiv, excDiv]; float32 inputs only
    score the multiply form (the Go f32 encoder never divides); mn > mx means none packs.
    """
    mn_m = _I64_MAX
    mx_m = _I64_MIN
    mn_d = _I64_MAX
    mx_d = _I64_MIN
    exc_m = 0
    exc_d = 0
    is32 = vals.itemsize == 4
    for i in range(np.uint64(vals.shape[0])):
        v = vals[i]
        iv = _round_i64(np.float64(v) * pe)
        if _packs(v, bits[i], sign, iv, pe, ie, 2 if is32 else 0):
            mn_m = min(mn_m, iv)
            mx_m = max(mx_m, iv)
        else:
            exc_m += 1
        if not is32:
            if _packs(v, bits[i], sign, iv, pe, ie, 1):
                mn_d = min(mn_d, iv)
                mx_d = max(mx_d, iv)
            else:
                exc_d += 1
    out[0] = mn_m
    out[1] = mx_m
    out[2] = exc_m
    out[3] = mn_d
    out[4] = mx_d
    out[5] = exc_d
    return 0


@kernel
def alp_score_exponents(vals, bits, sign, pows, invs, out):
    """:func:`alp_score` for every exponent d of ``pows`` / ``invs`` (10^d, 10^-d) in one
    call: out[d] (int64[k, 6]) is alp_score's row for exponent d."""
    for d in range(pows.shape[0]):
        alp_score(vals, bits, sign, pows[d], invs[d], out[d])
    return 0


@kernel
def alp_pack(vals, bits, sign, pe, ie, mode, for_min, width, body, exc_idx):
    """Pack (I - forMin) at ``width`` bits LSB-first into ``body`` (exception slots 0).

    Exception indices go to exc_idx (int64, length n); returns their count. width 0
    writes no body (constant column), but exceptions are still collected.
    """
    n = np.uint64(vals.shape[0])
    b = np.uint64(width)
    mask = (_U1 << b) - _U1
    acc = _U0
    have = _U0
    pos = _U0
    nexc = 0
    for i in range(n):
        v = vals[i]
        iv = _round_i64(np.float64(v) * pe)
        d = _U0
        if _packs(v, bits[i], sign, iv, pe, ie, mode):
            d = np.uint64(iv - for_min) & mask  # wrapping, like Go's uint64(I - forMin)
        else:
            exc_idx[nexc] = i
            nexc += 1
        if b > _U0:
            acc |= d << have
            have += b
            while have >= _U8:
                body[pos] = np.uint8(acc & _FF)
                acc >>= _U8
                have -= _U8
                pos += _U1
    if have > _U0:
        body[pos] = np.uint8(acc & _FF)
    return nexc


@kernel
def alp_put_exceptions(exc_idx, nexc, bits, vbytes, out, pos):
    """Write nexc x (uvarint(index), vbytes LE bytes of bits[index]) at out[pos:]; return end."""
    for k in range(nexc):
        i = np.uint64(exc_idx[k])
        u = i
        while u >= np.uint64(0x80):
            out[pos] = np.uint8((u & np.uint64(0x7F)) | np.uint64(0x80))
            u >>= _U7
            pos += 1
        out[pos] = np.uint8(u)
        pos += 1
        x = np.uint64(bits[i])
        for _ in range(vbytes):
            out[pos] = np.uint8(x & _FF)
            x >>= _U8
            pos += 1
    return pos


@kernel
def _alp_value(iv, pe, ie, exact):
    """The float of integer I: I / 10^d (``exact``, divide) or I * 10^-d (multiply)."""
    return np.float64(iv) / pe if exact else np.float64(iv) * ie


@kernel
def alp_decode(src, width, for_min, pe, ie, exact, out):
    """Unpack the FOR body and reconstruct into ``out`` (float64 or float32, length n).

    Returns n, ERR_TRUNCATED (body shorter than ceil(n*width/8)) or ERR_CORRUPT when
    I = unpacked + forMin overflows int64 (Go ErrInvalidLength). The body is read a
    word at a time (bitpack.unpack_for's reader: one unaligned load per value).
    """
    n = np.uint64(out.shape[0])
    b = np.uint64(width)
    if b == _U0:
        c = _alp_value(for_min, pe, ie, exact)
        for i in range(n):
            out[i] = c
        return np.int64(n)
    if b > np.uint64(56):
        return ERR_CORRUPT
    nbytes = np.uint64(src.shape[0])
    if (n * b + _U7) // _U8 > nbytes:
        return ERR_TRUNCATED
    mask = (_U1 << b) - _U1
    lim = _I64_MAX - for_min if for_min > 0 else _I64_MAX
    nf = fast_count(nbytes, b, n)
    for i in range(n):
        bit = i * b
        if i < nf:
            w = load_le64(src, bit >> _U3)
        else:
            w = load_le64_tail(src, bit >> _U3)
        u = np.int64((w >> (bit & _U7)) & mask)  # < 2**56: never negative
        if u > lim:
            return ERR_CORRUPT
        out[i] = _alp_value(u + for_min, pe, ie, exact)
    return np.int64(n)


@kernel
def _exception_index(src, pos, end):
    """One uvarint exception index at ``src[pos:end]`` -> (index, new pos, 0 / ERR_*)."""
    idx = _U0
    shift = _U0
    while True:
        if pos >= end:
            return idx, pos, ERR_TRUNCATED
        c = np.uint64(src[pos])
        pos += 1
        if shift == np.uint64(63) and c > _U1:
            return idx, pos, ERR_CORRUPT
        idx |= (c & np.uint64(0x7F)) << shift
        if c < np.uint64(0x80):
            return idx, pos, 0
        shift += _U7
        if shift > np.uint64(63):
            return idx, pos, ERR_CORRUPT


@kernel
def _exception(src, pos, end, vbytes, n):
    """One exception (uvarint index < n, ``vbytes`` LE bits) at ``src[pos:end]`` ->
    (index, bits, new pos, 0 / ERR_TRUNCATED / ERR_CORRUPT)."""
    idx, pos, status = _exception_index(src, pos, end)
    if status < 0:
        return idx, _U0, pos, status
    if idx >= n:
        return idx, _U0, pos, ERR_CORRUPT
    if pos + vbytes > end:
        return idx, _U0, pos, ERR_TRUNCATED
    x = _U0
    for k in range(vbytes):
        x |= np.uint64(src[pos + k]) << np.uint64(8 * k)
    return idx, x, pos + vbytes, 0


@kernel
def alp_patch(src, pos, nexc, vbytes, out_bits):
    """Apply nexc exceptions (uvarint index, vbytes LE bits) read from src[pos:] to out_bits.

    Returns the position after the list, ERR_TRUNCATED, or ERR_CORRUPT (index >= n or
    a uvarint longer than 64 bits).
    """
    end = src.shape[0]
    n = np.uint64(out_bits.shape[0])
    for _ in range(nexc):
        idx, x, pos, status = _exception(src, pos, end, vbytes, n)
        if status < 0:
            return status
        out_bits[idx] = x
    return pos


@kernel
def alp_decode_at(src, width, for_min, pe, ie, exact, rows, out):
    """:func:`alp_decode` for the values at ``rows`` only (ascending, each < n, which the
    caller checked against a body it sized), into ``out`` (len(rows)). Returns len(rows)
    or ERR_CORRUPT when a value's I = unpacked + forMin overflows int64."""
    b = np.uint64(width)
    if b == _U0:
        c = _alp_value(for_min, pe, ie, exact)
        for j in range(rows.shape[0]):
            out[j] = c
        return np.int64(rows.shape[0])
    nbytes = np.uint64(src.shape[0])
    mask = (_U1 << b) - _U1
    lim = _I64_MAX - for_min if for_min > 0 else _I64_MAX
    for j in range(rows.shape[0]):
        bit = np.uint64(rows[j]) * b
        at = bit >> _U3
        w = load_le64(src, at) if at + _U8 <= nbytes else load_le64_tail(src, at)
        u = np.int64((w >> (bit & _U7)) & mask)
        if u > lim:
            return ERR_CORRUPT
        out[j] = _alp_value(u + for_min, pe, ie, exact)
    return np.int64(rows.shape[0])


@kernel
def alp_exceptions_into(src, pos, nexc, vbytes, n, idx_out, bits_out):
    """Read an exception list (uvarint index, ``vbytes`` LE bits) into arrays, checking it
    as :func:`alp_patch` does. Returns the position after the list, ERR_TRUNCATED or
    ERR_CORRUPT (an index >= n or a uvarint longer than 64 bits)."""
    end = src.shape[0]
    un = np.uint64(n)
    for k in range(nexc):
        idx, x, pos, status = _exception(src, pos, end, vbytes, un)
        if status < 0:
            return status
        idx_out[k] = np.int64(idx)
        bits_out[k] = x
    return pos


# ------------------------------------------------------------------------ ALP-RD (F4 kind 0x0F)
# Go qpack_alprd.go: each double splits at a cut into LEFT leftBW bits (8..16: sign,
# exponent, top mantissa), dictionary-coded with <= 8 entries, and RIGHT 64-leftBW bits,
# bit-packed raw. A left pattern missing from the dictionary is an exception (code 0 in
# the code body, then uvarint(position) + u16 LE left bits after the bodies).
ALPRD_MIN_LEFT = 8
ALPRD_MAX_LEFT = 16
ALPRD_MAX_DICT = 8
ALPRD_SAMPLE = 1024
_TAB = 4096  # Go tabSize: > 2 * ALPRD_SAMPLE so linear probing always terminates
_TAB_MASK = np.uint64(_TAB - 1)
_HASH_MUL = np.uint64(40503)
_U16 = np.uint64(0xFFFF)


@kernel
def alprd_code_bits(d):
    """ceil(log2 d) for d in 1..8 (Go alprdCodeBits)."""
    if d <= 1:
        return 0
    if d <= 2:
        return 1
    if d <= 4:
        return 2
    return 3


@kernel
def alprd_plan(bits, keys, cnts, dict_out, meta):
    """Go alprdPlanFloat64's sampling planner, reproduced decision for decision.

    bits: uint64[::1] (the doubles' bit patterns, n >= 1); keys / cnts: scratch
    uint16[4096] / int32[4096]; dict_out: uint16[8] receives the dictionary (descending
    sample frequency, ties in hash-slot order as Go's top-8 insertion keeps them).
    meta (int64[3]) = [leftBW, dictN, exact exception count over all n]; dictN 0 means
    no plan. For every cut 8..16 the sample (stride n // 1024 above 1024 values, at most
    2048 values) is counted in Go's open-addressed table (slot = uint16(left * 40503)
    & 4095, linear probing); the cut minimising int((cbits + 64 - leftBW + excFrac * 32)
    * n) wins, the first cut on ties.
    """
    n = bits.shape[0]
    stride = 1
    if n > ALPRD_SAMPLE:
        stride = n // ALPRD_SAMPLE
    best_total = np.int64(9223372036854775807)
    best_left = 0
    best_d = 0
    top = np.zeros(ALPRD_MAX_DICT, dtype=np.int32)
    top_key = np.zeros(ALPRD_MAX_DICT, dtype=np.uint16)
    for left_bw in range(ALPRD_MIN_LEFT, ALPRD_MAX_LEFT + 1):
        shift = np.uint64(64 - left_bw)
        for h in range(_TAB):
            cnts[h] = 0
        sampled = 0
        i = 0
        while i < n and sampled < 2 * ALPRD_SAMPLE:
            left = (bits[i] >> shift) & _U16
            h = np.int64((left * _HASH_MUL) & _TAB_MASK)
            while cnts[h] != 0 and np.uint64(keys[h]) != left:
                h = (h + 1) & (_TAB - 1)
            keys[h] = np.uint16(left)
            cnts[h] += 1
            sampled += 1
            i += stride
        for j in range(ALPRD_MAX_DICT):
            top[j] = 0
            top_key[j] = 0
        for h in range(_TAB):
            c = cnts[h]
            if c == 0:
                continue
            for j in range(ALPRD_MAX_DICT):
                if c > top[j]:
                    for k in range(ALPRD_MAX_DICT - 1, j, -1):
                        top[k] = top[k - 1]
                        top_key[k] = top_key[k - 1]
                    top[j] = c
                    top_key[j] = keys[h]
                    break
        d = 0
        covered = 0
        for j in range(ALPRD_MAX_DICT):
            if top[j] == 0:
                break
            d += 1
            covered += top[j]
        if d == 0:
            continue
        cbits = alprd_code_bits(d)
        exc_frac = np.float64(sampled - covered) / np.float64(sampled)
        per = np.float64(cbits) + np.float64(64 - left_bw) + exc_frac * 32.0
        total = np.int64(per * np.float64(n))  # Go int(): truncation toward zero
        if total < best_total:
            best_total = total
            best_left = left_bw
            best_d = d
            for j in range(d):
                dict_out[j] = top_key[j]
    meta[0] = best_left
    meta[1] = best_d
    meta[2] = 0
    if best_d == 0:
        return 0
    shift = np.uint64(64 - best_left)
    exc = 0
    for i in range(n):
        left = np.uint16((bits[i] >> shift) & _U16)
        hit = False
        for j in range(best_d):
            if dict_out[j] == left:
                hit = True
                break
        if not hit:
            exc += 1
    meta[2] = exc
    return 0


@kernel
def alprd_encode(bits, left_bw, dict_in, dict_n, out, pos, exc_idx):
    """Write the code body, the right-bits body and the exception list at out[pos:].

    out must hold ceil(n*cbits/8) + ceil(n*(64-leftBW)/8) + 10 + 12*n bytes from pos
    (the caller sizes it; an exception costs <= 10 + 2 bytes). Exceptions take code 0.
    exc_idx (int64[n]) is scratch. Returns the end position.
    """
    n = bits.shape[0]
    rbw = np.uint64(64 - left_bw)
    rmask = (_U1 << rbw) - _U1
    cb = np.uint64(alprd_code_bits(dict_n))
    nexc = 0
    # code body (absent when the dictionary has one entry)
    if cb > _U0:
        acc = _U0
        have = _U0
        for i in range(n):
            left = np.uint16((bits[i] >> rbw) & _U16)
            code = _U0
            for j in range(dict_n):
                if dict_in[j] == left:
                    code = np.uint64(j)
                    break
            acc |= code << have
            have += cb
            while have >= _U8:
                out[pos] = np.uint8(acc & _FF)
                acc >>= _U8
                have -= _U8
                pos += 1
        if have > _U0:
            out[pos] = np.uint8(acc & _FF)
            pos += 1
    # right bits: 48..56 bits per value, a 64-bit accumulator holds <= 7 + 56 bits
    acc = _U0
    have = _U0
    for i in range(n):
        acc |= (bits[i] & rmask) << have
        have += rbw
        while have >= _U8:
            out[pos] = np.uint8(acc & _FF)
            acc >>= _U8
            have -= _U8
            pos += 1
        left = np.uint16((bits[i] >> rbw) & _U16)
        hit = False
        for j in range(dict_n):
            if dict_in[j] == left:
                hit = True
                break
        if not hit:
            exc_idx[nexc] = i
            nexc += 1
    if have > _U0:
        out[pos] = np.uint8(acc & _FF)
        pos += 1
    # exceptions: uvarint(count), count x (uvarint(position), u16 LE left bits)
    u = np.uint64(nexc)
    while u >= np.uint64(0x80):
        out[pos] = np.uint8((u & np.uint64(0x7F)) | np.uint64(0x80))
        u >>= _U7
        pos += 1
    out[pos] = np.uint8(u)
    pos += 1
    for k in range(nexc):
        i = exc_idx[k]
        u = np.uint64(i)
        while u >= np.uint64(0x80):
            out[pos] = np.uint8((u & np.uint64(0x7F)) | np.uint64(0x80))
            u >>= _U7
            pos += 1
        out[pos] = np.uint8(u)
        pos += 1
        left = (bits[i] >> rbw) & _U16
        out[pos] = np.uint8(left & _FF)
        out[pos + 1] = np.uint8(left >> _U8)
        pos += 2
    return pos


@kernel
def alprd_decode(codes, cbits, rights, rbw, table, out_bits):
    """Rebuild ALP-RD doubles: out_bits[i] = table[code_i] << rbw | right_i.

    codes: the LSB-first code body at ``cbits`` (0..3; 0 means every code is 0, no body);
    rights: the right-bits body at ``rbw`` (48..56) bits. Both bodies are read a word at
    a time (bitpack.unpack_for's reader) in one fused pass. Returns n, ERR_TRUNCATED
    (a body shorter than its n values) or ERR_CORRUPT (a code >= len(table); widths
    outside those ranges or an empty table).
    """
    n = np.uint64(out_bits.shape[0])
    cb = np.uint64(cbits)
    rb = np.uint64(rbw)
    d = np.uint64(table.shape[0])
    ncb = np.uint64(codes.shape[0])
    nrb = np.uint64(rights.shape[0])
    if d == _U0 or cb > _U3 or rb == _U0 or rb > np.uint64(56):
        return ERR_CORRUPT
    if (n * cb + _U7) // _U8 > ncb or (n * rb + _U7) // _U8 > nrb:
        return ERR_TRUNCATED
    rmask = (_U1 << rb) - _U1
    nf = fast_count(nrb, rb, n)
    if cb == _U0:
        left = np.uint64(table[0]) << rb
        for i in range(n):
            bit = i * rb
            if i < nf:
                w = load_le64(rights, bit >> _U3)
            else:
                w = load_le64_tail(rights, bit >> _U3)
            out_bits[i] = left | ((w >> (bit & _U7)) & rmask)
        return np.int64(n)
    cmask = (_U1 << cb) - _U1
    ncf = fast_count(ncb, cb, n)
    for i in range(n):
        cbit = i * cb
        if i < ncf:
            cw = load_le64(codes, cbit >> _U3)
        else:
            cw = load_le64_tail(codes, cbit >> _U3)
        k = (cw >> (cbit & _U7)) & cmask
        if k >= d:
            return ERR_CORRUPT
        bit = i * rb
        if i < nf:
            w = load_le64(rights, bit >> _U3)
        else:
            w = load_le64_tail(rights, bit >> _U3)
        out_bits[i] = (np.uint64(table[k]) << rb) | ((w >> (bit & _U7)) & rmask)
    return np.int64(n)


@kernel
def alprd_patch(src, pos, nexc, rbw, out_bits):
    """Apply nexc ALP-RD exceptions (uvarint position, u16 LE left bits) read from src[pos:]:
    out_bits[i] = left << rbw | (the right bits already in out_bits[i]). Returns the end
    position, ERR_TRUNCATED, or ERR_CORRUPT (position >= n or a uvarint longer than 64 bits)."""
    end = src.shape[0]
    n = np.uint64(out_bits.shape[0])
    sh = np.uint64(rbw)
    rmask = (_U1 << sh) - _U1
    for _ in range(nexc):
        idx, pos, status = _exception_index(src, pos, end)
        if status < 0:
            return status
        if idx >= n:
            return ERR_CORRUPT
        if pos + 2 > end:
            return ERR_TRUNCATED
        left = np.uint64(src[pos]) | (np.uint64(src[pos + 1]) << _U8)
        pos += 2
        out_bits[idx] = (left << sh) | (out_bits[idx] & rmask)
    return pos


def _warmup() -> None:
    """Compile every kernel for the float64 and float32 paths the glue uses, with writable
    and read-only inputs (encoded columns arrive as read-only views of Arrow buffers)."""
    src_rw = np.zeros(64, dtype=np.uint8)
    src_ro = np.frombuffer(bytes(64), dtype=np.uint8)
    stats = np.empty(6, dtype=np.int64)
    for dt, bdt, sign, mode, vb in ((np.float64, np.uint64, 1 << 63, 1, 8), (np.float32, np.uint32, 1 << 31, 2, 4)):
        s = bdt(sign)
        for writable in (True, False):
            vals = np.array([1.5, -0.0, 2.25], dtype=dt)
            vals.flags.writeable = writable
            bits = vals.view(bdt)
            alp_score(vals, bits, s, 100.0, 0.01, stats)
            alp_score_exponents(vals, bits, s, np.array([1.0, 10.0]), np.array([1.0, 0.1]), np.empty((2, 6), np.int64))
            idx = np.zeros(3, dtype=np.int64)
            nexc = alp_pack(vals, bits, s, 100.0, 0.01, mode, np.int64(0), 8, src_rw, idx)
            alp_put_exceptions(idx, nexc, bits, vb, src_rw, 8)
        out = np.empty(3, dtype=dt)
        for src in (src_rw, src_ro):
            alp_decode(src, 8, np.int64(0), 100.0, 0.01, True, out)
            alp_patch(src, 0, 0, vb, out.view(bdt))
            alp_decode_at(src, 8, np.int64(0), 100.0, 0.01, True, np.zeros(1, np.int64), out)
    for src in (src_rw, src_ro):
        alp_exceptions_into(src, 0, 0, 8, 3, np.empty(0, np.int64), np.empty(0, np.uint64))
    alprd_code_bits(3)  # also called from the glue (size estimates)
    keys = np.zeros(_TAB, dtype=np.uint16)
    cnts = np.zeros(_TAB, dtype=np.int32)
    dct = np.zeros(ALPRD_MAX_DICT, dtype=np.uint16)
    meta = np.zeros(3, dtype=np.int64)
    buf = np.zeros(64, dtype=np.uint8)
    for writable in (True, False):
        bits = np.array([0x3FF0000000000000, 0x4000000000000001, 0x7FF8000000000001], dtype=np.uint64)
        bits.flags.writeable = writable
        alprd_plan(bits, keys, cnts, dct, meta)
        alprd_encode(bits, 12, dct, 2, buf, 0, np.zeros(3, dtype=np.int64))
    out_bits = np.zeros(3, dtype=np.uint64)
    table = np.array([0x3FF, 0x400], dtype=np.uint64)
    for src in (buf, src_ro):
        alprd_decode(src, 1, src, 52, table, out_bits)
        alprd_patch(src, 0, 0, 52, out_bits)
