"""Row-major values, dumps / loads: golden vectors, type mapping, hostile input, round trips."""

from __future__ import annotations

import math
import struct
from datetime import datetime, timedelta, timezone

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qdf_columnar.errors import (
    CorruptDataError,
    DecodeError,
    EncodeError,
    TruncatedError,
    UnknownCodecError,
    UnsupportedTypeError,
)
from qdf_columnar.format.reader import ByteReader
from qdf_columnar.format.varint import encode_uvarint
from qdf_columnar.options import Options
from qdf_columnar.wire.context import DecodeContext, EncodeContext
from qdf_columnar.wire.dense import DenseReader, DenseWriter
from qdf_columnar.wire.values import dumps, loads, read_string, read_value, write_string, write_value

O = Options  # noqa: E741 - short alias keeps the vector table readable


def _h(s: str) -> bytes:
    return bytes.fromhex(s.replace(" ", ""))


EU = "89 65 75 2D 77 65 73 74 2D 31"

# (object, mode, expected bytes) -- qdf-wire-v1.md §2.7 plus the brief's vectors.
GOLDEN = [
    (
        {"ts": 7, "level": "ERR", "code": 500},
        "speed",
        "51 44 46 01 00 d5 03 82 74 73 07 85 6c 65 76 65 6c 83 45 52 52 84 63 6f 64 65 c4 f4 01",
    ),
    ({"id": 42, "name": "alice"}, O.QPACK, "51 44 46 01 02 D5 02 82 69 64 2A 84 6E 61 6D 65 85 61 6C 69 63 65"),
    ({"id": 42, "name": "alice"}, "speed", "51 44 46 01 00 D5 02 82 69 64 2A 84 6E 61 6D 65 85 61 6C 69 63 65"),
    (
        {"id": 42, "name": "alice"},
        "balanced",
        "51 44 46 01 03 EC 00 02 82 69 64 E0 04 6E 61 6D 65 2A E0 05 61 6C 69 63 65",
    ),
    (
        {"a": 7, "b": {"id": 99, "name": "bob"}},
        O.QPACK | O.GORILLA_FLOAT,
        "51 44 46 01 02 D5 02 81 61 07 81 62 D5 02 82 69 64 63 84 6E 61 6D 65 83 62 6F 62",
    ),
    ({"c": 3, "a": 1, "b": 2}, O.QPACK, "51 44 46 01 02 D5 03 81 63 03 81 61 01 81 62 02"),
    (["eu-west-1"] * 4, O.QPACK, "51 44 46 01 02 A4" + (" " + EU) * 4),
    (["eu-west-1"] * 4, O.DENSE | O.RANS, "51 44 46 01 01 A4 E0 09 65 75 2D 77 65 73 74 2D 31 E8 E8 E8"),
    (["eu-west-1"] * 3, "balanced", "51 44 46 01 03 a3 e0 09 65 75 2d 77 65 73 74 2d 31 e8 e8"),
]

QPACK_GOLDEN = [
    (np.array([True, True, False, True, False, False, True, False, True]), O.QPACK, "51 44 46 01 02 E3 09 4B 01"),
    (np.arange(1000, 1010), O.QPACK, "51 44 46 01 02 e6 07 00 d0 0f 02 0a"),
]


def _has_qpack() -> bool:
    try:
        import qdf_columnar.codecs.qpack  # noqa: F401
    except ImportError:
        return False
    return True


def _all_vectors() -> list[bytes]:
    vecs = [_h(x) for _, _, x in GOLDEN]
    if _has_qpack():
        vecs += [_h(x) for _, _, x in QPACK_GOLDEN]
    # Extra shapes of wire: ints of every width, floats, timestamps, nested shapes, bins, state refs.
    vecs.append(
        dumps([0, 127, 128, 255, 256, 65536, 2**32, 2**64 - 1, -1, -8, -9, -129, -32769, -(2**31) - 1, -(2**63)])
    )
    vecs.append(
        dumps([1.5, np.float32(2.5), None, True, False, b"\x00\x01", datetime(2024, 1, 2, tzinfo=timezone.utc)])
    )
    vecs.append(dumps([{"name": "alpha", "v": [1, 2]}, {"name": "alpha", "v": {"k": b"bytes!"}}] * 2, "balanced"))
    return vecs


