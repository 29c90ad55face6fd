"""Filter expressions for ``decode(buf, filter=...)`` and ``read_qdf(path, filter=...)``.

Build filters with ``col("x") > 3``, combine with ``&``, ``|``, ``~``, or pass a
pyarrow-style DNF list (``as_expr``).  ``validate`` checks names and literal types
against a schema; ``evaluate`` returns the surviving-row mask under SQL three-valued
logic (qdf-wire-v1.md §4: twin masks, only TRUE rows survive).
"""

from qdf_columnar.query.dnf import as_expr
from qdf_columnar.query.evaluate import KINDS, arrow_kind, evaluate, validate
from qdf_columnar.query.expr import And, Cmp, Col, Expr, IsIn, IsNull, Not, Or, col

__all__ = [
    "col",
    "as_expr",
    "validate",
    "evaluate",
    "Expr",
    "Col",
    "Cmp",
    "IsIn",
    "IsNull",
    "And",
    "Or",
    "Not",
    "KINDS",
    "arrow_kind",
]
