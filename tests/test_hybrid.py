"""F7 hybrid containers: nested list / struct / map columns round-trip beside columnar ones."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import qdf_columnar as qdf
from qdf_columnar.format.header import open_body
from qdf_columnar.format.tags import ContainerTag


def _nested(n: int = 40) -> pa.Table:
    rng = np.random.default_rng(0)
    kv = pa.map_(pa.string(), pa.string())
    imp = pa.struct([("id", pa.string()), ("w", pa.int64()), ("ext", kv), ("deals", pa.list_(pa.string()))])
    return pa.table(
        {
            "id": pa.array([f"r{i}" for i in range(n)]),
            "tags": pa.array([[f"t{j}" for j in range(i % 4)] if i % 7 else None for i in range(n)],
                             pa.list_(pa.string())),
            "attrs": pa.array([{"k": str(i), "env": "prod"} if i % 5 else {} for i in range(n)], kv),
            "imp": pa.array(
                [[{"id": f"i{i}", "w": int(w), "ext": {"a": "b"}, "deals": ["x"] * (i % 3)}] for i, w in
                 enumerate(rng.integers(100, 900, n))],
                pa.list_(imp),
            ),
            "lat": pa.array(rng.random(n)),
            "ts": pa.array(np.arange(n) * 1_000_000, pa.timestamp("us", tz="UTC")),
        }
    )


@pytest.mark.parametrize("nested", ["columns", "rows"])
@pytest.mark.parametrize("mode", ["balanced", "compression", "speed"])
def test_nested_table_round_trips(mode: str, nested: str) -> None:
    t = _nested()
    buf = qdf.encode(t, mode=mode, nested=nested)
    if mode != "speed":  # under any entropy pass: F7, or the root array of shredded levels
        root = open_body(buf)[1][5]
        if nested == "rows":
            assert root == ContainerTag.HYBRID_COL_STRUCT
        else:  # a fixarray of level containers (the attrs map adds one level per key)
            assert 0xA0 | 6 <= root <= 0xBF
    got = qdf.decode(buf, output="arrow")
    if mode == "speed":  # row-major maps: nested values come back, types inferred
        assert got.column("id").to_pylist() == t.column("id").to_pylist()
        return
    assert got.equals(t), (got.schema, t.schema)


@pytest.mark.parametrize("nested", ["columns", "rows"])
def test_projection_and_filter_on_hybrid(nested: str) -> None:
    t = _nested(100)
    buf = qdf.encode(t, nested=nested)
    got = qdf.decode(buf, columns=["lat", "id"], output="arrow")
    assert got.column("id").to_pylist() == t.column("id").to_pylist()
    sel = qdf.decode(buf, columns=["id", "attrs"], filter=qdf.col("lat") > 0.5, output="arrow")
    mask = np.asarray(t.column("lat")) > 0.5
    assert sel.column("id").to_pylist() == [x for x, m in zip(t.column("id").to_pylist(), mask) if m]
    assert sel.column("attrs").to_pylist() == [x for x, m in zip(t.column("attrs").to_pylist(), mask) if m]
    with pytest.raises(qdf.QueryError):
        qdf.decode(buf, filter=qdf.col("tags") == "x")


@pytest.mark.parametrize("nested", ["columns", "rows"])
def test_pandas_arrow_dtype_nested_columns(nested: str) -> None:
    t = _nested(20).select(["id", "tags", "attrs"])
    df = t.to_pandas(types_mapper=pd.ArrowDtype)
    got = qdf.decode(qdf.encode(df, nested=nested))
    pd.testing.assert_frame_equal(got, df, check_exact=True)


@pytest.mark.parametrize("nested", ["columns", "rows"])
def test_loads_of_hybrid_gives_records(nested: str) -> None:
    t = _nested(20).select(["id", "tags", "lat"])
    assert qdf.loads(qdf.encode(t, nested=nested)) == t.to_pylist()


@pytest.mark.parametrize("nested", ["columns", "rows"])
def test_hybrid_prefixes_and_mutations(nested: str) -> None:
    buf = qdf.encode(_nested(20), nested=nested)
    for k in range(len(buf)):
        with pytest.raises(qdf.TruncatedError):
            qdf.decode(buf[:k], output="arrow")
    rng = np.random.default_rng(1)
    for pos in rng.integers(5, len(buf), 300):
        bad = bytearray(buf)
        bad[pos] ^= int(rng.integers(1, 256))
        try:
            qdf.decode(bytes(bad), output="arrow")
        except (qdf.DecodeError, qdf.QueryError):
            pass


def test_speed_mode_keeps_maps_as_maps() -> None:
    t = _nested(10).select(["id", "attrs"])
    rows = qdf.loads(qdf.encode(t, mode="speed"))
    assert rows[1]["attrs"] == {"k": "1", "env": "prod"} and rows[0]["attrs"] == {}


def test_duplicate_map_keys_are_refused_not_dropped() -> None:
    t = pa.table({"m": pa.array([[("a", "1"), ("a", "2")]], type=pa.map_(pa.string(), pa.string()))})
    with pytest.raises(qdf.UnsupportedTypeError, match="repeats a key"):
        qdf.encode(t, mode="speed")  # row-major qdf maps, like Go maps, cannot hold them
    with pytest.raises(qdf.UnsupportedTypeError, match="repeats a key"):
        qdf.encode(t, mode="balanced", nested="rows")
    # shredded maps are key and value columns: both entries are kept, in order
    assert qdf.decode(qdf.encode(t), output="arrow").equals(t)
