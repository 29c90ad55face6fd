"""Filter expression tree: ``col("a") > 3``, ``&``, ``|``, ``~`` (qdf-wire-v1.md §4).

Nodes are frozen dataclasses that hold column *names* (not ``Col`` objects), so the
generated structural ``==`` between two expressions returns a plain ``bool``.  ``Col`` is
not an ``Expr``: it only builds leaves (``Cmp``, ``IsIn``, ``IsNull``).  ``And``/``Or``
are flattened and ``~~e`` simplifies to ``e`` (valid under three-valued logic).  Literal
*types* are checked later by :func:`qdf_columnar.query.validate` against a schema.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from qdf_columnar.errors import QueryError

__all__ = ["Expr", "Col", "Cmp", "IsIn", "IsNull", "And", "Or", "Not", "col", "CMP_OPS"]

CMP_OPS: tuple[str, ...] = ("==", "!=", "<", "<=", ">", ">=")


def _is_null_literal(value: Any) -> bool:
    """None and NaT are SQL NULL; ``x == NULL`` is never TRUE, so we refuse it outright."""
    if value is None:
        return True
    if isinstance(value, (np.datetime64, np.timedelta64)):
        return bool(np.isnat(value))
    # pandas.NaT / pandas.NA without importing pandas here.
    return type(value).__name__ in ("NaTType", "NAType")


def _literal_repr(value: Any) -> str:
    if isinstance(value, float) and math.isnan(value):
        return "float('nan')"
    return repr(value)


class Expr:
    """Base class of boolean filter expressions; combine with ``&``, ``|`` and ``~``."""

    __slots__ = ()

    def columns(self) -> set[str]:
        """Names of all columns the expression reads."""
        raise NotImplementedError

    def __and__(self, other: object) -> Expr:
        return And.of(self, _need_expr(other, "&"))

    def __or__(self, other: object) -> Expr:
        return Or.of(self, _need_expr(other, "|"))

    def __rand__(self, other: object) -> Expr:
        return And.of(_need_expr(other, "&"), self)

    def __ror__(self, other: object) -> Expr:
        return Or.of(_need_expr(other, "|"), self)

    def __invert__(self) -> Expr:
        if isinstance(self, Not):
            return self.operand  # NOT NOT x == x holds for TRUE, FALSE and UNKNOWN
        return Not(self)

    def __bool__(self) -> bool:
        raise QueryError(
            f"the truth value of a filter expression is ambiguous: {self!r}; combine expressions "
            "with & (and), | (or), ~ (not) instead of the keywords and/or/not, put parentheses around "
            "each comparison, and do not chain comparisons (write (col('x') > 1) & (col('x') < 5))"
        )


def _need_expr(other: object, op: str) -> Expr:
    if isinstance(other, Expr):
        return other
    if isinstance(other, Col):
        hint = f"compare it, e.g. ({other!r} == True)"
    else:
        hint = "both operands must be filter expressions such as col('x') > 1"
    raise QueryError(f"cannot combine a filter expression with {type(other).__name__} using {op!r}; {hint}")


@dataclass(frozen=True, eq=False)
class Col:
    """A column reference; comparing it with a literal builds a leaf expression."""

    name: str

    def __post_init__(self) -> None:
        if not isinstance(self.name, str):
            raise QueryError(f"column name must be a str, got {type(self.name).__name__} {self.name!r}")

    def _cmp(self, op: str, value: Any) -> Cmp:
        return Cmp(self.name, op, value)

    def __eq__(self, value: Any) -> Cmp:  # type: ignore[override]
        return self._cmp("==", value)

    def __ne__(self, value: Any) -> Cmp:  # type: ignore[override]
        return self._cmp("!=", value)

    def __lt__(self, value: Any) -> Cmp:
        return self._cmp("<", value)

    def __le__(self, value: Any) -> Cmp:
        return self._cmp("<=", value)

    def __gt__(self, value: Any) -> Cmp:
        return self._cmp(">", value)

    def __ge__(self, value: Any) -> Cmp:
        return self._cmp(">=", value)

    # Defining __eq__ would otherwise make Col unhashable.
    def __hash__(self) -> int:
        return hash(("Col", self.name))

    def __bool__(self) -> bool:
        raise QueryError(f"{self!r} is a column reference, not a condition; compare it, e.g. {self!r} == True")

    def isin(self, values: Iterable[Any]) -> IsIn:
        """Row is TRUE when the value equals one of ``values`` (SQL ``IN``)."""
        return IsIn(self.name, _as_value_tuple(values, self.name))

    def is_null(self) -> IsNull:
        """TRUE for NULL rows, FALSE otherwise (never UNKNOWN)."""
        return IsNull(self.name)

    def is_not_null(self) -> IsNull:
        """TRUE for present rows, FALSE for NULL rows (never UNKNOWN)."""
        return IsNull(self.name, negated=True)

    def __repr__(self) -> str:
        return f"col({self.name!r})"


def col(name: str) -> Col:
    """Reference the column ``name`` in a filter.

    Examples
    --------
    >>> (col("code") >= 500) & ~col("level").isin(["DEBUG", "INFO"])
    (col('code') >= 500) & ~col('level').isin(['DEBUG', 'INFO'])
    >>> 5 < col("x")
    (col('x') > 5)
    """
    return Col(name)


def _as_value_tuple(values: Any, column: str) -> tuple[Any, ...]:
    # A str is iterable, but "abc" almost always means ["abc"]; refuse rather than guess.
    if isinstance(values, (str, bytes, bytearray, Mapping)) or not isinstance(values, Iterable):
        raise QueryError(
            f"isin() needs a list, tuple, set or array of values, got {type(values).__name__} {values!r}",
            column=column,
        )
    if isinstance(values, np.ndarray):
        values = values.ravel()
    return tuple(values)


@dataclass(frozen=True)
class Cmp(Expr):
    """``column <op> value`` with op one of ``CMP_OPS``."""

    column: str
    op: str
    value: Any

    def __post_init__(self) -> None:
        if self.op not in CMP_OPS:
            raise QueryError(f"unknown comparison operator {self.op!r}; expected one of {list(CMP_OPS)}")
        if isinstance(self.value, (Col, Expr)):
            raise QueryError(
                f"comparing a column with {self.value!r} is not supported; the right side must be a literal",
                column=self.column,
            )
        if _is_null_literal(self.value):
            raise QueryError(
                f"comparison {self.op!r} with None/NaT is never TRUE under SQL semantics; "
                f"use col({self.column!r}).is_null() or .is_not_null() instead",
                column=self.column,
            )

    def columns(self) -> set[str]:
        return {self.column}

    def __repr__(self) -> str:
        return f"(col({self.column!r}) {self.op} {_literal_repr(self.value)})"


@dataclass(frozen=True)
class IsIn(Expr):
    """``column IN values``; ``x IN ()`` is FALSE for present rows, NULL rows are UNKNOWN."""

    column: str
    values: tuple[Any, ...]

    def __post_init__(self) -> None:
        for v in self.values:
            if _is_null_literal(v):
                raise QueryError(
                    "None/NaT inside isin() values would only ever make rows UNKNOWN; "
                    f"write col({self.column!r}).isin([...]) | col({self.column!r}).is_null() instead",
                    column=self.column,
                )

    def columns(self) -> set[str]:
        return {self.column}

    def __repr__(self) -> str:
        return f"col({self.column!r}).isin([{', '.join(_literal_repr(v) for v in self.values)}])"


@dataclass(frozen=True)
class IsNull(Expr):
    """``column IS NULL`` (or ``IS NOT NULL`` when ``negated``); never UNKNOWN."""

    column: str
    negated: bool = False

    def columns(self) -> set[str]:
        return {self.column}

    def __invert__(self) -> Expr:
        return IsNull(self.column, not self.negated)

    def __repr__(self) -> str:
        return f"col({self.column!r}).{'is_not_null' if self.negated else 'is_null'}()"


def _flatten(kind: type, operands: Iterable[Expr]) -> tuple[Expr, ...]:
    out: list[Expr] = []
    for op in operands:
        if not isinstance(op, Expr):
            raise QueryError(f"operand of {kind.__name__} must be an expression, got {type(op).__name__} {op!r}")
        out.extend(op.operands if isinstance(op, kind) else (op,))  # type: ignore[attr-defined]
    return tuple(out)


def _child_repr(e: Expr) -> str:
    return f"({e!r})" if isinstance(e, (And, Or)) else repr(e)


@dataclass(frozen=True)
class And(Expr):
    """Conjunction of two or more expressions (flattened)."""

    operands: tuple[Expr, ...]

    @classmethod
    def of(cls, *operands: Expr) -> Expr:
        ops = _flatten(cls, operands)
        if not ops:
            raise QueryError("And() needs at least one operand")
        return ops[0] if len(ops) == 1 else cls(ops)

    def columns(self) -> set[str]:
        return set().union(*(e.columns() for e in self.operands))

    def __repr__(self) -> str:
        return " & ".join(_child_repr(e) for e in self.operands)


@dataclass(frozen=True)
class Or(Expr):
    """Disjunction of two or more expressions (flattened)."""

    operands: tuple[Expr, ...]

    @classmethod
    def of(cls, *operands: Expr) -> Expr:
        ops = _flatten(cls, operands)
        if not ops:
            raise QueryError("Or() needs at least one operand")
        return ops[0] if len(ops) == 1 else cls(ops)

    def columns(self) -> set[str]:
        return set().union(*(e.columns() for e in self.operands))

    def __repr__(self) -> str:
        return " | ".join(_child_repr(e) for e in self.operands)


@dataclass(frozen=True)
class Not(Expr):
    """Negation: swaps TRUE and FALSE, keeps UNKNOWN (so NULL rows stay excluded)."""

    operand: Expr

    def columns(self) -> set[str]:
        return self.operand.columns()

    def __repr__(self) -> str:
        inner = repr(self.operand)
        return f"~{inner}" if isinstance(self.operand, (Cmp, IsIn, IsNull)) else f"~({inner})"