@pytest.mark.parametrize(("obj", "mode", "hexstr"), GOLDEN)
def test_golden_vectors(obj: object, mode: object, hexstr: str) -> None:
    expected = _h(hexstr)
    assert dumps(obj, mode) == expected
    assert loads(expected) == obj


@pytest.mark.parametrize(("arr", "mode", "hexstr"), QPACK_GOLDEN)
def test_qpack_golden_vectors(arr: np.ndarray, mode: object, hexstr: str) -> None:
    pytest.importorskip("qdf_columnar.codecs.qpack")
    expected = _h(hexstr)
    assert dumps(arr, mode) == expected
    got = loads(expected)
    assert isinstance(got, np.ndarray)
    np.testing.assert_array_equal(got, arr)


def test_qpack_float_array_roundtrip() -> None:
    pytest.importorskip("qdf_columnar.codecs.qpack")
    arr = np.array([1.5, -0.0, np.inf, np.nan, 3.25])
    got = loads(dumps({"x": arr}, O.QPACK))["x"]
    assert got.view(np.uint64).tolist() == arr.view(np.uint64).tolist()


def test_every_prefix_is_truncated() -> None:
    for vec in _all_vectors():
        assert loads(vec) is not None
        for n in range(len(vec)):
            with pytest.raises(TruncatedError):
                loads(vec[:n])


def test_single_byte_mutations_fail_cleanly() -> None:
    # Every position x every byte value: either a DecodeError or a successful decode.
    for vec in _all_vectors():
        for pos in range(len(vec)):
            for b in range(256):
                bad = vec[:pos] + bytes((b,)) + vec[pos + 1 :]
                try:
                    loads(bad)
                except DecodeError:
                    pass


# ------------------------------------------------------------------ type mapping
@pytest.mark.parametrize(
    ("value", "body"),
    [
        (0, "00"),
        (127, "7f"),
        (128, "c3 80"),
        (255, "c3 ff"),
        (256, "c4 0001"),
        (65535, "c4 ffff"),
        (65536, "c5 00000100"),
        (2**32 - 1, "c5 ffffffff"),
        (2**32, "c6 0000000001000000"),
        (2**64 - 1, "c6 ffffffffffffffff"),
        (-1, "d8"),
        (-8, "df"),
        (-9, "c7 f7"),
        (-128, "c7 80"),
        (-129, "c8 7fff"),
        (-32768, "c8 0080"),
        (-32769, "c9 ff7fffff"),
        (-(2**31), "c9 00000080"),
        (-(2**31) - 1, "ca ffffff7fffffffff"),
        (-(2**63), "ca 0000000000000080"),
        (None, "c0"),
        (False, "c1"),
        (True, "c2"),
        (1.0, "cc 000000000000f03f"),
        (np.float32(1.0), "cb 0000803f"),
        (np.float16(1.0), "cb 0000803f"),
        (np.float64(1.0), "cc 000000000000f03f"),
        (np.int8(-1), "d8"),
        (np.uint64(2**64 - 1), "c6 ffffffffffffffff"),
        (np.bool_(True), "c2"),
        ("", "80"),
        ("é", "82 c3a9"),
        (b"", "d0 00"),
        (bytearray(b"ab"), "d0 02 6162"),
        (memoryview(b"ab"), "d0 02 6162"),
        ([], "a0"),
        ((1, 2), "a2 01 02"),
        ({}, "d5 00"),
        (np.str_("ab"), "82 6162"),
        (np.bytes_(b"ab"), "d0 02 6162"),
    ],
)
def test_scalar_forms(value: object, body: str) -> None:
    buf = dumps(value)
    assert buf[5:] == _h(body)
    back = loads(buf)
    if isinstance(value, (bytearray, memoryview)):
        assert back == bytes(value)
    elif isinstance(value, tuple):
        assert back == list(value)  # tuples come back as lists
    elif isinstance(value, float) and math.isnan(value):
        pass
    else:
        assert back == value


