"""``parse_where``: SQL-like WHERE text builds exactly the Expr the operator API builds.

Contract: every accepted string gives the same tree as ``col(...)`` operators (literal
first or column first), so the same rows survive; every rejected string raises
``QueryError`` naming the 0-based position of the offending token (``err.position``).
"""

from __future__ import annotations

import datetime as dt
import operator

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

import qdf_columnar as qdf
from qdf_columnar.errors import QueryError
from qdf_columnar.query import col, evaluate
from qdf_columnar.query.parse import MAX_DEPTH, parse_where

UTC = dt.timezone.utc

CASES = [
    ("code >= 500 and level == 'ERROR'", (col("code") >= 500) & (col("level") == "ERROR")),
    ('not (a < 3 or b != "x")', ~((col("a") < 3) | (col("b") != "x"))),
    ("level in ('ERROR', 'WARN')", col("level").isin(["ERROR", "WARN"])),
    ("level not in ('DEBUG',)", ~col("level").isin(["DEBUG"])),
    ("a in ()", col("a").isin([])),
    ("a in (1, 2.5, -3)", col("a").isin([1, 2.5, -3])),
    ("user_id is null", col("user_id").is_null()),
    ("user_id is not null", col("user_id").is_not_null()),
    ("not user_id is null", col("user_id").is_not_null()),
    ("500 <= code", col("code") >= 500),
    ("1 < a", col("a") > 1),
    ("1 > a", col("a") < 1),
    ("1 >= a", col("a") <= 1),
    ("1 == a", col("a") == 1),
    ("1 != a", col("a") != 1),
    ("'x' = s", col("s") == "x"),
    ("a = 1", col("a") == 1),
    ("a <> 1", col("a") != 1),
    ("a>-5", col("a") > -5),
    ("a > +5", col("a") > 5),
    ("a > 1.5", col("a") > 1.5),
    ("a > -1.5e3", col("a") > -1500.0),
    ("a > .5", col("a") > 0.5),
    ("a > 1e3", col("a") > 1000.0),
    ("a > 1.", col("a") > 1.0),
    ("a > 0x1F", col("a") > 31),
    ("a > 123456789012345678901234567890", col("a") > 123456789012345678901234567890),
    ("-2 < a", col("a") > -2),
    ("flag == true", col("flag") == True),  # noqa: E712 - builds a filter, not a Python comparison
    ("flag = FALSE", col("flag") == False),  # noqa: E712
    ("flag", col("flag") == True),  # noqa: E712
    ("not flag and x > 1", ~(col("flag") == True) & (col("x") > 1)),  # noqa: E712
    ("s == 'it''s'", col("s") == "it's"),
    ("s == 'it\\'s'", col("s") == "it's"),
    ('s == "say ""hi"""', col("s") == 'say "hi"'),
    ("s == 'a\\\\b\\n\\t'", col("s") == "a\\b\n\t"),
    ("s == ''", col("s") == ""),
    ("s == 'héllo ✓'", col("s") == "héllo ✓"),
    ("A > 1 AND B < 2 OR NOT C IS NULL", ((col("A") > 1) & (col("B") < 2)) | col("C").is_not_null()),
    ("a = 1 or b = 2 and c = 3", (col("a") == 1) | ((col("b") == 2) & (col("c") == 3))),
    ("(a = 1 or b = 2) and c = 3", ((col("a") == 1) | (col("b") == 2)) & (col("c") == 3)),
    ("a = 1 or a = 2 or a = 3", (col("a") == 1) | (col("a") == 2) | (col("a") == 3)),
    ("not not a = 1", col("a") == 1),
    ("((a > 1))", col("a") > 1),
    ("  a>1and(b<2)  ".replace("1and", "1 and"), (col("a") > 1) & (col("b") < 2)),
    ("`my col` >= 2", col("my col") >= 2),
    ("`and` = 1", col("and") == 1),
    ("ts >= timestamp '2026-01-01T00:00:00Z'", col("ts") >= dt.datetime(2026, 1, 1, tzinfo=UTC)),
    ("ts < TIMESTAMP '2026-01-01'", col("ts") < dt.datetime(2026, 1, 1)),
    ("ts < timestamp '2026-01-01 10:30'", col("ts") < dt.datetime(2026, 1, 1, 10, 30)),
    ("ts < timestamp '2026-01-01T10:30:00.25+02:00'",
     col("ts") < dt.datetime(2026, 1, 1, 10, 30, 0, 250000, tzinfo=dt.timezone(dt.timedelta(hours=2)))),
    ("ts < timestamp '2026-01-01T00:00:00.000000001'", col("ts") < np.datetime64("2026-01-01T00:00:00.000000001")),
    ("timestamp '2026-01-01' <= ts", col("ts") >= dt.datetime(2026, 1, 1)),
    ("timestamp > timestamp '2026-01-01'", col("timestamp") > dt.datetime(2026, 1, 1)),
    ("timestamp is null", col("timestamp").is_null()),
    ("ts in (timestamp '2026-01-01', timestamp '2026-01-02')",
     col("ts").isin([dt.datetime(2026, 1, 1), dt.datetime(2026, 1, 2)])),
]


