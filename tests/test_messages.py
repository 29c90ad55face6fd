"""Messages (``dumps`` / ``loads``): golden vectors, the §7 golden cases, per-field string
deltas (F2), dataclasses / msgspec Structs and the columnar hand-off of record lists."""

from __future__ import annotations

import dataclasses
import datetime as dt
import math

import numpy as np
import pandas as pd
import pytest

import qdf_columnar as qdf
from qdf_columnar.errors import CorruptDataError, TruncatedError
from qdf_columnar.options import Options as O

EU = "89 65 75 2d 77 65 73 74 2d 31"

#: The golden-test dialects of the reference (qdf-wire-v1.md §7) as option sets.
DIALECTS = {
    "fast": O.SPEED,
    "qpack": O.QPACK,
    "dense": O.BALANCED,
    "dense_only": O.DENSE,
    "compression": O.COMPRESSION,
    "balanced_colindex": O.BALANCED | O.COLUMN_INDEX,
    "compression_colindex": O.COMPRESSION | O.COLUMN_INDEX,
    "qpack_gorilla": O.QPACK | O.GORILLA_FLOAT,
    "dense_rans": O.DENSE | O.RANS,
}


def _h(s: str) -> bytes:
    return bytes.fromhex(s.replace(" ", ""))


# ------------------------------------------------------------------ golden vectors (§2.7)
@pytest.mark.parametrize(
    ("value", "mode", "hexbytes"),
    [
        (["eu-west-1"] * 3, "balanced", "51 44 46 01 03 a3 e0 09 65 75 2d 77 65 73 74 2d 31 e8 e8"),
        ({"id": 42, "name": "alice"}, "balanced",
         "51 44 46 01 03 EC 00 02 82 69 64 E0 04 6E 61 6D 65 2A E0 05 61 6C 69 63 65"),
        ({"id": 42, "name": "alice"}, "speed", "51 44 46 01 00 D5 02 82 69 64 2A 84 6E 61 6D 65 85 61 6C 69 63 65"),
        ({"id": 42, "name": "alice"}, O.QPACK, "51 44 46 01 02 D5 02 82 69 64 2A 84 6E 61 6D 65 85 61 6C 69 63 65"),
        ({"a": 7, "b": {"id": 99, "name": "bob"}}, O.QPACK | O.GORILLA_FLOAT,
         "51 44 46 01 02 D5 02 81 61 07 81 62 D5 02 82 69 64 63 84 6E 61 6D 65 83 62 6F 62"),
        (["eu-west-1"] * 4, O.QPACK, "51 44 46 01 02 A4" + (" " + EU) * 4),
    ],
)
def test_golden_vectors(value: object, mode: object, hexbytes: str) -> None:
    buf = qdf.dumps(value, mode=mode)
    assert buf == _h(hexbytes)
    assert qdf.loads(buf) == value


def test_tiny_balanced_is_25_bytes() -> None:
    assert len(qdf.dumps({"id": 42, "name": "alice"}, "balanced")) == 25  # BENCH "Tiny qdf_dense 25"


# ------------------------------------------------------------------ §7 golden cases
def _bigbatch() -> dict:
    return {
        "bools": np.array([True, False] * 4),
        "ids": np.array([1_700_000_000 + i for i in range(4)], dtype=np.uint64),
        "vec": np.array([0.5, 1.0, 1.5, 2.0, 2.5]),
        "tags": ["prod", "prod", "stage", "prod"],
    }


def _struct_batch() -> list[dict]:
    labels = ["alpha", "beta", "gamma", "delta"]
    return [{"id": i + 1, "label": labels[i % 4], "score": i * 0.25, "ok": i % 3 != 0} for i in range(32)]


