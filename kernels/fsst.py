"""FSST kernels for the F6 ColStrFSST string block: symbol lookup, encode, decode, skip.

Wire body after the F6 tag (qdf-wire-v1.md §2.5): ``uvarint(count)`` (<= 255), count x
(len byte 1..8, bytes), ``uvarint(n)``, ``uvarint(totalDecodedBytes)``, then n x
(``uvarint(codeLen)``, codes). Code 255 escapes the next byte; code c < count emits
symbol c. Training lives in :mod:`qdf_kernels.fsst_train`.

Encoding uses the paper's lookup (Boncz et al., PVLDB 2020, §4): symbols of length >= 3
sit in a lossy perfect hash keyed by their first 3 bytes (the table builder refuses a
symbol whose slot is taken, so one probe decides), and a 64K ``short`` table maps the
next 2 bytes to the best 2- or 1-byte symbol or to the escape. Lookup results are packed
``len << 8 | code``. Decoding copies each symbol as one 8-byte word (over-copy into 8
bytes of slack). Kernels never raise: they return a position / size, or a negative
``_status`` with the failing byte position in ``errpos[0]``.
"""

from __future__ import annotations

import numpy as np

from ._jit import kernel
from ._status import ERR_CORRUPT, ERR_OVERFLOW, ERR_TRUNCATED
from .bitpack import store_le64
from .strings import read_uvarint_at

ESCAPE = 255
MAX_SYMBOLS = 255  # codes 0..254; 255 is the escape
MAX_SYMBOL_LEN = 8
HASH_SIZE = 4096  # 16 slots per symbol keeps hash-collision rejections rare
ESCAPE_INFO = (1 << 8) | ESCAPE  # lookup entry "escape this one byte"

_U0 = np.uint64(0)
_U1 = np.uint64(1)
_U8 = np.uint64(8)
_HI = np.uint64(0x80)  # a uvarint byte with this bit set continues
_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)


@kernel
def fsst_hash3(w):
    """Hash slot of the first 3 bytes of little-endian word ``w``."""
    x = (w & np.uint64(0xFFFFFF)) * np.uint64(2971215073)
    return ((x >> np.uint64(15)) ^ (x >> np.uint64(29))) & np.uint64(HASH_SIZE - 1)


@kernel
def fsst_lookup_reset(h_info, short, byte_info):
    """Empty table: every byte escapes, no hashed symbols."""
    h_info[:] = 0
    byte_info[:] = ESCAPE_INFO
    short[:] = ESCAPE_INFO


@kernel
def fsst_lookup_add(val, ln, code, h_val, h_info, byte_info):
    """Register symbol ``code``; False when its hash slot is taken (the caller drops it).

    2-byte symbols are placed by :func:`fsst_lookup_finish`, after all single bytes are
    known, because their ``short`` entries default to the first byte's entry.
    """
    if ln >= 3:
        h = fsst_hash3(val)
        if h_info[h] != 0:
            return False
        h_val[h] = val
        h_info[h] = np.uint16((ln << 8) | code)
    elif ln == 1:
        byte_info[val & np.uint64(0xFF)] = np.uint16((1 << 8) | code)
    return True


@kernel
def fsst_lookup_finish(sym_vals, sym_lens, count, short, byte_info):
    """Fill ``short``: each 2-byte key maps to its 2-byte symbol, else to its first byte's entry."""
    for k in range(65536):
        short[k] = byte_info[k & 0xFF]
    for c in range(count):
        if sym_lens[c] == 2:
            short[sym_vals[c] & np.uint64(0xFFFF)] = np.uint16((2 << 8) | c)