def test_int_out_of_range() -> None:
    for v in (2**64, -(2**63) - 1):
        with pytest.raises(UnsupportedTypeError, match="does not fit"):
            dumps(v)


def test_float_bits_are_exact() -> None:
    for bits in (0x7FF8000000000001, 0xFFF0000000000000, 0x8000000000000000, 0x7FF0000000000000, 1):
        f = struct.unpack("<d", struct.pack("<Q", bits))[0]
        back = loads(dumps([f]))[0]
        assert struct.pack("<d", back) == struct.pack("<Q", bits)
    f32 = loads(dumps(np.float32(0.1)))
    assert isinstance(f32, np.float32) and f32 == np.float32(0.1)
    assert dumps(f32) == dumps(np.float32(0.1))


def test_uint64_above_int64_max_stays_int() -> None:
    v = loads(dumps(2**63 + 5))
    assert type(v) is int and v == 2**63 + 5


def test_decodes_float32_and_uint_tags_written_by_go() -> None:
    assert loads(_h("51444601 00 c3 05")) == 5  # non-narrowest forms are still valid
    assert loads(_h("51444601 00 c6 0100000000000000")) == 1
    assert loads(_h("51444601 00 ca ffffffffffffffff")) == -1


# ------------------------------------------------------------------ timestamps
def test_timestamps() -> None:
    aware = datetime(2024, 5, 6, 7, 8, 9, 123456, tzinfo=timezone(timedelta(hours=2)))
    buf = dumps(aware)
    assert buf[5] == 0xF3
    back = loads(buf)
    assert back == aware and back.tzinfo == timezone.utc
    naive = datetime(2024, 5, 6, 7, 8, 9)
    assert loads(dumps(naive)) == naive.replace(tzinfo=timezone.utc)  # naive = UTC
    # pre-epoch: negative seconds zigzag
    old = datetime(1900, 1, 1, tzinfo=timezone.utc)
    assert loads(dumps(old)) == old
    # 1.7e9 s exactly: F3 zigzag(1700000000) 00
    assert (
        dumps(datetime.fromtimestamp(1_700_000_000, timezone.utc))[5:]
        == b"\xf3" + encode_uvarint(3_400_000_000) + b"\x00"
    )
    assert dumps(datetime(1969, 12, 31, 23, 59, 59, tzinfo=timezone.utc))[5:] == _h("f3 01 00")  # zigzag(-1)


def test_nanosecond_timestamps_come_back_as_pandas() -> None:
    ts = pd.Timestamp("2024-01-02 03:04:05.123456789", tz="UTC")
    back = loads(dumps(ts))
    assert isinstance(back, pd.Timestamp) and back == ts
    assert loads(dumps(pd.Timestamp("2024-01-02 03:04:05.123456789"))) == ts  # naive = UTC
    d64 = np.datetime64("2024-01-02T03:04:05.123456789", "ns")
    assert loads(dumps(d64)) == ts
    assert loads(dumps(np.datetime64("2024-01-02", "D"))) == datetime(2024, 1, 2, tzinfo=timezone.utc)
    assert loads(dumps(np.datetime64("2024-03", "M"))) == datetime(2024, 3, 1, tzinfo=timezone.utc)
    with pytest.raises(UnsupportedTypeError):
        dumps(np.datetime64("NaT"))


def test_bad_timestamps() -> None:
    with pytest.raises(CorruptDataError):
        loads(_h("51444601 00 f3 00 80 94 eb dc 03"))  # nsec = 1e9
    with pytest.raises(DecodeError):
        loads(_h("51444601 00 f3 feffffffffffffffff01 01"))  # far beyond any Python time type


