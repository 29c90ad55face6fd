"""F6 ColStrFSST string-column blocks: train, gate and write; read and skip.

Layout after the F6 tag (qdf-wire-v1.md §2.5, checked against the reference's
internal/fsst/fsst.go and colstr_fsst.go): ``uvarint(count)`` (0..255), count x (len
byte 1..8, bytes), ``uvarint(n)``, ``uvarint(totalDecodedBytes)``, n x
(``uvarint(codeLen)``, codes); code 255 = escape (next byte literal), code c < count =
symbol c. The writer's gate is the reference's (§3.3): n >= 16 and the whole block, tag
included, strictly smaller than sum(len) + n.

Training differs from the reference on purpose (docs: kernels/fsst_train.py): the
reference counts tokens and adjacent pairs on the first 8 KiB of the column for 3
rounds; we follow the paper (up to 12 generations on a ~16 KB random-row sample, pair
and one-byte-extension candidates, libfsst's gain weights, one hashed symbol per 3-byte
prefix; growing stops once the tables stop coding the sample smaller, and the best
table takes the last round) and prune entries that cannot pay for themselves. Any
table is valid wire.

The reader is stricter than the reference's, which skips unknown codes, drops a
dangling escape and only caps (never checks) totalDecodedBytes: all three are
CorruptDataError here, since no writer produces them.
"""

from __future__ import annotations

import numpy as np
from qdf_kernels import fsst as fk
from qdf_kernels import fsst_train as ft
from qdf_kernels._status import ERR_TRUNCATED

from ..columns import alloc
from ..format.reader import ByteReader
from ..format.tags import StrColTag
from ..format.varint import uvarint_len, write_uvarint

__all__ = ["FSST_MIN_ROWS", "FsstBody", "fsst_block", "try_write_fsst", "read_fsst", "scan_fsst", "skip_fsst"]

FSST_MIN_ROWS = 16  # fsstMinElems: below this a per-column table cannot pay off
PROJECT_MIN_BYTES = 1 << 16  # smaller columns are simply encoded (the trial costs < 0.2 ms)
PROJECT_BYTES = 1 << 16  # input bytes of whole rows the projection encodes
PROJECT_SEED = 0x2545F4914F6CDD1D  # any seed other than the training sample's
PROJECT_MARGIN = 0.04  # projections measured within 1.3 % on the logs, access and AD fixture columns
MAX_EXPANSION = 8  # fsstMaxDecompPerByte: one code byte yields at most an 8-byte symbol
_SLACK = 8  # decode over-copies whole 8-byte words past the last symbol
_ENCODE_SLACK = 12  # 10-byte worst-case length prefix - 1-byte real one + 2 bytes per token check


def _ro(a: np.ndarray) -> np.ndarray:
    # Kernels always see read-only views, so each has one compiled specialisation.
    v = a.view()
    v.flags.writeable = False
    return v


def try_write_fsst(out: bytearray, offsets: np.ndarray, data: np.ndarray, n: int, limit: int | None = None) -> bool:
    """Append a whole F6 block (tag included) for the ``n`` strings when it passes the gate.

    ``offsets`` (int64, n + 1) and ``data`` (uint8) hold the strings back to back.
    Returns False, writing nothing, when n < 16 or the block would not be strictly
    smaller than sum(len) + n (the reference's never-larger baseline) and than
    ``limit`` when given (the size of the best other form of the column).
    """
    block = fsst_block(offsets, data, n, limit)
    if block is None:
        return False
    out += block
    return True


