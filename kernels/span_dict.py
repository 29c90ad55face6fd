"""Dictionaries of small-span keys by a presence table (the encoder's dictionary trial).

A column of integers, or of floats that are all whole numbers, spanning few values
finds its sorted distinct values and each row's code with a table indexed by
``key - min`` instead of a hash table: one pass for the bounds, one to mark the
table, one to write the codes. numpy needed about fifteen passes for the same
(boolean indexing, casts, a cumulative sum over the span): 4.5 ms for one of
flights' 336k-row nullable float columns, 1.9 ms now. The bounds pass selects
instead of branching (0.33 ms against 1.06 with an early exit per row).

Keys arrive as int64 (every integer type but uint64 widens exactly; uint64 comes
as its int64 view with ``unsigned`` set, and a value at or above 2**63 declines) or
float64 (float32 widens exactly). Null rows are those whose bit in the Arrow
validity ``bitmap`` (LSB first, from bit ``bit_off``) is 0; ``nullable`` False
means there is none.
"""

from __future__ import annotations

import math

import numpy as np

from ._jit import kernel

#: Status: a key the table cannot take (NaN, an infinity, -0.0, a fraction, a float
#: beyond 2**53, a uint64 at or above 2**63); the caller hashes the column instead.
NOT_KEYS = -1
_WHOLE = 2.0**53


@kernel
def _present(bitmap, bit_off, nullable, i):
    if not nullable:
        return True
    j = i + bit_off
    return ((bitmap[j >> 3] >> (j & 7)) & 1) != 0


@kernel
def span_bounds(keys, bitmap, bit_off, nullable, unsigned, is_float, out):
    """``out`` = [min, max] of the present keys as int64; returns how many are present,
    or NOT_KEYS. Float keys must be whole numbers of magnitude <= 2**53, and not -0.0
    (the hash path keeps its bits apart from 0.0)."""
    n = keys.shape[0]
    lo = np.int64(np.iinfo(np.int64).max)
    hi = np.int64(np.iinfo(np.int64).min)
    m = 0
    bad = False
    for i in range(n):  # selects, not branches: a row's checks cost the same either way
        p = _present(bitmap, bit_off, nullable, i)
        v = keys[i]
        if is_float:
            f = np.float64(v)
            whole = abs(f) <= _WHOLE  # False for NaN and the infinities
            x = np.int64(f) if whole else np.int64(0)
            bad |= p and (not whole or np.float64(x) != f or (f == 0.0 and math.copysign(1.0, f) < 0.0))
        else:
            x = np.int64(v)
            bad |= p and unsigned and x < 0
        lo = min(lo, x) if p else lo
        hi = max(hi, x) if p else hi
        m += 1 if p else 0
    if bad:
        return NOT_KEYS
    out[0] = lo
    out[1] = hi
    return m


@kernel
def span_codes(keys, bitmap, bit_off, nullable, lo, rank, codes):
    """Mark each present key in ``rank`` (int32, zeroed, one slot per value of the span
    from ``lo``), turn the marks into 1-based ranks, and write each row's code (its
    key's rank - 1; a null row gets the first present row's code, as the hash path
    fills them). Returns the number of distinct keys. ``span_bounds`` checked the keys;
    a null row's value slot holds anything and is never read."""
    n = keys.shape[0]
    first = -1
    for i in range(n):
        if _present(bitmap, bit_off, nullable, i):
            rank[np.int64(keys[i]) - lo] = 1
            if first < 0:
                first = i
    d = 0
    for k in range(rank.shape[0]):
        if rank[k] != 0:
            d += 1
            rank[k] = d
    fill = np.uint64(0) if first < 0 else np.uint64(rank[np.int64(keys[first]) - lo] - 1)
    for i in range(n):
        if _present(bitmap, bit_off, nullable, i):
            codes[i] = np.uint64(rank[np.int64(keys[i]) - lo] - 1)
        else:
            codes[i] = fill
    return d


def _warmup() -> None:
    """Compile for int64 and float64 keys, with and without nulls; keys and bitmap
    read-only, as the glue passes them."""
    bitmap = np.frombuffer(bytes([0b1011]), dtype=np.uint8)
    out = np.empty(2, dtype=np.int64)
    for keys, is_float in ((np.array([3, 1, 3, 2], dtype=np.int64), False),
                           (np.array([3.0, 1.0, 3.0, 2.0]), True)):
        keys = np.frombuffer(keys.tobytes(), dtype=keys.dtype)
        for nullable in (False, True):
            span_bounds(keys, bitmap, np.int64(0), nullable, False, is_float, out)
            span_codes(keys, bitmap, np.int64(0), nullable, np.int64(1), np.zeros(3, dtype=np.int32),
                       np.empty(4, dtype=np.uint64))
