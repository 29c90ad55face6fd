"""SQL three-valued (Kleene) logic over twin boolean masks (qdf-wire-v1.md §4).

A node's result is ``(T, F)``: ``T[i]`` means row i is TRUE, ``F[i]`` means FALSE, and
a row in neither is UNKNOWN.  ``F`` may be ``None`` when the subtree cannot produce
UNKNOWN (no nullable leaf), meaning "F is the complement of T"; this saves one mask and
one pass per node in the common no-null case.  Only TRUE rows survive a filter.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["Masks", "and_", "or_", "not_", "false_of", "to_three_valued"]

Masks = tuple[np.ndarray, "np.ndarray | None"]


def false_of(m: Masks) -> np.ndarray:
    """The explicit FALSE mask of ``m``."""
    t, f = m
    return ~t if f is None else f


def and_(parts: Sequence[Masks]) -> Masks:
    """AND: TRUE iff every operand is TRUE; FALSE iff any operand is FALSE."""
    t = parts[0][0].copy()
    for p in parts[1:]:
        t &= p[0]
    if all(p[1] is None for p in parts):
        return t, None
    f = false_of(parts[0]).copy()
    for p in parts[1:]:
        f |= false_of(p)
    return t, f


def or_(parts: Sequence[Masks]) -> Masks:
    """OR: TRUE iff any operand is TRUE; FALSE iff every operand is FALSE."""
    t = parts[0][0].copy()
    for p in parts[1:]:
        t |= p[0]
    if all(p[1] is None for p in parts):
        return t, None
    f = false_of(parts[0]).copy()
    for p in parts[1:]:
        f &= false_of(p)
    return t, f


def not_(m: Masks) -> Masks:
    """NOT swaps TRUE and FALSE; UNKNOWN stays UNKNOWN."""
    t, f = m
    if f is None:
        return ~t, None
    return f, t


def to_three_valued(m: Masks) -> list[bool | None]:
    """Per-row ``True`` / ``False`` / ``None`` (UNKNOWN); for tests and debugging."""
    t = m[0]
    f = false_of(m)
    return [True if ti else (False if fi else None) for ti, fi in zip(t.tolist(), f.tolist())]
