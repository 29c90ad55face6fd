"""Public entry points for v1 QPack slice payloads: integers (E4/E5/E6/EB/ED/EE/F0),
booleans (E3 PackBool) and floats (E4 with kind 0x0B / 0x0A; E7 Gorilla/Chimp128 and
F4 ALP / ALP-RD of the compression tier).

The columnar container and dumps/loads call only these functions. Integer payloads
are the codec units of registry.py, picked by picker.py, written by the intenc.py
driver and read by intdec.py.
Compressed float payloads are written and read by floats.py (the §3.2 picker).
"""

from __future__ import annotations

import numpy as np

from ..errors import TruncatedError, UnknownCodecError, UnsupportedTypeError
from ..format.reader import ByteReader
from ..format.tags import Kind, QPackTag
from ..format.varint import write_uvarint
from . import floats
from .intdec import read_int, skip_int
from .intenc import MAX_ROWS, encode_int_array

__all__ = [
    "MAX_ROWS",
    "encode_int_array",
    "encode_bool_array",
    "encode_float_raw",
    "encode_float_array",
    "decode_int_payload",
    "decode_bool_payload",
    "decode_float_payload",
    "skip_payload",
    "payload_name",
]

_NAMES = {
    QPackTag.BOOL: "bool",
    QPackTag.RAW: "raw",
    QPackTag.FOR: "for",
    QPackTag.DELTA_FOR: "delta_for",
    QPackTag.GORILLA: "gorilla",
    QPackTag.RLE: "rle",
    QPackTag.DICT: "dict",
    QPackTag.PFOR: "pfor",
    QPackTag.BLOCK: "block",
    QPackTag.ZONE: "zone",
    QPackTag.ALP: "alp",
}
_FLOAT_DTYPES = {int(Kind.F64): np.dtype("<f8"), int(Kind.F32): np.dtype("<f4")}
# Kinds a raw E4 payload may carry, with their element width (plane16 keeps width bits 2).
_RAW_WIDTHS = {k: 1 << (k & 3) for k in (*range(Kind.I64 + 1), Kind.F32, Kind.F64, Kind.PLANE16)}


def payload_name(tag: int) -> str:
    """Short codec name of a QPack tag ("for", "delta_for", ...); "unknown_0xNN" otherwise."""
    try:
        return _NAMES[QPackTag(tag)]
    except ValueError:
        return f"unknown_0x{tag:02x}"


# ------------------------------------------------------------------------ integers
def decode_int_payload(r: ByteReader, *, n: int | None = None, copy: bool = True) -> np.ndarray:
    """Read one integer payload at ``r.pos``: int64 for int kinds, uint64 for uint kinds.

    Parameters
    ----------
    r : ByteReader
        Positioned at the tag; left after the payload.
    n : int, optional
        Expected row count; a different declared count raises CorruptDataError. Without
        it, payloads whose body does not bound their count are capped at MAX_ROWS.
    copy : bool
        With False, a raw 8-byte payload is returned as a read-only view of the input.

    Raises
    ------
    TruncatedError, CorruptDataError, UnknownCodecError
        With the byte offset of the problem.
    """
    out = read_int(r, n, copy, True)
    assert out is not None
    return out


# ------------------------------------------------------------------------ booleans
def encode_bool_array(out: bytearray, values: np.ndarray) -> None:
    """Append E3 PackBool: uvarint(n) then ceil(n/8) bytes, LSB-first, zero padding bits.

    Examples
    --------
    >>> buf = bytearray(); encode_bool_array(buf, np.array([1, 1, 0, 1, 0, 0, 1, 0, 1], bool)); buf.hex()
    'e3094b01'
    """
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise UnsupportedTypeError(f"expected a 1-D bool array, got {arr.ndim} dims")
    out.append(QPackTag.BOOL)
    write_uvarint(out, int(arr.shape[0]))
    out += np.packbits(arr.astype(bool, copy=False), bitorder="little").tobytes()


def _bool_header(r: ByteReader, n: int | None) -> int:
    at = r.pos
    tag = r.u8("a QPack tag")
    if tag != QPackTag.BOOL:
        raise UnknownCodecError(f"tag 0x{tag:02x} is not a bool payload (expected 0xe3)", column=r.column, offset=at)
    start = r.pos
    c = r.uvarint("bool element count")
    if n is not None and c != n:
        raise r.corrupt(f"bool element count is {c} but the column has {n} rows", start)
    if (c + 7) // 8 > r.remaining:
        raise TruncatedError(f"bool payload declares {c} values in {r.remaining} bytes", column=r.column, offset=start)
    return c


