"""Columnar peers: Parquet and Arrow IPC (pyarrow), Vortex (vortex-data), Lance (pylance).

All four store ``fx.table`` as is (nested list / struct / map columns included) and
decode to a pyarrow Table. Where each needs a filesystem path:

* Parquet and IPC write to and read from memory.
* Vortex: ``vortex.io.write`` (and ``VortexWriteOptions.compact().write``) takes a path,
  so encode writes a temp file (on the RAM-backed /dev/shm when there is one) and returns
  its bytes, exactly the file; decode reads those bytes from memory with
  ``vortex.open_readable(BytesIO)``.
* Lance: a dataset is a directory (data file, manifest, transaction file, version hint),
  and there is no in-memory reader. Encode writes the dataset to a temp dir and packs
  every file into one blob (per file: u16 path length, path, u64 size, data), so
  ``len(blob)`` is the bytes on disk plus ~10 bytes + path length of framing per file
  (about 4 files). Decode, select and where unpack the blob into a fresh temp dir first;
  on tmpfs that is a memcpy, and it is part of the timed decode.
"""

from __future__ import annotations

import io
import os
import shutil
import struct
import tempfile
from typing import Any

import pyarrow as pa
import pyarrow.ipc as ipc
import pyarrow.parquet as pq

from bench.fixtures.base import Fixture

from .base import Peer, assert_same, canon_table, is_large

__all__ = ["ParquetPeer", "IpcPeer", "VortexPeer", "VortexCompactPeer", "LancePeer", "check_table", "dnf_mask"]

_TMP_ROOT = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None


def check_table(peer: str, fx: Fixture, decoded: Any, expected: pa.Table | None = None) -> None:
    """Compare a decoded table with ``fx.table`` (names, row count, values bit-exact).

    Values are compared through ``to_pylist`` so string_view vs string (Vortex) or
    int32 vs int64 storage does not count as loss; only values do.
    """
    want = fx.table if expected is None else expected
    if not isinstance(decoded, pa.Table):
        raise AssertionError(f"{peer}: decoded a {type(decoded).__name__}, expected a pyarrow.Table")
    if decoded.column_names != want.column_names:
        raise AssertionError(f"{peer}: columns {decoded.column_names} != {want.column_names}")
    if decoded.num_rows != want.num_rows:
        raise AssertionError(f"{peer}: {decoded.num_rows} rows, expected {want.num_rows}")
    if is_large(fx) and _tables_bit_equal(want, decoded):
        return
    assert_same(peer, fx.key, canon_table(want), canon_table(decoded))


def _tables_bit_equal(want: pa.Table, got: pa.Table) -> bool:
    """Arrow equality (after a lossless cast to ``want``'s types), floats compared by bits."""
    try:
        got = got.cast(want.schema) if got.schema != want.schema else got
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        return False
    if not got.equals(want):  # also false for NaN, which the exact path then handles
        return False
    return all(_float_bits_equal(want.column(i).combine_chunks(), got.column(i).combine_chunks())
               for i in range(want.num_columns))


def _float_bits_equal(a: pa.Array, b: pa.Array) -> bool:
    """Every float leaf (inside lists / structs / maps too) equal bit for bit (-0.0 vs 0.0)."""
    t = a.type
    if pa.types.is_floating(t):
        width = {16: pa.uint16(), 32: pa.uint32(), 64: pa.uint64()}[t.bit_width]
        return a.view(width).equals(b.view(width))
    if pa.types.is_struct(t):
        return all(_float_bits_equal(a.field(i), b.field(i)) for i in range(t.num_fields))
    if pa.types.is_map(t):
        return _float_bits_equal(a.keys, b.keys) and _float_bits_equal(a.items, b.items)
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return _float_bits_equal(a.flatten(), b.flatten())
    return True


