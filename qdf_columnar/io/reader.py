"""Reading ``.qdf`` files: :class:`QdfFile` and :func:`read_qdf`.

Opening reads only the header, the trailer and the footer. A read validates the
projection and filter against the footer schema, drops the row groups whose statistics
prove the filter cannot be TRUE (``prune.py``), checks each surviving group's CRC-32,
decodes it with ``qdf.decode(columns=, filter=)`` (which pushes the filter down inside
the group) on a thread pool, and gives the concatenated result the footer's schema:
exact Arrow types, the file-wide dictionary of each categorical column, and the pandas
metadata that restores dtypes and the index.
"""

from __future__ import annotations

import json
import threading
import warnings
import zlib
from collections import OrderedDict
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..api import decode_arrow, decode_chunk_arrays
from ..columns.inputs import arrow_dtype_names
from ..columns.outputs import convert_output, empty_table, pandas_index_columns, project_pandas_metadata
from ..errors import CorruptDataError, DecodeError, QdfWarning, QueryError, TruncatedError
from ..query import arrow_kind, as_expr, validate
from ..query.evaluate import _leaves, _ts_ticks, evaluate
from ..query.expr import Cmp, Expr, IsIn
from ..wire.parallel import available_cpus, map_on_pool, thread_count
from .chunks import ChunkOpener, can_unpack_ahead, read_adjacent
from .layout import (
    CHUNK_V1,
    HEADER_SIZE,
    MAGIC,
    MIN_FILE_SIZE,
    TRAILER_SIZE,
    Chunk,
    FileMeta,
    RowGroup,
    parse_footer,
    parse_header,
    parse_trailer,
)
from .prune import Pruner, zone_mask
from .source import TAIL_BYTES, QdfSource, Source, open_source

__all__ = ["QdfFile", "read_qdf", "PANDAS_DTYPES_KEY"]

#: Schema-metadata key: string columns whose pandas dtype the pandas metadata does not
#: restore ("string[python]", "str[python]" or "object"; see writer._pandas_dtypes).
PANDAS_DTYPES_KEY = b"qdf.pandas_dtypes"
_OUTPUTS = ("pandas", "arrow", "numpy", "records")


#: Parsed footers of local files by (device, inode, size, mtime): a file is immutable
#: once written (writes and appends replace it), so repeated reads of the same file in a
#: session skip the footer parse and reuse the statistics decoded so far.
_META_CACHE: OrderedDict[tuple[int, int, int, int], FileMeta] = OrderedDict()
_META_CACHE_SIZE = 64
_META_LOCK = threading.Lock()


def clear_footer_cache() -> None:
    """Forget every parsed footer (the next read of each file parses it again)."""
    with _META_LOCK:
        _META_CACHE.clear()


def _read_meta(src: Source) -> FileMeta:
    key = getattr(src, "identity", None)
    if key is not None:
        with _META_LOCK:
            meta = _META_CACHE.get(key)
            if meta is not None:
                _META_CACHE.move_to_end(key)
                return meta
    meta = _parse_meta(src)
    if key is not None:
        with _META_LOCK:
            _META_CACHE[key] = meta
            while len(_META_CACHE) > _META_CACHE_SIZE:
                _META_CACHE.popitem(last=False)
    return meta


def _parse_meta(src: Source) -> FileMeta:
    size = src.size
    if size < MIN_FILE_SIZE:
        head = bytes(src.read(0, min(size, HEADER_SIZE)))
        if len(head) >= 4 and head[:4] != MAGIC:
            parse_header(head.ljust(HEADER_SIZE, b"\0"))  # names a foreign file better than "truncated"
        raise TruncatedError(f"file is {size} bytes, shorter than the smallest .qdf file ({MIN_FILE_SIZE})", offset=0)
    # One round trip for a remote file: the whole of a small one, else head and tail together.
    n_tail = size if src.mapped or size <= TAIL_BYTES else TAIL_BYTES
    tail_at = size - n_tail
    if tail_at == 0:
        tail = src.read(0, size)
        head = tail[:HEADER_SIZE]
    else:
        head, tail = src.read_ranges([(0, HEADER_SIZE), (tail_at, n_tail)])
    major, _ = parse_header(bytes(head))
    foff, flen, fcrc = parse_trailer(tail[-TRAILER_SIZE:], size)
    footer = tail[foff - tail_at:foff - tail_at + flen] if foff >= tail_at else src.read(foff, flen)
    return parse_footer(footer, foff, fcrc, data_end=foff, header_major=major)


