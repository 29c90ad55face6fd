"""String-column kernels: scan length-prefixed slabs and gather slices into Arrow buffers.

Arrow strings are ``offsets`` (int32/int64, n+1) plus one ``data`` byte buffer, so
every string block of a qdf column (F8 raw slab, F5/FA/FC dictionary tables) is
turned into per-row (start, length) pairs pointing into the input buffer and then
gathered once. The writer side fills F8 slabs and FB length lists, and
:func:`dense_strings_into` writes per-value strings by replaying the Dense intern
state machine (``qdf_columnar.wire.dense.DenseWriter.write_str``) over a column's
dictionary codes. Kernels never raise: they return the new position / byte count or a
negative status from ``_status``.
"""

from __future__ import annotations

import numpy as np

from ._jit import kernel
from ._status import ERR_CORRUPT, ERR_OVERFLOW, ERR_TRUNCATED
from .bitpack import fast_count, load_le64, load_le64_tail, store_le64

_HI = np.uint64(0x80)  # a uvarint byte with this bit set continues


@kernel
def read_uvarint_at(buf, p, e):
    """One ULEB128 from ``buf[p:e]`` -> (value, new position, status 0 / ERR_*)."""
    v = np.uint64(0)
    shift = np.uint64(0)
    while True:
        if p >= e:
            return v, p, ERR_TRUNCATED
        b = np.uint64(buf[p])
        p += np.uint64(1)
        if shift == np.uint64(63) and b > np.uint64(1):
            return v, p, ERR_CORRUPT
        v |= (b & np.uint64(0x7F)) << shift
        if b < np.uint64(0x80):
            return v, p, 0
        shift += np.uint64(7)
        if shift > np.uint64(63):
            return v, p, ERR_CORRUPT


@kernel
def scan_lenprefixed_into(buf, pos, end, starts, lens):
    """Parse ``len(starts)`` (uvarint length, bytes) entries from ``buf[pos:end]``.

    Fills ``starts``/``lens`` (int64) with each entry's byte range and returns the
    position after the last entry, or ERR_TRUNCATED / ERR_CORRUPT (varint > 10
    bytes). ``buf`` is uint8[::1]; positions are int64.
    """
    p = np.uint64(pos)
    e = np.uint64(end)
    for i in range(starts.shape[0]):
        # One-byte lengths (most strings) are read here: a call per entry returning a
        # tuple costs more than the rest of the loop.
        v = np.uint64(buf[p]) if p < e else _HI
        if v < _HI:
            p += np.uint64(1)
        else:
            v, p, status = read_uvarint_at(buf, p, e)
            if status < 0:
                return status
        if v > e - p:
            return ERR_TRUNCATED
        starts[i] = np.int64(p)
        lens[i] = np.int64(v)
        p += v
    return np.int64(p)


@kernel
def gather_slices_into(src, starts, lens, offsets, data):
    """Copy ``src[starts[i]:starts[i]+lens[i]]`` for every row into ``data``.

    ``offsets`` (int32 or int64, n+1) must already hold the exclusive prefix sums of
    ``lens`` (the caller computes them with numpy and sizes ``data`` from the last
    one). Returns the number of bytes written.
    """
    n = starts.shape[0]
    for i in range(n):
        s = np.uint64(starts[i])
        ln = np.uint64(lens[i])
        o = np.uint64(offsets[i])
        for j in range(ln):
            data[o + j] = src[s + j]
    return np.int64(offsets[n])


@kernel
def encode_lenprefixed_into(data, offsets, out, pos):
    """Write each string (``data[offsets[i]:offsets[i+1]]``) as uvarint(len) + bytes.

    ``out`` must be large enough (sum(len) + 10 * n from ``pos``). Returns the end
    position.
    """
    n = offsets.shape[0] - 1
    p = np.uint64(pos)
    for i in range(n):
        s = np.uint64(offsets[i])
        ln = np.uint64(offsets[i + 1]) - s
        v = ln
        while v >= np.uint64(0x80):
            out[p] = np.uint8((v & np.uint64(0x7F)) | np.uint64(0x80))
            v >>= np.uint64(7)
            p += np.uint64(1)
        out[p] = np.uint8(v)
        p += np.uint64(1)
        for j in range(ln):
            out[p + j] = data[s + j]
        p += ln
    return np.int64(p)