def dnf_mask(table: pa.Table, dnf: list[tuple[str, str, Any]]) -> pa.Table:
    """Reference implementation of a pyarrow-style AND filter (for tests and checks)."""
    return table.filter(pq.filters_to_expression(list(dnf))) if dnf else table


def _float_leaf_paths(schema: pa.Schema) -> tuple[list[str], list[str]]:
    """Parquet leaf paths of float columns and of all others (nested ones included)."""
    floats: list[str] = []
    others: list[str] = []

    def walk(t: pa.DataType, path: str) -> None:
        if pa.types.is_struct(t):
            for i in range(t.num_fields):
                walk(t.field(i).type, f"{path}.{t.field(i).name}")
        elif pa.types.is_map(t):
            walk(t.key_type, f"{path}.key_value.key")
            walk(t.item_type, f"{path}.key_value.value")
        elif pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
            walk(t.value_type, f"{path}.list.element")
        elif pa.types.is_floating(t):
            floats.append(path)
        else:
            others.append(path)

    for f in schema:
        walk(f.type, f.name)
    return floats, others


class ParquetPeer(Peer):
    """Parquet via pyarrow, one row group, statistics on (pyarrow's defaults otherwise)."""

    family = "columnar"

    def __init__(self, name: str, compression: str, level: int | None = None, bss: bool = False) -> None:
        self.name = name  # type: ignore[misc]  # per-instance: three configurations of one class
        self.compression = compression
        self.level = level
        self.bss = bss

    def encode(self, fx: Fixture) -> bytes:
        kw: dict[str, Any] = {"compression": self.compression}
        if self.level is not None:
            kw["compression_level"] = self.level
        if self.bss:
            floats, others = _float_leaf_paths(fx.table.schema)
            if floats:
                # Dictionary encoding wins over byte-stream-split when both apply, so
                # floats are taken out of the dictionary set for BSS to take effect.
                kw["use_byte_stream_split"] = floats
                kw["use_dictionary"] = others
        sink = pa.BufferOutputStream()
        pq.write_table(fx.table, sink, row_group_size=max(fx.table.num_rows, 1), **kw)
        return sink.getvalue().to_pybytes()

    def decode(self, blob: bytes) -> pa.Table:
        return pq.read_table(pa.BufferReader(blob), use_threads=False)

    def check(self, fx: Fixture, decoded: Any) -> None:
        check_table(self.name, fx, decoded)

    def select(self, blob: bytes, columns: list[str] | tuple[str, ...]) -> pa.Table:
        return pq.read_table(pa.BufferReader(blob), columns=list(columns), use_threads=False)

    def where(self, blob: bytes, dnf: list[tuple[str, str, Any]]) -> pa.Table:
        # filters= prunes row groups by statistics, then filters rows while reading.
        return pq.read_table(pa.BufferReader(blob), filters=list(dnf) or None, use_threads=False)


class IpcPeer(Peer):
    """Arrow IPC file format (random-access footer), optionally lz4/zstd body compression."""

    family = "columnar"

    def __init__(self, name: str, compression: str | None) -> None:
        self.name = name  # type: ignore[misc]
        self.compression = compression

    def encode(self, fx: Fixture) -> bytes:
        sink = pa.BufferOutputStream()
        opts = ipc.IpcWriteOptions(compression=self.compression)
        with ipc.new_file(sink, fx.table.schema, options=opts) as w:
            w.write_table(fx.table)
        return sink.getvalue().to_pybytes()

    def decode(self, blob: bytes) -> pa.Table:
        return ipc.open_file(pa.BufferReader(blob)).read_all()

    def check(self, fx: Fixture, decoded: Any) -> None:
        check_table(self.name, fx, decoded)

    def select(self, blob: bytes, columns: list[str] | tuple[str, ...]) -> pa.Table:
        # IpcReadOptions.included_fields skips the other columns' buffers (and their
        # decompression); it takes top-level field indices, in file order.
        schema = ipc.open_file(pa.BufferReader(blob)).schema
        idx = [schema.get_field_index(c) for c in columns]
        opts = ipc.IpcReadOptions(included_fields=sorted(idx))
        t = ipc.open_file(pa.BufferReader(blob), options=opts).read_all()
        return t.select(list(columns))

    # where: the IPC format has no statistics or pushdown, so None (the runner shows n/a).


