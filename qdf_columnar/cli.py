"""The ``qdf`` command line.

``qdf inspect FILE``     schema, row groups, per-column codecs and sizes of a ``.qdf`` file
                         (or of a v1 buffer; of a stream: message count and record schema)
                         or of a single qdf v1 buffer.
``qdf head FILE``        the first rows (``-n``) of some columns (``--columns a,b``) that match
                         ``--where "code >= 500 and level == 'ERROR'"``; reads only what it needs.
``qdf convert IN OUT``   between .qdf, Parquet, Arrow IPC, CSV/TSV and JSON lines, streamed row
                         group by row group (batch by batch), with a progress bar on stderr.
``qdf warmup``           compiles every kernel ahead of time; ``qdf version``.

The entry point is ``main(argv)`` so tests call it in-process. Expected failures (a
``QdfError``, an ``OSError``, an Arrow error) print one line and exit with status 2.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import itertools
import json
import os
import shutil
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

__all__ = ["main", "FORMATS"]

#: Formats ``convert`` reads and writes (``qdf`` input also takes a single v1 buffer).
FORMATS = ("qdf", "parquet", "arrow", "csv", "tsv", "jsonl")
_EXTENSIONS = {
    ".qdf": "qdf", ".parquet": "parquet", ".pq": "parquet", ".arrow": "arrow", ".feather": "arrow",
    ".ipc": "arrow", ".arrows": "arrow", ".csv": "csv", ".tsv": "tsv", ".jsonl": "jsonl", ".ndjson": "jsonl",
}  # fmt: skip
#: Whole-file compression of text formats, by suffix (``.csv.gz``); pyarrow codec names.
_COMPRESSED = {".gz": "gzip", ".bz2": "bz2", ".zst": "zstd", ".zstd": "zstd", ".lz4": "lz4"}
#: Rows per batch read from Parquet; bytes per block read from CSV / JSON lines (the
#: first block fixes the column types of a streamed text file; pyarrow reads a few
#: blocks ahead, which bounds the memory a text input takes).
_BATCH_ROWS = 65_536
_TEXT_BLOCK = 4 << 20
#: Without --row-group-size, Parquet / Arrow output merges smaller input batches up to
#: this many rows (a bigger input row group is written whole, as it came).
_MIN_GROUP_ROWS = 131_072
_MODES = ("speed", "balanced", "compression")


# ----------------------------------------------------------------------------- formats


def _suffixes(path: str) -> tuple[str | None, str | None]:
    """(format, compression codec) from a file name: ``x.csv.gz`` -> ("csv", "gzip")."""
    base = os.path.basename(path.rstrip("/")).lower()
    stem, ext = os.path.splitext(base)
    codec = _COMPRESSED.get(ext)
    if codec is not None:
        ext = os.path.splitext(stem)[1]
    return _EXTENSIONS.get(ext), codec


#: Leading bytes of the binary formats; "qdf1" is a file holding one qdf v1 buffer.
_MAGICS = ((b"QDFC", "qdf"), (b"QDF\x01", "qdf1"), (b"PAR1", "parquet"), (b"ARROW1", "arrow"),
           (b"\xff\xff\xff\xff", "arrow"))


def _sniff(path: str) -> str | None:
    """The format named by a local file's first bytes."""
    try:
        with open(path, "rb") as f:
            head = f.read(8)
    except OSError:
        return None
    return next((fmt for magic, fmt in _MAGICS if head.startswith(magic)), None)


def _need_file(path: str) -> None:
    if "://" not in path and not os.path.exists(path):
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), path)


def _input_format(path: str, given: str | None) -> tuple[str, str | None]:
    from .errors import InvalidOptionError

    _need_file(path)
    fmt, codec = _suffixes(path)
    sniffed = _sniff(path) if "://" not in path else None
    if given is not None:
        fmt = given
    elif sniffed is not None and codec is None:
        fmt = "qdf" if sniffed == "qdf1" else sniffed
    if fmt is None:
        raise InvalidOptionError(f"cannot tell the format of {path!r} from its name or bytes; pass --from "
                                 f"({', '.join(FORMATS)})")
    if "://" in path and fmt != "qdf":
        raise InvalidOptionError(f"{path!r}: only .qdf files may be URLs; copy other files to a local path")
    if fmt == "qdf" and sniffed == "qdf1":
        return "qdf1", None
    return fmt, codec


# ----------------------------------------------------------------------------- reading