@kernel
def uvarint_lens_total(offsets):
    """Sum over strings of uvarint_len(len) + len (the F8 raw slab body size)."""
    n = offsets.shape[0] - 1
    total = np.int64(0)
    for i in range(n):
        ln = np.uint64(offsets[i + 1] - offsets[i])
        k = np.int64(1)
        while ln >= np.uint64(0x80):
            ln >>= np.uint64(7)
            k += 1
        total += k + np.int64(offsets[i + 1] - offsets[i])
    return total


@kernel
def write_lens_into(offsets, out, pos):
    """Write uvarint(offsets[i+1] - offsets[i]) for every row into ``out`` from ``pos``.

    ``out`` must have room for the encoded lengths (``uvarint_lens_total`` minus the
    byte total). Returns the end position.
    """
    n = offsets.shape[0] - 1
    p = np.uint64(pos)
    for i in range(n):
        v = np.uint64(offsets[i + 1] - offsets[i])
        while v >= np.uint64(0x80):
            out[p] = np.uint8((v & np.uint64(0x7F)) | np.uint64(0x80))
            v >>= np.uint64(7)
            p += np.uint64(1)
        out[p] = np.uint8(v)
        p += np.uint64(1)
    return np.int64(p)


@kernel
def _put_uvarint(out, p, v):
    while v >= np.uint64(0x80):
        out[p] = np.uint8((v & np.uint64(0x7F)) | np.uint64(0x80))
        v >>= np.uint64(7)
        p += np.uint64(1)
    out[p] = np.uint8(v)
    return p + np.uint64(1)


@kernel
def _uvlen(v):
    k = 1
    while v >= 0x80:
        v >>= 7
        k += 1
    return k


_E0 = 0xE0  # DenseTag.INTERN_STR
_E1 = 0xE1  # DenseTag.STATE_REF
_E2 = 0xE2  # DenseTag.INTERN_BIN
_E8 = 0xE8  # DenseTag.STATE_REPEAT
_E9 = 0xE9  # DenseTag.STATE_MTF
_EA = 0xEA  # DenseTag.STATE_PAIR


