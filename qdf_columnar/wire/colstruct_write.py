"""Write a table as an ``EF`` tagColStruct columnar container (qdf-wire-v1.md §2.5).

Layout: ``EF uvarint(M) uvarint(0) uvarint(K) K x (name, kindByte) [K x u32 body
length] K bodies``. Names go through the Dense string path *before* any body, so the
intern ids they take match what a decoder replays. Nullable columns (kind | 0x80)
carry a presence mask then the present-only values. Column bodies follow the
balanced-mode pickers (QPack ints/bools, raw floats, string blocks, sec+nsec times).
"""

from __future__ import annotations

import struct

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from qdf_kernels import columns as ck

from ..codecs.qpack import encode_bool_array, encode_float_array, encode_int_array
from ..codecs.zone import MIN_ROWS as ZONE_MIN_ROWS
from ..codecs.zone import write_zone_chunk
from ..columns.chunked import one_array
from ..columns.decimals import scaled_int64
from ..columns.kinds import kind_for
from ..errors import EncodeError
from ..format.tags import NULLABLE, ColKind, ContainerTag
from ..format.varint import write_uvarint
from ..options import Options
from .bits import pack_mask
from .numeric_arrow import bits_dtype, read_only
from .residual import is_residual_type, write_residual_rows
from .schema_note import build_note
from .strcol_write import write_string_column

#: The reference caps columnar containers at 2**24 rows; larger tables are row groups.
MAX_COLUMNAR_ROWS = 1 << 24

_NS_PER = {"s": 1_000_000_000, "ms": 1_000_000, "us": 1_000, "ns": 1}
_PER_SEC = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}


def write_table_columnar(out: bytearray, table: pa.Table, ctx, *, note_extra: dict | None = None,
                         bodies: dict[str, bytes] | None = None) -> None:
    """Append ``table`` as one EF container (or F7 when it has nested columns).

    Sets ``ctx.col_index_used`` when a column index was written (EF only: v1 has no
    column index for hybrid containers). ``note_extra`` adds entries to the schema
    note (which is then always written): the shredded layout's level-0 description,
    the dictionary columns. ``bodies`` holds finished bodies of some columns, by name,
    that do not depend on the Dense state (written by the dictionary trials).
    """
    bodies = bodies or {}
    n = table.num_rows
    if n > MAX_COLUMNAR_ROWS:
        raise EncodeError(
            f"a qdf v1 columnar batch holds at most {MAX_COLUMNAR_ROWS} rows, this table has {n}; "
            "split it into batches (row groups)"
        )
    names = table.column_names
    arrays = [one_array(c) for c in table.columns]
    kinds = [
        ColKind.RESIDUAL if is_residual_type(a.type) else kind_for(nm, a.type) for nm, a in zip(names, arrays)
    ]
    hybrid = ColKind.RESIDUAL in kinds
    note = build_note(table, kinds, extra=note_extra)
    nullable = [k != ColKind.RESIDUAL and arr.null_count > 0 for k, arr in zip(kinds, arrays)]

    with_index = bool(ctx.opts & 0x80) and not hybrid  # Options.COLUMN_INDEX
    out.append(ContainerTag.HYBRID_COL_STRUCT if hybrid else ContainerTag.COL_STRUCT)
    write_uvarint(out, n)
    write_uvarint(out, 0)  # shape id 0: the shape is declared inline
    write_uvarint(out, len(names) + (note is not None))
    for name, kind, nul in zip(names, kinds, nullable):
        ctx.dense.write_str(out, name.encode("utf-8"))
        out.append(kind | (NULLABLE if nul else 0))
    if note is not None:
        ctx.dense.write_str(out, note.encode("utf-8"))
        out.append(ColKind.INT)

    bodies_out: list[bytes | bytearray] = []
    for name, arr, kind, nul in zip(names, arrays, kinds, nullable):
        if kind == ColKind.RESIDUAL:
            continue
        done = bodies.get(name)
        if done is not None:
            bodies_out.append(done)
            continue
        body = bytearray()
        try:
            write_body(body, arr, kind, nul, ctx)
        except EncodeError as exc:
            raise exc.with_location(column=name) from None
        bodies_out.append(body)
    if note is not None:
        body = bytearray()
        encode_int_array(body, np.zeros(n, dtype=np.int64))
        bodies_out.append(body)
    if with_index:
        for body in bodies_out:
            if len(body) > 0xFFFFFFFF:
                raise EncodeError("a column body exceeds 4 GiB, the u32 column index cannot address it")
            out += struct.pack("<I", len(body))
        ctx.col_index_used = True
    for body in bodies_out:
        out += body
    if hybrid:
        residual = [(nm, a) for nm, a, k in zip(names, arrays, kinds) if k == ColKind.RESIDUAL]
        try:
            write_residual_rows(out, [a for _, a in residual], ctx)
        except EncodeError as exc:
            raise exc.with_location(column=residual[0][0] if len(residual) == 1 else None) from None


def _present(arr: pa.Array, nullable: bool) -> pa.Array:
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    if not nullable:
        return arr
    width = bits_dtype(arr.type)
    bufs = arr.buffers()
    if width is None or bufs[0] is None or bufs[1] is None:
        return arr.drop_null()
    # A fixed-width column's present values by one kernel pass: 3-4x pyarrow's filter,
    # and the dictionary trial writes two or three bodies of every nullable column.
    values = read_only(np.frombuffer(bufs[1], dtype=width, count=arr.offset + len(arr))[arr.offset:])
    out = np.empty(len(arr) - arr.null_count + 1, dtype=width)
    k = int(ck.gather_present_into(values, read_only(np.frombuffer(bufs[0], dtype=np.uint8)), np.int64(arr.offset),
                                   out))
    return pa.Array.from_buffers(arr.type, k, [None, pa.py_buffer(out[:k])])


