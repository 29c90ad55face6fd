"""Encode row-major qdf v1 values (the msgpack-shaped tag table) plus :func:`dumps`.

:func:`write_value` picks the narrowest tag for each Python value and recurses
through lists, tuples, dicts and numpy arrays; lists of same-keyed dicts are
offered to the columnar writer (lazy import of :mod:`.colstruct`) and 1-D
arrays go through QPack under Options.QPACK. The full type mapping is in the
docstring of :mod:`qdf_columnar.wire.values`; decoding is in :mod:`.values_read`.
"""

from __future__ import annotations

import dataclasses
import struct
from datetime import datetime, timezone
from typing import Any

import numpy as np

from ..errors import EncodeError, UnsupportedTypeError
from ..format.header import ENTROPY_MIN_GAIN_WITH_INDEX, finish_body, pack_header
from ..format.tags import DenseTag, Flag, Tag
from ..format.varint import write_uvarint, zigzag
from ..options import Mode, Options, columnar_enabled, header_flags, parse_mode
from .context import EncodeContext, ensure_recursion_room
from .dense import DenseWriter

__all__ = [
    "write_value",
    "write_string",
    "write_int",
    "write_timestamp",
    "dumps",
    "COLUMNAR_MIN_ROWS",
    "struct_fields",
    "struct_fields_of",
    "try_columnar",
    "write_fast",
]

#: Lists of at least this many same-keyed dicts are offered to the columnar writer (Go columnarMinElems).
COLUMNAR_MIN_ROWS = 16

_F32 = struct.Struct("<f")
_F64 = struct.Struct("<d")
_NIL = int(Tag.NIL)
_FALSE = int(Tag.FALSE)
_TRUE = int(Tag.TRUE)
_FLOAT32 = int(Tag.FLOAT32)
_FLOAT64 = int(Tag.FLOAT64)
_FIXARR = int(Tag.FIXARR)
_MAP_SHAPE = int(DenseTag.MAP_SHAPE)
_TIMESTAMP = int(Tag.TIMESTAMP)

#: Field values whose encoding holds no string, so a field's delta base survives them
#: (subclasses included: an IntEnum is written as its int).
_BASE_NEUTRAL = (type(None), int, float, datetime, np.number, np.bool_, np.datetime64)

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_EPOCH_NAIVE = datetime(1970, 1, 1)
_I64_MIN = -(1 << 63)
_U64_MAX = (1 << 64) - 1


def _unsupported(what: str) -> UnsupportedTypeError:
    err = UnsupportedTypeError(what)
    err.qdf_base = what  # type: ignore[attr-defined]
    err.qdf_path = []  # type: ignore[attr-defined]
    return err


def _with_path(err: UnsupportedTypeError, segment: str) -> UnsupportedTypeError:
    """Re-raise ``err`` with one more path segment in front (built while unwinding)."""
    base = getattr(err, "qdf_base", err.reason)
    path = [segment, *getattr(err, "qdf_path", [])]
    new = UnsupportedTypeError(f"{base} at {''.join(path)}")
    new.qdf_base = base  # type: ignore[attr-defined]
    new.qdf_path = path  # type: ignore[attr-defined]
    return new


def write_int(out: bytearray, v: int) -> None:
    """Narrowest form of ``v``, exactly as Go ``WriteInt`` (v < 0) / ``WriteUint`` (v >= 0)."""
    if v >= 0:
        if v <= 0x7F:
            out.append(v)
        elif v <= 0xFF:
            out += bytes((Tag.UINT8, v))
        elif v <= 0xFFFF:
            out.append(Tag.UINT16)
            out += v.to_bytes(2, "little")
        elif v <= 0xFFFFFFFF:
            out.append(Tag.UINT32)
            out += v.to_bytes(4, "little")
        elif v <= _U64_MAX:
            out.append(Tag.UINT64)
            out += v.to_bytes(8, "little")
        else:
            raise _unsupported(f"int {v} does not fit in uint64")
    elif v >= -8:
        out.append(Tag.NEG_FIXINT | (-v - 1))
    elif v >= -0x80:
        out += bytes((Tag.INT8, v & 0xFF))
    elif v >= -0x8000:
        out.append(Tag.INT16)
        out += v.to_bytes(2, "little", signed=True)
    elif v >= -0x80000000:
        out.append(Tag.INT32)
        out += v.to_bytes(4, "little", signed=True)
    elif v >= _I64_MIN:
        out.append(Tag.INT64)
        out += v.to_bytes(8, "little", signed=True)
    else:
        raise _unsupported(f"int {v} does not fit in int64")


