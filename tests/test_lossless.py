"""Nothing lost, nothing untyped: awkward pandas inputs round-trip exactly or raise a typed error.

Each case is a DataFrame that once did not come back identical (or raised an untyped
error). Every exact case goes through ``encode``/``decode`` in all three modes and
through ``df.to_qdf(path)`` / ``read_qdf``, checked with
``assert_frame_equal(check_exact=True)``.
"""

from __future__ import annotations

import datetime
import decimal
import io
import uuid

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import qdf_columnar as qdf

D = decimal.Decimal
MODES = ("speed", "balanced", "compression")


def _paths(df: pd.DataFrame, tmp_path) -> dict[str, pd.DataFrame]:
    out = {m: qdf.decode(qdf.encode(df, mode=m)) for m in MODES}
    path = tmp_path / "x.qdf"
    df.to_qdf(path)
    out["file"] = qdf.read_qdf(path)
    return out


def _frames() -> dict[str, pd.DataFrame]:
    ts = pd.to_datetime(["2020-01-01", "2020-01-02"])
    return {
        "object column index": pd.DataFrame({"a": [1, 2]}, columns=pd.Index(["a"], dtype=object)),
        "int labels": pd.DataFrame([[1, 2], [3, 4]]),
        "float and bool labels": pd.DataFrame([[1, 2, 3]], columns=pd.Index([1.5, True, None], dtype=object)),
        "timestamp labels": pd.DataFrame([[1, 2]], columns=ts),
        "bytes labels": pd.DataFrame([[1, 2]], columns=[b"a", b"b"]),
        "named column index": pd.DataFrame({"a": [1]}).rename_axis(columns="field"),
        "column multiindex": pd.DataFrame(
            [[1, 2, 3]], columns=pd.MultiIndex.from_tuples([("a", 1), ("a", 2), ("b", 1)], names=["k", "n"])),
        "object lists": pd.DataFrame({"a": [[1, 2], [], None, [3.5, "x"]]}),
        "object dicts": pd.DataFrame({"a": [{"x": 1}, {"y": 2.5, "x": None}, {1: "int key"}]}),
        "object tuples and sets": pd.DataFrame({"a": [(1, 2), (3,), {4, 5}, frozenset([6])]}),
        "object nested": pd.DataFrame({"a": [{"k": [(1, b"b"), {"z": D("1.5")}]}, [ts[0], datetime.date(2020, 1, 1)]]}),
        "object mixed scalars": pd.DataFrame({"a": [1, "x", 2.5, True, None, b"y"]}),
        "object ints with nulls": pd.DataFrame({"a": pd.Series([1, None, 3], dtype=object)}),
        "object floats with nan": pd.DataFrame({"a": pd.Series([1.5, np.nan], dtype=object)}),
        "object mixed null markers": pd.DataFrame({"a": pd.Series(["x", None, np.nan, pd.NA], dtype=object)}),
        "object strings": pd.DataFrame({"a": pd.Series(["x", None, "y"], dtype=object)}),
        "object dates": pd.DataFrame({"a": [datetime.date(2020, 1, 1), None]}),
        "object datetimes": pd.DataFrame({"a": pd.Series([datetime.datetime(2020, 1, 1, 5), None], dtype=object)}),
        "python strings": pd.DataFrame({"a": pd.array(["x", None], dtype=pd.StringDtype("python")),
                                        "b": pd.array(["y", None], dtype=pd.StringDtype("python", na_value=np.nan))}),
        "categorical ints": pd.DataFrame({"a": pd.Categorical([3, 1, 3])}),
        "categorical floats unused": pd.DataFrame({"a": pd.Categorical([1.5, None], categories=[2.5, 1.5, 9.0])}),
        "categorical ordered strings": pd.DataFrame(
            {"a": pd.Categorical(["b", "a"], categories=["b", "a", "z"], ordered=True)}),
        "categorical datetimes tz": pd.DataFrame({"a": pd.Categorical(pd.to_datetime(["2020-01-01", None]).tz_localize(
            "Europe/Paris"))}),
        "categorical int32 categories": pd.DataFrame({"a": pd.Categorical.from_codes(
            [0, 1, -1], dtype=pd.CategoricalDtype(pd.Index([7, 9], dtype="int32")))}),
        "arrow dictionary": pd.DataFrame(
            {"a": pd.Series(["x", "y", "x"], dtype=pd.ArrowDtype(pa.dictionary(pa.int32(), pa.string())))}),
        "decimal128": pd.DataFrame({"a": pd.Series([D("1.25"), None, D("-3.00")], dtype=pd.ArrowDtype(
            pa.decimal128(10, 2)))}),
        "decimal256": pd.DataFrame({"a": pd.Series([D("1.25"), D("99999999.99")], dtype=pd.ArrowDtype(
            pa.decimal256(50, 2)))}),
        "decimal64": pd.DataFrame({"a": pd.Series([D("1.250"), None, D("-999999.999")], dtype=pd.ArrowDtype(
            pa.decimal64(12, 3)))}) if hasattr(pa, "decimal64") else None,
        "decimal32": pd.DataFrame({"a": pd.Series([D("1.25"), None, D("-999.99")], dtype=pd.ArrowDtype(
            pa.decimal32(5, 2)))}) if hasattr(pa, "decimal32") else None,
        "fixed-size binary": pd.DataFrame({"a": pd.Series([b"abc", None, b"\x00\x00\x00"], dtype=pd.ArrowDtype(
            pa.binary(3)))}),
        "fixed-size binary objects": pd.DataFrame({"a": pa.array([b"ab", None], pa.binary(2)).to_pandas()}),
        "object decimals": pd.DataFrame({"a": [D("1.25"), D("-3.50"), None]}),
        "object decimals mixed exponents": pd.DataFrame({"a": [D("1.5"), D("1.25"), D("NaN"), D("1e40")]}),
        "period": pd.DataFrame({"a": pd.Series(pd.period_range("2020-01", periods=3, freq="M")).where(
            lambda s: s.index != 1)}),
        "interval": pd.DataFrame({"a": pd.interval_range(0, 3, closed="left"), "b": pd.interval_range(
            pd.Timestamp("2020-01-01"), periods=3, freq="D")}),
        "period in row multiindex": pd.DataFrame(
            {"v": [1, 2]}, index=pd.MultiIndex.from_arrays([pd.period_range("2020", periods=2, freq="Y"), [1, 2]])),
        "row index of mixed types": pd.DataFrame({"v": [1, 2]}, index=pd.Index([1, "a"], name="k")),
        "row multiindex with a mixed level": pd.DataFrame(
            {"v": [1, 2]}, index=pd.MultiIndex.from_arrays([pd.Index([1, "a"]), [0.5, 1.5]], names=["m", None])),
        "row index of lists": pd.DataFrame({"v": [1, 2]}, index=pd.Index([[1], [2, 3]], dtype=object)),
        "row index of object strings": pd.DataFrame({"v": [1, 2]}, index=pd.Index(["a", "b"], dtype=object, name="k")),
        "sparse ints": pd.DataFrame({"a": pd.arrays.SparseArray([0, 0, 1, 0])}),
        "sparse floats block": pd.DataFrame({"a": pd.arrays.SparseArray([np.nan, 2.0, np.nan], kind="block")}),
        "uuid": pd.DataFrame({"u": pd.Series([uuid.UUID(int=7).bytes, None], dtype=pd.ArrowDtype(pa.uuid()))}),
        "nested arrow dtypes": pd.DataFrame({
            "m": pd.Series([[("k", 1)], []], dtype=pd.ArrowDtype(pa.map_(pa.string(), pa.int64()))),
            "l": pd.Series([[{"x": 1}], None], dtype=pd.ArrowDtype(pa.list_(pa.struct([("x", pa.int64())])))),
            "i": [1, 2],
        }),
        "no rows, typed": pd.DataFrame({"a": pd.Series([], dtype="int32"), 3: pd.Series([], dtype="category")}),
    }


