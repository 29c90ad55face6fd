"""Decode a run of per-value Dense strings (a string column body that is not a block).

A column of M per-value strings is M row-major string values, each an inline string
(fixstr / str8 / str16 / str32 / bin8 / bin16 / bin32) or a Dense state tag (E0 / E2
intern, E1 ref, E8 repeat, E9 MTF rank, EA pair predictor). :func:`dense_scan_into`
replays ``qdf_columnar.wire.dense.DenseReader.read_str`` over such a run in one pass:
it updates the reader's state held in arrays (the intern table as a byte slab plus
offsets, the str/bytes kind of every id, the pair predictor, the LRU recency order,
the 128-slot ring, the last id) and records every row as a (start, length) pair: a start
>= 0 is a position in the input buffer (inline strings, fresh interns), a start < 0
is ``-(slab offset) - 1`` (references to the table). :func:`dense_gather_into` then
copies the rows into Arrow offsets + data.

The kernel never raises and never guesses: a row it cannot take (a malformed or
truncated value, an unknown id, a non-string tag, a full intern table) stops the
scan *before* that row changes any state (status :data:`STOP`), so the Python reader
can re-read the row from identical state and raise its usual typed error. A fresh
intern that does not fit the slab returns :data:`NEED_SLAB` (``st[S_NEED]`` = bytes
needed) after saving the position; the caller grows the slab and calls again.

Work is bounded by the input: every length is checked against the bytes left before
anything is copied, and each row costs O(1) plus its intern copy. The LRU order (read
only for an E9 rank that misses the ring, which the Go decoder resolves by walking its
LRU chain) is kept as recency stamps: ``stamp[id]`` is the id's last use, ``owner[t]``
the id stamped t (-1 once re-stamped) and ``bcnt[b]`` the live stamps in block
[256 b, 256 b + 256), with ``len(bcnt) == (len(owner) >> 8) + 1``. A use is O(1);
rank r is found by skipping whole blocks from the newest, O(len(owner) / 256 + 256)
rather than O(r); when the stamps run out they are renumbered in order
(``_lru_compact``), amortised O(1) per use since ``owner`` has room for at least twice
the ids.
"""

from __future__ import annotations

import numpy as np

from ._jit import kernel

#: The row at ``st[S_ROW]`` (starting at ``st[S_POS]``) is left to the Python reader.
STOP = -4
#: A fresh intern needs ``st[S_NEED]`` slab bytes in all; grow the slab and call again.
NEED_SLAB = -5

# Layout of the int64 ``st`` array (state in, state out).
S_NIDS = 0  # interned ids so far
S_LAST = 1  # last id (-1 = invalid)
S_HEAD = 2  # ring head (monotonic push count)
S_COUNT = 3  # ids in the LRU order
S_USED = 4  # slab bytes used
S_BIN = 5  # whether the last value read was a byte string
S_POS = 6  # input position of the next row
S_ROW = 7  # next row
S_TOTAL = 8  # sum of the lengths of the rows read
S_NEED = 9  # NEED_SLAB: slab size needed
S_MAXIDS = 10  # the decoder's intern limit (an intern at this many ids is rejected)
S_CLOCK = 11  # next LRU stamp
# Slots 12 .. 31 belong to qdf_kernels.transcode_dec (shapes, field bases, heap, I/O).
S_LEN = 32

#: LRU stamps per block count.
BLOCK_SHIFT = 8

_RING_MASK = 127


@kernel
def _uvarint(buf, p, end):
    """ULEB128 at ``buf[p:end]`` -> (value, new position, ok). ok is False when truncated,
    longer than 10 bytes or overflowing 64 bits (the Python reader raises for each)."""
    v = np.uint64(0)
    shift = np.uint64(0)
    for i in range(10):
        if p >= end:
            return v, p, False
        b = np.uint64(buf[p])
        p += 1
        if b < np.uint64(0x80):
            if i == 9 and b > np.uint64(1):
                return v, p, False
            return v | (b << shift), p, True
        v |= (b & np.uint64(0x7F)) << shift
        shift += np.uint64(7)
    return v, p, False


@kernel
def _lru_compact(stamp, owner, bcnt, clock):
    """Renumber the live stamps 0.. in order; return the new clock (the live count)."""
    j = np.int64(0)
    for t in range(clock):
        x = owner[t]
        if x >= 0:
            owner[j] = x
            stamp[x] = j
            j += 1
    for b in range((clock >> BLOCK_SHIFT) + 1):
        bcnt[b] = 0
    for t in range(j):
        bcnt[t >> BLOCK_SHIFT] += 1
    return j


