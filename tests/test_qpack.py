"""Contract of the v1 QPack slice codecs (qdf_columnar.codecs.qpack).

Golden vectors byte for byte; round trips for every integer dtype and every forced
codec; the picker never emits more than raw; hostile input (prefixes, byte flips,
huge declared counts, bad kinds/indices/runs) raises a DecodeError subclass with an
offset and never another exception or a large allocation.
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from qdf_columnar.codecs.qpack import (
    MAX_ROWS,
    decode_bool_payload,
    decode_float_payload,
    decode_int_payload,
    encode_bool_array,
    encode_float_raw,
    encode_int_array,
    payload_name,
    skip_payload,
)
from qdf_columnar.errors import (
    CorruptDataError,
    DecodeError,
    InvalidOptionError,
    TruncatedError,
    UnknownCodecError,
)
from qdf_columnar.format.reader import ByteReader
from qdf_columnar.format.tags import Kind, QPackTag
from qdf_columnar.format.varint import encode_uvarint

settings.register_profile("qpack", max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
QPACK = settings.get_profile("qpack")

INT_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
LENGTHS = [0, 1, 2, 3, 4, 7, 8, 9, 31, 32, 33, 63, 64, 65, 255, 256, 257, 1000]
FORCED = ["raw", "for", "delta", "rle", "dict", "pfor"]


def enc(values: np.ndarray, **kw: object) -> bytes:
    out = bytearray()
    encode_int_array(out, values, **kw)  # type: ignore[arg-type]
    return bytes(out)


def dec(payload: bytes, **kw: object) -> np.ndarray:
    r = ByteReader(payload)
    got = decode_int_payload(r, **kw)  # type: ignore[arg-type]
    assert r.pos == len(payload), "decoder must stop exactly at the payload end"
    r = ByteReader(payload)
    skip_payload(r)
    assert r.pos == len(payload), "skip must stop exactly at the payload end"
    return got


def check_round_trip(values: np.ndarray, payload: bytes) -> None:
    got = dec(payload)
    signed = values.dtype.kind == "i"
    assert got.dtype == (np.int64 if signed else np.uint64)
    np.testing.assert_array_equal(got, values.astype(got.dtype))


def make_values(kind: str, dtype: type, n: int, seed: int) -> np.ndarray:
    """Column shapes that exercise every codec: noise, narrow ranges, runs, enums, outliers, ramps."""
    rng = np.random.default_rng(seed)
    info = np.iinfo(dtype)
    lo, hi = int(info.min), int(info.max)
    if kind == "full":
        v = rng.integers(lo, hi, n, dtype=dtype, endpoint=True)
    elif kind == "narrow":
        base = int(rng.integers(lo, hi - 100, endpoint=True, dtype=dtype))
        v = (rng.integers(0, 100, n).astype(dtype) + np.array(base, dtype=dtype)).astype(dtype)
    elif kind == "runs":
        v = np.repeat(rng.integers(lo, hi, max(n // 9 + 1, 1), dtype=dtype, endpoint=True), 9)[:n]
    elif kind == "enum":
        v = rng.choice(rng.integers(lo, hi, 5, dtype=dtype, endpoint=True), n)
    elif kind == "outliers":
        v = rng.integers(0, 8, n).astype(dtype)
        v[rng.random(n) < 0.05] = hi
    elif kind == "ramp":
        v = (np.arange(n, dtype=np.int64) * 3 + 7).astype(dtype)
    else:  # "extremes": int64/uint64 min/max mixed in
        v = rng.choice(np.array([lo, hi, 0, lo + 1, hi - 1], dtype=dtype), n)
    return np.ascontiguousarray(v, dtype=dtype)


KINDS = ["full", "narrow", "runs", "enum", "outliers", "ramp", "extremes"]


# --------------------------------------------------------------------- golden
@pytest.mark.parametrize(
    ("values", "hexstr"),
    [
        (np.arange(1000, 1010, dtype=np.int64), "e60700d00f020a"),
        (np.arange(1, 17, dtype=np.int64), "e60700020210"),
        (np.full(10, 5, dtype=np.int64), "e507000a0a"),  # FOR wins the 5-byte tie with RLE and Dict
        (np.array([], dtype=np.int64), "e40700"),
    ],
)
def test_golden_int(values: np.ndarray, hexstr: str) -> None:
    assert enc(values).hex() == hexstr
    check_round_trip(values, bytes.fromhex(hexstr))


def test_golden_bool() -> None:
    out = bytearray()
    encode_bool_array(out, np.array([True, True, False, True, False, False, True, False, True]))
    assert out.hex() == "e3094b01"
    out = bytearray()
    encode_bool_array(out, np.array([i % 2 == 0 for i in range(1, 17)]))
    assert out.hex() == "e310aaaa"
    r = ByteReader(bytes(out))
    np.testing.assert_array_equal(decode_bool_payload(r, n=16), [i % 2 == 0 for i in range(1, 17)])


# --------------------------------------------------------------------- round trips
@QPACK
@given(
    dtype=st.sampled_from(INT_DTYPES),
    n=st.sampled_from(LENGTHS),
    kind=st.sampled_from(KINDS),
    seed=st.integers(0, 2**32 - 1),
)
def test_round_trip_and_never_larger(dtype: type, n: int, kind: str, seed: int) -> None:
    values = make_values(kind, dtype, n, seed)
    payload = enc(values)
    check_round_trip(values, payload)
    raw_floor = 2 + len(encode_uvarint(n)) + (4 if np.dtype(dtype).itemsize <= 4 else 8) * n
    assert len(payload) <= max(raw_floor, 3)  # empty slices are E4 kk 00 (3 bytes) like Go
    if np.dtype(dtype).itemsize <= 4 and payload[0] == QPackTag.RAW and n:
        assert payload[1] in (Kind.I32, Kind.U32)  # native 4-byte raw floor


@QPACK
@given(
    dtype=st.sampled_from([np.int64, np.uint64, np.int32]),
    n=st.sampled_from(LENGTHS[1:]),
    kind=st.sampled_from(KINDS),
    seed=st.integers(0, 2**32 - 1),
    codec=st.sampled_from(FORCED),
)
def test_forced_codecs_round_trip(dtype: type, n: int, kind: str, seed: int, codec: str) -> None:
    values = make_values(kind, dtype, n, seed)
    try:
        payload = enc(values, force=codec)
    except InvalidOptionError:
        return  # the codec's gate does not allow this column
    assert payload_name(payload[0]) == {"delta": "delta_for"}.get(codec, codec)
    check_round_trip(values, payload)


def test_every_forced_codec_reachable() -> None:
    v = np.repeat(np.where(np.arange(50) % 37 == 0, 10**9, np.arange(50) % 8), 4).astype(np.int64)
    for codec in FORCED:
        check_round_trip(v, enc(v, force=codec))
    with pytest.raises(InvalidOptionError):
        enc(np.arange(3), force="delta")
    with pytest.raises(InvalidOptionError):
        enc(np.arange(3), force="zstd")


def test_picker_choices() -> None:
    rng = np.random.default_rng(7)
    assert payload_name(enc(np.repeat([5, -3, 7], 40))[0]) == "rle"
    assert payload_name(enc(rng.choice([10**12, 5, -7, 99], 100))[0]) == "dict"
    out = np.where(rng.random(4000) < 0.01, 10**12, rng.integers(0, 256, 4000))
    assert payload_name(enc(out[:200])[0]) == "pfor"
    assert payload_name(enc(rng.integers(-(2**63), 2**63 - 1, 50, endpoint=True))[0]) == "raw"
    p = enc(rng.integers(-(2**31), 2**31 - 1, 50, dtype=np.int32))
    assert p[:2] == bytes((QPackTag.RAW, Kind.I32))


def test_block_round_trip() -> None:
    rng = np.random.default_rng(3)
    v = np.concatenate([np.arange(1024), rng.integers(0, 2**40, 1024), np.full(1000, 7)]).astype(np.int64)
    payload = enc(v)
    assert payload_name(payload[0]) == "block"
    whole = bytearray()
    check_round_trip(v, payload)
    for codec in FORCED:
        try:
            encode_int_array(whole, v, force=codec)
        except InvalidOptionError:
            continue
        assert len(payload) < len(whole)
        whole.clear()
    u = v.astype(np.uint64)
    check_round_trip(u, enc(u, force="block"))
    assert dec(payload, n=len(v)).shape == (len(v),)
    # block=False (the caller's switch under the entropy pass, as Go's tryWriteBlock* under
    # rANS): the whole-column form, i.e. the picker's choice without F0.
    for arr in (v, u):
        out = bytearray()
        encode_int_array(out, arr, block=False)
        assert payload_name(out[0]) != "block"
        check_round_trip(arr, bytes(out))


# --------------------------------------------------------------------- floats, views
def test_float_raw_and_views() -> None:
    for dt in (np.float64, np.float32):
        v = np.array([0.5, -0.0, np.inf, np.nan, 1e-300], dtype=dt)
        out = bytearray()
        encode_float_raw(out, v)
        assert out[:2] == bytes((QPackTag.RAW, Kind.F64 if dt == np.float64 else Kind.F32))
        got = decode_float_payload(ByteReader(bytes(out)), n=5)
        assert got.dtype == dt and got.tobytes() == v.tobytes()
        view = decode_float_payload(ByteReader(bytearray(out)), copy=False)
        assert not view.flags.writeable
        r = ByteReader(bytes(out))
        skip_payload(r)
        assert r.pos == len(out)
    # An empty Gorilla payload is valid (the float codecs of the compression tier read it).
    assert len(decode_float_payload(ByteReader(bytes([QPackTag.GORILLA, Kind.F64, 0])))) == 0
    with pytest.raises(UnknownCodecError):
        decode_float_payload(ByteReader(bytes([QPackTag.ALP, Kind.ALP_RD_F32, 1])))
    with pytest.raises(CorruptDataError):
        decode_float_payload(ByteReader(bytes([QPackTag.RAW, Kind.I64, 0])))
    v = np.arange(10, dtype=np.int64) * 10**15
    view = decode_int_payload(ByteReader(bytearray(enc(v, force="raw"))), copy=False)
    assert not view.flags.writeable and np.array_equal(view, v)


# --------------------------------------------------------------------- hostile input
def corpus() -> list[bytes]:
    rng = np.random.default_rng(11)
    v = np.repeat(np.where(np.arange(75) % 41 == 0, 10**9, np.arange(75) % 8), 4).astype(np.int64)
    out = [enc(v, force=c) for c in FORCED]
    out.append(enc(np.concatenate([np.arange(600), rng.integers(0, 2**40, 300)]).astype(np.int64), force="block"))
    out.append(enc(rng.integers(-(2**31), 2**31 - 1, 20, dtype=np.int32)))
    out.append(enc(np.repeat(rng.integers(0, 2**60, 30, dtype=np.uint64), 30)))
    b = bytearray()
    encode_bool_array(b, rng.random(77) < 0.5)
    out.append(bytes(b))
    b = bytearray()
    encode_float_raw(b, rng.random(9))
    out.append(bytes(b))
    return out


def decode_any(payload: bytes | bytearray) -> None:
    tag = payload[0] if payload else 0
    if tag == QPackTag.BOOL:
        decode_bool_payload(ByteReader(payload))
    elif tag == QPackTag.RAW and len(payload) > 1 and payload[1] in (Kind.F32, Kind.F64):
        decode_float_payload(ByteReader(payload))
    else:
        decode_int_payload(ByteReader(payload))


@pytest.mark.parametrize("idx", range(11))
def test_every_prefix_truncated(idx: int) -> None:
    payload = corpus()[idx]
    decode_any(payload)
    for cut in range(len(payload)):
        with pytest.raises(TruncatedError):
            decode_any(payload[:cut])
        with pytest.raises(TruncatedError):
            skip_payload(ByteReader(payload[:cut]))


@QPACK
@given(idx=st.integers(0, 10), where=st.integers(0, 10**6), byte=st.integers(0, 255))
def test_single_byte_mutations(idx: int, where: int, byte: int) -> None:
    payload = bytearray(corpus()[idx])
    payload[where % len(payload)] = byte
    for fn in (decode_any, lambda p: skip_payload(ByteReader(p))):
        try:
            fn(payload)
        except DecodeError:
            pass


HUGE = encode_uvarint(2**40)


@pytest.mark.parametrize(
    "payload",
    [
        bytes([QPackTag.FOR, Kind.I64, 0, 0]) + HUGE,
        bytes([QPackTag.FOR, Kind.I64, 5, 0]) + HUGE,
        bytes([QPackTag.DELTA_FOR, Kind.U64, 0, 0, 2]) + HUGE,
        bytes([QPackTag.RLE, Kind.I64]) + HUGE + b"\x02\x7f",
        bytes([QPackTag.DICT, Kind.I64, 1, 4]) + HUGE,
        bytes([QPackTag.PFOR, Kind.U64]) + HUGE + b"\x00\x00\x00",
        bytes([QPackTag.RAW, Kind.I64]) + HUGE,
        bytes([QPackTag.BLOCK, 0, 8]) + HUGE + bytes(16),
        bytes([QPackTag.BOOL]) + HUGE,
    ],
)
def test_huge_counts_fail_without_allocating(payload: bytes) -> None:
    tracemalloc.start()
    try:
        with pytest.raises(DecodeError):
            decode_any(payload)
        with pytest.raises(DecodeError):
            skip_payload(ByteReader(payload))
        assert tracemalloc.get_traced_memory()[1] < 1 << 20
    finally:
        tracemalloc.stop()


def test_constant_cap_and_expected_n() -> None:
    big = bytes([QPackTag.FOR, Kind.I64, 0, 2]) + encode_uvarint(MAX_ROWS + 1)
    with pytest.raises(CorruptDataError):
        decode_int_payload(ByteReader(big))
    assert decode_int_payload(ByteReader(big), n=MAX_ROWS + 1)[-1] == 1
    with pytest.raises(CorruptDataError):
        decode_int_payload(ByteReader(enc(np.arange(10))), n=11)


@pytest.mark.parametrize(
    ("payload", "offset"),
    [
        (bytes([0x42, 1, 2]), 0),  # unknown tag
        (bytes([QPackTag.FOR, Kind.I32, 0, 0, 1]), 1),  # narrow kind under FOR
        (bytes([QPackTag.FOR, Kind.I64, 57, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0]), 2),  # bits > 56
        (bytes([QPackTag.RLE, Kind.I64, 3, 2, 4]), 4),  # run overflows n
        (bytes([QPackTag.RLE, Kind.I64, 3, 2, 0]), 4),  # zero-length run
        (bytes([QPackTag.DICT, Kind.I64, 3, 0, 2, 4, 1, 0x03]), 6),  # index 3 >= d
        (bytes([QPackTag.DICT, Kind.I64, 65]), 2),  # more than 64 entries
        (bytes([QPackTag.PFOR, Kind.I64, 2, 0, 0, 1, 2, 0]), 6),  # exception index >= n
        (bytes([QPackTag.BLOCK, 2, 8, 1, 0, 0, 0, 0]), 1),  # bad block kind
    ],
)
def test_corrupt_with_offset(payload: bytes, offset: int) -> None:
    with pytest.raises(CorruptDataError) as info:
        decode_int_payload(ByteReader(payload))
    assert info.value.offset == offset
    if payload[0] == 0x42:
        assert isinstance(info.value, UnknownCodecError)


def test_payload_names() -> None:
    assert payload_name(QPackTag.FOR) == "for"
    assert payload_name(QPackTag.DELTA_FOR) == "delta_for"
    assert payload_name(0x42) == "unknown_0x42"


def test_kernels_warm_up_and_do_not_compile_at_import() -> None:
    import subprocess
    import sys

    code = (
        "import qdf_columnar.codecs.qpack\n"
        "from qdf_kernels import bitpack, intcodecs, intdecode\n"
        "from qdf_kernels._jit import REGISTRY\n"
        "assert all(not d.signatures for d in REGISTRY), [d for d in REGISTRY if d.signatures]\n"
        "bitpack._warmup(); intcodecs._warmup(); intdecode._warmup()\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def _rle_reference(src: bytes, pos: int, n: int) -> tuple[int, int, list[int]]:
    """(status or end position, error position, raw run values expanded): EB runs in Python."""

    def uvarint(p: int) -> tuple[int, int]:  # (value, next position); next < 0 is a status
        value, shift = 0, 0
        for i in range(10):
            if p + i >= len(src):
                return 0, -1
            b = src[p + i]
            if i == 9 and b > 1:
                return 0, -2
            value |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                return value, p + i + 1
        return 0, -2

    out: list[int] = []
    p = pos
    while len(out) < n:
        value, q = uvarint(p)
        if q < 0:
            return q, p, out
        run, r = uvarint(q)
        if r < 0:
            return r, q, out
        if run == 0 or run > n - len(out):
            return -2, q, out
        out += [value] * run
        p = r
    return p, -1, out


@settings(QPACK)
@given(st.lists(st.tuples(st.integers(0, 2**64 - 1), st.integers(1, 300)), max_size=40), st.data())
def test_rle_kernel_matches_a_reference_on_valid_and_damaged_runs(runs: list[tuple[int, int]], data) -> None:
    from qdf_kernels import intdecode

    wire = b"".join(encode_uvarint(v) + encode_uvarint(r) for v, r in runs)
    n = sum(r for _, r in runs)
    cut = data.draw(st.integers(0, len(wire)))  # truncated anywhere, or whole
    flip = data.draw(st.none() | st.tuples(st.integers(0, max(len(wire) - 1, 0)), st.integers(0, 255)))
    src = bytearray(wire[:cut])
    if flip is not None and src:
        src[flip[0] % len(src)] = flip[1]
    n_asked = data.draw(st.sampled_from([n, max(n - 1, 0), n + 1]))
    src_arr = np.frombuffer(bytes(src), dtype=np.uint8)
    want_end, want_pos, want_values = _rle_reference(bytes(src), 0, n_asked)
    for write in (False, True):
        out = np.zeros(n_asked if write else 0, dtype=np.uint64)
        errpos = np.full(1, -1, dtype=np.int64)
        end = intdecode.rle_decode(src_arr, 0, len(src_arr), n_asked, False, out, errpos, -1)
        assert end == want_end
        if want_end < 0:
            assert errpos[0] == want_pos
        elif write:
            assert out.tolist() == want_values