@dataclass
class _Input:
    """An input file as a stream of Arrow tables, projected and filtered.

    ``rows_in`` / ``bytes_in`` count what has been consumed so far (rows skipped by the
    filter or by row-group pruning included), against ``total_rows`` / ``total_bytes``
    when the format knows them up front.
    """

    schema: Any
    tables: Iterator[Any] = field(default_factory=lambda: iter(()))
    total_rows: int | None = None
    total_bytes: int | None = None
    close: Callable[[], None] = lambda: None
    rows_in: int = 0
    bytes_in: int | None = None

    def stream(self, batches: Iterator[Any], columns: list[str] | None, expr: Any) -> _Input:
        """Read ``batches`` through :func:`_select`, counting what goes in."""

        def tables() -> Iterator[Any]:
            # Text readers read blocks ahead (so tell() runs ahead), but every batch is one
            # block: batches x block size is the input consumed.
            for k, b in enumerate(batches, 1):
                self.rows_in += b.num_rows
                if self.total_bytes:
                    self.bytes_in = min(k * _TEXT_BLOCK, self.total_bytes)
                yield _select(b, columns, expr)

        self.tables = tables()
        return self


def _check_query(schema: Any, columns: list[str] | None, expr: Any) -> None:
    """Unknown columns and badly typed literals fail before anything is read."""
    from .errors import QueryError
    from .query import arrow_kind, validate

    names = schema.names
    for c in [*(columns or []), *sorted(expr.columns() if expr is not None else ())]:
        if c not in names:
            raise QueryError(f"unknown column {c!r}; the file has columns {names}", column=c)
    if expr is not None:
        validate(expr, {f.name: arrow_kind(f.type) or str(f.type) for f in schema if f.name in expr.columns()})


def _project(columns: list[str] | None, schema: Any) -> list[str] | None:
    """The columns to keep: those asked for plus a stored pandas index (as read_qdf does)."""
    if columns is None:
        return None
    from .columns.outputs import pandas_index_columns

    index = pandas_index_columns((schema.metadata or {}).get(b"pandas"), schema.names)
    return columns + [c for c in index if c not in columns]


def _select(t: Any, columns: list[str] | None, expr: Any) -> Any:
    """Filter (SQL three-valued logic, as qdf's own reads) then project one Arrow table."""
    import pyarrow as pa

    from .query import evaluate

    if isinstance(t, pa.RecordBatch):
        t = pa.Table.from_batches([t])
    if expr is not None:
        mask = evaluate(expr, {c: t.column(c) for c in expr.columns()}, t.num_rows)
        t = t.filter(pa.array(mask))
    return t if columns is None else t.select(columns)


def _sub_schema(schema: Any, names: list[str] | None) -> Any:
    import pyarrow as pa

    return schema if names is None else pa.schema([schema.field(n) for n in names], metadata=schema.metadata)


def _open_qdf(path: str, columns: list[str] | None, expr: Any) -> _Input:
    """A ``.qdf`` file, one row group at a time: pruned groups are never read, the
    projection and the filter are pushed down into each group."""
    from .io import QdfFile

    f = QdfFile(path)
    try:
        _check_query(f.schema, columns, expr)
        if not (hasattr(f, "_plan") and hasattr(f, "_read_group")):  # pragma: no cover - io API changed
            table = f.read(columns, expr, output="arrow")
            return _Input(table.schema, iter([table]), f.num_rows, close=f.close)
        # Streams through QdfFile's per-group internals until io offers a public per-group read.
        from .columns.outputs import project_pandas_metadata

        proj = _project(columns, f.schema) or f.schema.names
        target = _sub_schema(f.schema, proj).with_metadata(project_pandas_metadata(f.schema.metadata, proj))
        _, plan = f._plan(expr)
    except BaseException:
        f.close()
        raise
    inp = _Input(target, total_rows=f.num_rows, close=f.close)

    def tables() -> Iterator[Any]:
        for g, read, _why in plan:
            inp.rows_in += g.num_rows
            if read:
                yield f._read_group(g, columns, expr, target, False, None, None)

    inp.tables = tables()
    return inp


def _open_qdf1(path: str, columns: list[str] | None, expr: Any) -> _Input:
    """A file holding one qdf v1 buffer: decoded once, with projection and filter pushdown."""
    from .api import decode

    with open(path, "rb") as fh:
        table = decode(fh.read(), columns=columns, filter=expr, output="arrow")
    return _Input(table.schema, iter([table]), rows_in=table.num_rows)


