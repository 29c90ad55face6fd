"""Decode-side kernels for the varint-walking v1 QPack codecs: EB PackRLE run expansion
and EE PackPFor exception patching.

Both walk uvarints (bounded by the payload bytes, not by n), so they run here rather
than per run in Python. They validate as they go and return a position or a negative
``_status`` code with the failing byte position in ``errpos[0]``; with an empty ``out``
they validate only (skip_payload, and RLE's check-before-allocate pass).
"""

from __future__ import annotations

import numpy as np

from ._jit import kernel
from ._status import ERR_CORRUPT, ERR_LIMIT, ERR_TRUNCATED, OK

_U0 = np.uint64(0)
_U1 = np.uint64(1)
_U7 = np.uint64(7)
_HI = np.uint64(0x80)
_LOW7 = np.uint64(0x7F)


@kernel
def _uvarint(src, pos, end):
    # (value, position after it, status 0 / ERR_TRUNCATED / ERR_CORRUPT). Positions are
    # uint64 throughout (no wraparound fix on indexing), and a one-byte varint (most run
    # lengths, exception gaps and small values) returns before the loop: together 1.7x
    # faster on 200k short runs than int64 positions and the loop alone.
    if pos >= end:
        return _U0, pos, ERR_TRUNCATED
    b = np.uint64(src[pos])
    if b < _HI:
        return b, pos + _U1, OK
    result = b & _LOW7
    shift = _U7
    p = pos + _U1
    for i in range(1, 10):
        if p >= end:
            return _U0, p, ERR_TRUNCATED
        b = np.uint64(src[p])
        p += _U1
        if b < _HI:
            if i == 9 and b > _U1:
                return _U0, p, ERR_CORRUPT
            return result | (b << shift), p, OK
        result |= (b & _LOW7) << shift
        shift += _U7
    return _U0, p, ERR_CORRUPT


@kernel
def _get_uvarint(src, pos, end):
    # (value, new position) with int64 positions; the position is a negative status on
    # failure (the block kernels' contract).
    v, p, st = _uvarint(src, np.uint64(pos), np.uint64(end))
    return v, (np.int64(p) if st == OK else np.int64(st))


@kernel
def uvarints_into(src, pos, end, out):
    """Read ``len(out)`` uvarints from src[pos:end] into ``out``: the position after
    them, or ERR_TRUNCATED / ERR_CORRUPT. One call for a table of values (a PackDict
    block's entries) instead of one :func:`_uvarint` call per value."""
    p = np.int64(pos)
    for j in range(out.shape[0]):
        if p >= end:
            return np.int64(ERR_TRUNCATED)
        b = np.uint64(src[p])
        p += 1
        x = b & _LOW7
        if b >= _HI:
            shift = _U7
            for i in range(1, 10):
                if p >= end:
                    return np.int64(ERR_TRUNCATED)
                b = np.uint64(src[p])
                p += 1
                x |= (b & _LOW7) << shift
                shift += _U7
                if b < _HI:
                    if i == 9 and b > _U1:
                        return np.int64(ERR_CORRUPT)
                    break
            else:
                return np.int64(ERR_CORRUPT)
        out[j] = x
    return p


@kernel
def rle_decode(src, pos, end, n, signed, out, errpos, max_runs):
    """Parse EB runs from src[pos:end] until ``n`` rows; expand into ``out`` if len(out) == n.

    Returns the position after the last run, or ERR_TRUNCATED / ERR_CORRUPT (zero run,
    runs overflowing n, over-long varint) with the failing byte position in errpos[0],
    or ERR_LIMIT as soon as more than ``max_runs`` runs were read (``max_runs < 0``: no
    limit), so a caller can ask "few long runs?" for the price of a few runs.
    """
    # The two uvarints of a run are read by one loop body written out here (the loop of
    # uvarints_into), not by a call per run: Numba does not inline a call to another
    # kernel, and on 200k runs of two, calling _uvarint (even with inline="always") was
    # 3.4x slower and calling uvarints_into with a 2-slot buffer 1.5-2x slower.
    write = out.shape[0] == n
    idx = 0
    runs = 0
    p = np.int64(pos)
    value = _U0
    while idx < n:
        # The common run: a value of one or two bytes and a one-byte length, read with
        # no data-dependent loop (a value's second byte is used or not by a multiply,
        # not a branch). Anything else, and the last bytes of the input, take the
        # general loop below, which also reports a damaged varint.
        fast = False
        if p + 3 <= end:
            b0 = np.uint64(src[p])
            b1 = np.uint64(src[p + 1])
            c0 = b0 >> _U7
            if (c0 & (b1 >> _U7)) == _U0:
                start = p + 1 + np.int64(c0)
                x = np.uint64(src[start])
                if x < _HI:
                    value = (b0 & _LOW7) | (((b1 & _LOW7) << _U7) * c0)
                    p = start + 1
                    fast = True
        if not fast:
            for k in range(2):  # the run's value, then its length
                start = p
                if p >= end:
                    errpos[0] = start
                    return np.int64(ERR_TRUNCATED)
                b = np.uint64(src[p])
                p += 1
                x = b & _LOW7
                if b >= _HI:
                    shift = _U7
                    for i in range(1, 10):
                        if p >= end:
                            errpos[0] = start
                            return np.int64(ERR_TRUNCATED)
                        b = np.uint64(src[p])
                        p += 1
                        x |= (b & _LOW7) << shift
                        shift += _U7
                        if b < _HI:
                            if i == 9 and b > _U1:
                                errpos[0] = start
                                return np.int64(ERR_CORRUPT)
                            break
                    else:
                        errpos[0] = start
                        return np.int64(ERR_CORRUPT)
                if k == 0:
                    value = x
        if x == _U0 or x > np.uint64(n - idx):
            errpos[0] = start
            return np.int64(ERR_CORRUPT)
        run = np.int64(x)
        runs += 1
        if max_runs >= 0 and runs > max_runs:
            return np.int64(ERR_LIMIT)
        if write:
            v = (value >> _U1) ^ (_U0 - (value & _U1)) if signed else value
            if run <= 4 and idx + 4 <= n:
                # A short run (nafld2's day offsets average two rows): four stores with no
                # loop whose trip count the branch predictor cannot guess; the rows past
                # the run are written again by the runs after it, which cover every row.
                out[idx] = v
                out[idx + 1] = v
                out[idx + 2] = v
                out[idx + 3] = v
            else:
                for i in range(idx, idx + run):
                    out[i] = v
        idx += run
    return p