# ----------------------------------------------------------------------------- Vortex


def _vortex_expr(dnf: list[tuple[str, str, Any]], dtypes: dict[str, Any]) -> Any:
    """pyarrow-style AND list -> vortex.expr; literals take the column's dtype.

    Vortex compares only equal dtypes (an int32 column against a Python int, which
    defaults to i64, is an error), so each literal is built with its column's dtype.
    """
    import vortex.expr as ve

    def term(col: str, op: str, val: Any) -> Any:
        c = ve.column(col)

        def lit(v: Any) -> Any:
            return ve.literal(dtypes[col], v)

        if op in ("==", "="):
            return c == lit(val)
        if op == "!=":
            return c != lit(val)
        if op == "<":
            return c < lit(val)
        if op == "<=":
            return c <= lit(val)
        if op == ">":
            return c > lit(val)
        if op == ">=":
            return c >= lit(val)
        if op in ("in", "not in"):
            e = ve.or_collect([c == lit(v) for v in val])
            return ve.not_(e) if op == "not in" else e
        raise ValueError(f"vortex: unsupported filter op {op!r}")

    if not dnf:
        return None
    return ve.and_collect([term(*t) for t in dnf])


class VortexPeer(Peer):
    """Vortex file format (vortex-data): default write options and compressor."""

    name = "vortex"
    family = "columnar"
    requires = (("vortex", "vortex-data"),)

    def encode(self, fx: Fixture) -> bytes:
        import vortex as vx

        with tempfile.TemporaryDirectory(dir=_TMP_ROOT) as d:
            path = os.path.join(d, "batch.vortex")
            vx.io.write(fx.table, path)
            with open(path, "rb") as f:
                return f.read()

    def _open(self, blob: bytes) -> Any:
        import vortex as vx

        return vx.open_readable(io.BytesIO(blob))

    def decode(self, blob: bytes) -> pa.Table:
        return self._open(blob).to_arrow().read_all()

    def check(self, fx: Fixture, decoded: Any) -> None:
        check_table(self.name, fx, decoded)

    def select(self, blob: bytes, columns: list[str] | tuple[str, ...]) -> pa.Table:
        return self._open(blob).to_arrow(list(columns)).read_all()

    def where(self, blob: bytes, dnf: list[tuple[str, str, Any]]) -> pa.Table:
        import vortex as vx

        f = self._open(blob)
        # Via the Arrow schema: StructDType.fields() refuses files with a map column.
        schema = f.dtype.to_arrow_schema()
        dtypes = {c: vx.DType.from_arrow(schema.field(c).type) for c, _, _ in dnf}
        return f.to_arrow(expr=_vortex_expr(dnf, dtypes)).read_all()


class VortexCompactPeer(VortexPeer):
    """Vortex file format written with the compact write options.

    ``vortex.io.VortexWriteOptions.compact()`` ("prioritize small size over
    read-throughput and read-latency"; vortex-data 0.93 has it) instead of the default
    options that ``vortex.io.write`` uses. Reading is the same as :class:`VortexPeer`.
    A vortex-data without that API reports it through :meth:`available`.
    """

    name = "vortex-compact"

    def available(self) -> str | None:
        reason = super().available()
        if reason:
            return reason
        import vortex.io as vio

        opts = getattr(vio, "VortexWriteOptions", None)
        if opts is None or not hasattr(opts, "compact"):
            from importlib.metadata import version

            return f"vortex-data {version('vortex-data')} has no vortex.io.VortexWriteOptions.compact()"
        return None

    def encode(self, fx: Fixture) -> bytes:
        import vortex.io as vio

        with tempfile.TemporaryDirectory(dir=_TMP_ROOT) as d:
            path = os.path.join(d, "batch.vortex")
            vio.VortexWriteOptions.compact().write(fx.table, path)
            with open(path, "rb") as f:
                return f.read()


