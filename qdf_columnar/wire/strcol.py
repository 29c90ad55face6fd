"""String columns of the EF container: dictionary (F5 / FA / FC), raw slab (F8), const (F9), per-value.

The encoder follows the reference picker (qdf-wire-v1.md §3.3, Go ``writeStringColumn``):
dictionary when at most 256 distinct values and the bit-packed index beats the
per-value floor of one byte per row (front-coded table when every distinct value
shares a >= 2-byte prefix, QPack-coded indices when smaller than the flat index),
else the raw slab when it is no larger than Dense per-value interning, else
per-value strings through the Dense writer. FSST (F6) and alphabet packing (FB) are
compression-tier blocks and are not written or read yet. An empty column emits
nothing, and the reader only dispatches on a block tag when n > 0 (as Go does).
Decoding produces Arrow arrays directly from (start, length) pairs into the input.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from qdf_kernels import alpha as ak
from qdf_kernels import strings as sk
from qdf_kernels._status import ERR_TRUNCATED

from ..columns import alloc
from ..errors import CorruptDataError, UnknownCodecError
from ..format.reader import ByteReader
from ..format.tags import StrColTag
from ..format.varint import uvarint_len, write_uvarint
from .bits import pack_bits, unpack_bits

DICT_MAX_DISTINCT = 256
DICT_MIN_ROWS = 16
DICT_SAMPLE = 64
DICT_SAMPLE_MAX_PCT = 70
RAW_MIN_ROWS = 16
MIN_INTERN = 4  # strings shorter than this are never interned (Go minIntern)


def _bits_for_distinct(d: int) -> int:
    return 0 if d <= 1 else int(d - 1).bit_length()


def _inline_header_len(n: int) -> int:
    return 1 if n <= 31 else 2 if n <= 0xFF else 3 if n <= 0xFFFF else 5


def _offsets_data(arr: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """int64 offsets (n+1) and uint8 data of a non-null string/binary Arrow array."""
    if pa.types.is_string(arr.type) or pa.types.is_binary(arr.type):
        off_t = np.int32
    else:
        off_t = np.int64
    bufs = arr.buffers()
    n = len(arr)
    offsets = np.frombuffer(bufs[1], dtype=off_t, count=n + 1, offset=arr.offset * np.dtype(off_t).itemsize)
    data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None else np.zeros(0, np.uint8)
    offsets = offsets.astype(np.int64)
    return offsets, data


def _common_prefix(a: bytes, b: bytes) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


# --------------------------------------------------------------------------- encode
def write_string_column(out: bytearray, arr: pa.Array, dense) -> str:
    """Append the body of a string column (no nulls in ``arr``); return the form's name."""
    n = len(arr)
    if n == 0:
        return "empty"
    if _try_dict(out, arr, n):
        return "dict"
    offsets, data = _offsets_data(arr)
    if _try_alpha(out, arr, offsets, data, n):
        return "alpha"
    if _try_raw(out, arr, offsets, data, n):
        return "raw"
    binary = pa.types.is_binary(arr.type) or pa.types.is_large_binary(arr.type)
    for i in range(n):
        dense.write_str(out, data[offsets[i] : offsets[i + 1]].tobytes(), binary=binary)
    return "values"


def _try_dict(out: bytearray, arr: pa.Array, n: int) -> bool:
    if n < DICT_MIN_ROWS:
        return False
    sample = arr.slice(0, DICT_SAMPLE)
    if n >= DICT_SAMPLE and len(pc.unique(sample)) * 100 > DICT_SAMPLE * DICT_SAMPLE_MAX_PCT:
        return False
    enc = arr.dictionary_encode()  # first-seen order, as Go's table
    table = enc.dictionary
    d = len(table)
    if d < 2 or d > DICT_MAX_DISTINCT:
        return False
    bits = _bits_for_distinct(d)
    body_bytes = (n * bits + 7) >> 3
    overhead = 1 + uvarint_len(d) + uvarint_len(n)
    idx = np.asarray(enc.indices).astype(np.uint64)
    values = [v.encode("utf-8") if isinstance(v, str) else bytes(v) for v in table.to_pylist()]
    if body_bytes + overhead >= n and body_bytes + overhead >= _per_value_floor(idx, values):
        return False
    gp = len(values[0])
    for v in values[1:]:
        gp = _common_prefix(values[0][:gp], v)
    if gp >= 2 and _write_front_coded(out, values, idx, n, bits):
        return True
    from ..codecs.qpack import encode_int_array

    qbuf = bytearray()
    encode_int_array(qbuf, idx)
    if len(qbuf) < body_bytes:
        out.append(StrColTag.DICT_Q)
        _write_table(out, values)
        out += qbuf
        return True
    out.append(StrColTag.DICT)
    _write_table(out, values)
    write_uvarint(out, n)
    out += pack_bits(idx, bits)
    return True