def _check_columns(columns: Any, names: list[str]) -> list[str]:
    if isinstance(columns, str) or not all(isinstance(c, str) for c in columns):
        raise QueryError("columns= must be a list of column names (str)")
    cols = list(columns)
    if len(set(cols)) != len(cols):
        raise QueryError(f"columns= names a column twice: {cols}")
    for c in cols:
        if c not in names:
            raise QueryError(f"unknown column {c!r}; the file has columns {names}", column=c)
    return cols


def _workers(threads: Any, n_groups: int) -> int:
    if threads is None or threads is True:
        return max(1, min(available_cpus(), n_groups))
    if threads is False:
        return 1
    if isinstance(threads, int) and threads >= 1:
        return min(threads, max(n_groups, 1))
    raise QueryError(f"threads must be None, a bool or an int >= 1, not {threads!r}")


def _at_chunk(err: DecodeError, g: RowGroup, chunk: Chunk, name: str) -> DecodeError:
    """``err`` from decoding one column chunk, located in the file."""
    # A packed chunk's offsets are in the unpacked buffer: the chunk's start is the best place.
    offset = chunk.offset + (err.offset or 0) if chunk.codec == CHUNK_V1 else chunk.offset
    inner = f" (byte {err.offset} of the column chunk)" if err.offset is not None else ""
    return type(err)(f"{err.reason}{inner}", column=err.column or name, offset=offset, row_group=g.index)


def _at_group(err: DecodeError, g: RowGroup) -> DecodeError:
    """The same error, located in the file: row group index and absolute byte offset."""
    inner = f" (byte {err.offset} of the row group)" if err.offset is not None else ""
    offset = g.offset + (err.offset or 0)
    return type(err)(f"{err.reason}{inner}", column=err.column, offset=offset, row_group=g.index)


