"""qdf_columnar: qdf v1 columnar batches for Python.

``encode`` / ``decode`` turn a DataFrame, Arrow table, dict of arrays or list of
dicts into one qdf v1 buffer and back, reading only the columns and rows asked
for; ``dumps`` / ``loads`` serialise any Python value like json or msgpack, and
``StreamWriter`` / ``StreamReader`` frame many messages over one shared Dense state.
Importing this package compiles nothing: kernels compile on first use (or ahead of
time with ``qdf warmup``) and are cached on disk.
"""

from __future__ import annotations

from typing import Any

from .accessor import register as _register_accessor
from .errors import (
    CorruptDataError,
    DecodeError,
    EncodeError,
    InvalidOptionError,
    InvalidPathError,
    PerformanceWarning,
    QdfError,
    QdfFileNotFoundError,
    QdfIOError,
    QdfIsADirectoryError,
    QdfPermissionError,
    QdfWarning,
    QueryError,
    TruncatedError,
    UnknownCodecError,
    UnsupportedTypeError,
    UnsupportedVersionError,
)
from .options import Options
from .query import Expr, col

__version__ = "0.1.0"

_register_accessor()  # df.to_qdf / df.qdf; registers when pandas is imported, never imports it

__all__ = [
    "encode",
    "decode",
    "dumps",
    "loads",
    "StreamWriter",
    "StreamReader",
    "explain",
    "write_qdf",
    "read_qdf",
    "QdfFile",
    "parse_where",
    "col",
    "Expr",
    "Options",
    "warmup",
    "QdfError",
    "EncodeError",
    "UnsupportedTypeError",
    "InvalidOptionError",
    "DecodeError",
    "TruncatedError",
    "CorruptDataError",
    "UnsupportedVersionError",
    "UnknownCodecError",
    "QueryError",
    "InvalidPathError",
    "QdfIOError",
    "QdfFileNotFoundError",
    "QdfIsADirectoryError",
    "QdfPermissionError",
    "QdfWarning",
    "PerformanceWarning",
]


def __getattr__(name: str) -> Any:
    # pyarrow/numba-heavy modules load on first use so `import qdf_columnar` stays cheap;
    # the value found is then bound in the module, so later lookups skip this function
    # (qdf.dumps / qdf.loads of a small message take microseconds).
    value = _lazy(name)
    globals()[name] = value
    return value


def _lazy(name: str) -> Any:
    if name in ("encode", "decode"):
        from . import api

        return getattr(api, name)
    if name in ("write_qdf", "read_qdf", "QdfFile"):
        from . import io

        return getattr(io, name)
    if name == "parse_where":
        from .query.parse import parse_where

        return parse_where
    if name == "explain":
        from .breakdown import explain

        return explain
    if name in ("dumps", "loads"):
        from .wire import values

        return getattr(values, name)
    if name in ("StreamWriter", "StreamReader"):
        from . import stream

        return getattr(stream, name)
    if name == "warmup":
        from qdf_kernels import warmup

        return warmup
    raise AttributeError(f"module 'qdf_columnar' has no attribute {name!r}")