def write_timestamp(out: bytearray, sec: int, nsec: int) -> None:
    """``F3`` zigzag-uvarint(sec) uvarint(nsec) (Go WriteTimestamp)."""
    if not _I64_MIN <= sec < (1 << 63):
        raise _unsupported(f"timestamp {sec} s is outside the int64 seconds range")
    out.append(_TIMESTAMP)
    write_uvarint(out, zigzag(sec))
    write_uvarint(out, nsec)


_NS_PER_UNIT = {
    "W": 7 * 86400 * 10**9,
    "D": 86400 * 10**9,
    "h": 3600 * 10**9,
    "m": 60 * 10**9,
    "s": 10**9,
    "ms": 10**6,
    "us": 10**3,
    "ns": 1,
}
_SUB_NS = {"ps": 10**3, "fs": 10**6, "as": 10**9}


def _datetime_parts(obj: Any) -> tuple[int, int]:
    """(sec, nsec) since the Unix epoch for a datetime / pd.Timestamp / np.datetime64."""
    if isinstance(obj, np.datetime64):
        if np.isnat(obj):
            raise _unsupported("NaT (not-a-time) has no qdf timestamp form")
        unit, count = np.datetime_data(obj.dtype)
        if unit in ("Y", "M"):  # calendar units are not fixed-length: let numpy resolve them
            obj = obj.astype("datetime64[s]")
            unit, count = "s", 1
        if unit == "generic":
            raise _unsupported("np.datetime64 without a unit")
        ticks = int(obj.astype(np.int64)) * count
        if unit in _SUB_NS:
            ns = ticks // _SUB_NS[unit]
        else:
            ns = ticks * _NS_PER_UNIT[unit]
        return divmod(ns, 10**9)
    if hasattr(obj, "nanosecond") and hasattr(obj, "value"):  # pd.Timestamp: ns since epoch (UTC for aware)
        try:
            ns = int(obj.value)
        except (ValueError, OverflowError, AttributeError) as exc:  # NaT
            raise _unsupported(f"{type(obj).__name__} {obj!r} has no qdf timestamp form") from exc
        return divmod(ns, 10**9)
    if obj.tzinfo is None or obj.utcoffset() is None:
        delta = obj - _EPOCH_NAIVE  # naive datetimes are taken to be UTC
    else:
        delta = obj - _EPOCH
    return delta.days * 86400 + delta.seconds, delta.microseconds * 1000


_FIELDS_CACHE: dict[type, tuple[tuple[str, str], ...] | None] = {}


def struct_fields_of(t: type) -> tuple[tuple[str, str], ...] | None:
    """(map key, attribute) per field of a dataclass or msgspec-style Struct type, else None.

    A Struct's key is its encoded name (``rename=``), as msgspec writes it; a dataclass's
    key is the field name. Declaration order, as Go writes a struct.
    """
    if dataclasses.is_dataclass(t):
        return tuple((f.name, f.name) for f in dataclasses.fields(t))
    sf = getattr(t, "__struct_fields__", None)  # msgspec.Struct, without importing msgspec
    if isinstance(sf, tuple) and all(isinstance(n, str) for n in sf):
        ef = getattr(t, "__struct_encode_fields__", sf)
        if not (isinstance(ef, tuple) and len(ef) == len(sf) and all(isinstance(n, str) for n in ef)):
            ef = sf
        return tuple(zip(ef, sf))
    return None


def struct_fields(obj: object) -> tuple[tuple[str, str], ...] | None:
    """:func:`struct_fields_of` the type of ``obj`` (cached per type)."""
    t = type(obj)
    try:
        return _FIELDS_CACHE[t]
    except KeyError:
        pass
    pairs = struct_fields_of(t)
    if len(_FIELDS_CACHE) < 4096:
        _FIELDS_CACHE[t] = pairs
    return pairs


