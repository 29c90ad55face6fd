"""Nested columns shredded into columnar levels (docs/FORMAT.md Part 3)."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import qdf_columnar as qdf
from qdf_columnar.format.header import open_body
from qdf_columnar.format.reader import ByteReader
from qdf_columnar.format.tags import HEADER_SIZE
from qdf_columnar.wire.context import DecodeContext
from qdf_columnar.wire.values import read_value

# ---------------------------------------------------------------- strategies

_LEAVES = [
    (pa.int64(), st.integers(-(2**63), 2**63 - 1)),
    (pa.int8(), st.integers(-128, 127)),
    (pa.uint32(), st.integers(0, 2**32 - 1)),
    (pa.float64(), st.floats(allow_nan=False)),
    (pa.float32(), st.floats(width=32, allow_nan=False)),
    (pa.bool_(), st.booleans()),
    (pa.string(), st.text(max_size=6)),
    (pa.binary(), st.binary(max_size=5)),
    (pa.timestamp("us", tz="Europe/Paris"),
     st.datetimes(min_value=dt.datetime(1900, 1, 1), max_value=dt.datetime(2200, 1, 1),
                  timezones=st.just(dt.timezone.utc))),
]


@st.composite
def _typed(draw, depth: int = 0):
    """(Arrow type, strategy of its Python values, nulls included)."""
    choices = ["leaf"] if depth >= 3 else ["leaf", "list", "large_list", "struct", "map", "fixed"]
    kind = draw(st.sampled_from(choices))
    if kind == "leaf":
        typ, values = draw(st.sampled_from(_LEAVES))
        return typ, st.one_of(st.none(), values)
    if kind == "map":
        vt, vs = draw(_typed(depth + 1))
        keys = st.text(max_size=3)
        return pa.map_(pa.string(), vt), st.one_of(
            st.none(), st.dictionaries(keys, vs, max_size=3).map(lambda d: list(d.items())))
    if kind == "struct":
        n = draw(st.integers(1, 3))
        fields = [draw(_typed(depth + 1)) for _ in range(n)]
        typ = pa.struct([pa.field(f"f{i}", t) for i, (t, _) in enumerate(fields)])
        return typ, st.one_of(st.none(), st.fixed_dictionaries({f"f{i}": s for i, (_, s) in enumerate(fields)}))
    vt, vs = draw(_typed(depth + 1))
    if kind == "fixed":
        return pa.list_(vt, 2), st.one_of(st.none(), st.lists(vs, min_size=2, max_size=2))
    typ = pa.list_(vt) if kind == "list" else pa.large_list(vt)
    return typ, st.one_of(st.none(), st.lists(vs, max_size=4))


@st.composite
def nested_tables(draw):
    n = draw(st.sampled_from([0, 1, 7, 8, 9, 17, 40]))
    cols = {}
    for i in range(draw(st.integers(1, 3))):
        typ, values = draw(_typed())
        cols[f"c{i}"] = pa.array(draw(st.lists(values, min_size=n, max_size=n)), type=typ)
    cols["k"] = pa.array(np.arange(n, dtype=np.int64))
    return pa.table(cols)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(nested_tables(), st.sampled_from(["balanced", "compression"]))
def test_any_nested_table_round_trips_exactly(t: pa.Table, mode: str) -> None:
    buf = qdf.encode(t, mode=mode)
    got = qdf.decode(buf, output="arrow")
    assert got.schema == t.schema
    assert got.equals(t), (t.to_pylist(), got.to_pylist())
    # a slice (non-zero array offsets everywhere) round-trips too
    if t.num_rows > 2:
        s = t.slice(1, t.num_rows - 2)
        assert qdf.decode(qdf.encode(s, mode=mode), output="arrow").equals(s.combine_chunks())


# ---------------------------------------------------------------- fixtures


def _logs(n: int = 300) -> pa.Table:
    rng = np.random.default_rng(7)
    level = rng.choice(["INFO", "WARN", "ERROR"], n)
    fields = [[("user", f"u{i % 13}"), ("region", "eu")][: i % 3] for i in range(n)]
    return pa.table({
        "code": pa.array(rng.integers(100, 600, n)),
        "level": pa.array(level),
        "fields": pa.array(fields, pa.map_(pa.string(), pa.string())),
        "spans": pa.array([[{"id": f"s{i}", "ms": float(i) / 3, "tags": ["a"] * (i % 4)}] * (i % 2) for i in range(n)]),
        "geo": pa.array([None if i % 11 == 0 else {"lat": i / 7, "country": "FR"} for i in range(n)]),
    })


def test_fixture_like_table_is_shredded_and_smaller_than_rows() -> None:
    t = _logs()
    cols, rows = qdf.encode(t, mode="balanced"), qdf.encode(t, mode="balanced", nested="rows")
    assert len(cols) < len(rows)
    assert qdf.decode(cols, output="arrow").equals(t)


def test_select_and_filter_on_shredded() -> None:
    t = _logs()
    buf = qdf.encode(t)
    got = qdf.decode(buf, columns=["spans", "code"], output="arrow")
    assert got.column_names == ["spans", "code"]
    assert got.column("spans").equals(t.column("spans")) and got.column("code").equals(t.column("code"))
    f = (qdf.col("code") >= 500) & (qdf.col("level") == "ERROR")
    got = qdf.decode(buf, columns=["fields", "geo", "spans"], filter=f, output="arrow")
    mask = (np.asarray(t.column("code")) >= 500) & (np.asarray(t.column("level")) == "ERROR")
    want = t.filter(pa.array(mask)).select(["fields", "geo", "spans"])
    assert got.equals(want)
    assert qdf.decode(buf, columns=[], filter=f, output="arrow").num_rows == int(mask.sum())
    with pytest.raises(qdf.QueryError, match="unknown column"):
        qdf.decode(buf, columns=["nope"])
    with pytest.raises(qdf.QueryError):
        qdf.decode(buf, filter=qdf.col("geo") == 1)


def test_without_column_index_and_with_zone_maps() -> None:
    t = _logs(2000)
    for mode in (qdf.Options.BALANCED, qdf.Options.BALANCED | qdf.Options.ZONE_MAP):
        buf = qdf.encode(t, mode=mode)
        assert qdf.decode(buf, output="arrow").equals(t)
        got = qdf.decode(buf, columns=["spans"], filter=qdf.col("code") < 120, output="arrow")
        assert got.column("spans").equals(t.filter(pa.compute.less(t.column("code"), 120)).column("spans"))


def test_pandas_round_trip_with_index_and_arrow_dtypes() -> None:
    t = _logs(50)
    df = t.to_pandas(types_mapper=pd.ArrowDtype)
    df.index = pd.Index([f"r{i}" for i in range(len(df))], name="rid")
    got = qdf.decode(qdf.encode(df))
    pd.testing.assert_frame_equal(got, df, check_exact=True)
    got = qdf.decode(qdf.encode(df), columns=["geo"])  # the index comes along
    pd.testing.assert_frame_equal(got, df[["geo"]], check_exact=True)


def test_a_plain_v1_reader_sees_the_levels(monkeypatch) -> None:
    monkeypatch.setattr("qdf_columnar.api.SMALL_NESTED_ROWS", 0)  # shred even 3 rows
    t = pa.table({"id": [1, 2, 3], "l": pa.array([[1, 2], None, [3]])})
    flags, plain = open_body(qdf.encode(t))
    levels = read_value(ByteReader(plain, HEADER_SIZE), DecodeContext(flags=flags))
    assert [len(level) for level in levels] == [3, 3]
    assert [row["l"] for row in levels[0]] == [2, None, 1]  # list lengths, null for a null list
    assert [row["l[]"] for row in levels[1]] == [1, 2, 3]
    assert qdf.loads(qdf.encode(t)) == t.to_pylist()  # loads reassembles the rows


def test_generated_names_never_collide_with_flat_columns(monkeypatch) -> None:
    monkeypatch.setattr("qdf_columnar.api.SMALL_NESTED_ROWS", 0)
    t = pa.table({"s.a": [9, 8], "s": pa.array([{"a": 1}, {"a": 2}]), "l[]": ["x", "y"], "l": [[1], [2]]})
    got = qdf.decode(qdf.encode(t), output="arrow")
    assert got.equals(t)
    assert "s.a~1" in qdf.explain(qdf.encode(t))["column"].tolist()


def test_unshreddable_nested_types_fall_back_to_the_hybrid_container() -> None:
    import decimal

    t = pa.table({"e": pa.array([[{}], [], None], pa.list_(pa.struct([])))})  # no columns to shred into
    buf = qdf.encode(t)
    assert open_body(buf)[1][HEADER_SIZE] == 0xF7
    assert qdf.decode(buf, output="arrow").equals(t)
    t = pa.table({"d": pa.array([[decimal.Decimal("1.5")], []], pa.list_(pa.decimal128(5, 2)))})
    assert qdf.decode(qdf.encode(t), output="arrow").equals(t)  # decimal leaves shred as scaled ints
    for kw in ({"nested": "rows"}, {"mode": "speed"}):  # row-major: the leaves as their integer storage
        assert qdf.decode(qdf.encode(t, **kw), output="arrow").equals(t)
    with pytest.raises(qdf.InvalidOptionError):
        qdf.encode(t, nested="sideways")


def test_empty_and_all_null_nested_columns() -> None:
    typ = pa.list_(pa.struct([("a", pa.int64()), ("m", pa.map_(pa.string(), pa.float64()))]))
    for t in (pa.table({"x": pa.array([], typ)}), pa.table({"x": pa.array([None] * 5, typ)}),
              pa.table({"x": pa.array([[]] * 5, typ)})):
        assert qdf.decode(qdf.encode(t), output="arrow").equals(t)


# Truncations and byte mutations of shredded buffers: tests/test_hybrid.py
# (test_hybrid_prefixes_and_mutations runs for nested="columns" and "rows").


def test_pandas_output_keeps_arrow_only_types_in_arrow() -> None:
    t = pa.table({"l": pa.array([[1], None]), "b": pa.array([b"\x00", None]), "s": ["a", "b"]})
    df = qdf.decode(qdf.encode(t))
    assert df["l"].dtype == pd.ArrowDtype(pa.list_(pa.int64())) and df["b"].dtype == pd.ArrowDtype(pa.binary())
    assert df["l"].tolist()[0] == [1]
    src = pd.DataFrame({"b": [b"\x00", None], "o": [[1], [2]]})  # a DataFrame keeps its own dtypes
    back = qdf.decode(qdf.encode(src))
    assert back["b"].dtype == object and back["o"].dtype == object
    assert back["b"].tolist() == [b"\x00", None] and [list(v) for v in back["o"]] == [[1], [2]]


def test_small_nested_batches_keep_the_smaller_layout() -> None:
    one = pa.table({"id": ["x"], "tags": pa.array([{"a": [1, 2], "b": {"c": "d"}}])})
    got = qdf.encode(one)
    assert len(got) == min(len(qdf.encode(one, nested="rows")), len(got))
    assert open_body(got)[1][HEADER_SIZE] == 0xF7  # one row: the row-major hybrid is smaller
    assert qdf.decode(got, output="arrow").equals(one)
    many = pa.concat_tables([one] * 200)
    assert open_body(qdf.encode(many))[1][HEADER_SIZE] != 0xF7  # past 64 rows: always shredded


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n=st.integers(65, 300),
    keys=st.lists(st.text(min_size=0, max_size=4), min_size=2, max_size=6, unique=True),
    value_type=st.sampled_from([pa.string(), pa.int64(), pa.float64(), pa.binary()]),
    seed=st.integers(0, 2**32 - 1),
)
def test_map_values_split_by_key_round_trip(n: int, keys: list[str], value_type: pa.DataType, seed: int) -> None:
    rng = np.random.default_rng(seed)

    def value(i: int):
        if rng.random() < 0.1:
            return None
        if pa.types.is_string(value_type):
            return f"v{i % 7}"
        if pa.types.is_binary(value_type):
            return bytes([i % 256])
        return int(i) if pa.types.is_integer(value_type) else float(i) / 3

    rows = []
    for i in range(n):
        r = rng.random()
        if r < 0.05:
            rows.append(None)
        else:
            ks = rng.permutation(keys)[: rng.integers(0, len(keys) + 1)]
            rows.append([(str(k), value(i)) for k in ks])
    t = pa.table({"m": pa.array(rows, pa.map_(pa.string(), value_type)), "i": np.arange(n)})
    buf = qdf.encode(t)
    got = qdf.decode(buf, output="arrow")
    assert got.equals(t)
    s = t.slice(3, n - 5)
    assert qdf.decode(qdf.encode(s), output="arrow").equals(s.combine_chunks())
    assert qdf.decode(buf, columns=["m"], filter=qdf.col("i") < 20, output="arrow").column("m").equals(
        t.column("m").slice(0, 20))


def test_split_map_levels_are_named_by_key_and_checked() -> None:
    t = pa.table({"attrs": pa.array([[("env", "prod"), ("id", f"E{i}")] for i in range(100)],
                                    pa.map_(pa.string(), pa.string()))})
    ex = qdf.explain(qdf.encode(t))
    assert {"attrs.key", "attrs.value[env]", "attrs.value[id]"} <= set(ex["column"])
    from qdf_columnar.wire.schema_note import _shred_layout

    with pytest.raises(ValueError):
        _shred_layout({"levels": 1, "columns": [["attrs", None]], "split": {"attrs": ["a", "b"]}})


def test_a_flat_column_named_like_a_split_key_column_stays_plain() -> None:
    # "attrs.key" is both a flat level-0 column and the split map's key column at level 1
    t = pa.table({"attrs.key": ["a", "b"] * 50,
                  "attrs": pa.array([[("env", "prod"), ("id", f"E{i}")] for i in range(100)],
                                    pa.map_(pa.string(), pa.string()))})
    got = qdf.decode(qdf.encode(t), output="arrow")
    assert got.equals(t)
