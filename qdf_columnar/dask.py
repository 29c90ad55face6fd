"""Dask integration: many ``.qdf`` files as one dask DataFrame, and one file per partition.

:func:`read_qdf` plans the whole read from the footers before any task exists: it
expands the paths, checks that every file has the same columns and types, drops the
row groups whose statistics prove the filter cannot be TRUE (``QdfFile.explain``),
and makes one partition per surviving (file, row group). Each task then reads exactly
its row group, with the filter pushed down into it. Divisions are known when the index
is a RangeIndex read without a filter, or a stored index column whose footer
statistics ascend without overlap from one partition to the next.

:func:`to_qdf` writes one ``.qdf`` file per partition.

This module imports dask only when one of its functions is called, and
``import qdf_columnar`` never imports this module.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

from .io.source import is_url

__all__ = ["read_qdf", "to_qdf"]

_SUFFIX = ".qdf"


def _require_dask() -> Any:
    try:
        import dask.dataframe as dd
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "qdf_columnar.dask needs dask with its DataFrame extra: pip install 'dask[dataframe]'"
        ) from exc
    return dd


# ----------------------------------------------------------------------------- paths


def _natural_key(s: str) -> list[Any]:
    """``part.2`` before ``part.10``."""
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", s)]


def _expand(paths_or_glob: Any, storage_options: dict[str, Any] | None) -> list[str]:
    """Every file named: a path, a glob, a directory (its ``*.qdf`` files) or a list of those."""
    import fsspec
    from fsspec.implementations.local import LocalFileSystem

    if isinstance(paths_or_glob, (str, os.PathLike)):
        items = [paths_or_glob]
    elif isinstance(paths_or_glob, Iterable):
        items = list(paths_or_glob)
    else:
        raise TypeError(f"paths_or_glob must be a path, a glob or a list of paths, not {type(paths_or_glob).__name__}")
    out: list[str] = []
    for item in items:
        p = os.fspath(item)
        if not isinstance(p, str):
            p = os.fsdecode(p)
        fs, root = fsspec.core.url_to_fs(p, **(storage_options or {}))
        local = isinstance(fs, LocalFileSystem)
        if fsspec.core.has_magic(root):
            found = [f for f in fs.glob(root) if fs.isfile(f)]
        elif fs.isdir(root):
            found = [f for f in fs.ls(root, detail=False)
                     if f.endswith(_SUFFIX) and not os.path.basename(f).startswith((".", "_")) and fs.isfile(f)]
        else:
            out.append(p)  # one file, named as given (keeps chained URLs intact)
            continue
        if not found:
            raise FileNotFoundError(f"no .qdf file matches {p!r}")
        found.sort(key=_natural_key)
        out.extend(f if local else fs.unstrip_protocol(f) for f in found)
    if not out:
        raise FileNotFoundError("read_qdf got no paths")
    return out


def _join(directory: str, name: str) -> str:
    if is_url(directory):
        return directory.rstrip("/") + "/" + name
    return os.path.join(directory, name)


# ----------------------------------------------------------------------------- one row group


def _pandas_meta(schema: Any) -> dict[str, Any] | None:
    raw = (schema.metadata or {}).get(b"pandas")
    if raw is None:
        return None
    try:
        meta = json.loads(raw)
    except ValueError:
        return None
    return meta if isinstance(meta, dict) else None


def _range_index(schema: Any) -> dict[str, Any] | None:
    """The file's RangeIndex descriptor (start, stop, step), when its index is one."""
    meta = _pandas_meta(schema)
    ix = (meta or {}).get("index_columns") or []
    if len(ix) == 1 and isinstance(ix[0], dict) and ix[0].get("kind") == "range":
        return ix[0]
    return None


def _restrict(f: Any, groups: list[Any], first_row: int, renumber: bool) -> None:
    """Make ``f`` read only ``groups`` (rows ``first_row`` on of the file).

    ``QdfFile.read`` has no row-group selector yet, so the parsed footer is swapped for
    one that lists only these groups. With ``renumber`` a RangeIndex is renumbered to
    their rows, as the writer numbers the groups themselves; without it (a filtered
    read) it keeps the file's range, so a partition gets a fresh RangeIndex exactly
    when ``qdf_columnar.read_qdf`` of the whole file would.
    """
    meta = f._meta
    n = sum(g.num_rows for g in groups)
    schema = meta.schema
    pd_meta = _pandas_meta(schema)
    if renumber and pd_meta is not None and _range_index(schema) is not None:
        ix = pd_meta["index_columns"][0]
        start, step = ix["start"], ix["step"]
        ix["start"], ix["stop"] = start + first_row * step, start + (first_row + n) * step
        schema = schema.with_metadata({**schema.metadata, b"pandas": json.dumps(pd_meta).encode()})
    f._meta = dataclasses.replace(meta, row_groups=list(groups), num_rows=n, schema=schema)