@kernel
def fsst_encode_into(data, offsets, h_val, h_info, short, byte_info, out):
    """Write every row as ``uvarint(codeLen), codes`` into ``out`` from 0.

    Returns the bytes written, or ERR_OVERFLOW as soon as the output would pass
    ``len(out)`` (the caller sizes ``out`` to the never-larger budget, so a column that
    does not compress stops early). Each row's length prefix is reserved for the worst
    case (2 bytes per input byte) and the codes are moved back if the prefix is shorter.
    """
    n = offsets.shape[0] - 1
    cap = np.uint64(out.shape[0])
    p = _U0
    for i in range(n):
        s = np.uint64(offsets[i])
        e = np.uint64(offsets[i + 1])
        reserve = _U1
        v = (e - s) << _U1
        while v >= np.uint64(0x80):
            v >>= np.uint64(7)
            reserve += _U1
        if p + reserve + np.uint64(2) > cap:
            return ERR_OVERFLOW
        q = p + reserve
        j = s
        while j < e:
            if q + np.uint64(2) > cap:
                return ERR_OVERFLOW
            # fsst_train.fsst_match inlined: a call passing arrays costs NRT refcount traffic per token
            rem = e - j
            w = _U0
            if rem >= _U8:
                for k in range(8):
                    w |= np.uint64(data[j + np.uint64(k)]) << np.uint64(8 * k)
            else:
                for k in range(rem):
                    w |= np.uint64(data[j + np.uint64(k)]) << (np.uint64(k) * _U8)
            info = np.uint16(0)
            if rem >= np.uint64(3):
                h = fsst_hash3(w)
                hi = h_info[h]
                ln = np.uint64(hi >> 8)
                if ln != _U0 and ln <= rem and (w & (_ALL >> (np.uint64(64) - (ln << np.uint64(3))))) == h_val[h]:
                    info = hi
            if info == 0:
                info = short[w & np.uint64(0xFFFF)] if rem >= np.uint64(2) else byte_info[w & np.uint64(0xFF)]
            code = np.uint8(info & 0xFF)
            out[q] = code
            q += _U1
            if code == ESCAPE:
                out[q] = data[j]
                q += _U1
            j += np.uint64(info >> 8)
        cl = q - p - reserve
        v = cl
        k = p
        while v >= np.uint64(0x80):
            out[k] = np.uint8((v & np.uint64(0x7F)) | np.uint64(0x80))
            v >>= np.uint64(7)
            k += _U1
        out[k] = np.uint8(v)
        k += _U1
        if k < p + reserve:
            for t in range(cl):
                out[k + np.uint64(t)] = out[p + reserve + np.uint64(t)]
        p = k + cl
    return np.int64(p)


@kernel
def fsst_estimate_rows(data, offsets, h_val, h_info, short, byte_info, target, seed, res):
    """Encoded size of a pseudo-random sample of whole rows, to project a column's body.

    Draws rows uniformly (with replacement, xorshift from ``seed``) until ``target``
    input bytes or 4 x ``target`` rows were drawn, and encodes each as the writer would.
    ``res`` receives (rows drawn, their body bytes: uvarint(codeLen) + codes, their
    input bytes); n * res[1] / res[0] projects the column body without bias. Rows
    are drawn with another seed than the training sample, so the projection is not
    flattered by rows the table was trained on.
    """
    n = np.uint64(offsets.shape[0] - 1)
    rows = 0
    body = 0
    nbytes = 0
    x = np.uint64(seed)
    while nbytes < target and rows < 4 * target:
        x ^= x << np.uint64(13)
        x ^= x >> np.uint64(7)
        x ^= x << np.uint64(17)
        i = x % n
        j = np.uint64(offsets[i])
        e = np.uint64(offsets[i + _U1])
        codes = 0
        while j < e:
            rem = e - j
            w = _U0
            if rem >= _U8:
                for k in range(8):
                    w |= np.uint64(data[j + np.uint64(k)]) << np.uint64(8 * k)
            else:
                for k in range(rem):
                    w |= np.uint64(data[j + np.uint64(k)]) << (np.uint64(k) * _U8)
            info = np.uint16(0)
            if rem >= np.uint64(3):
                h = fsst_hash3(w)
                hi = h_info[h]
                ln = np.uint64(hi >> 8)
                if ln != _U0 and ln <= rem and (w & (_ALL >> (np.uint64(64) - (ln << np.uint64(3))))) == h_val[h]:
                    info = hi
            if info == 0:
                info = short[w & np.uint64(0xFFFF)] if rem >= np.uint64(2) else byte_info[w & np.uint64(0xFF)]
            codes += 2 if (info & 0xFF) == ESCAPE else 1
            j += np.uint64(info >> 8)
        v = codes
        body += 1
        while v >= 0x80:
            v >>= 7
            body += 1
        body += codes
        rows += 1
        nbytes += np.int64(e - np.uint64(offsets[i]))
    res[0] = rows
    res[1] = body
    res[2] = nbytes
    return np.int64(rows)


