"""Parse string-column bodies into :class:`StringSlices` without copying string bytes.

Reads every block form (F5, FA, FC, F8, F9, FB) and per-value Dense strings, checking
each length and count against the bytes left before anything is sized. Dictionary
codes stay bit-packed and alpha bodies stay packed until a caller materialises all
rows or only the ones a filter kept (:mod:`qdf_columnar.wire.strcol_arrow`).
Per-value strings are the exception: they are read by a Numba kernel
(``qdf_kernels.dense_strings``) that replays the Dense state, then gathered into one
slab, because later values and columns depend on that state.
"""

from __future__ import annotations

import numpy as np
from qdf_kernels import alpha as ak
from qdf_kernels import dense_strings as dsk
from qdf_kernels import strings as sk
from qdf_kernels._status import ERR_OVERFLOW, ERR_TRUNCATED

from ..codecs.intdec import IntPayload, scan_int
from ..columns import alloc
from ..errors import CorruptDataError
from ..format.reader import ByteReader
from ..format.tags import StrColTag
from .bits import bits_for_distinct, unpack_bits
from .strcol_write import DICT_MAX_DISTINCT

#: Per-value runs this short are read by the Python reader unless the state is already in array form.
SMALL_RUN = 8
#: ... and so are runs with fewer rows than 1/STATE_PER_ROW of the interned ids.
STATE_PER_ROW = 8


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

    Four shapes: per-row (start, length) pairs into ``src`` (raw slabs); dictionary
    codes into a table of (start, length) pairs (codes may still be bit-packed, so a
    filtered read unpacks only the rows it keeps); an alpha-packed body (``alpha``)
    whose characters are unpacked on demand; or an FSST block (``fsst``) decoded on
    demand, whole or only the rows a filter kept.
    """

    __slots__ = ("src", "starts", "lens", "_codes", "table_starts", "table_lens", "offsets", "ascii",
                 "packed", "n", "alpha", "payload", "fsst")

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
        #: (QPack integer payload of the codes, its offset, its column) while not decoded
        self.payload: tuple[IntPayload, int, str | None] | None = None
        #: an F6 block not decoded yet (:class:`..codecs.fsst.FsstBody`)
        self.fsst = None

    def __len__(self) -> int:
        return self.n

    @property
    def is_dict(self) -> bool:
        return self.table_lens is not None

    @property
    def codes(self) -> np.ndarray:
        if self._codes is None:
            if self.payload is not None:
                payload, at, column = self.payload
                self._codes = self._checked(payload.values(), at, column)
            else:
                body, bits = self.packed
                self._codes = unpack_bits(body, self.n, bits)
                self._check_codes(self._codes)
        return self._codes

    def codes_at(self, rows: np.ndarray) -> np.ndarray:
        """Codes of the selected rows only (unpacked straight from the bits or runs when possible)."""
        if self._codes is None and self.payload is not None:
            payload, at, column = self.payload
            return self._checked(payload.take(rows), at, column)
        if self._codes is not None or self.packed is None:
            return self.codes[rows]
        body, bits = self.packed
        out = np.empty(len(rows), dtype=np.uint64)
        sk.unpack_codes_at(body, np.int64(bits), np.ascontiguousarray(rows, dtype=np.int64), out)
        self._check_codes(out)
        return out

    def code_runs(self) -> tuple[np.ndarray, np.ndarray] | None:
        """(the code of each run, the row each run ends before) while the codes are a
        QPack payload kept as runs (see :meth:`IntPayload.runs`), else None."""
        if self._codes is not None or self.payload is None:
            return None
        payload, at, column = self.payload
        runs = payload.runs()
        if runs is None:
            return None
        return self._checked(runs[0], at, column), runs[1]

    def _checked(self, codes: np.ndarray, at: int, column: str | None) -> np.ndarray:
        """QPack-coded codes as uint64, each checked to be a dictionary entry."""
        d = len(self.table_lens)
        if len(codes) and ((codes.dtype == np.int64 and int(codes.min()) < 0) or int(codes.max()) >= d):
            raise CorruptDataError(f"dictionary index out of range for {d} entries", column=column, offset=at)
        return codes.astype(np.uint64, copy=False)

    def _check_codes(self, codes: np.ndarray) -> None:
        d = len(self.table_lens)
        if len(codes) and int(codes.max()) >= d:
            raise CorruptDataError(f"dictionary index {int(codes.max())} is out of range for {d} entries")

    def unpack_fsst(self) -> None:
        """Decode an F6 block into a contiguous slab (once)."""
        self.offsets, self.src = self.fsst.decode()
        self.fsst = None

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
    bits = bits_for_distinct(d)
    nbytes = (n * bits + 7) >> 3
    return r.take_array(nbytes, "dictionary indices"), bits


def scan_string_column(r: ByteReader, n: int, dense, *, skip: bool = False,
                       end: int | None = None) -> StringSlices | list[bytes]:
    """Parse one string column body of ``n`` values; no string bytes are copied.

    Returns :class:`StringSlices` (per-value bodies are replayed through the Dense
    state by a kernel and gathered into one slab; a list of bytes only when a row
    needed the Python reader, see :func:`_scan_per_value`). With ``skip``
    the caller only needs the reader moved past the body: alpha-packed bodies are
    then validated for length but not unpacked. ``end``: where the body ends, when a
    column index says so (an FSST block is then framed when it is decoded, not now).
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
                # Codes that stay packed (FOR) or in runs (long RLE runs) are checked when
                # decoded; the others are decoded and checked now, as before.
                at = r.pos
                payload = scan_int(r, n)
        sl = StringSlices(src, None, None, table_starts=ts, table_lens=tl)
        sl.n = n
        if packed is not None:
            sl.packed = packed
        elif payload.decoded:
            sl._codes = sl._checked(payload.values(), r.pos, r.column)
        else:
            sl.payload = (payload, at, r.column)
        return sl
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
        from ..codecs.fsst import scan_fsst, skip_fsst

        r.pos += 1
        if skip:
            skip_fsst(r, n)
            return StringSlices(np.zeros(0, np.uint8), np.zeros(n, np.int64), np.zeros(n, np.int64))
        sl = StringSlices(np.zeros(0, np.uint8), None, None)
        sl.fsst = scan_fsst(r, n, end)  # decoded when materialised (a filter's rows only)
        sl.n = n
        return sl
    r.need(n, "per-value strings")  # each value takes at least one byte
    return _scan_per_value(r, n, dense, skip)