FRAMES = {name: df for name, df in _frames().items() if df is not None}


@pytest.mark.parametrize("name", list(FRAMES))
def test_awkward_frame_round_trips_exactly(name: str, tmp_path) -> None:
    df = FRAMES[name]
    for path, back in _paths(df, tmp_path).items():
        try:
            pd.testing.assert_frame_equal(df, back, check_exact=True)
        except AssertionError as exc:
            raise AssertionError(f"{name} via {path}: {exc}") from None


@pytest.mark.parametrize("name", [n for n in FRAMES if n.startswith("object ")])
def test_object_values_keep_their_python_types(name: str) -> None:
    df = FRAMES[name]
    back = qdf.decode(qdf.encode(df))
    for a, b in zip(df["a"], back["a"]):
        assert type(a) is type(b) or (pd.isna(a) and pd.isna(b) and type(a) is type(b)), (a, b)
        if isinstance(a, dict):
            assert list(a) == list(b) and [type(v) for v in a.values()] == [type(v) for v in b.values()]


def test_records_and_numpy_outputs_give_the_python_objects() -> None:
    df = pd.DataFrame({"a": [[1, 2], {"k": (3,)}, None], "n": [1, 2, 3]})
    buf = qdf.encode(df)
    assert qdf.decode(buf, output="records") == [{"a": [1, 2], "n": 1}, {"a": {"k": (3,)}, "n": 2},
                                                   {"a": None, "n": 3}]
    assert qdf.decode(buf, output="numpy")["a"].tolist() == [[1, 2], {"k": (3,)}, None]


