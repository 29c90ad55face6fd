"""Contract of qdf_columnar.query: expressions, DNF, validation and SQL three-valued evaluation.

The centrepiece is a differential property: ``evaluate`` on Arrow columns (plain,
chunked, dictionary) must keep exactly the rows a naive per-row Python evaluator
(``oracle``, None = NULL, Kleene AND/OR/NOT, IEEE floats) calls TRUE.  Around it:
exhaustive Kleene truth tables, exact literal handling (uint64 vs -1, int vs 2.5,
timestamps across units and timezones) and the wording of every QueryError.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import itertools
import math
import operator

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from qdf_columnar.errors import QueryError
from qdf_columnar.query import And, Expr, IsIn, IsNull, Not, Or, as_expr, col, evaluate, validate
from qdf_columnar.query.expr import Cmp
from qdf_columnar.query.kleene import and_, not_, or_, to_three_valued

# ----------------------------------------------------------------------------- oracle

_PY_OPS = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt,
           ">=": operator.ge}  # fmt: skip


def oracle(expr: Expr, row: dict) -> bool | None:
    """SQL three-valued result of ``expr`` on one row of Python values (None = NULL)."""
    if isinstance(expr, And):
        vals = [oracle(e, row) for e in expr.operands]
        return False if False in vals else (True if all(v is True for v in vals) else None)
    if isinstance(expr, Or):
        vals = [oracle(e, row) for e in expr.operands]
        return True if True in vals else (False if all(v is False for v in vals) else None)
    if isinstance(expr, Not):
        v = oracle(expr.operand, row)
        return None if v is None else not v
    v = row[expr.column]
    if isinstance(expr, IsNull):
        return (v is not None) if expr.negated else (v is None)
    if v is None:
        return None
    if isinstance(expr, IsIn):
        return any(v == x for x in expr.values)  # not `in`: that uses identity, so nan in [nan]
    return _PY_OPS[expr.op](v, expr.value)


def oracle_mask(expr: Expr, data: dict[str, list]) -> np.ndarray:
    n = len(next(iter(data.values())))
    return np.array([oracle(expr, {k: v[i] for k, v in data.items()}) is True for i in range(n)], dtype=bool)


# ----------------------------------------------------------------------------- strategies

_TYPES = {"i": pa.int64(), "u": pa.uint64(), "f": pa.float64(), "g": pa.float32(), "s": pa.string(), "b": pa.bool_()}
_I64 = (-(2**63), 2**63 - 1)
_VALUES = {
    "i": st.one_of(st.integers(-3, 3), st.sampled_from(_I64)),
    "u": st.one_of(st.integers(0, 3), st.just(2**64 - 1)),
    "f": st.one_of(st.sampled_from([0.0, -0.0, 1.5, -2.0, math.nan, math.inf, -math.inf, 2.0**53]),
                   st.integers(-3, 3).map(float)),
    "g": st.sampled_from([0.0, -0.0, 0.5, 1.0, 3.0, math.nan, -math.inf, float(np.float32(0.1))]),
    "s": st.text(alphabet="abé", max_size=2),
    "b": st.booleans(),
}  # fmt: skip
_LITERALS = {
    "i": st.one_of(_VALUES["i"], st.sampled_from([2**63, -(2**63) - 1, 0.5, -1.5, 2.0, math.nan, math.inf])),
    "u": st.one_of(_VALUES["u"], st.sampled_from([-1, 2**64, 0.5, -0.5, 3.0, 1e30, math.nan])),
    "f": st.one_of(_VALUES["f"], st.sampled_from([2**53 + 1, -(2**53) - 1, 1, 0])),
    "g": st.one_of(_VALUES["g"], st.sampled_from([0.1, 1, 2**60])),
    "s": _VALUES["s"],
    "b": st.booleans(),
}  # fmt: skip


@st.composite
def table(draw: st.DrawFn) -> tuple[dict[str, list], dict[str, pa.Array | pa.ChunkedArray]]:
    n = draw(st.integers(0, 25))
    data = {name: draw(st.lists(st.one_of(st.none(), vals), min_size=n, max_size=n)) for name, vals in _VALUES.items()}
    arrays: dict[str, pa.Array | pa.ChunkedArray] = {}
    for name, values in data.items():
        typ = _TYPES[name]
        if name == "s":
            typ = draw(st.sampled_from([pa.string(), pa.large_string()]))
        arr = pa.array(values, typ)
        form = draw(
            st.sampled_from(["plain", "chunked", "dict", "dict-chunked"] if name == "s" else ["plain", "chunked"])
        )
        if form.startswith("dict"):
            arr = arr.dictionary_encode()
        if form.endswith("chunked"):
            cut = draw(st.integers(0, n))
            # Chunks encoded separately get different dictionaries, as row groups would.
            parts = (
                [arr[:cut], arr[cut:]]
                if form == "chunked"
                else [pa.array(values[:cut], typ).dictionary_encode(), pa.array(values[cut:], typ).dictionary_encode()]
            )
            arr = pa.chunked_array(parts, type=parts[0].type)
        arrays[name] = arr
    return data, arrays


def leaf() -> st.SearchStrategy[Expr]:
    def for_column(name: str) -> st.SearchStrategy[Expr]:
        lit = _LITERALS[name]
        c = col(name)
        return st.one_of(
            st.tuples(st.sampled_from(list(_PY_OPS)), lit).map(lambda t: c._cmp(*t)),
            st.lists(lit, max_size=3).map(c.isin),
            st.sampled_from([c.is_null(), c.is_not_null()]),
        )

    return st.sampled_from(list(_VALUES)).flatmap(for_column)


def exprs(depth: int = 3) -> st.SearchStrategy[Expr]:
    if depth == 0:
        return leaf()
    sub = exprs(depth - 1)
    return st.one_of(
        leaf(),
        st.lists(sub, min_size=2, max_size=3).map(lambda es: And.of(*es)),
        st.lists(sub, min_size=2, max_size=3).map(lambda es: Or.of(*es)),
        sub.map(lambda e: ~e),
    )


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(table(), exprs())
def test_evaluate_matches_oracle(tbl: tuple[dict, dict], expr: Expr) -> None:
    data, arrays = tbl
    n = len(data["i"])
    got = evaluate(expr, arrays, n)
    assert got.dtype == np.bool_ and got.shape == (n,)
    np.testing.assert_array_equal(got, oracle_mask(expr, data), err_msg=repr(expr))


# Deep trees dilute each leaf's edge cases (NaN, -0.0, 2.5 on ints); single leaves, and their
# negation (which exposes the FALSE mask), get a dedicated budget.
@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(table(), leaf(), st.booleans())
def test_leaf_matches_oracle(tbl: tuple[dict, dict], expr: Expr, negate: bool) -> None:
    data, arrays = tbl
    expr = ~expr if negate else expr
    np.testing.assert_array_equal(evaluate(expr, arrays, len(data["i"])), oracle_mask(expr, data), err_msg=repr(expr))


# ----------------------------------------------------------------------------- Kleene

_TV = [True, False, None]


def _masks(values: list[bool | None], implicit: bool) -> tuple[np.ndarray, np.ndarray | None]:
    t = np.array([v is True for v in values])
    if implicit:  # F=None is only legal when nothing is UNKNOWN
        assert None not in values
        return t, None
    return t, np.array([v is False for v in values])


def _sql_and(a: bool | None, b: bool | None) -> bool | None:
    return False if False in (a, b) else (True if a is True and b is True else None)


def _sql_or(a: bool | None, b: bool | None) -> bool | None:
    return True if True in (a, b) else (False if a is False and b is False else None)


def test_kleene_truth_tables_exhaustive() -> None:
    pairs = list(itertools.product(_TV, repeat=2))
    a = [p[0] for p in pairs]
    b = [p[1] for p in pairs]
    assert to_three_valued(and_([_masks(a, False), _masks(b, False)])) == [_sql_and(x, y) for x, y in pairs]
    assert to_three_valued(or_([_masks(a, False), _masks(b, False)])) == [_sql_or(x, y) for x, y in pairs]
    assert to_three_valued(not_(_masks(_TV, False))) == [False, True, None]
    # The "F is implicit" representation gives the same answers on TRUE/FALSE inputs, mixed or not.
    known = list(itertools.product([True, False], repeat=2))
    ka, kb = [p[0] for p in known], [p[1] for p in known]
    for ia, ib in itertools.product([True, False], repeat=2):
        assert to_three_valued(and_([_masks(ka, ia), _masks(kb, ib)])) == [x and y for x, y in known]
        assert to_three_valued(or_([_masks(ka, ia), _masks(kb, ib)])) == [x or y for x, y in known]
    assert to_three_valued(not_(_masks([True, False], True))) == [False, True]


def test_kleene_three_operands() -> None:
    triples = list(itertools.product(_TV, repeat=3))
    cols = [[t[i] for t in triples] for i in range(3)]
    ms = [_masks(c, False) for c in cols]
    assert to_three_valued(and_(ms)) == [_sql_and(_sql_and(x, y), z) for x, y, z in triples]
    assert to_three_valued(or_(ms)) == [_sql_or(_sql_or(x, y), z) for x, y, z in triples]


def test_truth_tables_through_evaluate() -> None:
    # x = 1 -> TRUE, x = 0 -> FALSE, x = NULL -> UNKNOWN, for both operands.
    pairs = list(itertools.product(_TV, repeat=2))
    enc = {True: 1, False: 0, None: None}
    cols = {"a": pa.array([enc[p[0]] for p in pairs]), "b": pa.array([enc[p[1]] for p in pairs])}
    a, b = col("a") == 1, col("b") == 1
    n = len(pairs)
    assert evaluate(a & b, cols, n).tolist() == [_sql_and(x, y) is True for x, y in pairs]
    assert evaluate(a | b, cols, n).tolist() == [_sql_or(x, y) is True for x, y in pairs]
    assert evaluate(~(a & b), cols, n).tolist() == [_sql_and(x, y) is False for x, y in pairs]
    assert evaluate(~(a | b), cols, n).tolist() == [_sql_or(x, y) is False for x, y in pairs]


def test_not_drops_null_rows() -> None:
    x = {"x": pa.array([1, 2, None, 1])}
    assert evaluate(col("x") == 1, x, 4).tolist() == [True, False, False, True]
    assert evaluate(~(col("x") == 1), x, 4).tolist() == [False, True, False, False]
    assert evaluate(col("x").is_null(), x, 4).tolist() == [False, False, True, False]
    assert evaluate(~col("x").is_null(), x, 4).tolist() == [True, True, False, True]
    assert evaluate((col("x") == 1) | col("x").is_null(), x, 4).tolist() == [True, False, True, True]


def test_isin_empty_and_not_in() -> None:
    x = {"x": pa.array([1, None, 3])}
    assert evaluate(col("x").isin([]), x, 3).tolist() == [False, False, False]
    assert evaluate(~col("x").isin([]), x, 3).tolist() == [True, False, True]
    assert evaluate([("x", "not in", [1])], x, 3).tolist() == [False, False, True]
    assert evaluate([("x", "not in", [])], x, 3).tolist() == [True, False, True]


# ----------------------------------------------------------------------------- expressions


def test_repr_and_columns() -> None:
    e = (col("code") >= 500) & (col("level") == "ERROR")
    assert repr(e) == "(col('code') >= 500) & (col('level') == 'ERROR')"
    assert e.columns() == {"code", "level"}
    e2 = ~((col("a") == 1) | col("b").isin([1, 2])) & col("c").is_not_null()
    assert repr(e2) == "~((col('a') == 1) | col('b').isin([1, 2])) & col('c').is_not_null()"
    assert repr(~col("c").is_null()) == "col('c').is_not_null()"
    assert repr(~(col("a") < 1)) == "~(col('a') < 1)"
    assert e2.columns() == {"a", "b", "c"}


def test_reflected_flattened_and_frozen() -> None:
    assert (5 < col("x")) == (col("x") > 5)
    assert (5 == col("x")) == (col("x") == 5)
    assert ("a" >= col("s")) == (col("s") <= "a")
    a, b, c = col("a") == 1, col("b") == 2, col("c") == 3
    assert isinstance((a & b) & c, And) and len(((a & b) & c).operands) == 3
    assert len((a & (b & c)).operands) == 3
    assert len(((a | b) | (c | a)).operands) == 4
    assert ~~a == a
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.value = 2  # type: ignore[misc]
    assert hash(a) == hash(col("a") == 1)


@pytest.mark.parametrize(
    "make",
    [
        lambda: (col("a") == 1) and (col("b") == 2),
        lambda: (col("a") == 1) or (col("b") == 2),
        lambda: not (col("a") == 1),
        lambda: 1 < col("a") < 5,
        lambda: bool(col("a")),
    ],
    ids=["and", "or", "not", "chained", "bare-col"],
)
def test_python_keywords_fail_loudly(make) -> None:
    with pytest.raises(QueryError, match=r"&|compare it"):
        make()


def test_bad_constructions() -> None:
    with pytest.raises(QueryError, match=r"is_null\(\)"):
        col("a") == None  # noqa: B015, E711
    with pytest.raises(QueryError, match=r"is_null"):
        col("a") != np.datetime64("NaT")  # noqa: B015
    with pytest.raises(QueryError, match="literal"):
        col("a") == col("b")  # noqa: B015
    with pytest.raises(QueryError, match="isin"):
        col("a").isin("abc")
    with pytest.raises(QueryError, match=r"is_null"):
        col("a").isin([1, None])
    with pytest.raises(QueryError, match="combine"):
        (col("a") == 1) & True  # noqa: B018
    with pytest.raises(QueryError, match="operator"):
        Cmp("a", "<>", 1)


# ----------------------------------------------------------------------------- DNF


def test_dnf_equals_expr() -> None:
    assert as_expr(None) is None
    e = col("a") > 1
    assert as_expr(e) is e
    assert as_expr([("a", ">", 1)]) == e
    assert as_expr([("a", "=", 1), ("b", "!=", "x")]) == (col("a") == 1) & (col("b") != "x")
    assert as_expr([[("a", "<=", 1), ("b", "in", [1, 2])], [("c", "not in", (3,))]]) == (
        ((col("a") <= 1) & col("b").isin([1, 2])) | ~col("c").isin([3])
    )
    assert as_expr([("a", "IN", {4})]) == col("a").isin([4])


def test_dnf_evaluates_like_expr() -> None:
    cols = {"a": pa.array([1, 2, None, 4]), "b": pa.array(["x", None, "y", "x"])}
    dnf = [[("a", ">=", 2), ("b", "==", "x")], [("a", "in", [1])]]
    ex = ((col("a") >= 2) & (col("b") == "x")) | col("a").isin([1])
    assert evaluate(dnf, cols, 4).tolist() == evaluate(ex, cols, 4).tolist() == [True, False, False, True]


@pytest.mark.parametrize(
    ("bad", "pattern"),
    [
        ([], r"empty list"),
        ([[]], r"empty conjunction at filter\[0\]"),
        ([("a", "==")], r"filter\[0\].*2 items"),
        ([("a", "==", 1), ("b", "==", 1, 2)], r"filter\[1\].*4 items"),
        ([[("a", "==", 1)], [("a", "==", 1), ("b", "like", "x")]], r"unknown operator 'like' at filter\[1\]\[1\]"),
        ([("a", "in", 3)], r"isin\(\) needs a list.*filter\[0\]"),
        ([("a", "in", "abc")], r"isin\(\) needs a list"),
        ([("a", "==", None)], r"is_null\(\).*filter\[0\]"),
        ([(1, "==", 1)], r"column name at filter\[0\] must be a str"),
        ([("a", "==", 1), [("b", "==", 1)]], r"mixes"),
        (("a", "==", 1), r"bare tuple"),
        ("a == 1", r"filter must be"),
        (col("a"), r"column, not a condition"),
    ],
)
def test_dnf_errors(bad, pattern) -> None:
    with pytest.raises(QueryError, match=pattern):
        as_expr(bad)


# ----------------------------------------------------------------------------- validation

SCHEMA = {"i": "int", "u": "uint", "f": "float64", "b": "bool", "s": "string", "y": "binary", "t": "timestamp"}


def test_validate_unknown_column_lists_existing() -> None:
    with pytest.raises(QueryError) as info:
        validate((col("i") == 1) & (col("nope") == 1), SCHEMA)
    assert "'nope'" in str(info.value) and "['b', 'f', 'i', 's', 't', 'u', 'y']" in str(info.value)
    assert info.value.column == "nope"
    with pytest.raises(QueryError, match=r"unknown column 'zz'; available columns: \['x'\]"):
        evaluate(col("zz") == 1, {"x": pa.array([1])}, 1)


@pytest.mark.parametrize(
    ("expr", "kind", "typ"),
    [
        (col("i") == "1", "int", "str"),
        (col("i") == True, "int", "bool"),  # noqa: E712
        (col("u").isin([1, b"2"]), "uint", "bytes"),
        (col("f") < "x", "float64", "str"),
        (col("b") == 1, "bool", "int"),
        (col("s") == b"x", "string", "bytes"),
        (col("y") == "x", "binary", "str"),
        (col("t") > "2020-01-01", "timestamp", "str"),
        (col("t") > dt.date(2020, 1, 1), "timestamp", "date"),
    ],
)
def test_validate_wrong_literal_type(expr, kind, typ) -> None:
    with pytest.raises(QueryError, match=rf"of type {typ} cannot be compared with a {kind} column") as info:
        validate(expr, SCHEMA)
    assert info.value.column == next(iter(expr.columns()))


def test_validate_accepts() -> None:
    ok = [
        col("i") == 2.5, col("i").isin([1, np.int8(2), 3.0]), col("u") > -1, col("f") == np.float32(1), col("f") < 2,
        col("b") == np.bool_(True), col("s").isin([]), col("y") == b"x", col("y") == bytearray(b"x"),
        col("t") > dt.datetime(2020, 1, 1), col("t") > np.datetime64("2020-01-01"), col("t") > pd.Timestamp(0),
        col("i").is_null(),
    ]  # fmt: skip
    for e in ok:
        validate(e, SCHEMA)


# ----------------------------------------------------------------------------- exact literals


def test_uint64_vs_negative_and_huge_literals() -> None:
    u = {"u": pa.array([0, 2**64 - 1, None], pa.uint64())}
    assert evaluate(col("u") > -1, u, 3).tolist() == [True, True, False]
    assert evaluate(col("u") == -1, u, 3).tolist() == [False, False, False]
    assert evaluate(col("u") != -1, u, 3).tolist() == [True, True, False]
    assert evaluate(col("u") < 2**64, u, 3).tolist() == [True, True, False]
    assert evaluate(col("u") == 2**64 - 1, u, 3).tolist() == [False, True, False]
    assert evaluate(col("u").isin([-1, 2**64 - 1, 2.0**64]), u, 3).tolist() == [False, True, False]


def test_int_vs_float_literal_is_numeric_and_exact() -> None:
    x = {"x": pa.array([1, 2, 3, 2**53 + 1, None])}
    assert evaluate(col("x") > 2.5, x, 5).tolist() == [False, False, True, True, False]
    assert evaluate(col("x") <= 2.5, x, 5).tolist() == [True, True, False, False, False]
    assert evaluate(col("x") == 2.0, x, 5).tolist() == [False, True, False, False, False]
    assert evaluate(col("x") == 2.5, x, 5).tolist() == [False] * 5
    assert evaluate(col("x") != 2.5, x, 5).tolist() == [True] * 4 + [False]
    assert evaluate(col("x") < math.inf, x, 5).tolist() == [True] * 4 + [False]
    assert evaluate(col("x") != math.nan, x, 5).tolist() == [True] * 4 + [False]
    # A float64 cast would round 2**53 + 1 to 2**53.
    assert evaluate(col("x") == 2**53 + 1, x, 5).tolist() == [False, False, False, True, False]
    assert evaluate(col("x") > float(2**53), x, 5).tolist() == [False, False, False, True, False]


def test_float_semantics_nan_and_signed_zero() -> None:
    f = {"f": pa.array([math.nan, -0.0, 0.0, 1.0, None, 2.0**53])}
    assert evaluate(col("f") == math.nan, f, 6).tolist() == [False] * 6
    assert evaluate(col("f") != math.nan, f, 6).tolist() == [True] * 4 + [False, True]
    assert evaluate(col("f") < 1, f, 6).tolist() == [False, True, True, False, False, False]
    assert evaluate(~(col("f") < 1), f, 6).tolist() == [True, False, False, True, False, True]
    assert evaluate(col("f").isin([0.0, math.nan]), f, 6).tolist() == [False, True, True, False, False, False]
    assert evaluate(col("f") == -0.0, f, 6).tolist() == [False, True, True, False, False, False]
    assert evaluate(col("f") < 2**53 + 1, f, 6).tolist() == [False, True, True, True, False, True]
    assert evaluate(col("f") == 2**53 + 1, f, 6).tolist() == [False] * 6
    g = {"g": pa.array([0.1, 0.5], pa.float32())}
    # float32(0.1) > 0.1 exactly; comparing after rounding the literal to float32 would say "equal".
    assert evaluate(col("g") > 0.1, g, 2).tolist() == [True, True]
    assert evaluate(col("g") == float(np.float32(0.1)), g, 2).tolist() == [True, False]


@pytest.mark.parametrize("typ", [pa.int8(), pa.uint16(), pa.int32(), pa.uint64(), pa.float32(), pa.float64()])
def test_numeric_leaves_compare_the_buffer_values_of_present_rows_only(typ) -> None:
    """Numeric leaves compare the values buffer in place: a sliced array (offset not on a
    byte of the bitmap) and null rows whose slots hold values that would match."""
    np_type = np.dtype(typ.to_pandas_dtype())
    values = np.array([5, 1, 7, 7, 3, 9, 7, 2, 8, 7, 0, 4], dtype=np_type)  # slots of null rows: 7
    valid = np.array([1, 1, 0, 1, 1, 1, 0, 1, 1, 0, 1, 1], dtype=bool)
    arr = pa.Array.from_buffers(typ, len(values), [pa.py_buffer(np.packbits(valid, bitorder="little")),
                                                   pa.py_buffer(values)], null_count=int((~valid).sum()))
    for start in (0, 3, 5):
        part = arr.slice(start)
        vals, ok = values[start:], valid[start:]
        n = len(part)
        for op, fn in _PY_OPS.items():
            got = evaluate(col("x")._cmp(op, 7), {"x": part}, n)
            want = np.array([bool(ok[i] and fn(vals[i].item(), 7)) for i in range(n)])
            np.testing.assert_array_equal(got, want, err_msg=f"{typ} {op} from row {start}")
            negated = evaluate(~col("x")._cmp(op, 7), {"x": part}, n)  # NULL stays UNKNOWN under NOT
            np.testing.assert_array_equal(negated, ok & ~want, err_msg=f"not {typ} {op} from row {start}")


def test_bool_binary_and_string_columns() -> None:
    b = {"b": pa.array([True, False, None])}
    assert evaluate(col("b") == True, b, 3).tolist() == [True, False, False]  # noqa: E712
    assert evaluate(col("b") < True, b, 3).tolist() == [False, True, False]
    y = {"y": pa.array([b"a", b"b", None], pa.large_binary())}
    assert evaluate(col("y") >= bytearray(b"b"), y, 3).tolist() == [False, True, False]
    s = {"s": pa.array(["é", "z", "", None], pa.string_view())}
    assert evaluate(col("s") > "z", s, 4).tolist() == [True, False, False, False]


# ----------------------------------------------------------------------------- timestamps


@pytest.mark.parametrize("unit", ["s", "ms", "us", "ns"])
def test_timestamp_units_and_subunit_literals(unit: str) -> None:
    per_s = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}[unit]
    t = {"t": pa.array([0, per_s, 2 * per_s, None], pa.timestamp(unit))}
    half = pd.Timestamp(1_500_000_001)  # 1.500000001 s after the epoch
    assert evaluate(col("t") > half, t, 4).tolist() == [False, False, True, False]
    assert evaluate(col("t") <= half, t, 4).tolist() == [True, True, False, False]
    assert evaluate(col("t") == half, t, 4).tolist() == [False] * 4
    assert evaluate(col("t") == dt.datetime(1970, 1, 1, 0, 0, 1), t, 4).tolist() == [False, True, False, False]
    assert evaluate(col("t").isin([np.datetime64(2000, "ms"), half]), t, 4).tolist() == [False, False, True, False]
    assert evaluate(col("t") < np.datetime64("1970-01-02"), t, 4).tolist() == [True, True, True, False]


def test_timestamp_timezones() -> None:
    utc = {"t": pa.array([0, 3600, None], pa.timestamp("s", tz="UTC"))}
    paris = dt.timezone(dt.timedelta(hours=1))
    # 01:00+01:00 is the epoch instant.
    assert evaluate(col("t") == dt.datetime(1970, 1, 1, 1, tzinfo=paris), utc, 3).tolist() == [True, False, False]
    assert evaluate(col("t") > pd.Timestamp("1970-01-01 01:30", tz="Europe/Paris"), utc, 3).tolist() == [
        False, True, False,
    ]  # fmt: skip
    with pytest.raises(QueryError, match="timezone-aware.*timezone-naive literal") as info:
        evaluate(col("t") > dt.datetime(1970, 1, 1), utc, 3)
    assert info.value.column == "t"
    with pytest.raises(QueryError, match="timezone-aware.*timezone-naive"):
        evaluate(col("t") > np.datetime64(0, "s"), utc, 3)
    naive = {"t": pa.array([0], pa.timestamp("ms"))}
    with pytest.raises(QueryError, match="timezone-naive timestamp column with the timezone-aware"):
        evaluate(col("t").isin([pd.Timestamp(0, tz="UTC")]), naive, 1)


# ----------------------------------------------------------------------------- column forms and errors


def test_dictionary_with_null_values_and_indices() -> None:
    d = pa.DictionaryArray.from_arrays(pa.array([0, 1, None, 2, 0], pa.int8()), pa.array(["a", None, "c"]))
    cols = {"d": d}
    assert evaluate(col("d").is_null(), cols, 5).tolist() == [False, True, True, False, False]
    assert evaluate(col("d") == "a", cols, 5).tolist() == [True, False, False, False, True]
    assert evaluate(~(col("d") == "a"), cols, 5).tolist() == [False, False, False, True, False]
    empty = pa.DictionaryArray.from_arrays(pa.array([None, None], pa.int32()), pa.array([], pa.string()))
    assert evaluate(col("d").is_null(), {"d": empty}, 2).tolist() == [True, True]
    assert evaluate(col("d") != "a", {"d": empty}, 2).tolist() == [False, False]


def test_large_dictionary_matches_plain() -> None:
    rng = np.random.default_rng(7)
    words = np.array(["DEBUG", "INFO", "WARN", "ERROR"])
    vals = words[rng.integers(0, 4, 200_000)]
    plain = pa.array(vals)
    e = col("lvl").isin(["WARN", "ERROR"]) & (col("lvl") != "WARN")
    got = evaluate(e, {"lvl": plain.dictionary_encode()}, len(vals))
    np.testing.assert_array_equal(got, evaluate(e, {"lvl": plain}, len(vals)))
    np.testing.assert_array_equal(got, vals == "ERROR")


def test_empty_and_none_filter() -> None:
    assert evaluate(None, {}, 3).tolist() == [True, True, True]
    assert evaluate(col("x") > 1, {"x": pa.array([], pa.int64())}, 0).tolist() == []
    assert evaluate(col("x") > 1, {"x": pa.chunked_array([], pa.int64())}, 0).tolist() == []


def test_evaluation_errors_name_the_column() -> None:
    with pytest.raises(QueryError, match=r"column has 2 rows but the batch has 3 - at column 'x'"):
        evaluate(col("x") > 1, {"x": pa.array([1, 2])}, 3)
    with pytest.raises(QueryError, match=r"cannot be filtered - at column 'd'"):
        evaluate(col("d") > 1, {"d": pa.array([1], pa.date32())}, 1)
    # Arrow itself rejects a 3-byte literal for a 2-byte fixed-size binary column.
    with pytest.raises(QueryError, match=r"cannot evaluate .*Arrow.* - at column 'y'") as info:
        evaluate(col("y") == b"abc", {"y": pa.array([b"ab"], pa.binary(2))}, 1)
    assert info.value.column == "y"