def _same(a: object, b: object) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(np.asarray(a), np.asarray(b)) and np.asarray(a).dtype.kind == np.asarray(b).dtype.kind
    if isinstance(a, dict):
        return isinstance(b, dict) and list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b and type(a) is type(b)


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
def test_golden_bigbatch_round_trips(dialect: str) -> None:
    opts = DIALECTS[dialect]
    value = _bigbatch()
    back = qdf.loads(qdf.dumps(value, mode=opts))
    assert list(back) == ["bools", "ids", "vec", "tags"]
    assert back["tags"] == value["tags"]
    for k in ("bools", "ids", "vec"):
        assert np.array_equal(np.asarray(back[k]), value[k]), (dialect, k)
    if opts & O.QPACK:  # QPack slices come back as numpy arrays of the same kind
        assert back["ids"].dtype.kind in "iu" and back["vec"].dtype.kind == "f" and back["bools"].dtype == bool


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
def test_golden_struct_batch_round_trips(dialect: str) -> None:
    opts = DIALECTS[dialect]
    rows = _struct_batch()
    buf = qdf.dumps(rows, mode=opts)
    if opts & O.DENSE and opts & O.SHAPE_INTERN:
        assert buf[5] == 0xEF  # §3.4: 32 rows of scalar fields go columnar
        assert bool(buf[4] & 0x08) == bool(opts & O.COLUMN_INDEX)
    assert _same(qdf.loads(buf), rows)
    df = qdf.decode(buf)
    assert isinstance(df, pd.DataFrame) and len(df) == 32
    pd.testing.assert_frame_equal(df, pd.DataFrame(rows), check_dtype=False)


# ------------------------------------------------------------------ F2 string deltas
def _urls(n: int) -> list[dict]:
    return [{"url": f"https://example.com/api/v1/users/{i}/profile", "n": i} for i in range(n)]


@pytest.mark.parametrize("mode", ["balanced", "compression", O.DENSE | O.SHAPE_INTERN])
def test_string_delta_in_repeated_records(mode: object) -> None:
    rows = _urls(10)  # < 16 rows: row-major, shapes
    buf = qdf.dumps(rows, mode=mode)
    assert buf.count(b"\xf2") >= 8
    assert qdf.loads(buf) == rows
    assert len(buf) < len(qdf.dumps(rows, mode=O.DENSE)) * 0.6  # no shapes, no deltas


def test_string_delta_bytes() -> None:
    # Row 0 declares the shape (id 1; "url" and "n" are < 4 bytes: fixstr) and interns its
    # url (id 0); row 1 codes its url against row 0's: 33 bytes kept, "1/profile" appended.
    buf = qdf.dumps(_urls(2), "balanced")
    head = "51444601 03 a2 ec 00 02 83 75726c 81 6e e0 2a" + b"https://example.com/api/v1/users/0/profile".hex()
    assert buf == _h(head + " 00 ec 01 f2 21 09" + b"1/profile".hex() + " 01")


def test_no_delta_outside_lists_and_base_rules() -> None:
    # A lone record has no previous row: plain interning, as the reference.
    assert b"\xf2" not in qdf.dumps({"url": "https://example.com/a"}, "balanced")
    # A container value between two strings forgets the base: the next string is whole.
    rows = [{"f": "https://example.com/aaaa"}, {"f": ["x", "https://example.com/aaab"]}, {"f": "https://example.com/aaac"}]
    buf = qdf.dumps(rows, "balanced")
    assert b"\xf2" not in buf
    assert qdf.loads(buf) == rows
    # Bytes values advance the base like strings (the decoder does), and keep their type.
    rows = [{"f": b"https://example.com/x0"}, {"f": "https://example.com/x1"}, {"f": b"https://example.com/x2"},
            {"f": "https://example.com/x3"}, {"f": None}, {"f": "https://example.com/x4"}]
    buf = qdf.dumps(rows, "balanced")
    assert buf.count(b"\xf2") == 3
    assert qdf.loads(buf) == rows


def test_string_delta_gate_mutes_and_rearms() -> None:
    rnd = np.random.default_rng(7)
    junk = ["".join(chr(97 + c) for c in rnd.integers(0, 26, 12)) for _ in range(40)]
    similar = [f"https://example.com/path/{i:04d}" for i in range(600)]
    rows = [{"s": v} for v in junk + similar]
    buf = qdf.dumps(rows, O.DENSE | O.SHAPE_INTERN)  # no columnar: stays row-major
    assert qdf.loads(buf) == rows
    # Muted after 32 losing probes; probing resumes 512 values later and wins again.
    assert 0 < buf.count(b"\xf2") < len(similar)