def _write_seq_header(out: bytearray, n: int) -> None:
    if n <= 31:
        out.append(_FIXARR | n)
    elif n <= 0xFFFF:
        out.append(Tag.ARR16)
        out += n.to_bytes(2, "little")
    elif n <= 0xFFFFFFFF:
        out.append(Tag.ARR32)
        out += n.to_bytes(4, "little")
    else:
        raise _unsupported(f"a sequence of {n} elements exceeds the uint32 count limit")


def _enter(ctx: EncodeContext) -> None:
    ctx.depth += 1
    if ctx.depth > ctx.max_depth:
        ctx.depth = 0
        raise EncodeError(f"nesting deeper than {ctx.max_depth} levels (is there a reference cycle?)")


def try_columnar(out: bytearray, seq: list | tuple, ctx: EncodeContext) -> bool:
    """Offer a list of >= 16 records (dicts sharing one key order, or one dataclass / Struct
    type) to the columnar writer (§3.4); True when it wrote an EF container."""
    if len(seq) < COLUMNAR_MIN_ROWS or not columnar_enabled(ctx.opts):
        return False
    if type(seq[0]) is not dict:
        names = struct_fields(seq[0])
        t0 = type(seq[0])
        if names is None or not all(type(rec) is t0 for rec in seq):
            return False
        # A list of one dataclass / Struct type is a []struct: offer it as records.
        seq = [{key: getattr(rec, attr) for key, attr in names} for rec in seq]
    write_records_columnar = _colstruct_writer()  # it checks the shared key order itself
    if write_records_columnar is None:
        return False
    mark = len(out)
    if write_records_columnar(out, list(seq), ctx):
        return True
    del out[mark:]  # contract: a declining writer has written (and interned) nothing
    return False


def _write_list(out: bytearray, seq: list | tuple, ctx: EncodeContext) -> None:
    n = len(seq)
    if n >= COLUMNAR_MIN_ROWS and try_columnar(out, seq, ctx):
        return
    _enter(ctx)
    _write_seq_header(out, n)
    outer = ctx.in_repeated
    ctx.in_repeated = True
    for i, item in enumerate(seq):
        try:
            write_value(out, item, ctx)
        except UnsupportedTypeError as err:
            ctx.in_repeated = outer
            raise _with_path(err, f"[{i}]") from None
    ctx.in_repeated = outer
    ctx.depth -= 1


_COLSTRUCT_WRITER: list[Any] = []  # memo: [function or None]; a failed import is not cached by Python


def _colstruct_writer() -> Any:
    if not _COLSTRUCT_WRITER:
        try:
            from .colstruct import write_records_columnar
        except ImportError:
            write_records_columnar = None
        _COLSTRUCT_WRITER.append(write_records_columnar)
    return _COLSTRUCT_WRITER[0]


