"""Alphabet-packed string kernels for the FB ColStrAlpha block (docs/FORMAT.md §1.2).

Every byte of every value is replaced by its code in a first-seen alphabet of at most
64 bytes and packed LSB-first at ceil(log2 a) bits, continuously across values (the
reference's layout). Hex IDs (a = 16) take the nibble fast path: two codes per byte.
"""

from __future__ import annotations

import numpy as np

from ._jit import kernel
from ._status import ERR_CORRUPT, ERR_TRUNCATED
from .strings import read_uvarint_at


@kernel
def alpha_scan(data, code, alphabet):
    """Build the first-seen alphabet of ``data`` (uint8); return its size or -1 past 64.

    ``code`` (int16[256]) must be all -1 on entry and receives each byte's code;
    ``alphabet`` (uint8[64]) receives the bytes in first-seen order. The byte set is
    gathered first with branch-free stores, 64 KiB at a time so a wide alphabet stops
    early; the first-seen order then takes a second pass that ends as soon as every
    byte of the set was met (usually within the first few rows).
    """
    n = data.shape[0]
    seen = np.zeros(256, np.uint8)
    a = 0
    for c0 in range(0, n, 1 << 16):
        for i in range(c0, min(n, c0 + (1 << 16))):
            seen[data[i]] = 1
        a = 0
        for b in range(256):
            a += np.int64(seen[b])
        if a > 64:
            return -1
    got = 0
    for i in range(n):
        if got == a:
            break
        c = data[i]
        if code[c] < 0:
            code[c] = got
            alphabet[got] = c
            got += 1
    return got


@kernel
def alpha_pack_into(data, code, cbits, out):
    """Pack ``code[data[i]]`` at ``cbits`` bits LSB-first into ``out``; return bytes written.

    ``out`` needs ceil(len(data) * cbits / 8) bytes. Four-bit codes (hex ids) take a
    two-codes-per-byte path; other widths pack groups of eight codes into one 64-bit
    word and store its ``cbits`` bytes.
    """
    n = data.shape[0]
    if cbits == 4:
        half = n >> 1
        for k in range(half):
            out[k] = np.uint8(code[data[2 * k]] | (code[data[2 * k + 1]] << 4))
        if n & 1:
            out[half] = np.uint8(code[data[n - 1]])
        return np.int64((n + 1) >> 1)
    # Eight codes fill exactly ``cbits`` bytes: no carried bit offset between groups.
    groups = n >> 3
    bb = np.int64(cbits)
    for g in range(groups):
        base = g << 3
        v = np.uint64(0)
        for j in range(8):
            v |= np.uint64(code[data[base + j]]) << np.uint64(j * bb)
        o = g * bb
        for t in range(bb):
            out[o + t] = np.uint8((v >> np.uint64(8 * t)) & np.uint64(0xFF))
    acc = np.uint64(0)
    have = np.uint64(0)
    pos = groups * bb
    for i in range(groups << 3, n):
        acc |= np.uint64(code[data[i]]) << have
        have += np.uint64(bb)
    while have > np.uint64(0):
        out[pos] = np.uint8(acc & np.uint64(0xFF))
        acc >>= np.uint64(8)
        have = have - np.uint64(8) if have > np.uint64(8) else np.uint64(0)
        pos += 1
    return np.int64(pos)


@kernel
def alpha_unpack_into(body, alphabet, a, cbits, slab):
    """Decode ``slab.shape[0]`` characters from ``body``; ERR_CORRUPT for a code >= a."""
    total = np.uint64(slab.shape[0])
    b = np.uint64(cbits)
    if (total * b + np.uint64(7)) // np.uint64(8) > np.uint64(body.shape[0]):
        return ERR_TRUNCATED
    ua = np.uint64(a)
    if b == np.uint64(4):
        half = total // np.uint64(2)
        for k in range(half):
            v = body[k]
            lo = np.uint64(v & np.uint8(0xF))
            hi = np.uint64(v >> np.uint8(4))
            if lo >= ua or hi >= ua:
                return ERR_CORRUPT
            slab[np.uint64(2) * k] = alphabet[lo]
            slab[np.uint64(2) * k + np.uint64(1)] = alphabet[hi]
        if total & np.uint64(1):
            lo = np.uint64(body[half] & np.uint8(0xF))
            if lo >= ua:
                return ERR_CORRUPT
            slab[total - np.uint64(1)] = alphabet[lo]
        return np.int64(total)
    mask = (np.uint64(1) << b) - np.uint64(1)
    acc = np.uint64(0)
    have = np.uint64(0)
    pos = np.uint64(0)
    for k in range(total):
        while have < b:
            acc |= np.uint64(body[pos]) << have
            pos += np.uint64(1)
            have += np.uint64(8)
        c = acc & mask
        acc >>= b
        have -= b
        if c >= ua:
            return ERR_CORRUPT
        slab[k] = alphabet[c]
    return np.int64(total)


