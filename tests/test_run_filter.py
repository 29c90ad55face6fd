"""Filters on run-length coded columns: the predicate once per run, its masks spread over
the rows of each run, give exactly what the same filter gives on the expanded values
(SQL three-valued logic included), in a buffer and in a ``.qdf`` file, for integer
columns, string dictionary blocks whose codes are runs, and dictionary levels whose
codes are runs."""

from __future__ import annotations

import sys

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import qdf_columnar as qdf
from qdf_columnar.columns.runs import RunColumn, run_index
from qdf_columnar.errors import CorruptDataError
from qdf_columnar.query.evaluate import evaluate

#: The module itself (the package's ``evaluate`` attribute is the function).
evaluate_module = sys.modules["qdf_columnar.query.evaluate"]

_INT_LEAVES = st.tuples(st.sampled_from(["==", "!=", "<", "<=", ">", ">="]), st.integers(-3, 3))
_STR_LEAVES = st.tuples(st.sampled_from(["==", "!=", "<", ">="]), st.sampled_from(["a", "b", "c", "z"]))


def _cmp(name: str, op: str, v: object) -> qdf.col:  # type: ignore[valid-type]
    c = qdf.col(name)
    return {"==": c == v, "!=": c != v, "<": c < v, "<=": c <= v, ">": c > v, ">=": c >= v}[op]


@st.composite
def _run_columns(draw: st.DrawFn) -> RunColumn:
    k = draw(st.integers(0, 12))
    lengths = draw(st.lists(st.integers(1, 9), min_size=k, max_size=k))
    if draw(st.booleans()):
        values: pa.Array = pa.array(draw(st.lists(st.none() | st.integers(-3, 3), min_size=k, max_size=k)), pa.int64())
    else:
        entries = pa.array(["a", "b", None, "c"], pa.string())
        codes = draw(st.lists(st.integers(0, 3), min_size=k, max_size=k))
        values = pa.DictionaryArray.from_arrays(pa.array(codes, pa.int32()), entries)
    return RunColumn(values, np.cumsum(np.array(lengths, dtype=np.int64)))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rc=_run_columns(), ileaf=_INT_LEAVES, sleaf=_STR_LEAVES, negate=st.booleans(), null_test=st.booleans())
def test_a_run_column_filters_like_its_rows(rc: RunColumn, ileaf: tuple, sleaf: tuple, negate: bool,
                                            null_test: bool) -> None:
    dense = rc.values.take(pa.array(rc.spread(np.arange(len(rc.ends), dtype=np.int64))))
    assert len(dense) == len(rc) == (int(rc.ends[-1]) if len(rc.ends) else 0)
    if null_test:
        expr = qdf.col("x").is_null()
    elif pa.types.is_dictionary(rc.type):
        expr = _cmp("x", *sleaf)
    else:
        expr = _cmp("x", *ileaf)
    expr = ~expr if negate else expr
    want = evaluate(expr, {"x": dense}, len(dense))
    got = evaluate(expr, {"x": rc}, len(rc))
    assert got.tolist() == want.tolist()
    rows = np.arange(0, len(rc), 3, dtype=np.int64)
    assert rc.take(rows).to_pylist() == dense.take(pa.array(rows)).to_pylist()


def test_run_values_and_ends_must_pair_up() -> None:
    with pytest.raises(ValueError, match="2 run values for 1 run ends"):
        RunColumn(pa.array([1, 2]), np.array([3], dtype=np.int64))