@kernel
def dense_strings_into(codes, d_off, d_data, ids, params, state, ring, pair, touched, new_k, out):
    """Write n per-value strings exactly as ``DenseWriter.write_str`` would, one per row.

    Row i is distinct value ``codes[i]``, whose bytes are ``d_data[d_off[k]:d_off[k+1]]``
    (a first-seen dictionary of the column). ``ids[k]`` holds the value's intern id or
    -1 if it is not interned yet; new ids are assigned in order and their distinct
    index appended to ``new_k``. ``params`` = (dense, binary, pair_on, mtf_on,
    min_intern, max_entries); ``state`` = (next id, last id, ring head) and ``ring``
    (128 ids) are updated in place; ``pair`` (indexed by id, -1 = no entry) holds the
    Markov-1 predictor entries of every id that can be a predecessor here, and
    ``touched`` marks the entries written. The MTF rank of an id is read from its last
    push, which is the same as scanning the 128-slot ring newest-first.

    ``out`` needs ``sum(len) + 11 * n`` bytes. Returns the bytes written, or
    ERR_OVERFLOW for a value of 2**32 bytes or more (str32 cannot hold it).
    """
    n = codes.shape[0]
    dense = params[0] != 0
    binary = params[1] != 0
    pair_on = params[2] != 0
    mtf_on = params[3] != 0
    min_intern = params[4]
    max_entries = params[5]
    next_id = state[0]
    last_id = state[1]
    head = state[2]
    last_push = np.full(pair.shape[0], -1, np.int64)
    for q in range(max(head - 128, 0), head):
        v = ring[q & 127]
        if v >= 0 and v < last_push.shape[0]:
            last_push[v] = q
    nnew = 0
    p = np.uint64(0)
    for i in range(n):
        k = codes[i]
        s = np.uint64(d_off[k])
        ln = np.int64(d_off[k + 1]) - np.int64(s)
        if dense and ln >= min_intern and next_id < max_entries:
            id_ = ids[k]
            if id_ < 0:
                id_ = next_id
                next_id += 1
                ids[k] = id_
                new_k[nnew] = k
                nnew += 1
                out[p] = np.uint8(_E2 if binary else _E0)
                p = _put_uvarint(out, p + np.uint64(1), np.uint64(ln))
                for j in range(ln):
                    out[p + np.uint64(j)] = d_data[s + np.uint64(j)]
                p += np.uint64(ln)
                ring[head & 127] = id_
                last_push[id_] = head
                head += 1
                if last_id >= 0 and pair_on:
                    pair[last_id] = id_
                    touched[last_id] = 1
                last_id = id_
                continue
            prev = last_id
            if prev == id_:
                out[p] = np.uint8(_E8)
                p += np.uint64(1)
                if pair_on:
                    pair[id_] = id_
                    touched[id_] = 1
                continue
            if id_ < 128:
                out[p] = np.uint8(_E1)
                out[p + np.uint64(1)] = np.uint8(id_)
                p += np.uint64(2)
            elif prev >= 0 and pair_on and pair[prev] == id_:
                out[p] = np.uint8(_EA)
                out[p + np.uint64(1)] = np.uint8(0)
                p += np.uint64(2)
            else:
                rank = -1
                if mtf_on:
                    lp = last_push[id_]
                    if lp >= 0 and head - 1 - lp < 128:
                        rank = head - 1 - lp
                if rank >= 0 and _uvlen(rank) < _uvlen(id_):
                    out[p] = np.uint8(_E9)
                    p = _put_uvarint(out, p + np.uint64(1), np.uint64(rank))
                else:
                    out[p] = np.uint8(_E1)
                    p = _put_uvarint(out, p + np.uint64(1), np.uint64(id_))
            ring[head & 127] = id_
            last_push[id_] = head
            head += 1
            if prev >= 0 and pair_on:
                pair[prev] = id_
                touched[prev] = 1
            last_id = id_
            continue
        if dense:
            last_id = -1
        if ln >= 1 << 32:
            return ERR_OVERFLOW
        if binary:
            if ln <= 0xFF:
                out[p] = np.uint8(0xD0)
                out[p + np.uint64(1)] = np.uint8(ln)
                p += np.uint64(2)
            elif ln <= 0xFFFF:
                out[p] = np.uint8(0xD1)
                out[p + np.uint64(1)] = np.uint8(ln & 0xFF)
                out[p + np.uint64(2)] = np.uint8(ln >> 8)
                p += np.uint64(3)
            else:
                out[p] = np.uint8(0xD2)
                for b in range(4):
                    out[p + np.uint64(1 + b)] = np.uint8((ln >> (8 * b)) & 0xFF)
                p += np.uint64(5)
        elif ln <= 31:
            out[p] = np.uint8(0x80 | ln)
            p += np.uint64(1)
        elif ln <= 0xFF:
            out[p] = np.uint8(0xCD)
            out[p + np.uint64(1)] = np.uint8(ln)
            p += np.uint64(2)
        elif ln <= 0xFFFF:
            out[p] = np.uint8(0xCE)
            out[p + np.uint64(1)] = np.uint8(ln & 0xFF)
            out[p + np.uint64(2)] = np.uint8(ln >> 8)
            p += np.uint64(3)
        else:
            out[p] = np.uint8(0xCF)
            for b in range(4):
                out[p + np.uint64(1 + b)] = np.uint8((ln >> (8 * b)) & 0xFF)
            p += np.uint64(5)
        for j in range(ln):
            out[p + np.uint64(j)] = d_data[s + np.uint64(j)]
        p += np.uint64(ln)
    state[0] = next_id
    state[1] = last_id
    state[2] = head
    return np.int64(p)


@kernel
def front_coded_scan(buf, pos, end, prefix, suffix_at, lens, max_total):
    """Parse ``len(prefix)`` front-coded entries (uvarint shared prefix, uvarint suffix
    length, suffix bytes) from ``buf[pos:end]`` (the FA table of qdf-wire-v1.md §2.5).

    Fills each entry's shared-prefix length, suffix start and full length; returns the
    position after the table, ERR_TRUNCATED, ERR_CORRUPT (a prefix longer than the
    previous entry, a bad varint) or ERR_OVERFLOW (the rebuilt table would exceed
    ``max_total`` bytes: a prefix may repeat the previous entry for free).
    """
    p = np.uint64(pos)
    e = np.uint64(end)
    prev = np.uint64(0)
    total = np.uint64(0)
    for i in range(prefix.shape[0]):
        pl, p, status = read_uvarint_at(buf, p, e)
        if status < 0:
            return status
        sl, p, status = read_uvarint_at(buf, p, e)
        if status < 0:
            return status
        if pl > prev:
            return ERR_CORRUPT
        if sl > e - p:
            return ERR_TRUNCATED
        prefix[i] = np.int64(pl)
        suffix_at[i] = np.int64(p)
        prev = pl + sl
        lens[i] = np.int64(prev)
        total += prev
        if total > np.uint64(max_total):
            return ERR_OVERFLOW
        p += sl
    return np.int64(p)


