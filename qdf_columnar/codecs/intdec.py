"""Readers (and skippers) of the v1 QPack integer payloads: E4 PackRaw, E5 PackFor,
E6 PackDeltaFor, EB PackRLE, ED PackDict, EE PackPFor and F0 PackBlock.

Every count is checked against the bytes that could hold it before anything is
allocated; payloads whose body does not bound the count (zero-width FOR/Delta/PFOR,
one-entry Dict, RLE) are capped at MAX_ROWS unless the caller supplies the expected n.
Kernels report problems as status codes; this module turns them into
TruncatedError / CorruptDataError carrying the byte offset.
"""

from __future__ import annotations

import numpy as np
from qdf_kernels import bitpack, blocks, intdecode
from qdf_kernels._status import ERR_TRUNCATED

from ..columns import alloc
from ..errors import CorruptDataError, TruncatedError, UnknownCodecError
from ..format.reader import ByteReader
from ..format.tags import ColKind, Kind, QPackTag
from .intenc import MAX_ROWS
from .picker import DICT_MAX_DISTINCT, FOR_MAX_BITS, dict_bits

MASK64 = (1 << 64) - 1
_CODEC_KINDS = (int(Kind.I64), int(Kind.U64))  # FOR/Delta/RLE/Dict/PFOR carry 64-bit kinds only
_BLOCK_SIZES = {8: 256, 10: 1024}  # blkLog -> rows (blockSizeFor)
_BLOCK_MIN_BYTES = 9  # u32 offset + the smallest possible block payload (5 bytes)
_MAX_BLOCK_DEPTH = 2
_EMPTY_U64 = np.empty(0, dtype=np.uint64)


def _status(r: ByteReader, st: int, what: str, offset: int) -> None:
    if st == ERR_TRUNCATED:
        raise TruncatedError(f"input ends inside {what}", column=r.column, offset=offset)
    if st < 0:
        raise CorruptDataError(f"inconsistent {what}", column=r.column, offset=offset)


def _count(r: ByteReader, what: str, expect: int | None) -> tuple[int, int]:
    start = r.pos
    c = r.uvarint(what)
    if expect is not None and c != expect:
        raise r.corrupt(f"{what} is {c} but the column has {expect} rows", start)
    return c, start


def _cap(r: ByteReader, c: int, expect: int | None, what: str, start: int) -> None:
    """Payloads whose size does not grow with n may not declare more than MAX_ROWS."""
    if expect is None and c > MAX_ROWS:
        raise r.corrupt(f"{what} {c} exceeds the limit {MAX_ROWS} for a constant body", start)


def _body(r: ByteReader, nbytes: int, what: str, start: int) -> np.ndarray:
    if nbytes > r.remaining:
        raise TruncatedError(
            f"{what} needs {nbytes} body bytes but only {r.remaining} remain", column=r.column, offset=start
        )
    return r.take_array(nbytes, what)


def _out(c: int, signed: bool, want: bool) -> tuple[np.ndarray | None, np.ndarray]:
    if not want:
        return None, _EMPTY_U64
    arr = alloc.empty(c, np.int64 if signed else np.uint64)
    return arr, arr.view(np.uint64)


def _wire_value(raw: int, signed: bool) -> np.uint64:
    """A header uvarint as a uint64 bit pattern (unzigzag for signed kinds)."""
    v = ((raw >> 1) ^ -(raw & 1)) & MASK64 if signed else raw
    return np.uint64(v)


def _bits(r: ByteReader) -> int:
    at = r.pos
    b = r.u8("a bit width")
    if b > FOR_MAX_BITS:
        raise r.corrupt(f"bit width {b} exceeds {FOR_MAX_BITS}", at)
    return b


def _raw(r: ByteReader, expect: int | None, copy: bool, want: bool) -> np.ndarray | None:
    payload = _lazy_raw(r, expect, copy)
    return payload.values() if want else None