def _runs_table(n: int = 60_000) -> pa.Table:
    rng = np.random.default_rng(7)
    lengths = rng.integers(40, 400, n // 40)
    ends = np.cumsum(lengths)
    ends = ends[ends < n]
    run_of = np.searchsorted(ends, np.arange(n), side="right")
    grade = np.array(["captain", "major", "private", "sergeant", "warrant"])[run_of % 5]
    level = (run_of * 7919) % 11 - 5  # small ints in runs
    ids = (run_of.astype(np.int64) * 1_000_003) % 9_999_991 + 10**12  # many distinct values in runs
    return pa.table({"grade": grade, "level": level.astype(np.int64), "id": ids, "row": np.arange(n)})


def _filters() -> list:
    c = qdf.col
    return [
        c("grade") == "warrant",
        c("grade") != "major",
        c("grade") >= "private",
        c("grade").isin(["captain", "sergeant"]),
        ~(c("grade") == "captain"),
        c("level") >= 3,
        (c("level") == -5) | (c("grade") == "major"),
        (c("level") < 0) & (c("grade") != "private") & (c("row") >= 1000),
        c("id") == 10**12 + 1_000_003 * 5,
        c("id") > 10**12 + 5_000_000,
        c("grade").is_null(),
        c("level").is_not_null(),
    ]


def _oracle(t: pa.Table, expr: qdf.col) -> pa.Table:  # type: ignore[valid-type]
    mask = evaluate(expr, {n: t.column(n) for n in t.column_names}, t.num_rows)
    return t.filter(pa.array(mask))


@pytest.fixture(scope="module")
def runs_buffer() -> tuple[pa.Table, bytes]:
    t = _runs_table()
    buf = qdf.encode(t, mode="balanced")
    ex = qdf.explain(buf)
    codecs: dict[str, str] = {}
    for name, codec in zip(ex["column"], ex["codec"]):
        codecs.setdefault(name, codec)  # a dictionary column's codes come before its values
    # The premise: every filter column's values (or codes) are run-length coded.
    assert codecs["level"] == "PackRLE", codecs
    assert codecs["grade"] == "ColStrDictQ", codecs
    assert "PackRLE" in codecs["id"], codecs
    return t, buf


def test_filters_on_runs_see_one_entry_per_run(runs_buffer: tuple[pa.Table, bytes],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    t, buf = runs_buffer
    seen: dict[str, object] = {}
    real = evaluate_module.evaluate

    def spy(expr, columns, n_rows):  # noqa: ANN001, ANN202
        seen.update(columns)
        return real(expr, columns, n_rows)

    monkeypatch.setattr(evaluate_module, "evaluate", spy)
    qdf.decode(buf, filter=(qdf.col("grade") == "warrant") | (qdf.col("level") > 0) | (qdf.col("id") < 0),
               output="arrow")
    assert {n: type(v).__name__ for n, v in seen.items()} == {n: "RunColumn" for n in ("grade", "level", "id")}
    assert all(len(v.ends) < t.num_rows / 30 for v in seen.values())  # type: ignore[attr-defined]


@pytest.mark.parametrize("k", range(len(_filters())))
def test_filters_on_runs_keep_the_rows_the_values_keep(runs_buffer: tuple[pa.Table, bytes], k: int) -> None:
    t, buf = runs_buffer
    expr = _filters()[k]
    want = _oracle(t, expr)
    assert qdf.decode(buf, filter=expr, output="arrow").equals(want)
    assert qdf.decode(buf, filter=expr, columns=["row", "grade"], output="arrow").equals(want.select(["row", "grade"]))


@pytest.mark.parametrize("k", range(len(_filters())))
def test_filters_on_runs_in_a_file(runs_buffer: tuple[pa.Table, bytes], k: int) -> None:
    t, _ = runs_buffer
    blob = qdf.write_qdf(t, None, mode="balanced", row_group_size=25_000)
    expr = _filters()[k]
    got = qdf.read_qdf(blob, filter=expr, output="arrow")
    assert got.equals(_oracle(t, expr).cast(got.schema))


def test_a_run_coded_filter_column_that_is_also_projected_expands_only_its_hits(
        runs_buffer: tuple[pa.Table, bytes]) -> None:
    t, buf = runs_buffer
    expr = qdf.col("level") == 2
    got = qdf.decode(buf, filter=expr, columns=["level", "id"], output="arrow")
    assert got.equals(_oracle(t, expr).select(["level", "id"]))
    assert pc.all(pc.equal(got.column("level"), 2)).as_py()


@settings(max_examples=200, deadline=None)
@given(lengths=st.lists(st.integers(1, 50), min_size=1, max_size=60), density=st.floats(0.0, 1.0),
       seed=st.integers(0, 99))
def test_run_index_is_searchsorted(lengths: list[int], density: float, seed: int) -> None:
    """The galloping walk finds each row's run as a binary search per row does, for rows
    dense (a pass over both) and sparse (long gallops), first and last rows included."""
    ends = np.cumsum(np.array(lengths, dtype=np.int64))
    n = int(ends[-1])
    rng = np.random.default_rng(seed)
    rows = np.flatnonzero(rng.random(n) < density).astype(np.int64)
    for pick in (rows, np.array([0, n - 1], np.int64), np.array([n - 1], np.int64), np.empty(0, np.int64)):
        pick = np.unique(pick)
        np.testing.assert_array_equal(run_index(ends, pick), np.searchsorted(ends, pick, side="right"))


def test_run_index_of_a_row_past_the_last_run_is_corrupt() -> None:
    ends = np.array([3, 10, 11], dtype=np.int64)
    assert run_index(ends, np.array([10], np.int64)).tolist() == [2]
    for rows in ([11], [0, 4, 11], [2, 50]):
        with pytest.raises(CorruptDataError, match="past the last run, which ends at row 11"):
            run_index(ends, np.array(rows, np.int64))
    with pytest.raises(CorruptDataError, match="ends at row 0"):
        run_index(np.empty(0, np.int64), np.array([0], np.int64))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.integers(1, 9), min_size=0, max_size=40), st.integers(1, 20), st.integers(0, 2**32 - 1))
def test_runs_take_is_the_table_at_each_rows_code(lengths: list[int], d: int, seed: int) -> None:
    from qdf_kernels import columns as ck

    rng = np.random.default_rng(seed)
    codes = rng.integers(0, d, len(lengths)).astype(np.uint64)
    ends = np.cumsum(lengths, dtype=np.int64)
    table = rng.integers(0, 2**63, d, dtype=np.int64).astype(np.uint64)
    out = np.empty(int(ends[-1]) if len(ends) else 0, np.uint64)
    assert ck.runs_take_into(codes, ends, table, out) == len(out)
    np.testing.assert_array_equal(out, table[np.repeat(codes, lengths)])
    if len(codes):  # a code outside the table, or a run past the output, is refused
        bad = codes.copy()
        bad[-1] = d
        assert ck.runs_take_into(bad, ends, table, out) < 0
        assert ck.runs_take_into(codes, ends, table, out[:-1]) < 0


def test_dictionary_codes_in_runs_expand_run_by_run(monkeypatch) -> None:
    """A dictionary level whose codes are long runs expands through runs_take_into (no
    per-row code array) and gives the values; a code outside the table is corrupt."""
    from qdf_columnar.codecs.ints import runs as runs_module

    calls = []
    real = runs_module.ck.runs_take_into
    monkeypatch.setattr(runs_module.ck, "runs_take_into", lambda *a: calls.append(1) or real(*a))
    rng = np.random.default_rng(5)
    ids = np.repeat(rng.integers(10**9, 10**12, 40)[rng.integers(0, 40, 2000)], rng.integers(20, 60, 2000))
    t = pa.table({"id": ids, "x": np.arange(len(ids))})
    buf = qdf.encode(t)
    assert "dictionary codes: PackRLE" in qdf.explain(buf)["codec"].tolist()
    assert qdf.decode(buf, output="arrow").equals(t)
    assert calls, "the run-coded dictionary codes were expanded row by row"