def fsst_block(offsets: np.ndarray, data: np.ndarray, n: int, limit: int | None = None,
               cap: int | None = None) -> bytearray | None:
    """The whole F6 block (tag included), or None when it is not strictly smaller than the gate.

    The gate is min(sum(len) + n, ``limit``, ``cap``). Work is spent in order of cost: a
    lower bound (every code an 8-byte symbol) is checked first; after training, a column
    larger than ``PROJECT_MIN_BYTES`` is projected from a held-out sample of rows and
    abandoned when the projection exceeds min(sum(len) + n, ``limit``) by more than
    ``PROJECT_MARGIN``; only then is the whole column encoded, into a buffer sized to the
    gate (plus a few bytes of slack) so a losing encode stops as soon as it passes it.

    ``cap`` is a bound the projection does not look at: with it, the answer is exactly
    the one without it whenever that one is below it. A projection is an estimate, so
    judged against a bound a caller may lower it could drop a block that would have been
    kept (the string picker passes its caller's limit as ``cap``).
    """
    if n < FSST_MIN_ROWS:
        return None
    offsets = _ro(np.ascontiguousarray(offsets[: n + 1], dtype=np.int64))
    data = _ro(np.ascontiguousarray(data, dtype=np.uint8))
    if int(offsets[0]) < 0 or int(offsets[n]) > len(data):
        raise ValueError(f"string offsets {int(offsets[0])}..{int(offsets[n])} fall outside {len(data)} data bytes")
    raw = int(offsets[n] - offsets[0])
    budget = raw + n  # what the projection judges against
    if limit is not None:
        budget = min(budget, int(limit))
    gate = budget if cap is None else min(budget, int(cap))  # the block must be strictly smaller than this
    if raw == 0:
        return None  # table count + n + total + n empty rows already exceeds n
    fixed = 2 + uvarint_len(n) + uvarint_len(raw)  # tag, empty table, n, total
    lens = np.diff(offsets)
    if fixed + n + int(((lens + 7) >> 3).sum()) >= gate:
        return None  # even 8 bytes per code (and 1-byte code lengths) would not win

    target = ft.SAMPLE_TARGET
    sbuf = np.empty(target + ft.SAMPLE_CHUNK, np.uint8)
    soff = np.empty(target + ft.SAMPLE_CHUNK + 1, np.int64)
    m = ft.fsst_sample_into(data, offsets, np.int64(target), sbuf, soff)
    sample_bytes = int(soff[m])
    if sample_bytes == 0:
        return None  # random draws found only empty rows: nothing to train on
    sym_vals = np.zeros(fk.MAX_SYMBOLS, np.uint64)
    sym_lens = np.zeros(fk.MAX_SYMBOLS, np.uint8)
    h_val = np.zeros(fk.HASH_SIZE, np.uint64)
    h_info = np.zeros(fk.HASH_SIZE, np.uint16)
    short = np.empty(65536, np.uint16)
    byte_info = np.empty(256, np.uint16)
    stats = np.zeros(1, np.int64)
    count = ft.fsst_train_into(sbuf, soff, np.int64(m), raw / sample_bytes, sym_vals, sym_lens,
                               h_val, h_info, short, byte_info, stats)
    if int(stats[0]) >= sample_bytes:
        return None  # codes alone are no smaller than the bytes: the block cannot win
    lookup = (_ro(h_val), _ro(h_info), _ro(short), _ro(byte_info))

    head = bytearray((StrColTag.FSST,))
    write_uvarint(head, count)
    for c in range(count):
        ln = int(sym_lens[c])
        head.append(ln)
        head += int(sym_vals[c]).to_bytes(8, "little")[:ln]
    write_uvarint(head, n)
    write_uvarint(head, raw)
    room = gate - len(head)  # largest body that still passes the strict gate
    if room <= n:
        return None  # every row needs at least its code-length byte
    if raw > PROJECT_MIN_BYTES:
        res = np.zeros(3, np.int64)
        fk.fsst_estimate_rows(data, offsets, *lookup, np.int64(PROJECT_BYTES), np.uint64(PROJECT_SEED), res)
        if int(res[0]) and len(head) + n * int(res[1]) / int(res[0]) > budget * (1 + PROJECT_MARGIN):
            return None
    # The kernel checks room conservatively (a worst-case code-length prefix, two bytes a
    # token), up to _ENCODE_SLACK bytes early; the slack makes the gate exact.
    body = np.empty(room - 1 + _ENCODE_SLACK, np.uint8)
    size = fk.fsst_encode_into(data, offsets, *lookup, body)
    if size < 0 or size > room - 1:
        return None
    head += memoryview(body)[:size]
    return head


