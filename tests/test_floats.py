"""Contract of the lossless float codecs: E7 PackGorilla (0B/0A), E7 Chimp128 (0F),
F4 PackALP (0B/0A), F4 ALP-RD (0F, decode) and the §3.2 picker.

Golden payloads derived by hand from the Go writers; bit-exact round trips for every
forced codec (NaN payloads, +-inf, -0.0, subnormals included); the picker never emits
more than raw E4 and picks the expected family per data shape; strict prefixes raise
TruncatedError; mutated bytes raise DecodeError subclasses or decode; hostile counts
fail before allocating.
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from qdf_columnar.codecs.qpack import decode_float_payload, encode_float_array, skip_payload
from qdf_columnar.errors import CorruptDataError, DecodeError, InvalidOptionError, TruncatedError, UnknownCodecError
from qdf_columnar.format.reader import ByteReader
from qdf_columnar.format.tags import QPackTag
from qdf_columnar.format.varint import encode_uvarint

FLOATS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
LENGTHS = [0, 1, 7, 8, 9, 255, 256, 257, 4096, 10_000]
SHAPES = ["special", "equal", "walk", "prices", "ints", "bits", "sensor"]
FORCED = [None, "raw", "gorilla", "chimp", "alp"]
_NAN_PAYLOADS = np.array([0x7FF8000000000123, 0xFFF0000000000001, 0x7FF0000000000001], dtype=np.uint64)


def make(shape: str, dtype: type, n: int, seed: int) -> np.ndarray:
    """Float columns covering every codec's win and lose cases."""
    rng = np.random.default_rng(seed)
    if shape == "special":
        pool = np.concatenate(
            [[np.nan, -0.0, 0.0, np.inf, -np.inf, 5e-324, -2.2e-308, 1.5, 1e300], _NAN_PAYLOADS.view(np.float64)]
        )
        v = rng.choice(pool, n)
        if dtype == np.float32:  # float32 NaN payloads and subnormals built from bits
            u = rng.choice(np.array([0x7FC00123, 0xFF800001, 0x00000001, 0x80000000, 0x3FC00000], np.uint32), n)
            with np.errstate(over="ignore", invalid="ignore"):  # 1e300 -> inf is intended
                return np.where(rng.random(n) < 0.5, u.view(np.float32), v.astype(np.float32))
    elif shape == "equal":
        v = np.full(n, rng.uniform(-1e6, 1e6))
    elif shape == "walk":
        v = np.cumsum(rng.standard_normal(n))
    elif shape == "prices":
        v = np.round(100 + np.cumsum(rng.integers(-50, 51, n)) / 100, 2)
    elif shape == "ints":
        v = rng.integers(-(10**6), 10**6, n).astype(np.float64)
    elif shape == "sensor":
        v = np.repeat(np.round(20 + np.cumsum(rng.standard_normal(n // 4 + 1)) * 0.1, 1), 4)[:n]
    else:
        bits = rng.integers(0, 2**63, n, dtype=np.uint64) * np.uint64(2) + rng.integers(0, 2, n, dtype=np.uint64)
        if dtype == np.float32:
            return (bits >> np.uint64(32)).astype(np.uint32).view(np.float32)
        return bits.view(np.float64)
    return v.astype(dtype)


def enc(values: np.ndarray, force: str | None = None, compress: bool = True) -> bytes:
    out = bytearray()
    encode_float_array(out, values, compress=compress, force=force)
    return bytes(out)


def dec(payload: bytes, **kw: object) -> np.ndarray:
    r = ByteReader(payload)
    got = decode_float_payload(r, **kw)  # type: ignore[arg-type]
    assert r.pos == len(payload), "decoder must stop exactly at the payload end"
    r = ByteReader(payload)
    skip_payload(r)
    assert r.pos == len(payload), "skip must stop exactly at the payload end"
    return got


def same_bits(a: np.ndarray, b: np.ndarray) -> None:
    assert a.dtype == b.dtype
    ut = np.uint64 if a.dtype == np.float64 else np.uint32
    np.testing.assert_array_equal(a.view(ut), b.view(ut))


# --------------------------------------------------------------------- golden
@pytest.mark.parametrize(
    ("values", "force", "hexstr"),
    [
        # 0 | 11 00001 001010 11111111111: repeat, then a new window lz=1 mb=11 (25 bits)
        ([1.0, 1.0, 2.0], "gorilla", "e70b03000000000000f03f19612bff80"),
        # 00+slot 0 | 01+slot 1+lz code 0+sig 12 | 0x7ff (39 bits)
        ([1.0, 1.0, 2.0], "chimp", "e70f03000000000000f03f270020418ffe"),
        # d=2, forMin 125, width 7, body [0,125,0], -0.0 as exception 2; n < 8 still picks ALP
        ([1.25, 2.5, -0.0], None, "f40b0302fa0107803e0001020000000000000080"),
        ([], None, "e40b00"),
    ],
)
def test_golden(values: list[float], force: str | None, hexstr: str) -> None:
    arr = np.array(values, dtype=np.float64)
    assert enc(arr, force).hex() == hexstr
    same_bits(dec(bytes.fromhex(hexstr)), arr)


def test_raw_without_compress() -> None:
    arr = np.array([1.5, 2.5], dtype=np.float32)
    assert enc(arr, compress=False) == bytes((QPackTag.RAW, 0x0A, 2)) + arr.tobytes()


# --------------------------------------------------------------------- round trips
@FLOATS
@given(
    dtype=st.sampled_from([np.float64, np.float32]),
    n=st.sampled_from(LENGTHS),
    shape=st.sampled_from(SHAPES),
    seed=st.integers(0, 2**32 - 1),
)
def test_round_trip_every_codec(dtype: type, n: int, shape: str, seed: int) -> None:
    values = make(shape, dtype, n, seed)
    width = np.dtype(dtype).itemsize
    for force in FORCED:
        if force == "chimp" and dtype == np.float32:
            continue
        payload = enc(values, force)
        same_bits(dec(payload), values)
        if force is None:
            assert len(payload) <= 2 + len(encode_uvarint(n)) + width * n, "picker must never exceed raw"


def test_chimp_f32_rejected() -> None:
    with pytest.raises(InvalidOptionError):
        enc(np.ones(4, np.float32), "chimp")
    with pytest.raises(InvalidOptionError):
        enc(np.ones(4), "zstd")


def test_expected_count_checked() -> None:
    payload = enc(make("prices", np.float64, 300, 1))
    with pytest.raises(CorruptDataError):
        decode_float_payload(ByteReader(payload), n=299)


# --------------------------------------------------------------------- picker
@pytest.mark.parametrize(
    ("shape", "dtype", "tags"),
    [
        ("prices", np.float64, {QPackTag.ALP}),
        ("prices", np.float32, {QPackTag.ALP}),
        ("ints", np.float64, {QPackTag.ALP}),
        ("bits", np.float64, {QPackTag.RAW}),
        ("bits", np.float32, {QPackTag.RAW}),
    ],
)
def test_picker_choice(shape: str, dtype: type, tags: set[int]) -> None:
    assert enc(make(shape, dtype, 4096, 7))[0] in tags


def test_picker_xor_on_slow_series_with_repeats() -> None:
    # Irrational steps (ALP cannot represent them) held for a few samples: Gorilla/Chimp land.
    rng = np.random.default_rng(3)
    v = np.repeat(np.cumsum(rng.standard_normal(1024) * np.pi * 1e-3) + 20.0, 6)
    for arr in (v, v.astype(np.float32)):
        payload = enc(arr)
        assert payload[0] == QPackTag.GORILLA
        assert len(payload) < arr.nbytes // 3


# --------------------------------------------------------------------- hostile input
def _payloads() -> list[bytes]:
    out = []
    for dtype in (np.float64, np.float32):
        for shape in ("special", "walk", "prices", "sensor"):
            v = make(shape, dtype, 40, 11)
            for force in ("gorilla", "chimp", "alp", "alprd"):
                if not (force in ("chimp", "alprd") and dtype == np.float32):  # f64-only kinds
                    out.append(enc(v, force))
    rng = np.random.default_rng(3)  # ALP-RD bodies of other lengths (one and many left parts)
    out += [enc(rng.random(n), "alprd") for n in (1, 17)]
    return out


PAYLOADS = _payloads()


def test_every_prefix_truncated() -> None:
    for payload in PAYLOADS:
        for k in range(len(payload)):
            with pytest.raises(TruncatedError):
                decode_float_payload(ByteReader(payload[:k]))
            with pytest.raises(TruncatedError):
                skip_payload(ByteReader(payload[:k]))


@settings(max_examples=300, deadline=None)
@given(which=st.integers(0, len(PAYLOADS) - 1), pos=st.integers(0, 10**6), byte=st.integers(0, 255))
def test_mutations_never_crash(which: int, pos: int, byte: int) -> None:
    buf = bytearray(PAYLOADS[which])
    buf[pos % len(buf)] = byte
    for fn in (decode_float_payload, skip_payload):
        try:
            fn(ByteReader(bytes(buf)))
        except DecodeError:
            pass


@pytest.mark.parametrize(
    ("head", "err"),
    [
        (b"\xe7\x0b", TruncatedError),  # Gorilla: 2**40 values cannot fit in 9 bytes
        (b"\xe7\x0f", TruncatedError),
        (b"\xf4\x0b", CorruptDataError),  # ALP: above the 2**24 element cap
        (b"\xf4\x0f", TruncatedError),  # ALP-RD: >= 6 bytes per value
    ],
)
def test_huge_counts_fail_fast(head: bytes, err: type) -> None:
    payload = head + encode_uvarint(2**40) + bytes(9)
    tracemalloc.start()
    try:
        with pytest.raises(err):
            decode_float_payload(ByteReader(payload))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20


@pytest.mark.parametrize(
    "hexstr",
    [
        "e70b03000000000000f03f0280",  # reuse window before any window
        "e70b03000000000000f03f0dfff8",  # lz 31 + mb 64 > 64
        "e70f03000000000000f03f0280",  # Chimp flag 10 without a stored lz
        "e70f03000000000000f03f12400000",  # Chimp flag 01 with sig 0
        "f40b0200feffffffffffffffff01010200",  # forMin MaxInt64 + packed 1 overflows int64
        "f40b02000007000001030000000000000000",  # exception index 3 >= n
        "f40b0213000000",  # exponent 19 > 18
        "f40b02000039",  # width 57 > 56
        "e70b01000000000000f03f01",  # single value with body bits
        "e70c00",  # kind 0x0c is not a float kind
    ],
)
def test_corrupt_streams(hexstr: str) -> None:
    with pytest.raises(CorruptDataError):
        decode_float_payload(ByteReader(bytes.fromhex(hexstr)))


def test_alprd_f32_unknown() -> None:
    with pytest.raises(UnknownCodecError):
        decode_float_payload(ByteReader(bytes.fromhex("f40e0100")))


def test_alp_exact_flag_and_alprd_decode() -> None:
    # exact flag: I / 10**1 for I in {1, 3}: 0.1 and 0.3 (0.3 is 3 * 0.1 + 1ulp under multiply)
    got = dec(bytes.fromhex("f40b028102020800"))
    same_bits(got, np.array([0.1, 0.3]))
    # ALP-RD: leftBW 12, one dictionary entry 0x3ff, 52 right bits per value, one exception
    rights = [1, 2**51, 5]
    body = sum(r << (52 * i) for i, r in enumerate(rights)).to_bytes((3 * 52 + 7) // 8, "little")
    payload = bytes.fromhex("f40f030c01ff03") + body + bytes.fromhex("01010004")
    want = np.array([(0x3FF << 52) | 1, (0x400 << 52) | 2**51, (0x3FF << 52) | 5], dtype=np.uint64)
    same_bits(dec(payload), want.view(np.float64))


def _float_inputs() -> list[np.ndarray]:
    rng = np.random.default_rng(21)
    walk = np.cumsum(rng.standard_normal(3000))
    return [walk, np.round(rng.normal(size=3000) * 100, 2), np.repeat(walk[:300], 10),
            rng.random(3000), np.full(3000, 1.5), np.round(walk, 1).astype(np.float32),
            rng.integers(0, 2**62, 3000).view(np.float64)]


@pytest.mark.parametrize("k", range(7))
def test_the_picker_writes_the_same_payload_when_trials_stop_early(monkeypatch, k: int) -> None:
    """Gorilla / Chimp trials stop once they pass the best cost so far; the payload
    chosen is the one a picker that writes every trial in full chooses."""
    from qdf_columnar.codecs import floatenc
    from qdf_columnar.codecs.floats import xor

    a = _float_inputs()[k]
    out = bytearray()
    floatenc.encode_floats(out, a, compress=True)
    whole = xor._XorStream.payload
    monkeypatch.setattr(xor._XorStream, "payload", lambda self, a, f, to_beat=None: whole(self, a, f))
    ref = bytearray()
    floatenc.encode_floats(ref, a, compress=True)
    assert bytes(out) == bytes(ref)