class _Part(NamedTuple):
    """One partition: a row group of a file, as the plan saw it."""

    path: str
    index: int
    offset: int
    length: int
    crc32: int
    first_row: int


class _ReadRowGroup:
    """The task function: read one planned row group, filter pushed down.

    Its ``columns=`` keyword lets dask push a later column selection into the read.
    """

    def __init__(self, columns: list[str] | None, expr: Any, storage_options: dict[str, Any] | None,
                 read_options: dict[str, Any], categories: dict[str, Any]) -> None:
        self.columns = columns  # read_qdf's columns=; a later selection dask pushes down overrides it
        self.expr = expr
        self.storage_options = storage_options
        self.read_options = read_options
        self.categories = categories  # column -> CategoricalDtype shared by every partition

    def __call__(self, part: _Part, columns: list[str] | None = None) -> Any:
        from .io import QdfFile

        with QdfFile(part.path, self.storage_options) as f:
            groups = f.row_groups
            g = groups[part.index] if part.index < len(groups) else None
            if g is None or (g.offset, g.length, g.crc32) != (part.offset, part.length, part.crc32):
                raise RuntimeError(
                    f"{part.path!r} changed after the dask graph was built: row group {part.index} is not the "
                    "one planned; call qdf_columnar.dask.read_qdf again"
                )
            _restrict(f, [g], part.first_row, renumber=self.expr is None)
            cols = self.columns if columns is None else list(columns)
            df = f.read(cols, self.expr, "pandas", **self.read_options)
        for name, dtype in self.categories.items():
            if name in df.columns and df[name].dtype != dtype:
                df[name] = df[name].cat.set_categories(dtype.categories)
        return df

    def __dask_tokenize__(self) -> Any:
        from dask.base import tokenize

        return ("qdf-read-row-group", self.columns, repr(self.expr), tokenize(self.storage_options),
                tokenize(self.read_options), tokenize({k: str(v) for k, v in self.categories.items()}))


# ----------------------------------------------------------------------------- planning


def _same_schema(a: Any, b: Any) -> bool:
    """Same names and types (a categorical's code width may differ between files)."""
    import pyarrow as pa

    if a.names != b.names:
        return False
    for s, t in zip(a.types, b.types):
        if s == t:
            continue
        if not (pa.types.is_dictionary(s) and pa.types.is_dictionary(t) and s.value_type == t.value_type
                and s.ordered == t.ordered):
            return False
    return (_range_index(a) is None) == (_range_index(b) is None)


def _bounds(f: Any, groups: list[Any], first_rows: list[int], filtered: bool) -> list[tuple[Any, Any]] | None:
    """(lowest, highest) index value of each group, when the footer proves them; else None."""
    import pyarrow as pa

    from .io.layout import stat_kind

    schema = f.schema
    rng = _range_index(schema)
    if rng is not None:
        start, step = rng.get("start"), rng.get("step")
        if filtered or not isinstance(start, int) or not isinstance(step, int) or step <= 0:
            return None  # a filtered read numbers each partition's rows afresh
        return [(start + r * step, start + (r + g.num_rows - 1) * step) for g, r in zip(groups, first_rows)]
    ix = ((_pandas_meta(schema) or {}).get("index_columns")) or []
    if len(ix) != 1 or not isinstance(ix[0], str) or ix[0] not in schema.names:
        return None  # no index stored, or a MultiIndex
    name = ix[0]
    t = schema.field(name).type
    if stat_kind(t) not in ("int", "uint", "float", "string") or pa.types.is_dictionary(t):
        return None
    out = []
    for g in groups:
        st = g.statistics.get(name)
        if st is None or st.min is None or st.null_count or st.nan_count or not st.exact:
            return None
        out.append((st.min, st.max))
    if pa.types.is_temporal(t):  # storage ticks -> the values pandas puts in the index
        storage = pa.int32() if t.bit_width == 32 else pa.int64()
        flat = pa.array([v for b in out for v in b], storage).view(t).to_pandas().tolist()
        out = list(zip(flat[0::2], flat[1::2]))
    return out


def _divisions(bounds: list[tuple[Any, Any]] | None) -> tuple[Any, ...] | None:
    if not bounds:
        return None
    for (_, hi), (lo, _) in zip(bounds, bounds[1:]):
        if not hi < lo:
            return None
    return (*[lo for lo, _ in bounds], bounds[-1][1])