def _per_value_floor(idx: np.ndarray, values: list[bytes]) -> int:
    """A lower bound on the Dense per-value cost of the rows beyond each value's first sight.

    The reference gates the dictionary on a floor of one byte per row, which rejects
    129..256 distinct values although a repeat that is not the previous value costs
    at least two bytes (``E1 id`` or an inline string of >= 1 byte); accepting the
    dictionary whenever it beats this bound keeps the result smaller, and still v1.
    """
    n = len(idx)
    if n <= 1:
        return 0
    empty = np.array([len(v) == 0 for v in values])
    same = idx[1:] == idx[:-1]
    cheap = same | empty[idx[1:].astype(np.intp)]
    first_seen = len(values)  # each distinct value's first sight is paid by both forms
    return int(np.count_nonzero(cheap) + 2 * np.count_nonzero(~cheap)) - 2 * (first_seen - 1)


def _write_table(out: bytearray, values: list[bytes]) -> None:
    write_uvarint(out, len(values))
    for v in values:
        write_uvarint(out, len(v))
        out += v


def _write_front_coded(out: bytearray, values: list[bytes], idx: np.ndarray, n: int, bits: int) -> bool:
    plain = sum(uvarint_len(len(v)) + len(v) for v in values)
    order = sorted(range(len(values)), key=lambda k: values[k])
    fc = bytearray()
    write_uvarint(fc, len(values))
    prev = b""
    for k in order:
        s = values[k]
        p = _common_prefix(prev, s)
        write_uvarint(fc, p)
        write_uvarint(fc, len(s) - p)
        fc += s[p:]
        prev = s
    if len(fc) - uvarint_len(len(values)) >= plain:
        return False
    inv = np.empty(len(values), dtype=np.uint64)
    inv[np.asarray(order)] = np.arange(len(values), dtype=np.uint64)
    out.append(StrColTag.DICT_FC)
    out += fc
    write_uvarint(out, n)
    out += pack_bits(inv[idx.astype(np.intp)], bits)
    return True


def _high_cardinality_sample(arr: pa.Array, n: int) -> bool:
    """The reference's dictSampleHighCard: > 70 % distinct among the first min(n, 64) rows."""
    m = min(n, DICT_SAMPLE)
    return len(pc.unique(arr.slice(0, m))) * 100 > m * DICT_SAMPLE_MAX_PCT


def _try_alpha(out: bytearray, arr: pa.Array, offsets: np.ndarray, data: np.ndarray, n: int) -> bool:
    if n < DICT_MIN_ROWS or not _high_cardinality_sample(arr, n):
        return False
    chars = data[offsets[0] : offsets[-1]]
    code = np.full(256, -1, dtype=np.int16)
    alphabet = np.zeros(64, dtype=np.uint8)
    a = int(ak.alpha_scan(chars, code, alphabet))
    if a < 2:
        return False
    cbits = _bits_for_distinct(a)
    lens = np.diff(offsets)
    total = int(lens.sum())
    fixed = bool(np.all(lens == lens[0]))
    raw_floor = int(sk.uvarint_lens_total(offsets))
    body_bytes = (total * cbits + 7) >> 3
    overhead = 1 + uvarint_len(a) + a + uvarint_len(n) + 1
    overhead += uvarint_len(int(lens[0])) if fixed else raw_floor - total
    if overhead + body_bytes >= raw_floor:
        return False
    out.append(StrColTag.ALPHA)
    write_uvarint(out, a)
    out += alphabet[:a].tobytes()
    write_uvarint(out, n)
    out.append(1 if fixed else 0)
    if fixed:
        write_uvarint(out, int(lens[0]))
    else:
        for ln in lens.tolist():
            write_uvarint(out, ln)
    body = np.zeros(body_bytes, dtype=np.uint8)
    ak.alpha_pack_into(np.ascontiguousarray(chars), code, np.int64(cbits), body)
    out += body.tobytes()
    return True