@kernel
def run_index_into(ends, rows, out):
    """``out[k]`` = the run holding row ``rows[k]``: the first ``i`` with ``ends[i] > rows[k]``.

    ``ends`` (int64, ascending: the row each run ends before) and ``rows`` (int64,
    ascending) are walked together, each step galloping from the last run found: one
    pass when the rows are dense, a few probes per row when they are sparse. A binary
    search per row (numpy's searchsorted) measured 1.5-7x slower for 2-50% of the rows
    of 50 to 200k runs, and the same for a handful of rows.
    Returns len(rows), or ERR_CORRUPT when a row lies past the last run.
    """
    nr = ends.shape[0]
    r = 0
    for k in range(rows.shape[0]):
        row = rows[k]
        if r >= nr:
            return np.int64(ERR_CORRUPT)
        if ends[r] <= row:
            lo = r  # ends[lo] <= row; the run sought is in (lo, hi]
            hi = r + 1
            step = 1
            while hi < nr and ends[hi] <= row:
                lo = hi
                step *= 2
                hi = lo + step
            if hi > nr:
                hi = nr
            while hi - lo > 1:
                mid = (lo + hi) >> 1
                if ends[mid] <= row:
                    lo = mid
                else:
                    hi = mid
            r = hi
            if r >= nr:
                return np.int64(ERR_CORRUPT)
        out[k] = r
    return np.int64(rows.shape[0])


@kernel
def pfor_patch(src, pos, end, exc_n, n, base, out, errpos):
    """Parse ``exc_n`` EE exception pairs from src[pos:end]; set out[idx] = base + delta.

    Patches only if len(out) == n (skip validates without writing). Gap rules follow Go:
    a zero gap after the first exception, or an index >= n, is ERR_CORRUPT. Returns the
    position after the list or a negative status with errpos[0] set.
    """
    write = np.uint64(out.shape[0]) == np.uint64(n)
    nn = np.uint64(n)
    idx = _U0
    p = np.uint64(pos)
    e = np.uint64(end)
    for k in range(exc_n):
        gap, p1, st = _uvarint(src, p, e)
        if st != OK:
            errpos[0] = np.int64(p)
            return np.int64(st)
        d, p2, st = _uvarint(src, p1, e)
        if st != OK:
            errpos[0] = np.int64(p1)
            return np.int64(st)
        if (k > 0 and gap == _U0) or gap >= nn - idx:
            errpos[0] = np.int64(p)
            return np.int64(ERR_CORRUPT)
        idx += gap
        if write:
            out[idx] = base + d
        p = p2
    return np.int64(p)


def _warmup() -> None:
    """Compile with the glue's dtypes: uint8 payloads read-only and writable, uint64 outputs."""
    run_index_into(np.array([2, 5], np.int64), np.array([0, 4], np.int64), np.empty(2, np.int64))
    rle = np.array([6, 2, 3, 3], dtype=np.uint8)  # zigzag 3 x2, -2 x3
    exc = np.array([1, 5, 2, 7], dtype=np.uint8)
    out = np.empty(5, dtype=np.uint64)
    errpos = np.zeros(1, dtype=np.int64)
    for cast in (lambda a: a, lambda a: np.frombuffer(a.tobytes(), dtype=np.uint8)):
        rle_decode(cast(rle), 0, 4, 5, True, out, errpos, -1)
        rle_decode(cast(rle), 0, 4, 5, True, out[:0], errpos, 1)
        pfor_patch(cast(exc), 0, 4, 2, 5, np.uint64(1), out, errpos)
        pfor_patch(cast(exc), 0, 4, 2, 5, np.uint64(1), out[:0], errpos)
        uvarints_into(cast(exc), 0, 4, out[:4])
