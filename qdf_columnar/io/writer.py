"""Writing ``.qdf`` files: :func:`write_qdf`.

Input batches are converted to Arrow, checked against the file schema (the first
batch's, or the existing file's when appending), re-cut into row groups of
``row_group_size`` rows and each group encoded with ``qdf.encode``. The footer keeps
the schema (pandas metadata included), the union of every categorical column's
categories, and per-group statistics. Local writes go to a temporary file in the same
directory that is fsynced and renamed over the target, so the target is always either
the old complete file or the new one; object stores publish an object on close. A file
object gets the whole file only once it is completely encoded (spooled to a temporary
file first), and ``path=None`` returns the file's bytes.
"""

from __future__ import annotations

import errno
import json
import os
import secrets
import stat
import tempfile
import zlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, overload

import pyarrow as pa
import pyarrow.compute as pc

from ..columns.frames import strip_categories, with_metadata
from ..columns.inputs import to_arrow_table
from ..columns.outputs import empty_table
from ..errors import InvalidOptionError, QdfIOError, QdfIsADirectoryError, UnsupportedTypeError
from .chunks import chunk_table, encode_chunk
from .layout import (
    HEADER_SIZE,
    MAX_GROUP_ROWS,
    READ_MAJORS,
    VERSION,
    ZONE_ROWS,
    Chunk,
    RowGroup,
    SchemaMismatchError,
    build_footer,
    header_for,
    pack_trailer,
)
from .reader import QdfFile
from .source import QdfPath, WritableFile, missing_directory, os_error, resolve, source_name, writable_file
from .stats import column_stats
from .zones import zone_stats

__all__ = ["write_qdf"]

_COPY_CHUNK = 64 * 1024 * 1024
#: A file being encoded for a file object stays in memory up to this size, then spills
#: to a temporary file (``tempfile.SpooledTemporaryFile``).
_SPOOL_BYTES = 64 * 1024 * 1024


# ----------------------------------------------------------------------------- sinks