def _scan_per_value(r: ByteReader, n: int, dense, skip: bool) -> StringSlices | list[bytes]:
    """M per-value strings: the Dense kernel reads the run and replays the intern state.

    The kernel stops before any row it does not take (anything malformed); that row and
    the rest are then read by :meth:`DenseReader.read_str`, which raises the usual typed
    error from the same state, so both paths decode (and fail) identically.
    """
    if not dense._native and (n <= SMALL_RUN or n * STATE_PER_ROW < len(dense.values)):
        # Switching the state to its array form costs O(interned ids): only for runs long
        # enough to pay for it, so no input can make the switches dominate.
        return [read_str_bytes(r, dense) for _ in range(n)]
    src = r.array()
    starts = np.empty(n, dtype=np.int64)
    lens = np.empty(n, dtype=np.int64)
    done, pos, total = dense.scan_values(src, r.pos, r.end, n, starts, lens)
    r.pos = pos
    if done < n:
        slab = dense.slab
        vals = [(src[s : s + ln] if s >= 0 else slab[-s - 1 : -s - 1 + ln]).tobytes()
                for s, ln in zip(starts[:done].tolist(), lens[:done].tolist())]
        vals += [read_str_bytes(r, dense) for _ in range(n - done)]
        return vals
    if skip:
        return StringSlices(np.zeros(0, np.uint8), np.zeros(n, np.int64), np.zeros(n, np.int64))
    offsets = alloc.empty(n + 1, np.int64)
    data = alloc.empty(total, np.uint8)
    dsk.dense_gather_into(src, dense.slab, starts, lens, offsets, data)
    sl = StringSlices(data, None, None, offsets=offsets)
    sl.n = n
    return sl


def read_str_bytes(r: ByteReader, dense) -> bytes:
    """One row-major string/bytes value (inline or Dense state tag) as bytes."""
    at = r.pos
    tag = r.u8("a string tag")
    v = dense.read_str(r, tag)
    if v is None:
        raise CorruptDataError(f"expected a string value, found tag {tag:#04x}", column=r.column, offset=at)
    return v if type(v) is bytes else bytes(v)


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
    cbits = bits_for_distinct(a)
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
    prefix, suffix_at, lens = (np.empty(d, dtype=np.int64) for _ in range(3))
    # An entry may repeat its predecessor for two bytes of wire, so the rebuilt table is
    # bounded by the decoder's output cap rather than by the bytes left.
    cap = max(1 << 28, 64 * r.remaining)
    pos = sk.front_coded_scan(r.array(), np.int64(r.pos), np.int64(r.end), prefix, suffix_at, lens, np.int64(cap))
    if pos < 0:
        if pos == ERR_TRUNCATED:
            raise r.truncated("a front-coded dictionary table", 1)
        if pos == ERR_OVERFLOW:
            raise r.corrupt(f"front-coded dictionary table rebuilds to more than {cap} bytes")
        raise r.corrupt("front-coded table: a prefix is longer than the previous entry, or a bad varint")
    starts = np.zeros(d, dtype=np.int64)
    if d:
        np.cumsum(lens[:-1], out=starts[1:])
    blob = np.empty(int(lens.sum()) if d else 0, dtype=np.uint8)
    sk.front_coded_build(r.array(), prefix, suffix_at, lens, starts, blob)
    r.pos = int(pos)
    return blob, starts, lens