class QdfFile:
    """A ``.qdf`` file opened for reading: footer parsed, row groups read on demand.

    Parameters
    ----------
    path : str, os.PathLike, fsspec URL, binary file object, or bytes-like
        * a local path (``~`` is expanded): memory-mapped;
        * any fsspec URL (``memory://``, ``s3://bucket/key``...): ranged reads;
        * a readable binary file object (``open(p, "rb")``, ``io.BytesIO``, an fsspec
          file): when seekable, read with ``seek`` + ``read`` of only the ranges needed;
          the file spans the object from offset 0 to its end, whatever its current
          position. A non-seekable one (a pipe, a socket) is read to its end into memory.
          The object stays open; do not use it elsewhere while this file is open;
        * ``bytes`` / ``bytearray`` / ``memoryview`` holding a whole ``.qdf`` file (what
          ``write_qdf(data, None)`` returns): sliced without copying, so ``no_copy``
          columns are views of that buffer.

        Every kind supports the same reads: projections, filters, row-group pruning,
        ``no_copy``.
    storage_options : dict, optional
        Passed to fsspec (credentials, ``client_kwargs={"endpoint_url": ...}``); only
        with a path or URL (else ``InvalidOptionError``).

    Attributes
    ----------
    path : str
        The path or URL (``~`` expanded), a file object's ``name``, or a placeholder such
        as ``"<BytesIO>"`` / ``"<1234 bytes>"``; messages and ``repr`` use it.

    Raises
    ------
    QdfFileNotFoundError
        No such file (also a ``FileNotFoundError``).
    QdfIsADirectoryError, QdfPermissionError, QdfIOError
        The path is a directory, access is denied, or another OS error; each names the
        path and is also the matching ``OSError``.
    InvalidPathError
        ``path`` is none of the kinds above, or a file object in text mode / not
        readable (also a ``TypeError``).
    DecodeError
        Not a ``.qdf`` file, or a damaged / truncated one (see :func:`read_qdf`).

    Examples
    --------
    >>> import qdf_columnar as qdf, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "t.qdf")
    >>> qdf.write_qdf({"x": list(range(10))}, path, row_group_size=4)
    >>> f = qdf.QdfFile(path)
    >>> f.num_rows, f.num_row_groups
    (10, 3)
    >>> f.read(filter=qdf.col("x") >= 8, output="arrow")["x"].to_pylist()
    [8, 9]
    """

    def __init__(self, path: QdfSource, storage_options: dict[str, Any] | None = None) -> None:
        self._src = open_source(path, storage_options)
        self.path: str = self._src.name
        self._zone_pruner: tuple[Expr, Pruner] | None = None
        try:
            self._meta = _read_meta(self._src)
        except BaseException:
            self._src.close()
            raise
        #: pd.ArrowDtype columns: their Arrow type is their pandas dtype, kept exactly
        self._arrow_dtypes = arrow_dtype_names(self._meta.schema.metadata)

    # ------------------------------------------------------------------ properties

    @property
    def schema(self) -> pa.Schema:
        """The Arrow schema of the whole file (with its pandas metadata)."""
        return self._meta.schema

    @property
    def num_rows(self) -> int:
        return self._meta.num_rows

    @property
    def num_row_groups(self) -> int:
        return len(self._meta.row_groups)

    @property
    def row_groups(self) -> list[RowGroup]:
        """Offset, length, row count, CRC-32 and per-column statistics of every row group."""
        return list(self._meta.row_groups)

    @property
    def size(self) -> int:
        return self._src.size

    @property
    def metadata(self) -> dict[str, Any]:
        """Container version, writer, checksum and the schema's key-value metadata (decoded)."""
        m = self._meta
        kv = {k.decode(errors="replace"): v.decode(errors="replace") for k, v in (m.schema.metadata or {}).items()}
        return {
            "container_version": f"{m.version[0]}.{m.version[1]}",
            "created_by": m.created_by,
            "checksum": "crc32",
            "num_rows": m.num_rows,
            "num_row_groups": len(m.row_groups),
            "footer_bytes": m.footer_length,
            "schema_metadata": kv,
        }

    def close(self) -> None:
        """Release the memory map (columns read with ``no_copy`` keep it alive until they go)."""
        self._src.close()

    def __enter__(self) -> QdfFile:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ------------------------------------------------------------------ filters

    def _filter_kinds(self, expr: Expr | None) -> dict[str, tuple[str, pa.DataType]]:
        """Validate ``expr`` against the footer schema; column -> (filter kind, Arrow type)."""
        if expr is None:
            return {}
        schema = self.schema
        kinds = {f.name: (arrow_kind(f.type) or str(f.type), f.type) for f in schema}
        validate(expr, {n: k for n, (k, _) in kinds.items()})
        for leaf in _leaves(expr):  # time-zone mismatches fail here, even if every group is pruned
            kind, t = kinds[leaf.column]
            if kind == "timestamp" and isinstance(leaf, (Cmp, IsIn)):
                t = t.value_type if pa.types.is_dictionary(t) else t
                try:
                    for v in (leaf.value,) if isinstance(leaf, Cmp) else leaf.values:
                        _ts_ticks(v, t)
                except QueryError as err:
                    raise err.with_location(column=leaf.column) from None
        return {c: kinds[c] for c in expr.columns()}

    def _plan(self, filter: Any, *, why: bool = True) -> tuple[Expr | None, list[tuple[RowGroup, bool, str]]]:  # noqa: A002
        """(the filter, per row group: (group, read it?, why)); reasons only with ``why``."""
        expr = as_expr(filter)
        prune = Pruner(expr, self._filter_kinds(expr))
        return expr, [(g, *prune(g, why=why)) for g in self._meta.row_groups]

    # ------------------------------------------------------------------ reading

    def read(
        self,
        columns: list[str] | None = None,
        filter: Any = None,  # noqa: A002 - the name users know from pyarrow / pandas
        output: str = "pandas",
        *,
        no_copy: bool = False,
        threads: bool | int | None = None,
        on_error: str = "raise",
        categories: list[str] | bool | None = None,
    ) -> Any:
        """Read the file (see :func:`read_qdf` for the parameters)."""
        if output not in _OUTPUTS:
            raise QueryError(f"output must be 'pandas', 'arrow', 'numpy' or 'records', not {output!r}")
        if on_error not in ("raise", "skip"):
            raise QueryError(f"on_error must be 'raise' or 'skip', not {on_error!r}")
        schema = self.schema
        names = schema.names
        if columns is not None:
            columns = _check_columns(columns, names)
        cats = self._categories(categories)
        expr, plan = self._plan(filter, why=False)  # a read needs no wording of skip reasons
        groups = [g for g, read, _ in plan if read]
        proj = names if columns is None else columns + [
            c for c in pandas_index_columns((schema.metadata or {}).get(b"pandas"), names) if c not in columns
        ]
        meta = project_pandas_metadata(schema.metadata, proj) or None
        # pandas converts every string column to large_string: decode them so (no cast)
        for_pandas = output == "pandas"
        target = pa.schema([self._target_field(n, cats, for_pandas) for n in proj], metadata=meta)
        n_workers = _workers(threads, len(groups))
        inner = threads if n_workers == 1 else 1

        def run(g: RowGroup) -> pa.Table | DecodeError:
            try:
                return self._read_group(g, columns, expr, target, no_copy, inner, categories, for_pandas=for_pandas)
            except DecodeError as err:
                if on_error == "raise":
                    raise
                return err

        if n_workers == 1:
            results = [run(g) for g in groups]
        else:
            # Row groups on the decoder's long-lived pool (a group then decodes its chunks
            # on its own thread, threads=1, so nothing it runs waits for the pool).
            results = map_on_pool(n_workers, run, groups)
        skipped = [r for r in results if isinstance(r, DecodeError)]
        if skipped:
            warnings.warn(
                f"skipped {len(skipped)} damaged row group(s) of {self.path!r}: "
                + "; ".join(str(e) for e in skipped),
                QdfWarning,
                stacklevel=3,
            )
        tables = [r for r in results if isinstance(r, pa.Table)]
        table = self._combine(tables, target, cats)
        out = convert_output(table, output, owned=not no_copy)  # type: ignore[arg-type]
        return _restore_pandas_dtypes(out, schema) if output == "pandas" else out

    def _categories(self, categories: Any) -> list[str]:
        """Columns decode will return as dictionaries because of ``categories=``."""
        if categories is None or categories is False:
            return []
        schema = self.schema
        if categories is True:
            return [f.name for f in schema if arrow_kind(f.type) == "string" and not pa.types.is_dictionary(f.type)]
        cols = _check_columns(categories, schema.names)
        for c in cols:
            if arrow_kind(schema.field(c).type) != "string":
                raise QueryError(f"categories= names {c!r}, which is not a string column", column=c)
        return [c for c in cols if not pa.types.is_dictionary(schema.field(c).type)]

    def _target_field(self, name: str, cats: list[str], for_pandas: bool = False) -> pa.Field:
        f = self.schema.field(name)
        if name in cats:
            return f.with_type(pa.dictionary(pa.int32(), f.type))
        if for_pandas and f.type == pa.string() and name not in self._arrow_dtypes:
            return f.with_type(pa.large_string())
        return f

    def _read_group(
        self, g: RowGroup, columns: list[str] | None, expr: Expr | None, target: pa.Schema, no_copy: bool,
        threads: Any, categories: Any, *, for_pandas: bool = False,
    ) -> pa.Table:
        """One row group as ``target`` (``for_pandas``: string columns decoded as large_string)."""
        if self._meta.version[0] >= 2:
            return self._conform(self._read_chunks(g, target.names, expr, no_copy, threads, categories, for_pandas),
                                 target, g, expr is None)
        buf = self._src.read(g.offset, g.length)
        crc = zlib.crc32(buf)
        if crc != g.crc32:
            raise CorruptDataError(
                f"row group {g.index} checksum mismatch (stored {g.crc32:#010x}, computed {crc:#010x}): "
                "its bytes are damaged", row_group=g.index, offset=g.offset,
            )
        try:
            t = decode_arrow(buf, columns, expr, no_copy=no_copy, threads=threads, categories=categories,
                             for_pandas=for_pandas)
        except DecodeError as err:
            raise _at_group(err, g) from None
        except QueryError as err:
            raise err.with_location(row_group=g.index) from None
        return self._conform(t, target, g, expr is None)

    def _read_chunks(self, g: RowGroup, names: list[str], expr: Expr | None, no_copy: bool, threads: Any,
                     categories: Any, for_pandas: bool = False) -> pa.Table:
        """A version-2 row group: fetch (in one round trip for a remote file) only the chunks
        of ``names`` and the filter's columns; decode the filter's, evaluate it, then decode
        only the surviving rows of the other projected columns."""
        filter_cols = sorted(expr.columns()) if expr is not None else []
        wanted = list(dict.fromkeys([*names, *filter_cols]))
        at = {n: i for i, n in enumerate(self.schema.names)}
        datas = dict(zip(wanted, read_adjacent(self._src, [g.chunks[at[n]] for n in wanted])))
        cats = set(self._categories(categories))
        order = list(dict.fromkeys([*filter_cols, *names]))  # the order the chunks are decoded in
        opener = ChunkOpener(g, [(n, at[n]) for n in order], datas, ahead=can_unpack_ahead(threads))

        def decode_all(cols: list[str], rows: np.ndarray | None, for_filter: bool = False) -> dict[str, pa.Array]:
            def one(name: str) -> pa.Array:
                return self._decode_chunk(g, at[name], name, opener, rows, no_copy, name in cats, for_filter,
                                          for_pandas and name not in self._arrow_dtypes)

            k = thread_count(threads, g.num_rows * len(cols), len(cols))
            if k <= 1:
                in_order = opener.decode_order(cols)
                return dict(zip(in_order, map(one, in_order)))
            # the decoder's long-lived pool: no threads started and joined per row group
            # (chunk decodes never submit to it themselves: they run with threads=False)
            return dict(zip(cols, map_on_pool(k, one, cols)))

        try:
            return self._decode_group(g, names, expr, filter_cols, cats, decode_all)
        finally:
            opener.close()

    def _decode_group(self, g: RowGroup, names: list[str], expr: Expr | None, filter_cols: list[str],
                      cats: set[str], decode_all: Any) -> pa.Table:
        """:meth:`_read_chunks` once its chunks are fetched: ``decode_all(columns, rows,
        for_filter)`` decodes chunks (of ``rows`` only, in filter form)."""
        if expr is None:
            arrays = decode_all(names, None)
            return empty_table(g.num_rows, None) if not names else pa.table({n: arrays[n] for n in names})
        # The filter's chunks in filter form: a dictionary-coded string column stays codes
        # plus its table, compared once per distinct value and expanded only at the kept rows.
        # Rows of zones the zone maps rule out are neither decoded nor evaluated.
        cand = self._zone_candidates(g, expr)
        n_eval = g.num_rows if cand is None else len(cand)
        filtered = decode_all(filter_cols, cand, for_filter=True)
        try:
            hits = np.flatnonzero(evaluate(expr, filtered, n_eval))
        except QueryError as err:
            raise err.with_location(row_group=g.index) from None
        keep = hits if cand is None else cand[hits]
        if not names:
            return empty_table(len(keep), None)
        rest = decode_all([n for n in names if n not in filtered], keep)
        taken = pa.array(hits) if len(hits) < n_eval else None
        for n in [n for n in filtered if n in names]:
            a = filtered[n] if taken is None else filtered[n].take(taken)
            if pa.types.is_dictionary(a.type) != (n in cats):  # the form asked for: categories= or values
                a = a.dictionary_encode() if n in cats else a.dictionary_decode()
            rest[n] = a
        return pa.table({n: rest[n] for n in names})

    def _zone_mask(self, g: RowGroup, expr: Expr) -> np.ndarray | None:
        """Which zones of ``g`` its zone maps allow ``expr`` to be TRUE in (None: no zone maps)."""
        if not g.zones:
            return None
        cached = self._zone_pruner  # one Pruner per filter (row groups of a read share it)
        if cached is None or cached[0] is not expr:
            cached = self._zone_pruner = (expr, Pruner(expr, self._filter_kinds(expr)))
        return zone_mask(cached[1], g.zones, self._meta.zone_rows, g.num_rows)

    def _zone_candidates(self, g: RowGroup, expr: Expr) -> np.ndarray | None:
        """Rows of ``g`` in the zones whose statistics allow ``expr`` to be TRUE (ascending
        int64), or None when the group has no zone maps or none of its zones is ruled out."""
        keep = self._zone_mask(g, expr)
        if keep is None or keep.all():
            return None
        size = self._meta.zone_rows  # a range per kept zone: the cost follows the rows kept
        spans = [np.arange(k * size, min((k + 1) * size, g.num_rows), dtype=np.int64) for k in np.flatnonzero(keep)]
        return np.concatenate(spans) if spans else np.zeros(0, dtype=np.int64)

    def _decode_chunk(self, g: RowGroup, j: int, name: str, opener: ChunkOpener, rows: np.ndarray | None,
                      no_copy: bool, as_category: bool, for_filter: bool = False,
                      for_pandas: bool = False) -> pa.Array:
        """Column chunk ``j``: checked, unpacked, decoded (only ``rows`` when given, in
        filter form with ``for_filter``), and held to its row count and name."""
        chunk = g.chunks[j]
        buf = opener.get(name)
        data = opener.data(name)
        try:
            names, arrays, n = decode_chunk_arrays(
                buf, rows=rows, n_rows=g.num_rows, filter_form=for_filter, no_copy=no_copy and buf is data,
                categories=[name] if as_category and not for_filter else None, for_pandas=for_pandas)
        except DecodeError as err:
            raise _at_chunk(err, g, chunk, name) from None
        want = g.num_rows if rows is None else len(rows)
        if names != [name] or n != want:
            raise CorruptDataError(
                f"column chunk decodes to {n} rows of {names}; the footer says {want} "
                f"rows of [{name!r}]", column=name, row_group=g.index, offset=chunk.offset)
        return arrays[0]

    def _conform(self, t: pa.Table, target: pa.Schema, g: RowGroup, complete: bool) -> pa.Table:
        """Give one decoded group the file's types; a group that disagrees with the footer is corrupt."""
        if t.column_names != target.names or t.num_rows > g.num_rows or (complete and t.num_rows != g.num_rows):
            raise CorruptDataError(
                f"row group {g.index} decodes to {t.num_rows} rows of {t.column_names}; the footer says "
                f"{g.num_rows} rows of {target.names}", row_group=g.index, offset=g.offset,
            )
        if not target.names:
            return t  # no columns, only a row count (pa.Table.from_arrays would drop it)
        dicts = self._meta.dictionaries
        cols = []
        for f, col in zip(target, t.columns):
            try:
                if f.name in dicts:
                    col = _to_file_dictionary(col, f.type, dicts[f.name])
                elif col.type != f.type:
                    col = col.cast(f.type)
            except (pa.ArrowException, ValueError) as exc:
                raise CorruptDataError(
                    f"row group {g.index} column does not convert to the file's type {f.type}: {exc}",
                    column=f.name, row_group=g.index, offset=g.offset,
                ) from None
            cols.append(col)
        return pa.Table.from_arrays(cols, schema=target)

    def _combine(self, tables: list[pa.Table], target: pa.Schema, cats: list[str]) -> pa.Table:
        if not target.names:
            return empty_table(sum(t.num_rows for t in tables), target.metadata)
        if not tables:
            dicts = self._meta.dictionaries
            return pa.Table.from_arrays([_empty(f, dicts.get(f.name)) for f in target], schema=target)
        table = tables[0] if len(tables) == 1 else pa.concat_tables(tables)
        # categories= columns get one dictionary per group; file dictionaries are shared already.
        return table.unify_dictionaries() if cats and len(tables) > 1 else table

    # ------------------------------------------------------------------ inspection

    def explain(self, filter: Any = None) -> Any:  # noqa: A002
        """One row per row group: ``index``, ``rows``, ``bytes``, ``read`` (would ``filter``
        read it), ``rows_read`` (the rows of its filter columns that would be decoded and
        evaluated: all of them, or those of the zones its zone maps cannot rule out) and
        ``reason`` (the statistic that rules the group out, when it is skipped)."""
        from .summary import explain_groups

        return explain_groups(self, filter)

    def columns_summary(self, max_row_groups: int | None = None) -> Any:
        """Per column: Arrow type, v1 kind, codec(s), bytes, ratio to Arrow, nulls, min, max.

        Codecs and bytes come from walking the row groups' column bodies
        (``qdf.explain``); ``max_row_groups`` limits that walk to the first groups.
        """
        from .summary import columns_summary

        return columns_summary(self, max_row_groups)

    def __repr__(self) -> str:
        cols = ", ".join(f"{f.name}: {f.type}" for f in self.schema)
        return (f"QdfFile({self.path!r}, rows={self.num_rows}, row_groups={self.num_row_groups}, "
                f"bytes={self.size}, columns=[{cols}])")

    def _repr_html_(self) -> str:
        from .summary import repr_html

        return repr_html(self)