def _try_raw(out: bytearray, arr: pa.Array, offsets: np.ndarray, data: np.ndarray, n: int) -> bool:
    if n < RAW_MIN_ROWS:
        return False
    lens = np.diff(offsets)
    total = int(lens.sum())
    bulk = int(sk.uvarint_lens_total(offsets))
    hdr = 1 + uvarint_len(n) + uvarint_len(total)
    # Per-value Dense cost: short strings inline every time; interned ones cost
    # tag + len + bytes on first sight and >= 1 byte per repeat.
    short = lens < MIN_INTERN
    per_val = int(np.sum(lens[short])) + int(np.sum(np.where(lens[short] <= 31, 1, 2)))
    long_arr = arr.filter(pa.array(~short)) if short.any() else arr
    n_long = len(long_arr)
    if n_long:
        uniq = pc.unique(long_arr)
        u_off, _ = _offsets_data(uniq)
        u_lens = np.diff(u_off)
        per_val += int(sk.uvarint_lens_total(u_off)) + len(u_lens) + (n_long - len(u_lens))
    if bulk + hdr > per_val:
        return False
    out.append(StrColTag.RAW)
    write_uvarint(out, n)
    write_uvarint(out, total)
    start = len(out)
    out.extend(bytes(bulk))
    view = np.frombuffer(out, dtype=np.uint8)[start:]
    end = sk.encode_lenprefixed_into(data, offsets, view, np.int64(0))
    del view
    assert end == bulk
    return True


# --------------------------------------------------------------------------- decode
def _nibble_lut(alphabet: np.ndarray, a: int) -> np.ndarray:
    """uint32[256]: byte -> its two characters as a little-endian uint16 (0xFFFFFFFF if invalid)."""
    v = np.arange(256)
    lo, hi = v & 15, v >> 4
    padded = np.zeros(16, dtype=np.uint32)
    padded[:a] = alphabet[:a]
    lut = padded[lo] | (padded[hi] << 8)
    lut[(lo >= a) | (hi >= a)] = 0xFFFFFFFF
    return lut.astype(np.uint32)


class StringSlices:
    """A scanned string column: where each row's bytes are, without copying them yet.

    Three shapes: per-row (start, length) pairs into ``src`` (raw slabs); dictionary
    codes into a table of (start, length) pairs (codes may still be bit-packed, so a
    filtered read unpacks only the rows it keeps); or an alpha-packed body (``alpha``)
    whose characters are unpacked on demand.
    """

    __slots__ = ("src", "starts", "lens", "_codes", "table_starts", "table_lens", "offsets", "ascii",
                 "packed", "n", "alpha")

    def __init__(self, src, starts, lens, codes=None, table_starts=None, table_lens=None, offsets=None) -> None:
        self.src = src
        self.starts = starts
        self.lens = lens
        self._codes = codes
        self.table_starts = table_starts
        self.table_lens = table_lens
        self.offsets = offsets  # set when src holds the rows back to back (no gather needed)
        self.ascii = False  # set when every byte is known to be ASCII (no UTF-8 check needed)
        self.packed: tuple[np.ndarray, int] | None = None  # (body, bits) of still-packed codes
        self.n = len(codes) if codes is not None else (len(starts) if starts is not None else 0)
        self.alpha: tuple[np.ndarray, np.ndarray, int, int] | None = None  # body, alphabet, a, cbits

    def __len__(self) -> int:
        return self.n

    @property
    def is_dict(self) -> bool:
        return self.table_lens is not None

    @property
    def codes(self) -> np.ndarray:
        if self._codes is None:
            body, bits = self.packed
            self._codes = unpack_bits(body, self.n, bits)
            self._check_codes(self._codes)
        return self._codes

    def codes_at(self, rows: np.ndarray) -> np.ndarray:
        """Codes of the selected rows only (unpacked straight from the bits when possible)."""
        if self._codes is not None or self.packed is None:
            return self.codes[rows]
        body, bits = self.packed
        out = np.empty(len(rows), dtype=np.uint64)
        sk.unpack_codes_at(body, np.int64(bits), np.ascontiguousarray(rows, dtype=np.int64), out)
        self._check_codes(out)
        return out

    def _check_codes(self, codes: np.ndarray) -> None:
        d = len(self.table_lens)
        if len(codes) and int(codes.max()) >= d:
            raise CorruptDataError(f"dictionary index {int(codes.max())} is out of range for {d} entries")

    def unpack_alpha(self) -> None:
        """Materialise an alpha-packed body into a contiguous slab (once)."""
        body, alphabet, a, cbits = self.alpha
        total = int(self.offsets[-1])
        slab = alloc.empty(total, np.uint8)
        if cbits == 4 and total >= 2:
            status = ak.alpha_unpack_nibbles_into(body, _nibble_lut(alphabet, a), slab[: total & ~1].view(np.uint16))
            if status >= 0 and total & 1:
                status = ak.alpha_unpack_into(body[total >> 1 :], alphabet, np.int64(a), np.int64(4), slab[-1:])
        else:
            status = ak.alpha_unpack_into(body, alphabet, np.int64(a), np.int64(cbits), slab)
        if status < 0:
            raise CorruptDataError("alpha code outside the alphabet")
        self.src = slab
        self.alpha = None


