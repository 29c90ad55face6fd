"""The msgpack -> qdf transcode fast path: byte identity and state identity with the Python path."""

from __future__ import annotations

import dataclasses
import enum
import math
from datetime import datetime, timezone

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from qdf_columnar.errors import UnsupportedTypeError
from qdf_columnar.options import Options, parse_mode
from qdf_columnar.wire import fast_enc
from qdf_columnar.wire.context import EncodeContext
from qdf_columnar.wire.values_write import write_value

O = Options  # noqa: E741
MODES = ["speed", "balanced", "compression", O.DENSE, O.DENSE | O.MAP_SHAPE]


def _py(obj: object, ctx: EncodeContext) -> bytes:
    out = bytearray()
    write_value(out, obj, ctx)
    return bytes(out)


def _fast(obj: object, ctx: EncodeContext, **kw: bool) -> bytes:
    out = bytearray(b"xy")
    assert fast_enc.try_write(out, obj, ctx, **kw), obj
    assert out[:2] == b"xy"
    return bytes(out[2:])


def _same(obj: object, mode: object, py_obj: object = None) -> bytes:
    opts = parse_mode(mode) if not isinstance(mode, Options) else mode
    c1, c2 = EncodeContext(opts), EncodeContext(opts)
    want = _py(obj if py_obj is None else py_obj, c1)
    got = _fast(obj, c2)
    assert got == want, (got.hex(), want.hex())
    assert c1.dense.state() == c2.dense.state()
    return got


# -------------------------------------------------------------- golden vectors
def _golden() -> list[tuple[object, object]]:
    from test_tag_matrix import test_golden_dumps  # type: ignore[import-not-found]
    from test_values import GOLDEN, QPACK_GOLDEN  # type: ignore[import-not-found]

    tm = next(m for m in test_golden_dumps.pytestmark if m.name == "parametrize").args[1]
    cases = [(o, m) for o, m, _ in GOLDEN + QPACK_GOLDEN + list(tm)]
    cases += [
        ([0, 127, 128, 255, 256, 65536, 2**32, 2**64 - 1, -1, -8, -9, -129, -32769, -(2**31) - 1, -(2**63)], "speed"),
        ([1.5, np.float32(2.5), None, True, False, b"\x00\x01", datetime(2024, 1, 2, tzinfo=timezone.utc)], "speed"),
        ([{"name": "alpha", "v": [1, 2]}, {"name": "alpha", "v": {"k": b"bytes!"}}] * 2, "balanced"),
        (["abcd", b"abcd", "abcd", b"abcd"], "balanced"),
        ({"a": "abcd", "b": b"abcd"}, "balanced"),
    ]
    return cases


def test_golden_vectors_match_python_path() -> None:
    for obj, mode in _golden():
        opts = parse_mode(mode) if not isinstance(mode, Options) else mode
        c = EncodeContext(opts)
        out = bytearray()
        if fast_enc.try_write(out, obj, c):
            assert bytes(out) == _py(obj, EncodeContext(opts)), (obj, mode)
        elif not isinstance(obj, np.ndarray) or obj.ndim != 1:  # only columnar candidates may bail
            assert isinstance(obj, list) and len(obj) >= 16, (obj, mode)


