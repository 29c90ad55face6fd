"""Validate a filter against a schema and evaluate it over Arrow columns (qdf-wire-v1.md §4).

Leaves run as pyarrow.compute kernels and become twin masks (kleene.py); there is no
per-row Python.  Literals are turned into the column's own type *exactly* first: a
literal outside the column's range, or a float literal on an integer column, is
rewritten to an equivalent integer comparison or a constant, because letting Arrow cast
would wrap (uint64 vs -1) or round (int64 vs 2.5, int vs float64 beyond 2**53).
NaN is an ordinary present value compared with IEEE rules: ``NaN == x`` and ``NaN < x``
are FALSE, ``NaN != x`` is TRUE, and ``isin`` never matches NaN.  NULL rows are UNKNOWN.
"""

from __future__ import annotations

import datetime as _dt
import decimal
import functools
import math
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from qdf_kernels import columns as ck

from qdf_columnar.columns.buffers import data_values, validity_mask
from qdf_columnar.columns.coded import CodedColumn
from qdf_columnar.columns.decimals import scaled_int64, scaled_literal
from qdf_columnar.columns.runs import RunColumn
from qdf_columnar.errors import DecodeError, QueryError, UnsupportedTypeError
from qdf_columnar.query.dnf import FilterLike, as_expr
from qdf_columnar.query.expr import And, Cmp, Expr, IsIn, IsNull, Not, Or
from qdf_columnar.query.kleene import Masks, and_, false_of, not_, or_

__all__ = ["KINDS", "validate", "evaluate", "arrow_kind"]

KINDS: tuple[str, ...] = ("int", "uint", "float64", "float32", "bool", "string", "binary", "timestamp", "decimal")

_NUMERIC = (int, float, np.integer, np.floating)
_ACCEPTS: dict[str, tuple[tuple[type, ...], str]] = {
    "int": (_NUMERIC, "an int or float"),
    "uint": (_NUMERIC, "an int or float"),
    "float64": (_NUMERIC, "an int or float"),
    "float32": (_NUMERIC, "an int or float"),
    "bool": ((bool, np.bool_), "a bool"),
    "string": ((str,), "a str"),
    "binary": ((bytes, bytearray), "a bytes"),
    "timestamp": ((_dt.datetime, np.datetime64), "a datetime.datetime, numpy.datetime64 or pandas.Timestamp"),
    "decimal": ((*_NUMERIC, decimal.Decimal), "a decimal.Decimal, int or float"),
}
_PC_OPS: dict[str, Callable[..., Any]] = {
    "==": pc.equal, "!=": pc.not_equal, "<": pc.less, "<=": pc.less_equal, ">": pc.greater, ">=": pc.greater_equal,
}  # fmt: skip
#: The same comparisons on a numeric column's values as numpy sees them (a view of the
#: Arrow buffer): a boolean numpy mask straight away, where ``pc.*`` builds a bit-packed
#: Arrow array that then costs a conversion back (102 vs 11 us on 64k int64 values).
_NP_OPS: dict[str, Callable[..., Any]] = {
    "==": np.equal, "!=": np.not_equal, "<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
}  # fmt: skip
_UNITS_PER_SECOND = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9, "ps": 10**12, "fs": 10**15, "as": 10**18}


def _leaves(expr: Expr) -> list[Cmp | IsIn | IsNull]:
    if isinstance(expr, (And, Or)):
        return [leaf for e in expr.operands for leaf in _leaves(e)]
    if isinstance(expr, Not):
        return _leaves(expr.operand)
    if isinstance(expr, (Cmp, IsIn, IsNull)):
        return [expr]
    raise QueryError(f"not a filter expression: {type(expr).__name__} {expr!r}")


def _check_literal(value: Any, kind: str, column: str) -> None:
    types, accepted = _ACCEPTS[kind]
    # bool is an int subclass; True == 1 on an int column is almost certainly a mistake.
    wrong_bool = kind != "bool" and isinstance(value, (bool, np.bool_))
    if wrong_bool or not isinstance(value, types):
        raise QueryError(
            f"literal {value!r} of type {type(value).__name__} cannot be compared with a {kind} column; "
            f"use {accepted} literal",
            column=column,
        )


