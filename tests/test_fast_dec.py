"""The pickle-transcoding fast path (qdf_columnar.wire.fast_dec) against the Python reader.

Every decoded value must equal ``values_read.read_value``'s (same types, float bits)
and leave the same Dense state (strings, shapes, field bases) behind; a declined value
must leave the state untouched; corruption found after the state changed raises
:class:`CorruptDataError`. :func:`fast_dec.loads_body` (one-shot, no context) must agree
with :func:`fast_dec.try_read` on a fresh context.
"""

from __future__ import annotations

import io
import math
import pickle
import pickletools
import struct
import threading
from datetime import datetime, timezone

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import qdf_columnar as qdf
from qdf_columnar.errors import CorruptDataError, DecodeError
from qdf_columnar.format.header import open_body
from qdf_columnar.format.reader import ByteReader
from qdf_columnar.format.varint import encode_uvarint
from qdf_columnar.options import Options, parse_mode
from qdf_columnar.wire import fast_dec
from qdf_columnar.wire.context import DecodeContext
from qdf_columnar.wire.session import EncodeSession
from qdf_columnar.wire.values_read import read_value

MODES = ["speed", "balanced", "compression", Options.DENSE]


# ------------------------------------------------------------------ harness


def _same(a: object, b: object, path: str = "$") -> None:
    assert type(a) is type(b), f"{path}: {type(a).__name__} != {type(b).__name__}"
    if isinstance(a, dict):
        assert len(a) == len(b), path
        for (ka, va), (kb, vb) in zip(a.items(), b.items()):
            _same(ka, kb, path + ".key")
            _same(va, vb, f"{path}[{ka!r}]")
    elif isinstance(a, list):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{path}[{i}]")
    elif isinstance(a, float):
        assert struct.pack("<d", a) == struct.pack("<d", b), path
    elif isinstance(a, np.float32):
        assert a.tobytes() == b.tobytes(), path
    else:
        assert a == b, path


def _state(ctx: DecodeContext) -> tuple:
    return ctx.dense.state(), ctx.dense.shape_state()


def _body(obj: object, mode: object) -> bytes:
    _, buf = open_body(qdf.dumps(obj, mode))
    return bytes(buf[5:])


def _python(buf: bytes, ctx: DecodeContext, start: int = 5, end: int | None = None) -> object:
    end = len(buf) if end is None else end
    r = ByteReader(buf, start, end)
    ctx.depth = 0
    v = read_value(r, ctx)
    if r.pos != end:
        raise CorruptDataError("trailing bytes", offset=r.pos)
    return v


def _fast_or_python(buf: bytes, ctx: DecodeContext, start: int = 5, end: int | None = None) -> tuple[bool, object]:
    end = len(buf) if end is None else end
    ok, v = fast_dec.try_read(buf, start, end, ctx)
    if ok:
        return True, v
    return False, _python(buf, ctx, start, end)


def _check(buf: bytes, *, must: bool = True) -> bool:
    """Decode ``buf`` (header + body) both ways on fresh contexts and compare."""
    want_ctx = DecodeContext()
    want = _python(buf, want_ctx)
    ctx = DecodeContext()
    ok, got = fast_dec.try_read(buf, 5, len(buf), ctx)
    if must:
        assert ok
    if ok:
        _same(want, got)
        assert _state(ctx) == _state(want_ctx)
    else:
        assert _state(ctx) == _state(DecodeContext())
    ok1, got1 = fast_dec.loads_body(buf, 5, len(buf))
    assert ok1 == ok
    if ok1:
        _same(want, got1)
    return ok


# ------------------------------------------------------------------ vectors


def test_golden_vectors() -> None:
    import test_values

    for _obj, _mode, hexstr in test_values.GOLDEN:
        buf = bytes.fromhex(hexstr.replace(" ", ""))
        _check(buf, must=not (int(buf[4]) & 0x04))


