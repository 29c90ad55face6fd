"""Row-major qdf v1 values (the msgpack-shaped tag table) plus :func:`dumps` / :func:`loads`.

Python mapping (encode):

==============================  =====================================================
``None``                        ``C0``
``bool`` / ``np.bool_``         ``C1`` / ``C2``
``int`` / ``np.integer``        narrowest form, exactly as Go ``WriteInt`` / ``WriteUint``;
                                outside [-2**63, 2**64) -> :class:`UnsupportedTypeError`
``float`` / ``np.float64``      ``CC`` float64 (bit exact: NaN payloads, -0.0, inf)
``np.float32`` / ``np.float16`` ``CB`` float32 (float16 widened exactly)
``str``                         fixstr / str8 / str16 / str32 (UTF-8); Dense: interned
``bytes`` / ``bytearray`` /     bin8 / bin16 / bin32 (no fixbin); Dense: interned (``E2``)
``memoryview``
``list`` / ``tuple``            array header + elements (tuples decode as lists)
``dict`` (str keys)             ``D5/D6/D7`` map; with Dense + ShapeIntern (or MapShape) an
                                ``EC`` map shape, declared once per ordered key tuple
``datetime`` / ``pd.Timestamp``  ``F3`` timestamp: zigzag-uvarint(sec), uvarint(nsec).
/ ``np.datetime64``             Naive datetimes / Timestamps are taken to be UTC.
``np.ndarray``                  Options.QPACK: 1-D bool/int/float arrays become QPack payloads
                                (``qdf_columnar.codecs.qpack``); otherwise an array of
                                per-element values. N-d arrays nest as arrays of rows.
==============================  =====================================================

Decode: ints come back as ``int`` (uint64 above int64 max included), ``CB`` as
``np.float32`` (so re-encoding reproduces the bytes), ``CC`` as ``float``,
strings as ``str`` and bins as ``bytes``, arrays as ``list``, maps / shapes as
``dict`` (insertion order = wire order), QPack payloads as numpy arrays and
``F3`` as a timezone-aware UTC ``datetime`` -- or a UTC ``pd.Timestamp`` when the
nanoseconds are not a whole number of microseconds (a datetime would drop them).

Dense caveat: strings and bytes share one intern table keyed on raw bytes (as in
Go), so a ``bytes`` value equal to an earlier interned ``str`` (or vice versa) is
written as a reference and decodes with the type of the first occurrence.
"""

from __future__ import annotations

import struct
import sys
from datetime import datetime, timedelta, timezone
from typing import Any

import numpy as np

from ..errors import (
    CorruptDataError,
    DecodeError,
    EncodeError,
    TruncatedError,
    UnknownCodecError,
    UnsupportedTypeError,
)
from ..format.header import pack_header, read_header
from ..format.reader import ByteReader
from ..format.tags import HEADER_SIZE, ContainerTag, DenseTag, Flag, QPackTag, Tag
from ..format.varint import write_uvarint, zigzag
from ..options import Mode, Options, columnar_enabled, header_flags, parse_mode
from .context import MAX_DEPTH, DecodeContext, EncodeContext
from .dense import STRINGISH_TAGS, DenseReader, DenseWriter

