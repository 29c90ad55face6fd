"""Write the body of a string column: the reference's string picker (qdf-wire-v1.md §3.3).

Dictionary (F5, front-coded FA, QPack-indexed FC) when at most 256 distinct values
and the index beats per-value strings; alphabet packing (FB) for high-cardinality
values over a small byte alphabet (hex ids); the raw slab (F8) when it is no larger
than Dense per-value interning; else per-value strings through the Dense writer. An
empty column writes nothing. docs/FORMAT.md §1.2 lists the gates and the one
deliberate difference from the reference (the 129..256-distinct dictionary gate).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from qdf_kernels import alpha as ak
from qdf_kernels import strings as sk

from ..format.tags import StrColTag
from ..format.varint import uvarint_len, write_uvarint
from .bits import bits_for_distinct, pack_bits

DICT_MAX_DISTINCT = 256
DICT_MIN_ROWS = 16
DICT_SAMPLE = 64
DICT_SAMPLE_MAX_PCT = 70
RAW_MIN_ROWS = 16
MIN_INTERN = 4  # strings shorter than this are never interned (Go minIntern)


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


def write_string_column(out: bytearray, arr: pa.Array, dense, *, fsst: bool = False) -> str:
    """Append the body of a string column (no nulls in ``arr``); return the form's name."""
    n = len(arr)
    if n == 0:
        return "empty"
    if _try_dict(out, arr, n):
        return "dict"
    offsets, data = _offsets_data(arr)
    if fsst:  # Options.FSST (compression mode): tried before alpha packing, as the reference does
        from ..codecs.fsst import try_write_fsst

        if try_write_fsst(out, offsets, data, n):
            return "fsst"
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
    bits = bits_for_distinct(d)
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
    cbits = bits_for_distinct(a)
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