# ------------------------------------------------------------------ numpy / containers
def test_numpy_arrays_in_fast_mode() -> None:
    assert dumps(np.array([True, False]))[5:] == _h("a2 c2 c1")
    assert dumps(np.array([1, -1, 300], dtype=np.int32))[5:] == _h("a3 01 d8 c4 2c01")
    assert dumps(np.array([1.0], dtype=np.float64))[5:] == _h("a1 cc 000000000000f03f")
    assert dumps(np.array([1.0], dtype=np.float32))[5:] == _h("a1 cb 0000803f")
    assert loads(dumps(np.arange(40))) == list(range(40))
    assert loads(dumps(np.array([[1, 2], [3, 4]]))) == [[1, 2], [3, 4]]
    assert loads(dumps(np.array(["a", "bc"]))) == ["a", "bc"]
    assert loads(dumps(np.int64(5))) == 5


def test_dict_key_must_be_str_and_path_is_reported() -> None:
    with pytest.raises(UnsupportedTypeError, match=r"int.*at \[1\]\['user'\]"):
        dumps([0, {"user": {1: 2}}])
    with pytest.raises(UnsupportedTypeError, match=r"builtins\.object.* at \[3\]\['user'\]"):
        dumps([0, 1, 2, {"user": object()}])
    with pytest.raises(UnsupportedTypeError, match=r"complex"):
        dumps(1j)


def test_non_string_keys_from_go_decode() -> None:
    # map[int]string from Go: D5 01 01 81 61
    assert loads(_h("51444601 00 d5 01 01 8161")) == {1: "a"}
    with pytest.raises(CorruptDataError):
        loads(_h("51444601 00 d5 01 a0 01"))  # list key is not hashable


def test_subclasses_are_encoded_as_their_base() -> None:
    from collections import OrderedDict
    from enum import IntEnum

    class Color(IntEnum):
        RED = 3

    assert loads(dumps(OrderedDict(a=Color.RED))) == {"a": 3}


def test_large_containers_headers() -> None:
    big = list(range(70000))
    buf = dumps(big)
    assert buf[5] == 0xD4
    assert loads(buf) == big
    assert dumps(list(range(40)))[5:8] == _h("d3 2800")
    d = {f"k{i}": i for i in range(300)}
    assert dumps(d)[5:8] == _h("d6 2c01")
    assert loads(dumps(d)) == d


def test_hostile_counts_do_not_allocate() -> None:
    for body in ("d4 ffffffff", "d7 ffffffff", "ec 00 8080808080808001", "d3 ffff 01"):
        with pytest.raises(TruncatedError):
            loads(_h("51444601 01" + body))


def test_trailing_garbage_and_empty_body() -> None:
    with pytest.raises(CorruptDataError, match="trailing"):
        loads(dumps(1) + b"\x00")
    with pytest.raises(TruncatedError):
        loads(_h("51444601 00"))


def test_unknown_and_unsupported_tags() -> None:
    for tag in ("f6", "f8", "ff", "f1", "f5"):
        with pytest.raises(UnknownCodecError):
            loads(_h("51444601 00" + tag + "00"))
    # A string delta is only meaningful as a map-shape field value.
    with pytest.raises(CorruptDataError, match="outside a map-shape field"):
        loads(_h("51444601 01 f2 00 00"))


def test_invalid_utf8_is_corrupt() -> None:
    with pytest.raises(CorruptDataError, match="UTF-8"):
        loads(_h("51444601 00 81 ff"))


def test_unknown_shape_id() -> None:
    with pytest.raises(CorruptDataError, match="shape"):
        loads(_h("51444601 01 ec 01 00"))
    with pytest.raises(CorruptDataError):
        loads(_h("51444601 01 ec 00 01 c0 00"))  # shape key is not a string