def _write_dict(out: bytearray, d: dict, ctx: EncodeContext) -> None:
    for k in d:
        if not isinstance(k, str):
            raise _unsupported(f"dict key {k!r} has type {type(k).__name__}; qdf map keys must be str")
    _enter(ctx)
    dense = ctx.dense
    opts = ctx.opts
    n = len(d)
    if n and dense.dense and opts & (Options.SHAPE_INTERN | Options.MAP_SHAPE):
        # Go struct shape interning: declare the ordered key tuple once (EC 00 N keys),
        # then EC id; values follow in key order either way.
        shape, new = dense.shape_id(tuple(d))
        out.append(_MAP_SHAPE)
        if new:
            out.append(0)
            write_uvarint(out, n)
            for k in d:
                dense.write_str(out, k.encode("utf-8"))
        else:
            write_uvarint(out, shape)
        # String fields of records in a list go through the per-field delta (Go
        # writeStringField, offered only in repeated context as there). Decoders advance
        # a field's base on every string-ish value of it, bytes included, so the encoder
        # tracks it on every value, repeated context or not. A container value leaves
        # the Go decoder's base at whatever string it read last inside; the encoder
        # forgets the base then, so the field's next string is written whole.
        fields = dense.field_states(shape, n) if dense.dense else None
        delta_ok = ctx.in_repeated
        for i, (k, v) in enumerate(d.items()):
            if fields is not None:
                if isinstance(v, str):
                    data = v.encode("utf-8")
                    if delta_ok:
                        dense.write_str_field(out, data, fields[i])
                    else:
                        dense.write_str(out, data)
                        fields[i].base = data
                    continue
                if isinstance(v, (bytes, bytearray, memoryview)):
                    data = bytes(v)
                    dense.write_str(out, data, binary=True)
                    fields[i].base = data
                    continue
                if not isinstance(v, _BASE_NEUTRAL):
                    fields[i].base = None
            try:
                write_value(out, v, ctx)
            except UnsupportedTypeError as err:
                raise _with_path(err, f"[{k!r}]") from None
        ctx.depth -= 1
        return
    if n <= 0xFF:
        out += bytes((Tag.MAP8, n))
    elif n <= 0xFFFF:
        out.append(Tag.MAP16)
        out += n.to_bytes(2, "little")
    else:
        out.append(Tag.MAP32)
        out += n.to_bytes(4, "little")
    for k, v in d.items():
        dense.write_str(out, k.encode("utf-8"))
        try:
            write_value(out, v, ctx)
        except UnsupportedTypeError as err:
            raise _with_path(err, f"[{k!r}]") from None
    ctx.depth -= 1


def _qpack_module() -> Any:
    try:
        from ..codecs import qpack
    except ImportError as exc:
        raise EncodeError("Options.QPACK needs qdf_columnar.codecs.qpack, which is not available") from exc
    return qpack


def _packed_scalars(tag: int, values: np.ndarray, fmt: str) -> bytes:
    """``tag value`` repeated for every element, built in one numpy pass."""
    rec = np.empty(len(values), dtype=[("t", "u1"), ("v", fmt)])
    rec["t"] = tag
    rec["v"] = values
    return rec.tobytes()


def _write_ndarray(out: bytearray, arr: np.ndarray, ctx: EncodeContext) -> None:
    if arr.ndim == 0:
        write_value(out, arr[()], ctx)
        return
    if arr.ndim > 1:
        _write_list(out, list(arr), ctx)  # rows are 1-D arrays: Go [][]T
        return
    kind = arr.dtype.kind
    if kind == "f" and arr.dtype.itemsize > 8:
        raise _unsupported(f"numpy array of {arr.dtype} (no qdf float wider than 64 bits)")
    if ctx.opts & Options.QPACK and kind in "biuf":
        qpack = _qpack_module()
        if kind == "b":
            qpack.encode_bool_array(out, arr)
        elif kind in "iu":
            qpack.encode_int_array(out, arr, block=not ctx.opts & Options.RANS)
        else:
            qpack.encode_float_raw(out, arr.astype(np.float32) if arr.dtype.itemsize < 4 else arr)
        return
    n = len(arr)
    if kind == "b":
        _write_seq_header(out, n)
        out += np.where(arr, _TRUE, _FALSE).astype(np.uint8).tobytes()
    elif kind == "f":
        _write_seq_header(out, n)
        if arr.dtype.itemsize == 8:
            out += _packed_scalars(_FLOAT64, arr, "<f8")
        else:
            out += _packed_scalars(_FLOAT32, arr, "<f4")
    elif kind in "iu":
        _write_seq_header(out, n)
        for v in arr.tolist():
            write_int(out, v)
    else:
        _write_list(out, list(arr), ctx)


