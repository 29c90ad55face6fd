"""Public entry points for v1 QPack slice payloads: integers (E4/E5/E6/EB/ED/EE/F0),
booleans (E3 PackBool) and floats (E4 with kind 0x0B / 0x0A; E7 Gorilla/Chimp128 and
F4 ALP / ALP-RD of the compression tier).

The columnar container and dumps/loads call only these functions. Integer payloads
are the codec units of registry.py, picked by picker.py, written by the intenc.py
driver and read by intdec.py.
Float payloads are the units of floats/, picked and written by floatenc.py and read
by floatdec.py. :data:`INT_CODES` is how string units (FC's dictionary codes) write and
scan an integer payload: they sit below this driver, which imports the registry.
"""

from __future__ import annotations

import numpy as np

from ..errors import TruncatedError, UnknownCodecError, UnsupportedTypeError
from ..format.reader import ByteReader
from ..format.tags import Kind, QPackTag
from .bools import BOOL, PackBool
from .floatdec import read_float, skip_float
from .floatenc import encode_floats
from .intdec import IntPayload, read_int, scan_int, skip_int
from .intenc import MAX_ROWS, encode_int_array
from .registry import BOOL_BY_TAG, payload_name

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
    "INT_CODES",
]


class _IntCodes:
    """The integer driver as string units use it (:class:`.strings.unit.IntCodes`)."""

    def encode(self, out: bytearray, values: np.ndarray) -> None:
        encode_int_array(out, values)

    def scan(self, r: ByteReader, n: int) -> IntPayload:
        return scan_int(r, n)


INT_CODES = _IntCodes()


# Kinds a raw E4 payload may carry, with their element width (plane16 keeps width bits 2).
_RAW_WIDTHS = {k: 1 << (k & 3) for k in (*range(Kind.I64 + 1), Kind.F32, Kind.F64, Kind.PLANE16)}


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
    BOOL.encode(out, arr)


def _bool_unit(r: ByteReader) -> PackBool:
    at = r.pos
    tag = r.u8("a QPack tag")
    unit = BOOL_BY_TAG.get(tag)
    if unit is None:
        raise UnknownCodecError(f"tag 0x{tag:02x} is not a bool payload (expected 0xe3)", column=r.column, offset=at)
    return unit


def decode_bool_payload(r: ByteReader, *, n: int | None = None) -> np.ndarray:
    """Read an E3 payload at ``r.pos`` into a bool array (padding bits are ignored)."""
    return _bool_unit(r).read(r, n)


# ------------------------------------------------------------------------ floats
def encode_float_raw(out: bytearray, values: np.ndarray) -> None:
    """Append E4 PackRaw with kind 0x0B (float64) or 0x0A (float32), IEEE bits LE."""
    arr = np.asarray(values)
    if arr.ndim != 1 or arr.dtype not in (np.float64, np.float32):
        raise UnsupportedTypeError(f"expected a 1-D float32/float64 array, got {arr.dtype}")
    encode_floats(out, arr, compress=False)


def encode_float_array(out: bytearray, values: np.ndarray, *, compress: bool, force: str | None = None,
                       light: bool = False, aligned: bool = False, limit: int | None = None) -> None:
    """Append a float payload: raw E4 0B/0A without ``compress``, else the §3.2 picker
    (E7 Gorilla / Chimp128, F4 ALP or raw, never larger than raw; with ``light`` only
    the memory-speed ALP / ALP-RD).

    ``force`` in {None, "raw", "gorilla", "chimp", "alp", "alprd"} bypasses the picker (tests);
    ``aligned``: ALP at a whole-byte width where it applies (Options.ALIGNED);
    ``limit``: the caller keeps the payload only when shorter (floatenc.pick).
    """
    encode_floats(out, values, compress=compress, force=force, light=light, aligned=aligned, limit=limit)


def decode_float_payload(r: ByteReader, *, n: int | None = None, copy: bool = True) -> np.ndarray:
    """Read a float payload at ``r.pos``: float64 or float32 array.

    E4 0B / 0A (copy=False: read-only view of the input), E7 Gorilla (0B/0A) / Chimp128
    (0F), F4 ALP (0B/0A) / ALP-RD f64 (0F); compressed payloads always decode into a new
    array. Other tags raise UnknownCodecError naming the tag.
    """
    return read_float(r, n, copy)


# ------------------------------------------------------------------------ skipping
def skip_payload(r: ByteReader) -> None:
    """Advance past one QPack payload (E3, E4, E5, E6, E7, EB, ED, EE, F0, F4) without decoding it.

    Headers, counts and run/exception lists are validated so the next reader starts
    at a real boundary. F1 (zone chunks) raises UnknownCodecError.
    """
    at = r.pos
    tag = r.peek("a QPack tag")
    if tag == QPackTag.BOOL:
        _bool_unit(r).skip(r, None)
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
        skip_float(r)
    elif tag == QPackTag.ZONE:
        raise UnknownCodecError(f"skipping tag 0x{tag:02x} ({payload_name(tag)}) is not supported yet", offset=at)
    else:
        skip_int(r)