def _open_parquet(path: str, columns: list[str] | None, expr: Any) -> _Input:
    import pyarrow.parquet as pq

    pf = pq.ParquetFile(path, memory_map=True)
    schema = pf.schema_arrow
    _check_query(schema, columns, expr)
    proj = _project(columns, schema)
    needed = None if proj is None else list(dict.fromkeys(proj + sorted(expr.columns() if expr else ())))
    batches = (b.replace_schema_metadata(schema.metadata)
               for b in pf.iter_batches(batch_size=_BATCH_ROWS, columns=needed))
    inp = _Input(_sub_schema(schema, proj), total_rows=pf.metadata.num_rows, close=pf.close)
    return inp.stream(batches, proj, expr)


def _open_arrow(path: str, columns: list[str] | None, expr: Any) -> _Input:
    import pyarrow as pa

    src = pa.memory_map(path)
    try:
        reader: Any = pa.ipc.open_file(src)
        batches: Iterator[Any] = (reader.get_batch(i) for i in range(reader.num_record_batches))
        total: int | None = reader.count_rows()
    except pa.ArrowInvalid:  # not the file format: the stream format (.arrows)
        src.seek(0)
        reader = pa.ipc.open_stream(src)
        batches, total = iter(reader), None
    _check_query(reader.schema, columns, expr)
    proj = _project(columns, reader.schema)
    return _Input(_sub_schema(reader.schema, proj), total_rows=total, close=src.close).stream(batches, proj, expr)


def _open_text(path: str, fmt: str, codec: str | None, columns: list[str] | None, expr: Any) -> _Input:
    """CSV / TSV / JSON lines through pyarrow's streaming readers (types fixed by the first block)."""
    import pyarrow as pa

    raw = pa.memory_map(path)
    stream = pa.CompressedInputStream(raw, codec) if codec else raw
    try:
        if fmt == "jsonl":
            import pyarrow.json as pj

            reader = pj.open_json(stream, read_options=pj.ReadOptions(block_size=_TEXT_BLOCK))
        else:
            import pyarrow.csv as pcsv

            reader = pcsv.open_csv(stream, read_options=pcsv.ReadOptions(block_size=_TEXT_BLOCK),
                                   parse_options=pcsv.ParseOptions(delimiter="\t" if fmt == "tsv" else ","))
        _check_query(reader.schema, columns, expr)
    except BaseException:
        raw.close()
        raise
    # A compressed file's block count says nothing about its compressed bytes.
    inp = _Input(_sub_schema(reader.schema, columns), total_bytes=None if codec else raw.size(), close=raw.close)
    return inp.stream(reader, columns, expr)


def _open_input(path: str, fmt: str, codec: str | None, columns: list[str] | None, expr: Any) -> _Input:
    openers = {"qdf": _open_qdf, "qdf1": _open_qdf1, "parquet": _open_parquet, "arrow": _open_arrow}
    if fmt in openers:
        return openers[fmt](path, columns, expr)
    return _open_text(path, fmt, codec, columns, expr)


# ----------------------------------------------------------------------------- writing


def _regroup(tables: Iterator[Any], size: int, exact: bool) -> Iterator[Any]:
    """Tables of ``size`` rows (the last may be shorter), re-cut when ``exact``; else
    smaller tables are merged up to ``size`` and a bigger one is left whole."""
    import pyarrow as pa

    pending: list[Any] = []
    n = 0
    for t in tables:
        if t.num_rows == 0:
            continue
        pending.append(t)
        n += t.num_rows
        while n >= size:
            whole = pa.concat_tables(pending) if len(pending) > 1 else pending[0]
            cut = size if exact else n
            yield whole.slice(0, cut)
            rest = whole.slice(cut)
            pending, n = ([rest] if rest.num_rows else []), rest.num_rows
    if n:
        yield pa.concat_tables(pending) if len(pending) > 1 else pending[0]


def _peek(tables: Iterator[Any], fallback: Any) -> tuple[Any, Iterator[Any]]:
    """(schema of the first table, or ``fallback`` when there is none; all the tables)."""
    first = next(tables, None)
    return (fallback, iter(())) if first is None else (first.schema, itertools.chain([first], tables))