def test_stray_or_bad_deltas_are_corrupt() -> None:
    with pytest.raises(CorruptDataError, match="outside a map-shape field"):
        qdf.loads(_h("51444601 03 a1 f2 00 00"))
    # Shape {k}, value "abcd"; second row keeps 9 bytes of a 4-byte base.
    with pytest.raises(CorruptDataError, match="keeps 9 bytes"):
        qdf.loads(_h("51444601 03 a2 ec 00 01 816b e0 04 61626364 ec 01 f2 09 00"))
    with pytest.raises(TruncatedError):
        qdf.loads(_h("51444601 03 a2 ec 00 01 816b e0 04 61626364 ec 01 f2 02 05 6566"))
    # A valid delta against the field's previous value.
    assert qdf.loads(_h("51444601 03 a2 ec 00 01 816b e0 04 61626364 ec 01 f2 02 02 7879")) == [
        {"k": "abcd"}, {"k": "abxy"}]


# ------------------------------------------------------------------ dataclasses / Structs
@dataclasses.dataclass
class Power:
    id: int
    name: str
    passive: bool = False


@dataclasses.dataclass
class Hero:
    id: int
    name: str
    life: float
    powers: list[Power]
    born: dt.datetime | None = None


def _hero() -> Hero:
    return Hero(1, "Wolverine", 85.25, [Power(1, "Regeneration", True), Power(2, "Claws")],
                dt.datetime(1974, 10, 1, tzinfo=dt.timezone.utc))


@pytest.mark.parametrize("mode", ["speed", "balanced", "compression"])
def test_dataclass_encodes_as_a_map(mode: str) -> None:
    hero = _hero()
    back = qdf.loads(qdf.dumps(hero, mode=mode))
    assert back == dataclasses.asdict(hero)
    assert list(back) == ["id", "name", "life", "powers", "born"]


def test_msgspec_struct_encodes_as_a_map() -> None:
    msgspec = pytest.importorskip("msgspec")

    class Point(msgspec.Struct):
        x: int
        y: float
        tag: str = "p"

    assert qdf.loads(qdf.dumps(Point(1, 2.5), "balanced")) == {"x": 1, "y": 2.5, "tag": "p"}
    pts = [Point(i, i / 2) for i in range(20)]
    buf = qdf.dumps(pts, "balanced")
    assert buf[5] == 0xEF  # a list of one Struct type is a []struct: columnar
    assert qdf.loads(buf) == [{"x": i, "y": i / 2, "tag": "p"} for i in range(20)]


def test_list_of_dataclasses_goes_columnar() -> None:
    rows = [Power(i, f"p{i % 3}", i % 2 == 0) for i in range(40)]
    buf = qdf.dumps(rows, "balanced")
    assert buf[5] == 0xEF
    assert qdf.loads(buf) == [dataclasses.asdict(r) for r in rows]
    assert len(qdf.decode(buf)) == 40


def test_floats_and_special_values_round_trip_every_mode() -> None:
    value = {"nan": math.nan, "neg0": -0.0, "inf": math.inf, "f32": np.float32(1.5), "big": 2**64 - 1,
             "small": -(2**63), "b": b"\x00\xff", "none": None, "t": dt.datetime(2020, 1, 1, tzinfo=dt.timezone.utc)}
    for mode in ("speed", "balanced", "compression"):
        back = qdf.loads(qdf.dumps(value, mode=mode))
        assert math.isnan(back["nan"]) and math.copysign(1, back["neg0"]) < 0 and back["inf"] == math.inf
        assert type(back["f32"]) is np.float32 and back["f32"] == 1.5
        assert {k: back[k] for k in ("big", "small", "b", "none", "t")} == {
            k: value[k] for k in ("big", "small", "b", "none", "t")}