def _to_file_dictionary(col: pa.ChunkedArray, t: pa.DictionaryType, values: pa.Array) -> pa.ChunkedArray:
    """Re-index a decoded column against the file-wide dictionary (exact categories and order)."""
    chunks = []
    for chunk in col.chunks:
        if pa.types.is_dictionary(chunk.type):
            local, idx = chunk.dictionary, chunk.indices
        else:
            local, idx = chunk, None
        if local.type != values.type:
            local = local.cast(values.type)
        pos = pc.index_in(local, value_set=values)
        if pos.null_count != local.null_count:
            raise ValueError("a value is not in the file's dictionary")
        new = pos if idx is None else pos.take(idx)
        chunks.append(pa.DictionaryArray.from_arrays(new.cast(t.index_type), values, ordered=t.ordered))
    return pa.chunked_array(chunks, t)


def _empty(f: pa.Field, dictionary: pa.Array | None) -> pa.Array:
    if dictionary is not None:
        return pa.DictionaryArray.from_arrays(pa.array([], f.type.index_type), dictionary, ordered=f.type.ordered)
    return pa.array([], f.type)


def _restore_pandas_dtypes(df: Any, schema: pa.Schema) -> Any:
    raw = (schema.metadata or {}).get(PANDAS_DTYPES_KEY)
    if not raw:
        return df
    import numpy as np
    import pandas as pd

    try:
        spec = json.loads(raw)
        for name, dtype in spec.items():
            if name not in df.columns:
                continue
            s = df[name]
            if dtype == "object":
                s = s.astype(object)
                s[s.isna()] = None  # Arrow has one null; pyarrow spells it None in object columns
            else:
                s = s.astype(pd.StringDtype("python", na_value=np.nan if dtype == "str[python]" else pd.NA))
            df[name] = s
    except (ValueError, TypeError, AttributeError) as exc:
        raise CorruptDataError(f"bad {PANDAS_DTYPES_KEY.decode()} metadata: {exc}") from None
    return df


