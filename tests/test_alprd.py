"""ALP-RD ("real doubles", F4 kind 0x0F) encoder: Go-faithful planner, byte layout, picker
integration under the never-larger rule, bit-exact round trips and hostile input.

Reference: Go qpack_alprd.go (alprdPlanFloat64 / writePackedALPRDFloat64Slice /
readPackedALPRDFloat64Slice). The planner is checked against a line-by-line pure-Python
port of alprdPlanFloat64; the payload bytes against an independent pure-Python writer of
the Go layout.
"""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pytest
from arrow_check import assert_tables_bit_equal
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import qdf_columnar as qdf
from qdf_columnar.codecs.floats import alprd
from qdf_columnar.codecs.qpack import decode_float_payload, encode_float_array, skip_payload
from qdf_columnar.errors import CorruptDataError
from qdf_columnar.format.reader import ByteReader
from qdf_columnar.format.varint import encode_uvarint, uvarint_len

LENGTHS = [0, 1, 7, 8, 9, 16, 17, 255, 256, 257, 1024, 1025, 4096, 10_000]
NAN_BITS = np.array([0x7FF8000000000123, 0xFFF0000000000001, 0x7FF0000000000001, 0xFFF8000000000000], np.uint64)
SPECIAL = np.concatenate(
    [[np.nan, -0.0, 0.0, np.inf, -np.inf, 5e-324, -4.9e-324, 2.2250738585072009e-308], NAN_BITS.view(np.float64)]
)
SETTINGS = settings(
    max_examples=max(20, settings.default.max_examples),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def make(shape: str, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if shape == "unit":
        v = rng.random(n)
    elif shape == "latlon":
        v = rng.uniform(-90, 90, n)
    elif shape == "normal":
        v = rng.standard_normal(n)
    elif shape == "lognormal":
        v = rng.lognormal(0, 3, n)
    elif shape == "sensor":  # smooth-noisy, Go mkSensor's target class
        v = 20 + np.sin(np.arange(n) / 50) + rng.standard_normal(n) * 0.01
    elif shape == "shared_left":  # Go bytes16(): exact 2**-9 steps on 1000.0
        v = 1000.0 + (np.arange(n) % 7) * 0.001953125
    elif shape == "bits":
        v = rng.integers(0, 2**64 - 1, n, dtype=np.uint64, endpoint=True).view(np.float64)
    elif shape == "special":
        v = rng.choice(SPECIAL, n)
    elif shape == "mixed":  # unit values with NaN payloads, +-inf, -0.0 and subnormals
        v = rng.random(n)
        m = rng.random(n) < 0.05
        v[m] = rng.choice(SPECIAL, int(m.sum()))
    else:
        raise AssertionError(shape)
    return np.ascontiguousarray(v, dtype=np.float64)


SHAPES = ["unit", "latlon", "normal", "lognormal", "sensor", "shared_left", "bits", "special", "mixed"]


# ------------------------------------------------------------------ Go reference port
def go_plan(s: np.ndarray) -> tuple[int, list[int], int, int] | None:
    """Line-by-line port of Go alprdPlanFloat64 without the n < 16 / raw gates:
    (leftBW, dictionary, exception count, estimate) or None when nothing was sampled."""
    bits = [int(x) for x in s.view(np.uint64)]
    n = len(bits)
    if n == 0:
        return None
    stride = n // 1024 if n > 1024 else 1
    best_bits = 2**63 - 1
    plan = None
    for left_bw in range(8, 17):
        shift = 64 - left_bw
        keys = [0] * 4096
        cnts = [0] * 4096
        sampled = 0
        i = 0
        while i < n and sampled < 2048:
            left = (bits[i] >> shift) & 0xFFFF
            h = ((left * 40503) & 0xFFFF) & 4095
            while cnts[h] != 0 and keys[h] != left:
                h = (h + 1) & 4095
            keys[h] = left
            cnts[h] += 1
            sampled += 1
            i += stride
        top = [0] * 8
        top_key = [0] * 8
        for h in range(4096):
            c = cnts[h]
            if c == 0:
                continue
            for j in range(8):
                if c > top[j]:
                    top[j + 1 :] = top[j:7]
                    top_key[j + 1 :] = top_key[j:7]
                    top[j], top_key[j] = c, keys[h]
                    break
        d = sum(1 for c in top if c)
        if d == 0:
            continue
        covered = sum(top[:d])
        cbits = 0 if d <= 1 else (1 if d <= 2 else (2 if d <= 4 else 3))
        exc_frac = float(sampled - covered) / float(sampled)
        total = int((float(cbits) + float(64 - left_bw) + exc_frac * 32.0) * float(n))
        if total < best_bits:
            best_bits = total
            plan = (left_bw, top_key[:d], cbits)
    if plan is None:
        return None
    left_bw, dct, cbits = plan
    exc = sum(1 for b in bits if (b >> (64 - left_bw)) & 0xFFFF not in dct)
    est = (
        2
        + uvarint_len(n)
        + 2
        + 2 * len(dct)
        + (cbits * n + 7) // 8
        + ((64 - left_bw) * n + 7) // 8
        + uvarint_len(exc)
        + exc * 7
    )
    return left_bw, dct, exc, est


def go_payload(s: np.ndarray, left_bw: int, dct: list[int]) -> bytes:
    """Independent writer of the Go wire: tag, kind, n, leftBW, D, dict, codes, rights, exceptions."""
    bits = [int(x) for x in s.view(np.uint64)]
    n = len(bits)
    out = bytearray(b"\xf4\x0f") + encode_uvarint(n)
    if n == 0:
        return bytes(out)
    out += bytes((left_bw, len(dct))) + b"".join(d.to_bytes(2, "little") for d in dct)
    rbw = 64 - left_bw
    cbits = 0 if len(dct) <= 1 else (len(dct) - 1).bit_length()
    codes, rights, exc = 0, 0, []
    for i, b in enumerate(bits):
        left = b >> rbw
        if left in dct:
            codes |= dct.index(left) << (i * cbits)
        else:
            exc.append((i, left))
        rights |= (b & ((1 << rbw) - 1)) << (i * rbw)
    if cbits:
        out += codes.to_bytes((n * cbits + 7) // 8, "little")
    out += rights.to_bytes((n * rbw + 7) // 8, "little")
    out += encode_uvarint(len(exc))
    for i, left in exc:
        out += encode_uvarint(i) + left.to_bytes(2, "little")
    return bytes(out)


def enc(a: np.ndarray, force: str | None = None) -> bytes:
    out = bytearray()
    encode_float_array(out, a, compress=True, force=force)
    return bytes(out)


def dec(payload: bytes) -> np.ndarray:
    r = ByteReader(payload)
    got = decode_float_payload(r)
    assert r.pos == len(payload)
    r = ByteReader(payload)
    skip_payload(r)
    assert r.pos == len(payload)
    return got


def same_bits(a: np.ndarray, b: np.ndarray) -> None:
    assert a.dtype == b.dtype == np.float64
    np.testing.assert_array_equal(a.view(np.uint64), b.view(np.uint64))


# ------------------------------------------------------------------ planner and layout
@pytest.mark.parametrize("n", [16, 17, 100, 1024, 1025, 2047, 2048, 2049, 3000, 10_000])
@pytest.mark.parametrize("shape", SHAPES)
def test_planner_matches_go_port(shape: str, n: int) -> None:
    a = make(shape, n, n)
    want = go_plan(a)
    got = alprd.search(a.view(np.uint64))
    assert want is not None and got is not None
    assert (got.left_bw, list(got.dictionary), got.exc) == tuple(want[:3])
    assert alprd.size(n, got) == want[3]
    plan, est = alprd.alprd_plan(a)
    raw = 2 + uvarint_len(n) + 8 * n
    assert (plan is not None) == (want[3] < raw)
    if plan is not None:
        assert est == want[3]


@pytest.mark.parametrize("n", [1, 2, 7, 16, 300, 5000])
@pytest.mark.parametrize("shape", SHAPES)
def test_payload_bytes_match_independent_writer(shape: str, n: int) -> None:
    a = make(shape, n, 7 * n)
    left_bw, dct, exc, est = go_plan(a)  # type: ignore[misc]
    payload = enc(a, "alprd")
    assert payload == go_payload(a, left_bw, dct)
    assert len(payload) <= est  # Go's estimate is an upper bound of the real size
    same_bits(dec(payload), a)


def test_golden_hand_built() -> None:
    # 16 x (1.0, 2.0): two left patterns at every cut, so the cost 1 + (64 - leftBW) bits
    # falls with the cut and leftBW 16 wins. The 8:8 tie is broken by Go's hash-slot scan:
    # slot(0x4000) = 0x4000 * 40503 & 4095 = 0 < slot(0x3ff0) = 3216, so 0x4000 is code 0
    # and 1.0 is code 1 (codes 1,0,1,0,... = 0x55 0x55); all 48-bit right parts are zero.
    a = np.tile([1.0, 2.0], 8)
    payload = enc(a, "alprd")
    want = bytes.fromhex("f40f1010020040f03f5555" + "00" * 96 + "00")
    assert payload == want
    same_bits(dec(payload), a)


# ------------------------------------------------------------------ round trips
@SETTINGS
@given(n=st.sampled_from(LENGTHS), shape=st.sampled_from(SHAPES), seed=st.integers(0, 2**32 - 1))
def test_forced_round_trip_bit_exact(n: int, shape: str, seed: int) -> None:
    a = make(shape, n, seed)
    same_bits(dec(enc(a, "alprd")), a)
    picked = enc(a)
    same_bits(dec(picked), a)
    assert len(picked) <= 2 + uvarint_len(n) + 8 * n


@SETTINGS
@given(a=hnp.arrays(np.uint64, st.sampled_from(LENGTHS), elements=hnp.from_dtype(np.dtype(np.uint64))))
def test_arbitrary_bit_patterns(a: np.ndarray) -> None:
    f = a.view(np.float64)
    same_bits(dec(enc(f, "alprd")), f)
    picked = enc(f)
    same_bits(dec(picked), f)
    assert len(picked) <= 2 + uvarint_len(len(f)) + 8 * len(f)


# ------------------------------------------------------------------ picker
@SETTINGS
@given(n=st.sampled_from(LENGTHS), shape=st.sampled_from(SHAPES), seed=st.integers(0, 2**32 - 1))
def test_picker_takes_alprd_only_when_strictly_smaller(n: int, shape: str, seed: int, monkeypatch_module) -> None:
    a = make(shape, n, seed)
    with_rd = enc(a)
    with monkeypatch_module.context() as mp:
        mp.setattr(alprd.AlpRd, "estimate", lambda _self, _a, _f, to_beat=None: None)
        without = enc(a)
    if with_rd != without:
        assert with_rd[:2] == b"\xf4\x0f"
        assert len(with_rd) < len(without)
    else:
        assert len(with_rd) == len(without)


@pytest.fixture(scope="module")
def monkeypatch_module():
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


@pytest.mark.parametrize("shape", ["unit", "latlon", "normal", "lognormal"])
def test_picker_chooses_alprd_for_high_precision_doubles(shape: str) -> None:
    a = make(shape, 10_000, 0)
    payload = enc(a)
    assert payload[:2] == b"\xf4\x0f"
    others = [len(enc(a, f)) for f in ("raw", "gorilla", "chimp", "alp")]
    assert len(payload) < min(others)


def test_picker_keeps_alp_for_decimals_and_raw_for_noise() -> None:
    prices = np.round(np.random.default_rng(1).random(4096) * 100, 2)
    assert enc(prices)[:2] == b"\xf4\x0b"
    assert enc(make("bits", 4096, 1))[:2] == b"\xe4\x0b"
    assert enc(make("unit", 15, 1))[:2] != b"\xf4\x0f"  # Go: n < 16 never plans ALP-RD


def test_float32_never_alprd() -> None:
    a = make("unit", 4096, 3).astype(np.float32)
    assert enc(a)[:2] != b"\xf4\x0e"
    with pytest.raises(Exception, match="float64"):
        enc(a, "alprd")


# ------------------------------------------------------------------ public API
@pytest.mark.parametrize(
    "mode",
    ["compression", qdf.Options.COMPRESSION | qdf.Options.ZONE_MAP, qdf.Options.BALANCED | qdf.Options.GORILLA_FLOAT],
)
def test_through_public_api(mode: object) -> None:
    rng = np.random.default_rng(5)
    lat = rng.uniform(-90, 90, 5000)
    lat[[3, 70, 900]] = [np.nan, -0.0, np.inf]
    lat[71] = NAN_BITS.view(np.float64)[0]
    table = pa.table({"lat": lat, "lon": pa.array(rng.uniform(-180, 180, 5000), mask=rng.random(5000) < 0.1)})
    buf = qdf.encode(table, mode=mode)
    assert_tables_bit_equal(qdf.decode(buf, output="arrow"), table)
    assert qdf.decode(buf, columns=["lon"], output="arrow").column("lon").equals(table.column("lon"))
    ex = qdf.explain(buf).set_index("column")
    assert ex.loc["lon", "codec"] == "PackALP"
    assert ex.loc["lat", "codec"] in ("PackALP", "ZoneChunk")
    assert ex.loc["lat", "bytes"] < 8 * 5000 * 0.95


def test_zone_filter_over_alprd_zones() -> None:
    rng = np.random.default_rng(9)
    v = np.sort(rng.uniform(-90, 90, 4096))
    buf = qdf.encode({"v": v}, mode=qdf.Options.COMPRESSION | qdf.Options.ZONE_MAP | qdf.Options.COLUMN_INDEX)
    got = qdf.decode(buf, filter=qdf.col("v") > 45.0, output="arrow")
    np.testing.assert_array_equal(got.column("v").to_numpy(), v[v > 45.0])


# ------------------------------------------------------------------ hostile input
# Truncations and byte mutations of ALP-RD payloads: tests/test_floats.py (its PAYLOADS
# include forced ALP-RD bodies).


def _rd(n: int, left_bw: int, dct: list[int], codes: bytes, rights: bytes, exc: bytes) -> bytes:
    return (
        b"\xf4\x0f"
        + encode_uvarint(n)
        + bytes((left_bw, len(dct)))
        + b"".join(d.to_bytes(2, "little") for d in dct)
        + codes
        + rights
        + exc
    )


@pytest.mark.parametrize(
    "payload",
    [
        _rd(2, 7, [1], b"", bytes(15), b"\x00"),  # leftBW 7 < 8
        _rd(2, 17, [1], b"", bytes(12), b"\x00"),  # leftBW 17 > 16
        _rd(2, 12, [], b"", bytes(13), b"\x00"),  # empty dictionary
        _rd(2, 12, [1] * 9, b"\x00" * 1, bytes(13), b"\x00"),  # 9 > 8 entries
        _rd(2, 12, [1, 2, 3], b"\x0c", bytes(13), b"\x00"),  # code 3 >= D
        _rd(2, 12, [1], b"", bytes(13), b"\x01\x02\x00\x00"),  # exception position 2 >= n
        _rd(2, 12, [1], b"", bytes(13), b"\x03"),  # more exceptions than values
    ],
)
def test_corrupt_payloads(payload: bytes) -> None:
    with pytest.raises(CorruptDataError):
        decode_float_payload(ByteReader(payload))


def test_exceptions_carry_the_left_bits() -> None:
    # More distinct left patterns than 8 dictionary entries: the rarest lefts (and the
    # specials) become exceptions with code 0; the decoder rebuilds left << rbw | right.
    a = np.concatenate(
        [
            np.repeat(2.0 ** np.arange(12), np.arange(40, 16, -2)) * 1.1,
            [math.inf, -0.0, 5e-324, NAN_BITS.view(np.float64)[0]],
        ]
    )
    left_bw, dct, exc, _ = go_plan(a)  # type: ignore[misc]
    assert len(dct) == 8 and exc > 0
    payload = enc(a, "alprd")
    assert payload == go_payload(a, left_bw, dct)
    same_bits(dec(payload), a)


def _float_columns(draw_seed: int, n: int) -> list[np.ndarray]:
    rng = np.random.default_rng(draw_seed)
    return [
        rng.random(n) * 1000,  # no short decimal form: ALP-RD's case
        np.round(rng.random(n) * 100, 2),  # two decimals: ALP's
        rng.integers(0, 5, n).astype(np.float64) / 3,  # few distinct repeating fractions
        np.where(rng.random(n) < 0.3, np.nan, rng.normal(size=n)),
        np.full(n, math.pi),
    ]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), n=st.sampled_from([16, 17, 100, 1000, 5000]))
def test_no_alprd_payload_is_below_its_lower_bound(seed: int, n: int) -> None:
    """The bound the picker prunes ALP-RD by is never above a real plan's size (nor its
    written payload): pruning never drops a plan that could have been kept."""
    for a in _float_columns(seed, n):
        plan = alprd.search(a.view(np.uint64))
        if plan is None:
            continue
        assert alprd.size(n, plan) >= alprd.lower_bound(n)
        out = bytearray()
        encode_float_array(out, a, compress=True, force="alprd")
        assert len(out) >= alprd.lower_bound(n)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), n=st.sampled_from([16, 100, 1000, 5000]), cut=st.floats(0.05, 1.5))
