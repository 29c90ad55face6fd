"""Arrow types <-> qdf v1 column kinds, and the schema note for what v1 cannot say.

A v1 column kind says "int", "uint", "float64", "float32", "bool", "string/bytes" or
"time". Everything finer (int32 vs int64, bytes vs str, timestamp unit and zone,
dictionary/categorical, durations, dates) is recorded per column in a schema note
(see :mod:`qdf_columnar.wire.schema_note`) so our own buffers decode losslessly while
staying plain v1 for any other reader.
"""

from __future__ import annotations

import base64
import re
import zoneinfo

import pyarrow as pa

from ..errors import UnsupportedTypeError
from ..format.tags import ColKind

#: Arrow type a column of each kind decodes to when no schema note says otherwise.
DEFAULT_TYPES: dict[int, pa.DataType] = {
    ColKind.INT: pa.int64(),
    ColKind.UINT: pa.uint64(),
    ColKind.FLOAT64: pa.float64(),
    ColKind.FLOAT32: pa.float32(),
    ColKind.BOOL: pa.bool_(),
    ColKind.STRING: pa.string(),
    ColKind.TIME: pa.timestamp("ns", tz="UTC"),  # a Go time.Time is an instant
}

#: Logical kind names used by the query layer's validation.
LOGICAL: dict[int, str] = {
    ColKind.INT: "int",
    ColKind.UINT: "uint",
    ColKind.FLOAT64: "float64",
    ColKind.FLOAT32: "float32",
    ColKind.BOOL: "bool",
    ColKind.STRING: "string",
    ColKind.TIME: "timestamp",
}


def kind_for(name: str, typ: pa.DataType) -> int:
    """The v1 column kind (ColKind) for an Arrow type, or raise UnsupportedTypeError.

    The encoder stores values by their storage: ints of any width as INT/UINT, float16
    as FLOAT32 (exact), binary as STRING, dates / times / durations as INT, dictionaries
    by their value type, decimals as scaled integers (INT), an all-null column as a STRING
    column with no present values.
    """
    t = pa.types
    if t.is_dictionary(typ):
        return kind_for(name, typ.value_type)
    if t.is_signed_integer(typ) or t.is_duration(typ) or t.is_date(typ) or t.is_time(typ) or t.is_decimal(typ):
        return ColKind.INT  # decimals as scaled integers (columns/decimals.py)
    if t.is_unsigned_integer(typ):
        return ColKind.UINT
    if t.is_float64(typ):
        return ColKind.FLOAT64
    if t.is_float32(typ) or t.is_float16(typ):
        return ColKind.FLOAT32
    if t.is_boolean(typ):
        return ColKind.BOOL
    if (t.is_string(typ) or t.is_large_string(typ) or t.is_string_view(typ) or t.is_binary(typ)
            or t.is_large_binary(typ) or t.is_binary_view(typ) or t.is_null(typ)):
        return ColKind.STRING
    if t.is_timestamp(typ):
        return ColKind.TIME
    raise UnsupportedTypeError(
        f"Arrow type {typ} cannot be stored in a qdf v1 columnar batch yet "
        "(union and month-day-nano interval types are not supported)",
        column=name,
    )


def type_to_str(typ: pa.DataType) -> str:
    """A compact, parseable spelling of an Arrow type for the schema note.

    Nested and extension types are spelled ``ipc:`` + base64 of a one-field Arrow IPC
    schema, which carries any type exactly.
    """
    if _is_nested(typ) or isinstance(typ, pa.BaseExtensionType):
        blob = pa.schema([pa.field("x", typ)]).serialize().to_pybytes()
        return "ipc:" + base64.b64encode(blob).decode("ascii")
    if pa.types.is_dictionary(typ):
        return f"dictionary<{type_to_str(typ.value_type)}{',ordered' if typ.ordered else ''}>"
    if pa.types.is_timestamp(typ):
        return f"timestamp[{typ.unit}{',' + typ.tz if typ.tz else ''}]"
    if pa.types.is_duration(typ):
        return f"duration[{typ.unit}]"
    if pa.types.is_time32(typ) or pa.types.is_time64(typ):
        return f"{'time32' if pa.types.is_time32(typ) else 'time64'}[{typ.unit}]"
    return str(typ)