@pytest.mark.parametrize(("text", "expected"), CASES, ids=[c[0] for c in CASES])
def test_parses_to_the_operator_tree(text: str, expected: qdf.Expr) -> None:
    assert parse_where(text) == expected


ERRORS = [
    ("", 0, "empty"),
    ("   ", 0, "empty"),
    ("a >", 3, "expected a literal"),
    ("a > > 1", 4, "expected a literal"),
    ("(a > 1", 6, "expected ')'"),
    ("a > 1)", 5, "expected 'and', 'or'"),
    ("a > 1 b < 2", 6, "expected 'and', 'or'"),
    ("a > b", 4, "two columns"),
    ("1 > 2", 4, "column"),
    ("'x", 0, "unterminated string"),
    ("a == 'x", 5, "unterminated string"),
    ("a > 1 and", 9, "found the end"),
    ("and > 1", 0, "keyword"),
    ("a ! 1", 2, "unexpected character"),
    ("a > 1 ; drop", 6, "unexpected character"),
    ("5x > 1", 0, "malformed number"),
    ("a > 1.2.3", 4, "malformed number"),
    ("a in (1 2)", 8, "expected ',' or ')'"),
    ("a in 1", 5, "expected '('"),
    ("a is 1", 5, "expected 'null'"),
    ("a not null", 6, "expected 'in' after 'not'"),
    ("a == null", 0, "is_null"),
    ("a in (1, null)", 0, "None/NaT inside isin"),
    ("a > -'x'", 5, "expected a number"),
    ("ts > timestamp 'bad'", 15, "not ISO 8601"),
    ("ts > timestamp '2026-13-01'", 15, "bad timestamp"),
    ("ts > timestamp '2026-01-01T00:00:00.0000000001+01:00'", 15, "microseconds"),
    ("a > 'x\\q'", 6, "unknown escape"),
    ("`` > 1", 0, "empty `quoted"),
    ("`a > 1", 0, "unterminated `quoted"),
    ("a > 1 and", 9, "expected a column name"),
]


@pytest.mark.parametrize(("text", "pos", "fragment"), ERRORS, ids=[e[0] or "<empty>" for e in ERRORS])
def test_bad_input_names_the_position(text: str, pos: int, fragment: str) -> None:
    with pytest.raises(QueryError) as info:
        parse_where(text)
    err = info.value
    assert err.position == pos  # type: ignore[attr-defined]
    assert f"position {pos}" in str(err)
    assert fragment in str(err)


def test_deep_nesting_is_refused_not_a_recursion_error() -> None:
    with pytest.raises(QueryError, match="nesting deeper"):
        parse_where("(" * (MAX_DEPTH + 5) + "a > 1" + ")" * (MAX_DEPTH + 5))
    with pytest.raises(QueryError, match="nesting deeper"):
        parse_where("not " * (MAX_DEPTH + 5) + "a > 1")
    assert parse_where("(" * 50 + "a > 1" + ")" * 50) == (col("a") > 1)


def test_not_a_string() -> None:
    with pytest.raises(QueryError, match="must be a str"):
        parse_where(5)  # type: ignore[arg-type]


def test_long_text_is_clipped_in_the_message() -> None:
    text = "a > 1 and " * 20 + "b >"
    with pytest.raises(QueryError) as info:
        parse_where(text)
    assert len(str(info.value)) < 200 and "..." in str(info.value)


# ----------------------------------------------------------------------------- property

N = 12
TABLE = pa.table({
    "rid": pa.array(range(N), pa.int64()),  # which rows survive
    "i": pa.array([0, 1, 2, None, 4, 5, -1, 7, None, 3, 2, 8], pa.int64()),
    "f": pa.array([0.5, -1.5, None, 2.25, float("nan"), 3.0, 0.0, None, 1.0, -2.0, 2.25, 9.5]),
    "s": pa.array(["a", "b", None, "it's", "", "é", "a", 'q"', None, "b", "zz", "a"]),
    "b": pa.array([True, False, None, True, True, False, None, False, True, True, False, True]),
    "t": pa.array([dt.datetime(2026, 1, d, tzinfo=UTC) if d else None for d in (1, 2, 3, 0, 5, 6, 7, 8, 9, 0, 11, 12)],
                  pa.timestamp("us", tz="UTC")),
})
BUF = qdf.encode(TABLE)