def validate(expr: Expr, schema: Mapping[str, str]) -> None:
    """Check that every column exists and every literal fits its column's kind.

    Parameters
    ----------
    expr
        The filter expression.
    schema
        Column name -> logical kind, one of ``KINDS``.  Numeric columns accept int and
        float literals (not bool); bool columns only bool; string only str; binary only
        bytes; timestamp only datetime / numpy.datetime64 / pandas.Timestamp.

    Raises
    ------
    QueryError
        Unknown column (the message lists the existing ones) or wrong literal type.
    """
    for leaf in _leaves(expr):
        name = leaf.column
        if name not in schema:
            raise QueryError(f"unknown column {name!r}; available columns: {sorted(schema)}", column=name)
        kind = schema[name]
        if kind not in _ACCEPTS:
            raise QueryError(f"column kind {kind!r} is not filterable; expected one of {list(KINDS)}", column=name)
        if isinstance(leaf, Cmp):
            _check_literal(leaf.value, kind, name)
        elif isinstance(leaf, IsIn):
            for v in leaf.values:
                _check_literal(v, kind, name)


def arrow_kind(t: pa.DataType) -> str | None:
    """Logical kind of an Arrow type (dictionary -> its value type), or None if not filterable."""
    if pa.types.is_dictionary(t):
        t = t.value_type
    checks = (
        (pa.types.is_signed_integer, "int"), (pa.types.is_unsigned_integer, "uint"),
        (pa.types.is_float64, "float64"), (pa.types.is_float32, "float32"), (pa.types.is_boolean, "bool"),
        (pa.types.is_string, "string"), (pa.types.is_large_string, "string"), (pa.types.is_string_view, "string"),
        (pa.types.is_binary, "binary"), (pa.types.is_large_binary, "binary"), (pa.types.is_binary_view, "binary"),
        (pa.types.is_fixed_size_binary, "binary"),
        (pa.types.is_timestamp, "timestamp"), (pa.types.is_decimal, "decimal"),
    )  # fmt: skip
    return next((kind for check, kind in checks if check(t)), None)


# ----------------------------------------------------------------------------- literals


def _exact(value: Any) -> int | Fraction | float:
    """An exact rational for a finite number (Python compares int/float exactly; so must we)."""
    if isinstance(value, (int, np.integer)):
        return int(value)
    f = float(value)
    return f if not math.isfinite(f) else Fraction(f)


def _const(op: str, below: bool) -> bool:
    """Result of ``x <op> k`` for every x when k is below (or above) the column's range."""
    if op in ("==", "!="):
        return op == "!="
    return (op in (">", ">=")) == below


def _int_pred(arr: pa.Array, op: str, q: int | Fraction | float, lo: int, hi: int) -> pa.Array | bool:
    """``arr <op> q`` for an integer-valued ``arr`` in ``[lo, hi]`` and an exact number ``q``."""
    if isinstance(q, float):  # NaN or +-inf
        if math.isnan(q):
            return op == "!="
        return _const(op, below=q < 0)
    if isinstance(q, Fraction) and q.denominator != 1:
        if op in ("==", "!="):
            return op == "!="
        # x < 2.5 <=> x <= 2 and x > 2.5 <=> x > 2 for integer x.
        op, q = ("<=" if op in ("<", "<=") else ">"), math.floor(q)
    k = int(q)
    if k < lo or k > hi:
        return _const(op, below=k < lo)
    return _compare(arr, op, k)


def _values_view(arr: pa.Array) -> np.ndarray | None:
    """The values of an integer or float32 / float64 array as a numpy view of its buffer
    (null rows' slots hold anything), or None for another type."""
    t = arr.type
    if not (pa.types.is_integer(t) or pa.types.is_float32(t) or pa.types.is_float64(t)) or not len(arr):
        return None
    return None if arr.buffers()[1] is None else data_values(arr)


def _compare(arr: pa.Array, op: str, value: int | float) -> pa.Array | np.ndarray:
    """``arr <op> value`` for a literal the column's type holds exactly: a numpy mask on a
    numeric column (null rows: anything, the caller masks them), else an Arrow array."""
    view = _values_view(arr)
    if view is None:
        return _PC_OPS[op](arr, pa.scalar(value, arr.type))
    return _NP_OPS[op](view, view.dtype.type(value))  # the literal in the column's own dtype: exact