# ------------------------------------------------------------------ hypothesis
_I = st.one_of(
    st.integers(-(2**63), 2**64 - 1),
    st.sampled_from(
        [
            0,
            127,
            128,
            255,
            256,
            65535,
            65536,
            2**32 - 1,
            2**32,
            2**63 - 1,
            2**63,
            2**64 - 1,
            -1,
            -8,
            -9,
            -32,
            -33,
            -128,
            -129,
            -32768,
            -32769,
            -(2**31),
            -(2**31) - 1,
            -(2**63),
        ]
    ),
)
_F = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([-0.0, math.nan, math.inf, -math.inf]))
_POOL = [f"https://example.com/api/v1/items/{i}" for i in range(40)] + [f"w{i:03d}" for i in range(300)] + ["ab", "x"]
_LONG = st.text(min_size=300, max_size=70000).filter(lambda s: len(s) > 256)
_S = st.one_of(st.text(max_size=40), st.sampled_from(_POOL), _LONG)
_B = st.one_of(st.binary(max_size=40), st.sampled_from([p.encode() for p in _POOL[:60]]))
_SCALAR = st.one_of(st.none(), st.booleans(), _I, _F, _S, _S, _B)
_KEYS = st.sampled_from(["id", "url", "name", "tag", "kind"])
_VALUE = st.recursive(
    _SCALAR,
    lambda ch: st.one_of(st.lists(ch, max_size=10), st.dictionaries(_KEYS, ch, max_size=5)),
    max_leaves=40,
)
_REC = st.fixed_dictionaries({"id": _I, "url": st.sampled_from(_POOL), "name": _S, "tag": st.one_of(_S, _B, st.none())})
_SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)


@_SETTINGS
@given(value=_VALUE, mode=st.sampled_from(MODES))
def test_random_values_are_byte_identical(value: object, mode: object) -> None:
    _same(value, mode)


@_SETTINGS
@given(recs=st.lists(_REC, min_size=1, max_size=15), mode=st.sampled_from(MODES))
def test_record_lists_fire_deltas_and_shapes(recs: list, mode: object) -> None:
    _same(recs, mode)
    _same({"rows": recs, "n": len(recs)}, mode)


def _all_tags(body: bytes) -> set[int]:
    return set(body)


def test_state_forms_all_fire() -> None:
    # > 128 distinct ids so E9 (MTF rank) and EA (pair) references occur, F2 deltas on URL fields.
    words = [f"word-{i:04d}" for i in range(300)]
    seq = words + words[::7] + words[:50] + [w for w in words[:200] for _ in range(2)] + words[130:140] * 3
    recs = [{"u": f"https://example.com/path/{i}/x", "v": i} for i in range(15)]
    for mode in ["balanced", O.DENSE]:
        body = _same(seq, mode)
        _same([recs, recs], mode)
    tags = _all_tags(_same(seq, "balanced"))
    assert {0xE0, 0xE1, 0xE8, 0xE9, 0xEA} <= tags
    assert 0xF2 in _same([recs, recs[:5]], "balanced")
    del body


def test_multi_call_state_sharing_and_alternation() -> None:
    rng = np.random.default_rng(1)
    objs = []
    for i in range(60):
        k = int(rng.integers(0, 4))
        if k == 0:
            objs.append([f"w{int(x)}-word" for x in rng.integers(0, 200, 20)])
        elif k == 1:
            objs.append([{"url": f"https://h/a/{int(x)}", "n": int(x)} for x in rng.integers(0, 50, 6)])
        elif k == 2:
            objs.append({"a": {"url": "https://h/a/1", "q": b"bytes-1234"}, "b": [1.5, None, "zzzz"]})
        else:
            objs.append({"k" + str(int(rng.integers(0, 5))): "value-" + str(i)})
    for mode in ["balanced", O.DENSE, "speed"]:
        opts = parse_mode(mode) if isinstance(mode, str) else mode
        ref, fast = EncodeContext(opts), EncodeContext(opts)
        for i, obj in enumerate(objs):
            want = _py(obj, ref)
            if i % 3 == 2:  # alternate: the Python path on the fast context
                got = _py(obj, fast)
            else:
                got = _fast(obj, fast)
            assert got == want, (mode, i)
            if i % 10 == 0:
                assert ref.dense.state() == fast.dense.state()
        assert ref.dense.state() == fast.dense.state()


def test_wolverine() -> None:
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from bench.fixtures.wolverine import CANONICAL

    for mode in MODES:
        _same(CANONICAL, mode)


# ---------------------------------------------------------------- other types
class Color(enum.IntEnum):
    RED = 3


@dataclasses.dataclass
class Point:
    x: int
    label: str
    tags: list


