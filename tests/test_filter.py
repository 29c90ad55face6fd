"""decode(filter=...) on columnar buffers: SQL three-valued logic, DNF input, errors,
and agreement with a pandas evaluation of the same predicate."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

import qdf_columnar as qdf
from qdf_columnar import col


def _frame(n: int = 400, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "code": rng.choice([200, 201, 404, 500, 503], n),
            "level": rng.choice(["INFO", "WARN", "ERROR"], n),
            "lat": rng.random(n),
            "user": pd.array([None if i % 4 == 0 else int(i) for i in range(n)], dtype="Int64"),
            "trace": [f"{x:032x}" for x in rng.integers(0, 2**62, n)],
            "ok": rng.random(n) < 0.5,
        }
    )


@pytest.mark.parametrize("column_index", [True, False])
def test_filter_matches_pandas(column_index: bool) -> None:
    df = _frame()
    buf = qdf.encode(df, column_index=column_index)
    got = qdf.decode(buf, filter=(col("code") >= 500) & (col("level") == "ERROR"))
    want = df[(df.code >= 500) & (df.level == "ERROR")]
    pd.testing.assert_frame_equal(got.reset_index(drop=True), want.reset_index(drop=True), check_exact=True)


def test_filter_columns_need_not_be_projected() -> None:
    df = _frame()
    buf = qdf.encode(df)
    got = qdf.decode(buf, columns=["trace", "lat"], filter=col("code") == 404)
    want = df.loc[df.code == 404, ["trace", "lat"]]
    pd.testing.assert_frame_equal(got.reset_index(drop=True), want.reset_index(drop=True), check_exact=True)


def test_null_compares_unknown() -> None:
    df = pd.DataFrame({"x": pd.array([1, None, 2, None, 1], dtype="Int64"), "i": range(5)})
    buf = qdf.encode(df)
    ids = lambda f: qdf.decode(buf, columns=["i"], filter=f)["i"].tolist()  # noqa: E731
    assert ids(col("x") == 1) == [0, 4]
    assert ids(~(col("x") == 1)) == [2]  # NULL rows are UNKNOWN under NOT too
    assert ids(col("x").is_null()) == [1, 3]
    assert ids(col("x").is_not_null() & (col("x") != 1)) == [2]
    assert ids((col("x") == 1) | col("x").is_null()) == [0, 1, 3, 4]


def test_dnf_filters() -> None:
    df = _frame()
    buf = qdf.encode(df)
    a = qdf.decode(buf, filter=[("code", ">=", 500), ("level", "=", "ERROR")])
    b = qdf.decode(buf, filter=(col("code") >= 500) & (col("level") == "ERROR"))
    pd.testing.assert_frame_equal(a, b)
    c = qdf.decode(buf, filter=[[("code", "in", [404])], [("level", "not in", ["INFO", "WARN"])]])
    want = df[(df.code == 404) | (df.level == "ERROR")]
    pd.testing.assert_frame_equal(c.reset_index(drop=True), want.reset_index(drop=True), check_exact=True)


def test_filter_errors() -> None:
    buf = qdf.encode(_frame())
    with pytest.raises(qdf.QueryError) as err:
        qdf.decode(buf, filter=col("nope") == 1)
    assert "nope" in str(err.value) and "'code'" in str(err.value)
    with pytest.raises(qdf.QueryError):
        qdf.decode(buf, filter=col("code") == "abc")
    with pytest.raises(qdf.QueryError):
        qdf.decode(buf, filter=[("code", "~", 1)])


def test_filter_on_row_major_speed_buffer() -> None:
    df = _frame(50)[["code", "level", "lat"]]
    buf = qdf.encode(df, mode="speed")
    got = qdf.decode(buf, columns=["lat"], filter=col("level") == "WARN")
    want = df.loc[df.level == "WARN", ["lat"]]
    pd.testing.assert_frame_equal(got.reset_index(drop=True), want.reset_index(drop=True), check_exact=True)


@given(
    st.lists(st.one_of(st.none(), st.integers(-3, 3)), min_size=1, max_size=80),
    st.integers(-3, 3),
    st.sampled_from(["==", "!=", "<", "<=", ">", ">="]),
    st.booleans(),
)
def test_differential_against_pandas(vals, lit, op, negate) -> None:
    df = pd.DataFrame({"x": pd.array(vals, dtype="Int64"), "i": np.arange(len(vals))})
    expr = {"==": col("x") == lit, "!=": col("x") != lit, "<": col("x") < lit, "<=": col("x") <= lit,
            ">": col("x") > lit, ">=": col("x") >= lit}[op]
    if negate:
        expr = ~expr
    got = qdf.decode(qdf.encode(df), columns=["i"], filter=expr)["i"].tolist()
    truth = {"==": df.x == lit, "!=": df.x != lit, "<": df.x < lit, "<=": df.x <= lit, ">": df.x > lit,
             ">=": df.x >= lit}[op]
    if negate:
        truth = ~truth  # pandas' nullable booleans already follow Kleene logic
    assert got == df.i[truth.fillna(False).astype(bool)].tolist()


def test_filter_and_project_the_same_time_column() -> None:
    ts = pd.date_range("2026-01-01", periods=300, freq="ms", tz="UTC")
    df = pd.DataFrame({"ts": ts, "x": np.arange(300)})
    buf = qdf.encode(df)
    cut = ts[100].to_pydatetime()
    got = qdf.decode(buf, filter=col("ts") >= cut)
    pd.testing.assert_frame_equal(got.reset_index(drop=True), df[df.ts >= cut].reset_index(drop=True))
    got2 = qdf.decode(buf, columns=["x", "ts"], filter=(col("ts") < cut) & (col("x") > 5))
    want = df.loc[(df.ts < cut) & (df.x > 5), ["x", "ts"]]
    pd.testing.assert_frame_equal(got2.reset_index(drop=True), want.reset_index(drop=True))
