"""Row-group pruning from footer statistics (qdf_columnar/io/prune.py, docs/FORMAT.md §4.4).

Contract: a row group is skipped only when no row in it can be TRUE under SQL
three-valued logic with qdf's NaN rules, so ``read_qdf(filter=e)`` always equals
evaluating ``e`` row by row; on data whose statistics are tight, exactly the row
groups holding a match are read.
"""

from __future__ import annotations

import datetime as dt
import math
import operator

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import event, given
from hypothesis import strategies as st

import qdf_columnar as qdf
from qdf_columnar.query.expr import And, Cmp, IsIn, IsNull, Not, Or

col = qdf.col
N_ROWS, N_GROUPS = 200_000, 50
GROUP = N_ROWS // N_GROUPS


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    """200k rows in 50 row groups; sorted or group-constant columns give tight statistics.

    Built in Arrow so ``f`` holds real NaN values (pandas would turn NaN into NULL).
    """
    n = N_ROWS
    rng = np.random.default_rng(3)
    ids = np.arange(n)
    grp = ids // GROUP
    f = rng.normal(size=n)
    f[grp == 10] = np.nan  # a group of NaN only
    f[(grp == 11) & (ids % 2 == 0)] = np.nan
    f_null = (grp == 12) & (ids % 5 == 0)
    x = rng.integers(0, 1000, n)
    x_null = (grp == 20) | ((grp == 21) & (ids % 3 == 0))  # group 20: NULL only
    table = pa.table({
        "id": ids,
        "ts": pa.array(ids * 1_000_000 + 1_704_067_200_000_000, pa.timestamp("us", "UTC")),
        "tag": pa.array([f"g{g:02d}" for g in grp]),
        "f": pa.array(f, mask=f_null),
        "x": pa.array(x, mask=x_null),
    })
    path = tmp_path_factory.mktemp("prune") / "big.qdf"
    qdf.write_qdf(table, path, row_group_size=GROUP, mode="balanced")
    return path, table


