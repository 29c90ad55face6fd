"""Zone pruning: rows a conjunctive filter can only match inside candidate zones.

For a filter that is one comparison or an AND of terms, every term comparing an F1
zone-chunked column with a number gives a value range; the column's zone map (per
zone [min, max], or the linear model) then names the zones that may hold a match.
Rows outside them cannot be TRUE for the whole AND, so the filter is evaluated only on
the candidate rows and the other zones are never decoded. Sound under SQL logic:
a pruned row is FALSE or UNKNOWN for that term, hence not TRUE for the conjunction.
Float rounding of bounds is monotonic, so comparisons in float stay conservative.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from .expr import And, Cmp, Expr, IsIn


def _number(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
        return None
    return float(v)


def leaf_range(leaf: Expr) -> tuple[str, float, float] | None:
    """(column, lo, hi) inclusive bounds a TRUE row must satisfy, or None if unbounded."""
    if isinstance(leaf, Cmp):
        v = _number(leaf.value)
        if v is None or math.isnan(v):
            return None
        if leaf.op == "==":
            return leaf.column, v, v
        if leaf.op in ("<", "<="):
            return leaf.column, -math.inf, v
        if leaf.op in (">", ">="):
            return leaf.column, v, math.inf
        return None
    if isinstance(leaf, IsIn) and leaf.values:
        nums = [_number(v) for v in leaf.values]
        if any(x is None for x in nums):
            return None
        finite = [x for x in nums if not math.isnan(x)]
        return (leaf.column, min(finite), max(finite)) if finite else None
    return None


def candidate_rows(expr: Expr, columns: Mapping[str, Any], n_rows: int) -> np.ndarray | None:
    """Row numbers that may satisfy ``expr`` by the zone maps, or None when nothing prunes.

    ``columns`` maps names to scanned columns; those with a ``zones`` attribute that is
    not None are zone-chunked (see ``wire.colstruct_read.ZonedColumn``).
    """
    terms = list(expr.operands) if isinstance(expr, And) else [expr]
    mask: np.ndarray | None = None
    for term in terms:
        rng = leaf_range(term)
        if rng is None:
            continue
        name, lo, hi = rng
        zc = getattr(columns.get(name), "zones", None)
        if zc is None:
            continue
        rows = zc.row_mask(zc.candidate_zones(lo, hi))
        mask = rows if mask is None else mask & rows
    if mask is None or len(mask) != n_rows:
        return None
    return np.flatnonzero(mask)


def select_rows(expr: Expr, scanned: Mapping[str, Any], n_rows: int) -> np.ndarray:
    """Row numbers where ``expr`` is TRUE, evaluated on scanned (deferred) columns.

    Zone maps first narrow the rows to evaluate; only those rows of the filter columns
    are then decoded.
    """
    from .evaluate import evaluate

    filter_cols = sorted(expr.columns())
    cand = candidate_rows(expr, scanned, n_rows)
    if cand is None:
        filt = {c: scanned[c].for_filter() for c in filter_cols}
        return np.flatnonzero(evaluate(expr, filt, n_rows))
    filt = {c: scanned[c].for_filter_rows(cand) for c in filter_cols}
    return cand[evaluate(expr, filt, len(cand))]