def _float_literal(op: str, value: Any) -> tuple[str, float] | bool:
    """Rewrite ``x <op> value`` for float64 x so the float literal is exact (or a constant)."""
    if not isinstance(value, (int, np.integer)):
        return op, float(value)
    k = int(value)
    try:
        f = float(k)
    except OverflowError:
        f = math.inf if k > 0 else -math.inf
    if f == k:
        return op, f
    if op in ("==", "!="):
        return op == "!="  # a float64 never equals an int it cannot represent
    below = f if f < k else math.nextafter(f, -math.inf)  # largest float64 < k
    above = f if f > k else math.nextafter(f, math.inf)  # smallest float64 > k
    return ("<=", below) if op in ("<", "<=") else (">=", above)


def _ts_seconds(value: Any) -> tuple[Fraction, bool]:
    """(seconds since the epoch as an exact Fraction, is the literal timezone-aware)."""
    if isinstance(value, np.datetime64):
        unit, count = np.datetime_data(value.dtype)
        if unit not in _UNITS_PER_SECOND:  # Y/M/W/D/h/m: calendar units, convert exactly to seconds
            value, unit, count = value.astype("datetime64[s]"), "s", 1
        return Fraction(int(value.astype(np.int64)) * count, _UNITS_PER_SECOND[unit]), False
    nanos = 0
    if hasattr(value, "to_pydatetime"):  # pandas.Timestamp keeps nanoseconds datetime cannot
        nanos = int(value.nanosecond)
        value = value.to_pydatetime(warn=False)
    aware = value.tzinfo is not None and value.utcoffset() is not None
    epoch = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc) if aware else _dt.datetime(1970, 1, 1)
    d = value.replace(tzinfo=None) - epoch if not aware else value - epoch
    micros = (d.days * 86400 + d.seconds) * 10**6 + d.microseconds
    return Fraction(micros * 1000 + nanos, 10**9), aware


def _ts_ticks(value: Any, t: pa.TimestampType) -> Fraction:
    secs, aware = _ts_seconds(value)
    if aware != (t.tz is not None):
        col_desc = f"timezone-aware ({t.tz})" if t.tz is not None else "timezone-naive"
        raise QueryError(
            f"cannot compare a {col_desc} timestamp column with the timezone-{'aware' if aware else 'naive'} "
            f"literal {value!r}; {'drop' if aware else 'attach'} the literal's timezone",
        )
    return secs * _UNITS_PER_SECOND[t.unit]


# ----------------------------------------------------------------------------- leaves


def _predicate(node: Cmp | IsIn, arr: pa.Array, kind: str) -> pa.Array | bool:
    """Boolean Arrow array (or a constant for every present row) for one leaf on a plain array."""
    if kind in ("int", "uint", "timestamp", "decimal"):
        conv: Callable[[Any], Any] = _exact
        if kind == "decimal":
            # Compare the scaled integers; the literal becomes an exact (maybe fractional) scaled value.
            conv = functools.partial(scaled_literal, scale=arr.type.scale)
            arr = _decimal_ints(arr)
        elif kind == "timestamp":
            # Compare the int64 ticks; the literal becomes an exact (maybe fractional) tick count.
            conv = functools.partial(_ts_ticks, t=arr.type)
            arr = arr.view(pa.int64())
        info = np.iinfo(arr.type.to_pandas_dtype())
        lo, hi = int(info.min), int(info.max)
        if isinstance(node, Cmp):
            return _int_pred(arr, node.op, conv(node.value), lo, hi)
        qs = [conv(v) for v in node.values]
        keep = [int(q) for q in qs if not isinstance(q, float) and q.denominator == 1 and lo <= q <= hi]
        return pc.is_in(arr, value_set=pa.array(keep, arr.type)) if keep else False
    if kind in ("float64", "float32"):
        if kind == "float32":
            arr = arr.cast(pa.float64())  # exact; comparing in float32 would round the literal
        if isinstance(node, Cmp):
            lit = _float_literal(node.op, node.value)
            return lit if isinstance(lit, bool) else _compare(arr, lit[0], lit[1])
        vals = [v for v in (_float_literal("==", v) for v in node.values) if not isinstance(v, bool)]
        # IEEE: NaN matches nothing and -0.0 == 0.0, but Arrow's hash-based is_in does the opposite.
        keep = [f + 0.0 for _, f in vals if not math.isnan(f)]
        if not keep:
            return False
        return pc.is_in(pc.add(arr, pa.scalar(0.0)), value_set=pa.array(keep, pa.float64()))
    if isinstance(node, Cmp):
        value = bytes(node.value) if isinstance(node.value, bytearray) else node.value
        return _PC_OPS[node.op](arr, pa.scalar(value, arr.type))
    values = [bytes(v) if isinstance(v, bytearray) else v for v in node.values]
    return pc.is_in(arr, value_set=pa.array(values, arr.type)) if values else False