def test_numpy_datetimes_float32_subclasses() -> None:
    values = [
        np.float32(2.5),
        np.float16(1.5),
        np.float64(-0.0),
        np.int32(-7),
        np.uint64(2**64 - 1),
        np.int64(5),
        np.bool_(True),
        np.str_("hello"),
        np.bytes_(b"abcd"),
        datetime(2024, 1, 2, 3, 4, 5, 6, tzinfo=timezone.utc),
        datetime(1969, 12, 31, 23, 59, 59),
        pd.Timestamp("2024-01-02 03:04:05.123456789"),
        np.datetime64("2024-01-02T03:04:05.123456789", "ns"),
        np.array([True, False]),
        np.array([1, -1, 300], dtype=np.int32),
        np.array([1.0, math.nan]),
        np.array([1.0], dtype=np.float32),
        np.arange(40),
        np.array([[1, 2], [3, 4]]),
        np.array(["a", "bc"]),
        np.array(5),
        (1, "two", (3,)),
        Color.RED,
        bytearray(b"xyzw"),
        memoryview(b"qwer"),
    ]
    for mode in MODES:
        _same(values, mode)
        _same({"a": values, "b": "https://x/1"}, mode)
        # base neutrality of field values: neutral ones keep the delta base, others drop it
        rows = [{"u": "https://example.com/aaaa/1", "v": v} for v in values] * 2
        _same([rows[i : i + 10] for i in range(0, len(rows), 10)], mode)  # < 16 rows: never columnar
        _same(
            [
                [{"u": f"https://example.com/aaaa/{i}", "v": v}, {"u": "https://example.com/aaaa/9", "v": v}]
                for i, v in enumerate(values)
            ],
            mode,
        )


def test_dataclass_maps_to_its_fields() -> None:
    p = Point(1, "label-1", [1, 2])
    for mode in MODES:
        _same([p, p], mode, py_obj=[dataclasses.asdict(p)] * 2)


# ----------------------------------------------------------------------- bails
def _bail(obj: object, mode: object, **kw: bool) -> None:
    opts = parse_mode(mode) if not isinstance(mode, Options) else mode
    ctx = EncodeContext(opts)
    _fast([["seed-string", "seed-string"], {"url": "https://x/1"}], ctx)
    before = ctx.dense.state()
    out = bytearray(b"abc")
    assert not fast_enc.try_write(out, obj, ctx, **kw)
    assert out == b"abc"
    assert ctx.dense.state() == before


def test_bails_change_nothing() -> None:
    recs = [{"a": i} for i in range(16)]
    for mode in ["balanced", "speed", O.DENSE]:
        _bail({1: 2}, mode)
        _bail([0, {"user": {b"k": 2}}], mode)
        _bail(2**64, mode)
        _bail(-(2**63) - 1, mode)
        _bail(object(), mode)
        _bail([1j], mode)
        _bail(np.datetime64("NaT"), mode)
        _bail("\ud800", mode)
    _bail(recs, "balanced")
    _bail({"x": recs}, "balanced")
    # the root was offered already: the kernel takes it, nested ones still bail
    ctx = EncodeContext(parse_mode("balanced"))
    out = bytearray()
    assert fast_enc.try_write(out, recs, ctx, root_declined=True)
    ref = EncodeContext(parse_mode("balanced"))
    want = bytearray()
    from qdf_columnar.wire.values_write import _write_seq_header

    _write_seq_header(want, len(recs))
    ref.in_repeated = True
    for r in recs:
        write_value(want, r, ref)
    assert out == want
    _bail([recs], "balanced", root_declined=True)
    _same(recs, "speed")  # no columnar in speed mode
    # too deep
    deep: list = []
    cur = deep
    for _ in range(40):
        nxt: list = []
        cur.append(nxt)
        cur = nxt
    ctx = EncodeContext(parse_mode("speed"))
    ctx.max_depth = 30
    assert not fast_enc.try_write(bytearray(), deep, ctx)
    ctx.max_depth = 41
    assert fast_enc.try_write(bytearray(), deep, ctx)


