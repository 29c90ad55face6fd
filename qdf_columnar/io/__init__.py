"""``.qdf`` files: row groups of qdf v1 buffers plus a footer (docs/FORMAT.md Part 4).

:func:`write_qdf` writes (or appends to) a file crash-safely, :func:`read_qdf` reads it
with row-group pruning from footer statistics, checksums and parallel decode, and
:class:`QdfFile` exposes the schema, row groups, ``explain(filter)`` and a per-column
summary. A file is a local path (``~`` expanded), any fsspec URL, a binary file object,
or -- to read -- the bytes of a whole file; ``write_qdf(data, None)`` returns those bytes.
Errors opening or writing a file are ``QdfIOError`` subclasses that are also the
matching ``OSError`` (``FileNotFoundError``, ...) and name the path.
"""

from .layout import ColumnStats, RowGroup, SchemaMismatchError
from .reader import QdfFile, read_qdf
from .writer import write_qdf

__all__ = ["write_qdf", "read_qdf", "QdfFile", "RowGroup", "ColumnStats", "SchemaMismatchError"]
