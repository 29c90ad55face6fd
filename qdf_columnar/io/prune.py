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
from typing import Any, NamedTuple

import numpy as np
import pyarrow as pa

from ..columns.decimals import scaled_literal
from ..query.evaluate import _leaves, _ts_ticks
from ..query.expr import And, Cmp, Expr, IsIn, IsNull, Not, Or
from .layout import ColumnStats, RowGroup, ZoneArrays

__all__ = ["Pruner", "zone_mask"]

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


def _range_true(op: str, v: Any, lo: Any, hi: Any) -> Any:
    """May some value in [lo, hi] (totally ordered, no NaN) satisfy ``x op v``? Written
    with ``&`` / ``|`` so it also answers for numpy arrays of bounds (zone maps)."""
    if op == "==":
        return (lo <= v) & (v <= hi)
    if op == "!=":
        return (lo != v) | (hi != v)
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


# ----------------------------------------------------------------------------- zones
class _Inexact(Exception):
    """A literal numpy cannot compare exactly with a zone array: decide zone by zone."""


#: Integers numpy compares exactly with a float64 array (and floats with an int array).
_EXACT_FLOAT_INT = 1 << 53


def _comparable(v: Any, arr: np.ndarray) -> Any:
    """``v`` as numpy compares it with ``arr`` exactly as Python compares it with each
    value, or _Inexact (numpy would round one side: ints beyond 2**53 against floats)."""
    if type(v) is float:
        if arr.dtype.kind == "f" or math.isinf(v):
            return v
        if v == int(v) and abs(v) <= _EXACT_FLOAT_INT:
            v = int(v)  # an integral float against integers: compare as integers
        else:
            raise _Inexact
    if type(v) is not int:
        raise _Inexact
    if arr.dtype.kind == "f":
        if abs(v) > _EXACT_FLOAT_INT:
            raise _Inexact
        return float(v)
    info = np.iinfo(arr.dtype)
    if not info.min <= v <= info.max:
        raise _Inexact
    return arr.dtype.type(v)


def _leaf_v(prune: Pruner, node: Any, z: ZoneArrays) -> tuple[np.ndarray, np.ndarray]:
    """``Pruner._leaf`` for every zone at once: (may be TRUE, may be FALSE)."""
    present = z.rows - z.nulls
    some = present > 0
    if isinstance(node, IsNull):
        has_null = z.nulls > 0
        return (some, has_null) if node.negated else (has_null, some)
    ordered = (present - z.nans) > 0
    nan_rows = z.nans > 0
    known = z.has & ordered
    if isinstance(node, Cmp):
        v = prune._lits[id(node)]
        if _is_nan(v):
            return some & (node.op == "!="), some & (node.op != "!=")
        t = nan_rows & (node.op == "!=")
        f = nan_rows & (node.op != "!=")
        unknown = ordered & ~z.has
        t, f = t | unknown, f | unknown
        if z.lo is not None and known.any():
            w = _comparable(v, z.lo)
            t = t | (known & _range_true(node.op, w, z.lo, z.hi))
            f = f | (known & _range_true(_NEGATE[node.op], w, z.lo, z.hi))
        return t & some, f & some
    vals = prune._lits[id(node)]
    unknown = ordered & ~z.has
    t = unknown & bool(vals)
    f = nan_rows | unknown
    if z.lo is not None and known.any():
        ws = [_comparable(v, z.lo) for v in vals]
        t_in = np.zeros(len(z.rows), dtype=np.bool_)
        single = np.zeros(len(z.rows), dtype=np.bool_)
        for w in ws:
            t_in |= (z.lo <= w) & (w <= z.hi)
            single |= z.lo == w
        t = t | (known & t_in)
        f = f | (known & ~((z.lo == z.hi) & single))
    return t & some, f & some


def _verdict_v(prune: Pruner, expr: Expr, zones: Any) -> tuple[np.ndarray, np.ndarray]:
    if isinstance(expr, Not):
        t, f = _verdict_v(prune, expr.operand, zones)
        return f, t
    if isinstance(expr, (And, Or)):
        parts = [_verdict_v(prune, e, zones) for e in expr.operands]
        ts, fs = [p[0] for p in parts], [p[1] for p in parts]
        if isinstance(expr, And):
            return np.logical_and.reduce(ts), np.logical_or.reduce(fs)
        return np.logical_or.reduce(ts), np.logical_and.reduce(fs)
    return _leaf_v(prune, expr, zones.arrays(expr.column))


def zone_mask(prune: Pruner, zones: Any, zone_rows: int, n_rows: int) -> np.ndarray:
    """Which zones of a row group of ``n_rows`` rows (``RowGroup.zones``, of ``zone_rows``
    rows each) the filter may be TRUE in: the verdicts of :class:`Pruner` for every zone,
    computed on arrays where the literals compare exactly, zone by zone otherwise."""
    assert prune.expr is not None
    if hasattr(zones, "arrays"):
        try:
            return _verdict_v(prune, prune.expr, zones)[0]
        except _Inexact:
            pass
    return np.array([prune(_Zone(min(zone_rows, n_rows - k * zone_rows), stats), why=False)[0]  # type: ignore[arg-type]
                     for k, stats in enumerate(zones)], dtype=np.bool_)


class _Zone(NamedTuple):
    """One zone, shaped as :class:`Pruner` reads a row group."""

    num_rows: int
    statistics: Mapping[str, ColumnStats]