@kernel
def fsst_read_table(buf, pos, end, sym_words, sym_lens, errpos):
    """Parse the symbol table at ``buf[pos:end]`` into words/lengths; return the new position.

    ``sym_lens`` (uint8[256]) must be zero on entry so codes past the table stay invalid.
    """
    e = np.uint64(end)
    p = np.uint64(pos)
    errpos[0] = np.int64(p)
    cnt, p, st = read_uvarint_at(buf, p, e)
    if st < 0:
        return st
    if cnt > np.uint64(MAX_SYMBOLS):
        return ERR_CORRUPT
    for c in range(cnt):
        errpos[0] = np.int64(p)
        if p >= e:
            return ERR_TRUNCATED
        ln = np.uint64(buf[p])
        p += _U1
        if ln < _U1 or ln > np.uint64(MAX_SYMBOL_LEN):
            return ERR_CORRUPT
        if ln > e - p:
            return ERR_TRUNCATED
        w = _U0
        for k in range(ln):
            w |= np.uint64(buf[p + np.uint64(k)]) << (np.uint64(k) * _U8)
        sym_words[c] = w
        sym_lens[c] = np.uint8(ln)
        p += ln
    return np.int64(p)


@kernel
def _row_length(buf, p, e):
    """One row's uvarint code length at ``buf[p:e]`` -> (length, position after it,
    0 / ERR_TRUNCATED / ERR_CORRUPT); ERR_TRUNCATED also when the codes run past ``e``."""
    cl, p, st = read_uvarint_at(buf, p, e)
    if st >= 0 and cl > e - p:
        st = ERR_TRUNCATED
    return cl, p, st


@kernel
def _decode_codes(buf, p, ce, sym_words, sym_lens, data, o, cap, write):
    """Expand one row's codes ``buf[p:ce]`` at ``data[o:]`` (when ``write``; each symbol
    stored as a whole 8-byte word), never past ``cap`` bytes. Returns (new o, 0) or
    (position of the bad code, ERR_CORRUPT) for an unknown code, a dangling escape or
    output past ``cap``."""
    while p < ce:
        c = buf[p]
        p += _U1
        ln = np.uint64(sym_lens[c])
        if ln != _U0:
            if o + ln > cap:
                return p - _U1, ERR_CORRUPT
            if write:
                store_le64(data, o, sym_words[c])
            o += ln
        elif c == ESCAPE and p < ce and o < cap:
            if write:
                data[o] = buf[p]
            p += _U1
            o += _U1
        else:
            return p - _U1, ERR_CORRUPT
    return o, 0


@kernel
def fsst_decode_into(buf, pos, end, sym_words, sym_lens, offsets, data, total, errpos):
    """Decode ``len(offsets) - 1`` rows from ``buf[pos:end]`` into ``offsets`` / ``data``.

    ``data`` needs ``total + 8`` bytes: each symbol is stored as a whole 8-byte word and
    the tail is overwritten by the next one. Every write is checked against ``total``
    first, so hostile codes cannot run past the buffer. Returns the end position;
    ERR_CORRUPT for an unknown code, a dangling escape or a size other than ``total``.
    """
    n = offsets.shape[0] - 1
    e = np.uint64(end)
    p = np.uint64(pos)
    t = np.uint64(total)
    o = _U0
    offsets[0] = 0
    for i in range(n):
        # Most code lengths are one-byte uvarints: read those here, not through a call
        # per row (a call returning a tuple per row made short strings 1.5-2.5x slower).
        b = np.uint64(buf[p]) if p < e else _HI
        if b < _HI and b < e - p:
            cl = b
            q = p + _U1
        else:
            cl, q, st = _row_length(buf, p, e)
            if st < 0:
                errpos[0] = np.int64(p)
                return st
        p = q
        o, st = _decode_codes(buf, p, p + cl, sym_words, sym_lens, data, o, t, True)
        if st < 0:
            errpos[0] = np.int64(o)
            return st
        p += cl
        offsets[i + 1] = np.int64(o)
    if o != t:
        errpos[0] = np.int64(p)
        return ERR_CORRUPT
    return np.int64(p)


@kernel
def fsst_skip_rows(buf, pos, end, n, errpos):
    """Walk ``n`` (uvarint codeLen, codes) rows without decoding; return the end position."""
    e = np.uint64(end)
    p = np.uint64(pos)
    i = np.int64(0)
    while i < n:
        # One-byte code lengths in a tight loop (as fsst_decode_rows frames), the rest checked.
        b = np.uint64(buf[p]) if p < e else _HI
        if b < _HI and b < e - p:
            p += b + _U1
        else:
            errpos[0] = np.int64(p)
            cl, p, st = _row_length(buf, p, e)
            if st < 0:
                return st
            p += cl
        i += 1
    return np.int64(p)