@kernel
def front_coded_build(buf, prefix, suffix_at, lens, starts, out):
    """Rebuild the entries :func:`front_coded_scan` located, back to back into ``out``
    (``starts`` = exclusive prefix sums of ``lens``): the shared prefix comes from the
    previous entry, the rest from the input."""
    prev_start = np.uint64(0)
    for i in range(prefix.shape[0]):
        o = np.uint64(starts[i])
        pl = np.uint64(prefix[i])
        for j in range(pl):
            out[o + j] = out[prev_start + j]
        s = np.uint64(suffix_at[i])
        for j in range(np.uint64(lens[i]) - pl):
            out[o + pl + j] = buf[s + j]
        prev_start = o
    return np.int64(prefix.shape[0])


def _warmup() -> None:
    buf = np.frombuffer(b"\x02ab\x01c", dtype=np.uint8)
    starts = np.empty(2, dtype=np.int64)
    lens = np.empty(2, dtype=np.int64)
    scan_lenprefixed_into(buf, np.int64(0), np.int64(5), starts, lens)
    for odt in (np.int32, np.int64):
        offsets = np.zeros(3, dtype=odt)
        offsets[1:] = np.cumsum(lens)
        data = np.empty(3, dtype=np.uint8)
        gather_slices_into(buf, starts, lens, offsets, data)
        out = np.empty(32, dtype=np.uint8)
        encode_lenprefixed_into(data, offsets, out, np.int64(0))
        encode_lenprefixed_into(buf, offsets, out, np.int64(0))  # the writer's read-only Arrow data
        uvarint_lens_total(offsets)
        write_lens_into(offsets, out, np.int64(0))
    _warmup_dense()
    _warmup_dict()
    _warmup_packed()
    fc = np.frombuffer(b"\x00\x02ab\x01\x01c", dtype=np.uint8)  # "ab", "ac"
    pre, at, ln = (np.empty(2, dtype=np.int64) for _ in range(3))
    front_coded_scan(fc, np.int64(0), np.int64(len(fc)), pre, at, ln, np.int64(1 << 20))
    front_coded_build(fc, pre, at, ln, np.array([0, 2], np.int64), np.empty(4, np.uint8))


#: Tables of entries up to this many words are expanded by copying every entry's
#: whole padded width per row: a loop count that never changes, so no mispredicted
#: branch per row; ``data`` then needs ``8 * words`` bytes of slack (see
#: :func:`gather_slack`).
FIXED_COPY_WORDS = 4


def gather_slack(words_per_entry: int) -> int:
    """Bytes ``data`` needs past the total for :func:`dict_gather_into` and
    :func:`dict_gather_packed_into` with entries ``words_per_entry`` words wide."""
    return 8 * words_per_entry if words_per_entry <= FIXED_COPY_WORDS else 8