def _write_other(out: bytearray, obj: object, ctx: EncodeContext) -> None:
    """Everything but the exact builtin types: numpy scalars, subclasses, dates, arrays."""
    if isinstance(obj, np.generic):
        if isinstance(obj, np.bool_):
            out.append(_TRUE if obj else _FALSE)
        elif isinstance(obj, np.integer):
            write_int(out, int(obj))
        elif isinstance(obj, (np.float32, np.float16)):
            out.append(_FLOAT32)
            out += np.float32(obj).astype("<f4").tobytes()  # the bits: float() would quiet a NaN
        elif isinstance(obj, np.float64):
            out.append(_FLOAT64)
            out += _F64.pack(float(obj))
        elif isinstance(obj, np.datetime64):
            write_timestamp(out, *_datetime_parts(obj))
        elif isinstance(obj, np.str_):
            ctx.dense.write_str(out, str(obj).encode("utf-8"))
        elif isinstance(obj, np.bytes_):
            ctx.dense.write_str(out, bytes(obj), binary=True)
        else:
            raise _unsupported(f"cannot encode a value of type numpy.{type(obj).__name__}")
    elif isinstance(obj, bool):
        out.append(_TRUE if obj else _FALSE)
    elif isinstance(obj, int):
        write_int(out, int(obj))
    elif isinstance(obj, float):
        out.append(_FLOAT64)
        out += _F64.pack(obj)
    elif isinstance(obj, str):
        # A str subclass (a str-valued Enum...) is its text, not its __str__ (as json and msgpack).
        ctx.dense.write_str(out, str.encode(obj, "utf-8"))
    elif isinstance(obj, (bytes, bytearray, memoryview)):
        ctx.dense.write_str(out, bytes(obj), binary=True)
    elif isinstance(obj, dict):
        _write_dict(out, obj, ctx)
    elif isinstance(obj, (list, tuple)):
        _write_list(out, obj, ctx)
    elif isinstance(obj, np.ndarray):
        _write_ndarray(out, obj, ctx)
    elif isinstance(obj, datetime):
        write_timestamp(out, *_datetime_parts(obj))
    elif (fields := struct_fields(obj)) is not None:
        # Dataclasses and msgspec-style structs are maps of their fields, in declaration
        # order, as Go writes a struct (qdf.loads(..., type=T) builds them back).
        _write_dict(out, {key: getattr(obj, attr) for key, attr in fields}, ctx)
    else:
        raise _unsupported(f"cannot encode a value of type {type(obj).__module__}.{type(obj).__qualname__}")


def write_value(out: bytearray, obj: object, ctx: EncodeContext) -> None:
    """Append one row-major value (see :mod:`qdf_columnar.wire.values` for the type mapping)."""
    t = type(obj)
    if obj is None:
        out.append(_NIL)
    elif t is str:
        ctx.dense.write_str(out, obj.encode("utf-8"))  # type: ignore[union-attr]
    elif t is int:
        write_int(out, obj)  # type: ignore[arg-type]
    elif t is bool:
        out.append(_TRUE if obj else _FALSE)
    elif t is float:
        out.append(_FLOAT64)
        out += _F64.pack(obj)  # type: ignore[arg-type]
    elif t is dict:
        _write_dict(out, obj, ctx)  # type: ignore[arg-type]
    elif t is list or t is tuple:
        _write_list(out, obj, ctx)  # type: ignore[arg-type]
    elif t is bytes:
        ctx.dense.write_str(out, obj, binary=True)  # type: ignore[arg-type]
    else:
        _write_other(out, obj, ctx)


_FAST: list[Any] = []  # memo: [fast_enc.try_write or None, fast_enc.dumps_body or None]


def _load_fast() -> None:
    try:
        from .fast_enc import dumps_body, try_write
    except ImportError:  # msgpack missing: the Python writer does everything
        try_write = dumps_body = None
    _FAST[:] = [try_write, dumps_body]


_RANS_BIT = int(Options.RANS)


def write_fast(out: bytearray, obj: object, ctx: EncodeContext) -> bool:
    """Write ``obj`` through the columnar writer (a root list of records) or the Numba
    transcoder (:mod:`.fast_enc`); False, with nothing written and no state changed, when
    neither takes it and the Python writer must (it also names what cannot be encoded)."""
    if not _FAST:
        _load_fast()
    try_write = _FAST[0]
    declined = False
    t = type(obj)
    if (t is list or t is tuple) and len(obj) >= COLUMNAR_MIN_ROWS and columnar_enabled(ctx.opts):  # type: ignore[arg-type]
        if try_columnar(out, obj, ctx):  # type: ignore[arg-type]
            return True
        declined = True
    return try_write is not None and try_write(out, obj, ctx, root_declined=declined)