def _for(r: ByteReader, signed: bool, expect: int | None, want: bool) -> np.ndarray | None:
    payload = _lazy_for(r, signed, expect)
    return payload.values() if want else None


def _delta(r: ByteReader, signed: bool, expect: int | None, want: bool) -> np.ndarray | None:
    bits = _bits(r)
    first = _wire_value(r.uvarint("the first value"), signed)
    min_delta = _wire_value(r.uvarint("the minimum delta"), True)
    c, start = _count(r, "Delta+FOR element count", expect)
    if bits == 0:
        _cap(r, c, expect, "Delta+FOR element count", start)
    src = _body(r, (max(c - 1, 0) * bits + 7) // 8, "Delta+FOR body", start)
    arr, u = _out(c, signed, want)
    if want:
        _status(r, bitpack.unpack_delta(src, bits, first, min_delta, u), "Delta+FOR body", start)
    return arr


def _rle(r: ByteReader, signed: bool, expect: int | None, want: bool) -> np.ndarray | None:
    c, start = _count(r, "RLE element count", expect)
    _cap(r, c, expect, "RLE element count", start)
    buf = r.array()
    errpos = np.zeros(1, dtype=np.int64)
    if want and expect is not None:
        # The caller knows the rows (and has budgeted them): validate and expand in one pass.
        arr, u = _out(c, signed, want)
        end = intdecode.rle_decode(buf, r.pos, r.end, c, signed, u, errpos)
        _status(r, end, "RLE runs", int(errpos[0]))
        r.pos = int(end)
        return arr
    # Validate the runs before allocating: a 5-byte payload may declare 2**24 rows.
    end = intdecode.rle_decode(buf, r.pos, r.end, c, signed, _EMPTY_U64, errpos)
    _status(r, end, "RLE runs", int(errpos[0]))
    arr, u = _out(c, signed, want)
    if want and c:
        intdecode.rle_decode(buf, r.pos, r.end, c, signed, u, errpos)
    r.pos = int(end)
    return arr


def _dict(r: ByteReader, signed: bool, expect: int | None, want: bool) -> np.ndarray | None:
    at = r.pos
    d = r.uvarint("the dictionary size")
    if d == 0 or d > DICT_MAX_DISTINCT:
        raise r.corrupt(f"dictionary size {d} is outside 1..{DICT_MAX_DISTINCT}", at)
    table = np.empty(d, dtype=np.uint64)
    for i in range(d):
        table[i] = _wire_value(r.uvarint("a dictionary value"), signed)
    bits = dict_bits(d)
    c, start = _count(r, "dictionary element count", expect)
    if bits == 0:
        _cap(r, c, expect, "dictionary element count", start)
    src = _body(r, (c * bits + 7) // 8, "dictionary indices", start)
    arr, u = _out(c, signed, want)
    if want:
        _status(r, bitpack.unpack_dict(src, bits, table, u), "dictionary index (>= dictionary size)", start)
    return arr


def _pfor(r: ByteReader, signed: bool, expect: int | None, want: bool) -> np.ndarray | None:
    c, start = _count(r, "PFOR element count", expect)
    b = _bits(r)
    base = _wire_value(r.uvarint("the PFOR minimum"), signed)
    if b == 0:
        _cap(r, c, expect, "PFOR element count", start)
    src = _body(r, (c * b + 7) // 8, "PFOR body", start)
    at = r.pos
    exc_n = r.uvarint("the PFOR exception count")
    if exc_n > c:
        raise r.corrupt(f"PFOR exception count {exc_n} exceeds the {c} rows", at)
    if 2 * exc_n > r.remaining:
        raise TruncatedError("input ends inside the PFOR exception list", column=r.column, offset=at)
    arr, u = _out(c, signed, want)
    if want:
        _status(r, bitpack.unpack_for(src, b, base, u), "PFOR body", start)
    errpos = np.zeros(1, dtype=np.int64)
    end = intdecode.pfor_patch(r.array(), r.pos, r.end, exc_n, c, base, u, errpos)
    _status(r, end, "PFOR exception list", int(errpos[0]))
    r.pos = int(end)
    return arr


def _block(r: ByteReader, expect: int | None, want: bool, depth: int) -> np.ndarray | None:
    at = r.pos
    kind = r.u8("the block kind")
    if kind not in (ColKind.INT, ColKind.UINT):  # the block container's int/uint byte
        raise r.corrupt(f"block kind 0x{kind:02x} is neither int (00) nor uint (01)", at)
    signed = kind == ColKind.INT
    at = r.pos
    blk = _BLOCK_SIZES.get(r.u8("the block size log"))
    if blk is None:
        raise r.corrupt("block size log must be 8 or 10", at)
    c, start = _count(r, "block element count", expect)
    if c == 0:
        raise r.corrupt("a block payload must hold at least one row", start)
    nblocks = (c + blk - 1) // blk
    if nblocks * _BLOCK_MIN_BYTES > r.remaining:
        raise TruncatedError(f"block payload declares {c} rows in too few bytes", column=r.column, offset=start)
    table_at = r.pos
    offs = r.take_array(4 * nblocks, "the block offset table").view("<u4").astype(np.int64)
    body = r.pos
    if offs[0] != 0 or (nblocks > 1 and bool(np.any(np.diff(offs) <= 0))):
        raise r.corrupt("block offsets must start at 0 and increase strictly", table_at)
    if body + int(offs[-1]) >= r.end:
        raise TruncatedError("a block offset points past the end of the input", column=r.column, offset=table_at)
    arr, u = _out(c, signed, want)
    if want:
        # Every block in one kernel call; a nested block payload, or any damage, is
        # re-read below in Python, which decodes the former and names the latter.
        end = blocks.block_decode(r.array(), r.end, body, offs, blk, signed, u, np.zeros(1, dtype=np.int64))
        if end >= 0:
            r.pos = int(end)
            return arr
    for b in range(nblocks):
        r.pos = body + int(offs[b])
        rows = min(blk, c - b * blk)
        v = read_int(r, rows, True, want, depth + 1)
        if b + 1 < nblocks and r.pos != body + int(offs[b + 1]):
            raise r.corrupt(f"block {b} does not end where block {b + 1} starts")
        if want:
            assert v is not None and arr is not None
            if (v.dtype == np.int64) != signed:
                raise r.corrupt(f"block {b} has the wrong signedness for its container", body + int(offs[b]))
            arr[b * blk : b * blk + rows] = v
    return arr


def read_int(r: ByteReader, expect: int | None, copy: bool, want: bool, depth: int = 0) -> np.ndarray | None:
    """Decode (``want``) or skip one integer payload at ``r.pos``; see qpack.decode_int_payload."""
    at = r.pos
    tag = r.u8("a QPack tag")
    if tag == QPackTag.RAW:
        return _raw(r, expect, copy, want)
    if tag == QPackTag.BLOCK:
        if depth >= _MAX_BLOCK_DEPTH:
            raise r.corrupt("block payloads nested too deeply", at)
        return _block(r, expect, want, depth)
    if tag in (QPackTag.FOR, QPackTag.DELTA_FOR, QPackTag.RLE, QPackTag.DICT, QPackTag.PFOR):
        kat = r.pos
        kind = r.u8("a kind byte")
        if kind not in _CODEC_KINDS:
            raise r.corrupt(f"kind 0x{kind:02x} is not allowed under tag 0x{tag:02x}", kat)
        signed = kind == Kind.I64
        if tag == QPackTag.FOR:
            return _for(r, signed, expect, want)
        if tag == QPackTag.DELTA_FOR:
            return _delta(r, signed, expect, want)
        if tag == QPackTag.RLE:
            return _rle(r, signed, expect, want)
        if tag == QPackTag.DICT:
            return _dict(r, signed, expect, want)
        return _pfor(r, signed, expect, want)
    raise UnknownCodecError(f"tag 0x{tag:02x} is not an integer QPack payload", column=r.column, offset=at)


class IntPayload:
    """One integer payload, located and checked by :func:`scan_int`, decoded on demand.

    ``values()`` is the whole column (decoded once, then kept); ``take(rows)`` the values
    at ascending row numbers of the payload. PackFor and PackRaw answer ``take`` straight
    from their bytes, so a selective filter never unpacks the other rows; every other
    codec decodes in full first (its values depend on the rows before them).
    """

    __slots__ = ("_decode", "_take", "_values")

    def __init__(self, decode, take=None, values: np.ndarray | None = None) -> None:
        self._decode = decode
        self._take = take
        self._values = values

    def values(self) -> np.ndarray:
        if self._values is None:
            self._values = self._decode()
        return self._values

    def take(self, rows: np.ndarray) -> np.ndarray:
        if self._take is None or self._values is not None:
            return self.values()[rows]
        return self._take(rows)


def _lazy_for(r: ByteReader, signed: bool, expect: int | None) -> IntPayload:
    bits = _bits(r)
    base = _wire_value(r.uvarint("the FOR minimum"), signed)
    c, start = _count(r, "FOR element count", expect)
    if bits == 0:
        _cap(r, c, expect, "FOR element count", start)
    src = _body(r, (c * bits + 7) // 8, "FOR body", start)
    dtype = np.int64 if signed else np.uint64

    def decode() -> np.ndarray:
        arr = alloc.empty(c, dtype)
        # The body length was checked above and bits <= 56 by _bits: no status to report.
        bitpack.unpack_for(src, bits, base, arr.view(np.uint64))
        return arr

    def take(rows: np.ndarray) -> np.ndarray:
        out = np.empty(len(rows), dtype=dtype)
        bitpack.take_for(src, bits, base, np.ascontiguousarray(rows, dtype=np.int64), out.view(np.uint64))
        return out

    return IntPayload(decode, take)


def _lazy_raw(r: ByteReader, expect: int | None, copy: bool) -> IntPayload:
    at = r.pos
    kind = r.u8("a kind byte")
    if kind > Kind.I64:
        raise r.corrupt(f"kind 0x{kind:02x} is not an integer kind", at)
    width = 1 << (kind & 3)
    signed = bool(kind & 4)
    c, start = _count(r, "raw element count", expect)
    data = _body(r, c * width, "raw payload", start).view(np.dtype(("<i" if signed else "<u") + str(width)))
    dtype = np.int64 if signed else np.uint64

    def decode() -> np.ndarray:
        if width == 8 and not copy:
            view = data.view(dtype)
            view.flags.writeable = False
            return view
        out = alloc.empty(c, dtype)
        out[:] = data
        return out

    return IntPayload(decode, lambda rows: data[rows].astype(dtype, copy=False))


def scan_int(r: ByteReader, expect: int | None, copy: bool = True) -> IntPayload:
    """Locate one integer payload at ``r.pos`` and leave ``r`` after it.

    The structure is checked here exactly as :func:`read_int` checks it, so a damaged
    payload raises now, with its offset; PackFor and PackRaw bodies are decoded only
    when ``values()`` or ``take()`` asks (a bounded, infallible unpack). Other codecs
    are decoded here.
    """
    tag = r.peek("a QPack tag")
    if tag == QPackTag.RAW:
        r.pos += 1
        return _lazy_raw(r, expect, copy)
    if tag == QPackTag.FOR:
        r.pos += 1
        kat = r.pos
        kind = r.u8("a kind byte")
        if kind not in _CODEC_KINDS:
            raise r.corrupt(f"kind 0x{kind:02x} is not allowed under tag 0x{tag:02x}", kat)
        return _lazy_for(r, kind == Kind.I64, expect)
    vals = read_int(r, expect, copy, True)
    assert vals is not None
    return IntPayload(None, values=vals)