@kernel
def scan_uvarints_into(buf, pos, end, out):
    """Read ``len(out)`` uvarints from ``buf[pos:end]``; return the end position or a status.

    Values of 2**62 or more are stored as -1 (no valid length is that large).
    """
    p = np.uint64(pos)
    e = np.uint64(end)
    for i in range(out.shape[0]):
        v, p, status = read_uvarint_at(buf, p, e)
        if status < 0:
            return status
        out[i] = np.int64(v) if v < np.uint64(1) << np.uint64(62) else np.int64(-1)
    return np.int64(p)


def _warmup() -> None:
    # The writer passes read-only views of the Arrow data; the reader read-only views of
    # the input buffer (body, alphabet) and fresh writable outputs.
    data = np.frombuffer(b"0a1b2c3d", dtype=np.uint8)
    code = np.full(256, -1, dtype=np.int16)
    alphabet = np.zeros(64, dtype=np.uint8)
    a = alpha_scan(data, code, alphabet)
    ro_alphabet = np.frombuffer(alphabet.tobytes(), dtype=np.uint8)
    for body in (np.zeros(2, np.uint8), np.frombuffer(b"\x10\x32", dtype=np.uint8)):
        alpha_unpack_nibbles_into(body, np.zeros(256, np.uint32), np.empty(2, np.uint16))
    for cbits in (3, 4):
        out = np.zeros(8, dtype=np.uint8)
        alpha_pack_into(data, code, np.int64(cbits), out)
        slab = np.empty(8, dtype=np.uint8)
        for alph in (alphabet, ro_alphabet):
            alpha_unpack_into(np.frombuffer(out.tobytes(), dtype=np.uint8), alph, np.int64(a), np.int64(cbits), slab)
    _warmup_rows()
    lens = np.empty(1, dtype=np.int64)
    scan_uvarints_into(np.frombuffer(b"\x05", dtype=np.uint8), np.int64(0), np.int64(1), lens)


@kernel
def alpha_unpack_nibbles_into(body, lut, slab16):
    """4-bit fast path: each body byte becomes two characters via a 256-entry uint16 table.

    ``lut[v]`` holds alphabet[v & 15] | alphabet[v >> 4] << 8, or 0xFFFF when either
    nibble is outside the alphabet. ``slab16`` is the (even-length) output viewed as
    uint16. Returns the number of pairs or ERR_CORRUPT.
    """
    for k in range(slab16.shape[0]):
        v = lut[body[k]]
        if v == np.uint32(0xFFFFFFFF):
            return ERR_CORRUPT
        slab16[k] = np.uint16(v)
    return np.int64(slab16.shape[0])


@kernel
def alpha_unpack_rows_into(body, alphabet, a, cbits, char_starts, lens, offsets, data):
    """Decode only the selected rows: row i spans characters [char_starts[i], +lens[i]).

    ``offsets`` (n+1) is filled with the output offsets; ``data`` must hold sum(lens).
    Returns the byte count or ERR_CORRUPT for a code outside the alphabet.
    """
    b = np.uint64(cbits)
    mask = (np.uint64(1) << b) - np.uint64(1)
    ua = np.uint64(a)
    o = np.uint64(0)
    offsets[0] = 0
    for i in range(char_starts.shape[0]):
        c0 = np.uint64(char_starts[i])
        ln = np.uint64(lens[i])
        for k in range(ln):
            bit = (c0 + np.uint64(k)) * b
            byte = bit >> np.uint64(3)
            sh = bit & np.uint64(7)
            v = np.uint64(body[byte]) >> sh
            if sh + b > np.uint64(8):
                v |= np.uint64(body[byte + np.uint64(1)]) << (np.uint64(8) - sh)
            c = v & mask
            if c >= ua:
                return ERR_CORRUPT
            data[o + np.uint64(k)] = alphabet[c]
        o += ln
        offsets[i + 1] = o
    return np.int64(o)


def _warmup_rows() -> None:
    body = np.frombuffer(b"\x10\x32", dtype=np.uint8)
    alphabet = np.frombuffer(b"abcd", dtype=np.uint8)
    for odt in (np.int32, np.int64):
        offsets = np.empty(2, dtype=odt)
        alpha_unpack_rows_into(
            body, alphabet, np.int64(4), np.int64(4), np.array([1], np.int64), np.array([2], np.int64),
            offsets, np.empty(2, np.uint8),
        )