def _numpy(arr: pa.Array, dtype: type) -> np.ndarray:
    """Present values as a contiguous numpy array of ``dtype`` (temporal types by their storage)."""
    t = arr.type
    if pa.types.is_decimal(t):
        return scaled_int64(arr)
    if pa.types.is_date32(t) or pa.types.is_time32(t):
        arr = arr.view(pa.int32())
    elif pa.types.is_date64(t) or pa.types.is_time64(t) or pa.types.is_duration(t) or pa.types.is_timestamp(t):
        arr = arr.view(pa.int64())
    return np.ascontiguousarray(arr.to_numpy(zero_copy_only=False), dtype=dtype)


def _zoned(ctx, kind: int, nullable: bool, n: int) -> bool:
    """Options.ZONE_MAP chunks non-null int / uint / float64 columns of >= 512 rows (as the reference)."""
    return bool(ctx.opts & Options.ZONE_MAP) and not nullable and n >= ZONE_MIN_ROWS and kind in (
        ColKind.INT, ColKind.UINT, ColKind.FLOAT64)


def write_body(body: bytearray, arr: pa.Array, kind: int, nullable: bool, ctx, *,
               strings_enc: pa.DictionaryArray | None = None, limit: int | None = None) -> None:
    """Append one column body of ``kind`` (presence mask first when ``nullable``).
    ``strings_enc``: ``arr.dictionary_encode()`` of a string column, when the caller has it.
    ``limit``: the caller keeps the body only when it is shorter than this many bytes, so
    a string or float column need not try the forms that cannot be (an FSST table is
    not trained, an ALP-RD cut not searched, for a column whose dictionary form is
    already smaller); the body is then whatever the other forms give. Without it, or
    whenever the smallest form is shorter than it, the smallest form."""
    start = len(body)
    if _zoned(ctx, kind, nullable, len(arr)):
        dtype = {ColKind.INT: np.int64, ColKind.UINT: np.uint64, ColKind.FLOAT64: np.float64}[kind]
        write_zone_chunk(body, _numpy(arr, dtype), compress=bool(ctx.opts & Options.GORILLA_FLOAT))
        return
    if nullable:
        valid = np.asarray(pc.is_valid(arr))
        body += pack_mask(valid)
    vals = _present(arr, nullable)
    # Like the reference, no per-block (F0) form under the entropy pass: its offset
    # table entropy-codes badly.
    block = not ctx.opts & Options.RANS
    local = bool(ctx.opts & Options.CASCADE)  # also per-block deltas where windows step narrowly
    aligned = bool(ctx.opts & Options.ALIGNED)  # whole-byte widths for a byte-wise stage after the body
    if kind == ColKind.INT:
        np_vals = _numpy(vals, np.int64) if not pa.types.is_integer(vals.type) else _narrow(vals)
        encode_int_array(body, np_vals, block=block, local=local, aligned=aligned)
    elif kind == ColKind.UINT:
        encode_int_array(body, _narrow(vals), block=block, local=local, aligned=aligned)
    elif kind == ColKind.FLOAT64:
        # Options.GORILLA_FLOAT (compression mode) runs the float picker: ALP, Gorilla, Chimp128 or raw;
        # Options.CASCADE alone (balanced preset) only its memory-speed schemes, ALP / ALP-RD or raw.
        full = bool(ctx.opts & Options.GORILLA_FLOAT)
        encode_float_array(body, _numpy(vals, np.float64), compress=full or bool(ctx.opts & Options.CASCADE),
                           light=not full, aligned=aligned,
                           limit=None if limit is None else limit - (len(body) - start))
    elif kind == ColKind.FLOAT32:
        f32 = _numpy(vals.cast(pa.float32()) if pa.types.is_float16(vals.type) else vals, np.float32)
        encode_int_array(body, f32.view(np.uint32), block=block)  # raw bits through the uint picker
    elif kind == ColKind.BOOL:
        encode_bool_array(body, _numpy(vals, np.bool_))
    elif kind == ColKind.STRING:
        if pa.types.is_null(vals.type):
            vals = pa.array([], type=pa.large_string())
        # CASCADE: block forms only, so no later column depends on this one's intern state,
        # and FSST in balanced too (its decode is a table lookup per code, memory speed).
        # The present rows' encoding is the whole column's without its nulls: the same
        # first-seen table (nulls are never in it).
        enc = strings_enc.drop_null() if strings_enc is not None and nullable else strings_enc
        write_string_column(body, vals, ctx.dense, fsst=bool(ctx.opts & (Options.FSST | Options.CASCADE)),
                            independent=bool(ctx.opts & Options.CASCADE), enc=enc,
                            limit=None if limit is None else limit - (len(body) - start))
    elif kind == ColKind.TIME:
        sec, nsec = split_timestamps(_numpy(vals, np.int64), vals.type.unit)
        encode_int_array(body, sec, block=block, local=local, aligned=aligned)
        encode_int_array(body, nsec, block=block, aligned=aligned)
    else:  # pragma: no cover - kind_for only returns the kinds above
        raise EncodeError(f"unexpected column kind {kind}")


def _narrow(vals: pa.Array) -> np.ndarray:
    """Integer values in their own width: the picker widens and applies the native-raw floor."""
    return np.ascontiguousarray(vals.to_numpy(zero_copy_only=False))


def split_timestamps(v: np.ndarray, unit: str) -> tuple[np.ndarray, np.ndarray]:
    """Timestamps in ``unit`` -> (Unix seconds int64, nanoseconds-in-second uint64)."""
    per = _PER_SEC[unit]
    sec = np.floor_divide(v, per)
    sub = v - sec * per
    return sec.astype(np.int64), (sub * _NS_PER[unit]).astype(np.uint64)