@kernel
def dict_gather_into(table_words, words_per_entry, table_lens, codes, offsets, data):
    """Expand dictionary codes into Arrow ``offsets`` / ``data`` in one pass.

    ``table_words`` (uint64, d * words_per_entry) holds each entry's bytes
    little-endian, zero-padded to whole words, so every row is copied 8 bytes at a
    time (LLVM merges the byte stores into one unaligned store). ``data`` must have
    :func:`gather_slack` bytes of slack past the total; the over-copied tail is
    overwritten by the next row. Codes were range-checked by the caller. Returns the
    total byte count.
    """
    n = codes.shape[0]
    w = np.uint64(words_per_entry)
    o = np.uint64(0)
    offsets[0] = 0
    # One-word entries get a loop of their own: the general fixed-width loop below,
    # run with w = 1, measured twice as slow (its inner loop is not unrolled).
    if w == np.uint64(1):
        for i in range(n):
            c = np.uint64(codes[i])
            store_le64(data, o, table_words[c])
            o += np.uint64(table_lens[c])
            offsets[i + 1] = o
        return np.int64(o)
    if w <= np.uint64(FIXED_COPY_WORDS):  # every entry at its padded width: no branch per row
        for i in range(n):
            c = np.uint64(codes[i])
            for k in range(w):
                store_le64(data, o + (np.uint64(k) << np.uint64(3)), table_words[c * w + np.uint64(k)])
            o += np.uint64(table_lens[c])
            offsets[i + 1] = o
        return np.int64(o)
    for i in range(n):
        c = np.uint64(codes[i])
        ln = np.uint64(table_lens[c])
        base = c * w
        nw = (ln + np.uint64(7)) >> np.uint64(3)
        for k in range(nw):
            v = table_words[base + k]
            p = o + (np.uint64(k) << np.uint64(3))
            store_le64(data, p, v)
        o += ln
        offsets[i + 1] = o
    return np.int64(o)


def _warmup_dict() -> None:
    words = np.zeros(2, dtype=np.uint64)
    lens = np.array([1, 2], dtype=np.int64)
    for odt in (np.int32, np.int64):
        offsets = np.zeros(4, dtype=odt)
        data = np.zeros(16, dtype=np.uint8)
        dict_gather_into(words, np.int64(1), lens, np.array([0, 1, 0], dtype=np.uint64), offsets, data)
    dict_total_len(lens, np.array([0, 1], dtype=np.uint64))
    unpack_codes_at(np.frombuffer(b"\x12", dtype=np.uint8), np.int64(4), np.array([1], np.int64),
                    np.empty(1, np.uint64))


@kernel
def dict_total_len(table_lens, codes):
    """Sum of ``table_lens[codes[i]]``: the byte size of an expanded dictionary column,
    or ERR_CORRUPT when a code is outside the table."""
    d = np.uint64(table_lens.shape[0])
    total = np.int64(0)
    for i in range(codes.shape[0]):
        c = np.uint64(codes[i])
        if c >= d:
            return ERR_CORRUPT
        total += table_lens[c]
    return total


@kernel
def unpack_codes_at(body, bits, rows, out):
    """out[j] = the ``bits``-wide LSB-first value number rows[j] of ``body`` (bits <= 56).

    Lets a filtered read pull dictionary codes for only the matching rows. The caller
    checked body covers n * bits bits and that every row is < n.
    """
    b = np.uint64(bits)
    mask = (np.uint64(1) << b) - np.uint64(1)
    nbytes = np.uint64(body.shape[0])
    for j in range(rows.shape[0]):
        bit = np.uint64(rows[j]) * b
        byte = bit >> np.uint64(3)
        sh = bit & np.uint64(7)
        v = np.uint64(0)
        k = np.uint64(0)
        while k * np.uint64(8) < sh + b and byte + k < nbytes:
            v |= np.uint64(body[byte + k]) << (k * np.uint64(8))
            k += np.uint64(1)
        out[j] = (v >> sh) & mask
    return np.int64(rows.shape[0])


@kernel
def dict_total_len_packed(table_lens, body, bits, n):
    """Byte size of a dictionary column expanded straight from its packed codes.

    Returns the total, or ERR_CORRUPT when a code is outside the table, or
    ERR_TRUNCATED when ``body`` is shorter than ceil(n * bits / 8). Each code is one
    unaligned word load (bits <= 56, the packer's bound), not a byte-by-byte refill.
    """
    b = np.uint64(bits)
    un = np.uint64(n)
    nbytes = np.uint64(body.shape[0])
    if (un * b + np.uint64(7)) >> np.uint64(3) > nbytes:
        return ERR_TRUNCATED
    d = np.uint64(table_lens.shape[0])
    if b == np.uint64(0):  # every code is 0
        if un and not d:
            return ERR_CORRUPT
        return np.int64(un) * table_lens[0] if un else np.int64(0)
    mask = (np.uint64(1) << b) - np.uint64(1)
    nf = fast_count(nbytes, b, un)
    total = np.int64(0)
    for i in range(nf):  # unchecked word loads, then the last few codes checked
        bit = np.uint64(i) * b
        c = (load_le64(body, bit >> np.uint64(3)) >> (bit & np.uint64(7))) & mask
        if c >= d:
            return ERR_CORRUPT
        total += table_lens[c]
    for i in range(nf, un):
        bit = np.uint64(i) * b
        c = (load_le64_tail(body, bit >> np.uint64(3)) >> (bit & np.uint64(7))) & mask
        if c >= d:
            return ERR_CORRUPT
        total += table_lens[c]
    return total