def test_growth_and_full_table() -> None:
    big = [f"string-number-{i}" for i in range(5000)] + ["x" * 70000, b"y" * 300]
    _same(big, "balanced")
    opts = O.DENSE | O.MAP_SHAPE | O.PAIR_PRED | O.MTF  # shapes and deltas without columnar lists
    ref, fast = EncodeContext(opts), EncodeContext(opts)
    ref.dense.max_entries = fast.dense.max_entries = 150
    for chunk in range(4):
        obj = [{"u": f"https://e.com/p/{chunk}/{i}", "w": f"word{i % 170:04d}"} for i in range(100)]
        assert _fast([obj], fast) == _py([obj], ref)
    assert ref.dense.state() == fast.dense.state()


# ------------------------------------------------------------ subclasses (hook)
class _Label(str, enum.Enum):
    A = "label-aaaa"


class _Plain(dict):
    __slots__ = ()


class _Reordered(dict):
    def __iter__(self):  # type: ignore[override]
        return iter(sorted(super().__iter__(), reverse=True))

    def items(self):  # type: ignore[override]
        return [(k, self[k]) for k in self]


class _Shout(str):
    def encode(self, *a: object, **k: object) -> bytes:  # type: ignore[override]
        return b"LOUD"


class _MyInt(int):
    pass


class _MyFloat(float):
    pass


class _MyList(list):
    pass


def test_subclasses_byte_identical() -> None:
    from collections import OrderedDict, namedtuple

    od = OrderedDict([("a", "https://x/1"), ("b", 2), ("c", "zzzz")])
    od.move_to_end("a")
    Pt = namedtuple("Pt", "x y")
    values = [
        od,
        _Plain(u="https://example.com/a", v=_Plain(k="vvvv")),
        Color.RED,
        _Label.A,
        _MyInt(7),
        _MyFloat(2.5),
        _MyList([1, "abcd", _Plain(q=1)]),
        Pt(1, "abcd"),
        np.float64(1.25),
        np.int16(-3),
        np.array(7),
        np.array(2.5, dtype=np.float32),
        pd.Timestamp("2024-01-02 03:04:05"),
        np.datetime64("2024-01-02", "D"),
    ]
    for mode in MODES:
        _same(values, mode)
        _same({"a": values, "od": od}, mode)
        # base neutrality of each value as a map field (subclasses of neutral types keep the base)
        rows = [
            [{"u": f"https://example.com/aaaa/{i}", "v": v}, {"u": "https://example.com/aaaa/9", "v": v}]
            for i, v in enumerate(values)
        ]
        _same(rows, mode)


def test_declined_subclasses_go_to_the_python_path() -> None:
    for mode in ["balanced", "speed"]:
        _bail([_Reordered(a=1, b=2)], mode)
        _bail({"x": _Shout("abcd")}, mode)
        _bail([{"v": np.array("abcd")}], mode)  # a 0-d string array (not base neutral, needs Dense)


def _reference_dumps(obj: object, mode: object) -> bytes:
    from qdf_columnar.format.header import finish_body, pack_header
    from qdf_columnar.options import header_flags

    opts = parse_mode(mode) if not isinstance(mode, Options) else mode
    opts &= ~Options.CASCADE  # as dumps() does: messages keep the reference's shapes
    ctx = EncodeContext(opts)
    out = pack_header(header_flags(opts))
    write_value(out, obj, ctx)
    if ctx.col_index_used:
        out[4] |= 0x04
    return finish_body(out, entropy=bool(opts & Options.RANS))