__all__ = [
    "write_value",
    "read_value",
    "write_string",
    "read_string",
    "write_int",
    "write_timestamp",
    "dumps",
    "loads",
    "COLUMNAR_MIN_ROWS",
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

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_EPOCH_NAIVE = datetime(1970, 1, 1)
_I64_MIN = -(1 << 63)
_U64_MAX = (1 << 64) - 1
# Python frames per nesting level on the deepest path (read_value -> handler -> reader -> comprehension), with room.
_FRAMES_PER_LEVEL = 6
_FLOAT_KINDS = frozenset((0x0A, 0x0B, 0x0E, 0x0F))  # QPack kind bytes that hold floats


def _ensure_recursion_room(max_depth: int) -> None:
    # Both directions recurse once per nesting level. CPython >= 3.11 runs
    # Python-to-Python calls without growing the C stack, so raising the
    # interpreter's frame limit is safe; it is only ever raised, never lowered,
    # because another thread may be deep inside a call.
    need = max_depth * _FRAMES_PER_LEVEL + 2000
    if sys.getrecursionlimit() < need:
        sys.setrecursionlimit(need)


# ===================================================================== encode


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


def _write_list(out: bytearray, seq: list | tuple, ctx: EncodeContext) -> None:
    n = len(seq)
    if n >= COLUMNAR_MIN_ROWS and columnar_enabled(ctx.opts) and _same_keyed_records(seq):
        write_records_columnar = _colstruct_writer()
        if write_records_columnar is not None:
            mark = len(out)
            if write_records_columnar(out, list(seq), ctx):
                return
            del out[mark:]  # contract: a declining writer has written (and interned) nothing
    _enter(ctx)
    _write_seq_header(out, n)
    for i, item in enumerate(seq):
        try:
            write_value(out, item, ctx)
        except UnsupportedTypeError as err:
            raise _with_path(err, f"[{i}]") from None
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


def _same_keyed_records(seq: list | tuple) -> bool:
    first = seq[0]
    if type(first) is not dict or not first:
        return False
    keys = tuple(first)  # column order is the key order, so it must match exactly
    return all(type(rec) is dict and len(rec) == len(keys) and tuple(rec) == keys for rec in seq)


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
        for k, v in d.items():
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
            qpack.encode_int_array(out, arr)
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
            out += _F32.pack(float(obj))
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
        ctx.dense.write_str(out, str(obj).encode("utf-8"))
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
    else:
        raise _unsupported(f"cannot encode a value of type {type(obj).__module__}.{type(obj).__qualname__}")


def write_value(out: bytearray, obj: object, ctx: EncodeContext) -> None:
    """Append one row-major value (see the module docstring for the type mapping)."""
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


def write_string(out: bytearray, s: str, dense: DenseWriter) -> None:
    """Append ``s`` as a string value through the Dense rules (inline when Dense is off)."""
    dense.write_str(out, s.encode("utf-8"))


def dumps(obj: object, mode: Mode = "speed") -> bytes:
    """Encode ``obj`` as a complete one-shot qdf v1 buffer (5-byte header + one value).

    ``mode`` is a preset name (``"speed"``, ``"balanced"``, ``"compression"``) or
    :class:`Options` bits. Options.RANS / GORILLA_FLOAT / FSST are accepted and
    currently change nothing (the entropy pass and float codecs are not implemented).
    """
    opts = parse_mode(mode)
    ctx = EncodeContext(opts)
    _ensure_recursion_room(ctx.max_depth)
    out = pack_header(header_flags(opts))
    try:
        write_value(out, obj, ctx)
    except UnsupportedTypeError as err:
        if getattr(err, "qdf_path", None) == []:
            # A top-level failure has no path; keep the message plain.
            raise UnsupportedTypeError(err.reason) from None
        raise
    if ctx.col_index_used:
        out[4] |= Flag.COL_INDEX
    return bytes(out)


# ===================================================================== decode

_Reader = Any  # handler signature: (r, ctx, tag) -> value


def _nesting(ctx: DecodeContext, r: ByteReader) -> None:
    ctx.depth += 1
    if ctx.depth > ctx.max_depth:
        raise CorruptDataError(f"nesting too deep (more than {ctx.max_depth} levels)", offset=r.pos - 1)


def _truncated(r: ByteReader, msg: str) -> TruncatedError:
    return TruncatedError(msg, column=r.column, offset=r.pos)


def _read_stringish(r: ByteReader, ctx: DecodeContext, tag: int) -> str | bytes:
    start = r.pos - 1
    dense = ctx.dense
    data = dense.read_str(r, tag)
    if dense.last_bin:
        return data  # type: ignore[return-value]
    return dense.text(data, r, start)  # type: ignore[arg-type]


def _read_array_n(r: ByteReader, ctx: DecodeContext, n: int) -> list:
    if n > r.remaining:  # every element needs at least its tag byte
        raise _truncated(r, f"array declares {n} elements but only {r.remaining} bytes remain")
    _nesting(ctx, r)
    out = [read_value(r, ctx) for _ in range(n)]
    ctx.depth -= 1
    return out


def _read_key(r: ByteReader, ctx: DecodeContext) -> object:
    start = r.pos
    tag = r.u8("a map key")
    if tag in STRINGISH_TAGS:
        return _read_stringish(r, ctx, tag)
    # Go decodes non-string-keyed maps to map[any]any; keep any hashable key.
    r.pos = start
    key = read_value(r, ctx)
    try:
        hash(key)
    except TypeError:
        raise CorruptDataError(f"map key of type {type(key).__name__} is not hashable", offset=start) from None
    return key


def _read_map_n(r: ByteReader, ctx: DecodeContext, n: int) -> dict:
    if n * 2 > r.remaining:  # key + value, at least a byte each
        raise _truncated(r, f"map declares {n} entries but only {r.remaining} bytes remain")
    _nesting(ctx, r)
    out: dict = {}
    for _ in range(n):
        k = _read_key(r, ctx)
        out[k] = read_value(r, ctx)
    ctx.depth -= 1
    return out


def _read_shape(r: ByteReader, ctx: DecodeContext, tag: int) -> dict:
    start = r.pos - 1
    dense = ctx.dense
    sid = r.uvarint("a map shape id")
    if sid == 0:
        n = r.count("map shape key count", min_bytes_each=2)
        names = []
        for _ in range(n):
            kstart = r.pos
            ktag = r.u8("a shape key")
            data = dense.read_str(r, ktag)
            if data is None:
                raise CorruptDataError(f"map shape key has tag {ktag:#04x}, not a string", offset=kstart)
            names.append(dense.text(data, r, kstart))
        keys = tuple(names)
        dense.declare_shape(keys)
    else:
        keys = dense.shape(sid, start)
        if len(keys) > r.remaining:
            raise _truncated(r, f"map shape {sid} needs {len(keys)} values but only {r.remaining} bytes remain")
    _nesting(ctx, r)
    out = {k: read_value(r, ctx) for k in keys}
    ctx.depth -= 1
    return out


def _read_timestamp(r: ByteReader, ctx: DecodeContext, tag: int) -> object:
    start = r.pos - 1
    sec = r.zigzag("timestamp seconds")
    nsec = r.uvarint("timestamp nanoseconds")
    if nsec > 999_999_999:
        raise CorruptDataError(f"timestamp nanoseconds {nsec} exceed 999999999", offset=start)
    if nsec % 1000 == 0:
        try:
            return _EPOCH + timedelta(seconds=sec, microseconds=nsec // 1000)
        except OverflowError:
            pass
    import pandas as pd

    try:
        return pd.Timestamp(sec * 10**9 + nsec, unit="ns", tz="UTC")
    except (OverflowError, ValueError):
        raise DecodeError(
            f"timestamp {sec} s + {nsec} ns is outside what datetime / pandas can represent", offset=start
        ) from None


def _qpack_decoder() -> Any:
    try:
        from ..codecs import qpack
    except ImportError:
        return None
    return qpack


def _read_qpack(r: ByteReader, ctx: DecodeContext, tag: int) -> np.ndarray:
    start = r.pos - 1
    qpack = _qpack_decoder()
    if qpack is None:
        raise UnknownCodecError(f"QPack payload tag {tag:#04x} but the QPack codecs are not available", offset=start)
    if tag == QPackTag.BOOL:
        fn = qpack.decode_bool_payload
    elif tag in (QPackTag.GORILLA, QPackTag.ALP) or (tag != QPackTag.BLOCK and r.peek("a QPack kind") in _FLOAT_KINDS):
        fn = qpack.decode_float_payload
    else:
        fn = qpack.decode_int_payload
    r.pos = start  # the codec functions read their own tag
    return fn(r)


def _read_colstruct(r: ByteReader, ctx: DecodeContext, tag: int) -> object:
    start = r.pos - 1
    try:
        from . import colstruct
    except ImportError:
        colstruct = None
    name = "read_colstruct_value" if tag == ContainerTag.COL_STRUCT else "read_hybrid_colstruct_value"
    fn = getattr(colstruct, name, None)
    if fn is None:
        raise UnknownCodecError(f"columnar container tag {tag:#04x} is not supported yet", offset=start)
    _nesting(ctx, r)
    out = fn(r, ctx)
    ctx.depth -= 1
    return out


def _unknown(r: ByteReader, ctx: DecodeContext, tag: int) -> object:
    raise UnknownCodecError(f"tag {tag:#04x} is not a row-major qdf v1 value tag", offset=r.pos - 1)


def _build_handlers() -> list[_Reader]:
    h: list[_Reader] = [_unknown] * 256
    for t in range(0x00, 0x80):
        h[t] = lambda r, ctx, tag: tag
    for t in STRINGISH_TAGS:
        h[t] = _read_stringish
    for t in range(0xA0, 0xC0):
        h[t] = lambda r, ctx, tag: _read_array_n(r, ctx, tag & 0x1F)
    for t in range(0xD8, 0xE0):
        h[t] = lambda r, ctx, tag: -((tag & 7) + 1)
    h[_NIL] = lambda r, ctx, tag: None
    h[_FALSE] = lambda r, ctx, tag: False
    h[_TRUE] = lambda r, ctx, tag: True
    h[Tag.UINT8] = lambda r, ctx, tag: r.u8("a uint8")
    h[Tag.UINT16] = lambda r, ctx, tag: r.u16()
    h[Tag.UINT32] = lambda r, ctx, tag: r.u32()
    h[Tag.UINT64] = lambda r, ctx, tag: r.u64()
    h[Tag.INT8] = lambda r, ctx, tag: int.from_bytes(r.take(1, "an int8"), "little", signed=True)
    h[Tag.INT16] = lambda r, ctx, tag: int.from_bytes(r.take(2, "an int16"), "little", signed=True)
    h[Tag.INT32] = lambda r, ctx, tag: int.from_bytes(r.take(4, "an int32"), "little", signed=True)
    h[Tag.INT64] = lambda r, ctx, tag: int.from_bytes(r.take(8, "an int64"), "little", signed=True)
    h[_FLOAT32] = lambda r, ctx, tag: np.float32(r.f32())
    h[_FLOAT64] = lambda r, ctx, tag: r.f64()
    h[Tag.ARR16] = lambda r, ctx, tag: _read_array_n(r, ctx, r.u16("an arr16 count"))
    h[Tag.ARR32] = lambda r, ctx, tag: _read_array_n(r, ctx, r.u32("an arr32 count"))
    h[Tag.MAP8] = lambda r, ctx, tag: _read_map_n(r, ctx, r.u8("a map8 count"))
    h[Tag.MAP16] = lambda r, ctx, tag: _read_map_n(r, ctx, r.u16("a map16 count"))
    h[Tag.MAP32] = lambda r, ctx, tag: _read_map_n(r, ctx, r.u32("a map32 count"))
    h[_MAP_SHAPE] = _read_shape
    h[_TIMESTAMP] = _read_timestamp
    for t in QPackTag:
        if t != QPackTag.ZONE:  # zone chunks only exist inside columnar bodies
            h[t] = _read_qpack
    h[ContainerTag.COL_STRUCT] = _read_colstruct
    h[ContainerTag.HYBRID_COL_STRUCT] = _read_colstruct
    return h


_HANDLERS = _build_handlers()


def read_value(r: ByteReader, ctx: DecodeContext) -> object:
    """Read one row-major value at ``r.pos`` (see the module docstring for the result types)."""
    tag = r.u8("a value tag")
    return _HANDLERS[tag](r, ctx, tag)


def read_string(r: ByteReader, dense: DenseReader) -> str:
    """Read one string value (tag + payload); a non-string tag raises :class:`CorruptDataError`."""
    start = r.pos
    tag = r.u8("a string tag")
    data = dense.read_str(r, tag)
    if data is None:
        raise CorruptDataError(f"expected a string, found tag {tag:#04x}", column=r.column, offset=start)
    return dense.text(data, r, start)


def loads(buf: bytes | bytearray | memoryview) -> object:
    """Decode a complete one-shot qdf v1 buffer holding one row-major root value.

    Trailing bytes after the root value raise :class:`CorruptDataError`.
    """
    flags = read_header(buf)
    r = ByteReader(buf, HEADER_SIZE)
    ctx = DecodeContext(flags=flags)
    _ensure_recursion_room(MAX_DEPTH)
    value = read_value(r, ctx)
    if r.pos != r.end:
        raise CorruptDataError(f"{r.end - r.pos} trailing bytes after the root value", offset=r.pos)
    return value