class _DictionaryKeeper:
    """One growing dictionary per column, so an IPC *file* gets deltas, never replacements."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}

    def __call__(self, t: Any) -> Any:
        import pyarrow as pa
        import pyarrow.compute as pc

        for i, f in enumerate(t.schema):
            if not pa.types.is_dictionary(f.type):
                continue
            chunks = []
            for chunk in t.column(i).chunks:
                cur = self.values.get(f.name)
                d = chunk.dictionary
                if cur is None:
                    cur = d
                elif not d.equals(cur):
                    new = d.filter(pc.invert(pc.is_in(d, value_set=cur)))
                    cur = pa.concat_arrays([cur, new]) if len(new) else cur
                    remap = pc.index_in(d, value_set=cur).cast(f.type.index_type)
                    chunk = pa.DictionaryArray.from_arrays(remap.take(chunk.indices), cur, ordered=f.type.ordered)
                self.values[f.name] = cur
                chunks.append(chunk)
            t = t.set_column(i, f, pa.chunked_array(chunks, f.type))
        return t


def _plain(t: Any) -> Any:
    """Dictionary columns as their values (text formats have no dictionaries)."""
    import pyarrow as pa

    for i, f in enumerate(t.schema):
        if pa.types.is_dictionary(f.type):
            t = t.set_column(i, f.name, t.column(i).cast(f.type.value_type))
    return t


def _json_value(v: Any) -> Any:
    import base64
    import datetime as dt

    if isinstance(v, (bytes, bytearray)):
        return base64.b64encode(v).decode()
    if isinstance(v, dt.timedelta):
        return v.total_seconds()
    if hasattr(v, "isoformat"):
        return v.isoformat()
    return str(v)  # Decimal and anything else exact as text


def _json_lines(t: Any) -> bytes:
    """One JSON object per row. Arrow turns temporal and decimal columns into ISO 8601 /
    exact text (8x faster than Python objects); NaN and infinities, which JSON lacks,
    become null."""
    import pyarrow as pa
    import pyarrow.compute as pc

    t = _plain(t)
    for i, f in enumerate(t.schema):
        col = t.column(i)
        if pa.types.is_floating(f.type):
            t = t.set_column(i, f, pc.if_else(pc.is_finite(col), col, pa.scalar(None, f.type)))
        elif pa.types.is_timestamp(f.type) or pa.types.is_date(f.type) or pa.types.is_time(f.type) \
                or pa.types.is_decimal(f.type):
            text = col.cast(pa.string())
            if pa.types.is_timestamp(f.type):  # 2026-01-01T00:00:00Z, 2026-01-01T00:00:00.25Z
                text = pc.replace_substring(text, " ", "T", max_replacements=1)
                text = pc.replace_substring_regex(text, r"\.0+(Z?)$", r"\1")
                text = pc.replace_substring_regex(text, r"(\.\d*[1-9])0+(Z?)$", r"\1\2")
            t = t.set_column(i, f.name, text)
    dumps = json.JSONEncoder(ensure_ascii=False, default=_json_value, allow_nan=False).encode
    rows = t.to_pylist(maps_as_pydicts="lossy")
    return "".join([dumps(r) + "\n" for r in rows]).encode()


@contextlib.contextmanager
def _atomic_path(path: str) -> Iterator[str]:
    """A temporary path beside ``path``, renamed over it on success, removed on failure."""
    d, base = os.path.split(os.path.abspath(path))
    tmp = os.path.join(d, f".{base}.{os.getpid()}.tmp")
    try:
        yield tmp
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    os.replace(tmp, path)


def _write_output(inp: _Input, path: str, fmt: str, codec: str | None, args: argparse.Namespace,
                  on_table: Callable[[Any], None]) -> None:
    """Stream ``inp`` into ``path``; ``on_table`` sees each table on its way out."""
    import pyarrow as pa

    def counted(tables: Iterator[Any]) -> Iterator[Any]:
        seen = False
        for t in tables:
            on_table(t)
            seen = True
            yield t
        if not seen:  # an empty (or fully filtered) input still has a schema to write
            yield inp.schema.empty_table()

    if fmt == "qdf":
        from .io import write_qdf

        opts = {k: v for k, v in (("mode", args.mode), ("row_group_size", args.row_group_size)) if v is not None}
        write_qdf(counted(inp.tables), path, **opts)
        return
    tables = counted(inp.tables)
    size = args.row_group_size
    with _atomic_path(path) as tmp:
        if fmt == "parquet":
            import pyarrow.parquet as pq

            schema, tables = _peek(_regroup(tables, size or _MIN_GROUP_ROWS, bool(size)), inp.schema)
            with pq.ParquetWriter(tmp, schema, compression=args.compression or "snappy") as w:
                for t in tables:
                    w.write_table(t, row_group_size=size or t.num_rows)
        elif fmt == "arrow":
            keep = _DictionaryKeeper()
            codec = None if args.compression == "none" else args.compression
            options = pa.ipc.IpcWriteOptions(compression=codec, emit_dictionary_deltas=True)
            schema, tables = _peek(_regroup(tables, size or _MIN_GROUP_ROWS, bool(size)), inp.schema)
            with pa.ipc.new_file(tmp, schema, options=options) as w:
                for t in tables:
                    w.write_table(keep(t))
        else:
            with pa.output_stream(tmp, compression=codec) as sink:
                if fmt == "jsonl":
                    for t in tables:
                        sink.write(_json_lines(t))
                else:
                    import pyarrow.csv as pcsv

                    schema, tables = _peek(tables, inp.schema)
                    opts_csv = pcsv.WriteOptions(delimiter="\t" if fmt == "tsv" else ",")
                    with pcsv.CSVWriter(sink, _plain(schema.empty_table()).schema, write_options=opts_csv) as w:
                        for t in tables:
                            w.write_table(_plain(t))


# ----------------------------------------------------------------------------- progress


class _Progress:
    """One line on stderr: rows done / total (or share of the input), rate and ETA. On a
    terminal it redraws in place from the first half second on (quick runs print
    nothing); elsewhere (``--progress``) it prints a line a second."""

    def __init__(self, inp: _Input, enabled: bool, tty: bool, stream: TextIO) -> None:
        self.inp, self.enabled, self.tty, self.stream = inp, enabled, tty, stream
        self.t0 = self.last = time.perf_counter()
        self.shown: tuple[int, int | None] | None = None

    def update(self, final: bool = False) -> None:
        if not self.enabled:
            return
        now = time.perf_counter()
        if final:
            if self.tty and self.shown is None:  # a quick run on a terminal: nothing to finish
                return
        elif now - self.last < (0.1 if self.tty else 1.0) or (self.tty and now - self.t0 < 0.5):
            return
        state = (self.inp.rows_in, self.inp.bytes_in)
        if not self.tty and state == self.shown:
            return
        self.last, self.shown = now, state
        line = self.line(now - self.t0)
        if self.tty:
            width = shutil.get_terminal_size((100, 20)).columns - 1
            self.stream.write("\r" + line[:width].ljust(width) + ("\n" if final else ""))
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def line(self, elapsed: float) -> str:
        inp, frac = self.inp, None
        done = f"{inp.rows_in:,} rows"
        if inp.total_rows:
            frac, done = inp.rows_in / inp.total_rows, f"{inp.rows_in:,} / {inp.total_rows:,} rows"
        elif inp.total_bytes and inp.bytes_in is not None:
            frac = inp.bytes_in / inp.total_bytes
        parts = [f"convert: {done}"]
        if frac is not None:
            frac = min(frac, 1.0)
            parts.append(f"{frac:4.0%} |{'#' * int(frac * 20):<20}|")
        parts.append(f"{inp.rows_in / max(elapsed, 1e-9):,.0f} rows/s")
        parts.append(f"ETA {_clock(elapsed * (1 - frac) / frac)}" if frac and frac < 1 else _clock(elapsed))
        return "  ".join(parts)


def _clock(seconds: float) -> str:
    s = int(seconds + 0.5)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


# ----------------------------------------------------------------------------- commands


def _query_args(args: argparse.Namespace) -> tuple[list[str] | None, Any]:
    """``--columns a,b`` and ``--where EXPR`` as a column list and a filter expression."""
    from .errors import QueryError
    from .query.parse import parse_where

    cols = None if args.columns is None else [c.strip() for c in args.columns.split(",")]
    if cols is not None and not all(cols):
        raise QueryError(f"--columns {args.columns!r} has an empty name; write --columns a,b,c")
    return cols, None if args.where is None else parse_where(args.where)


def _cmd_head(args: argparse.Namespace) -> int:
    import pyarrow as pa

    from .columns.outputs import convert_output
    from .errors import InvalidOptionError

    if args.n < 0:
        raise InvalidOptionError(f"-n must be >= 0, not {args.n}")
    fmt, codec = _input_format(args.file, args.from_)
    inp = _open_input(args.file, fmt, codec, *_query_args(args))
    got: list[Any] = []
    n = 0
    try:
        for t in inp.tables:  # stops early: later row groups / batches are never read
            if n >= args.n:
                break
            got.append(t.slice(0, args.n - n))
            n += got[-1].num_rows
    finally:
        inp.close()
    table = pa.concat_tables(got) if got else inp.schema.empty_table()
    df = convert_output(table, "pandas")
    import pandas as pd

    if df.empty:
        print("  ".join(map(str, df.columns)))
        print(f"({len(df)} rows)")
        return 0
    print(df.to_string(index=not isinstance(df.index, pd.RangeIndex), max_colwidth=args.max_width))
    return 0


def _cmd_convert(args: argparse.Namespace) -> int:
    from .errors import InvalidOptionError

    src_fmt, src_codec = _input_format(args.input, args.from_)
    dst_fmt, dst_codec = _suffixes(args.output)
    dst_fmt = args.to or dst_fmt
    if dst_fmt is None:
        raise InvalidOptionError(f"cannot tell the format of {args.output!r} from its name; pass --to "
                                 f"({', '.join(FORMATS)})")
    if "://" in args.output and dst_fmt != "qdf":
        raise InvalidOptionError(f"{args.output!r}: only .qdf output may be a URL; write to a local path")
    if dst_fmt != "qdf" and args.mode is not None:
        raise InvalidOptionError("--mode applies only to .qdf output")
    if dst_fmt in ("qdf", "csv", "tsv", "jsonl") and args.compression is not None:
        raise InvalidOptionError("--compression applies only to Parquet and Arrow output "
                                 "(compress text output by its name: out.csv.gz)")
    if dst_fmt == "arrow" and args.compression not in (None, "none", "lz4", "zstd"):
        raise InvalidOptionError(f"Arrow IPC compresses with lz4 or zstd, not {args.compression}")
    if dst_fmt in ("csv", "tsv", "jsonl") and args.row_group_size is not None:
        raise InvalidOptionError("--row-group-size applies only to .qdf, Parquet and Arrow output")
    if "://" not in args.input and "://" not in args.output and os.path.exists(args.output) \
            and os.path.samefile(args.input, args.output):
        raise InvalidOptionError(f"input and output are the same file: {args.output!r}")
    inp = _open_input(args.input, src_fmt, src_codec, *_query_args(args))
    tty = sys.stderr.isatty()
    bar = _Progress(inp, args.progress if args.progress is not None else tty, tty, sys.stderr)
    written = 0

    def on_table(t: Any) -> None:
        nonlocal written
        written += t.num_rows
        bar.update()

    try:
        _write_output(inp, args.output, dst_fmt, dst_codec, args, on_table)
    finally:
        inp.close()
        bar.update(final=True)
    if bar.enabled:
        size = f" ({os.path.getsize(args.output):,} bytes)" if "://" not in args.output else ""
        print(f"wrote {written:,} rows to {args.output}{size} in {_clock(time.perf_counter() - bar.t0)}",
              file=sys.stderr)
    return 0


def _cmd_inspect(args: argparse.Namespace) -> int:
    from .errors import DecodeError

    _need_file(args.file)
    fmt = _sniff(args.file) if "://" not in args.file else "qdf"
    if fmt not in ("qdf", "qdf1"):
        raise DecodeError(f"{args.file!r} is neither a .qdf file nor a qdf v1 buffer (no QDFC / QDF\\x01 magic)",
                          offset=0)
    if fmt == "qdf":
        info = _inspect_file(args.file, args.sample)
    elif args.file.endswith(".qdfs"):
        info = _inspect_stream(args.file)
    else:
        try:
            info = _inspect_buffer(args.file)
        except DecodeError as err:  # the same header starts a stream: is it one?
            try:
                info = _inspect_stream(args.file)
            except DecodeError:
                raise err from None
    if args.json:
        out = {k: (v.to_dict("records") if hasattr(v, "to_dict") else v) for k, v in info.items()}
        print(json.dumps(out, indent=2, default=str))
        return 0
    width = max((len(c["name"]) for c in info["schema"]), default=0)
    print(info["summary"], f"\nschema ({len(info['schema'])} columns):",
          *(f"  {c['name']:<{width}}  {c['type']}" for c in info["schema"]), sep="\n")
    groups = info.get("row_groups")
    if groups is not None:
        print(f"\nrow groups ({len(groups)}):")
        if 0 < args.row_groups < len(groups):  # the first and the last ones
            half = max(args.row_groups // 2, 1)
            groups = _ends(groups, half)
        print(groups.to_string(index=False))
    if info.get("columns") is not None:
        print("\ncolumns:", info["columns"].to_string(index=False, max_colwidth=args.max_width, na_rep=""),
              sep="\n")
    return 0


def _ends(groups: Any, half: int) -> Any:
    """The first and last ``half`` rows of a frame with a ``...`` row between them."""
    import pandas as pd

    gap = pd.DataFrame([["..."] * groups.shape[1]], columns=groups.columns)
    return pd.concat([groups.head(half).astype(object), gap, groups.tail(half).astype(object)], ignore_index=True)


def _inspect_file(path: str, sample: int | None) -> dict[str, Any]:
    import pandas as pd

    from .io import QdfFile

    with QdfFile(path) as f:
        meta, size, n = f.metadata, f.size, f.num_row_groups
        groups = pd.DataFrame([{"index": g.index, "offset": g.offset, "rows": g.num_rows, "bytes": g.length}
                               for g in f.row_groups], columns=["index", "offset", "rows", "bytes"])
        cols = f.columns_summary(max_row_groups=sample)
        cols.insert(cols.columns.get_loc("bytes") + 1, "share", (cols["bytes"].astype("float64") / size).round(4))
        sampled = f" (codecs and bytes from the first {sample} row groups)" if sample is not None and sample < n else ""
        summary = (f"{path}: qdf file, container v{meta['container_version']}, {size:,} bytes, "
                   f"{f.num_rows:,} rows in {n:,} row group{'s' if n != 1 else ''}, footer {meta['footer_bytes']:,} "
                   f"bytes, created by {meta['created_by']}{sampled}")
        schema = [{"name": fld.name, "type": str(fld.type)} for fld in f.schema]
        return {"summary": summary, "path": path, "format": "qdf", "bytes": size, "rows": f.num_rows,
                "schema": schema, "row_groups": groups, "columns": cols}


def _inspect_buffer(path: str) -> dict[str, Any]:
    """A single v1 buffer: decoded once for its rows and Arrow schema, walked for codecs."""
    from .api import decode
    from .breakdown import explain
    from .format.tags import Flag

    with open(path, "rb") as fh:
        buf = fh.read()
    table = decode(buf, output="arrow")
    flags = ", ".join(str(fl.name).lower() for fl in Flag if buf[4] & fl) or "none"
    schema = [{"name": fld.name, "type": str(fld.type)} for fld in table.schema]
    summary = f"{path}: qdf v1 buffer, {len(buf):,} bytes, {table.num_rows:,} rows, header flags {buf[4]:#04x}"
    return {"summary": f"{summary} ({flags})", "path": path, "format": "qdf1", "bytes": len(buf),
            "rows": table.num_rows, "schema": schema, "columns": explain(buf)}


def _inspect_stream(path: str) -> dict[str, Any]:
    """A qdf stream (StreamWriter): message count and, when the messages are records, their schema."""
    from collections import Counter

    from .stream import StreamReader

    kinds: Counter[str] = Counter()
    rows = 0
    with StreamReader(path) as r:
        for value in r:
            if isinstance(value, dict):
                kinds["record"] += 1
                rows += 1
            elif isinstance(value, list) and all(isinstance(v, dict) for v in value):
                kinds["list of records"] += 1
                rows += len(value)
            else:
                kinds[type(value).__name__] += 1
        n, size, flags = r.messages, r.offset, r.flags
    schema: list[dict[str, str]] = []
    if n and set(kinds) <= {"record", "list of records"}:
        with StreamReader(path) as r:
            table = r.read_all(output="arrow")
        schema = [{"name": fld.name, "type": str(fld.type)} for fld in table.schema]
    plural = {"record": "records", "list of records": "lists of records"}
    made_of = ", ".join(f"{c:,} {k if c == 1 else plural.get(k, k + ' values')}"
                        for k, c in kinds.most_common()) or "no messages"
    summary = (f"{path}: qdf stream, {size:,} bytes, {n:,} message{'s' if n != 1 else ''} ({made_of}), "
               f"{rows:,} rows, header flags {flags:#04x}")
    return {"summary": summary, "path": path, "format": "qdf-stream", "bytes": size, "messages": n,
            "rows": rows, "schema": schema, "columns": None}


def _cmd_version(args: argparse.Namespace) -> int:
    from . import __version__

    print(__version__)
    return 0


def _cmd_warmup(args: argparse.Namespace) -> int:
    from qdf_kernels import warmup

    def progress(name: str, seconds: float) -> None:
        if not args.quiet:
            print(f"  {name:<12} {seconds:6.2f} s", flush=True)

    if not args.quiet:
        print("compiling qdf kernels (cached on disk after the first run)...", flush=True)
    total = warmup(progress)
    print(f"kernels ready in {total:.2f} s")
    return 0


# ----------------------------------------------------------------------------- main


def _positive(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, not {v}")
    return v


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="qdf", description="qdf v1 columnar batches and .qdf files")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("inspect", help="schema, row groups, per-column codecs and sizes of a .qdf file or v1 buffer")
    p.add_argument("file")
    p.add_argument("--sample", type=_positive, metavar="N",
                   help="take codecs and bytes from the first N row groups only (faster on big files)")
    p.add_argument("--row-groups", type=int, default=20, metavar="N",
                   help="list at most N row groups, first and last (0: all; default 20)")
    p.add_argument("--max-width", type=_positive, default=60, help="truncate cells to this many characters")
    p.add_argument("--json", action="store_true", help="print the same information as JSON")
    p.set_defaults(func=_cmd_inspect)

    p = sub.add_parser("head", help="print the first rows, optionally of some columns and matching rows")
    p.add_argument("file")
    p.add_argument("-n", type=int, default=10, help="number of rows (default 10)")
    p.add_argument("--columns", metavar="A,B", help="comma-separated columns to show")
    p.add_argument("--where", metavar="EXPR", help="filter, e.g. \"code >= 500 and level == 'ERROR'\"")
    p.add_argument("--from", dest="from_", choices=FORMATS, help="input format (default: from the name)")
    p.add_argument("--max-width", type=_positive, default=50, help="truncate cells to this many characters")
    p.set_defaults(func=_cmd_head)

    p = sub.add_parser("convert", help="convert between .qdf, Parquet, Arrow IPC, CSV/TSV and JSON lines")
    p.add_argument("input", metavar="IN")
    p.add_argument("output", metavar="OUT")
    p.add_argument("--from", dest="from_", choices=FORMATS, help="input format (default: from the name or bytes)")
    p.add_argument("--to", choices=FORMATS, help="output format (default: from the name)")
    p.add_argument("--mode", choices=_MODES, help="qdf encoding mode for .qdf output (default: balanced)")
    p.add_argument("--row-group-size", type=_positive, metavar="ROWS",
                   help="rows per row group (.qdf, Parquet) or record batch (Arrow)")
    p.add_argument("--compression", choices=("none", "snappy", "gzip", "brotli", "lz4", "zstd"),
                   help="Parquet codec (default snappy) or Arrow IPC codec (lz4, zstd; default none)")
    p.add_argument("--columns", metavar="A,B", help="convert only these columns")
    p.add_argument("--where", metavar="EXPR", help="convert only the rows that match")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress bar on stderr (default: only when stderr is a terminal)")
    p.set_defaults(func=_cmd_convert)

    warm = sub.add_parser("warmup", help="compile (or load from the on-disk cache) every Numba kernel")
    warm.add_argument("-q", "--quiet", action="store_true", help="print only the total time")
    warm.set_defaults(func=_cmd_warmup)
    sub.add_parser("version", help="print the package version").set_defaults(func=_cmd_version)
    return parser


def _expected_errors() -> tuple[type[BaseException], ...]:
    import pyarrow as pa

    from .errors import QdfError

    return (QdfError, OSError, pa.ArrowException)


def _one_line(exc: BaseException) -> str:
    text = " ".join(s.strip() for s in str(exc).splitlines() if s.strip())
    if isinstance(exc, OSError) and exc.strerror and not type(exc).__module__.startswith("pyarrow"):
        return text  # "[Errno 2] No such file or directory: 'x.csv'"
    return f"{type(exc).__name__}: {text}"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``qdf`` command line; returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        return int(args.func(args))
    except BrokenPipeError:  # `qdf head ... | head -1`: the reader left; not an error
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError, AttributeError):
            pass
        return 0
    except KeyboardInterrupt:
        print(f"qdf {args.command}: interrupted", file=sys.stderr)
        return 130
    except _expected_errors() as exc:
        print(f"qdf {args.command}: error: {_one_line(exc)}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
