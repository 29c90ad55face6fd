"""The EF columnar container through the public API: golden vectors, lossless round trips
of every supported dtype, projection, and never-larger integer columns."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from arrow_check import assert_tables_bit_equal
from hypothesis import given
from hypothesis import strategies as st

import qdf_columnar as qdf
from qdf_columnar.format.tags import QPackTag

GOLDEN_16 = bytes.fromhex("51444601 03 ef1000028269640082 6f6b03 e6070002 0210 e310aaaa".replace(" ", ""))
GOLDEN_16_INDEX = bytes.fromhex(
    "51444601 0b ef1000028269640082 6f6b03 06000000 04000000 e6070002 0210 e310aaaa".replace(" ", "")
)


def _batch16() -> dict[str, np.ndarray]:
    ids = np.arange(1, 17, dtype=np.int64)
    return {"id": ids, "ok": ids % 2 == 0}


def test_golden_16_rows_balanced() -> None:
    assert qdf.encode(_batch16(), mode=qdf.Options.BALANCED) == GOLDEN_16


def test_golden_16_rows_with_column_index() -> None:
    assert qdf.encode(_batch16(), mode=qdf.Options.BALANCED | qdf.Options.COLUMN_INDEX) == GOLDEN_16_INDEX
    assert qdf.encode(_batch16(), mode="balanced") == GOLDEN_16_INDEX


@pytest.mark.parametrize("buf", [GOLDEN_16, GOLDEN_16_INDEX])
def test_golden_16_rows_decode(buf: bytes) -> None:
    out = qdf.decode(buf, output="arrow")
    assert out.column("id").to_pylist() == list(range(1, 17))
    assert out.column("ok").to_pylist() == [i % 2 == 0 for i in range(1, 17)]
    assert qdf.decode(buf, columns=["ok"], output="records")[1] == {"ok": True}


@pytest.mark.parametrize("mode", ["balanced", "compression", qdf.Options.BALANCED])
@pytest.mark.parametrize("n", [0, 1, 7, 16, 300])
def test_every_input_shape(mode, n: int) -> None:
    rng = np.random.default_rng(n)
    strs = np.array([f"v{i % 3}" for i in range(n)], dtype=np.str_)
    data = {"a": rng.integers(-5, 5, n), "b": rng.random(n), "s": strs}
    want = pd.DataFrame(data)
    for inp in (want, pa.table(data), pa.record_batch(pa.table(data).to_batches()[0]) if n else pa.table(data),
                data, want.to_dict("records")):
        if isinstance(inp, list) and n == 0:
            continue  # an empty list of dicts has no columns to name
        got = qdf.decode(qdf.encode(inp, mode=mode))
        pd.testing.assert_frame_equal(got, want, check_exact=True)


# ---------------------------------------------------------------- lossless dtypes
INT_TYPES = [pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint16(), pa.uint32(), pa.uint64()]


@st.composite
def int_column(draw, typ: pa.DataType, n: int):
    info = np.iinfo(typ.to_pandas_dtype())
    edge = st.sampled_from([int(info.min), int(info.max), 0, 1, int(info.min) + 1])
    vals = draw(st.lists(st.one_of(st.integers(int(info.min), int(info.max)), edge), min_size=n, max_size=n))
    return vals


@st.composite
def tables(draw):
    n = draw(st.sampled_from([0, 1, 2, 7, 8, 9, 16, 17, 64, 65, 257]))
    nulls = draw(st.booleans())

    def maybe_null(vals):
        if not nulls or n == 0:
            return vals
        mask = draw(st.lists(st.booleans(), min_size=n, max_size=n))
        return [None if m else v for v, m in zip(vals, mask)]

    cols = {}
    for typ in draw(st.lists(st.sampled_from(INT_TYPES), min_size=1, max_size=3, unique_by=str)):
        cols[f"i_{typ}"] = pa.array(maybe_null(draw(int_column(typ, n))), type=typ)
    floats = st.one_of(
        st.floats(allow_nan=True, allow_infinity=True, allow_subnormal=True),
        st.sampled_from([-0.0, 0.0, float("nan"), 5e-324]),
    )
    f64 = np.array(draw(st.lists(floats, min_size=n, max_size=n)), dtype=np.float64)
    if n:  # a NaN with a non-default payload must survive bit for bit
        f64[draw(st.integers(0, n - 1))] = np.frombuffer(b"\x01\x00\x00\x00\x00\x00\xf8\x7f", np.float64)[0]
    cols["f64"] = pa.array(maybe_null(list(f64)), type=pa.float64()) if nulls else pa.array(f64)
    f32 = np.array(draw(st.lists(st.floats(width=32), min_size=n, max_size=n)), dtype=np.float32)
    cols["f32"] = pa.array(maybe_null(list(f32)), type=pa.float32()) if nulls else pa.array(f32)
    cols["b"] = pa.array(maybe_null(draw(st.lists(st.booleans(), min_size=n, max_size=n))), type=pa.bool_())
    text = st.one_of(st.text(max_size=12), st.sampled_from(["", "é", "日本語", "a\x00b", "ERROR"]))
    cols["s"] = pa.array(maybe_null(draw(st.lists(text, min_size=n, max_size=n))), type=pa.string())
    cols["bin"] = pa.array(maybe_null(draw(st.lists(st.binary(max_size=8), min_size=n, max_size=n))), type=pa.binary())
    unit = draw(st.sampled_from(["s", "ms", "us", "ns"]))
    tz = draw(st.sampled_from([None, "UTC", "Europe/Paris", "America/New_York"]))
    ts = draw(st.lists(st.integers(-(2**40), 2**40), min_size=n, max_size=n))
    cols["ts"] = pa.array(maybe_null(ts), type=pa.timestamp(unit, tz=tz))
    return pa.table(cols)


@given(tables())
def test_lossless_round_trip_arrow(table: pa.Table) -> None:
    for mode in ("balanced", "compression"):
        got = qdf.decode(qdf.encode(table, mode=mode), output="arrow")
        assert_tables_bit_equal(got, table)


def test_lossless_pandas_dtypes() -> None:
    df = pd.DataFrame(
        {
            "i8": np.array([-128, 0, 127], dtype=np.int8),
            "u64": np.array([0, 2**64 - 1, 7], dtype=np.uint64),
            "i64": np.array([np.iinfo(np.int64).min, np.iinfo(np.int64).max, 0]),
            "Int64": pd.array([1, None, 3], dtype="Int64"),
            "f32": np.array([1.5, -0.0, np.nan], dtype=np.float32),
            "Float64": pd.array([1.5, None, 2.5], dtype="Float64"),
            "boolean": pd.array([True, None, False], dtype="boolean"),
            "s": ["a", "", "日本"],
            "ts": pd.to_datetime(["2026-01-01", "2026-01-02", None]).tz_localize("Europe/Paris"),
            "td": pd.to_timedelta([1, 2, 3], unit="s"),
            "cat": pd.Categorical(["x", "y", "x"]),
        },
        index=pd.Index([10, 20, 30], name="key"),
    )
    got = qdf.decode(qdf.encode(df))
    pd.testing.assert_frame_equal(got, df, check_exact=True)


def test_no_schema_note_for_default_types() -> None:
    buf = qdf.encode({"a": np.arange(20)}, mode="balanced")
    assert b"__qdf_schema__" not in buf


def test_schema_note_is_hidden() -> None:
    t = pa.table({"a": pa.array([1, 2], type=pa.int32())})
    buf = qdf.encode(t)
    assert b"__qdf_schema__" in buf
    out = qdf.decode(buf, output="arrow")
    assert out.column_names == ["a"] and out.schema.field("a").type == pa.int32()
    with pytest.raises(qdf.QueryError, match="unknown column"):
        qdf.decode(buf, columns=["__qdf_schema__"])


# ---------------------------------------------------------------- projection
def _wide(n: int = 500) -> pd.DataFrame:
    rng = np.random.default_rng(1)
    return pd.DataFrame(
        {
            "id": np.arange(n),
            "code": rng.choice([200, 404, 500], n),
            "lat": rng.random(n),
            "level": rng.choice(["INFO", "WARN", "ERROR"], n),
            "trace": [f"{x:032x}" for x in rng.integers(0, 2**62, n)],
            "user": pd.array([None if i % 3 == 0 else i for i in range(n)], dtype="Int64"),
        }
    )


@pytest.mark.parametrize("column_index", [True, False])
def test_projection(column_index: bool) -> None:
    df = _wide()
    buf = qdf.encode(df, column_index=column_index)
    for cols in (["lat"], ["trace", "id"], ["user"], []):
        got = qdf.decode(buf, columns=cols)
        pd.testing.assert_frame_equal(got, df[cols], check_exact=True)


def test_unknown_column_lists_existing() -> None:
    buf = qdf.encode(_wide())
    with pytest.raises(qdf.QueryError) as err:
        qdf.decode(buf, columns=["nope"])
    assert "nope" in str(err.value) and "'trace'" in str(err.value)


@given(st.lists(st.integers(-(2**63), 2**63 - 1), min_size=0, max_size=300))
def test_integer_columns_never_larger_than_raw(vals: list[int]) -> None:
    from qdf_columnar.codecs.qpack import encode_int_array
    from qdf_columnar.format.varint import uvarint_len

    arr = np.array(vals, dtype=np.int64)
    out = bytearray()
    encode_int_array(out, arr)
    assert len(out) <= 2 + uvarint_len(len(vals)) + 8 * len(vals)
    assert out[0] in {int(t) for t in QPackTag}


def test_a_parsed_schema_note_is_shared_but_each_caller_gets_its_own_containers() -> None:
    from qdf_columnar.wire.schema_note import PREFIX, parse_note

    name = PREFIX + '{"v":1,"types":{"s":"large_string"},"dict":["s"],"pandas":{"index_columns":[]}}'
    first = parse_note(name)
    first.types["s"] = pa.int8()
    first.metadata[b"pandas"] = b"damaged"
    first.dicts.append("t")
    again = parse_note(name)
    assert again.types == {"s": pa.large_string()} and again.dicts == ["s"]
    assert json.loads(again.metadata[b"pandas"]) == {"index_columns": []}
    with pytest.raises(qdf.CorruptDataError):
        parse_note(PREFIX + "{not json")