@kernel
def dict_gather_packed_into(table_words, words_per_entry, table_lens, body, bits, offsets, data):
    """:func:`dict_gather_into` reading the codes straight from the packed index body.

    Saves materialising an 8-byte code per row (the column is memory-bound). Codes
    were range-checked by :func:`dict_total_len_packed`; each is one unaligned word
    load. Entries up to :data:`FIXED_COPY_WORDS` words wide are copied at their
    padded width (3x faster on short entries; ``data`` needs :func:`gather_slack`).
    """
    n = np.uint64(offsets.shape[0] - 1)
    b = np.uint64(bits)
    w = np.uint64(words_per_entry)
    mask = (np.uint64(1) << b) - np.uint64(1)
    nbytes = np.uint64(body.shape[0])
    nf = fast_count(nbytes, b, n) if b else np.uint64(0)  # zero bits: no body to load from
    o = np.uint64(0)
    offsets[0] = 0
    first = np.uint64(0)  # rows before it went through a fast loop (unchecked word loads)
    if w == np.uint64(1):  # its own loop, as in dict_gather_into (twice as fast as the w-word one)
        for i in range(nf):
            bit = np.uint64(i) * b
            c = (load_le64(body, bit >> np.uint64(3)) >> (bit & np.uint64(7))) & mask
            store_le64(data, o, table_words[c])
            o += np.uint64(table_lens[c])
            offsets[i + 1] = o
        first = nf
    elif w <= np.uint64(FIXED_COPY_WORDS):
        for i in range(nf):
            bit = np.uint64(i) * b
            c = (load_le64(body, bit >> np.uint64(3)) >> (bit & np.uint64(7))) & mask
            for k in range(w):
                store_le64(data, o + (np.uint64(k) << np.uint64(3)), table_words[c * w + np.uint64(k)])
            o += np.uint64(table_lens[c])
            offsets[i + 1] = o
        first = nf
    for i in range(first, n):  # wide entries, and the last few rows of the fast loops
        bit = np.uint64(i) * b
        wd = load_le64(body, bit >> np.uint64(3)) if i < nf else load_le64_tail(body, bit >> np.uint64(3))
        c = (wd >> (bit & np.uint64(7))) & mask
        ln = np.uint64(table_lens[c])
        base = c * w
        nw = (ln + np.uint64(7)) >> np.uint64(3)
        for k in range(nw):
            v = table_words[base + k]
            p = o + (np.uint64(k) << np.uint64(3))
            store_le64(data, p, v)
        o += ln
        offsets[i + 1] = o
    return np.int64(o)


def _warmup_packed() -> None:
    words = np.zeros(2, dtype=np.uint64)
    lens = np.array([1, 2], dtype=np.int64)
    body = np.frombuffer(b"\x02", dtype=np.uint8)
    dict_total_len_packed(lens, body, np.int64(1), np.int64(3))
    for odt in (np.int32, np.int64):
        dict_gather_packed_into(words, np.int64(1), lens, body, np.int64(1), np.zeros(4, odt), np.zeros(16, np.uint8))


def _warmup_dense() -> None:
    # dtypes exactly as qdf_columnar.wire.strcol_write passes them
    d_off = np.array([0, 5, 6], np.int64)
    d_data = np.frombuffer(b"hello!", np.uint8)
    ids = np.full(2, -1, np.int64)
    params = np.array([1, 0, 1, 1, 4, 1 << 14], np.int64)
    state = np.array([0, -1, 0], np.int64)
    ring = np.full(128, -1, np.int64)
    pair = np.full(2, -1, np.int64)
    dense_strings_into(np.array([0, 1, 0, 0], np.int64), d_off, d_data, ids, params, state, ring, pair,
                       np.zeros(2, np.uint8), np.zeros(2, np.int64), np.empty(64, np.uint8))