def _unify_categories(metas: list[Any], dictionary_columns: list[str]) -> dict[str, Any]:
    """One CategoricalDtype per file-dictionary column: the files' own when they agree, else their union."""
    import pandas as pd

    out = {}
    for name in dictionary_columns:
        dtypes = [m[name].dtype for m in metas if name in m.columns]
        if not dtypes or all(d == dtypes[0] for d in dtypes[1:]):
            continue
        if any(d.ordered for d in dtypes):
            continue  # no order to give a union of ordered categories: left unknown
        cats = pd.Index(dtypes[0].categories)
        for d in dtypes[1:]:
            cats = cats.append(pd.Index(d.categories).difference(cats, sort=False))
        out[name] = pd.CategoricalDtype(cats, ordered=False)
    return out


def read_qdf(
    paths_or_glob: Any,
    columns: list[str] | None = None,
    filter: Any = None,  # noqa: A002 - the name users know from pyarrow / dask
    storage_options: dict[str, Any] | None = None,
    *,
    calculate_divisions: bool = True,
    **read_options: Any,
) -> Any:
    """Read ``.qdf`` files as a dask DataFrame: one partition per (file, row group) read.

    Parameters
    ----------
    paths_or_glob : str, os.PathLike or list of them
        Files, globs (``data/*.qdf``, ``s3://bucket/logs/*.qdf``) or directories (their
        ``*.qdf`` files). Globs and directories are expanded in natural order
        (``part.2`` before ``part.10``). Every file must have the same columns and types.
    columns : list of str, optional
        Columns to read; a stored index comes along. A later ``ddf[[...]]`` selection is
        pushed into the reads too.
    filter : expression or pyarrow-style DNF, optional
        As in :func:`qdf_columnar.read_qdf` (SQL three-valued logic, only TRUE rows).
        Row groups whose footer statistics prove no row can be TRUE get no partition at
        all (the graph is smaller); each remaining task reads its row group with the
        filter pushed down.
    storage_options : dict, optional
        fsspec options, for the planning and for every task.
    calculate_divisions : bool
        Give the DataFrame known divisions when the footers prove them: a RangeIndex
        read without a filter, or a stored index column whose statistics (no nulls, no
        NaN) ascend without overlap from partition to partition. As with
        ``dask.dataframe.read_parquet(calculate_divisions=True)``, each row group is then
        taken to be sorted by its index. ``False`` leaves divisions unknown.
    **read_options
        ``no_copy``, ``threads`` (per task; default ``False``: dask already runs tasks in
        parallel), ``on_error`` and ``categories`` of :func:`qdf_columnar.read_qdf`.

    Returns
    -------
    dask.dataframe.DataFrame
        Its ``meta`` has the dtypes ``qdf_columnar.read_qdf`` returns (from the footer
        schema, no row group read). Like every dask reader, dask's
        ``dataframe.convert-string`` option (on by default) then turns string columns
        into ``string[pyarrow]``; set it to False to keep the file's string dtypes.
        Categoricals stored with a dictionary keep known categories (the union, when the
        files differ); ``categories=`` columns have unknown categories.
    """
    dd = _require_dask()
    import pandas as pd
    import pyarrow as pa

    from .io import QdfFile
    from .query import as_expr

    output = read_options.pop("output", "pandas")
    if output != "pandas":
        raise ValueError(f"a dask DataFrame is made of pandas partitions; output={output!r} is not supported")
    unknown = set(read_options) - {"no_copy", "threads", "on_error", "categories"}
    if unknown:
        raise TypeError(f"read_qdf got unexpected keyword argument(s) {sorted(unknown)}")
    read_options.setdefault("threads", False)
    expr = as_expr(filter)
    cols = None if columns is None else list(columns)

    paths = _expand(paths_or_glob, storage_options)
    parts: list[_Part] = []
    bounds: list[tuple[Any, Any]] | None = []
    metas: list[Any] = []
    first_schema = None
    for path in paths:
        with QdfFile(path, storage_options) as f:
            schema = f.schema
            if first_schema is None:
                first_schema = (path, schema)
            elif not _same_schema(first_schema[1], schema):
                from .io import SchemaMismatchError

                raise SchemaMismatchError(
                    f"{path!r} does not have the columns and types of {first_schema[0]!r}: "
                    f"{schema.remove_metadata()} vs {first_schema[1].remove_metadata()}"
                )
            plan = f.explain(expr)  # validates the filter against the schema
            groups = f.row_groups
            first_rows, at = [], 0
            for g in groups:
                first_rows.append(at)
                at += g.num_rows
            keep = [int(i) for i in plan.loc[plan["read"], "index"]]
            parts += [_Part(path, i, groups[i].offset, groups[i].length, groups[i].crc32, first_rows[i])
                      for i in keep]
            if bounds is not None and calculate_divisions and keep:
                b = _bounds(f, [groups[i] for i in keep], [first_rows[i] for i in keep], expr is not None)
                bounds = None if b is None else bounds + b
            if not metas or any(pa.types.is_dictionary(t) for t in schema.types):
                _restrict(f, [], 0, renumber=True)  # an empty read: the exact dtypes, no row group touched
                metas.append(f.read(cols, expr, "pandas", **read_options))

    assert first_schema is not None
    meta = metas[0]
    dict_cols = [fl.name for fl in first_schema[1] if pa.types.is_dictionary(fl.type)]
    shared = _unify_categories(metas, dict_cols)
    for name, dtype in shared.items():
        if name in meta.columns:
            meta[name] = meta[name].astype(dtype)
    # Unknown categories: categories= columns (one dictionary per row group) and file
    # dictionaries that are ordered and differ between files.
    unknown_cats = []
    for c in meta.columns:
        if not isinstance(meta[c].dtype, pd.CategoricalDtype) or c in shared:
            continue
        if c not in dict_cols or any(m[c].dtype != meta[c].dtype for m in metas[1:]):
            unknown_cats.append(c)
    if unknown_cats:
        from dask.dataframe.utils import clear_known_categories

        meta = clear_known_categories(meta, cols=unknown_cats)

    if not parts:  # every row group pruned: one empty partition
        return dd.from_pandas(meta, npartitions=1)
    divisions = _divisions(bounds) if calculate_divisions and bounds is not None else None
    func = _ReadRowGroup(cols, expr, storage_options, read_options, shared)
    kwargs = {} if cols is None else {"columns": cols}
    return dd.from_map(func, parts, meta=meta, divisions=divisions, label="read-qdf", enforce_metadata=False,
                       **kwargs)