def read_qdf(
    path: QdfSource,
    columns: list[str] | None = None,
    filter: Any = None,  # noqa: A002
    output: str = "pandas",
    *,
    no_copy: bool = False,
    threads: bool | int | None = None,
    on_error: str = "raise",
    categories: list[str] | bool | None = None,
    storage_options: dict[str, Any] | None = None,
) -> Any:
    """Read a ``.qdf`` file, only the row groups, columns and rows asked for.

    Parameters
    ----------
    path : str, os.PathLike, fsspec URL, binary file object, or bytes-like
        A local path (``~`` expanded; memory-mapped), any fsspec URL (ranged requests:
        tail, footer, then only the row groups needed), a readable binary file object
        (seekable: ranged ``seek`` + ``read``, the whole object from offset 0;
        non-seekable: read to its end first; it is not closed), or ``bytes`` /
        ``bytearray`` / ``memoryview`` holding a whole ``.qdf`` file, such as
        ``write_qdf(data, None)`` returns. See :class:`QdfFile`.
    columns : list of str, optional
        Columns to return, in this order (a DataFrame's stored index comes along).
    filter : expression or pyarrow-style DNF, optional
        As in :func:`qdf.decode`: SQL three-valued logic, only TRUE rows. Row groups
        whose footer statistics prove no row can be TRUE are not read at all; the others
        get the filter pushed down. A filtered read of a RangeIndex-ed frame gets a fresh
        RangeIndex, as ``decode`` and pyarrow do.
    output : {"pandas", "arrow", "numpy", "records"}
    no_copy : bool
        Let raw numeric columns be views of the memory map (they keep it alive; the file
        must not be modified in place meanwhile -- ``write_qdf`` never does, it replaces).
    threads : bool or int, optional
        Row groups decoded in parallel. ``None``: up to ``min(os.cpu_count(), groups)``;
        a read of one row group on two or more CPUs unpacks its large zstd / xz column
        chunks on a helper thread while the others are decoded. ``False``: the calling
        thread only.
    on_error : {"raise", "skip"}
        ``"skip"`` leaves out row groups whose checksum or bytes are bad, with a
        :class:`QdfWarning` naming them; the footer itself must be intact.
    categories : list of str or bool, optional
        String columns to return as dictionaries (pandas categoricals).
    storage_options : dict, optional
        fsspec options.

    Raises
    ------
    CorruptDataError
        A damaged row group (naming its index and byte offset) or footer.
    TruncatedError
        A file cut short (no trailing magic).
    QueryError
        An unknown column or a filter that does not fit the schema.
    QdfFileNotFoundError
        No such file, naming the path (also a ``FileNotFoundError``).
    QdfIsADirectoryError, QdfPermissionError, QdfIOError
        A directory, denied access or another OS error, naming the path (each also the
        matching ``OSError``: ``IsADirectoryError``, ``PermissionError``, ``OSError``).
    InvalidPathError
        ``path`` is not a path, URL, readable binary file object or bytes-like.

    Examples
    --------
    >>> import io, qdf_columnar as qdf
    >>> blob = qdf.write_qdf({"x": [1, 2, 3]}, None)
    >>> qdf.read_qdf(blob, output="records") == qdf.read_qdf(io.BytesIO(blob), output="records")
    True
    """
    with QdfFile(path, storage_options) as f:
        return f.read(columns, filter, output, no_copy=no_copy, threads=threads, on_error=on_error,
                      categories=categories)