@kernel
def _lru_at_rank(r, owner, bcnt, clock):
    """The id with ``r`` more recently used ids after it (0 = most recent), or -1."""
    if clock <= 0:
        return np.int64(-1)
    b = (clock - 1) >> BLOCK_SHIFT
    acc = np.int64(0)
    while b >= 0:
        c = bcnt[b]
        if acc + c > r:
            break
        acc += c
        b -= 1
    if b < 0:
        return np.int64(-1)
    t = min(clock - 1, (b << BLOCK_SHIFT) + (1 << BLOCK_SHIFT) - 1)
    lo = b << BLOCK_SHIFT
    while t >= lo:
        x = owner[t]
        if x >= 0:
            if acc == r:
                return x
            acc += 1
        t -= 1
    return np.int64(-1)


@kernel
def dense_scan_into(buf, end, n, toff, slab, kinds, pair, stamp, owner, bcnt, ring, st, starts, lens):
    """Read rows ``st[S_ROW]`` .. n-1 of a per-value string run from ``buf[st[S_POS]:end]``.

    Intern table: id k is ``slab[toff[k]:toff[k+1]]``, ``kinds[k]`` is 1 for an E2
    (bytes) registration. ``pair[k]`` is the recorded successor of id k (-1 none);
    ``stamp`` / ``owner`` / ``bcnt`` hold the LRU order (module docstring); ``ring``
    holds the 128 newest pushes. Entries of ids not interned yet are set here when the
    id is interned. The id arrays must have room for every id the run can add
    (``toff`` one more) and ``owner`` more room than ids. Returns 0 when all n rows
    were read, else :data:`STOP` or :data:`NEED_SLAB` with ``st`` describing the row
    to resume at.
    """
    pos = st[S_POS]
    row = st[S_ROW]
    nids = st[S_NIDS]
    last = st[S_LAST]
    head = st[S_HEAD]
    count = st[S_COUNT]
    clock = st[S_CLOCK]
    used = st[S_USED]
    last_bin = st[S_BIN]
    total = st[S_TOTAL]
    max_ids = st[S_MAXIDS]
    cap_ids = toff.shape[0] - 1
    status = 0
    while row < n:
        p = pos
        if p >= end:
            status = STOP
            break
        tag = np.int64(buf[p])
        p += 1
        ln = np.int64(-1)
        binary = 0
        if 0x80 <= tag <= 0x9F:
            ln = tag & 0x1F
        elif tag == 0xCD or tag == 0xD0:
            if p >= end:
                status = STOP
                break
            ln = np.int64(buf[p])
            p += 1
            binary = 1 if tag == 0xD0 else 0
        elif tag == 0xCE or tag == 0xD1:
            if end - p < 2:
                status = STOP
                break
            ln = np.int64(buf[p]) | (np.int64(buf[p + 1]) << 8)
            p += 2
            binary = 1 if tag == 0xD1 else 0
        elif tag == 0xCF or tag == 0xD2:
            if end - p < 4:
                status = STOP
                break
            ln = (np.int64(buf[p]) | (np.int64(buf[p + 1]) << 8) | (np.int64(buf[p + 2]) << 16)
                  | (np.int64(buf[p + 3]) << 24))
            p += 4
            binary = 1 if tag == 0xD2 else 0
        if ln >= 0:  # an inline string: drops the last id
            if ln > end - p:
                status = STOP
                break
            starts[row] = p
            lens[row] = ln
            total += ln
            last = -1
            last_bin = binary
            pos = p + ln
            row += 1
            continue
        if tag == 0xE0 or tag == 0xE2:
            v, p, ok = _uvarint(buf, p, end)
            if not ok or v > np.uint64(end - p):
                status = STOP
                break
            ln = np.int64(v)
            if nids >= max_ids or nids >= cap_ids:
                status = STOP
                break
            if used + ln > slab.shape[0]:
                st[S_NEED] = used + ln
                status = NEED_SLAB
                break
            for j in range(ln):
                slab[used + j] = buf[p + j]
            id_ = nids
            toff[id_] = used
            used += ln
            toff[id_ + 1] = used
            nids += 1
            kinds[id_] = 1 if tag == 0xE2 else 0
            pair[id_] = -1
            # lruAddFresh: the new id becomes the most recent, then the ring push
            # (the stamp push is written out here and below: as a call it cost 30 ns a row)
            if clock >= owner.shape[0]:
                clock = _lru_compact(stamp, owner, bcnt, clock)
            stamp[id_] = clock
            owner[clock] = id_
            bcnt[clock >> BLOCK_SHIFT] += 1
            clock += 1
            count += 1
            ring[head & _RING_MASK] = id_
            head += 1
            if last >= 0:
                pair[last] = id_
            last = id_
            last_bin = np.int64(kinds[id_])
            starts[row] = p
            lens[row] = ln
            total += ln
            pos = p + ln
            row += 1
            continue
        if tag == 0xE8:
            if last < 0:
                status = STOP
                break
            id_ = last
            pair[id_] = id_
            last_bin = np.int64(kinds[id_])
            s = toff[id_]
            starts[row] = -s - 1
            lens[row] = toff[id_ + 1] - s
            total += toff[id_ + 1] - s
            pos = p
            row += 1
            continue
        id_ = np.int64(-1)
        if tag == 0xE1:
            if p < end and buf[p] < 0x80:  # a one-byte id, the common case
                id_ = np.int64(buf[p])
                p += 1
                if id_ >= nids:
                    status = STOP
                    break
            else:
                v, p, ok = _uvarint(buf, p, end)
                if not ok or v >= np.uint64(nids):
                    status = STOP
                    break
                id_ = np.int64(v)
        elif tag == 0xE9:
            v, p, ok = _uvarint(buf, p, end)
            if not ok:
                status = STOP
                break
            if v < np.uint64(128):
                id_ = ring[(head - 1 - np.int64(v)) & _RING_MASK]
            if id_ < 0 and v < np.uint64(count):
                # lruIDAtRank: ranks the encoder never writes, accepted by the Go decoder
                id_ = _lru_at_rank(np.int64(v), owner, bcnt, clock)
            if id_ < 0:
                status = STOP
                break
        elif tag == 0xEA:
            v, p, ok = _uvarint(buf, p, end)
            if not ok or last < 0 or v != np.uint64(0) or pair[last] < 0:
                status = STOP
                break
            id_ = pair[last]
        else:  # not a string value: the Python reader raises
            status = STOP
            break
        # a reference: lruMoveToFront (recency + ring push), pair record, last id
        t = stamp[id_]
        if 0 <= t < clock and owner[t] == id_:
            owner[t] = -1
            bcnt[t >> BLOCK_SHIFT] -= 1
        else:  # not in the LRU order (a state built by hand): joins it as the most recent
            count += 1
        if clock >= owner.shape[0]:
            clock = _lru_compact(stamp, owner, bcnt, clock)
        stamp[id_] = clock
        owner[clock] = id_
        bcnt[clock >> BLOCK_SHIFT] += 1
        clock += 1
        ring[head & _RING_MASK] = id_
        head += 1
        if last >= 0:
            pair[last] = id_
        last = id_
        last_bin = np.int64(kinds[id_])
        s = toff[id_]
        starts[row] = -s - 1
        lens[row] = toff[id_ + 1] - s
        total += toff[id_ + 1] - s
        pos = p
        row += 1
    st[S_POS] = pos
    st[S_ROW] = row
    st[S_NIDS] = nids
    st[S_LAST] = last
    st[S_HEAD] = head
    st[S_COUNT] = count
    st[S_CLOCK] = clock
    st[S_USED] = used
    st[S_BIN] = last_bin
    st[S_TOTAL] = total
    return status