SCALARS = [
    0, 127, 128, 255, 256, 65535, 65536, 2**32 - 1, 2**32, 2**63 - 1, 2**63, 2**64 - 1,
    -1, -8, -9, -128, -129, -32768, -32769, -(2**31), -(2**31) - 1, -(2**63),
    None, False, True, 1.0, -0.0, math.inf, -math.inf, math.nan, 1e-310,
    np.float32(1.5), np.float32(-0.0), np.float32("nan"),
    "", "é", "x" * 31, "y" * 32, "z" * 255, "w" * 256, "v" * 70000,
    b"", b"ab", b"\x00" * 300, b"q" * 70000,
    [], [1, [2, [3, []]]], list(range(20)), list(range(70000)),
    {}, {"a": {"b": {"c": None}}}, {str(i): i for i in range(300)},
    datetime(2024, 1, 2, 3, 4, 5, 123456, tzinfo=timezone.utc),
    datetime(1969, 12, 31, 23, 59, 59, tzinfo=timezone.utc),
]


@pytest.mark.parametrize("mode", ["speed", Options.DENSE])
def test_scalars_and_containers(mode: object) -> None:
    for v in SCALARS:
        _check(b"QDF\x01\x00" + _body(v, mode))
    _check(b"QDF\x01\x00" + _body(SCALARS, mode))


def test_go_written_tags() -> None:
    # float32 bits incl. a signalling NaN, non-string map keys, bins as keys, negative ints
    cases = [
        "cb 0100807f",
        "cb 0000c0ff",
        "cc 0100000000f0ff7f",
        "d5 03 01 02 c2 03 d0 02 6162 c0",
        "d5 02 c3 80 c1 cb 0000803f c2",
        "d5 01 f3 02 00 07",
        "f3 01 e7 07",  # nanoseconds: pandas Timestamp
        "c7 80", "c8 0080", "c9 00000080", "ca 0000000000000080", "c3 05", "c4 0500", "c5 05000000",
        "d3 0300 01 02 03", "d4 01000000 c0", "d6 0100 81 61 01", "d7 01000000 81 61 01",
        "cd 03 616263", "ce 0300 616263", "cf 03000000 616263", "d1 0100 00", "d2 01000000 00",
        "d5 03 81 61 01 81 62 02 81 61 03",  # a duplicate key: the later value wins, first position kept
    ]
    for h in cases:
        _check(b"QDF\x01\x01" + bytes.fromhex(h.replace(" ", "")))


def test_timestamps_and_float32_types() -> None:
    buf = b"QDF\x01\x00" + bytes.fromhex("a3 f3 01 e7 07 f3 80 dc 9a b1 0c 00 cb 0000c07f")
    ctx = DecodeContext()
    ok, v = fast_dec.try_read(buf, 5, len(buf), ctx)
    assert ok
    _same(_python(buf, DecodeContext()), v)
    assert type(v[0]).__name__ == "Timestamp" and isinstance(v[1], datetime) and type(v[2]) is np.float32


# ------------------------------------------------------------------ hypothesis

_POOL = [f"value-{i:03d}" for i in range(12)] + ["ab", "abcd", "é-ü-字"]
_text = st.one_of(st.sampled_from(_POOL), st.text(max_size=40))
_leaf = st.one_of(
    st.none(), st.booleans(),
    st.integers(-(2**63), 2**64 - 1),
    st.floats(allow_nan=True, allow_infinity=True),
    _text, st.binary(max_size=40),
)
_json = st.recursive(
    _leaf,
    lambda kids: st.one_of(st.lists(kids, max_size=6), st.dictionaries(_text, kids, max_size=6)),
    max_leaves=40,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_json, st.sampled_from(MODES))
def test_hypothesis_json_like(obj: object, mode: object) -> None:
    buf = bytes(open_body(qdf.dumps(obj, mode))[1])
    _check(buf, must=mode in ("speed", Options.DENSE))


