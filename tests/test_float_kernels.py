"""The word-at-a-time float decoders equal the previous (byte-at-a-time) kernels bit for bit.

The reference implementations below are verbatim copies of the decoders the kernels
replaced (Gorilla, Chimp128, ALP body, LSB-first unpack for FOR / Delta+FOR / dictionary,
and the glue's ALP-RD body path), compiled with plain ``numba.njit``. Every test feeds
both the same bytes and compares status codes (n, ERR_TRUNCATED, ERR_CORRUPT) and every
output bit: valid streams from the (unchanged) encoders over NaN payloads, +-Inf, -0.0,
subnormals and ordinary series at lengths 0, 1, 7, 8, 9, 255, 256, 257, 4096, 10000, their
prefixes, mutated and random bodies.
"""

from __future__ import annotations

import numba
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from qdf_kernels import alp as kalp
from qdf_kernels import bitpack
from qdf_kernels import chimp as kchimp
from qdf_kernels import gorilla as kgor
from qdf_kernels._status import ERR_CORRUPT, ERR_TRUNCATED

from qdf_columnar.codecs.qpack import decode_float_payload, encode_float_array
from qdf_columnar.format.reader import ByteReader

LENGTHS = [0, 1, 7, 8, 9, 255, 256, 257, 4096, 10_000]
SHAPES = ["special", "walk", "sensor", "prices", "bits", "mixed", "equal"]
PROPS = settings(
    max_examples=max(40, settings.default.max_examples),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
NAN_BITS = np.array(
    [0x7FF8000000000123, 0xFFF0000000000001, 0x7FF0000000000001, 0xFFF8000000000000, 0x7FFFFFFFFFFFFFFF], np.uint64
)
SPECIAL64 = np.concatenate(
    [
        np.array([np.nan, -0.0, 0.0, np.inf, -np.inf, 5e-324, -4.9e-324, 2.2250738585072009e-308, 1.5, -1e300]).view(
            np.uint64
        ),
        NAN_BITS,
    ]
)
SPECIAL32 = np.array(
    [0x7FC00123, 0xFF800001, 0x7F800000, 0xFF800000, 0x00000001, 0x80000001, 0x80000000, 0, 0x3FC00000, 0x007FFFFF],
    np.uint32,
)


# ------------------------------------------------------------------ previous kernels (reference)
_U0 = np.uint64(0)
_U1 = np.uint64(1)
_U3 = np.uint64(3)
_U7 = np.uint64(7)
_U8 = np.uint64(8)
_U9 = np.uint64(9)
_U64 = np.uint64(64)
_RING_MASK = np.uint64(127)
_THRESHOLD = np.uint64(13)
_NO_LZ = np.uint64(65)
_REP_TO_LZ = np.array([0, 8, 12, 16, 18, 20, 22, 24], dtype=np.uint64)
_I64_MAX = np.int64((1 << 63) - 1)
ref = numba.njit(cache=False, nogil=True)


@ref
def ref_gorilla_decode(src, width, first, out):  # type: ignore[no-untyped-def]
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


@ref
def ref_chimp_decode(src, first, out):  # type: ignore[no-untyped-def]
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
        if bp + np.uint64(2) > nbits:
            return ERR_TRUNCATED
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
        mb = _U0
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
            if mb == _U0 or lz + mb > _U64 - _THRESHOLD - _U1:
                return ERR_CORRUPT
            tz = _U64 - lz - mb
            base = stored[(head >> np.uint64(9)) & _RING_MASK]
            bp += np.uint64(18)
            stored_lz = _NO_LZ
        else:
            if flag == np.uint64(3):
                if bp + np.uint64(5) > nbits:
                    return ERR_TRUNCATED
                stored_lz = _REP_TO_LZ[(win >> np.uint64(59)) & np.uint64(7)]
                bp += np.uint64(5)
            elif stored_lz == _NO_LZ:
                return ERR_CORRUPT
            else:
                bp += np.uint64(2)
            mb = _U64 - stored_lz
            tz = _U0
            base = stored[current]
        v = base
        if mb > _U0:
            if bp + mb > nbits:
                return ERR_TRUNCATED
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


@ref
def ref_unpack_for(src, bits, base, out):  # type: ignore[no-untyped-def]
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


@ref
def ref_unpack_delta(src, bits, first, min_delta, out):  # type: ignore[no-untyped-def]
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


@ref
def ref_unpack_dict(src, bits, table, out):  # type: ignore[no-untyped-def]
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


@ref
def ref_alp_decode(src, width, for_min, pe, ie, exact, out):  # type: ignore[no-untyped-def]
    n = np.uint64(out.shape[0])
    b = np.uint64(width)
    if b == _U0:
        c = np.float64(for_min) / pe if exact else np.float64(for_min) * ie
        for i in range(n):
            out[i] = c
        return np.int64(n)
    if (n * b + _U7) // _U8 > np.uint64(src.shape[0]):
        return ERR_TRUNCATED
    mask = (_U1 << b) - _U1
    lim = _I64_MAX - for_min if for_min > 0 else _I64_MAX
    acc = _U0
    have = _U0
    pos = _U0
    for i in range(n):
        while have < b:
            acc |= np.uint64(src[pos]) << have
            pos += _U1
            have += _U8
        u = np.int64(acc & mask)
        acc >>= b
        have -= b
        if u > lim:
            return ERR_CORRUPT
        iv = u + for_min
        if exact:
            out[i] = np.float64(iv) / pe
        else:
            out[i] = np.float64(iv) * ie
    return np.int64(n)


# ------------------------------------------------------------------ data
def column(shape: str, n: int, seed: int, width: int = 64) -> np.ndarray:
    """Bit patterns (uint64 / uint32) of a float column of ``shape``."""
    rng = np.random.default_rng(seed)
    ut, ft = (np.uint64, np.float64) if width == 64 else (np.uint32, np.float32)
    if shape == "special":
        return rng.choice(SPECIAL64 if width == 64 else SPECIAL32, n)
    if shape == "bits":
        return rng.integers(0, np.iinfo(ut).max, n, dtype=ut, endpoint=True)
    if shape == "walk":
        v = np.cumsum(rng.standard_normal(n))
    elif shape == "sensor":
        v = np.repeat(np.round(20 + np.cumsum(rng.standard_normal(n // 4 + 1)) * 0.1, 1), 4)[:n]
    elif shape == "prices":
        v = np.round(100 + np.cumsum(rng.integers(-50, 51, n)) / 100, 2)
    elif shape == "equal":
        v = np.full(n, rng.uniform(-1e6, 1e6))
    else:  # mixed: a walk interleaved with specials and repeats of older values
        w = np.cumsum(rng.standard_normal(n)).astype(ft).view(ut)
        sp = SPECIAL64 if width == 64 else SPECIAL32
        pick = rng.random(n)
        w = np.where(pick < 0.2, rng.choice(sp, n), w)
        back = np.maximum(np.arange(n) - rng.integers(1, 200, n), 0)
        return np.where(pick > 0.8, w[back], w).astype(ut)
    return v.astype(ft).view(ut)


def xor_body(u: np.ndarray, chimp: bool) -> np.ndarray:
    """The E7 body the encoder writes (read-only, like the glue's views of the input)."""
    buf = np.zeros(max(len(u), 1) * 10 + 16, np.uint8)
    bits = kchimp.chimp_encode(u, buf, np.int64(-1)) if chimp else kgor.gorilla_encode(u, 8 * u.itemsize, buf,
                                                                                     np.int64(-1))
    return np.frombuffer(buf[: (int(bits) + 7) // 8].tobytes(), np.uint8)


def run_xor(body: np.ndarray, first: object, n: int, codec: str) -> tuple[int, np.ndarray, int, np.ndarray]:
    """(new status, new output, reference status, reference output) for one body."""
    dt = np.uint32 if codec == "gorilla32" else np.uint64
    got = np.zeros(n, dt)
    want = np.zeros(n, dt)
    if codec == "chimp":
        rc_new = int(kchimp.chimp_decode(body, first, got))
        rc_ref = int(ref_chimp_decode(body, first, want))
    else:
        w = 32 if codec == "gorilla32" else 64
        rc_new = int(kgor.gorilla_decode(body, w, first, got))
        rc_ref = int(ref_gorilla_decode(body, w, first, want))
    return rc_new, got, rc_ref, want


def assert_same(body: np.ndarray, first: object, n: int, codec: str) -> int:
    rc_new, got, rc_ref, want = run_xor(body, first, n, codec)
    assert rc_new == rc_ref, (codec, n, len(body), rc_new, rc_ref)
    if rc_new >= 0:
        np.testing.assert_array_equal(got, want)
    return rc_new


CODECS = ["gorilla64", "gorilla32", "chimp"]


# ------------------------------------------------------------------ XOR codecs
@PROPS
@given(
    codec=st.sampled_from(CODECS),
    n=st.sampled_from([x for x in LENGTHS if x]),
    shape=st.sampled_from(SHAPES),
    seed=st.integers(0, 2**32 - 1),
)
def test_xor_decoders_match_previous(codec: str, n: int, shape: str, seed: int) -> None:
    u = column(shape, n, seed, 32 if codec == "gorilla32" else 64)
    body = xor_body(u, codec == "chimp")
    assert assert_same(body, u[0], n, codec) == n
    rc, got, _, _ = run_xor(body, u[0], n, codec)
    np.testing.assert_array_equal(got, u)  # and both are the input, bit for bit
    # every cut near the end (the checked tail) and a few in the body: same status
    cuts = set(range(max(0, len(body) - 40), len(body))) | {0, 1, len(body) // 3, len(body) // 2}
    for cut in sorted(cuts):
        assert_same(body[:cut], u[0], n, codec)
    # more values than the body holds
    assert_same(body, u[0], n + 1 + n // 3, codec)


@PROPS
@given(
    codec=st.sampled_from(CODECS),
    n=st.sampled_from([x for x in LENGTHS if x]),
    shape=st.sampled_from(SHAPES),
    seed=st.integers(0, 2**32 - 1),
    flips=st.lists(st.tuples(st.integers(0, 2**31), st.integers(0, 255)), min_size=1, max_size=4),
)
def test_xor_mutations_match_previous(codec: str, n: int, shape: str, seed: int, flips: list) -> None:
    u = column(shape, n, seed, 32 if codec == "gorilla32" else 64)
    body = xor_body(u, codec == "chimp").copy()
    if len(body) == 0:
        body = np.zeros(1, np.uint8)
    for pos, byte in flips:
        body[pos % len(body)] = byte
    assert_same(np.frombuffer(body.tobytes(), np.uint8), u[0], n, codec)


@PROPS
@given(
    codec=st.sampled_from(CODECS),
    n=st.sampled_from([2, 3, 9, 64, 257, 4096]),
    data=st.binary(min_size=0, max_size=600),
    first=st.integers(0, 2**32 - 1),
)
def test_xor_random_bodies_match_previous(codec: str, n: int, data: bytes, first: int) -> None:
    """Arbitrary bytes: corrupt flags, truncation anywhere, hostile windows."""
    body = np.frombuffer(data, np.uint8)
    assert_same(body, np.uint32(first) if codec == "gorilla32" else np.uint64(first), n, codec)
    assert_same(
        np.frombuffer(data * 7, np.uint8), np.uint64(first), n * 3, "chimp" if codec == "chimp" else "gorilla64"
    )


@pytest.mark.parametrize("codec", CODECS)
def test_xor_every_short_body(codec: str) -> None:
    """Every 1- and 2-byte body (and a sample of 3-byte ones): headers cut at each bit."""
    first = np.uint32(0x3F800000) if codec == "gorilla32" else np.uint64(0x3FF0000000000000)
    bodies = [bytes([a]) for a in range(256)] + [bytes([a, b]) for a in range(256) for b in range(256)]
    rng = np.random.default_rng(5)
    bodies += [bytes(x) for x in rng.integers(0, 256, (3000, 3))]
    for data in bodies:
        body = np.frombuffer(data, np.uint8)
        for n in (2, 6, 20):
            assert_same(body, first, n, codec)


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("fill", [0x00, 0xFF, 0xAA, 0x55, 0x80, 0xC0, 0x40])
def test_xor_constant_bodies(codec: str, fill: int) -> None:
    for size in (0, 1, 5, 12, 13, 16, 17, 18, 40, 1000):
        body = np.frombuffer(bytes([fill]) * size, np.uint8)
        for n in (1, 2, 9, 100, 2000):
            assert_same(body, np.uint32(7) if codec == "gorilla32" else np.uint64(7), n, codec)


@pytest.mark.parametrize("n", [1, 7, 8, 9, 255, 256, 257, 4096, 10_000])
def test_xor_single_and_long_windows(n: int) -> None:
    """lz 0 windows (Chimp flag 11 code 0: 69-bit values, Gorilla 77-bit) back to back."""
    rng = np.random.default_rng(n)
    u = rng.integers(0, 2**64 - 1, n, dtype=np.uint64, endpoint=True) | np.uint64(1 << 63)
    u[::2] &= ~np.uint64(1 << 63)
    for codec in ("gorilla64", "chimp"):
        body = xor_body(u, codec == "chimp")
        assert assert_same(body, u[0], n, codec) == n
        for cut in range(max(0, len(body) - 30), len(body)):
            assert_same(body[:cut], u[0], n, codec)


def test_read_only_and_writable_bodies_agree() -> None:
    u = column("mixed", 5000, 1)
    for chimp in (False, True):
        body = xor_body(u, chimp)
        writable = body.copy()
        for b in (body, writable):
            assert assert_same(b, u[0], 5000, "chimp" if chimp else "gorilla64") == 5000


# ------------------------------------------------------------------ integer unpack paths
WIDTHS = [0, 1, 2, 3, 5, 7, 8, 9, 13, 16, 17, 25, 31, 32, 33, 47, 48, 52, 55, 56]


@PROPS
@given(n=st.sampled_from(LENGTHS), b=st.sampled_from(WIDTHS), seed=st.integers(0, 2**32 - 1), short=st.booleans())
def test_unpack_kernels_match_previous(n: int, b: int, seed: int, short: bool) -> None:
    rng = np.random.default_rng(seed)
    nbytes = (n * b + 7) // 8
    raw = rng.integers(0, 256, nbytes + 8, dtype=np.uint8)
    src = np.frombuffer(raw[: max(nbytes - 1, 0) if short else nbytes].tobytes(), np.uint8)
    base, md = (np.uint64(x) for x in rng.integers(0, 2**63, 2, dtype=np.uint64))
    got = np.zeros(n, np.uint64)
    want = np.zeros(n, np.uint64)
    cases = [
        (bitpack.unpack_for, ref_unpack_for, (b, base)),
        (bitpack.unpack_delta, ref_unpack_delta, (b, base, md)),
    ]
    if b <= 6:
        d = int(rng.integers(1, 1 << b, endpoint=True)) if b else 1
        cases.append((bitpack.unpack_dict, ref_unpack_dict, (b, rng.integers(0, 2**64 - 1, d, np.uint64, True))))
    for new, old, args in cases:
        got[:] = 0
        want[:] = 0
        rc = int(new(src, *args, got))
        assert rc == int(old(src, *args, want)), (new, n, b)
        if rc >= 0:
            np.testing.assert_array_equal(got, want)


# ------------------------------------------------------------------ ALP and ALP-RD bodies
@PROPS
@given(
    n=st.sampled_from(LENGTHS),
    b=st.sampled_from(WIDTHS),
    seed=st.integers(0, 2**32 - 1),
    d=st.integers(0, 18),
    exact=st.booleans(),
    for_min=st.one_of(st.integers(-(2**20), 2**20), st.integers(-(2**63), 2**63 - 1)),
    f32=st.booleans(),
    short=st.booleans(),
)
def test_alp_decode_matches_previous(
    n: int, b: int, seed: int, d: int, exact: bool, for_min: int, f32: bool, short: bool
) -> None:
    rng = np.random.default_rng(seed)
    nbytes = (n * b + 7) // 8
    src = np.frombuffer(
        rng.integers(0, 256, nbytes, dtype=np.uint8)[: nbytes - 1 if short else None].tobytes(), np.uint8
    )
    pe = float(10**d)
    dt = np.float32 if f32 else np.float64
    got = np.zeros(n, dt)
    want = np.zeros(n, dt)
    args = (b, np.int64(for_min), pe, 1.0 / pe, exact)
    rc = int(kalp.alp_decode(src, *args, got))
    assert rc == int(ref_alp_decode(src, *args, want))
    if rc >= 0:
        ut = np.uint32 if f32 else np.uint64
        np.testing.assert_array_equal(got.view(ut), want.view(ut))


def _alprd_before(codes_b: np.ndarray, cbits: int, rights_b: np.ndarray, rbw: int, table: np.ndarray, n: int):
    """The glue's previous ALP-RD body path; None where it raised 'code out of range'."""
    codes = np.zeros(n, dtype=np.uint64)
    if cbits:
        ref_unpack_for(codes_b, cbits, np.uint64(0), codes)
        if int(codes.max()) >= table.shape[0]:
            return None
    rights = np.empty(n, np.uint64)
    ref_unpack_for(rights_b, rbw, np.uint64(0), rights)
    return table[codes] << np.uint64(rbw) | rights


@PROPS
@given(
    n=st.sampled_from([x for x in LENGTHS if x]),
    left_bw=st.integers(8, 16),
    dn=st.integers(1, 8),
    seed=st.integers(0, 2**32 - 1),
)
def test_alprd_bodies_match_previous(n: int, left_bw: int, dn: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    rbw = 64 - left_bw
    cbits = (dn - 1).bit_length()
    codes_b = np.frombuffer(rng.integers(0, 256, (n * cbits + 7) // 8, dtype=np.uint8).tobytes(), np.uint8)
    rights_b = np.frombuffer(rng.integers(0, 256, (n * rbw + 7) // 8, dtype=np.uint8).tobytes(), np.uint8)
    table = rng.integers(0, 1 << left_bw, dn, dtype=np.uint64)
    out = np.zeros(n, np.uint64)
    rc = int(kalp.alprd_decode(codes_b, cbits, rights_b, rbw, table, out))
    want = _alprd_before(codes_b, cbits, rights_b, rbw, table, n)
    if want is None:
        assert rc == ERR_CORRUPT
    else:
        assert rc == n
        np.testing.assert_array_equal(out, want)
        # exceptions replace the left bits and keep the right bits (the previous patch
        # read them from the separate rights array)
        idx = np.unique(rng.integers(0, n, min(n, 5)))
        exc = bytearray()
        for i in idx:
            exc += bytes([int(i) & 0x7F | 0x80, int(i) >> 7]) if i >= 0x80 else bytes([int(i)])
            exc += int(rng.integers(0, 1 << 16)).to_bytes(2, "little")
        src = np.frombuffer(bytes(exc), np.uint8)
        assert kalp.alprd_patch(src, 0, len(idx), rbw, out) == len(exc)
        rights = want & np.uint64((1 << rbw) - 1)
        np.testing.assert_array_equal(out & np.uint64((1 << rbw) - 1), rights)
    assert kalp.alprd_decode(codes_b, cbits, rights_b[:-1], rbw, table, out) == ERR_TRUNCATED
    if cbits:
        assert kalp.alprd_decode(codes_b[:-1], cbits, rights_b, rbw, table, out) == ERR_TRUNCATED


# ------------------------------------------------------------------ whole payloads
@PROPS
@given(
    force=st.sampled_from(["gorilla", "chimp", "alp", "alprd", None]),
    f32=st.booleans(),
    n=st.sampled_from(LENGTHS),
    shape=st.sampled_from(SHAPES),
    seed=st.integers(0, 2**32 - 1),
)
def test_payload_round_trip_bit_exact(force: str | None, f32: bool, n: int, shape: str, seed: int) -> None:
    if f32 and force in ("chimp", "alprd"):
        f32 = False
    u = column(shape, n, seed, 32 if f32 else 64)
    a = u.view(np.float32 if f32 else np.float64)
    out = bytearray()
    encode_float_array(out, a, compress=True, force=force)
    r = ByteReader(bytes(out))
    got = decode_float_payload(r)
    assert r.pos == len(out)
    np.testing.assert_array_equal(got.view(u.dtype), u)


# ------------------------------------------------------------------ no read past the input
GUARDED = r"""
import ctypes, mmap, sys
import numpy as np
from qdf_kernels import alp as kalp, bitpack, chimp as kchimp, gorilla as kgor

libc = ctypes.CDLL(None, use_errno=True)
libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
PAGE = mmap.PAGESIZE
_keep = []


def guarded(data):
    # ``data`` as a read-only uint8 array whose last byte sits just before a PROT_NONE page
    npages = (len(data) + PAGE - 1) // PAGE + 1
    m = mmap.mmap(-1, npages * PAGE)
    start = (npages - 1) * PAGE - len(data)
    m[start : start + len(data)] = data
    addr = ctypes.addressof(ctypes.c_char.from_buffer(m))
    assert libc.mprotect(addr + (npages - 1) * PAGE, PAGE, 0) == 0
    _keep.append(m)
    a = np.frombuffer(m, np.uint8, count=len(data), offset=start)
    a.flags.writeable = False
    return a


rng = np.random.default_rng(11)
for n in (2, 9, 257, 4096):
    for u64 in (np.cumsum(rng.standard_normal(n)).view(np.uint64),
                rng.integers(0, 2**64 - 1, n, np.uint64, True),
                np.repeat(rng.integers(0, 2**64 - 1, n // 3 + 1, np.uint64, True), 3)[:n]):
        for codec in ("gorilla64", "gorilla32", "chimp"):
            u = (u64 >> np.uint64(32)).astype(np.uint32) if codec == "gorilla32" else u64
            buf = np.zeros(n * 10 + 16, np.uint8)
            no_limit = np.int64(-1)
            bits = (kchimp.chimp_encode(u, buf, no_limit) if codec == "chimp"
                    else kgor.gorilla_encode(u, 8 * u.itemsize, buf, no_limit))
            body = buf[: (bits + 7) // 8].tobytes()
            cuts = {len(body), len(body) // 2, 1, 0} | set(range(max(0, len(body) - 20), len(body)))
            for cut in sorted(cuts):
                for data in (body[:cut], bytes(rng.integers(0, 256, cut, dtype=np.uint8))):
                    src = guarded(data)
                    out = np.zeros(n + 40, u.dtype)
                    if codec == "chimp":
                        kchimp.chimp_decode(src, u[0], out)
                    else:
                        kgor.gorilla_decode(src, 8 * u.itemsize, u[0], out)
for n in (1, 7, 8, 9, 255, 256, 257, 4096):
    for b in (1, 3, 7, 8, 13, 31, 48, 52, 55, 56):
        for size in {(n * b + 7) // 8, (n * b + 7) // 8 - 1}:
            if size < 0:
                continue
            src = guarded(bytes(rng.integers(0, 256, size, dtype=np.uint8)))
            out = np.zeros(n, np.uint64)
            bitpack.unpack_for(src, b, np.uint64(1), out)
            bitpack.unpack_delta(src, b, np.uint64(1), np.uint64(2), out)
            if b <= 6:
                bitpack.unpack_dict(src, b, np.arange(1 << b, dtype=np.uint64), out)
            kalp.alp_decode(src, b, np.int64(-5), 100.0, 0.01, b % 2 == 1, np.zeros(n))
            kalp.alp_decode(src, b, np.int64(-5), 100.0, 0.01, False, np.zeros(n, np.float32))
            if b >= 48:
                tab = np.arange(8, dtype=np.uint64)
                kalp.alprd_decode(src, 3, src, b, tab, out)
                kalp.alprd_decode(src[:0], 0, src, b, tab, out)
print("ok")
"""


def test_no_read_past_the_input() -> None:
    """Each body ends right before an unmapped page: a read past it would kill the process."""
    import subprocess
    import sys

    res = subprocess.run([sys.executable, "-c", GUARDED], capture_output=True, text=True, timeout=600)
    assert res.returncode == 0 and res.stdout.strip() == "ok", (res.returncode, res.stderr[-2000:])


@pytest.mark.parametrize("codec", ["gorilla64", "gorilla32", "chimp"])
def test_xor_encoders_stop_past_their_limit(codec: str) -> None:
    """With a limit, the bit count is the same while the body fits it and -1 past it."""
    u64 = np.cumsum(np.random.default_rng(9).standard_normal(2000)).view(np.uint64)
    u = (u64 >> np.uint64(32)).astype(np.uint32) if codec == "gorilla32" else u64

    def enc(limit: int) -> int:
        buf = np.zeros(len(u) * 10 + 16, np.uint8)
        if codec == "chimp":
            return int(kchimp.chimp_encode(u, buf, np.int64(limit)))
        return int(kgor.gorilla_encode(u, 8 * u.itemsize, buf, np.int64(limit)))

    bits = enc(-1)
    body = (bits + 7) // 8
    assert enc(body) == bits and enc(body + 100) == bits
    assert enc(body - 2) == -1 and enc(0) == -1