def _read_head(r: ByteReader, n: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Parse table, row count and decoded size; return (symbol words, lengths, total)."""
    words = np.zeros(256, np.uint64)
    lens = np.zeros(256, np.uint8)  # zero length marks codes that are not symbols
    errpos = np.zeros(1, np.int64)
    pos = fk.fsst_read_table(_ro(r.array()), np.int64(r.pos), np.int64(r.end), words, lens, errpos)
    if pos < 0:
        if pos == ERR_TRUNCATED:
            r.pos = int(errpos[0])
            raise r.truncated("an FSST symbol table", 1)
        raise r.corrupt("malformed FSST symbol table (more than 255 symbols or a length outside 1..8)",
                        int(errpos[0]))
    r.pos = int(pos)
    at = r.pos
    n2 = r.uvarint("FSST row count")
    if n2 != n:
        raise r.corrupt(f"FSST block holds {n2} rows, the container declares {n}", at)
    at = r.pos
    total = r.uvarint("FSST decoded size")
    r.need(n, "FSST code lengths")  # each row takes at least its code-length byte
    if total > MAX_EXPANSION * (r.remaining - n):
        raise r.truncated(f"an FSST block declaring {total} decoded bytes", -(-total // MAX_EXPANSION) + n)
    return _ro(words), _ro(lens), total


def read_fsst(r: ByteReader, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Decode an F6 block (``r`` just after the tag) into (offsets int64 n + 1, data uint8)."""
    words, lens, total = _read_head(r, n)
    return _decode_all(r, words, lens, total, n)


def _decode_all(r: ByteReader, words: np.ndarray, lens: np.ndarray, total: int,
                n: int) -> tuple[np.ndarray, np.ndarray]:
    offsets = alloc.empty(n + 1, np.int64)
    data = alloc.empty(total + _SLACK, np.uint8)
    errpos = np.zeros(1, np.int64)
    pos = fk.fsst_decode_into(_ro(r.array()), np.int64(r.pos), np.int64(r.end), words, lens, offsets, data,
                              np.int64(total), errpos)
    if pos < 0:
        r.pos = int(errpos[0])
        if pos == ERR_TRUNCATED:
            raise r.truncated("FSST codes", 1)
        raise r.corrupt("invalid FSST codes (unknown code, dangling escape or a size other than declared)")
    r.pos = int(pos)
    return offsets, data[:total]


class FsstBody:
    """An F6 block located and framed but not decoded: :meth:`decode` gives every row
    (checked exactly as :func:`read_fsst` checks it), :meth:`decode_rows` only the rows
    a filter kept (their codes checked; the other rows are only framed)."""

    __slots__ = ("r", "words", "lens", "total", "n")

    def __init__(self, r: ByteReader, words: np.ndarray, lens: np.ndarray, total: int, n: int) -> None:
        self.r, self.words, self.lens, self.total, self.n = r, words, lens, total, n

    def decode(self) -> tuple[np.ndarray, np.ndarray]:
        """(offsets int64 n + 1, data uint8) of every row, which must end the block."""
        r = ByteReader(self.r.buf, self.r.pos, self.r.end)
        r.column = self.r.column
        out = _decode_all(r, self.words, self.lens, self.total, self.n)
        if r.pos != r.end:
            raise r.corrupt(f"FSST rows end {r.end - r.pos} bytes before their column body", r.pos)
        return out

    def decode_rows(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(offsets int64 len(rows) + 1, data uint8) of the ascending ``rows``."""
        r = self.r
        src = _ro(r.array())
        rows = _ro(np.ascontiguousarray(rows, dtype=np.int64))
        offsets = alloc.empty(len(rows) + 1, np.int64)
        errpos = np.zeros(1, np.int64)
        args = (src, np.int64(r.pos), np.int64(r.end), rows, self.words, self.lens, offsets)
        at = np.empty((2, len(rows)), np.int64)  # each row's codes, found by the measuring walk
        total = fk.fsst_decode_rows(*args, np.empty(0, np.uint8), True, at, errpos)
        if total >= 0:
            data = alloc.empty(int(total) + _SLACK, np.uint8)
            total = fk.fsst_decode_rows(*args, data, False, at, errpos)
        if total < 0:
            at = ByteReader(r.buf, int(errpos[0]), r.end)
            at.column = r.column
            if total == ERR_TRUNCATED:
                raise at.truncated("FSST codes", 1)
            raise at.corrupt("invalid FSST codes (unknown code or dangling escape)")
        return offsets, data[: int(total)]


def scan_fsst(r: ByteReader, n: int, end: int | None = None) -> FsstBody:
    """Check an F6 block's table and counts (``r`` just after the tag) and leave ``r``
    after it, decoding nothing yet. The rows' framing is walked now, unless ``end`` (the
    column body's end, from a column index) says where the block ends: a full decode
    then checks the rows end exactly there, and a decode of some rows frames the rows
    up to them."""
    words, lens, total = _read_head(r, n)
    body = ByteReader(r.buf, r.pos, r.end)
    body.column = r.column
    if end is None:
        _frame_rows(r, n)
        end = r.pos
    elif end < r.pos or end > r.end:
        raise r.corrupt(f"the FSST block's column body ends at {end}, outside its rows", r.pos)
    body.end = r.pos = end
    return FsstBody(body, words, lens, total, n)


def skip_fsst(r: ByteReader, n: int) -> None:
    """Move ``r`` (just after the F6 tag) past the block, checking its framing only."""
    _read_head(r, n)
    _frame_rows(r, n)


def _frame_rows(r: ByteReader, n: int) -> None:
    """Walk the ``n`` (code length, codes) rows at ``r.pos``, leaving ``r`` after them."""
    errpos = np.zeros(1, np.int64)
    pos = fk.fsst_skip_rows(_ro(r.array()), np.int64(r.pos), np.int64(r.end), np.int64(n), errpos)
    if pos < 0:
        r.pos = int(errpos[0])
        if pos == ERR_TRUNCATED:
            raise r.truncated("FSST codes", 1)
        raise r.corrupt("malformed FSST code length")
    r.pos = int(pos)