def test_string_view_round_trips(tmp_path) -> None:
    # pandas cannot compare string_view ArrowDtype columns (its dtype .type raises), so compare the Arrow data.
    df = pd.DataFrame({"a": pd.Series(["x", None], dtype=pd.ArrowDtype(pa.string_view()))})
    for back in _paths(df, tmp_path).values():
        assert str(back["a"].dtype) == str(df["a"].dtype)
        assert back["a"].array._pa_array.equals(df["a"].array._pa_array)
    t = pa.table({"s": pa.array(["a", "b", None], pa.string_view())})
    assert qdf.decode(qdf.encode(t), filter=qdf.col("s") == "b", output="arrow").column("s").to_pylist() == ["b"]


@pytest.mark.parametrize("columns", [["m"], ["l", "i"], ["i"]])
def test_projection_of_nested_arrow_dtype_frames(columns: list[str], tmp_path) -> None:
    df = FRAMES["nested arrow dtypes"]
    buf = qdf.encode(df)
    pd.testing.assert_frame_equal(qdf.decode(buf, columns=columns), df[columns], check_exact=True)
    df.to_qdf(tmp_path / "n.qdf")
    pd.testing.assert_frame_equal(qdf.read_qdf(tmp_path / "n.qdf", columns=columns), df[columns], check_exact=True)
    got = qdf.decode(buf, columns=columns, filter=qdf.col("i") >= 2)
    pd.testing.assert_frame_equal(got, df[df.i >= 2][columns].reset_index(drop=True), check_exact=True)


def test_labels_survive_projection_and_filter() -> None:
    df = pd.DataFrame({1: [1, 2, 3], 2.5: ["a", "b", "c"], "x": [0.5, 1.5, 2.5]})
    buf = qdf.encode(df)
    got = qdf.decode(buf, columns=["2.5"], filter=qdf.col("1") >= 2)
    pd.testing.assert_frame_equal(got, df[df[1] >= 2][[2.5]].reset_index(drop=True), check_exact=True)


@pytest.mark.parametrize("kw", [{"mode": "speed"}, {"nested": "rows"}, {}, {"mode": "compression"}])
def test_nested_decimal_and_temporal_leaves(kw) -> None:
    t = pa.table({
        "d": pa.array([[D("1.5")], [], None, [None, D("-2.25")]], pa.list_(pa.decimal128(5, 2))),
        "s": pa.array([{"x": D("2.25"), "y": datetime.date(2020, 1, 1)}, None, {"x": None, "y": None},
                       {"x": D("1"), "y": datetime.date(1999, 1, 1)}],
                      pa.struct([("x", pa.decimal128(6, 2)), ("y", pa.date32())])),
        "m": pa.array([[("a", datetime.timedelta(seconds=5))], [], None, [("b", None)]],
                      pa.map_(pa.string(), pa.duration("ms"))),
        "l": pa.array([[[datetime.date(2020, 1, 2)]], None, [[None], []], []], pa.large_list(pa.list_(pa.date32()))),
        "i": [1, 2, 3, 4],
    })
    for start, length in ((0, 4), (1, 3), (2, 2), (3, 1), (0, 0)):
        part = t.slice(start, length)
        assert qdf.decode(qdf.encode(part, **kw), output="arrow").equals(part), (start, length)
    got = qdf.decode(qdf.encode(t, **kw), filter=qdf.col("i") >= 3, output="arrow")
    assert got.equals(t.slice(2))


def test_speed_mode_keeps_map_columns_maps() -> None:
    t = pa.table({"m": pa.array([[("a", 1)], [("b", 2), ("c", 3)]], pa.map_(pa.string(), pa.int64()))})
    assert qdf.decode(qdf.encode(t, mode="speed"), output="arrow").equals(t)


def test_speed_mode_rows_stay_plain_for_other_readers() -> None:
    """The note rides in the first row as one extra nil key; the values are plain."""
    df = pd.DataFrame({"a": np.array([1, 2], dtype="int32"), "d": pd.to_datetime(["2020-01-01", "2020-01-02"]).date})
    rows = qdf.loads(qdf.encode(df, mode="speed"))
    assert rows[1] == {"a": 2, "d": 18263}
    extra = [k for k in rows[0] if k.startswith("__qdf_schema__")]
    assert len(extra) == 1 and rows[0][extra[0]] is None


