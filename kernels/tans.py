"""tANS/FSE kernels of the v1 entropy pass (OptRANS; qdf-wire-v1.md §2.8), plus legacy rANS decode.

Bit-exact with Go internal/tans: TableLog 12, symbols on *contiguous* slots
``[cumul[s], cumul[s]+f)`` (no zstd spreading); the encoder walks a lane back-to-front
from state 4096, writes bits LSB-first into a forward stream closed by a 1-bit end mark;
the decoder starts at the end mark and reads backwards. Go reads bits past a lane's
front as zeros; here each lane has 8 zero bytes in front (the glue pads) and the window
parks on them once passed (``over``), so reads stay in bounds and no shift reaches 64.
Beyond Go's final-state check we also require every payload bit to be consumed (always
true for encoder output), which rejects truncated payloads.
"""

from __future__ import annotations

import numpy as np

from ._jit import kernel
from ._status import ERR_CORRUPT, ERR_TRUNCATED, OK

#: Final state != 4096 or payload bits not consumed exactly (status of the decoders).
ERR_STATE = -4

_U0, _U1, _U7, _U8, _U16 = np.uint64(0), np.uint64(1), np.uint64(7), np.uint64(8), np.uint64(16)
_FF, _TS, _TMASK = np.uint64(0xFF), np.uint64(4096), np.uint64(4095)
_M32, _RANS_L = np.uint64(0xFFFFFFFF), np.uint64(1 << 23)


@kernel
def _bitlen(v):
    """Number of significant bits of ``v`` (0 for 0), like Go's bits.Len32."""
    n = 0
    while v > 0:
        v >>= 1
        n += 1
    return n


