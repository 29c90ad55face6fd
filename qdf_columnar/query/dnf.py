"""pyarrow/parquet-style DNF filters: ``[("a", ">", 3)]`` and ``[[...], [...]]``.

:func:`as_expr` turns the ``filter=`` argument of ``decode``/``read_qdf`` into an
:class:`~qdf_columnar.query.expr.Expr` (or ``None`` for "no filter").  A flat list of
``(column, op, value)`` tuples is an AND; a list of such lists is an OR of ANDs.
``not in`` becomes ``~isin(...)``, so a NULL row is UNKNOWN and dropped (SQL).
Malformed input raises ``QueryError`` naming the offending position, e.g. ``filter[1][0]``.
"""

from __future__ import annotations

from typing import Any

from qdf_columnar.errors import QueryError
from qdf_columnar.query.expr import And, Col, Expr, Or, col

__all__ = ["as_expr", "DNF_OPS"]

DNF_OPS: tuple[str, ...] = ("==", "=", "!=", "<", "<=", ">", ">=", "in", "not in")

FilterLike = Any  # Expr | None | list[tuple] | list[list[tuple]]


def as_expr(filter: FilterLike) -> Expr | None:
    """Normalise a ``filter=`` argument to an ``Expr`` (``None`` means keep every row).

    Parameters
    ----------
    filter
        ``None``, an ``Expr``, a list of ``(column, op, value)`` tuples (AND), or a list
        of such lists (OR of ANDs).  ``op`` is one of ``DNF_OPS``.

    Raises
    ------
    QueryError
        Wrong shape, wrong tuple arity, unknown op, or a non-collection value for ``in``.

    Examples
    --------
    >>> as_expr([("code", ">=", 500), ("level", "==", "ERROR")])
    (col('code') >= 500) & (col('level') == 'ERROR')
    >>> as_expr([[("a", "==", 1)], [("b", "in", [2, 3])]])
    (col('a') == 1) | col('b').isin([2, 3])
    """
    if filter is None or isinstance(filter, Expr):
        return filter
    if isinstance(filter, Col):
        raise QueryError(f"filter={filter!r} is a column, not a condition; compare it, e.g. {filter!r} == True")
    if isinstance(filter, tuple):
        raise QueryError(
            f"filter must be a list of (column, op, value) tuples, got a bare tuple {filter!r}; wrap it in a list"
        )
    if not isinstance(filter, list):
        raise QueryError(
            "filter must be None, an expression such as col('x') > 1, a list of (column, op, value) "
            f"tuples or a list of lists of tuples; got {type(filter).__name__}"
        )
    if not filter:
        raise QueryError("filter is an empty list; pass filter=None to keep every row")
    if all(isinstance(item, tuple) for item in filter):
        return _conjunction(filter, "filter")
    if all(isinstance(item, list) for item in filter):
        return Or.of(*(_conjunction(conj, f"filter[{i}]") for i, conj in enumerate(filter)))
    kinds = sorted({type(item).__name__ for item in filter})
    raise QueryError(
        f"filter mixes {', '.join(kinds)} items; use either a list of tuples (AND) or a list of lists of tuples (OR)"
    )


def _conjunction(items: list[Any], where: str) -> Expr:
    if not items:
        raise QueryError(f"empty conjunction at {where}; every inner list needs at least one (column, op, value)")
    return And.of(*(_term(item, f"{where}[{i}]") for i, item in enumerate(items)))


def _term(item: Any, where: str) -> Expr:
    if not isinstance(item, tuple):
        raise QueryError(f"expected a (column, op, value) tuple at {where}, got {type(item).__name__} {item!r}")
    if len(item) != 3:
        raise QueryError(f"expected a (column, op, value) tuple at {where}, got {len(item)} items: {item!r}")
    name, op, value = item
    if not isinstance(name, str):
        raise QueryError(f"column name at {where} must be a str, got {type(name).__name__} {name!r}")
    if not isinstance(op, str) or op.lower() not in DNF_OPS:
        raise QueryError(f"unknown operator {op!r} at {where}; expected one of {list(DNF_OPS)}", column=name)
    op = op.lower()
    try:
        c = col(name)
        if op in ("in", "not in"):
            e: Expr = c.isin(value)
            return ~e if op == "not in" else e
        return c._cmp("==" if op == "=" else op, value)
    except QueryError as err:
        raise QueryError(f"{err.reason} (in {where}: {item!r})", column=name) from None