_OPS = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}
_SPELLINGS = {"==": ["==", "="], "!=": ["!=", "<>"]}


def _kw(draw: st.DrawFn, word: str) -> str:
    return draw(st.sampled_from([word, word.upper(), word.capitalize()]))


def _ws(draw: st.DrawFn) -> str:
    return draw(st.sampled_from([" ", "  ", "\t", "\n "]))


def _str_lit(draw: st.DrawFn, value: str) -> str:
    quote = draw(st.sampled_from(["'", '"']))
    escape = draw(st.booleans())
    body = value.replace("\\", "\\\\")
    body = body.replace(quote, "\\" + quote if escape else quote * 2)
    return quote + body + quote


def _literal(draw: st.DrawFn, column: str) -> tuple[str, object]:
    if column == "i":
        v = draw(st.integers(-3, 9))
        return (str(v) if v >= 0 or draw(st.booleans()) else f"- {-v}"), v
    if column == "f":
        v = draw(st.sampled_from([-1.5, 0.0, 0.5, 2.25, 3, 10.0, -2]))
        return repr(v), v
    if column == "s":
        v = draw(st.sampled_from(["a", "b", "it's", "", "é", 'q"', "zz", "back\\slash"]))
        return _str_lit(draw, v), v
    if column == "b":
        v = draw(st.booleans())
        return _kw(draw, "true" if v else "false"), v
    day = draw(st.integers(1, 12))
    return f"{_kw(draw, 'timestamp')} '2026-01-{day:02d}T00:00:00Z'", dt.datetime(2026, 1, day, tzinfo=UTC)


@st.composite
def leaves(draw: st.DrawFn) -> tuple[str, qdf.Expr]:
    column = draw(st.sampled_from(["i", "f", "s", "b", "t"]))
    kind = draw(st.sampled_from(["cmp", "cmp", "in", "null"]))
    if kind == "null":
        negated = draw(st.booleans())
        text = f"{column} {_kw(draw, 'is')} " + (f"{_kw(draw, 'not')} " if negated else "") + _kw(draw, "null")
        return text, (col(column).is_not_null() if negated else col(column).is_null())
    if kind == "in":
        pairs = [_literal(draw, column) for _ in range(draw(st.integers(0, 3)))]
        negated = draw(st.booleans())
        text = f"{column} " + (f"{_kw(draw, 'not')} " if negated else "") + _kw(draw, "in") + " (" \
            + ", ".join(p[0] for p in pairs) + ")"
        e = col(column).isin([p[1] for p in pairs])
        return text, (~e if negated else e)
    op = draw(st.sampled_from(["==", "!="] if column == "b" else list(_OPS)))
    spelled = draw(st.sampled_from(_SPELLINGS.get(op, [op])))
    lit, value = _literal(draw, column)
    if draw(st.booleans()):
        return f"{column}{_ws(draw)}{spelled}{_ws(draw)}{lit}", _OPS[op](col(column), value)
    # Literal first: Python's reflected comparison builds the API's tree (5 < col -> col > 5).
    return f"{lit}{_ws(draw)}{spelled}{_ws(draw)}{column}", _OPS[op](value, col(column))


def _combine(children: st.SearchStrategy[tuple[str, qdf.Expr]]) -> st.SearchStrategy[tuple[str, qdf.Expr]]:
    @st.composite
    def node(draw: st.DrawFn) -> tuple[str, qdf.Expr]:
        kind = draw(st.sampled_from(["and", "or", "not", "parens"]))
        a_text, a = draw(children)
        if kind == "not":
            return f"{_kw(draw, 'not')} ({a_text})", ~a
        if kind == "parens":
            return f"({_ws(draw)}{a_text}{_ws(draw)})", a
        b_text, b = draw(children)
        text = f"({a_text}){_ws(draw)}{_kw(draw, kind)}{_ws(draw)}({b_text})"
        return text, (a & b if kind == "and" else a | b)

    return node()


expressions = st.recursive(leaves(), _combine, max_leaves=8)


@given(expressions)
def test_random_expressions_match_the_operator_api(case: tuple[str, qdf.Expr]) -> None:
    text, expected = case
    parsed = parse_where(text)
    assert parsed == expected, text
    columns = {name: TABLE.column(name) for name in TABLE.column_names}
    assert np.array_equal(evaluate(parsed, columns, N), evaluate(expected, columns, N)), text
    rows = qdf.decode(BUF, columns=["rid"], filter=parsed, output="arrow")["rid"].to_pylist()
    assert rows == qdf.decode(BUF, columns=["rid"], filter=expected, output="arrow")["rid"].to_pylist(), text
    assert rows == np.flatnonzero(evaluate(expected, columns, N)).tolist(), text