def test_nesting_limits() -> None:
    depth = 10_000
    ok = _h("51444601 00") + b"\xa1" * (depth - 1) + b"\xa0"
    v = loads(ok)
    for _ in range(depth - 1):
        v = v[0]
    assert v == []
    with pytest.raises(CorruptDataError, match="nesting too deep"):
        loads(_h("51444601 00") + b"\xa1" * depth + b"\xa0")
    cyc: list = []
    cyc.append(cyc)
    with pytest.raises(EncodeError, match="nesting"):
        dumps(cyc)


def test_string_helpers() -> None:
    w = DenseWriter(Options.BALANCED)
    out = bytearray()
    write_string(out, "hello", w)
    write_string(out, "hello", w)
    out += b"\x01"
    r = ByteReader(bytes(out))
    d = DenseReader()
    assert read_string(r, d) == "hello"
    assert read_string(r, d) == "hello"
    with pytest.raises(CorruptDataError):
        read_string(r, d)


def test_context_api() -> None:
    ctx = EncodeContext(Options.BALANCED)
    out = bytearray()
    write_value(out, {"abcd": "abcd"}, ctx)
    assert ctx.col_index_used is False
    dctx = DecodeContext()
    assert read_value(ByteReader(bytes(out)), dctx) == {"abcd": "abcd"}


def test_bytes_equal_to_an_interned_str_keep_their_type() -> None:
    # Go shares one table for both, so its b"abcd" would reference "abcd"; we intern each
    # kind on its own (any decoder reads that) so no value changes type.
    for mode in ("balanced", "compression"):
        assert loads(dumps(["abcd", b"abcd", "abcd", b"abcd"], mode)) == ["abcd", b"abcd", "abcd", b"abcd"]
        assert loads(dumps({"a": "abcd", "b": b"abcd"}, mode)) == {"a": "abcd", "b": b"abcd"}
    assert dumps(["abcd", b"abcd"], "balanced") == _h("51444601 03 a2 e0 04 61626364 e2 04 61626364")


# ------------------------------------------------------------------ columnar hand-off
def test_columnar_records_round_trip() -> None:
    pytest.importorskip("qdf_columnar.wire.colstruct")
    rows = [{"id": i, "ok": i % 2 == 0} for i in range(1, 17)]
    buf = dumps(rows, "balanced")
    assert buf[5] == 0xEF
    assert buf == _h("51 44 46 01 03 EF 10 00 02 82 69 64 00 82 6F 6B 03 E6 07 00 02 02 10 E3 10 AA AA")
    assert loads(buf) == rows


def test_short_record_lists_stay_row_major() -> None:
    rows = [{"id": i} for i in range(15)]
    buf = dumps(rows, "balanced")
    assert buf[5] == 0xAF and loads(buf) == rows


# ------------------------------------------------------------------ property
_keys = st.text(max_size=8)
_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=40)
    # \xff prefix: never valid UTF-8, so a bytes value can't share an intern id with a str
    | st.binary(max_size=40).map(lambda b: b"\xff" + b)
)
_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=8) | st.dictionaries(_keys, inner, max_size=6),
    max_leaves=40,
)


def _canon(v: object) -> object:
    """Comparable form: floats by bits, tuples as lists."""
    if isinstance(v, float):
        return ("f", struct.pack("<d", v))
    if isinstance(v, (list, tuple)):
        return [_canon(x) for x in v]
    if isinstance(v, dict):
        return [(k, _canon(x)) for k, x in v.items()]
    return v


@settings(max_examples=300, deadline=None)
@given(value=_values, mode=st.sampled_from(["speed", O.QPACK, "balanced"]))
def test_roundtrip_property(value: object, mode: object) -> None:
    assert _canon(loads(dumps(value, mode))) == _canon(value)


@settings(max_examples=100, deadline=None)
@given(value=st.lists(st.sampled_from(["alpha", "beta", "gamma", "ab", "delta"]), max_size=300))
def test_roundtrip_repetitive_strings_balanced(value: list[str]) -> None:
    buf = dumps(value, "balanced")
    assert loads(buf) == value
    assert len(buf) <= len(dumps(value, "speed")) + 5  # one extra byte per first occurrence at most
