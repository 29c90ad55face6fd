"""Writing ``.qdf`` files: :func:`write_qdf`.

Input batches are converted to Arrow, checked against the file schema (the first
batch's, or the existing file's when appending), re-cut into row groups of
``row_group_size`` rows and each group encoded with ``qdf.encode``. The footer keeps
the schema (pandas metadata included), the union of every categorical column's
categories, and per-group statistics. Local writes go to a temporary file in the same
directory that is fsynced and renamed over the target, so the target is always either
the old complete file or the new one; object stores publish an object on close.
"""

from __future__ import annotations

import json
import os
import secrets
import stat
import tempfile
import zlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from ..columns.inputs import to_arrow_table
from ..errors import InvalidOptionError
from .layout import HEADER, MAX_GROUP_ROWS, RowGroup, SchemaMismatchError, build_footer, pack_trailer
from .reader import PANDAS_DTYPES_KEY, QdfFile
from .source import resolve
from .stats import column_stats

__all__ = ["write_qdf"]

_COPY_CHUNK = 64 * 1024 * 1024


# ----------------------------------------------------------------------------- sinks


class _LocalSink:
    """A temporary file beside the target, renamed over it on commit (crash: target untouched)."""

    def __init__(self, path: str) -> None:
        self.path = os.path.abspath(path)
        self.dir, base = os.path.split(self.path)
        self.tmp = os.path.join(self.dir, f".{base}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
        fd = os.open(self.tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
        self.f = os.fdopen(fd, "wb")

    def write(self, data: Any) -> None:
        self.f.write(data)

    def commit(self) -> None:
        self.f.flush()
        os.fsync(self.f.fileno())
        self.f.close()
        try:  # an overwritten file keeps its permissions
            os.chmod(self.tmp, stat.S_IMODE(os.stat(self.path).st_mode))
        except FileNotFoundError:
            pass
        os.replace(self.tmp, self.path)
        # The rename itself is durable only once the directory entry is flushed.
        try:
            dfd = os.open(self.dir, os.O_RDONLY)
        except OSError:
            return
        try:
            os.fsync(dfd)
        except OSError:
            pass
        finally:
            os.close(dfd)

    def abort(self) -> None:
        self.f.close()
        try:
            os.unlink(self.tmp)
        except OSError:
            pass


class _FsspecSink:
    """An fsspec file written directly: object stores publish the object only on close."""

    def __init__(self, fs: Any, path: str) -> None:
        self.f = fs.open(path, "wb")

    def write(self, data: Any) -> None:
        self.f.write(data)

    def commit(self) -> None:
        self.f.close()

    def abort(self) -> None:
        discard = getattr(self.f, "discard", None)
        if discard is not None:  # never close: closing would publish a partial object
            discard()


# ----------------------------------------------------------------------------- schema keeping


def _pandas_dtypes(data: Any) -> dict[str, str]:
    """DataFrame string columns whose dtype the pandas metadata cannot bring back.

    pandas metadata spells ``StringDtype("python")`` like the pyarrow storage, and
    pandas 3 reads Arrow strings as ``str`` even where the frame had ``object``.
    """
    if not (type(data).__module__.startswith("pandas") and type(data).__name__ == "DataFrame"):
        return {}
    import pandas as pd

    out = {}
    for name in data.columns:
        dt = data[name].dtype
        if isinstance(dt, pd.StringDtype) and dt.storage == "python":
            out[str(name)] = "str[python]" if isinstance(dt.na_value, float) else "string[python]"
        elif pd.api.types.is_object_dtype(dt) and pd.api.types.infer_dtype(data[name], skipna=True) == "string":
            out[str(name)] = "object"
    return out


def _compatible(file_t: pa.DataType, t: pa.DataType) -> bool:
    if file_t == t or pa.types.is_null(t):
        return True
    # Category counts pick pandas' code width, so only the dictionary's values must agree.
    return (pa.types.is_dictionary(file_t) and pa.types.is_dictionary(t)
            and file_t.value_type == t.value_type and file_t.ordered == t.ordered)


def _index_type(n: int, current: pa.DataType) -> pa.DataType:
    for t in (pa.int8(), pa.int16(), pa.int32()):
        if n <= (1 << (t.bit_width - 1)) and t.bit_width >= current.bit_width:
            return t
    return pa.int64()


class _Schema:
    """The file schema as batches arrive: dictionaries, RangeIndex numbering, null columns."""

    def __init__(self, existing: QdfFile | None) -> None:
        self.schema: pa.Schema | None = None
        self.dicts: dict[str, pa.Array] = {}
        self.rows = 0
        if existing is not None:
            self.schema = existing.schema
            self.dicts = dict(existing._meta.dictionaries)
            self.rows = existing.num_rows

    def accept(self, item: Any) -> pa.Table:
        dtypes = _pandas_dtypes(item)
        t = to_arrow_table(item)
        if self.schema is None:
            meta = dict(t.schema.metadata or {})
            if dtypes:
                meta[PANDAS_DTYPES_KEY] = json.dumps(dtypes).encode()
            self.schema = t.schema.with_metadata(meta)
        else:
            self._check(t.schema)
        self._grow_dictionaries(t)
        return self.conform(t)

    def _check(self, s: pa.Schema) -> None:
        assert self.schema is not None
        names, want = s.names, self.schema.names
        if names != want:
            i = next((i for i, (a, b) in enumerate(zip(names, want)) if a != b), min(len(names), len(want)))
            col = names[i] if i < len(names) else want[i]
            raise SchemaMismatchError(f"the data has columns {names} but the file has {want}", column=col)
        for i, (f, g) in enumerate(zip(self.schema, s)):
            if pa.types.is_null(f.type) and not pa.types.is_null(g.type):
                self.schema = self.schema.set(i, f.with_type(g.type))  # an all-null column gets its real type
            elif not _compatible(f.type, g.type):
                raise SchemaMismatchError(f"the data has type {g.type} but the file has {f.type}", column=f.name)

    def _grow_dictionaries(self, t: pa.Table) -> None:
        assert self.schema is not None
        for i, f in enumerate(self.schema):
            if not pa.types.is_dictionary(f.type):
                continue
            cur = self.dicts.get(f.name, pa.array([], f.type.value_type))
            for chunk in t.column(f.name).chunks:
                if not pa.types.is_dictionary(chunk.type):
                    continue
                new = chunk.dictionary.drop_null()
                new = pc.unique(new.filter(pc.invert(pc.is_in(new, value_set=cur)))) if len(cur) else pc.unique(new)
                if len(new):
                    cur = pa.concat_arrays([cur, new])
            self.dicts[f.name] = cur
            wide = _index_type(len(cur), f.type.index_type)
            if wide != f.type.index_type:
                self.schema = self.schema.set(i, f.with_type(pa.dictionary(wide, f.type.value_type, f.type.ordered)))

    def conform(self, t: pa.Table) -> pa.Table:
        """``t`` with exactly the file schema (dictionary code widths, null columns cast)."""
        assert self.schema is not None
        if t.schema.equals(self.schema, check_metadata=True):
            return t
        cols = []
        for f, col in zip(self.schema, t.columns):
            if col.type != f.type:
                try:
                    col = col.cast(f.type)
                except pa.ArrowInvalid:  # a chunk dictionary with repeated values: re-encode it
                    col = col.cast(f.type.value_type).dictionary_encode().cast(f.type)
            cols.append(col)
        return pa.Table.from_arrays(cols, schema=self.schema)

    def _pandas_meta(self, first: int, n: int) -> dict[bytes, bytes] | None:
        """The schema metadata with a RangeIndex renumbered to rows [first, first + n)."""
        assert self.schema is not None
        meta = dict(self.schema.metadata or {})
        raw = meta.get(b"pandas")
        if raw is None:
            return meta or None
        pd_meta = json.loads(raw)
        for ix in pd_meta.get("index_columns", []):
            # The file schema's range always starts at row 0 (the first batch's start, or the
            # existing file's): later batches continue its numbering, whatever their own index.
            if isinstance(ix, dict) and ix.get("kind") == "range":
                start, step = ix["start"], ix["step"]
                ix["start"], ix["stop"] = start + first * step, start + (first + n) * step
        meta[b"pandas"] = json.dumps(pd_meta).encode()
        return meta

    def group(self, t: pa.Table) -> pa.Table:
        t = t.replace_schema_metadata(self._pandas_meta(self.rows, t.num_rows))
        self.rows += t.num_rows
        return t

    def final(self) -> pa.Schema:
        assert self.schema is not None
        return self.schema.with_metadata(self._pandas_meta(0, self.rows) or {})


def _inputs(data: Any) -> Iterator[Any]:
    """The batches of ``data``: one table-like, or an iterable of them."""
    if isinstance(data, (pa.Table, pa.RecordBatch, Mapping)) or type(data).__name__ == "DataFrame":
        yield data
    elif isinstance(data, Sequence) and not isinstance(data, (str, bytes)):
        if all(isinstance(x, Mapping) for x in data):
            yield data  # a list of dicts is one batch of records
        else:
            yield from data
    elif isinstance(data, Iterable) and not isinstance(data, (str, bytes)):
        yield from data  # generators, pa.RecordBatchReader, ...
    else:
        yield data  # to_arrow_table names what is wrong with it


def _row_groups(keeper: _Schema, data: Any, size: int) -> Iterator[pa.Table]:
    """Re-cut the input batches into tables of ``size`` rows (the last may be shorter)."""
    pending: list[pa.Table] = []
    n_pending = 0
    for item in _inputs(data):
        t = keeper.accept(item)
        if t.num_rows == 0:
            continue
        pending.append(t)
        n_pending += t.num_rows
        while n_pending >= size:
            whole = pa.concat_tables([keeper.conform(p) for p in pending]) if len(pending) > 1 \
                else keeper.conform(pending[0])
            yield keeper.group(whole.slice(0, size))
            rest = whole.slice(size)
            pending, n_pending = ([rest] if rest.num_rows else []), rest.num_rows
    if n_pending:
        yield keeper.group(pa.concat_tables([keeper.conform(p) for p in pending]))


# ----------------------------------------------------------------------------- write_qdf


def write_qdf(
    data: Any,
    path: Any,
    *,
    mode: Any = "compression",
    row_group_size: int = 1_048_576,
    column_index: bool = True,
    nested: str = "columns",
    append: bool = False,
    storage_options: dict[str, Any] | None = None,
) -> None:
    """Write ``data`` as a ``.qdf`` file: row groups of qdf v1 buffers plus a footer.

    Parameters
    ----------
    data : DataFrame, pyarrow Table / RecordBatch, dict of arrays, list of dicts, or an iterable of those
        An iterable (generator, list of DataFrames, ``pa.RecordBatchReader``) is
        streamed: only one row group is held in memory. Every batch must have the
        file's column names and Arrow types (categorical code widths and all-null
        columns excepted); a RangeIndex continues across batches.
    path : str or os.PathLike
        A local path or any fsspec URL (``s3://...``, ``memory://...``).
    mode, column_index, nested
        Passed to :func:`qdf.encode` for every row group.
    row_group_size : int
        Rows per row group, at most 2**24 (the v1 container limit).
    append : bool
        Add row groups to an existing file with the same columns and types. The old
        row groups are copied to a temporary file with the new ones and a new footer,
        which then replaces the file (a crash leaves the old file as it was). A
        missing file is created.
    storage_options : dict, optional
        fsspec options.

    Raises
    ------
    UnsupportedTypeError
        A column qdf cannot store (naming the column).
    SchemaMismatchError
        A batch, or appended data, whose columns or types differ from the file's.
    InvalidOptionError
        A bad ``row_group_size``, ``mode`` or ``nested``.
    """
    from .. import __version__
    from ..api import encode
    from ..options import parse_mode

    if isinstance(row_group_size, bool) or not isinstance(row_group_size, int) \
            or not 1 <= row_group_size <= MAX_GROUP_ROWS:
        raise InvalidOptionError(f"row_group_size must be an int in [1, {MAX_GROUP_ROWS}], not {row_group_size!r}")
    if nested not in ("columns", "rows"):
        raise InvalidOptionError(f"nested must be 'columns' or 'rows', not {nested!r}")
    parse_mode(mode, column_index=column_index)
    fs, fpath = resolve(path, storage_options)
    existing = None
    if append and (os.path.exists(fpath) if fs is None else fs.exists(fpath)):
        existing = QdfFile(path, storage_options)
    try:
        keeper = _Schema(existing)
        old = _old_row_groups(existing, remote=fs is not None)
        sink: _LocalSink | _FsspecSink = _LocalSink(fpath) if fs is None else _FsspecSink(fs, fpath)
        try:
            groups = _write_groups(sink, keeper, existing, old, data, row_group_size,
                                   lambda t: encode(t, mode=mode, column_index=column_index, nested=nested))
            if keeper.schema is None:
                raise InvalidOptionError("write_qdf got no batches, so there is no schema to write")
            if existing is None and not groups:  # nothing was encoded: still refuse unstorable columns
                encode(keeper.schema.empty_table(), mode=mode, column_index=column_index, nested=nested)
            footer = build_footer(keeper.final(), groups, keeper.dicts, f"qdf_columnar {__version__}")
            sink.write(footer)
            sink.write(pack_trailer(footer))
            sink.commit()
        except BaseException:
            sink.abort()
            raise
    finally:
        if existing is not None:
            existing.close()


def _old_row_groups(existing: QdfFile | None, remote: bool) -> Iterator[Any]:
    """The existing file's bytes before its footer, in chunks (its row groups, verbatim).

    Opening a remote target for writing may truncate it at once (fsspec's memory and
    local-like filesystems do), so a remote file's row groups are spooled to a local
    temporary file before the target is opened.
    """
    if existing is None:
        return iter(())
    end = existing._meta.footer_offset
    chunks = (existing._src.read(at, min(_COPY_CHUNK, end - at)) for at in range(0, end, _COPY_CHUNK))
    if not remote:
        return chunks
    spool = tempfile.SpooledTemporaryFile(max_size=_COPY_CHUNK)
    for c in chunks:
        spool.write(c)
    spool.seek(0)
    return iter(lambda: spool.read(_COPY_CHUNK), b"")


def _write_groups(
    sink: Any, keeper: _Schema, existing: QdfFile | None, old: Iterator[Any], data: Any, size: int, enc: Any
) -> list[RowGroup]:
    if existing is None:
        sink.write(HEADER)
        offset, groups = len(HEADER), []
    else:
        # Row groups are v1 buffers at absolute offsets: copied verbatim, they stay valid.
        offset, groups = existing._meta.footer_offset, existing.row_groups
        for chunk in old:
            sink.write(chunk)
    for t in _row_groups(keeper, data, size):
        buf = enc(t)
        stats = {name: column_stats(t.column(i)) for i, name in enumerate(t.column_names)}
        groups.append(RowGroup(len(groups), offset, len(buf), t.num_rows, zlib.crc32(buf), stats))
        sink.write(buf)
        offset += len(buf)
    return groups