# ----------------------------------------------------------------------------- Lance

_U16 = struct.Struct("<H")
_U64 = struct.Struct("<Q")


def _pack_dir(root: str) -> bytes:
    parts: list[bytes] = []
    for d, _, files in sorted(os.walk(root)):
        for name in sorted(files):
            full = os.path.join(d, name)
            rel = os.path.relpath(full, root).encode()
            with open(full, "rb") as f:
                data = f.read()
            parts += [_U16.pack(len(rel)), rel, _U64.pack(len(data)), data]
    return b"".join(parts)


def _unpack_dir(blob: bytes, root: str) -> None:
    mv = memoryview(blob)
    pos = 0
    while pos < len(mv):
        (n,) = _U16.unpack_from(mv, pos)
        rel = bytes(mv[pos + 2 : pos + 2 + n]).decode()
        pos += 2 + n
        (size,) = _U64.unpack_from(mv, pos)
        pos += 8
        full = os.path.join(root, rel)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb") as f:
            f.write(mv[pos : pos + size])
        pos += size


def _sql_ident(name: str) -> str:
    # Backticks keep case (Go field names are CamelCase) and allow any character.
    return "`" + name.replace("`", "``") + "`"


def _sql_literal(v: Any) -> str:
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, int | float):
        return repr(v)
    if isinstance(v, str):
        return "'" + v.replace("'", "''") + "'"
    raise ValueError(f"lance: no SQL literal for {type(v).__name__}")


def dnf_to_sql(dnf: list[tuple[str, str, Any]]) -> str | None:
    """Translate a pyarrow-style AND list to a Lance (DataFusion) SQL predicate."""
    terms: list[str] = []
    for col, op, val in dnf:
        c = _sql_ident(col)
        if op in ("==", "="):
            terms.append(f"{c} = {_sql_literal(val)}")
        elif op in ("!=", "<", "<=", ">", ">="):
            terms.append(f"{c} {op} {_sql_literal(val)}")
        elif op in ("in", "not in"):
            items = ", ".join(_sql_literal(v) for v in val)
            terms.append(f"{c} {op.upper()} ({items})")
        else:
            raise ValueError(f"lance: unsupported filter op {op!r}")
    return " AND ".join(f"({t})" for t in terms) or None


class LancePeer(Peer):
    """Lance dataset (pylance), default write options (stable file version)."""

    name = "lance"
    family = "columnar"
    requires = (("lance", "pylance"),)

    def encode(self, fx: Fixture) -> bytes:
        import lance

        with tempfile.TemporaryDirectory(dir=_TMP_ROOT) as d:
            path = os.path.join(d, "batch.lance")
            lance.write_dataset(fx.table, path)
            return _pack_dir(path)

    def _read(self, blob: bytes, **kw: Any) -> pa.Table:
        import lance

        d = tempfile.mkdtemp(dir=_TMP_ROOT)
        try:
            _unpack_dir(blob, d)
            return lance.dataset(d).to_table(**kw)
        finally:
            shutil.rmtree(d, ignore_errors=True)

    def decode(self, blob: bytes) -> pa.Table:
        return self._read(blob)

    def check(self, fx: Fixture, decoded: Any) -> None:
        check_table(self.name, fx, decoded)

    def select(self, blob: bytes, columns: list[str] | tuple[str, ...]) -> pa.Table:
        return self._read(blob, columns=list(columns))

    def where(self, blob: bytes, dnf: list[tuple[str, str, Any]]) -> pa.Table:
        return self._read(blob, filter=dnf_to_sql(dnf))