def _groups_with_match(mask: np.ndarray) -> set[int]:
    return set(np.unique(np.flatnonzero(mask) // GROUP).tolist())


t0 = pd.Timestamp("2024-01-01", tz="UTC")
NOT, AND, OR = pc.invert, pc.and_kleene, pc.or_kleene  # Arrow's own Kleene logic is the reference
CASES = [
    (col("id") >= 150_000, lambda t: pc.greater_equal(t["id"], 150_000)),
    ((col("id") < 8_000) | (col("id") >= 196_000),
     lambda t: OR(pc.less(t["id"], 8_000), pc.greater_equal(t["id"], 196_000))),
    (~(col("id") < 196_000), lambda t: NOT(pc.less(t["id"], 196_000))),
    (col("id") == 123_456, lambda t: pc.equal(t["id"], 123_456)),
    (col("id").isin([5, 100_000, 10**9]), lambda t: pc.is_in(t["id"], pa.array([5, 100_000]))),
    (col("ts") > t0 + pd.Timedelta(seconds=190_000),
     lambda t: pc.greater(t["ts"], pa.scalar(t0 + pd.Timedelta(seconds=190_000), pa.timestamp("us", "UTC")))),
    (col("tag") == "g07", lambda t: pc.equal(t["tag"], "g07")),
    (col("tag").isin(["g01", "g33"]) & (col("id") > 0),
     lambda t: AND(pc.is_in(t["tag"], pa.array(["g01", "g33"])), pc.greater(t["id"], 0))),
    (~col("tag").isin([f"g{i:02d}" for i in range(1, 50)]), lambda t: pc.equal(t["tag"], "g00")),
    (col("x").is_null(), lambda t: pc.is_null(t["x"])),
    (col("x") >= 0, lambda t: pc.greater_equal(t["x"], 0)),
    (~(col("x") >= 0), lambda t: NOT(pc.greater_equal(t["x"], 0))),  # NULL stays UNKNOWN under NOT
    (col("f") != 0.25, lambda t: pc.not_equal(t["f"], 0.25)),  # NaN != x is TRUE
    (col("f").is_null() | (col("f") > 10.0), lambda t: OR(pc.is_null(t["f"]), pc.greater(t["f"], 10.0))),
    (~(col("f") <= 10.0), lambda t: NOT(pc.less_equal(t["f"], 10.0))),  # NaN rows: NOT FALSE = TRUE
    (col("f") == float("nan"), lambda t: pc.equal(t["id"], -1)),  # a NaN literal never equals anything
]


@pytest.mark.parametrize("expr,mask", CASES, ids=[repr(c[0]) for c in CASES])
def test_only_matching_row_groups_are_read(big, expr, mask):
    path, table = big
    m = mask(table).fill_null(False).to_numpy(zero_copy_only=False)
    plan = qdf.QdfFile(path).explain(expr)
    assert len(plan) == N_GROUPS
    assert set(plan.loc[plan["read"], "index"]) == _groups_with_match(m)
    assert plan.loc[~plan["read"], "reason"].str.contains("never TRUE|UNKNOWN").all()
    got = qdf.read_qdf(path, filter=expr, output="arrow")
    _assert_tables_equal(got, table.filter(pa.array(m)))
    # pandas output: the same rows, converted as pyarrow converts them.
    pd.testing.assert_frame_equal(qdf.read_qdf(path, filter=expr), table.filter(pa.array(m)).to_pandas(),
                                  check_exact=True)


def _assert_tables_equal(got: pa.Table, want: pa.Table) -> None:
    """Table.equals, except that NaN equals NaN (bit-exact for the rest)."""
    assert got.schema == want.schema and got.num_rows == want.num_rows
    for name in want.column_names:
        a, b = got[name].combine_chunks(), want[name].combine_chunks()
        if pa.types.is_floating(a.type):
            assert a.is_null().equals(b.is_null()), name
            x, y = a.fill_null(0).to_numpy(), b.fill_null(0).to_numpy()
            assert np.array_equal(x.view(np.uint64), y.view(np.uint64)), name
        else:
            assert a.equals(b), name


def test_explain_reasons_name_the_statistic(big):
    path, _ = big
    f = qdf.QdfFile(path)
    plan = f.explain(col("id") > 150_000)
    assert plan.loc[0, "reason"] == "(col('id') > 150000) is never TRUE: min 0, max 3999"
    assert plan.loc[49, "reason"] == "statistics allow a match"
    nulls = f.explain(col("x") == 3)
    assert "all 4000 values are null" in nulls.loc[20, "reason"] and not nulls.loc[20, "read"]
    assert f.explain(col("x").is_null())["read"].sum() == 2
    assert f.row_groups[10].statistics["f"].nan_count == GROUP
    assert f.row_groups[10].statistics["f"].min is None


def test_filter_errors_come_before_any_read(big):
    path, _ = big
    with pytest.raises(qdf.QueryError, match="unknown column"):
        qdf.read_qdf(path, filter=col("nope") > 1)
    with pytest.raises(qdf.QueryError):
        qdf.read_qdf(path, filter=col("tag") > 1)
    with pytest.raises(qdf.QueryError, match="timezone"):  # naive literal on a UTC column, even if all pruned
        qdf.read_qdf(path, filter=(col("id") < 0) & (col("ts") > dt.datetime(2024, 1, 1)))


def test_threads_and_projection_agree(big):
    path, table = big
    e = col("id") >= 100_000
    a = qdf.read_qdf(path, columns=["tag", "x"], filter=e, threads=1, output="arrow")
    b = qdf.read_qdf(path, columns=["tag", "x"], filter=e, threads=2, output="arrow")
    assert a.equals(b)
    assert a.equals(table.filter(pc.greater_equal(table["id"], 100_000)).select(["tag", "x"]))


# ----------------------------------------------------------------------------- property: pruning is sound

_OPS = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt,
        ">=": operator.ge}

ints = st.one_of(st.none(), st.integers(-5, 5), st.sampled_from([-(2**63), 2**63 - 1]))
floats = st.one_of(st.none(), st.sampled_from([float("nan"), float("inf"), -float("inf"), -0.0, 0.0, 0.5]),
                   st.integers(-5, 5).map(float))
strings = st.one_of(st.none(), st.sampled_from(["", "a", "ab", "b", "é", "\U0010ffff", "z" * 70, "z" * 71]))
bools = st.one_of(st.none(), st.booleans())
stamps = st.one_of(st.none(), st.integers(0, 6).map(lambda h: dt.datetime(2024, 1, 1, h)))
hours = st.integers(-1, 7).map(lambda h: dt.datetime(2024, 1, 1) + dt.timedelta(hours=h))
COLUMNS = {
    "i": (ints, pa.int64(), st.one_of(st.integers(-6, 6), st.sampled_from([2.5, float("nan"), float("inf"),
                                                                             2**64, -(2**63)]))),
    "u": (st.one_of(st.none(), st.integers(0, 4)), pa.uint8(), st.one_of(st.integers(-2, 6), st.just(300))),
    "f": (floats, pa.float64(), st.one_of(st.sampled_from([float("nan"), -0.0, 0.5, float("inf")]),
                                          st.integers(-6, 6))),
    "g": (floats, pa.float32(), st.sampled_from([0.5, -0.0, float("nan"), 3])),
    "s": (strings, pa.string(), st.sampled_from(["", "a", "aa", "b", "é", "\U0010ffff", "z" * 70, "z" * 72])),
    "b": (bools, pa.bool_(), st.booleans()),
    "t": (stamps, pa.timestamp("us"), hours),
}


@st.composite
def exprs(draw, names, depth=0):
    if depth < 3 and draw(st.integers(0, 2)) == 0:
        kind = draw(st.sampled_from(["and", "or", "not"]))
        if kind == "not":
            return ~draw(exprs(names, depth + 1))
        parts = draw(st.lists(exprs(names, depth + 1), min_size=2, max_size=3))
        return And.of(*parts) if kind == "and" else Or.of(*parts)
    name = draw(st.sampled_from(names))
    lit = COLUMNS[name][2]
    leaf = draw(st.integers(0, 4))
    if leaf == 0:
        return IsNull(name, draw(st.booleans()))
    if leaf == 1:
        return IsIn(name, tuple(draw(st.lists(lit, max_size=3))))
    return Cmp(name, draw(st.sampled_from(sorted(_OPS))), draw(lit))


def _ref(e, row) -> bool | None:
    """Row-by-row SQL three-valued evaluation with IEEE comparisons (the reference)."""
    if isinstance(e, Not):
        v = _ref(e.operand, row)
        return None if v is None else not v
    if isinstance(e, And):
        vs = [_ref(p, row) for p in e.operands]
        return False if False in vs else (None if None in vs else True)
    if isinstance(e, Or):
        vs = [_ref(p, row) for p in e.operands]
        return True if True in vs else (None if None in vs else False)
    x = row[e.column]
    if isinstance(e, IsNull):
        return (x is not None) if e.negated else (x is None)
    if x is None:
        return None
    if isinstance(e, IsIn):
        return any(x == v for v in e.values)
    return _OPS[e.op](x, e.value)


@st.composite
def tables(draw):
    n = draw(st.integers(0, 24))
    names = draw(st.lists(st.sampled_from(sorted(COLUMNS)), min_size=1, max_size=4, unique=True))
    data = {}
    for name in names:
        vals = draw(st.lists(COLUMNS[name][0], min_size=n, max_size=n))
        if name == "u":
            vals = [v if v is None else abs(v) for v in vals]
        if name == "g":  # float32 values: keep what float32 can hold exactly
            vals = [v if v is None else float(np.float32(v)) for v in vals]
        data[name] = pa.array(vals, COLUMNS[name][1])
    return pa.table(data)


@given(table=tables(), data=st.data(), size=st.integers(1, 6))
def test_pruning_never_drops_a_matching_row(table, data, size):
    expr = data.draw(exprs(table.column_names))
    url = "memory://qdf-prop/t.qdf"
    qdf.write_qdf(table, url, row_group_size=size)
    f = qdf.QdfFile(url)
    rows = table.to_pylist()
    truth = [_ref(expr, r) is True for r in rows]
    plan = f.explain(expr)
    event(f"some row group pruned: {not plan['read'].all()}")
    for g, read in zip(f.row_groups, plan["read"]):
        start = sum(h.num_rows for h in f.row_groups[:g.index])
        if not read:
            assert not any(truth[start:start + g.num_rows]), (g.index, expr)
    got = f.read(filter=expr, output="arrow").to_pylist()
    want = [r for r, t in zip(rows, truth) if t]
    assert _same(got, want), (expr, got, want)


def _same(a: list[dict], b: list[dict]) -> bool:
    def norm(v):
        return "nan" if isinstance(v, float) and math.isnan(v) else v

    return [{k: norm(v) for k, v in r.items()} for r in a] == [{k: norm(v) for k, v in r.items()} for r in b]


def test_five_million_rows_in_fifty_groups_read_only_the_groups_that_can_match(tmp_path):
    """The [files] acceptance shape: a 5M-row, 50-row-group file and a selective filter."""
    n, groups = 5_000_000, 50
    rng = np.random.default_rng(11)
    ids = np.arange(n)
    level = pa.DictionaryArray.from_arrays(
        pa.array(rng.choice(4, n, p=[0.8, 0.12, 0.05, 0.03]).astype(np.int8)), ["INFO", "WARN", "ERROR", "DEBUG"])
    table = pa.table({
        "ts": pa.array(ids * 3_000 + 1_767_225_600_000_000, pa.timestamp("us", "UTC")),  # sorted, 3 ms apart
        "code": pa.array(rng.integers(100, 600, n)),
        "level": level.cast(pa.string()),
    })
    path = tmp_path / "five_million.qdf"
    qdf.write_qdf(table, path, row_group_size=n // groups, mode="balanced")
    f = qdf.QdfFile(path)
    assert (f.num_rows, f.num_row_groups) == (n, groups)
    lo = pd.Timestamp(1_767_225_600_000_000 + 2_000_000 * 3_000, unit="us", tz="UTC")  # rows 2.00M..2.02M
    expr = (col("ts") >= lo) & (col("ts") < lo + pd.Timedelta(seconds=60)) & (col("level") == "ERROR")
    plan = f.explain(expr)
    assert plan["read"].sum() == 1 and plan.loc[plan["read"], "index"].tolist() == [20]
    got = qdf.read_qdf(path, filter=expr, output="arrow")
    mask = (ids >= 2_000_000) & (ids < 2_020_000) & (np.asarray(table["level"]) == "ERROR")
    assert got.equals(table.filter(pa.array(mask)))
