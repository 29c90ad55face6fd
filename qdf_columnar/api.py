"""``encode`` / ``decode``: one record batch <-> one qdf v1 buffer.

Balanced and compression modes write an ``EF`` columnar container (always, even
under 16 rows, so every batch supports column seek and pushdown); speed mode writes
the reference's row-major form (an array of maps). ``decode`` reads both, plus any
v1 buffer whose root is a list of maps, and applies ``columns=`` / ``filter=`` with
pushdown on columnar buffers.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from .codecs.nested.plan import shreddable
from .codecs.nested.unit import is_nested
from .columns.chunked import one_array
from .columns.inputs import arrow_dtype_names, to_arrow_table
from .columns.logical import from_storage, has_logical_types, to_storage
from .columns.outputs import OutputKind, convert_output, empty_table, pandas_index_columns
from .errors import CorruptDataError, DecodeError, InvalidOptionError, QueryError, UnsupportedTypeError
from .format.header import ENTROPY_MIN_GAIN_WITH_INDEX, finish_body, open_body, pack_header
from .format.reader import ByteReader
from .format.tags import HEADER_SIZE, ColKind, ContainerTag, Flag
from .options import Mode, Options, columnar_enabled, header_flags, parse_mode
from .query import arrow_kind, as_expr, evaluate, validate
from .query.prune import select_rows
from .wire.colstruct_read import ColumnDecoder, widen_strings
from .wire.colstruct_read import read_header as read_colstruct_header
from .wire.colstruct_write import write_table_columnar
from .wire.context import DecodeContext, EncodeContext
from .wire.dict_write import plan_dictionaries, write_dictionary_batch
from .wire.parallel import RowSelection, check_rows, materialize
from .wire.rows import rows_for_speed, rows_table, split_note
from .wire.shred_read import open_shredded, shredded_arrays
from .wire.shred_write import write_shredded

__all__ = ["encode", "decode"]


def encode(
    table: Any, mode: Mode = "balanced", column_index: bool | None = None, *, nested: str = "columns",
    go_compatible: bool = False,
) -> bytes:
    """Encode one record batch as a qdf v1 buffer.

    Parameters
    ----------
    table : pandas.DataFrame, pyarrow.Table, pyarrow.RecordBatch, dict of arrays or list of dicts
        The batch. Column names must be unique strings.
    mode : {"speed", "balanced", "compression"} or qdf.Options, default "balanced"
        ``"balanced"`` writes a columnar container with QPack integer codecs and
        dictionary / alphabet / raw string blocks. ``"compression"`` adds the float
        codecs (ALP, Gorilla, Chimp128), FSST strings and the tANS entropy pass.
        ``"speed"`` writes row-major msgpack-shaped maps. An :class:`Options` bit set
        selects the reference's individual options.
    column_index : bool, optional
        Write the per-column u32 length index that lets ``decode(columns=...)`` seek
        past unneeded columns. Defaults to True for preset names and to the
        ``COLUMN_INDEX`` bit for an Options value.
    nested : {"columns", "rows"}, default "columns"
        How list / struct / map columns are stored in the columnar modes.
        ``"columns"`` shreds them into flat columns (one columnar container per
        nesting level, as Arrow and Parquet lay them out: smaller, and decoded
        without a Python loop; a Go reader sees the levels as lists of rows).
        ``"rows"`` writes the reference's ``F7`` hybrid container, nested values
        row-major per row, for consumers that need the Go library's own shape.
        Batches of at most 64 rows are written both ways under ``"columns"`` and the
        smaller is kept (level headers can outweigh a handful of nested values).
    go_compatible : bool, default False
        Write only shapes the Go library decodes to the same values: no dictionary
        levels (columns whose repeating values are stored as codes plus a dictionary
        level, when that is smaller), and nested columns as ``nested="rows"``. The
        buffer is then what the reference's picker would write. Without it every
        buffer is still valid v1 that the Go decoder accepts; it just sees codes and
        dictionary levels as separate lists of rows (docs/FORMAT.md Part 2 §2.4).

    Returns
    -------
    bytes
        The v1 buffer (header ``51 44 46 01 <flags>`` + body).

    Raises
    ------
    UnsupportedTypeError
        A column type qdf v1 cannot hold (the message names the column and type).
    InvalidOptionError
        An unknown mode name or option bits.

    Examples
    --------
    >>> import qdf_columnar as qdf
    >>> buf = qdf.encode({"id": [1, 2, 3], "ok": [True, False, True]})
    >>> qdf.decode(buf, output="records")
    [{'id': 1, 'ok': True}, {'id': 2, 'ok': False}, {'id': 3, 'ok': True}]
    """
    if nested not in ("columns", "rows"):
        raise InvalidOptionError(f"nested must be 'columns' or 'rows', not {nested!r}")
    if column_index is None and isinstance(mode, str):
        column_index = True
    opts = parse_mode(mode, column_index=column_index)
    if go_compatible:
        opts, nested = opts & ~Options.CASCADE, "rows"
    tbl = to_storage(to_arrow_table(table))
    if not columnar_enabled(opts):
        from .wire.values import dumps

        return dumps(rows_for_speed(tbl), mode=opts)
    if nested == "columns" and _shred_applies(tbl):
        shredded = _encode_columnar(tbl, opts, shred=True)
        if tbl.num_rows > SMALL_NESTED_ROWS:
            return shredded
        # A handful of rows: the per-level headers and the note's nested types can cost
        # more than row-major nested values; keep whichever layout is smaller.
        try:
            rows = _encode_columnar(tbl, opts, shred=False)
        except UnsupportedTypeError:  # e.g. a repeated map key: only the shredded form holds it
            return shredded
        return rows if len(rows) < len(shredded) else shredded
    return _encode_columnar(tbl, opts, shred=False)


#: Up to this many rows, a batch with nested columns is written both ways (shredded
#: levels and the F7 hybrid) and the smaller is kept.
SMALL_NESTED_ROWS = 64


def _encode_columnar(tbl: pa.Table, opts: Options, *, shred: bool) -> bytes:
    out = pack_header(header_flags(opts))
    ctx = EncodeContext(opts)
    # Dictionary levels sit beside EF levels; an F7 hybrid batch (nested values row-major) has none.
    hybrid = not shred and any(is_nested(f.type) for f in tbl.schema)
    plan = None if hybrid or not opts & Options.CASCADE else plan_dictionaries(
        _flat_part(tbl), lambda: EncodeContext(opts))
    if shred:
        write_shredded(out, tbl, ctx, plan)
    elif plan is not None and plan.columns:
        write_dictionary_batch(out, tbl, plan, ctx)
    else:
        write_table_columnar(out, tbl, ctx, bodies=plan.bodies if plan is not None else None)
    if ctx.col_index_used:
        out[4] |= Flag.COL_INDEX
    min_gain = ENTROPY_MIN_GAIN_WITH_INDEX if ctx.col_index_used else 0.0
    return finish_body(out, entropy=bool(opts & Options.RANS), min_gain=min_gain)


def _flat_part(tbl: pa.Table) -> pa.Table:
    """The columns dictionary levels may take: flat ones (nested leaves stay in their levels)."""
    if not any(is_nested(f.type) for f in tbl.schema):
        return tbl
    return tbl.select([f.name for f in tbl.schema if not is_nested(f.type)])


def _shred_applies(tbl: pa.Table) -> bool:
    nested = [f.type for f in tbl.schema if is_nested(f.type)]
    return bool(nested) and all(shreddable(t) for t in nested)


def decode(
    buf: bytes | bytearray | memoryview,
    columns: list[str] | None = None,
    filter: Any = None,  # noqa: A002 - the name users know from pyarrow / pandas
    output: OutputKind = "pandas",
    *,
    no_copy: bool = False,
    threads: bool | int | None = None,
    categories: list[str] | bool | None = None,
) -> Any:
    """Decode a qdf v1 batch, reading only the columns and rows asked for.

    Parameters
    ----------
    buf : bytes-like
        A qdf v1 buffer whose root value is a columnar container or a list of maps.
    columns : list of str, optional
        Columns to return, in this order. Unneeded column bodies are skipped
        (seeked past when the buffer has a column index).
    filter : expression or pyarrow-style DNF, optional
        ``(qdf.col("code") >= 500) & (qdf.col("level") == "ERROR")`` or
        ``[("code", ">=", 500)]`` / ``[[...], [...]]``. SQL three-valued logic:
        NULL compares to UNKNOWN and only TRUE rows are returned. Filter columns
        need not be in ``columns``.
    output : {"pandas", "arrow", "numpy", "records"}
        A DataFrame, a pyarrow Table, a dict of numpy arrays (masked arrays where
        a column has nulls) or a list of dicts.
    no_copy : bool
        Let raw numeric columns be views of ``buf`` (keep ``buf`` alive and unchanged).
    threads : bool or int, optional
        Materialise columns on this many threads (the kernels release the GIL).
        ``None`` (default) uses up to 4 threads for batches of at least 64k cells on
        machines with 4 or more CPUs, and one thread otherwise; ``False`` or ``1``
        decodes on the calling thread only.
    categories : list of str or bool, optional
        String columns to return as Arrow dictionary arrays (pandas categoricals);
        ``True`` for every string column. A dictionary-coded column (``F5`` / ``FA`` /
        ``FC``) becomes one without expanding its values: its table is the
        categories, its packed index the codes.

    Raises
    ------
    DecodeError
        (TruncatedError, CorruptDataError, UnsupportedVersionError...) for invalid
        bytes, naming the column and byte offset.
    QueryError
        An unknown column (the message lists the columns that exist) or a literal
        of the wrong type.
    """
    if output not in ("pandas", "arrow", "numpy", "records"):
        raise QueryError(f"output must be 'pandas', 'arrow', 'numpy' or 'records', not {output!r}")
    table = decode_arrow(buf, columns, filter, no_copy=no_copy, threads=threads, categories=categories,
                         for_pandas=output == "pandas")
    return convert_output(table, output, owned=not no_copy)  # without no_copy, every buffer is the decoder's


def decode_arrow(buf: Any, columns: list[str] | None = None, filter: Any = None, *,  # noqa: A002
                 no_copy: bool = False, threads: bool | int | None = None,
                 categories: list[str] | bool | None = None, for_pandas: bool = False) -> pa.Table:
    """:func:`decode` to an Arrow table. With ``for_pandas``, string columns come back as
    ``large_string`` (64-bit offsets): pandas converts every string column to that, so
    decoding them so saves a cast of each (~0.4 ms a 500k-row column); the frame is
    the same."""
    if isinstance(buf, str):
        raise DecodeError("decode() takes bytes, not str")
    flags, buf = open_body(buf)
    expr = as_expr(filter)
    if columns is not None:
        columns = _check_columns_arg(columns)
    return from_storage(_decode_table(buf, flags, columns, expr, None, no_copy, threads, categories,
                                      wide_strings=for_pandas))


def decode_rows(buf: Any, rows: np.ndarray, n_rows: int, *, no_copy: bool = False,
                categories: list[str] | None = None, for_pandas: bool = False) -> pa.Table:
    """The rows ``rows`` (ascending int64 row numbers) of every column of a qdf v1 batch
    of ``n_rows`` rows (CorruptDataError if it holds another count), as Arrow,
    materialising only those rows: late materialisation for a ``.qdf`` reader that
    evaluated a filter on other column chunks. Row-major batches decode whole and are
    then taken. ``for_pandas`` as in :func:`decode_arrow`."""
    flags, buf = open_body(buf)
    return from_storage(_decode_table(buf, flags, None, None, RowSelection(rows, n_rows), no_copy, False,
                                      categories, wide_strings=for_pandas))


def decode_filter_inputs(buf: Any, *, no_copy: bool = False, rows: np.ndarray | None = None,
                         n_rows: int = 0, for_pandas: bool = False) -> pa.Table:
    """Every column of a qdf v1 batch in the cheapest form a filter evaluates on, as
    Arrow: a dictionary-coded string column comes back as a DictionaryArray over its
    table, unexpanded, so ``evaluate`` compares once per distinct value. For a ``.qdf``
    reader that evaluates a filter on column chunks before materialising anything;
    the values are those of :func:`decode` (``dictionary_decode`` gives them).
    With ``rows`` (ascending int64 row numbers of a batch of ``n_rows`` rows, as in
    :func:`decode_rows`), only those rows: the candidates a file's zone maps leave.
    ``for_pandas`` as in :func:`decode_arrow`."""
    flags, buf = open_body(buf)
    sel = None if rows is None else RowSelection(rows, n_rows)
    return from_storage(_decode_table(buf, flags, None, None, sel, no_copy, False, None, filter_form=True,
                                      wide_strings=for_pandas))


def _decode_table(buf: Any, flags: int, columns: list[str] | None, expr: Any, rows: RowSelection | None,
                  no_copy: bool, threads: Any, categories: Any, *, filter_form: bool = False,
                  wide_strings: bool = False) -> pa.Table:
    parts = _decode_parts(buf, flags, columns, expr, rows, no_copy, threads, categories, filter_form=filter_form,
                          wide_strings=wide_strings)
    if parts is None:
        return _row_major_table(buf, flags, columns, expr, rows, categories)
    return _table(*parts)


def _table(metadata: dict[bytes, bytes] | None, names: list[str], arrays: list[pa.Array], n_rows: int) -> pa.Table:
    """Decoded columns as a table (one without columns keeps its row count)."""
    return pa.table(dict(zip(names, arrays)), metadata=metadata) if names else empty_table(n_rows, metadata)


#: (schema metadata, column names, their arrays, row count) of a decoded batch.
_Parts = tuple[dict[bytes, bytes] | None, list[str], list[pa.Array], int]


def _decode_parts(buf: Any, flags: int, columns: list[str] | None, expr: Any, rows: RowSelection | None,
                  no_copy: bool, threads: Any, categories: Any, *, filter_form: bool = False,
                  wide_strings: bool = False) -> _Parts | None:
    """(schema metadata, column names, their arrays, row count) of a columnar batch or a
    batch of levels, or None when the root is an ordinary row-major value."""
    r = ByteReader(buf, HEADER_SIZE)
    ctx = DecodeContext(flags=flags)
    root = r.peek("the root value")
    if root in (ContainerTag.COL_STRUCT, ContainerTag.HYBRID_COL_STRUCT):
        r.pos += 1
        header, names, arrays, n_out = _columnar_arrays(
            r, ctx, columns, expr, copy=not no_copy, threads=threads, categories=categories,
            hybrid=root == ContainerTag.HYBRID_COL_STRUCT, rows=rows, filter_form=filter_form,
            wide_strings=wide_strings)
        return header.metadata or None, names, arrays, n_out
    opened = _shredded_arrays(r, ctx, columns, expr, copy=not no_copy, threads=threads, categories=categories,
                              rows=rows, filter_form=filter_form, wide_strings=wide_strings)
    if opened is None:
        return None
    metadata, out, n_out = opened
    return metadata, list(out), list(out.values()), n_out


def _row_major_table(buf: Any, flags: int, columns: list[str] | None, expr: Any, rows: RowSelection | None,
                     categories: Any) -> pa.Table:
    """A row-major root (a list of maps), read with fresh Dense state."""
    table = _decode_rows(ByteReader(buf, HEADER_SIZE), DecodeContext(flags=flags), columns, expr)
    if categories:
        table = _categorize_rows(table, categories)
    if rows is not None:
        table = table.take(pa.array(check_rows(rows, table.num_rows)))
    return table


def _shredded_arrays(
    r: ByteReader, ctx: DecodeContext, columns, expr, *, copy: bool, threads, categories=None, rows=None,
    filter_form: bool = False, wide_strings: bool = False,
) -> tuple[dict[bytes, bytes] | None, dict[str, pa.Array], int] | None:
    """(schema metadata, column -> array, row count) of a batch of levels, or None when
    the root is not one (``r`` and ``ctx`` then hold partial state)."""
    opened = open_shredded(r, ctx)
    if opened is None:
        return None
    h0, n_levels = opened
    dict_names = set(h0.dicts or [])
    flat = [n for n, t, _ in h0.shred if t is None] if h0.shred is not None else h0.names
    # Dictionary columns take categories= in shredded_arrays (their type is in their level).
    plain = [c for c in categories if c not in dict_names] if isinstance(categories, list) else categories
    _apply_categories(h0, plain, [n for n in flat if n not in dict_names])
    # Flat columns (dictionary ones too) whose strings decode wide; a pd.ArrowDtype
    # column keeps its type: it is its pandas dtype.
    widen = set(flat) - arrow_dtype_names(h0.metadata) if wide_strings else set()
    widen_strings(c for c in h0.columns if c.name in widen)
    out, n_out = shredded_arrays(r, ctx, h0, n_levels, columns, expr, copy=copy, threads=threads,
                                 index_columns=pandas_index_columns, categories=categories, rows=rows,
                                 filter_form=filter_form, widen=widen)
    return h0.metadata or None, out, n_out


def _check_columns_arg(columns: Any) -> list[str]:
    if isinstance(columns, str) or not all(isinstance(c, str) for c in columns):
        raise QueryError("columns= must be a list of column names (str)")
    cols = list(columns)
    if len(set(cols)) != len(cols):
        raise QueryError(f"columns= names a column twice: {cols}")
    return cols


def _unknown(names: list[str], existing: list[str]) -> None:
    missing = [c for c in names if c not in existing]
    if missing:
        raise QueryError(f"unknown column {missing[0]!r}; the batch has columns {existing}", column=missing[0])


def _apply_categories(header: Any, categories: Any, flat: list[str]) -> None:
    """Make the named string columns decode as dictionary arrays (codes + table, no expansion)."""
    if categories is None or categories is False:
        return
    infos = {c.name: c for c in header.columns if c.name in flat}
    if categories is True:
        names = [n for n, c in infos.items() if c.kind == ColKind.STRING]
    else:
        names = _check_columns_arg(categories)
        for n in names:
            if n not in infos:
                raise QueryError(f"categories= names {n!r}, which is not a flat column of the batch {flat}", column=n)
            if infos[n].kind != ColKind.STRING:
                raise QueryError(f"categories= names {n!r}, which is not a string column", column=n)
    for n in names:
        info = infos[n]
        if not pa.types.is_dictionary(info.arrow_type) and not pa.types.is_null(info.arrow_type):
            info.arrow_type = pa.dictionary(pa.int32(), info.arrow_type)


def _categorize_rows(table: pa.Table, categories: Any) -> pa.Table:
    """categories= on a row-major batch: there is no dictionary on the wire, so encode one."""
    names = [f.name for f in table.schema if pa.types.is_string(f.type)] if categories is True \
        else _check_columns_arg(categories)
    for n in names:
        if n not in table.column_names or not pa.types.is_string(table.schema.field(n).type):
            raise QueryError(f"categories= names {n!r}, which is not a string column", column=n)
        i = table.column_names.index(n)
        table = table.set_column(i, n, table.column(n).dictionary_encode())
    return table


def _decode_columnar(
    r: ByteReader, ctx: DecodeContext, columns, expr, *, copy: bool, threads, hybrid: bool = False,
    categories: Any = None, rows: RowSelection | None = None, filter_form: bool = False,
    wide_strings: bool = False,
) -> pa.Table:
    header, names, arrays, n_out = _columnar_arrays(
        r, ctx, columns, expr, copy=copy, threads=threads, hybrid=hybrid, categories=categories, rows=rows,
        filter_form=filter_form, wide_strings=wide_strings)
    return _table(header.metadata or None, names, arrays, n_out)


def _columnar_arrays(
    r: ByteReader, ctx: DecodeContext, columns, expr, *, copy: bool, threads, hybrid: bool = False,
    categories: Any = None, rows: RowSelection | None = None, filter_form: bool = False,
    wide_strings: bool = False,
) -> tuple[Any, list[str], list[pa.Array], int]:
    """(header, column names, their arrays, row count) of a columnar container: what
    :func:`_decode_columnar` makes a table of."""
    header = read_colstruct_header(r, ctx, hybrid=hybrid)
    _apply_categories(header, categories, [c.name for c in header.columns if c.kind != ColKind.RESIDUAL])
    if wide_strings:  # (a pd.ArrowDtype column keeps its type: it is its pandas dtype)
        keep = arrow_dtype_names(header.metadata)
        widen_strings(c for c in header.columns if c.kind != ColKind.RESIDUAL and c.name not in keep)
    names = header.names
    proj = names if columns is None else columns
    _unknown(proj, names)
    if expr is not None:
        validate(expr, header.logical_schema())
    index_cols = pandas_index_columns(header.pandas_metadata, names) if columns is not None else []
    proj_all = proj + [c for c in index_cols if c not in proj]
    filter_cols = sorted(expr.columns()) if expr is not None else []
    dec = ColumnDecoder(r, header, ctx, copy=copy)
    deferred = dec.run(set(proj_all) | set(filter_cols), walk_all=columns is None and not header.has_index)
    if columns is None and not header.has_index and r.pos != r.end:
        raise CorruptDataError(f"{r.end - r.pos} trailing bytes after the columnar container", offset=r.pos)
    if header.has_index and columns is None and header.end != r.end:
        raise CorruptDataError(f"{r.end - header.end} trailing bytes after the columnar container", offset=header.end)
    if expr is not None:
        rows = select_rows(expr, deferred, header.n_rows)
    elif rows is not None:
        rows = check_rows(rows, header.n_rows)
    n_out = header.n_rows if rows is None else len(rows)
    makers = [deferred[c].for_filter_all if filter_form else deferred[c] for c in proj_all]
    return header, proj_all, materialize(makers, rows, n_out, threads, last_use=True), n_out


def decode_chunk_arrays(buf: Any, *, rows: np.ndarray | None = None, n_rows: int = 0, filter_form: bool = False,
                        no_copy: bool = False, categories: list[str] | None = None,
                        for_pandas: bool = False) -> tuple[list[str], list[pa.Array], int]:
    """(column names, arrays, row count) of a qdf v1 batch, for a ``.qdf`` reader that
    decodes one column chunk at a time: the columns of :func:`decode_arrow` (``rows``:
    of :func:`decode_rows`; ``filter_form``: of :func:`decode_filter_inputs`) without
    the table around them, which costs more than the rest of a small chunk's decode."""
    flags, buf = open_body(buf)
    sel = None if rows is None else RowSelection(rows, n_rows)
    parts = _decode_parts(buf, flags, None, None, sel, no_copy, False, categories, filter_form=filter_form,
                          wide_strings=for_pandas)
    if parts is None:  # another writer's layout (rows)
        t = from_storage(_row_major_table(buf, flags, None, None, sel, categories))
        return t.column_names, [one_array(c) for c in t.columns], t.num_rows
    metadata, names, arrays, n_out = parts
    if names and has_logical_types(metadata):  # logical types ride on storage types: restore them
        t = from_storage(pa.table(dict(zip(names, arrays)), metadata=metadata))
        arrays = [one_array(c) for c in t.columns]
    return names, arrays, n_out


def _decode_rows(r: ByteReader, ctx: DecodeContext, columns, expr) -> pa.Table:
    from .wire.values import read_value

    start = r.pos
    value = read_value(r, ctx)
    if r.pos != r.end:
        raise CorruptDataError(f"{r.end - r.pos} trailing bytes after the root value", offset=r.pos)
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise DecodeError(
            f"the buffer holds a {type(value).__name__} value, not a table (a list of maps); use qdf.loads() for it",
            offset=start,
        )
    rows, note, _ = split_note(value)
    table = rows_table(rows, start, note)
    names = table.column_names
    if columns is not None:
        _unknown(columns, names)
    if expr is not None:
        schema = {f.name: arrow_kind(f.type) or "nested" for f in table.schema}
        validate(expr, schema)
        mask = evaluate(expr, {c: table.column(c) for c in expr.columns()}, table.num_rows)
        table = table.filter(pa.array(mask))
    if columns is not None:
        table = table.select(columns)
    return table