# ----------------------------------------------------------------------------- writing


def _write_partition(df: Any, path: str, storage_options: dict[str, Any] | None,
                     write_options: dict[str, Any]) -> str:
    from .io import write_qdf

    write_qdf(df, path, storage_options=storage_options, **write_options)
    return path


def to_qdf(
    ddf: Any,
    directory: Any,
    name_function: Callable[[int], str] | None = None,
    *,
    compute: bool = True,
    overwrite: bool = False,
    storage_options: dict[str, Any] | None = None,
    **write_options: Any,
) -> Any:
    """Write a dask DataFrame as one ``.qdf`` file per partition in ``directory``.

    Parameters
    ----------
    ddf : dask.dataframe.DataFrame or Series
    directory : str or os.PathLike
        A local directory or an fsspec URL (``s3://bucket/out``, ``memory://out``);
        created when missing.
    name_function : callable, optional
        Partition number -> file name; default ``part.{i}.qdf``.
    compute : bool
        Write now and return the paths (default). ``False`` returns a ``dask.delayed``
        object that writes the files and returns the paths when computed.
    overwrite : bool
        Remove the ``*.qdf`` files already in ``directory`` first (other files are left
        alone), so a later ``read_qdf(directory)`` sees only this write.
    storage_options : dict, optional
        fsspec options.
    **write_options
        ``mode``, ``row_group_size``, ... of :func:`qdf_columnar.write_qdf`, for every file.

    Returns
    -------
    list of str
        The files written, in partition order (or a Delayed of it).
    """
    _require_dask()
    import dask
    import fsspec

    if "path" in write_options or "append" in write_options:
        raise TypeError("to_qdf names the files itself and does not append; see name_function")
    if hasattr(ddf, "to_frame") and not hasattr(ddf, "columns"):
        ddf = ddf.to_frame()
    directory = os.fspath(directory)
    fs, root = fsspec.core.url_to_fs(directory, **(storage_options or {}))
    fs.makedirs(root, exist_ok=True)
    name_function = name_function or (lambda i: f"part.{i}{_SUFFIX}")
    names = [name_function(i) for i in range(ddf.npartitions)]
    if len(set(names)) != len(names) or not all(isinstance(n, str) and n for n in names):
        raise ValueError("name_function must return a distinct, non-empty file name for every partition")
    if overwrite:
        old = [p for p in fs.ls(root, detail=False) if p.endswith(_SUFFIX) and fs.isfile(p)]
        if old:
            fs.rm(old)
    paths = [_join(directory, n) for n in names]
    token = dask.base.tokenize(ddf, paths, storage_options, write_options)
    writes = [
        dask.delayed(_write_partition, pure=False)(part, path, storage_options, write_options,
                                                   dask_key_name=f"to-qdf-{token}-{i}")
        for i, (part, path) in enumerate(zip(ddf.to_delayed(), paths))
    ]
    if not compute:
        return dask.delayed(list)(writes, dask_key_name=f"to-qdf-paths-{token}")
    return list(dask.compute(*writes))