def test_a_limit_changes_no_float_payload_the_caller_keeps(seed: int, n: int, cut: float) -> None:
    """With ``limit`` (balanced's light picker), a payload shorter than it is byte for byte
    the one written without it, and one that is not shorter without it is not with it."""
    for a in _float_columns(seed, n):
        free, bounded = bytearray(), bytearray()
        encode_float_array(free, a, compress=True, light=True)
        limit = max(1, int(len(free) * cut))
        encode_float_array(bounded, a, compress=True, light=True, limit=limit)
        assert (len(bounded) < limit) == (len(free) < limit)
        if len(free) < limit:
            assert bounded == free


def test_alprd_is_not_searched_when_another_form_is_already_smaller(monkeypatch) -> None:
    calls = []
    real = alprd.search
    monkeypatch.setattr(alprd, "search", lambda u: calls.append(len(u)) or real(u))
    rng = np.random.default_rng(2)
    decimals = np.round(rng.random(4000) * 100, 1)  # ALP: about 10 bits a value, far below 48
    out = bytearray()
    encode_float_array(out, decimals, compress=True, light=True)
    assert not calls
    np.testing.assert_array_equal(decode_float_payload(ByteReader(bytes(out), 0)), decimals)
    encode_float_array(bytearray(), rng.random(4000), compress=True, light=True)  # no decimal form: searched
    assert calls == [4000]