def test_one_shot_dumps_matches_python_path() -> None:
    import sys
    from pathlib import Path

    import qdf_columnar as qdf

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from bench.fixtures.wolverine import CANONICAL

    objs = [
        CANONICAL,
        {"a": [f"w{i:03d}-word" for i in range(200)], "b": [{"url": f"https://h/a/{i}", "n": i} for i in range(12)]},
        [1, 2.5, None, "abcd", b"abcd"],
        "a string of text",
        {"x": [{"u": "https://example.com/aaaa/1", "v": Color.RED}] * 3},
        [{"k": i} for i in range(20)],  # columnar candidate: declined by the one-shot entry
    ]
    for mode in MODES:
        for _ in range(2):  # the second round runs on the reused (reset) per-thread arrays
            for obj in objs:
                assert qdf.dumps(obj, mode=mode) == _reference_dumps(obj, mode), (obj, mode)
        assert fast_enc.dumps_body([{"k": i} for i in range(20)], parse_mode("balanced")) is None


class _Reentrant:
    __struct_fields__ = ("x", "y")

    @property
    def x(self) -> object:
        import qdf_columnar as qdf

        return qdf.dumps({"inner": "https://x/1"}, mode="balanced")

    y = "abcd"


def test_reentrant_dumps_from_a_converter() -> None:
    import qdf_columnar as qdf

    obj = {"r": _Reentrant(), "s": "https://x/1"}
    py = {"r": {"x": _Reentrant().x, "y": "abcd"}, "s": "https://x/1"}
    for mode in MODES:
        assert qdf.dumps(obj, mode=mode) == _reference_dumps(py, mode)


def test_one_shot_root_lists_the_columnar_writer_declines() -> None:
    import qdf_columnar as qdf
    from qdf_columnar.wire import colstruct

    assert fast_enc._COL_SCALARS == colstruct._SCALARS
    logs = [
        {
            "ts": 10**18 + i,
            "host": f"host-{i % 3}",
            "msg": f"message {i % 5}",
            "fields": _Plain({f"k{i % 4}": f"value-{i % 7}", "region": "eu-west"}),
        }
        for i in range(40)
    ]
    declined = [
        logs,
        tuple(logs),
        [{}] * 20,
        [{"a": [1, 2], "b": "abcd"}] * 20,
        [{"a": 1, "b": np.float32(1.5)}] + [{"a": i, "b": i} for i in range(20)],
        [{"a": None, "b": {"c": "abcd"}}] * 20,
    ]
    maybe = [  # first row all scalars: the ordinary path (columnar may take it or decline later)
        [{"a": i, "b": "abcd"} for i in range(20)],
        [{"a": 1}] + [{"a": {"x": i}} for i in range(20)],
        [_Plain(a=1)] * 20,
    ]
    for mode in MODES:
        opts = parse_mode(mode) if not isinstance(mode, Options) else mode
        for _ in range(2):
            for obj in declined + maybe:
                assert qdf.dumps(obj, mode=mode) == _reference_dumps(obj, mode), (obj, mode)
        if fast_enc.columnar_enabled(opts):
            for obj in maybe:
                assert fast_enc.dumps_body(obj, opts) is None
            for obj in declined:
                assert fast_enc.dumps_body(obj, opts) is not None, obj


def test_one_shot_bail_midway_then_dumps_again() -> None:
    import qdf_columnar as qdf

    many = [f"string number {i:05d}" for i in range(300)]
    recs = [{"u": f"https://example.com/{i}", "n": i} for i in range(20)]
    bad = [
        {"a": many, "b": {"c": {"d": {1: "x"}}}},  # a non-str key deep inside, after many strings
        {"a": many, "b": [{"n": 1, "nested": recs}]},  # a nested columnar candidate after many strings
        [{"a": [many]}] * 16 + [{"z": {2: 3}}],  # declined root list, a non-str key at the end
    ]
    good = {"a": many[:50], "b": recs[:3], "c": "abcd"}
    for mode in MODES:
        for obj in bad:
            try:
                want: object = _reference_dumps(obj, mode)
            except UnsupportedTypeError as err:
                want = str(err)
            try:
                got: object = qdf.dumps(obj, mode=mode)
            except UnsupportedTypeError as err:
                got = str(err)
            assert got == want, (obj, mode)
            assert qdf.dumps(good, mode=mode) == _reference_dumps(good, mode), mode
            assert qdf.dumps(many, mode=mode) == _reference_dumps(many, mode), mode


