"""Filters on dictionary-coded columns (the predicate once per distinct value, then one
kernel pass over the codes) give exactly what the same filter gives on the decoded
values, under SQL three-valued logic: NULL rows, NULL dictionary entries, sliced
arrays, index widths other than int32, NOT around comparisons."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import qdf_columnar as qdf
from qdf_columnar.query.evaluate import evaluate

ENTRIES = ["a", "b", "c", "dd", None]


@st.composite
def _dictionary_columns(draw: st.DrawFn) -> pa.DictionaryArray:
    d = draw(st.integers(1, len(ENTRIES)))
    entries = draw(st.permutations(ENTRIES))[:d]
    n = draw(st.integers(0, 70))
    codes = draw(st.lists(st.none() | st.integers(0, d - 1), min_size=n, max_size=n))
    itype = draw(st.sampled_from([pa.int8(), pa.int16(), pa.int32(), pa.int64()]))
    arr = pa.DictionaryArray.from_arrays(pa.array(codes, itype), pa.array(entries, pa.string()))
    lo = draw(st.integers(0, n))
    return arr.slice(lo, draw(st.integers(0, n - lo)))


_LEAVES = st.one_of(
    st.tuples(st.just("s"), st.sampled_from(["==", "!=", "<", "<=", ">", ">="]), st.sampled_from(["a", "b", "c", "z"])),
    st.tuples(st.just("s"), st.just("in"), st.lists(st.sampled_from(["a", "c", "dd", "q"]), max_size=3)),
    st.tuples(st.just("s"), st.sampled_from(["is_null", "is_not_null"]), st.none()),
)


def _expr(leaf: tuple, negate: bool) -> qdf.col:  # type: ignore[valid-type]
    c = qdf.col("s")
    name, op, v = leaf
    if op == "in":
        e = c.isin(v)
    elif op == "is_null":
        e = c.is_null()
    elif op == "is_not_null":
        e = c.is_not_null()
    else:
        e = {"==": c == v, "!=": c != v, "<": c < v, "<=": c <= v, ">": c > v, ">=": c >= v}[op]
    return ~e if negate else e


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(arr=_dictionary_columns(), leaf=_LEAVES, negate=st.booleans())
def test_a_dictionary_column_filters_like_its_values(arr: pa.DictionaryArray, leaf: tuple, negate: bool) -> None:
    expr = _expr(leaf, negate)
    want = evaluate(expr, {"s": arr.dictionary_decode()}, len(arr))
    got = evaluate(expr, {"s": arr}, len(arr))
    assert got.tolist() == want.tolist()


def test_a_code_outside_the_dictionary_is_a_query_error() -> None:
    bad = pa.DictionaryArray.from_buffers(pa.dictionary(pa.int32(), pa.string()), 2,
                                          [None, pa.py_buffer(np.array([0, 5], np.int32).tobytes())],
                                          pa.array(["a", "b"]))
    with pytest.raises(qdf.QueryError, match="outside"):
        evaluate(qdf.col("s") >= "a", {"s": bad}, 2)  # two entries match: the kernel path