# ------------------------------------------------------------------ fast and Python paths in one stream
@pytest.mark.parametrize("mode", ["speed", "balanced", "compression"])
def test_stream_mixing_fast_python_and_failed_messages(mode: str) -> None:
    import io

    rows = _struct_batch()
    messages = [
        {"url": "https://example.com/a/1", "n": 1},  # fast path (transcoder)
        rows,  # a columnar list in balanced: the Python columnar writer, sharing the state
        [{"url": f"https://example.com/a/{i}", "n": i} for i in range(5)],  # fast, with deltas
        {"arr": np.arange(40, dtype=np.int64), "url": "https://example.com/a/1"},  # QPack slice
        _hero(),  # a dataclass
        {"url": "https://example.com/a/1", "labels": ["alpha", "beta", "gamma"]},  # refs to earlier ids
    ]
    sink = io.BytesIO()
    with qdf.StreamWriter(sink, mode=mode) as w:
        for i, m in enumerate(messages):
            w.write(m)
            if i == 2:
                with pytest.raises(qdf.UnsupportedTypeError):
                    w.write({"url": "https://example.com/never/seen", "bad": object()})
    back = list(qdf.StreamReader(sink.getvalue()))
    assert len(back) == len(messages)
    assert back[0] == messages[0] and back[2] == messages[2] and back[5] == messages[5]
    assert _same(back[1], rows)
    assert np.array_equal(np.asarray(back[3]["arr"]), messages[3]["arr"]) and back[3]["url"] == messages[3]["url"]
    assert back[4] == dataclasses.asdict(messages[4])


# ------------------------------------------------------------------ §3.4: columnar only when 10 % smaller
def _record_lists() -> list[list[dict]]:
    rnd = np.random.default_rng(11)
    hexes = [bytes(rnd.integers(0, 256, 24, dtype=np.uint8)).hex() for _ in range(64)]
    return [
        _struct_batch(),
        [{"id": i, "ok": i % 2 == 0} for i in range(1, 17)],
        [{"token": hexes[i]} for i in range(16)],  # unique strings: little for a column to gain
        [{"k": "same value here", "v": "same value here"} for _ in range(20)],
        [{"t": hexes[i % 4], "n": int(rnd.integers(0, 1 << 40))} for i in range(64)],
        # distinct text over a wide alphabet: a column has nothing to gain over rows
        [{"s": "".join(chr(c) for c in rnd.integers(0x4E00, 0x9FFF, 20))} for _ in range(16)],
    ]


@pytest.mark.parametrize("mode", ["balanced", "compression"])
def test_record_lists_go_columnar_only_when_10_percent_smaller(mode: str) -> None:
    from qdf_columnar.options import parse_mode
    from qdf_columnar.wire.fast_enc import dumps_body

    kinds = set()
    for rows in _record_lists():
        buf = qdf.dumps(rows, mode=mode)
        row_major = dumps_body(rows, parse_mode(mode), row_major=True)
        assert row_major is not None and row_major[5] != 0xEF
        assert qdf.loads(buf) == rows and qdf.loads(row_major) == rows
        if buf[5] == 0xEF:
            assert len(buf) <= 0.90 * len(row_major)
            kinds.add("columnar")
        else:
            assert buf == row_major
            kinds.add("rows")
    assert kinds == {"columnar", "rows"}  # both outcomes exercised


def test_msgspec_rename_writes_encoded_names() -> None:
    msgspec = pytest.importorskip("msgspec")

    class Event(msgspec.Struct, rename="camel"):
        user_id: int
        event_name: str

    ev = Event(7, "login")
    for mode in ("speed", "balanced"):
        buf = qdf.dumps(ev, mode=mode)
        assert qdf.loads(buf) == msgspec.json.decode(msgspec.json.encode(ev)) == {"userId": 7, "eventName": "login"}
        assert qdf.loads(buf, type=Event) == ev
    rows = [Event(i, f"e{i % 3}") for i in range(20)]
    buf = qdf.dumps(rows, "balanced")
    assert qdf.loads(buf, type=list[Event]) == rows
    assert list(qdf.decode(buf).columns) == ["userId", "eventName"]