def _scan_table(r: ByteReader, d: int) -> tuple[np.ndarray, np.ndarray]:
    starts = np.empty(d, dtype=np.int64)
    lens = np.empty(d, dtype=np.int64)
    pos = sk.scan_lenprefixed_into(r.array(), np.int64(r.pos), np.int64(r.end), starts, lens)
    if pos < 0:
        if pos == ERR_TRUNCATED:
            raise r.truncated("a string table", 1)
        raise r.corrupt("malformed length in a string table")
    r.pos = int(pos)
    return starts, lens


def _read_codes(r: ByteReader, n: int, d: int) -> tuple[np.ndarray, int]:
    start = r.pos
    n2 = r.uvarint("dictionary row count")
    if n2 != n:
        raise r.corrupt(f"dictionary block holds {n2} rows, the container declares {n}", start)
    bits = _bits_for_distinct(d)
    nbytes = (n * bits + 7) >> 3
    return r.take_array(nbytes, "dictionary indices"), bits


def scan_string_column(r: ByteReader, n: int, dense, *, skip: bool = False) -> StringSlices | list[bytes]:
    """Parse one string column body of ``n`` values; no string bytes are copied.

    Returns :class:`StringSlices` for block forms and a list of bytes for per-value
    bodies (which must be replayed through the Dense state anyway). With ``skip``
    the caller only needs the reader moved past the body: alpha-packed bodies are
    then validated for length but not unpacked.
    """
    src = r.array()
    if n == 0:
        return StringSlices(src, np.zeros(0, np.int64), np.zeros(0, np.int64))
    tag = r.peek("a string column")
    if tag in (StrColTag.DICT, StrColTag.DICT_Q, StrColTag.DICT_FC):
        r.pos += 1
        start = r.pos
        d = r.uvarint("dictionary size")
        if d < 2 or d > DICT_MAX_DISTINCT:
            raise r.corrupt(f"dictionary size {d} is outside 2..256", start)
        packed = None
        if tag == StrColTag.DICT_FC:
            src, ts, tl = _read_front_coded(r, d)
            packed = _read_codes(r, n, d)
        else:
            ts, tl = _scan_table(r, d)
            if tag == StrColTag.DICT:
                packed = _read_codes(r, n, d)
            else:
                from ..codecs.qpack import decode_int_payload

                codes = decode_int_payload(r, n=n)
                if n and (int(codes.min()) < 0 or int(codes.max()) >= d):
                    raise r.corrupt(f"dictionary index out of range for {d} entries")
                codes = codes.astype(np.uint64, copy=False)
        if packed is not None:
            sl = StringSlices(src, None, None, table_starts=ts, table_lens=tl)
            sl.packed, sl.n = packed, n
            return sl
        return StringSlices(src, None, None, codes=codes, table_starts=ts, table_lens=tl)
    if tag == StrColTag.RAW:
        r.pos += 1
        start = r.pos
        n2 = r.uvarint("raw string count")
        if n2 != n:
            raise r.corrupt(f"raw string block holds {n2} rows, the container declares {n}", start)
        total = r.uvarint("raw string total")
        if total > r.remaining:
            raise r.truncated("a raw string block", total)
        r.need(n, "raw string lengths")  # each row takes at least its length byte
        starts = np.empty(n, dtype=np.int64)
        lens = np.empty(n, dtype=np.int64)
        body_start = r.pos
        pos = sk.scan_lenprefixed_into(src, np.int64(r.pos), np.int64(r.end), starts, lens)
        if pos < 0:
            if pos == ERR_TRUNCATED:
                raise r.truncated("a raw string block", 1)
            raise r.corrupt("malformed length in a raw string block")
        if int(lens.sum()) != total:
            raise r.corrupt(f"raw string lengths add up to {int(lens.sum())}, the block declares {total}", body_start)
        r.pos = int(pos)
        return StringSlices(src, starts, lens)
    if tag == StrColTag.CONST:
        r.pos += 1
        ln = r.uvarint("const string length")
        if ln > r.remaining:
            raise r.truncated("a const string", ln)
        s0 = r.pos
        r.pos += ln
        start = r.pos
        n2 = r.uvarint("const string count")
        if n2 != n:
            raise r.corrupt(f"const string block holds {n2} rows, the container declares {n}", start)
        ts = np.array([s0], dtype=np.int64)
        tl = np.array([ln], dtype=np.int64)
        codes = np.zeros(n, dtype=np.uint64)
        return StringSlices(src, None, None, codes=codes, table_starts=ts, table_lens=tl)
    if tag == StrColTag.ALPHA:
        r.pos += 1
        return _read_alpha(r, n, skip=skip)
    if tag == StrColTag.FSST:
        raise UnknownCodecError(
            f"string block {StrColTag(tag).name} (tag {tag:#04x}) is a compression-tier codec not supported yet",
            column=r.column,
            offset=r.pos,
        )
    r.need(n, "per-value strings")  # each value takes at least one byte
    return [read_str_bytes(r, dense) for _ in range(n)]