@kernel
def tans_freqs(src, freq):
    """Normalise the byte histogram of ``src`` to sum 4096 into ``freq`` (uint32[256]).

    Exactly Go buildFreqs: f = max(1, (count*4096 + n/2) // n); then -1 from the first
    largest f > 1 while over 4096, or +1 to the first largest f while under (ties go
    to the lowest byte value)."""
    n = np.uint64(src.shape[0])
    hist = np.zeros(256, dtype=np.uint64)
    for i in range(n):
        hist[src[i]] += _U1
    for s in range(256):
        freq[s] = 0
    if n == _U0:
        return OK
    total = 0
    for s in range(256):
        if hist[s] != _U0:
            f = (hist[s] * _TS + n // np.uint64(2)) // n
            if f == _U0:
                f = _U1
            freq[s] = np.uint32(f)
            total += int(f)
    while total > 4096:
        bi, bf = -1, 0
        for s in range(256):
            if freq[s] > 1 and freq[s] > bf:
                bf = freq[s]
                bi = s
        if bi < 0:
            break
        freq[bi] -= 1
        total -= 1
    while total < 4096:
        bi, bf = -1, 0
        for s in range(256):
            if freq[s] > bf:
                bf = freq[s]
                bi = s
        if bi < 0:
            break
        freq[bi] += 1
        total += 1
    return OK


@kernel
def tans_encode_lanes(src, freq, nlanes, out, stride, lens, states):
    """Encode lane k (symbols k, k+nlanes, ...) of ``src`` into ``out[k*stride:]``.

    Sets ``lens[k]`` (payload bytes) and ``states[k]`` (final state). ``stride`` holds
    ceil(m*12/8)+1 bytes for a lane of m symbols (<= 12 bits each + the end-mark byte)."""
    dnb = np.zeros(256, dtype=np.uint64)  # deltaNbBits (never negative: f<<maxBits <= 8192)
    dfs = np.zeros(256, dtype=np.uint64)  # cumul - f + 4096 (>= 1, so unsigned is safe)
    cumul = _U0
    for s in range(256):
        f = np.uint64(freq[s])
        if f != _U0:
            hl = _bitlen(f - _U1)
            if hl > 0:
                hl -= 1
            mb = np.uint64(12 - hl)
            dnb[s] = (mb << _U16) - (f << mb)
            dfs[s] = cumul + _TS - f
        cumul += f
    n = np.uint64(src.shape[0])
    step = np.uint64(nlanes)
    for k in range(nlanes):
        uk = np.uint64(k)
        m = (n - uk + step - _U1) // step if n > uk else _U0
        pos = uk * np.uint64(stride)
        start = pos
        acc = _U0
        nbits = _U0
        state = _TS
        for t in range(m):
            sym = src[uk + (m - _U1 - np.uint64(t)) * step]
            nb = (state + dnb[sym]) >> _U16
            acc |= (state & ((_U1 << nb) - _U1)) << nbits
            nbits += nb
            while nbits >= _U8:  # at most 7 + 12 bits are pending
                out[pos] = np.uint8(acc & _FF)
                acc >>= _U8
                nbits -= _U8
                pos += _U1
            state = (state >> nb) + dfs[sym]
        acc |= _U1 << nbits  # end mark; bits above it stay zero as in Go's close()
        out[pos] = np.uint8(acc & _FF)
        lens[k] = np.int64(pos + _U1 - start)
        states[k] = np.uint32(state)
    return OK


@kernel
def _build_dec(freq, tab):
    """Packed decode entries: symbol | nb << 8 | newBase << 16 (Go DecEntry)."""
    c = 0
    for s in range(256):
        f = int(freq[s])
        for j in range(f):
            y = f + j
            nb = 13 - _bitlen(y)
            tab[c + j] = np.uint32(s | (nb << 8) | ((y << nb) << 16))
        c += f


@kernel
def _load(buf, p):
    """Little-endian 64-bit window at byte ``p``."""
    v = _U0
    for b in range(8):
        v |= np.uint64(buf[p + np.uint64(b)]) << np.uint64(8 * b)
    return v


@kernel
def _open(buf, base, ln):
    """Position a backward reader on the end-mark byte; (pos, consumed, window, ok)."""
    last = np.uint64(buf[base + ln - _U1]) if ln > _U0 else _U0
    pos = base + ln - _U8  # >= base - 8: the zero pad keeps the window in bounds
    return pos, np.uint64(9 - _bitlen(last)), _load(buf, pos), last != _U0


@kernel
def _refill(buf, base, pos, u, over):
    """Drop consumed whole bytes; park on the zero pad once past the lane front."""
    back = u >> np.uint64(3)
    floor = base - _U8
    if over or pos < floor + back:
        return floor, _U0, _U0, True
    pos -= back
    return pos, u & _U7, _load(buf, pos), over


@kernel
def _step(tab, x, c, u):
    """One decode step: (symbol, next state, consumed). ``u + nb`` stays < 64."""
    e = np.uint64(tab[x & _TMASK])
    nb = (e >> _U8) & _FF
    bits = ((c << u) >> _U1) >> (np.uint64(63) - nb)  # nb == 0 reads 0 without a 64 shift
    return np.uint8(e & _FF), (e >> _U16) + bits, u + nb


@kernel
def _lane_ok(x, base, pos, u, over):
    """Valid lane end: state back at 4096 and every payload bit consumed."""
    return x == _TS and not over and (pos + _U8 - base) * _U8 == u


@kernel
def tans_decode1(buf, base, ln, state, freq, out):
    """Decode a single-stream payload at ``buf[base:base+ln]`` (8 zero bytes before it)."""
    tab = np.empty(4096, dtype=np.uint32)
    _build_dec(freq, tab)
    b = np.uint64(base)
    pos, u, c, ok = _open(buf, b, np.uint64(ln))
    if not ok:
        return ERR_CORRUPT
    over = False
    x = np.uint64(state)
    n = np.uint64(out.shape[0])
    i = _U0
    while i + np.uint64(4) <= n:  # 4 reads <= 48 bits on top of <= 8
        for _ in range(4):
            s, x, u = _step(tab, x, c, u)
            out[i] = s
            i += _U1
        pos, u, c, over = _refill(buf, b, pos, u, over)
    while i < n:
        s, x, u = _step(tab, x, c, u)
        out[i] = s
        i += _U1
    return OK if _lane_ok(x, b, pos, u, over) else ERR_STATE


@kernel
def tans_decode4(buf, bases, lens, states, freq, out):
    """Decode a 4-way payload; lane k at ``buf[bases[k]:+lens[k]]`` owns out[k::4]."""
    tab = np.empty(4096, dtype=np.uint32)
    _build_dec(freq, tab)
    b0, b1, b2, b3 = np.uint64(bases[0]), np.uint64(bases[1]), np.uint64(bases[2]), np.uint64(bases[3])
    p0, u0, c0, k0 = _open(buf, b0, np.uint64(lens[0]))
    p1, u1, c1, k1 = _open(buf, b1, np.uint64(lens[1]))
    p2, u2, c2, k2 = _open(buf, b2, np.uint64(lens[2]))
    p3, u3, c3, k3 = _open(buf, b3, np.uint64(lens[3]))
    if not (k0 and k1 and k2 and k3):
        return ERR_CORRUPT
    o0 = o1 = o2 = o3 = False
    x0, x1, x2, x3 = np.uint64(states[0]), np.uint64(states[1]), np.uint64(states[2]), np.uint64(states[3])
    n = np.uint64(out.shape[0])
    i = _U0
    rows = 0
    while i + np.uint64(4) <= n:  # one row = one symbol per lane
        s0, x0, u0 = _step(tab, x0, c0, u0)
        s1, x1, u1 = _step(tab, x1, c1, u1)
        s2, x2, u2 = _step(tab, x2, c2, u2)
        s3, x3, u3 = _step(tab, x3, c3, u3)
        out[i], out[i + _U1], out[i + np.uint64(2)], out[i + np.uint64(3)] = s0, s1, s2, s3
        i += np.uint64(4)
        rows += 1
        if rows == 4:  # 4 rows <= 48 bits per lane between refills
            rows = 0
            p0, u0, c0, o0 = _refill(buf, b0, p0, u0, o0)
            p1, u1, c1, o1 = _refill(buf, b1, p1, u1, o1)
            p2, u2, c2, o2 = _refill(buf, b2, p2, u2, o2)
            p3, u3, c3, o3 = _refill(buf, b3, p3, u3, o3)
    if i < n:  # ragged last row: lanes 0..r-1 only, <= 12 more bits each
        s0, x0, u0 = _step(tab, x0, c0, u0)
        out[i] = s0
        if i + _U1 < n:
            s1, x1, u1 = _step(tab, x1, c1, u1)
            out[i + _U1] = s1
        if i + np.uint64(2) < n:
            s2, x2, u2 = _step(tab, x2, c2, u2)
            out[i + np.uint64(2)] = s2
    ok = _lane_ok(x0, b0, p0, u0, o0) and _lane_ok(x1, b1, p1, u1, o1)
    ok = ok and _lane_ok(x2, b2, p2, u2, o2) and _lane_ok(x3, b3, p3, u3, o3)
    return OK if ok else ERR_STATE


@kernel
def rans_decode(buf, offs, ends, states, freq, out):
    """Legacy rANS (Go internal/rans: 32-bit state, byte renorm below 2**23), len(offs) lanes.

    Lane i % lanes owns out[i] and reads bytes forward over [offs[k], ends[k]); as in Go
    there is no final-state check."""
    cum = np.zeros(257, dtype=np.uint64)
    slot = np.zeros(4096, dtype=np.uint8)
    for s in range(256):
        cum[s + 1] = cum[s] + np.uint64(freq[s])
        for c in range(int(cum[s]), int(cum[s + 1])):
            slot[c] = s
    lanes = offs.shape[0]
    xs, ps = states.astype(np.uint64), offs.astype(np.uint64)
    k = 0
    for i in range(out.shape[0]):
        x = xs[k]
        s = slot[x & _TMASK]
        out[i] = s
        x = (np.uint64(freq[s]) * (x >> np.uint64(12)) + (x & _TMASK) - cum[s]) & _M32
        while x < _RANS_L:
            if ps[k] >= np.uint64(ends[k]):
                return ERR_TRUNCATED
            x = ((x << _U8) | np.uint64(buf[ps[k]])) & _M32
            ps[k] += _U1
        xs[k] = x
        k = k + 1 if k + 1 < lanes else 0
    return OK


def _warmup() -> None:
    """Compile every kernel with the dtypes the glue passes (read-only and writable src)."""
    freq, lens, states = np.zeros(256, dtype=np.uint32), np.zeros(4, dtype=np.int64), np.zeros(4, dtype=np.uint32)
    for src in (np.frombuffer(b"abcab", dtype=np.uint8), np.frombuffer(bytearray(b"abcab"), dtype=np.uint8)):
        tans_freqs(src, freq)
        out = np.zeros(64, dtype=np.uint8)
        tans_encode_lanes(src, freq, 1, out, 16, lens, states)
        tans_encode_lanes(src, freq, 4, out, 16, lens, states)
    buf, dst = np.zeros(64, dtype=np.uint8), np.empty(5, dtype=np.uint8)
    tans_decode1(buf, 8, 1, 4096, freq, dst)
    bases = np.array([8, 17, 26, 35], dtype=np.int64)
    tans_decode4(buf, bases, np.ones(4, dtype=np.int64), states, freq, dst)
    rans_decode(buf, bases, bases, states, freq, dst)