def _decimal_ints(arr: pa.Array) -> pa.Array:
    """A decimal array's scaled values as int64 (qdf stores no wider ones; others are refused)."""
    try:
        ints = scaled_int64(arr)
    except UnsupportedTypeError as exc:
        raise QueryError(f"cannot filter this decimal column: {exc.reason}") from None
    return pa.array(ints, pa.int64(), mask=None if arr.null_count == 0 else np.asarray(arr.is_null()))


def _null_row(node: Cmp | IsIn | IsNull) -> tuple[bool, bool]:
    """(T, F) of a NULL row: UNKNOWN for comparisons, known for IS [NOT] NULL."""
    if isinstance(node, IsNull):
        return (not node.negated, node.negated)
    return (False, False)


def _plain_leaf(node: Cmp | IsIn | IsNull, arr: pa.Array, kind: str) -> Masks:
    valid = validity_mask(arr)
    if isinstance(node, IsNull):
        present = np.ones(len(arr), dtype=bool) if valid is None else valid
        return (present, None) if node.negated else (~present, None)
    res = _predicate(node, arr, kind)
    if isinstance(res, bool):
        t = np.full(len(arr), res, dtype=bool)
    elif isinstance(res, np.ndarray):
        t = res
    else:
        t = res.fill_null(False).to_numpy(zero_copy_only=False)
    if valid is None:
        return t, None
    # Use the column's validity, not the result's: pc.is_in returns false (not null) for nulls.
    return t & valid, ~t & valid


def _leaf(node: Cmp | IsIn | IsNull, arr: pa.Array | pa.ChunkedArray | RunColumn | CodedColumn,
          kind: str) -> Masks:
    if isinstance(arr, RunColumn):  # once per run, then over the rows of each run
        t, f = _leaf(node, arr.values, kind)
        return arr.spread(t), None if f is None else arr.spread(f)
    if isinstance(arr, CodedColumn):
        return _coded_leaf(node, arr, kind)
    if isinstance(arr, pa.ChunkedArray):
        if arr.num_chunks == 1:
            return _leaf(node, arr.chunk(0), kind)
        # Per chunk, so chunks with different dictionaries need no unification copy.
        parts = [_leaf(node, c, kind) for c in arr.chunks]
        if not parts:
            return np.zeros(0, dtype=bool), None
        t = np.concatenate([p[0] for p in parts])
        if all(p[1] is None for p in parts):
            return t, None
        return t, np.concatenate([false_of(p) for p in parts])
    if isinstance(arr, pa.DictionaryArray):
        return _dictionary_leaf(node, arr, kind)
    return _plain_leaf(node, arr, kind)


def _dictionary_leaf(node: Cmp | IsIn | IsNull, arr: pa.DictionaryArray, kind: str) -> Masks:
    """A leaf on dictionary-coded rows: the predicate once per distinct value (O(dictionary)
    kernel work), then one kernel pass gives every row's TRUE and FALSE (null rows: the
    value of IS [NOT] NULL, UNKNOWN for comparisons)."""
    n = len(arr)
    if len(arr.dictionary) == 0:
        nt, nf = _null_row(node)
        return np.full(n, nt, dtype=bool), np.full(n, nf, dtype=bool)
    dt, df = _plain_leaf(node, arr.dictionary, kind)
    if arr.null_count == 0 and df is None:
        hits = np.flatnonzero(dt)
        if len(hits) == 0:
            return np.zeros(n, dtype=bool), None
        if len(hits) == 1:  # an equality usually matches one entry: compare the codes
            return arr.indices.to_numpy(zero_copy_only=False) == hits[0], None
    idx = arr.indices if pa.types.is_int32(arr.indices.type) else arr.indices.cast(pa.int32())
    validity, data = idx.buffers()[:2]
    codes = np.frombuffer(data, dtype=np.int32, count=idx.offset + n)[idx.offset:]
    bitmap = np.frombuffer(validity, dtype=np.uint8) if validity is not None and idx.null_count else _NO_BITMAP
    nt, nf = _null_row(node)
    t, f = np.empty(n, dtype=bool), np.empty(n, dtype=bool)
    if ck.dictionary_masks_into(codes, bitmap, np.int64(idx.offset), np.ascontiguousarray(dt),
                                np.ascontiguousarray(false_of((dt, df))), nt, nf, t, f) < 0:
        raise QueryError("a dictionary code is outside its dictionary")
    return (t, None) if df is None and arr.null_count == 0 else (t, f)