def read_str_bytes(r: ByteReader, dense) -> bytes:
    """One row-major string/bytes value (inline or Dense state tag) as bytes."""
    at = r.pos
    tag = r.u8("a string tag")
    v = dense.read_str(r, tag)
    if v is None:
        raise CorruptDataError(f"expected a string value, found tag {tag:#04x}", column=r.column, offset=at)
    return bytes(v)


def _read_alpha(r: ByteReader, n: int, *, skip: bool = False) -> StringSlices:
    at = r.pos
    a = r.uvarint("alphabet size")
    if a < 2 or a > 64:
        raise r.corrupt(f"alphabet size {a} is outside 2..64", at)
    alphabet = np.ascontiguousarray(r.take_array(a, "the alphabet"))
    at = r.pos
    n2 = r.uvarint("alpha string count")
    if n2 != n:
        raise r.corrupt(f"alpha string block holds {n2} rows, the container declares {n}", at)
    flags = r.u8("alpha flags")
    if flags & ~1:
        raise r.corrupt(f"unknown alpha flags {flags:#04x}", r.pos - 1)
    cbits = _bits_for_distinct(a)
    if flags & 1:
        ln = r.uvarint("alpha fixed length")
        total = n * ln
        if total * cbits > 8 * r.remaining:
            raise r.truncated("an alpha string body", (total * cbits + 7) >> 3)
        offsets = np.arange(n + 1, dtype=np.int64) * ln
    else:
        r.need(n, "alpha string lengths")
        lens = np.empty(n, dtype=np.int64)
        pos = ak.scan_uvarints_into(r.array(), np.int64(r.pos), np.int64(r.end), lens)
        if pos < 0 or (n and int(lens.min()) < 0):
            if pos == ERR_TRUNCATED:
                raise r.truncated("alpha string lengths", 1)
            raise r.corrupt("malformed alpha string length")
        r.pos = int(pos)
        total = int(lens.sum())
        if total * cbits > 8 * r.remaining:
            raise r.truncated("an alpha string body", (total * cbits + 7) >> 3)
        offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(lens, out=offsets[1:])
    body = r.take_array((total * cbits + 7) >> 3, "an alpha string body")
    sl = StringSlices(body, None, None, offsets=offsets)
    sl.n = n
    sl.alpha = (body, alphabet, a, cbits)
    sl.ascii = bool(np.all(alphabet < 0x80))
    return sl