@kernel
def dense_gather_into(buf, slab, starts, lens, offsets, data):
    """Copy every row of a scanned run into ``data`` and write int64 ``offsets`` (n+1).

    ``starts[i] >= 0`` reads ``buf``, ``starts[i] < 0`` reads ``slab`` at
    ``-starts[i] - 1``; ``data`` holds exactly the sum of ``lens``. Returns that sum.
    """
    n = starts.shape[0]
    o = np.uint64(0)
    offsets[0] = 0
    for i in range(n):
        s = starts[i]
        ln = np.uint64(lens[i])
        if s >= 0:
            u = np.uint64(s)
            for j in range(ln):
                data[o + j] = buf[u + j]
        else:
            u = np.uint64(-s - 1)
            for j in range(ln):
                data[o + j] = slab[u + j]
        o += ln
        offsets[i + 1] = o
    return np.int64(o)


def _warmup() -> None:
    # dtypes exactly as qdf_columnar.wire.dense passes them
    buf = np.frombuffer(bytes.fromhex("e0 04 61626364 e8 e1 00 82 6162 e9 00 ea 00 e9 01"), dtype=np.uint8)
    cap = 4
    toff = np.zeros(cap + 1, np.int64)
    slab = np.zeros(16, np.uint8)
    kinds = np.zeros(cap, np.uint8)
    pair = np.full(cap, -1, np.int64)
    stamp = np.zeros(cap, np.int64)
    owner = np.full(2, -1, np.int64)  # tiny: the run also compacts the stamps
    bcnt = np.zeros(1, np.int64)  # (len(owner) >> BLOCK_SHIFT) + 1
    ring = np.full(128, -1, np.int64)
    st = np.zeros(S_LEN, np.int64)
    n = 7
    starts = np.empty(n, np.int64)
    lens = np.empty(n, np.int64)
    for src in (buf, buf.copy()):  # read-only bytes and writable (entropy-decoded) bodies
        st[:] = 0
        st[S_LAST] = -1
        st[S_MAXIDS] = 0xFFFF
        ring[:] = -1
        dense_scan_into(src, np.int64(len(src)), np.int64(n), toff, slab, kinds, pair, stamp, owner, bcnt, ring,
                        st, starts, lens)
        offsets = np.empty(n + 1, np.int64)
        data = np.empty(max(int(st[S_TOTAL]), 0), np.uint8)
        dense_gather_into(src, slab, starts, lens, offsets, data)
