"""Row-group pruning: may a filter be TRUE for some row of a row group, by its statistics?

Each node of the filter gets a pair (may be TRUE for some row, may be FALSE for some
row), a sound over-approximation under SQL three-valued logic: AND may be TRUE only
when every operand may be, and FALSE when any may be; OR the reverse; NOT swaps the
pair, which is how negation reaches the leaves without rewriting comparisons (under
IEEE rules ``~(x > 5)`` is TRUE for NaN while ``x <= 5`` is not). A row group is
skipped only when the root may not be TRUE. Leaves mirror ``query/evaluate.py``
exactly: NULL rows are UNKNOWN (neither), NaN is a present value for which every
comparison is FALSE except ``!=``, ``isin`` never matches NaN, and literals compare
exactly with the statistics (Python compares int, float and Fraction exactly).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from ..columns.decimals import scaled_literal
from ..query.evaluate import _leaves, _ts_ticks
from ..query.expr import And, Cmp, Expr, IsIn, IsNull, Not, Or
from .layout import ColumnStats, RowGroup

__all__ = ["Pruner"]

_NEGATE = {"==": "!=", "!=": "==", "<": ">=", ">=": "<", "<=": ">", ">": "<="}


@dataclass(frozen=True)
class _Verdict:
    may_true: bool
    may_false: bool
    not_true: str = ""  # why no row can be TRUE (when may_true is False)
    not_false: str = ""


def _literal(value: Any, kind: str, arrow_type: pa.DataType) -> Any:
    """The literal in the statistics' domain (exact numbers, str, bytes, storage ticks)."""
    if kind in ("int", "uint", "float64", "float32"):
        return int(value) if isinstance(value, int) or hasattr(value, "__index__") else float(value)
    if kind == "timestamp":
        t = arrow_type.value_type if pa.types.is_dictionary(arrow_type) else arrow_type
        return _ts_ticks(value, t)
    if kind == "decimal":  # statistics hold the scaled integers
        return scaled_literal(value, arrow_type.scale)
    if kind == "binary":
        return bytes(value)
    if kind == "bool":
        return bool(value)
    return value


def _is_nan(v: Any) -> bool:
    return isinstance(v, float) and math.isnan(v)


def _range_true(op: str, v: Any, lo: Any, hi: Any) -> bool:
    """May some value in [lo, hi] (totally ordered, no NaN) satisfy ``x op v``?"""
    if op == "==":
        return lo <= v <= hi
    if op == "!=":
        return not (lo == v and hi == v)
    if op == "<":
        return lo < v
    if op == "<=":
        return lo <= v
    if op == ">":
        return hi > v
    return hi >= v


def _cmp(node: Cmp, st: ColumnStats, present: int, ordered: int, v: Any, why: bool) -> _Verdict:
    nan_rows = present - ordered
    if _is_nan(v):  # every comparison with a NaN literal is FALSE, except !=
        t = f = False
        if ordered or nan_rows:
            t, f = node.op == "!=", node.op != "!="
        if not why:
            return _Verdict(t, f)
        return _Verdict(t, f, f"{node!r} is never TRUE (NaN literal)", f"{node!r} is never FALSE (NaN literal)")
    t = f = False
    if nan_rows:
        t |= node.op == "!="
        f |= node.op != "!="
    if ordered:
        if st.min is None or st.max is None:
            t = f = True
        else:
            t |= _range_true(node.op, v, st.min, st.max)
            f |= _range_true(_NEGATE[node.op], v, st.min, st.max)
    if not why:
        return _Verdict(t, f)
    facts = [f"min {st.min!r}, max {st.max!r}"] if ordered and st.min is not None else []
    facts += [f"{nan_rows} NaN"] if nan_rows else []
    facts += [f"{st.null_count} null"] if st.null_count else []
    return _Verdict(t, f, f"{node!r} is never TRUE: " + ", ".join(facts),
                    f"{node!r} is never FALSE: " + ", ".join(facts))