def test_dict_subclass_copy_keeps_iteration_order() -> None:
    from collections import OrderedDict

    class _OD(OrderedDict):
        pass

    od = _OD([("a", "https://x/1"), ("b", 2), ("c", "zzzz")])
    od.move_to_end("a")
    p = _Plain(b=1)
    p["a"] = "abcd"
    for mode in MODES:
        _same([od, p, {"o": od, "p": p}], mode)


@_SETTINGS
@given(value=_VALUE, mode=st.sampled_from(MODES))
def test_one_shot_random_values_are_byte_identical(value: object, mode: object) -> None:
    # The one-shot kernel has no pass 1: pass 2 validates and pre-scans map keys itself.
    opts = parse_mode(mode) if not isinstance(mode, Options) else mode
    got = fast_enc.dumps_body(value, opts)
    assert got is None or got == _reference_dumps(value, mode)
    got = fast_enc.dumps_body({"rows": [value, value], "n": value}, opts)
    assert got is None or got == _reference_dumps({"rows": [value, value], "n": value}, mode)


def test_one_shot_bails_found_only_by_pass_2() -> None:
    import msgpack

    many = [f"string number {i:05d}" for i in range(300)]
    recs = [{"u": f"https://example.com/{i}", "n": i} for i in range(20)]
    bad = [
        {"a": many, "b": {"c": {"d": {"e": "abcd", 1: "x"}}}},  # a non-str key deep inside, late
        [{"a": many}, {"b": [{"c": {"d": [1, {2: 3}]}}]}],  # a non-str key inside a skipped value
        {"a": many, "b": [{"n": 1, "nested": recs}]},  # a nested columnar candidate late in the input
        {"a": many, "b": [{"x": "abcd"}, msgpack.ExtType(5, b"zz")]},  # an ext code the kernel refuses
        {"a": many, "b": {"k": msgpack.ExtType(7, b"")}},
    ]
    good = [
        {"a": many[:50], "b": recs[:3], "c": "abcd"},
        [{"u": "https://example.com/1", "n": {"x": i, "y": "abcd"}} for i in range(5)],
    ]
    for mode in MODES:
        opts = parse_mode(mode) if not isinstance(mode, Options) else mode
        for obj in bad:
            if obj is bad[2] and not fast_enc.columnar_enabled(opts):
                continue
            assert fast_enc.dumps_body(obj, opts) is None, (obj, mode)
            for g in good:  # the private state is whole again on the next call
                assert fast_enc.dumps_body(g, opts) == _reference_dumps(g, mode), (g, mode)


def test_one_shot_growth_midway_on_a_fresh_thread() -> None:
    # A fresh thread starts with small arrays: shapes / keys / fields grow from inside pass 2
    # (NEED, state emptied), ids / slab / output from the bound taken from len(src).
    import threading

    objs = [
        [{f"k{i}": i, f"j{i % 7}": f"value-{i}-abcd"} for i in range(400)],
        [{"a": {f"x{i}": {f"y{i}": "https://example.com/" + "z" * (i % 50)}}} for i in range(300)],
        {"k": [f"w{i:05d}" for i in range(20000)]},  # past the id table's limit
    ]
    errs: list[BaseException] = []

    def run() -> None:
        try:
            for mode in MODES:
                for obj in objs:
                    assert fast_enc.dumps_body(obj, parse_mode(mode) if not isinstance(mode, Options) else mode) \
                        in (None, _reference_dumps(obj, mode)), mode
                    opts = parse_mode(mode) if not isinstance(mode, Options) else mode
                    if not fast_enc.columnar_enabled(opts) or not isinstance(obj, list):
                        assert fast_enc.dumps_body(obj, opts) is not None
        except BaseException as e:  # noqa: BLE001
            errs.append(e)

    t = threading.Thread(target=run)
    t.start()
    t.join()
    assert not errs, errs
