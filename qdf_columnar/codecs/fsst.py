"""F6 ColStrFSST string-column blocks: train, gate and write; read and skip.

Layout after the F6 tag (qdf-wire-v1.md §2.5, checked against the reference's
internal/fsst/fsst.go and colstr_fsst.go): ``uvarint(count)`` (0..255), count x (len
byte 1..8, bytes), ``uvarint(n)``, ``uvarint(totalDecodedBytes)``, n x
(``uvarint(codeLen)``, codes); code 255 = escape (next byte literal), code c < count =
symbol c. The writer's gate is the reference's (§3.3): n >= 16 and the whole block, tag
included, strictly smaller than sum(len) + n.

Training differs from the reference on purpose (docs: kernels/fsst_train.py): the
reference counts tokens and adjacent pairs on the first 8 KiB of the column for 3
rounds; we follow the paper (5 generations on a ~16 KB random-row sample, pair and
one-byte-extension candidates, libfsst's gain weights, one hashed symbol per 3-byte
prefix) and prune entries that cannot pay for themselves. Any table is valid wire.

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
from ..format.varint import write_uvarint

__all__ = ["FSST_MIN_ROWS", "try_write_fsst", "read_fsst", "skip_fsst"]

FSST_MIN_ROWS = 16  # fsstMinElems: below this a per-column table cannot pay off
MAX_EXPANSION = 8  # fsstMaxDecompPerByte: one code byte yields at most an 8-byte symbol
_SLACK = 8  # decode over-copies whole 8-byte words past the last symbol


def _ro(a: np.ndarray) -> np.ndarray:
    # Kernels always see read-only views, so each has one compiled specialisation.
    v = a.view()
    v.flags.writeable = False
    return v


def try_write_fsst(out: bytearray, offsets: np.ndarray, data: np.ndarray, n: int) -> bool:
    """Append a whole F6 block (tag included) for the ``n`` strings when it passes the gate.

    ``offsets`` (int64, n + 1) and ``data`` (uint8) hold the strings back to back.
    Returns False, writing nothing, when n < 16 or the block would not be strictly
    smaller than sum(len) + n (the reference's never-larger baseline).
    """
    if n < FSST_MIN_ROWS:
        return False
    offsets = _ro(np.ascontiguousarray(offsets[: n + 1], dtype=np.int64))
    data = _ro(np.ascontiguousarray(data, dtype=np.uint8))
    if int(offsets[0]) < 0 or int(offsets[n]) > len(data):
        raise ValueError(f"string offsets {int(offsets[0])}..{int(offsets[n])} fall outside {len(data)} data bytes")
    raw = int(offsets[n] - offsets[0])
    budget = raw + n  # the block must be strictly smaller than this
    if raw == 0:
        return False  # table count + n + total + n empty rows already exceeds n

    target = ft.SAMPLE_TARGET
    sbuf = np.empty(target + ft.SAMPLE_CHUNK, np.uint8)
    soff = np.empty(target + ft.SAMPLE_CHUNK + 1, np.int64)
    m = ft.fsst_sample_into(data, offsets, np.int64(target), sbuf, soff)
    sample_bytes = int(soff[m])
    if sample_bytes == 0:
        return False  # random draws found only empty rows: nothing to train on
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
        return False  # codes alone are no smaller than the bytes: the block cannot win

    head = bytearray((StrColTag.FSST,))
    write_uvarint(head, count)
    for c in range(count):
        ln = int(sym_lens[c])
        head.append(ln)
        head += int(sym_vals[c]).to_bytes(8, "little")[:ln]
    write_uvarint(head, n)
    write_uvarint(head, raw)
    room = budget - 1 - len(head)  # largest body that still passes the strict gate
    if room < n:
        return False  # every row needs at least its code-length byte
    body = np.empty(room, np.uint8)
    size = fk.fsst_encode_into(data, offsets, _ro(h_val), _ro(h_info), _ro(short), _ro(byte_info), body)
    if size < 0:
        return False
    out += head
    out += memoryview(body)[:size]
    return True


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


def skip_fsst(r: ByteReader, n: int) -> None:
    """Move ``r`` (just after the F6 tag) past the block, checking its framing only."""
    _read_head(r, n)
    errpos = np.zeros(1, np.int64)
    pos = fk.fsst_skip_rows(_ro(r.array()), np.int64(r.pos), np.int64(r.end), np.int64(n), errpos)
    if pos < 0:
        r.pos = int(errpos[0])
        if pos == ERR_TRUNCATED:
            raise r.truncated("FSST codes", 1)
        raise r.corrupt("malformed FSST code length")
    r.pos = int(pos)