class Custom:
    pass


@pytest.mark.parametrize(
    "df, match",
    [
        (pd.DataFrame([[1, 2]], columns=["a", "a"]), "duplicate column labels"),
        (pd.DataFrame([[1, 2]], columns=pd.Index([1, "1"], dtype=object)), "same string form"),
        (pd.DataFrame({"a": [1, Custom()]}), r"row 1 holds a Custom"),
        (pd.DataFrame({"a": pd.Series(["ok", "\ud800"], dtype=object)}), r"row 1 holds a string that is not valid"),
        (pd.DataFrame({"a": pd.Series([D("1e30")], dtype=pd.ArrowDtype(pa.decimal128(38, 0)))}), "64 bits"),
    ],
)
def test_what_cannot_round_trip_raises_a_typed_error_on_every_path(df, match: str, tmp_path) -> None:
    attempts = {f"encode {m}": (lambda m=m: qdf.encode(df, mode=m)) for m in MODES}
    attempts["to_qdf()"] = lambda: df.to_qdf()
    attempts["to_qdf(path)"] = lambda: df.to_qdf(tmp_path / "e.qdf")
    attempts["write_qdf"] = lambda: qdf.write_qdf(df, tmp_path / "e.qdf")
    attempts["stream"] = lambda: qdf.StreamWriter(io.BytesIO()).write_batch(df)
    for what, attempt in attempts.items():
        with pytest.raises(qdf.UnsupportedTypeError, match=match):
            attempt()
        assert not (tmp_path / "e.qdf").exists(), what


def test_errors_name_column_and_row() -> None:
    with pytest.raises(qdf.EncodeError) as err:
        qdf.encode(pd.DataFrame({"ok": [1, 2], "bad": [1, Custom()]}))
    assert err.value.column == "bad" and "row 1" in str(err.value)


def test_decimal_filters_are_exact_and_prune_row_groups(tmp_path) -> None:
    values = [D(i) / 100 for i in range(-2000, 2000)] + [None]
    t = pa.table({"p": pa.array(values, pa.decimal128(9, 2)), "i": pa.array(range(len(values)))})
    buf = qdf.encode(t)
    expect = {
        qdf.col("p") >= D("12.345"): [v for v in values if v is not None and v >= D("12.345")],
        qdf.col("p") == 3: [D("3.00")],
        qdf.col("p") < 0.07: [v for v in values if v is not None and v < D(0.07)],
        qdf.col("p").isin([D("0.01"), 2, D("0.001")]): [D("0.01"), D("2.00")],
        ~(qdf.col("p") > D("-19.99")): [D("-20.00"), D("-19.99")],
    }
    path = tmp_path / "d.qdf"
    qdf.write_qdf(t, path, row_group_size=1000)
    for f, want in expect.items():
        assert qdf.decode(buf, filter=f, output="arrow").column("p").to_pylist() == want, f
        assert qdf.read_qdf(path, filter=f, output="arrow").column("p").to_pylist() == want, f
    plan = qdf.QdfFile(path).explain(qdf.col("p") >= D("15"))
    assert plan["read"].tolist() == [False, False, False, True, False]
    with pytest.raises(qdf.QueryError):
        qdf.decode(buf, filter=qdf.col("p") == "1.5")


def test_decoding_a_qdf_file_points_to_read_qdf(tmp_path) -> None:
    qdf.write_qdf({"a": [1]}, tmp_path / "f.qdf")
    with pytest.raises(qdf.DecodeError, match="read_qdf"):
        qdf.decode((tmp_path / "f.qdf").read_bytes())


def test_unicode_errors_are_typed() -> None:
    for attempt in (lambda: qdf.dumps("\ud800"), lambda: qdf.dumps({"k\udc00": 1}),
                    lambda: qdf.encode({"a": ["\ud800"]}), lambda: qdf.encode([{"a": "\ud800"}]),
                    lambda: qdf.StreamWriter(io.BytesIO()).write(["\ud800"])):
        with pytest.raises(qdf.UnsupportedTypeError, match="surrogate|Unicode|utf-8"):
            attempt()


def test_row_major_buffers_with_non_string_keys_are_typed_errors() -> None:
    with pytest.raises(qdf.DecodeError, match="not a column name"):
        qdf.decode(_int_key_rows())


def _int_key_rows() -> bytes:
    # A v1 array of two maps, the second keyed by the int 3: [{"a": 1}, {3: 2}] (qdf.dumps refuses such a map).
    return b"QDF\x01\x00" + bytes([0xA2, 0xD5, 0x01, 0x81, 0x61, 0x01, 0xD5, 0x01, 0x03, 0x02])