def decode_bool_payload(r: ByteReader, *, n: int | None = None) -> np.ndarray:
    """Read an E3 payload at ``r.pos`` into a bool array (padding bits are ignored)."""
    c = _bool_header(r, n)
    data = r.take_array((c + 7) // 8, "bool payload")
    return np.unpackbits(data, count=c, bitorder="little").view(np.bool_)


# ------------------------------------------------------------------------ floats
def encode_float_raw(out: bytearray, values: np.ndarray) -> None:
    """Append E4 PackRaw with kind 0x0B (float64) or 0x0A (float32), IEEE bits LE."""
    arr = np.asarray(values)
    if arr.ndim != 1 or arr.dtype not in (np.float64, np.float32):
        raise UnsupportedTypeError(f"expected a 1-D float32/float64 array, got {arr.dtype}")
    kind = Kind.F64 if arr.dtype == np.float64 else Kind.F32
    out += bytes((QPackTag.RAW, kind))
    write_uvarint(out, int(arr.shape[0]))
    out += arr.astype(_FLOAT_DTYPES[kind], copy=False).tobytes()


def encode_float_array(out: bytearray, values: np.ndarray, *, compress: bool, force: str | None = None,
                       light: bool = False) -> None:
    """Append a float payload: raw E4 0B/0A without ``compress``, else the §3.2 picker
    (E7 Gorilla / Chimp128, F4 ALP or raw, never larger than raw; with ``light`` only
    the memory-speed ALP / ALP-RD).

    ``force`` in {None, "raw", "gorilla", "chimp", "alp"} bypasses the picker (tests).
    """
    floats.encode_floats(out, values, compress=compress, force=force, light=light)


def decode_float_payload(r: ByteReader, *, n: int | None = None, copy: bool = True) -> np.ndarray:
    """Read a float payload at ``r.pos``: float64 or float32 array.

    E4 0B / 0A (copy=False: read-only view of the input), E7 Gorilla (0B/0A) / Chimp128
    (0F), F4 ALP (0B/0A) / ALP-RD f64 (0F); compressed payloads always decode into a new
    array. Other tags raise UnknownCodecError naming the tag.
    """
    at = r.pos
    tag = r.peek("a QPack tag")
    if tag in (QPackTag.GORILLA, QPackTag.ALP):
        return floats.decode_compressed(r, n=n)
    r.pos += 1
    if tag != QPackTag.RAW:
        raise UnknownCodecError(
            f"float payload tag 0x{tag:02x} ({payload_name(tag)}) is not supported", column=r.column, offset=at
        )
    kat = r.pos
    kind = r.u8("a kind byte")
    dt = _FLOAT_DTYPES.get(kind)
    if dt is None:
        raise r.corrupt(f"kind 0x{kind:02x} is not a float kind", kat)
    start = r.pos
    c = r.uvarint("float element count")
    if n is not None and c != n:
        raise r.corrupt(f"float element count is {c} but the column has {n} rows", start)
    if c * dt.itemsize > r.remaining:
        raise TruncatedError(f"float payload declares {c} values in {r.remaining} bytes", column=r.column, offset=start)
    arr = r.take_array(c * dt.itemsize, "float payload").view(dt)
    if copy:
        return arr.astype(dt.newbyteorder("="))
    view = arr.view()
    view.flags.writeable = False
    return view


# ------------------------------------------------------------------------ skipping
def skip_payload(r: ByteReader) -> None:
    """Advance past one QPack payload (E3, E4, E5, E6, E7, EB, ED, EE, F0, F4) without decoding it.

    Headers, counts and run/exception lists are validated so the next reader starts
    at a real boundary. F1 (zone chunks) raises UnknownCodecError.
    """
    at = r.pos
    tag = r.peek("a QPack tag")
    if tag == QPackTag.BOOL:
        c = _bool_header(r, None)
        r.skip((c + 7) // 8, "bool payload")
    elif tag == QPackTag.RAW:
        r.pos += 1
        kat = r.pos
        width = _RAW_WIDTHS.get(r.u8("a kind byte"))
        if width is None:
            raise r.corrupt("unknown kind under a raw payload", kat)
        start = r.pos
        c = r.uvarint("raw element count")
        if c * width > r.remaining:
            raise TruncatedError(f"raw payload declares {c} values", column=r.column, offset=start)
        r.pos += c * width
    elif tag in (QPackTag.GORILLA, QPackTag.ALP):
        floats.skip_compressed(r)
    elif tag == QPackTag.ZONE:
        raise UnknownCodecError(f"skipping tag 0x{tag:02x} ({payload_name(tag)}) is not supported yet", offset=at)
    else:
        skip_int(r)