_SIMPLE = {
    str(x): x
    for x in (
        pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint16(), pa.uint32(), pa.uint64(),
        pa.float16(), pa.float32(), pa.float64(), pa.bool_(), pa.string(), pa.large_string(), pa.binary(),
        pa.large_binary(), pa.date32(), pa.date64(), pa.string_view(), pa.binary_view(), pa.null(),
    )
}


def _is_nested(typ: pa.DataType) -> bool:
    t = pa.types
    return t.is_list(typ) or t.is_large_list(typ) or t.is_fixed_size_list(typ) or t.is_struct(typ) or t.is_map(typ)


_DECIMAL = re.compile(r"^decimal(32|64|128|256)\((\d{1,2}), (-?\d{1,2})\)$")
_FIXED_BINARY = re.compile(r"^fixed_size_binary\[(\d{1,10})\]$")
_OFFSET = re.compile(r"^[+-]\d\d:\d\d$")


def _check_tz(tz: str) -> None:
    """Reject a zone name Arrow could not use later (raises ValueError)."""
    if _OFFSET.match(tz):
        return
    try:
        zoneinfo.ZoneInfo(tz)
    except Exception as exc:  # noqa: BLE001 - ZoneInfo raises several unrelated types
        raise ValueError(f"unknown time zone {tz!r}") from exc


def type_from_str(s: str) -> pa.DataType:
    """Inverse of :func:`type_to_str`; raises ValueError on anything unknown."""
    if s in _SIMPLE:
        return _SIMPLE[s]
    if s.startswith("ipc:"):
        try:
            schema = pa.ipc.read_schema(pa.py_buffer(base64.b64decode(s[4:], validate=True)))
        except (ValueError, OSError, pa.ArrowException) as exc:  # pyarrow reports a bad flatbuffer as OSError
            raise ValueError(f"unreadable nested type: {exc}") from None
        if len(schema) != 1:
            raise ValueError("nested type spelling must hold one field")
        return schema.field(0).type
    if s.startswith("dictionary<") and s.endswith(">"):
        inner = s[len("dictionary<") : -1]
        ordered = inner.endswith(",ordered")
        if ordered:
            inner = inner[: -len(",ordered")]
        return pa.dictionary(pa.int32(), type_from_str(inner), ordered=ordered)
    if s.startswith("timestamp[") and s.endswith("]"):
        unit, _, tz = s[len("timestamp[") : -1].partition(",")
        if tz:
            _check_tz(tz)
        return pa.timestamp(unit, tz=tz or None)
    m = _DECIMAL.match(s)
    if m:
        make = getattr(pa, f"decimal{m[1]}", None)  # decimal32 / decimal64: pyarrow 18 and later
        if make is None:
            raise ValueError(f"type {s!r} needs a newer pyarrow than {pa.__version__}")
        try:
            return make(int(m[2]), int(m[3]))
        except (ValueError, pa.ArrowException) as exc:
            raise ValueError(f"bad decimal type {s!r}: {exc}") from None
    m = _FIXED_BINARY.match(s)
    if m:
        try:
            return pa.binary(int(m[1]))
        except (ValueError, OverflowError, pa.ArrowException) as exc:
            raise ValueError(f"bad fixed-size binary type {s!r}: {exc}") from None
    if s.startswith("duration[") and s.endswith("]"):
        return pa.duration(s[len("duration[") : -1])
    if s.startswith("time32[") and s.endswith("]"):
        return pa.time32(s[len("time32[") : -1])
    if s.startswith("time64[") and s.endswith("]"):
        return pa.time64(s[len("time64[") : -1])
    raise ValueError(f"unknown type spelling {s!r}")