@kernel
def fsst_decode_rows(buf, pos, end, rows, sym_words, sym_lens, offsets, data, measure, at, errpos):
    """Decode only the rows ``rows`` (ascending) of the (uvarint codeLen, codes) rows at
    ``buf[pos:end]``.

    With ``measure`` the framing of the rows up to the last selected one is walked
    once: ``at`` (int64, 2 x len(rows)) receives each selected row's codes position and
    length, and ``offsets`` (len(rows) + 1) their decoded sizes; ``data`` is not touched.
    Otherwise the rows are decoded straight from ``at`` (no second walk) into ``data``,
    which must hold ``offsets[-1] + 8`` bytes (the measuring pass's total). Returns
    the decoded size; ERR_TRUNCATED, or ERR_CORRUPT for an unknown code or a dangling
    escape in a selected row (unselected rows are only framed, never decoded).
    """
    m = rows.shape[0]
    e = np.uint64(end)
    p = np.uint64(pos)
    cap = np.uint64(data.shape[0]) if not measure else ~_U0
    o = _U0
    offsets[0] = 0
    i = np.int64(0)
    for j in range(m):
        if measure:
            target = rows[j]
            # Rows before the target are only framed. Most code lengths are one-byte
            # uvarints: step over those in a tight loop (the walk is a chain of dependent
            # loads, so every instruction in it counts) and leave anything else, a longer
            # length or a row running past the end, to the checked loop below.
            while i < target and p < e:
                b = np.uint64(buf[p])
                if b >= _HI or b >= e - p:
                    break
                p += b + _U1
                i += 1
            while True:
                errpos[0] = np.int64(p)
                cl, p, st = _row_length(buf, p, e)
                if st < 0:
                    return st
                if i == target:
                    break
                p += cl  # framing only
                i += 1
            at[0, j] = np.int64(p)
            at[1, j] = np.int64(cl)
        else:
            p = np.uint64(at[0, j])
            cl = np.uint64(at[1, j])
        o, st = _decode_codes(buf, p, p + cl, sym_words, sym_lens, data, o, cap, not measure)
        if st < 0:
            errpos[0] = np.int64(o)
            return st
        p += cl
        offsets[j + 1] = np.int64(o)
        i += 1
    return np.int64(o)


def _ro(a: np.ndarray) -> np.ndarray:
    v = a.view()
    v.flags.writeable = False
    return v


def _warmup() -> None:
    # The glue passes read-only views of its inputs so each kernel has one specialisation.
    h_val = np.zeros(HASH_SIZE, np.uint64)
    h_info = np.zeros(HASH_SIZE, np.uint16)
    short = np.zeros(65536, np.uint16)
    byte_info = np.zeros(256, np.uint16)
    fsst_lookup_reset(h_info, short, byte_info)
    vals = np.array([0x636261, 0x6261, 0x61], np.uint64)
    lens = np.array([3, 2, 1], np.uint8)
    for c in range(3):
        fsst_lookup_add(vals[c], np.uint64(lens[c]), np.uint64(c), h_val, h_info, byte_info)
    fsst_lookup_finish(vals, lens, np.int64(3), short, byte_info)
    data = _ro(np.frombuffer(b"abcabx", np.uint8))
    offsets = _ro(np.array([0, 3, 6], np.int64))
    out = np.zeros(32, np.uint8)
    size = fsst_encode_into(data, offsets, _ro(h_val), _ro(h_info), _ro(short), _ro(byte_info), out)
    fsst_estimate_rows(data, offsets, _ro(h_val), _ro(h_info), _ro(short), _ro(byte_info), np.int64(64),
                       np.uint64(0x2545F4914F6CDD1D), np.zeros(3, np.int64))
    buf = _ro(np.concatenate([np.array([3, 3, 97, 98, 99, 2, 97, 98, 1, 97, 2, 6], np.uint8), out[:size]]))
    words = np.zeros(256, np.uint64)
    slens = np.zeros(256, np.uint8)
    errpos = np.zeros(1, np.int64)
    p = fsst_read_table(buf, np.int64(0), np.int64(len(buf)), words, slens, errpos)
    fsst_skip_rows(buf, np.int64(p + 2), np.int64(len(buf)), np.int64(2), errpos)
    fsst_decode_into(buf, np.int64(p + 2), np.int64(len(buf)), _ro(words), _ro(slens), np.zeros(3, np.int64),
                     np.zeros(14, np.uint8), np.int64(6), errpos)
    at = np.zeros((2, 1), np.int64)
    for measure in (True, False):
        fsst_decode_rows(buf, np.int64(p + 2), np.int64(len(buf)), _ro(np.array([1], np.int64)), _ro(words),
                         _ro(slens), np.zeros(2, np.int64), np.zeros(14, np.uint8), measure, at, errpos)