def _read_front_coded(r: ByteReader, d: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rebuild a front-coded table into a fresh byte buffer; return (buffer, starts, lens)."""
    values: list[bytes] = []
    prev = b""
    for _ in range(d):
        p = r.uvarint("front-coded prefix length")
        s = r.uvarint("front-coded suffix length")
        if p > len(prev):
            raise r.corrupt(f"front-coded prefix {p} is longer than the previous entry ({len(prev)} bytes)")
        cur = prev[:p] + r.take_bytes(s, "a front-coded suffix")
        values.append(cur)
        prev = cur
    blob = np.frombuffer(b"".join(values), dtype=np.uint8)
    lens = np.array([len(v) for v in values], dtype=np.int64)
    starts = np.zeros(d, dtype=np.int64)
    starts[1:] = np.cumsum(lens)[:-1]
    return blob, starts, lens


def slices_to_arrow(sl: StringSlices | list[bytes], typ: pa.DataType, rows: np.ndarray | None = None) -> pa.Array:
    """Materialise (optionally only ``rows`` of) a scanned string column as an Arrow array."""
    binary = pa.types.is_binary(typ) or pa.types.is_large_binary(typ)
    if isinstance(sl, list):
        vals = sl if rows is None else [sl[i] for i in rows]
        if binary:
            return pa.array(vals, type=typ)
        try:
            return pa.array([v.decode("utf-8") for v in vals], type=typ)
        except UnicodeDecodeError as exc:
            raise CorruptDataError(f"string column holds invalid UTF-8 ({exc.reason})") from None
    if sl.alpha is not None and rows is not None:
        return _alpha_rows_to_arrow(sl, typ, binary, rows)
    if rows is None and sl.offsets is not None:
        if sl.alpha is not None:
            sl.unpack_alpha()
        return _contiguous_to_arrow(sl, typ, binary)
    if sl.is_dict:
        return _dict_to_arrow(sl, typ, binary, rows)
    if sl.starts is None:  # a contiguous slab asked for a subset of rows
        sl.starts, sl.lens = sl.offsets[:-1], np.diff(sl.offsets)
    starts, lens = sl.starts, sl.lens
    if rows is not None:
        starts = starts[rows]
        lens = lens[rows]
    n = len(starts)
    total = int(lens.sum()) if n else 0
    large = pa.types.is_large_string(typ) or pa.types.is_large_binary(typ) or total >= 2**31 - 1
    offsets = alloc.empty(n + 1, np.int64 if large else np.int32)
    offsets[0] = 0
    np.cumsum(lens, out=offsets[1:])
    data = alloc.empty(total, np.uint8)
    if n:
        sk.gather_slices_into(sl.src, starts, lens, offsets, data)
    if binary:
        base = pa.large_binary() if large else pa.binary()
    else:
        base = pa.large_string() if large else pa.string()
    out = pa.Array.from_buffers(base, n, [None, pa.py_buffer(offsets), pa.py_buffer(data)])
    if not binary:
        try:
            out.validate(full=True)
        except pa.ArrowInvalid:
            raise CorruptDataError("string column holds invalid UTF-8") from None
    if out.type != typ and not (large and typ in (pa.string(), pa.binary())):
        out = out.cast(typ)
    return out


def _dict_to_arrow(sl: StringSlices, typ: pa.DataType, binary: bool, rows: np.ndarray | None) -> pa.Array:
    """Expand a dictionary block: validate the (small) table once, then one fused gather."""
    tl = sl.table_lens
    d = len(tl)
    width = int(tl.max()) if d else 0
    words = max(1, (width + 7) >> 3)
    table = np.zeros((d, words * 8), dtype=np.uint8)
    for k in range(d):
        s0 = int(sl.table_starts[k])
        table[k, : tl[k]] = sl.src[s0 : s0 + tl[k]]
    if not binary:
        for k in range(d):
            try:
                table[k, : tl[k]].tobytes().decode("utf-8")
            except UnicodeDecodeError:
                raise CorruptDataError("string dictionary entry is not valid UTF-8") from None
    packed = sl.packed if rows is None and sl._codes is None else None
    if packed is not None:  # expand straight from the packed index: no per-row code array
        body, bits = packed
        n = sl.n
        total = int(sk.dict_total_len_packed(tl, body, np.int64(bits), np.int64(n)))
        if total < 0:
            raise CorruptDataError(f"dictionary index out of range for {d} entries")
    else:
        codes = sl.codes if rows is None else sl.codes_at(rows)
        codes = np.ascontiguousarray(codes, dtype=np.uint64)
        n = len(codes)
        total = int(sk.dict_total_len(tl, codes))
    large = pa.types.is_large_string(typ) or pa.types.is_large_binary(typ) or total >= 2**31 - 1
    offsets = alloc.empty(n + 1, np.int64 if large else np.int32)
    data = alloc.empty(total + 8, np.uint8)
    words_flat = table.view(np.uint64).ravel()
    if packed is not None:
        sk.dict_gather_packed_into(words_flat, np.int64(words), tl, body, np.int64(bits), offsets, data)
    else:
        sk.dict_gather_into(words_flat, np.int64(words), tl, codes, offsets, data)
    if binary:
        base = pa.large_binary() if large else pa.binary()
    else:
        base = pa.large_string() if large else pa.string()
    out = pa.Array.from_buffers(base, n, [None, pa.py_buffer(offsets), pa.py_buffer(data[:total])])
    return out.cast(typ) if out.type != typ and not (large and typ in (pa.string(), pa.binary())) else out


def _alpha_rows_to_arrow(sl: StringSlices, typ: pa.DataType, binary: bool, rows: np.ndarray) -> pa.Array:
    body, alphabet, a, cbits = sl.alpha
    starts = sl.offsets[:-1][rows]
    lens = sl.offsets[1:][rows] - starts
    n = len(rows)
    total = int(lens.sum()) if n else 0
    offsets = np.empty(n + 1, dtype=np.int64)
    data = np.empty(total, dtype=np.uint8)
    if ak.alpha_unpack_rows_into(body, alphabet, np.int64(a), np.int64(cbits), starts, lens, offsets, data) < 0:
        raise CorruptDataError("alpha code outside the alphabet")
    if not sl.ascii and not binary:
        try:
            data.tobytes().decode("utf-8")
        except UnicodeDecodeError:
            raise CorruptDataError("string column holds invalid UTF-8") from None
    base = (pa.large_binary() if binary else pa.large_string())
    out = pa.Array.from_buffers(base, n, [None, pa.py_buffer(offsets), pa.py_buffer(data)])
    return out.cast(typ) if out.type != typ else out


def _contiguous_to_arrow(sl: StringSlices, typ: pa.DataType, binary: bool) -> pa.Array:
    n = len(sl.offsets) - 1
    last = int(sl.offsets[-1])
    large = last >= 2**31 - 1
    if large:
        offsets = sl.offsets
    elif n and last == n * int(sl.offsets[1]):  # fixed length (hex ids): one arange, no cast
        offsets = np.arange(0, last + 1, max(1, int(sl.offsets[1])), dtype=np.int32)[: n + 1]
        if len(offsets) != n + 1:  # zero-length values
            offsets = np.zeros(n + 1, dtype=np.int32)
    else:
        offsets = sl.offsets.astype(np.int32)
    if binary:
        base = pa.large_binary() if large else pa.binary()
    else:
        base = pa.large_string() if large else pa.string()
    out = pa.Array.from_buffers(base, n, [None, pa.py_buffer(offsets), pa.py_buffer(sl.src)])
    if not binary and not sl.ascii:
        try:
            out.validate(full=True)
        except pa.ArrowInvalid:
            raise CorruptDataError("string column holds invalid UTF-8") from None
    return out.cast(typ) if out.type != typ and not (large and typ in (pa.string(), pa.binary())) else out


def slices_to_dictionary(sl: StringSlices, value_type: pa.DataType, rows: np.ndarray | None = None) -> pa.Array:
    """A DictionaryArray straight from a dictionary block (no expansion of the values)."""
    table = StringSlices(sl.src, sl.table_starts, sl.table_lens)
    dictionary = slices_to_arrow(table, value_type)
    codes = sl.codes if rows is None else sl.codes_at(rows)
    return pa.DictionaryArray.from_arrays(pa.array(codes.astype(np.int32)), dictionary)


