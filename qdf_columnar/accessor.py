"""pandas integration: ``df.to_qdf(...)`` and the ``df.qdf`` accessor.

``df.to_qdf()`` returns the bytes of one qdf v1 buffer (``qdf.encode``);
``df.to_qdf("x.qdf")`` (a path, URL or binary file object) writes a ``.qdf`` file
(``qdf.write_qdf``). ``df.qdf.explain()``
shows where the bytes of the encoded frame go and ``df.qdf.to_bytes()`` encodes it.

:func:`register` installs both on ``pandas.DataFrame`` through pandas' own accessor
API (no monkey-patching). It is idempotent, never replaces an attribute that is not
ours (it warns instead), and is cheap: when pandas is not imported yet it only adds a
one-shot import hook that registers as soon as pandas finishes importing, so
``import qdf_columnar`` does not pay for importing pandas.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
import threading
import warnings
from collections.abc import Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any

from .errors import InvalidOptionError, QdfWarning

if TYPE_CHECKING:  # io imports pyarrow; this module is imported with the package and stays light
    from .io.source import QdfPath, WritableFile

__all__ = ["register", "QdfAccessor", "ToQdf", "ACCESSOR_NAMES"]

#: Attributes installed on ``pandas.DataFrame``.
ACCESSOR_NAMES = ("qdf", "to_qdf")
#: Class attribute that marks an accessor class as ours (survives module reloads).
_MARK = "_qdf_columnar_accessor"
#: ``write_qdf`` options that mean nothing for a single in-memory buffer.
_FILE_ONLY = ("row_group_size", "append", "storage_options")

_lock = threading.Lock()
_done = False


def _to_qdf(df: Any, path: Any, options: dict[str, Any]) -> bytes | None:
    if path is None:
        wrong = [k for k in _FILE_ONLY if k in options]
        if wrong:
            raise InvalidOptionError(
                f"{wrong[0]}= applies only when writing a .qdf file; "
                f"pass a path, e.g. df.to_qdf('x.qdf', {wrong[0]}=...)"
            )
        from .api import encode

        return encode(df, **options)
    from .io import write_qdf

    write_qdf(df, path, **options)
    return None


class QdfAccessor:
    """``df.qdf``: qdf views of a DataFrame.

    Examples
    --------
    >>> import pandas as pd, qdf_columnar.accessor as acc
    >>> acc.register()
    >>> df = pd.DataFrame({"id": range(100)})
    >>> df.qdf.explain()[["column", "codec", "bytes"]].to_dict("records")[1]
    {'column': 'id', 'codec': 'PackDeltaFor', 'bytes': 6}
    """

    def __init__(self, df: Any) -> None:
        self._df = df

    def explain(self, mode: Any = "compression", **options: Any) -> Any:
        """Encode the frame and show, per column, the codec chosen, its bytes and its share.

        Parameters
        ----------
        mode, **options
            As for :func:`qdf.encode` (``column_index=``, ``nested=``).

        Returns
        -------
        pandas.DataFrame
            ``column``, ``kind``, ``nullable``, ``codec``, ``bytes``, ``share`` (of the
            whole buffer), as :func:`qdf.explain`.
        """
        from .api import encode
        from .breakdown import explain

        return explain(encode(self._df, mode=mode, **options))

    def to_bytes(self, **options: Any) -> bytes:
        """The frame as one qdf v1 buffer: ``qdf.encode(df, **options)``."""
        from .api import encode

        return encode(self._df, **options)


QdfAccessor._qdf_columnar_accessor = True  # type: ignore[attr-defined]


class ToQdf:
    """``df.to_qdf(path=None, **options)``: bytes of one v1 buffer, or a ``.qdf`` file.

    Parameters
    ----------
    path : str, os.PathLike, fsspec URL, writable binary file object, optional
        ``None`` returns ``qdf.encode(df, **options)``: one qdf v1 buffer, not a
        ``.qdf`` file (options ``mode``, ``column_index``, ``nested``; the file-only
        options raise ``InvalidOptionError``). Anything else writes a ``.qdf`` file
        with ``qdf.write_qdf(df, path, **options)`` (also ``row_group_size``,
        ``append``, ``storage_options``) and returns None: a local path (``~``
        expanded, written crash-safely), any fsspec URL, or a binary file object such
        as ``io.BytesIO`` or ``open(p, "wb")``, which gets the whole file once it is
        encoded (``append`` and ``storage_options`` need a path or URL). For the
        bytes of a ``.qdf`` file use ``qdf.write_qdf(df, None)``.

    Raises
    ------
    As :func:`qdf.encode` or :func:`qdf.write_qdf` (``QdfFileNotFoundError`` for a
    missing directory, ``InvalidPathError`` for a path of no accepted kind, ...).

    Examples
    --------
    >>> import pandas as pd, qdf_columnar as qdf, qdf_columnar.accessor as acc
    >>> acc.register()
    >>> df = pd.DataFrame({"id": [1, 2, 3]})
    >>> qdf.decode(df.to_qdf()).equals(df)
    True
    >>> import io
    >>> sink = io.BytesIO()
    >>> df.to_qdf(sink, row_group_size=2)
    >>> qdf.read_qdf(sink).equals(df)
    True
    """

    def __init__(self, df: Any) -> None:
        self._df = df

    def __call__(self, path: QdfPath | WritableFile | None = None, **options: Any) -> bytes | None:
        return _to_qdf(self._df, path, options)


ToQdf._qdf_columnar_accessor = True  # type: ignore[attr-defined]


def _install(pd: Any) -> None:
    """Register both accessors on ``pd.DataFrame`` unless a foreign attribute has the name."""
    global _done
    with _lock:
        if _done:
            return
        for name, cls in zip(ACCESSOR_NAMES, (QdfAccessor, ToQdf)):
            existing = getattr(pd.DataFrame, name, None)
            if existing is None:
                pd.api.extensions.register_dataframe_accessor(name)(cls)
            elif not getattr(existing, _MARK, False):
                warnings.warn(
                    f"pandas.DataFrame already has an attribute {name!r} ({existing!r}); "
                    f"qdf_columnar does not replace it, use qdf_columnar.accessor.{cls.__name__}(df) instead",
                    QdfWarning,
                    stacklevel=3,
                )
        _done = True


class _PandasImportHook(importlib.abc.MetaPathFinder):
    """One-shot: when ``pandas`` is imported, register right after its module has run."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != "pandas":
            return None
        _remove_hook()  # before find_spec below, which walks sys.meta_path again
        spec = importlib.util.find_spec("pandas")
        loader = spec.loader if spec is not None else None
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        run = loader.exec_module

        def exec_module(module: ModuleType) -> None:
            run(module)
            try:
                _install(module)
            except Exception as exc:  # never break `import pandas` because of us
                warnings.warn(f"qdf_columnar could not register its pandas accessors: {exc}", QdfWarning,
                              stacklevel=2)

        loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def _remove_hook() -> None:
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _PandasImportHook)]


def register(*, defer: bool = True) -> None:
    """Install ``DataFrame.to_qdf`` and the ``DataFrame.qdf`` accessor (idempotent).

    Parameters
    ----------
    defer : bool, default True
        When pandas is not imported yet, register the moment it is (a one-shot import
        hook; importing pandas now would cost ~0.3 s). ``False`` imports pandas now.
    """
    if _done:
        return
    pd = sys.modules.get("pandas")
    if pd is not None and hasattr(pd, "DataFrame"):
        _install(pd)
    elif defer and pd is None:
        with _lock:
            if not any(isinstance(f, _PandasImportHook) for f in sys.meta_path):
                sys.meta_path.insert(0, _PandasImportHook())
    else:  # pandas half-imported (we are called during its import) or defer=False
        import pandas

        _install(pandas)