def _records(n: int, seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    return [
        {
            "url": f"https://example.com/api/v1/users/{int(rng.integers(0, 10**6))}/profile",
            "path": f"/var/log/app/{i % 3}/part-{i:05d}.log",
            "level": ["INFO", "WARN", "ERROR"][i % 3],
            "n": i,
            "tags": ["alpha", "beta"] if i % 2 else [],
            "raw": b"\x00\x01binary" if i % 4 == 0 else None,
        }
        for i in range(n)
    ]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("n", [2, 5, 15])
def test_records_with_deltas_and_shapes(mode: object, n: int) -> None:
    buf = bytes(open_body(qdf.dumps(_records(n, n), mode))[1])
    assert _check(buf, must=mode != "compression") or mode == "compression"


def test_f2_deltas_occur() -> None:
    body = _body(_records(10, 1), "balanced")
    assert b"\xf2" in body and b"\xec" in body
    _check(b"QDF\x01\x03" + body)


def test_many_ids_mtf_and_pair() -> None:
    words = [f"word-{i:04d}" for i in range(400)]
    rng = np.random.default_rng(3)
    seq = words + [words[int(i)] for i in rng.integers(0, 400, 2000)] + ["word-0001", "word-0002"] * 20
    for mode in ("balanced", Options.DENSE):
        body = _body(seq, mode)
        if mode == "balanced":
            assert b"\xe9" in body and b"\xea" in body
        _check(b"QDF\x01\x03" + body)


def test_mtf_rank_past_the_ring_uses_lru() -> None:
    # 200 interned ids, then E9 rank 150 (never written by the encoder, accepted by Go)
    body = bytearray(b"\xd3")
    body += b"" + (201).to_bytes(2, "little")
    for i in range(200):
        s = f"s{i:04d}".encode()
        body += b"\xe0" + bytes([len(s)]) + s
    body += b"\xe9" + encode_uvarint(150)
    _check(b"QDF\x01\x01" + bytes(body))


# ------------------------------------------------------------------ streams


@pytest.mark.parametrize("mode", ["balanced", Options.DENSE | Options.SHAPE_INTERN, "speed"])
def test_stream_state_is_shared(mode: object) -> None:
    sess = EncodeSession(parse_mode(mode), stream=True)
    msgs = []
    for i in range(12):
        out = bytearray()
        sess.write(out, {"batch": i, "rows": _records(3 + i % 4, i), "note": "the same note every time"})
        msgs.append(bytes(out))
    fast_ctx, py_ctx = DecodeContext(), DecodeContext()
    for i, m in enumerate(msgs):
        want = _python(m, py_ctx, 0)
        if i % 4 == 2:
            got = _python(m, fast_ctx, 0)  # the Python reader in between
        else:
            ok, got = fast_dec.try_read(m, 0, len(m), fast_ctx)
            assert ok
        _same(want, got)
        if i % 3 == 0:
            assert _state(fast_ctx) == _state(py_ctx)
    assert _state(fast_ctx) == _state(py_ctx)


def test_bail_leaves_state_untouched() -> None:
    sess = EncodeSession(Options.BALANCED, stream=True)
    first, second = bytearray(), bytearray()
    sess.write(first, _records(4, 0))
    sess.write(second, {"rows": _records(2, 1), "ints": np.arange(100, dtype=np.int64)})  # a QPack payload
    for warm_fast in (True, False):
        ctx = DecodeContext()
        if warm_fast:
            assert fast_dec.try_read(bytes(first), 0, len(first), ctx)[0]
        else:
            _python(bytes(first), ctx, 0)
        before = _state(ctx)
        ok, _ = fast_dec.try_read(bytes(second), 0, len(second), ctx)
        assert not ok
        assert _state(ctx) == before
        ref = DecodeContext()
        _python(bytes(first), ref, 0)
        want = _python(bytes(second), ref, 0)
        got = _python(bytes(second), ctx, 0)
        assert repr(want) == repr(got)
        assert _state(ctx) == _state(ref)


# ------------------------------------------------------------------ corrupt / truncated


def _expect_corrupt(buf: bytes, ctx: DecodeContext | None = None) -> None:
    with pytest.raises(CorruptDataError):
        _fast_or_python(buf, ctx or DecodeContext(), 0)


def test_corrupt_references() -> None:
    _expect_corrupt(bytes.fromhex("a2 e0 04 61626364 e1 05"))  # unknown id
    _expect_corrupt(bytes.fromhex("a2 e0 04 61626364 e9 05"))  # MTF rank naming nothing
    _expect_corrupt(bytes.fromhex("a2 e0 04 61626364 ea 00"))  # no recorded successor
    _expect_corrupt(bytes.fromhex("a1 e8"))  # repeat with no previous id
    _expect_corrupt(bytes.fromhex("a1 f2 00 00"))  # stray delta
    # a delta keeping more bytes than the field's previous value
    _expect_corrupt(bytes.fromhex("a2 ec 00 01 81 75 e0 04 61626364 ec 01 f2 09 01 7a"))
    # the kernel raises (state already changed) with the offset
    bad = bytes.fromhex("a2 ec 00 01 81 75 e0 04 61626364 ec 01 f2 09 01 7a")
    with pytest.raises(CorruptDataError) as err:
        fast_dec.try_read(bad, 0, len(bad), DecodeContext())
    assert err.value.offset == 14
    bad = bytes.fromhex("a2 e0 04 61626364 e9 05")
    with pytest.raises(CorruptDataError) as err:
        fast_dec.try_read(bad, 0, len(bad), DecodeContext())
    assert err.value.offset == 7


def test_invalid_utf8() -> None:
    bad = bytes.fromhex("a2 82 c3 28 01")
    ctx = DecodeContext()
    assert fast_dec.try_read(bad, 0, len(bad), ctx) == (False, None)
    assert _state(ctx) == _state(DecodeContext())
    with pytest.raises(CorruptDataError):
        _python(bad, ctx, 0)
    # with stream state behind it the kernel has advanced: a typed error
    ctx = DecodeContext()
    good = bytes.fromhex("e0 04 61626364")
    assert fast_dec.try_read(good, 0, len(good), ctx)[0]
    with pytest.raises(CorruptDataError):
        fast_dec.try_read(bad, 0, len(bad), ctx)


@pytest.mark.parametrize("mode", ["speed", "balanced", Options.DENSE])
def test_truncated_and_mutated_inputs(mode: object) -> None:
    body = _body({"rows": _records(4, 2), "f": np.float32(2.5), "t": datetime(2020, 1, 1, tzinfo=timezone.utc)}, mode)
    for cut in range(len(body)):
        ctx = DecodeContext()
        try:
            ok, _ = fast_dec.try_read(body, 0, cut, ctx)
        except DecodeError:
            continue
        assert not ok
        assert _state(ctx) == _state(DecodeContext())
    rng = np.random.default_rng(0)
    for _ in range(300):
        b = bytearray(body)
        b[int(rng.integers(0, len(b)))] = int(rng.integers(0, 256))
        ctx = DecodeContext()
        try:
            ok, v = fast_dec.try_read(bytes(b), 0, len(b), ctx)
        except DecodeError:
            continue
        if ok:  # then the Python reader agrees
            _same(_python(bytes(b), DecodeContext(), 0), v)


def test_nesting_limit() -> None:
    # the pickle unpickler is iterative: deep values need no cap of their own, only ctx.max_depth
    deep = b"\xa1" * 600 + b"\x01"
    ok, v = fast_dec.try_read(deep, 0, len(deep), DecodeContext())
    assert ok
    _same(_python(deep, DecodeContext(), 0), v)
    assert fast_dec.loads_body(deep, 0, len(deep))[0]
    too_deep = b"\xa1" * 10_001 + b"\x01"
    assert fast_dec.try_read(too_deep, 0, len(too_deep), DecodeContext()) == (False, None)
    assert fast_dec.loads_body(too_deep, 0, len(too_deep)) == (False, None)
    ok, v = fast_dec.try_read(b"\xa1" * 50 + b"\x01", 0, 51, DecodeContext(max_depth=60))
    assert ok
    assert fast_dec.try_read(b"\xa1" * 50 + b"\x01", 0, 51, DecodeContext(max_depth=40)) == (False, None)


# ------------------------------------------------------------------ pickle specifics

_BAD_UTF8 = [
    "c0 80", "c1 bf", "e0 80 80", "e0 9f bf", "f0 80 80 80", "f0 8f bf bf",  # overlongs
    "ed a0 80", "ed af bf", "ed b0 80", "ed bf bf", "eda0bd edb8 80",  # surrogates (also as a pair)
    "f4 90 80 80", "f5 80 80 80", "f8 88 80 80 80", "ff",  # past U+10FFFF / never valid
    "e2 28 a1", "c3 28", "80", "bf", "e2 82", "f0 9f 98",  # bad / missing continuation bytes
]
_GOOD_UTF8 = ["ed 9f bf", "ee 80 80", "ef bf bf", "f4 8f bf bf", "f0 90 80 80", "c2 80", "e0 a0 80", "7f"]


def _str_forms(raw: bytes) -> list[bytes]:
    """Bodies producing ``raw`` as str: inline, fresh intern, reference, shape key, F2 delta."""
    n = len(raw)
    return [
        bytes([0x80 | n]) + raw,
        b"\xcd" + bytes([n]) + raw,
        b"\xa1\xe0" + bytes([n]) + raw,
        b"\xa2\xe0" + bytes([n]) + raw + b"\xe1\x00",
        b"\xa2\xe2" + bytes([n]) + raw + b"\x81x",  # interned as bytes: valid, then an inline string
        b"\xec\x00\x01" + bytes([0x80 | n]) + raw + b"\x01",
        b"\xa2\xec\x00\x01\x81k\x81a\xec\x01\xf2\x01" + bytes([n]) + raw,
    ]


def test_strict_utf8() -> None:
    for h in _BAD_UTF8 + _GOOD_UTF8:
        raw = bytes.fromhex(h.replace(" ", ""))
        for i, body in enumerate(_str_forms(raw)):
            try:
                want = _python(body, DecodeContext(), 0)
            except CorruptDataError:
                want = None
            expect_bad = h in _BAD_UTF8 and i != 4
            assert (want is None) == expect_bad, (h, i)
            ctx = DecodeContext()
            ok, got = fast_dec.try_read(body, 0, len(body), ctx)
            assert ok == (not expect_bad), (h, i)
            assert fast_dec.loads_body(body, 0, len(body))[0] == ok
            if ok:
                _same(want, got)
            else:
                assert _state(ctx) == _state(DecodeContext())
                # with stream state behind it: a typed error (the state already advanced)
                warm = DecodeContext()
                good = bytes.fromhex("e0 04 61626364")
                assert fast_dec.try_read(good, 0, len(good), warm)[0]
                with pytest.raises(CorruptDataError):
                    fast_dec.try_read(body, 0, len(body), warm)


def test_invalid_interned_id_stays_invalid() -> None:
    # an id interned as str with bad bytes in one message fails again when referenced later
    ctx = DecodeContext()
    first = bytes.fromhex("e2 03 eda080")  # interned as bytes: fine
    ok, v = fast_dec.try_read(first, 0, len(first), ctx)
    assert ok and v == b"\xed\xa0\x80"
    ok, v = fast_dec.try_read(b"\xe1\x00", 0, 2, ctx)
    assert ok and v == b"\xed\xa0\x80"
    ctx = DecodeContext()
    assert fast_dec.try_read(b"\xe0\x01a", 0, 3, ctx)[0]
    bad = bytes.fromhex("a2 e0 03 eda080 e1 01")
    with pytest.raises(CorruptDataError):
        fast_dec.try_read(bad, 0, len(bad), ctx)
    with pytest.raises(CorruptDataError):
        fast_dec.try_read(b"\xe1\x01", 0, 2, ctx)


@pytest.mark.parametrize("mode", ["speed", "balanced", Options.DENSE | Options.SHAPE_INTERN])
def test_memo_shares_keys_and_interned_values(mode: object) -> None:
    recs = _records(6, 0)
    buf = bytes(open_body(qdf.dumps(recs, mode))[1])
    for ok, rows in (fast_dec.try_read(buf, 5, len(buf), DecodeContext()), fast_dec.loads_body(buf, 5, len(buf))):
        assert ok and rows == recs
        for r in rows[1:]:  # shape keys per field slot, plain map keys by content
            assert all(a is b for a, b in zip(rows[0].keys(), r.keys()))
        if mode != "speed":
            assert rows[0]["level"] is rows[3]["level"]  # one interned string, one object


def _varying_shapes(n: int, seed: int) -> list[dict]:
    """Records whose nested map has a different key set (a new shape declaration) nearly every time."""
    rng = np.random.default_rng(seed)
    names = ["region", "env", "user.id", "http.status", "db.name", "é-clé", "k" * 70]
    vals = ["env", "region", "prod", "us-east", "é-clé", "k" * 70]
    return [
        {
            "level": int(i % 4),
            "fields": {names[int(j)]: vals[int(rng.integers(0, len(vals)))]
                       for j in rng.choice(len(names), int(rng.integers(1, 4)), replace=False)},
        }
        for i in range(n)
    ]


@pytest.mark.parametrize("mode", ["speed", "balanced", Options.DENSE | Options.SHAPE_INTERN])
def test_declared_shape_keys_share_objects(mode: object) -> None:
    recs = _varying_shapes(300, 1)
    buf = bytes(open_body(qdf.dumps(recs, mode))[1])
    _check(buf)
    for ok, rows in (fast_dec.try_read(buf, 5, len(buf), DecodeContext()), fast_dec.loads_body(buf, 5, len(buf))):
        assert ok and rows == recs
        objs: dict[str, set[int]] = {}
        for r in rows:
            for k in r["fields"]:
                objs.setdefault(k, set()).add(id(k))
        # short keys of new declarations reuse the str of an interned / equal key seen earlier
        assert all(len(v) == 1 for k, v in objs.items() if len(k) <= 64), {k: len(v) for k, v in objs.items()}


@pytest.mark.parametrize("mode", ["balanced", Options.DENSE | Options.SHAPE_INTERN, "speed"])
def test_declared_shape_keys_across_messages(mode: object) -> None:
    # keys declared in one message, shapes reused by later ones, values naming the key strings
    sess = EncodeSession(parse_mode(mode), stream=True)
    msgs = []
    for i in range(30):
        out = bytearray()
        sess.write(out, _varying_shapes(1 + i % 3, i))
        msgs.append(bytes(out))
    fast_ctx, py_ctx = DecodeContext(), DecodeContext()
    for i, m in enumerate(msgs):
        want = _python(m, py_ctx, 0)
        if i % 7 == 3:
            got = _python(m, fast_ctx, 0)  # the Python reader in between (state converted back and forth)
        else:
            ok, got = fast_dec.try_read(m, 0, len(m), fast_ctx)
            assert ok
        _same(want, got)
    assert _state(fast_ctx) == _state(py_ctx)


def test_plain_map_keys_by_content() -> None:
    # colliding / differing keys of equal length, non-ASCII keys, long keys (not memoized), bytes keys
    maps = [{"ab": 1, "ba": 2, "é": 3, "k" * 100: 4}, {"ba": 6, "ab": 7, "é": 8, "k" * 100: 9}]
    maps += [{f"key{i}": i for i in range(2000)}, {f"key{i}": -i for i in range(1999, -1, -1)}]
    buf = b"QDF\x01\x00" + _body(maps, "speed")
    _check(buf)
    ok, v = fast_dec.loads_body(buf, 5, len(buf))
    assert ok and v == maps
    a, b = list(v[0]), list(v[1])
    assert a[0] is b[1] and a[1] is b[0] and a[2] is b[2]
    # 2000 keys in a 1024-slot table: colliding slots keep the last key, many are shared
    assert sum(x is y for x, y in zip(v[2], reversed(list(v[3])))) > 500
    # a str key and a bin key with the same bytes stay distinct
    _check(b"QDF\x01\x01" + bytes.fromhex("a2 d5 02 82 6162 01 d0 02 6162 02 d5 01 82 6162 03"))


def test_stream_has_only_kernel_opcodes() -> None:
    allowed = {"EMPTY_DICT", "EMPTY_LIST", "MARK", "SETITEMS", "APPENDS", "SHORT_BINUNICODE", "BINUNICODE",
               "SHORT_BINBYTES", "BINBYTES", "MEMOIZE", "BINGET", "LONG_BINGET", "BININT1", "BININT2", "BININT",
               "LONG1", "BINFLOAT", "NONE", "NEWTRUE", "NEWFALSE", "STOP"}
    obj = {"rows": _records(5, 1), "ints": [0, 255, 256, 65536, -1, -(2**31), 2**63, -(2**63)], "f": 1.5,
           "b": b"x" * 300, "s": "é" * 200}
    for mode in ("speed", "balanced"):
        buf = bytes(open_body(qdf.dumps(obj, mode))[1])
        a = fast_dec._DenseArrays()
        while True:
            r = fast_dec._transcode(buf, 5, len(buf), 10_000, fast_dec._MODE_FRESH, *a.args)
            if r != fast_dec._NEED:
                break
            a.grow_for(a.st)
        assert r >= fast_dec._RET_OK and not (r - fast_dec._RET_OK) & 1
        stream = a.outmv[: (r - fast_dec._RET_OK) >> 1].tobytes()
        assert {op.name for op, _, _ in pickletools.genops(stream)} <= allowed
        assert pickle.loads(stream) == obj


def test_raw_values_use_the_restricted_unpickler() -> None:
    obj = [np.float32(1.5), datetime(2024, 5, 6, 7, 8, 9, 10, tzinfo=timezone.utc), np.float32("nan"), 3]
    buf = bytes(open_body(qdf.dumps(obj, "speed"))[1])
    ok, v = fast_dec.loads_body(buf, 5, len(buf))
    assert ok
    _same(_python(buf, DecodeContext()), v)
    # the global is memoized once per message
    a = fast_dec._FREE[-1]
    stream = a.outmv[: int(a.st[fast_dec.td.T_OUTLEN])].tobytes()
    ops = [op.name for op, _, _ in pickletools.genops(stream)]
    assert ops.count("STACK_GLOBAL") == 1 and ops.count("REDUCE") == 3
    # anything but _raw is refused
    with pytest.raises(pickle.UnpicklingError):
        fast_dec._RawUnpickler(io.BytesIO(pickle.dumps(print))).load()
    assert fast_dec._RawUnpickler(io.BytesIO(pickle.dumps([1, "a"]))).load() == [1, "a"]


def test_unhashable_keys_decline() -> None:
    for h in ("d5 01 a0 01", "d5 01 d5 00 01", "a1 d5 02 01 02 a1 c0 03"):
        body = bytes.fromhex(h.replace(" ", ""))
        ctx = DecodeContext()
        assert fast_dec.try_read(body, 0, len(body), ctx) == (False, None)
        assert _state(ctx) == _state(DecodeContext())
        assert fast_dec.loads_body(body, 0, len(body)) == (False, None)
        with pytest.raises(CorruptDataError):
            _python(body, DecodeContext(), 0)


def test_loads_body_matches_python_path() -> None:
    import test_values

    for _obj, _mode, hexstr in test_values.GOLDEN:
        buf = bytes.fromhex(hexstr.replace(" ", ""))
        ok, v = fast_dec.loads_body(buf, 5, len(buf))
        if ok:
            _same(_python(buf, DecodeContext()), v)
    for mode in MODES:
        buf = bytes(open_body(qdf.dumps({"recs": _records(20, 3), "s": SCALARS}, mode))[1])
        ok, v = fast_dec.loads_body(buf, 5, len(buf))
        assert ok or mode == "compression"
        if ok:
            _same(_python(buf, DecodeContext()), v)
        # bytearray / memoryview / ndarray bodies
        for b in (bytearray(buf), memoryview(buf), np.frombuffer(buf, np.uint8)):
            ok2, v2 = fast_dec.loads_body(b, 5, len(buf))
            assert ok2 == ok
            if ok:
                _same(v, v2)
    bad = bytes.fromhex("a2 e0 04 61626364 e9 05")
    with pytest.raises(CorruptDataError) as err:
        fast_dec.loads_body(bad, 0, len(bad))
    assert err.value.offset == 7


def test_loads_body_threads() -> None:
    bodies = []
    for i in range(6):
        obj = {"i": i, "recs": _records(10 + 7 * i, i), "f": np.float32(i), "big": "x" * (1000 * i)}
        buf = bytes(open_body(qdf.dumps(obj, ["speed", "balanced", Options.DENSE][i % 3]))[1])
        bodies.append((buf, _python(buf, DecodeContext())))
    errors: list[BaseException] = []
    barrier = threading.Barrier(2)

    def work(k: int) -> None:
        try:
            barrier.wait()
            for j in range(150):
                buf, want = bodies[(j * (k + 1)) % len(bodies)]
                ok, got = fast_dec.loads_body(buf, 5, len(buf))
                assert ok
                _same(want, got)
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


# ------------------------------------------------------------------ one-shot (single pass) specifics


def test_loads_body_bails_mid_pass_then_recovers() -> None:
    # loads_body runs pass 2 alone: a QPack value after 300 interned strings is found with the
    # pooled state already advanced; the decline must not leak that state into the next call
    from qdf_kernels import transcode_dec as td

    obj = [f"str{i}" for i in range(300)] + [np.arange(100, dtype=np.int64)]
    full = qdf.dumps(obj, "balanced")
    buf = bytes(open_body(full)[1])
    assert fast_dec.loads_body(buf, 5, len(buf)) == (False, None)
    a = fast_dec._FREE[-1]  # the set that call used (LIFO pool)
    assert a.st[td.S_NIDS] == 300  # it bailed in the middle of the (only) pass
    got = qdf.loads(full)  # the Python reader takes it
    assert got[:300] == obj[:300] and np.array_equal(got[300], obj[300])
    recs = _records(30, 5)
    for mode in ("balanced", Options.DENSE | Options.SHAPE_INTERN, "speed"):
        b = bytes(open_body(qdf.dumps({"recs": recs, "tail": ["str1", "str2"]}, mode))[1])
        assert fast_dec._FREE[-1] is a
        ok, v = fast_dec.loads_body(b, 5, len(b))
        assert ok
        _same(_python(b, DecodeContext()), v)
    # a bail inside a shape declaration and inside a delta-based field, then a good body
    for bad in ("a2 e0 01 61 ec 00 02 e0 01 62 01", "a2 e0 01 61 f2 00 01 62", "a3 e0 01 61 e1 00 ed"):
        body = bytes.fromhex(bad.replace(" ", ""))
        assert fast_dec.loads_body(body, 0, len(body)) == (False, None)
        ok, v = fast_dec.loads_body(b, 5, len(b))
        assert ok
        _same(_python(b, DecodeContext()), v)


def test_loads_body_output_overflows_first_buffer(monkeypatch: pytest.MonkeyPatch) -> None:
    # a fresh array set starts with a 4 KiB output: pass 2 runs out of room, the glue grows it
    # (geometrically, or extrapolated from the input read) and starts over on a reset state
    from qdf_columnar.wire.dense import _DenseArrays

    grows: list[int] = []
    orig = _DenseArrays.grow_for

    def counting(self: _DenseArrays, st: np.ndarray) -> None:
        grows.append(len(self.out))
        orig(self, st)

    monkeypatch.setattr(_DenseArrays, "grow_for", counting)
    # shape fields with long common prefixes: F2 deltas of a few bytes expand to ~300 bytes each
    # (an optional key keeps the balanced encoders from going columnar)
    recs = [{"u": "x" * 300 + str(i), "i": i, "s": f"v{i % 7}", **({"o": None} if i % 3 == 0 else {})}
            for i in range(400)]
    for mode in ("balanced", "speed", Options.DENSE | Options.SHAPE_INTERN):
        buf = bytes(open_body(qdf.dumps(recs, mode))[1])
        monkeypatch.setattr(fast_dec, "_FREE", [])  # no pooled set: a new, small one
        monkeypatch.setattr(fast_dec, "_take", fast_dec._FREE.pop)
        monkeypatch.setattr(fast_dec, "_give", fast_dec._FREE.append)
        grows.clear()
        ok, v = fast_dec.loads_body(buf, 5, len(buf))
        assert ok and v == recs
        _same(_python(buf, DecodeContext()), v)
        assert grows and grows[0] == 4096 and len(grows) <= 4
        a = fast_dec._FREE[-1]
        assert len(a.out) >= 300 * 400
        ok, v = fast_dec.loads_body(buf, 5, len(buf))  # now the set is big enough
        assert ok and v == recs


@pytest.mark.parametrize("mode", ["speed", "balanced", Options.DENSE])
def test_loads_body_truncated_and_mutated(mode: object) -> None:
    body = _body({"rows": _records(4, 2), "f": np.float32(2.5), "t": datetime(2020, 1, 1, tzinfo=timezone.utc)}, mode)
    good = _python(body, DecodeContext(), 0)
    for cut in range(len(body)):
        try:
            ok, _ = fast_dec.loads_body(body, 0, cut)
        except DecodeError:
            continue
        assert not ok
    rng = np.random.default_rng(1)
    for _ in range(300):
        b = bytearray(body)
        b[int(rng.integers(0, len(b)))] = int(rng.integers(0, 256))
        try:
            ok, v = fast_dec.loads_body(bytes(b), 0, len(b))
        except DecodeError:
            continue
        if ok:  # then the Python reader agrees
            _same(_python(bytes(b), DecodeContext(), 0), v)
    ok, v = fast_dec.loads_body(body, 0, len(body))
    assert ok
    _same(good, v)


def test_two_pass_output_exactly_bounded() -> None:
    # pass 1's output bound is tighter than the one-pass checks' slack: with it they must not
    # fire (MODE_FULL would then replay the value on the retry: the id interned twice)
    from qdf_kernels import transcode_dec as td

    a = fast_dec._DenseArrays()
    assert len(a.out) == 4096
    body = b"\xe0" + encode_uvarint(4000) + b"s" * 4000
    for mode in (td.MODE_FULL, td.MODE_FRESH):
        r = td.transcode(body, 0, len(body), 100, mode, *a.args)
        assert r >= td.RET_OK and a.st[td.S_NIDS] == 1
    ok, v = fast_dec.loads_body(body, 0, len(body))
    assert ok and v == "s" * 4000