def _isin(node: IsIn, st: ColumnStats, present: int, ordered: int, vals: list[Any], why: bool) -> _Verdict:
    t = f = False
    if present - ordered:
        f = True  # a NaN row is never in the set
    if ordered:
        if st.min is None or st.max is None:
            t, f = bool(vals), True
        else:
            lo, hi = st.min, st.max
            t = any(lo <= v <= hi for v in vals)
            f |= not (lo == hi and any(lo == v for v in vals))
    if not why:
        return _Verdict(t, f)
    span = f"min {st.min!r}, max {st.max!r}" if st.min is not None else "no values in range"
    return _Verdict(t, f, f"{node!r} is never TRUE: {span}", f"{node!r} is never FALSE: {span}")


class Pruner:
    """Decides, per row group, whether a validated filter may be TRUE for one of its rows.

    ``kinds`` maps each filter column to (its ``query.arrow_kind``, its Arrow type).
    Literals are converted once here, not once per row group.
    """

    def __init__(self, expr: Expr | None, kinds: Mapping[str, tuple[str, pa.DataType]]) -> None:
        self.expr = expr  # keeps the leaves alive, so their ids stay valid keys
        self._lits: dict[int, Any] = {}
        for leaf in _leaves(expr) if expr is not None else []:
            kind, t = kinds[leaf.column]
            if isinstance(leaf, Cmp):
                self._lits[id(leaf)] = _literal(leaf.value, kind, t)
            elif isinstance(leaf, IsIn):  # isin never matches NaN
                self._lits[id(leaf)] = [v for v in (_literal(x, kind, t) for x in leaf.values) if not _is_nan(v)]

    def _leaf(self, node: Cmp | IsIn | IsNull, group: RowGroup, why: bool) -> _Verdict:
        st = group.statistics[node.column]
        present = group.num_rows - st.null_count
        if isinstance(node, IsNull):
            has_null, has_value = st.null_count > 0, present > 0
            t, f = (has_value, has_null) if node.negated else (has_null, has_value)
            if not why:
                return _Verdict(t, f)
            return _Verdict(t, f, f"{node!r} is never TRUE: {st.null_count} null of {group.num_rows}",
                            f"{node!r} is never FALSE: {st.null_count} null of {group.num_rows}")
        if present == 0:
            reason = f"{node!r} is UNKNOWN for every row: all {group.num_rows} values are null" if why else ""
            return _Verdict(False, False, reason, reason)
        ordered = present - st.nan_count
        if isinstance(node, Cmp):
            return _cmp(node, st, present, ordered, self._lits[id(node)], why)
        return _isin(node, st, present, ordered, self._lits[id(node)], why)

    def _verdict(self, expr: Expr, group: RowGroup, why: bool) -> _Verdict:
        if isinstance(expr, Not):
            v = self._verdict(expr.operand, group, why)
            if not why:
                return _Verdict(v.may_false, v.may_true)
            return _Verdict(v.may_false, v.may_true, f"{expr!r} is never TRUE as {v.not_false}",
                            f"{expr!r} is never FALSE as {v.not_true}")
        if isinstance(expr, (And, Or)):
            parts = [self._verdict(e, group, why) for e in expr.operands]
            if isinstance(expr, And):
                t, f = all(p.may_true for p in parts), any(p.may_false for p in parts)
                why_t = next((p.not_true for p in parts if not p.may_true), "")
                why_f = "; ".join(p.not_false for p in parts) if why else ""
            else:
                t, f = any(p.may_true for p in parts), all(p.may_false for p in parts)
                why_t = "; ".join(p.not_true for p in parts) if why else ""
                why_f = next((p.not_false for p in parts if not p.may_false), "")
            return _Verdict(t, f, why_t, why_f)
        assert isinstance(expr, (Cmp, IsIn, IsNull))
        return self._leaf(expr, group, why)

    def __call__(self, group: RowGroup, *, why: bool = True) -> tuple[bool, str]:
        """(read this row group?, why); with ``why=False`` a skip's reason is not worded."""
        if group.num_rows == 0:
            return False, "empty row group"
        if self.expr is None:
            return True, "no filter"
        if self._verdict(self.expr, group, why=False).may_true:
            return True, "statistics allow a match"
        # Reasons are only worded for the groups that are skipped.
        return False, self._verdict(self.expr, group, why=True).not_true if why else "statistics rule out a match"