_NO_BITMAP = np.empty(0, dtype=np.uint8)


def _coded_leaf(node: Cmp | IsIn | IsNull, arr: CodedColumn, kind: str) -> Masks:
    """A leaf on rows that are still packed codes: the predicate once per dictionary
    entry, then one kernel pass maps each row's code to its answer (null rows: UNKNOWN
    for comparisons, the value of IS [NOT] NULL)."""
    valid = arr.valid
    if isinstance(node, IsNull):
        present = np.ones(len(arr), dtype=bool) if valid is None else valid
        return (present, None) if node.negated else (~present, None)
    t = arr.lookup(_plain_leaf(node, arr.values, kind)[0])  # the dictionary has no nulls
    return (t, None) if valid is None else (t, ~t & valid)


# ----------------------------------------------------------------------------- evaluate


def _eval(expr: Expr, columns: Mapping[str, Any], kinds: Mapping[str, str]) -> Masks:
    if isinstance(expr, And):
        return and_([_eval(e, columns, kinds) for e in expr.operands])
    if isinstance(expr, Or):
        return or_([_eval(e, columns, kinds) for e in expr.operands])
    if isinstance(expr, Not):
        return not_(_eval(expr.operand, columns, kinds))
    assert isinstance(expr, (Cmp, IsIn, IsNull))
    name = expr.column
    try:
        return _leaf(expr, columns[name], kinds[name])
    except (QueryError, DecodeError) as err:
        # a DecodeError: damaged bytes a coded column met while mapping its codes, which
        # stay a decode error (not a query the user got wrong)
        raise err.with_location(column=name) from None
    except (pa.ArrowException, TypeError, ValueError, OverflowError, IndexError) as err:
        raise QueryError(f"cannot evaluate {expr!r}: {type(err).__name__}: {err}", column=name) from err


def evaluate(expr: FilterLike, columns: Mapping[str, pa.Array | pa.ChunkedArray | RunColumn | CodedColumn],
             n_rows: int) -> np.ndarray:
    """Rows that satisfy ``expr`` under SQL three-valued logic (only TRUE rows survive).

    Parameters
    ----------
    expr
        An ``Expr``, a DNF list (see :func:`as_expr`) or ``None`` (every row survives).
    columns
        Column name -> ``pa.Array`` / ``pa.DictionaryArray`` / ``pa.ChunkedArray`` /
        :class:`~qdf_columnar.columns.runs.RunColumn` /
        :class:`~qdf_columnar.columns.coded.CodedColumn` of ``n_rows`` values; only
        the columns ``expr`` reads are looked at.
    n_rows
        Number of rows.

    Returns
    -------
    numpy.ndarray
        Boolean mask of length ``n_rows``.

    Raises
    ------
    QueryError
        Unknown column, unsupported column type, wrong literal type, length mismatch,
        timezone-aware vs naive timestamps, or any Arrow failure (naming the column).

    Examples
    --------
    >>> import pyarrow as pa
    >>> from qdf_columnar.query import col
    >>> evaluate(~(col("x") == 1), {"x": pa.array([1, 2, None])}, 3)
    array([False,  True, False])
    """
    e = as_expr(expr)
    if e is None:
        return np.ones(n_rows, dtype=bool)
    kinds: dict[str, str] = {}
    for name in sorted(e.columns()):
        if name not in columns:
            raise QueryError(f"unknown column {name!r}; available columns: {sorted(columns)}", column=name)
        arr = columns[name]
        if len(arr) != n_rows:
            raise QueryError(f"column has {len(arr)} rows but the batch has {n_rows}", column=name)
        kind = arrow_kind(arr.type)
        if kind is None:
            raise QueryError(f"columns of Arrow type {arr.type} cannot be filtered", column=name)
        kinds[name] = kind
    validate(e, kinds)
    t = _eval(e, columns, kinds)[0]
    return t if t.flags.writeable else t.copy()
