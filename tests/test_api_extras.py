"""Public API odds and ends: doctests, no_copy views, output kinds, option validation."""

from __future__ import annotations

import doctest
from decimal import Decimal

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import qdf_columnar as qdf
from qdf_columnar import api


def test_doctests() -> None:
    res = doctest.testmod(api, raise_on_error=False)
    assert res.attempted > 0 and res.failed == 0


def test_no_copy_float_column_is_a_view() -> None:
    vals = np.random.default_rng(0).random(1000)
    # Raw floats (the reference's balanced picker): the balanced preset would take ALP-RD.
    buf = qdf.encode({"x": vals}, mode="balanced", go_compatible=True)
    out = qdf.decode(buf, output="arrow", no_copy=True)
    addr = out.column("x").chunk(0).buffers()[1].address
    base = np.frombuffer(buf, dtype=np.uint8).ctypes.data
    assert base <= addr < base + len(buf)
    np.testing.assert_array_equal(out.column("x").to_numpy(), vals)
    copied = qdf.decode(buf, output="arrow")
    assert not base <= copied.column("x").chunk(0).buffers()[1].address < base + len(buf)


def test_output_kinds() -> None:
    df = pd.DataFrame({"a": pd.array([1, None, 3], dtype="Int64"), "s": ["x", None, "z"]})
    buf = qdf.encode(df)
    num = qdf.decode(buf, output="numpy")
    assert isinstance(num["a"], np.ma.MaskedArray) and num["a"].mask.tolist() == [False, True, False]
    assert num["a"][0] == 1
    assert qdf.decode(buf, output="records") == [{"a": 1, "s": "x"}, {"a": None, "s": None}, {"a": 3, "s": "z"}]
    assert isinstance(qdf.decode(buf, output="arrow"), pa.Table)
    with pytest.raises(qdf.QueryError):
        qdf.decode(buf, output="polars")



@pytest.mark.parametrize("nested", ["columns", "rows"])
def test_numpy_output_of_nullable_nested_columns(nested: str) -> None:
    # No fill value exists for a list, struct or map under the mask: they come back as
    # object masked arrays (this raised ArrowTypeError, found by the decode fuzzer).
    t = pa.table({
        "lst": pa.array([[1], None, [2, 3]]),
        "st": pa.array([{"x": 1}, None, {"x": 2}]),
        "mp": pa.array([[("k", 1)], None, []], type=pa.map_(pa.string(), pa.int64())),
        "dec": pa.array([Decimal("1.5"), None, Decimal("-2.25")]),
    })
    num = qdf.decode(qdf.encode(t, nested=nested), output="numpy")
    for name in t.column_names:
        col = num[name]
        assert isinstance(col, np.ma.MaskedArray) and col.mask.tolist() == [False, True, False], name
    assert list(num["lst"][0]) == [1] and list(num["lst"][2]) == [2, 3]
    assert num["st"][2] == {"x": 2} and num["mp"][0] == [("k", 1)]
    assert num["dec"][2] == Decimal("-2.25")


def test_bad_inputs_and_options() -> None:
    with pytest.raises(qdf.InvalidOptionError):
        qdf.encode({"a": [1]}, mode="fastest")
    with pytest.raises(qdf.UnsupportedTypeError):
        qdf.encode(42)
    with pytest.raises(qdf.UnsupportedTypeError) as err:  # decimals are stored as scaled int64
        qdf.encode(pa.table({"d": pa.array([Decimal("1.25"), Decimal("1e30")], pa.decimal128(38, 2))}))
    assert "'d'" in str(err.value) and "row 1" in str(err.value) and "64 bits" in str(err.value)
    with pytest.raises(qdf.DecodeError):
        qdf.decode("not bytes")  # type: ignore[arg-type]
    with pytest.raises(qdf.DecodeError):
        qdf.decode(qdf.dumps({"a": 1}))  # a map, not a table


def test_speed_mode_is_row_major_and_decodes() -> None:
    df = pd.DataFrame({"a": [1, 2, 3], "s": ["x", "y", "z"]})
    buf = qdf.encode(df, mode="speed")
    assert buf[5] == 0xA3  # fixarray of 3 maps
    pd.testing.assert_frame_equal(qdf.decode(buf), df)
    rows = qdf.loads(buf)  # plain maps; the first one also carries the schema note as a nil-valued key
    note = [k for k in rows[0] if k.startswith("__qdf_schema__")]
    assert len(note) == 1 and rows[0].pop(note[0]) is None
    assert rows == [{"a": 1, "s": "x"}, {"a": 2, "s": "y"}, {"a": 3, "s": "z"}]


def test_categories_decode_dictionary_columns_without_expanding() -> None:
    t = pa.table({"level": ["INFO", "WARN", "INFO", None] * 50, "id": [f"{i:08x}" for i in range(200)],
                  "n": list(range(200))})
    buf = qdf.encode(t)
    got = qdf.decode(buf, categories=["level"], output="arrow")
    assert pa.types.is_dictionary(got.schema.field("level").type)
    assert got.column("level").to_pylist() == t.column("level").to_pylist()
    assert got.column("id").type == pa.string()
    df = qdf.decode(buf, categories=True)
    assert isinstance(df["level"].dtype, pd.CategoricalDtype) and isinstance(df["id"].dtype, pd.CategoricalDtype)
    assert df["level"].astype(object).where(df["level"].notna(), None).tolist() == t.column("level").to_pylist()
    sel = qdf.decode(buf, categories=["level"], filter=qdf.col("n") < 3, output="arrow")
    assert sel.column("level").to_pylist() == ["INFO", "WARN", "INFO"]
    with pytest.raises(qdf.QueryError, match="not a string column"):
        qdf.decode(buf, categories=["n"])
    with pytest.raises(qdf.QueryError, match="not a flat column"):
        qdf.decode(buf, categories=["nope"])
    rows = qdf.dumps([{"a": "x"}, {"a": "y"}], mode="speed")
    assert pa.types.is_dictionary(qdf.decode(rows, categories=["a"], output="arrow").schema.field("a").type)
    nested = qdf.encode(pa.table({"s": ["a", "b"], "l": [[1], [2]]}))
    got = qdf.decode(nested, categories=True, output="arrow")
    assert pa.types.is_dictionary(got.schema.field("s").type) and got.column("l").to_pylist() == [[1], [2]]