class _LocalSink:
    """A temporary file beside the target, renamed over it on commit (crash: target untouched)."""

    def __init__(self, path: str) -> None:
        self.name = path  # as the caller gave it (``~`` expanded): what errors name
        self.path = os.path.abspath(path)
        self.dir, base = os.path.split(self.path)
        self.tmp = os.path.join(self.dir, f".{base}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
        try:
            fd = os.open(self.tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
        except OSError as exc:  # never name the temporary file: the caller did not ask for it
            raise os_error(exc, self.name, "write") from exc
        self.f = os.fdopen(fd, "wb")

    def write(self, data: Any) -> None:
        try:
            self.f.write(data)
        except OSError as exc:  # a full disk, a quota
            raise os_error(exc, self.name, "write") from exc

    def commit(self) -> None:
        try:
            self.f.flush()
            os.fsync(self.f.fileno())
            self.f.close()
            try:  # an overwritten file keeps its permissions
                os.chmod(self.tmp, stat.S_IMODE(os.stat(self.path).st_mode))
            except FileNotFoundError:
                pass
            os.replace(self.tmp, self.path)
        except OSError as exc:
            raise os_error(exc, self.name, "write") from exc
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

    def __init__(self, fs: Any, path: str, name: str) -> None:
        try:
            self.f = fs.open(path, "wb")
        except OSError as exc:
            raise os_error(exc, name, "write") from exc

    def write(self, data: Any) -> None:
        self.f.write(data)

    def commit(self) -> None:
        self.f.close()

    def abort(self) -> None:
        discard = getattr(self.f, "discard", None)
        if discard is not None:  # never close: closing would publish a partial object
            discard()


class _FileObjectSink:
    """The whole file for a caller's file object, handed over only once it is complete.

    Row groups and footer are encoded into a spooled temporary file (memory up to
    ``_SPOOL_BYTES``, then disk), which ``commit`` copies to the object sequentially from
    its current position. A failure while encoding (a later batch with another schema,
    an unstorable column) so writes nothing to the object; only an error of the object
    itself during the copy can leave part of a file in it. The object is flushed, never
    closed: the caller owns it.
    """

    def __init__(self, f: Any) -> None:
        self.target = f
        self.spool = tempfile.SpooledTemporaryFile(max_size=_SPOOL_BYTES)

    def write(self, data: Any) -> None:
        self.spool.write(data)

    def commit(self) -> None:
        self.spool.seek(0)
        for chunk in iter(lambda: self.spool.read(_COPY_CHUNK), b""):
            _write_all(self.target, chunk)
        flush = getattr(self.target, "flush", None)
        if callable(flush):
            flush()
        self.spool.close()

    def abort(self) -> None:
        self.spool.close()


def _write_all(f: Any, data: bytes) -> None:
    """``f.write(data)`` until every byte is taken (raw files may take fewer per call)."""
    while data:
        n = f.write(data)
        if n is None or n >= len(data):  # None: file-likes that return nothing took it all
            return
        if n <= 0:
            raise QdfIOError(f"cannot write {source_name(f)!r}: the file object accepted no bytes")
        data = data[n:]


class _BufferSink:
    """``path=None``: the file's bytes, returned by ``write_qdf``."""

    def __init__(self) -> None:
        self.parts: list[Any] = []
        self.value: bytes | None = None

    def write(self, data: Any) -> None:
        self.parts.append(data)

    def commit(self) -> None:
        self.value = b"".join(self.parts)
        self.parts = []

    def abort(self) -> None:
        self.parts = []


def _check_local_target(path: str) -> None:
    """Refuse a target that is a directory, or whose directory is missing, before encoding anything."""
    full = os.path.abspath(path)
    if os.path.isdir(full):
        raise QdfIsADirectoryError(f"cannot write {path!r}: it is a directory; name a file inside it",
                                   path=path, errno=errno.EISDIR)
    parent = os.path.dirname(full)
    if not os.path.isdir(parent):
        if os.path.exists(parent):
            raise QdfIOError(f"cannot write {path!r}: {parent!r} is not a directory", path=path,
                             errno=errno.ENOTDIR)
        raise missing_directory(path, parent)


# ----------------------------------------------------------------------------- schema keeping


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
        t = to_arrow_table(item)
        if self.schema is None:
            # Category lists live once in the footer's dictionaries, not in every group's note.
            self.schema = t.schema.with_metadata(strip_categories(dict(t.schema.metadata or {})))
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
        t = with_metadata(t, self._pandas_meta(self.rows, t.num_rows))
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
            whole = _concat([keeper.conform(p) for p in pending])
            yield keeper.group(_slice(whole, 0, size))
            rest = _slice(whole, size, whole.num_rows - size)
            pending, n_pending = ([rest] if rest.num_rows else []), rest.num_rows
    if n_pending:
        yield keeper.group(_concat([keeper.conform(p) for p in pending]))


# pyarrow's concat_tables and slice lose the row count of tables without columns (to 0,
# and to the whole length): those are only a row count, kept here by hand.
def _concat(tables: list[pa.Table]) -> pa.Table:
    if tables[0].num_columns:
        return pa.concat_tables(tables) if len(tables) > 1 else tables[0]
    return empty_table(sum(t.num_rows for t in tables), tables[0].schema.metadata)


def _slice(t: pa.Table, start: int, length: int) -> pa.Table:
    return t.slice(start, length) if t.num_columns else empty_table(max(0, min(length, t.num_rows - start)),
                                                                     t.schema.metadata)


# ----------------------------------------------------------------------------- write_qdf


@overload
def write_qdf(
    data: Any,
    path: None,
    *,
    mode: Any = ...,
    row_group_size: int = ...,
    column_index: bool = ...,
    nested: str = ...,
    go_compatible: bool = ...,
    format_version: int | None = ...,
    zone_maps: bool = ...,
    append: bool = ...,
    storage_options: dict[str, Any] | None = ...,
) -> bytes: ...


@overload
def write_qdf(
    data: Any,
    path: QdfPath | WritableFile,
    *,
    mode: Any = ...,
    row_group_size: int = ...,
    column_index: bool = ...,
    nested: str = ...,
    go_compatible: bool = ...,
    format_version: int | None = ...,
    zone_maps: bool = ...,
    append: bool = ...,
    storage_options: dict[str, Any] | None = ...,
) -> None: ...


def write_qdf(
    data: Any,
    path: QdfPath | WritableFile | None,
    *,
    mode: Any = "balanced",
    row_group_size: int = 1_048_576,
    column_index: bool = True,
    nested: str = "columns",
    go_compatible: bool = False,
    format_version: int | None = None,
    zone_maps: bool = True,
    append: bool = False,
    storage_options: dict[str, Any] | None = None,
) -> bytes | None:
    """Write ``data`` as a ``.qdf`` file: row groups of qdf v1 buffers plus a footer.

    Parameters
    ----------
    data : DataFrame, pyarrow Table / RecordBatch, dict of arrays, list of dicts, or an iterable of those
        An iterable (generator, list of DataFrames, ``pa.RecordBatchReader``) is
        streamed: only one row group is held in memory. Every batch must have the
        file's column names and Arrow types (categorical code widths and all-null
        columns excepted); a RangeIndex continues across batches.
    path : str, os.PathLike, fsspec URL, writable binary file object, or None
        * a local path (``~`` is expanded): written crash-safely, to a temporary file
          beside the target that is fsynced and renamed over it;
        * any fsspec URL (``s3://...``, ``memory://...``): written directly (object
          stores publish the object on close; a failed write discards it);
        * a binary file object (anything with ``write``: ``open(p, "wb")``,
          ``io.BytesIO``, an fsspec file): the file is first encoded into a spooled
          temporary file (memory up to 64 MiB, then disk) and then written to the
          object sequentially from its current position, so a failure while encoding
          writes nothing to it. It is flushed, not closed;
        * ``None``: the complete file is returned as ``bytes`` (which ``read_qdf``
          reads, as bytes or through ``io.BytesIO``).
    mode, column_index, nested, go_compatible
        Passed to :func:`qdf.encode` for every row group (``go_compatible=True``: row
        groups the Go library decodes to the same values). ``mode`` defaults to
        ``"balanced"``, as for ``encode()``: files that read fastest and are still
        smaller than Parquet zstd-3 on real tables. ``"compression"`` writes the
        smallest files (no larger than Parquet zstd-19 on the same tables) at the cost
        of slower writes and reads: its chunks may be xz streams, which decode at tens
        of MB/s.
    format_version : {2, 1}, optional
        The container version (docs/FORMAT.md Part 4). 2 (the default for a new file)
        stores every row group as one column chunk per column, each a qdf v1 buffer
        (in balanced mode zstd-wrapped where that is at least 5% smaller; in compression
        mode whichever of the v1 buffer, its tANS pass, a zstd frame or an xz stream is
        smallest), so a read fetches and decodes only the columns it needs. 1 stores a
        row group as one v1 buffer. ``append`` keeps the existing file's version.
    zone_maps : bool
        Version 2: give every row group longer than 8,192 rows zone maps in the footer
        (per 8,192-row zone, the null count of every column and min / max of numeric and
        temporal ones), so a filter on a clustered column (a time range on a table
        sorted by time) decodes and evaluates only the zones that may match, inside the
        row groups it reads. False leaves them out (a smaller footer, for files always
        read whole); an appended file keeps the existing groups' zone maps.
    row_group_size : int
        Rows per row group, at most 2**24 (the v1 container limit).
    append : bool
        Add row groups to an existing file with the same columns and types. The old
        row groups are copied to a temporary file with the new ones and a new footer,
        which then replaces the file (a crash leaves the old file as it was). A
        missing file is created. Only with a path or URL.
    storage_options : dict, optional
        fsspec options; only with a path or URL.

    Returns
    -------
    bytes or None
        The file's bytes when ``path`` is None, else None.

    Raises
    ------
    UnsupportedTypeError
        A column qdf cannot store (naming the column).
    SchemaMismatchError
        A batch, or appended data, whose columns or types differ from the file's.
    InvalidOptionError
        A bad ``row_group_size``, ``mode`` or ``nested``; ``append=True`` or
        ``storage_options`` with a file object or None.
    QdfFileNotFoundError
        The target's directory does not exist: the message names the target and the
        directory (also a ``FileNotFoundError``).
    QdfIsADirectoryError, QdfPermissionError, QdfIOError
        The target is a directory, its directory is not writable, or another OS error
        (a full disk...), naming the target (each also the matching ``OSError``). No
        temporary file is left behind.
    InvalidPathError
        ``path`` is none of the kinds above, or a file object in text mode / not
        writable (also a ``TypeError``).

    Examples
    --------
    >>> import io, qdf_columnar as qdf
    >>> blob = qdf.write_qdf({"x": [1, 2, 3]}, None, row_group_size=2)
    >>> blob[:4], qdf.QdfFile(blob).num_row_groups
    (b'QDFC', 2)
    >>> sink = io.BytesIO()
    >>> qdf.write_qdf({"x": [1, 2, 3]}, sink, row_group_size=2)
    >>> sink.getvalue() == blob
    True
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
    if not isinstance(zone_maps, bool):
        raise InvalidOptionError(f"zone_maps must be True or False, not {zone_maps!r}")
    if format_version is not None and (type(format_version) is not int or format_version not in READ_MAJORS):
        raise InvalidOptionError(f"format_version must be one of {READ_MAJORS}, not {format_version!r}")
    to_file = writable_file(path)  # False for a path or None; refuses other kinds
    fs, fpath, existing = None, "", None
    if path is None or to_file:
        what = "path=None" if path is None else f"a file object ({type(path).__name__})"
        if append:
            raise InvalidOptionError(
                f"append=True needs a path or URL of the file to extend; {what} gets a whole new file")
        if storage_options:
            raise InvalidOptionError(f"storage_options= applies only to a path or URL, not to {what}")
    else:
        fs, fpath = resolve(path, storage_options)
        if fs is None:
            _check_local_target(fpath)
        if append and (os.path.exists(fpath) if fs is None else fs.exists(fpath)):
            existing = QdfFile(fpath if fs is None else path, storage_options)
    major = format_version or VERSION[0]
    if existing is not None:
        if format_version is not None and format_version != existing._meta.version[0]:
            existing.close()
            raise InvalidOptionError(f"append=True to a version-{existing._meta.version[0]} file cannot write "
                                     f"format_version={format_version}")
        major = existing._meta.version[0]
    try:
        keeper = _Schema(existing)
        old = _old_row_groups(existing, remote=fs is not None)
        sink: _LocalSink | _FsspecSink | _FileObjectSink | _BufferSink
        if path is None:
            sink = _BufferSink()
        elif to_file:
            sink = _FileObjectSink(path)
        else:
            sink = _LocalSink(fpath) if fs is None else _FsspecSink(fs, fpath, source_name(path))
        try:
            opts = {"nested": nested, "go_compatible": go_compatible}
            if major >= 2:
                groups = _write_chunked_groups(
                    sink, keeper, existing, old, data, row_group_size,
                    lambda t: encode_chunk(t, encode, mode, column_index, **opts), zone_maps)
            else:
                groups = _write_groups(sink, keeper, existing, old, data, row_group_size,
                                       lambda t: encode(t, mode=mode, column_index=column_index, **opts))
            if keeper.schema is None:
                raise InvalidOptionError("write_qdf got no batches, so there is no schema to write")
            if existing is None and not groups:  # nothing was encoded: still refuse unstorable columns
                encode(_empty_of(keeper.schema), mode=mode, column_index=column_index, nested=nested,
                       go_compatible=go_compatible)
            footer = build_footer(keeper.final(), groups, keeper.dicts, f"qdf_columnar {__version__}", major,
                                  _zone_size(existing))
            sink.write(footer)
            sink.write(pack_trailer(footer))
            sink.commit()
        except BaseException:
            sink.abort()
            raise
    finally:
        if existing is not None:
            existing.close()
    return sink.value if isinstance(sink, _BufferSink) else None


def _empty_of(schema: pa.Schema) -> pa.Table:
    """A no-row table of ``schema`` (pyarrow builds none for some types, e.g. sparse unions: name them)."""
    try:
        return schema.empty_table()
    except pa.ArrowNotImplementedError:
        for f in schema:
            try:
                pa.array([], f.type)
            except pa.ArrowNotImplementedError:
                raise UnsupportedTypeError(f"Arrow type {f.type} cannot be stored in a qdf batch", column=f.name) \
                    from None
        raise


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


def _start(sink: Any, existing: QdfFile | None, old: Iterator[Any], major: int) -> tuple[int, list[RowGroup]]:
    """Write the header (new file) or the existing row groups; (next offset, groups so far)."""
    if existing is None:
        sink.write(header_for(major))
        return HEADER_SIZE, []
    # Row groups (and chunks) are v1 buffers at absolute offsets: copied verbatim, they stay valid.
    for chunk in old:
        sink.write(chunk)
    return existing._meta.footer_offset, list(existing.row_groups)


def _zone_size(existing: QdfFile | None) -> int:
    """Rows per zone of the zone maps: the existing file's (an append keeps one size), else ZONE_ROWS."""
    return existing._meta.zone_rows if existing is not None and existing._meta.zone_rows else ZONE_ROWS


def _write_chunked_groups(
    sink: Any, keeper: _Schema, existing: QdfFile | None, old: Iterator[Any], data: Any, size: int, enc: Any,
    zone_maps: bool = True,
) -> list[RowGroup]:
    """Version 2.0: each row group as one chunk per column (``enc`` -> bytes, codec, v1 length),
    with zone maps unless ``zone_maps`` is False."""
    offset, groups = _start(sink, existing, old, 2)
    zone_rows = _zone_size(existing)
    for t in _row_groups(keeper, data, size):
        # Every chunk is encoded before statistics are taken and anything is written: a
        # column qdf cannot store is refused by its encoder, naming it.
        encoded = [enc(chunk_table(t, i)) for i in range(t.num_columns)]
        stats = {name: column_stats(t.column(i)) for i, name in enumerate(t.column_names)}
        zones = zone_stats(t, zone_rows) if zone_maps else ()
        start, chunks = offset, []
        for buf, codec, raw in encoded:
            chunks.append(Chunk(offset, len(buf), zlib.crc32(buf), codec, raw))
            sink.write(buf)
            offset += len(buf)
        groups.append(RowGroup(len(groups), start, offset - start, t.num_rows, 0, stats, tuple(chunks), zones))
    return groups


def _write_groups(
    sink: Any, keeper: _Schema, existing: QdfFile | None, old: Iterator[Any], data: Any, size: int, enc: Any
) -> list[RowGroup]:
    """Version 1.0: each row group as one v1 buffer (``enc`` -> bytes)."""
    offset, groups = _start(sink, existing, old, 1)
    for t in _row_groups(keeper, data, size):
        buf = enc(t)
        stats = {name: column_stats(t.column(i)) for i, name in enumerate(t.column_names)}
        groups.append(RowGroup(len(groups), offset, len(buf), t.num_rows, zlib.crc32(buf), stats))
        sink.write(buf)
        offset += len(buf)
    return groups
