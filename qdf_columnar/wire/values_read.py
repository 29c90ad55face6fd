"""Decode row-major qdf v1 values plus :func:`loads`.

:func:`read_value` dispatches on the tag byte through a 256-entry handler
table (``_HANDLERS``); QPack payloads and columnar containers load their
codecs lazily. The result types are listed in the docstring of
:mod:`qdf_columnar.wire.values`; encoding is in :mod:`.values_write`.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import numpy as np

from ..errors import CorruptDataError, DecodeError, TruncatedError, UnknownCodecError
from ..format.header import open_body
from ..format.reader import ByteReader
from ..format.tags import HEADER_SIZE, ContainerTag, DenseTag, QPackTag, Tag
from .context import MAX_DEPTH, DecodeContext, ensure_recursion_room
from .dense import STRINGISH_TAGS, DenseReader
from .values_write import _EPOCH, _FALSE, _FLOAT32, _FLOAT64, _MAP_SHAPE, _NIL, _TIMESTAMP, _TRUE

__all__ = ["read_value", "read_string", "read_root", "loads"]

_STR_DELTA = int(DenseTag.STR_DELTA)
_FLOAT_KINDS = frozenset((0x0A, 0x0B, 0x0E, 0x0F))  # QPack kind bytes that hold floats

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
        sid = dense.declare_shape(keys)
    else:
        keys = dense.shape(sid, start)
    if len(keys) > r.remaining:
        raise _truncated(r, f"map shape {sid} needs {len(keys)} values but only {r.remaining} bytes remain")
    _nesting(ctx, r)
    bases = dense.field_bases(sid, len(keys))
    out = {}
    buf = r.buf
    for i, k in enumerate(keys):
        if r.pos >= r.end:
            raise _truncated(r, f"input ends inside map shape {sid} before its value {k!r}")
        tag = buf[r.pos]
        if tag == _STR_DELTA:
            # Per-field front delta against this field's previous string (Go tagStrDelta).
            vstart = r.pos
            r.pos += 1
            data = dense.read_delta(r, bases[i])
            bases[i] = data
            out[k] = dense.text(data, r, vstart)
        elif tag in STRINGISH_TAGS:
            vstart = r.pos
            r.pos += 1
            data = dense.read_str(r, tag)
            bases[i] = data
            out[k] = data if dense.last_bin else dense.text(data, r, vstart)
        else:
            out[k] = read_value(r, ctx)
    ctx.depth -= 1
    return out


def _read_timestamp(r: ByteReader, ctx: DecodeContext, tag: int) -> object:
    start = r.pos - 1
    sec = r.zigzag("timestamp seconds")
    nsec = r.uvarint("timestamp nanoseconds")
    if nsec > 999_999_999:
        raise CorruptDataError(f"timestamp nanoseconds {nsec} exceed 999999999", offset=start)
    return timestamp_value(sec, nsec, start)


def timestamp_value(sec: int, nsec: int, start: int = 0) -> object:
    """A UTC ``datetime``, or a ``pd.Timestamp`` when the nanoseconds are not whole microseconds
    (or the instant is outside datetime's range); ``start``: the offset errors name."""
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


def _stray_delta(r: ByteReader, ctx: DecodeContext, tag: int) -> object:
    raise CorruptDataError("string delta (F2) outside a map-shape field: it has no previous value", offset=r.pos - 1)


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
    # np.frombuffer keeps a float32's exact bits (a Python float would quiet a signalling NaN)
    h[_FLOAT32] = lambda r, ctx, tag: np.frombuffer(r.take(4, "a float32"), dtype="<f4")[0]
    h[_FLOAT64] = lambda r, ctx, tag: r.f64()
    h[Tag.ARR16] = lambda r, ctx, tag: _read_array_n(r, ctx, r.u16("an arr16 count"))
    h[Tag.ARR32] = lambda r, ctx, tag: _read_array_n(r, ctx, r.u32("an arr32 count"))
    h[Tag.MAP8] = lambda r, ctx, tag: _read_map_n(r, ctx, r.u8("a map8 count"))
    h[Tag.MAP16] = lambda r, ctx, tag: _read_map_n(r, ctx, r.u16("a map16 count"))
    h[Tag.MAP32] = lambda r, ctx, tag: _read_map_n(r, ctx, r.u32("a map32 count"))
    h[_MAP_SHAPE] = _read_shape
    h[_TIMESTAMP] = _read_timestamp
    h[_STR_DELTA] = _stray_delta
    for t in QPackTag:
        if t != QPackTag.ZONE:  # zone chunks only exist inside columnar bodies
            h[t] = _read_qpack
    h[ContainerTag.COL_STRUCT] = _read_colstruct
    h[ContainerTag.HYBRID_COL_STRUCT] = _read_colstruct
    return h


_HANDLERS = _build_handlers()


def read_value(r: ByteReader, ctx: DecodeContext) -> object:
    """Read one row-major value at ``r.pos`` (see :mod:`qdf_columnar.wire.values` for the result types)."""
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


def loads(buf: bytes | bytearray | memoryview, *, type: Any = None) -> Any:  # noqa: A002 - msgspec's name
    """Decode a complete one-shot qdf v1 buffer holding one row-major root value.

    Trailing bytes after the root value raise :class:`CorruptDataError`. A batch that
    ``encode`` shredded (nested columns, docs/FORMAT.md Part 3) comes back as its list
    of row dicts, as it went in, rather than as its level tables.

    ``type`` builds the result as that type instead of plain dicts and lists: a
    dataclass, a msgspec Struct, ``list[T]``, ``dict[str, T]``, ``Optional[T]``...
    (:mod:`qdf_columnar.wire.typed`); a mismatch raises :class:`DecodeError` naming
    the path of the offending value.
    """
    value = _loads(buf)
    if type is None:
        return value
    from .typed import convert

    return convert(value, type)


_FAST_LOADS: list[Any] = []  # memo: [fast_dec.loads_body or None], imported on first use


def _fast_loads() -> Any:
    try:
        from .fast_dec import loads_body
    except ImportError:  # the kernels cannot load: the Python reader does everything
        loads_body = None
    _FAST_LOADS.append(loads_body)
    return loads_body


def _loads(buf: bytes | bytearray | memoryview) -> object:
    original = buf
    flags, buf = open_body(buf)
    fast = _FAST_LOADS[0] if _FAST_LOADS else _fast_loads()
    if fast is not None:
        # The Numba transcoder (qdf -> pickle opcodes -> pickle.loads), for a whole body.
        ok, value = fast(buf, HEADER_SIZE, len(buf))
        if ok:
            return value
    # Declined (columnar containers, QPack slices, or input the Python reader must name the
    # fault of): the row-major reader, or the batch decoder for a shredded batch.
    from .shred_read import is_shredded

    if is_shredded(buf, flags):  # an encode()d batch with nested columns: its rows, reassembled
        from ..api import decode

        return decode(original, output="records")
    return _read_root(buf, flags)


def read_root(buf: bytes | bytearray | memoryview) -> Any:
    """The root value of a one-shot buffer, read by the Python reader alone.

    For buffers of our own layouts that hold QPack slices (a ``.qdf`` footer, its
    statistics): the transcoder behind :func:`loads` declines those after a first look,
    so trying it first only costs time, and on a first call its compilation.
    """
    flags, buf = open_body(buf)
    return _read_root(buf, flags)


def _read_root(buf: Any, flags: int) -> Any:
    r = ByteReader(buf, HEADER_SIZE)
    ctx = DecodeContext(flags=flags)
    ensure_recursion_room(MAX_DEPTH)
    value = read_value(r, ctx)
    if r.pos != r.end:
        raise CorruptDataError(f"{r.end - r.pos} trailing bytes after the root value", offset=r.pos)
    return value