#: A root list of records stays columnar only if that is at least 10 % smaller than its
#: row-major form (the reference's pure-plan rule, qdf-wire-v1.md §3.4).
COLUMNAR_MAX_SHARE = 0.90


def _smaller_of_columnar(out: bytearray, seq: Any, opts: Options, ctx: EncodeContext, one_shot: Any) -> bytes:
    """The finished columnar buffer in ``out``, or the row-major one if columnar is not 10 % smaller.

    The reference decides from byte estimates over a 32-row sample; with the row-major
    form a fast one-shot transcode away, both sizes here are exact (entropy pass included).
    """
    if ctx.col_index_used:
        out[4] |= Flag.COL_INDEX
    min_gain = ENTROPY_MIN_GAIN_WITH_INDEX if ctx.col_index_used else 0.0
    columnar = finish_body(out, entropy=bool(int(opts) & _RANS_BIT), min_gain=min_gain)
    rows = one_shot(seq, opts, row_major=True) if one_shot is not None else None
    if rows is not None and len(columnar) > COLUMNAR_MAX_SHARE * len(rows):
        return rows
    return columnar


def write_string(out: bytearray, s: str, dense: DenseWriter) -> None:
    """Append ``s`` as a string value through the Dense rules (inline when Dense is off)."""
    dense.write_str(out, s.encode("utf-8"))


def dumps(obj: object, mode: Mode = "speed") -> bytes:
    """Encode ``obj`` as a complete one-shot qdf v1 buffer (5-byte header + one value).

    ``mode`` is a preset name (``"speed"``, ``"balanced"``, ``"compression"``) or
    :class:`Options` bits. With Options.RANS (part of "compression") the body gets the
    whole-body entropy pass when that makes it smaller.
    """
    # Messages are always the reference's shapes: the batch engine (Options.CASCADE) is
    # encode()'s alone.
    opts = parse_mode(mode) & ~Options.CASCADE
    try:
        return _dumps(obj, opts)
    except UnicodeEncodeError as exc:
        raise not_unicode(exc) from None


def not_unicode(exc: UnicodeEncodeError) -> UnsupportedTypeError:
    """The typed error for a str that cannot be UTF-8 (a lone surrogate), quoting where."""
    around = exc.object[max(0, exc.start - 8):exc.start + 8] if isinstance(exc.object, str) else ""
    return UnsupportedTypeError(
        f"a string is not valid Unicode ({exc.reason} at character {exc.start}: {around!r}); qdf strings are UTF-8")


def _dumps(obj: object, opts: Options) -> bytes:
    if not _FAST:
        _load_fast()
    one_shot = _FAST[1]
    if one_shot is not None:
        # The fast path without an encode context (its state lives in per-thread arrays).
        buf = one_shot(obj, opts)
        if buf is not None:
            return buf
    # The one-shot transcoder declined: a value it does not take (the Python writer below
    # handles it and names what cannot be encoded), or a root list of records the columnar
    # writer may take (tried here, against the row-major form).
    ctx = EncodeContext(opts)
    out = pack_header(header_flags(opts))
    t = type(obj)
    if (t is list or t is tuple) and len(obj) >= COLUMNAR_MIN_ROWS and columnar_enabled(opts):  # type: ignore[arg-type]
        if try_columnar(out, obj, ctx):  # type: ignore[arg-type]
            return _smaller_of_columnar(out, obj, opts, ctx, one_shot)
        if one_shot is not None:
            buf = one_shot(obj, opts, row_major=True)
            if buf is not None:
                return buf
    ensure_recursion_room(ctx.max_depth)
    try:
        write_value(out, obj, ctx)
    except UnsupportedTypeError as err:
        if getattr(err, "qdf_path", None) == []:
            # A top-level failure has no path; keep the message plain.
            raise UnsupportedTypeError(err.reason) from None
        raise
    if ctx.col_index_used:
        out[4] |= Flag.COL_INDEX
    return finish_body(out, entropy=bool(opts & Options.RANS))
