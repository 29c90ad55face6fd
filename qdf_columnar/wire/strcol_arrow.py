"""Materialise scanned string columns as Arrow arrays (all rows or selected rows).

Dictionary columns expand in one fused kernel pass straight from the packed codes,
validating UTF-8 once per dictionary entry; alpha-packed and FSST columns decode into
one slab (or only the selected rows); raw slabs gather into fresh offsets + data. Output
buffers come from :mod:`qdf_columnar.columns.alloc`.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from qdf_kernels import alpha as ak
from qdf_kernels import bitpack
from qdf_kernels import strings as sk

from ..codecs.strings.slices import StringSlices
from ..columns import alloc
from ..columns.buffers import checked_dictionary
from ..columns.coded import CodedColumn
from ..columns.runs import RunColumn
from ..errors import CorruptDataError
from .numeric_arrow import spread_present

_HIGH_BITS = np.uint64(0x8080808080808080)
_LARGE = (pa.large_string(), pa.large_binary())


def _ascii(data: np.ndarray) -> bool:
    """Whether every byte of ``data`` (uint8) is below 0x80, by OR-ing whole words: 0.06 ms
    for a 1.2 MB column, where Arrow's full UTF-8 validation takes 0.9 ms (movies' titles).
    ASCII is valid UTF-8, so a column that passes needs no other check."""
    k = len(data) // 8
    word = np.bitwise_or.reduce(data[: 8 * k].view(np.uint64)) if k else np.uint64(0)
    tail = np.bitwise_or.reduce(data[8 * k:]) if len(data) > 8 * k else np.uint8(0)
    return not (word & _HIGH_BITS) and not (int(tail) & 0x80)


def _check_utf8(arr: pa.Array, data: np.ndarray, what: str) -> None:
    """CorruptDataError(``what``) unless the string array ``arr`` (offset 0), whose
    offsets index ``data`` (uint8), is valid UTF-8.

    Checked as a whole, not value by value: the bytes the values span are valid UTF-8
    and no value starts inside a character (its first byte is not a continuation byte
    10xxxxxx), which together say every value is (0.30 ms instead of Arrow's 0.57 ms per
    value for trump_tweets' 2.2 MB of text)."""
    if _ascii(data):
        return
    n = len(arr)
    width = np.int64 if pa.types.is_large_string(arr.type) else np.int32
    offsets = np.frombuffer(arr.buffers()[1], dtype=width, count=n + 1)
    lo, hi = int(offsets[0]), int(offsets[n])
    starts = offsets[:n]
    inside = starts[starts < hi]
    whole = pa.Array.from_buffers(pa.large_string(), 1, [
        None, pa.py_buffer(np.array([0, hi - lo], dtype=np.int64)), pa.py_buffer(data[lo:hi])])
    try:
        whole.validate(full=True)
    except pa.ArrowInvalid:
        raise CorruptDataError(what) from None
    if len(inside) and bool(np.any((data[inside] & 0xC0) == 0x80)):
        raise CorruptDataError(what)


def slices_to_arrow(sl: StringSlices | list[bytes], typ: pa.DataType, rows: np.ndarray | None = None) -> pa.Array:
    """Materialise (optionally only ``rows`` of) a scanned string column as an Arrow array."""
    binary = pa.types.is_binary(typ) or pa.types.is_large_binary(typ)
    if isinstance(sl, list):
        vals = sl if rows is None else [sl[i] for i in rows]
        if binary:
            return pa.array(vals, type=typ)
        try:
            return pa.array([v.decode("utf-8") for v in vals], type=typ)
        except UnicodeDecodeError as exc:
            raise CorruptDataError(f"string column holds invalid UTF-8 ({exc.reason})") from None
    if sl.fsst is not None:
        if rows is not None:  # only the kept rows are decoded
            offsets, data = sl.fsst.decode_rows(rows)
            part = StringSlices(data, None, None, offsets=offsets)
            return _contiguous_to_arrow(part, typ, binary)
        sl.unpack_fsst()
    if sl.alpha is not None and rows is not None:
        return _alpha_rows_to_arrow(sl, typ, binary, rows)
    if rows is None and sl.offsets is not None:
        if sl.alpha is not None:
            sl.unpack_alpha()
        return _contiguous_to_arrow(sl, typ, binary)
    if sl.is_dict:
        return _dict_to_arrow(sl, typ, binary, rows)
    if sl.starts is None:  # a contiguous slab asked for a subset of rows
        sl.starts, sl.lens = sl.offsets[:-1], np.diff(sl.offsets)
    starts, lens = sl.starts, sl.lens
    if rows is not None:
        starts = starts[rows]
        lens = lens[rows]
    n = len(starts)
    total = int(lens.sum()) if n else 0
    large = pa.types.is_large_string(typ) or pa.types.is_large_binary(typ) or total >= 2**31 - 1
    offsets = alloc.empty(n + 1, np.int64 if large else np.int32)
    offsets[0] = 0
    np.cumsum(lens, out=offsets[1:])
    data = alloc.empty(total, np.uint8)
    if n:
        sk.gather_slices_into(sl.src, starts, lens, offsets, data)
    if binary:
        base = pa.large_binary() if large else pa.binary()
    else:
        base = pa.large_string() if large else pa.string()
    out = pa.Array.from_buffers(base, n, [None, pa.py_buffer(offsets), pa.py_buffer(data)])
    if not binary:
        _check_utf8(out, data, "string column holds invalid UTF-8")
    if pa.types.is_null(typ):  # an all-null column (e.g. the empty categories of a no-row categorical)
        if n:
            raise CorruptDataError(f"the schema note says all-null but the column holds {n} values")
        return pa.array([], pa.null())
    if out.type != typ and not (large and typ in (pa.string(), pa.binary())):
        out = out.cast(typ)
    return out


#: A dictionary whose entries, padded to the longest one, would take more than this
#: many bytes is expanded row by row from its entries' slices instead of through the
#: padded word table (a long-tailed table of 100k titles would otherwise cost a
#: padded copy far larger than the values).
WIDE_TABLE_BYTES = 4 << 20


def _dict_to_arrow(sl: StringSlices, typ: pa.DataType, binary: bool, rows: np.ndarray | None) -> pa.Array:
    """Expand a dictionary block: validate the (small) table once, then one fused gather."""
    tl = np.ascontiguousarray(sl.table_lens, dtype=np.int64)
    starts = np.ascontiguousarray(sl.table_starts, dtype=np.int64)
    packed = sl.packed if rows is None and sl._codes is None and not _wide(tl) else None
    codes = None if packed is not None else sl.codes if rows is None else sl.codes_at(rows)
    return expand_entries(sl.src, starts, tl, typ, binary, codes=codes, packed=packed, n=sl.n,
                          validate=not binary)


def _wide(table_lens: np.ndarray) -> bool:
    width = int(table_lens.max()) if len(table_lens) else 0
    return len(table_lens) * (((width + 7) >> 3) << 3) > WIDE_TABLE_BYTES


def expand_entries(src: np.ndarray, starts: np.ndarray, lens: np.ndarray, typ: pa.DataType, binary: bool, *,
                   codes: np.ndarray | None = None, packed: tuple[np.ndarray, int] | None = None, n: int = 0,
                   validate: bool = True) -> pa.Array:
    """The rows of a dictionary column as a plain string / binary array: entry ``codes[i]``
    (or code ``i`` of the ``packed`` (body, bits) index of ``n`` rows) of the table whose
    entries are ``src[starts[k]:starts[k] + lens[k]]``. ``validate`` checks the entries
    as UTF-8 once (not needed when they come from an Arrow array already checked). A
    code outside the table is CorruptDataError."""
    tl = np.ascontiguousarray(lens, dtype=np.int64)
    starts = np.ascontiguousarray(starts, dtype=np.int64)
    d = len(tl)
    if validate:  # the entries back to back (one kernel call), checked by Arrow in one pass
        t_off = np.zeros(d + 1, dtype=np.int64)
        np.cumsum(tl, out=t_off[1:])
        flat = np.empty(int(t_off[-1]), dtype=np.uint8)
        if d:
            sk.gather_slices_into(src, starts, tl, t_off, flat)
        entries = pa.Array.from_buffers(pa.large_string(), d, [None, pa.py_buffer(t_off), pa.py_buffer(flat)])
        _check_utf8(entries, flat, "string dictionary entry is not valid UTF-8")
    if packed is not None:  # expand straight from the packed index: no per-row code array
        body, bits = packed
        total = int(sk.dict_total_len_packed(tl, body, np.int64(bits), np.int64(n)))
    else:
        codes = np.ascontiguousarray(codes, dtype=np.uint64)
        n = len(codes)
        total = int(sk.dict_total_len(tl, codes))
    if total < 0:
        raise CorruptDataError(f"dictionary index out of range for {d} entries")
    large = pa.types.is_large_string(typ) or pa.types.is_large_binary(typ) or total >= 2**31 - 1
    offsets = alloc.empty(n + 1, np.int64 if large else np.int32)
    words = max(1, ((int(tl.max()) if d else 0) + 7) >> 3)
    data = alloc.empty(total + sk.gather_slack(words), np.uint8)
    if codes is not None and _wide(tl):  # each row's bytes straight from its entry's slice
        row_lens = tl[codes]
        offsets[0] = 0
        np.cumsum(row_lens, out=offsets[1:])
        sk.gather_slices_into(src, starts[codes], row_lens, offsets, data)
    else:
        # Each entry zero-padded to whole little-endian words (one kernel call writes
        # entry k at k * width), so a row copies 8 bytes at a time.
        table = np.zeros(d * words, dtype=np.uint64)
        if d:
            slots = np.arange(0, (d + 1) * words * 8, words * 8, dtype=np.int64)
            sk.gather_slices_into(src, starts, tl, slots, table.view(np.uint8))
        if packed is not None:
            sk.dict_gather_packed_into(table, np.int64(words), tl, packed[0], np.int64(packed[1]), offsets, data)
        else:
            sk.dict_gather_into(table, np.int64(words), tl, codes, offsets, data)
    if binary:
        base = pa.large_binary() if large else pa.binary()
    else:
        base = pa.large_string() if large else pa.string()
    out = pa.Array.from_buffers(base, n, [None, pa.py_buffer(offsets), pa.py_buffer(data[:total])])
    return out.cast(typ) if out.type != typ and not (large and typ in (pa.string(), pa.binary())) else out


def _alpha_rows_to_arrow(sl: StringSlices, typ: pa.DataType, binary: bool, rows: np.ndarray) -> pa.Array:
    body, alphabet, a, cbits = sl.alpha
    starts = sl.offsets[:-1][rows]
    lens = sl.offsets[1:][rows] - starts
    n = len(rows)
    total = int(lens.sum()) if n else 0
    offsets = np.empty(n + 1, dtype=np.int64)
    data = np.empty(total, dtype=np.uint8)
    if ak.alpha_unpack_rows_into(body, alphabet, np.int64(a), np.int64(cbits), starts, lens, offsets, data) < 0:
        raise CorruptDataError("alpha code outside the alphabet")
    if not sl.ascii and not binary:
        try:
            data.tobytes().decode("utf-8")
        except UnicodeDecodeError:
            raise CorruptDataError("string column holds invalid UTF-8") from None
    base = (pa.large_binary() if binary else pa.large_string())
    out = pa.Array.from_buffers(base, n, [None, pa.py_buffer(offsets), pa.py_buffer(data)])
    return out.cast(typ) if out.type != typ else out


def _contiguous_to_arrow(sl: StringSlices, typ: pa.DataType, binary: bool) -> pa.Array:
    n = len(sl.offsets) - 1
    last = int(sl.offsets[-1])
    # A large type asked for gets the int64 offsets as they are (not int32 ones cast back).
    large = last >= 2**31 - 1 or (typ in _LARGE and sl.offsets.dtype == np.int64)
    if large:
        offsets = sl.offsets
    elif n and last == n * int(sl.offsets[1]) and bool((np.diff(sl.offsets) == sl.offsets[1]).all()):
        # fixed length (hex ids): one arange, no cast (equal totals alone do not prove it)
        offsets = np.arange(0, last + 1, max(1, int(sl.offsets[1])), dtype=np.int32)[: n + 1]
        if len(offsets) != n + 1:  # zero-length values
            offsets = np.zeros(n + 1, dtype=np.int32)
    else:
        offsets = sl.offsets.astype(np.int32)
    if binary:
        base = pa.large_binary() if large else pa.binary()
    else:
        base = pa.large_string() if large else pa.string()
    out = pa.Array.from_buffers(base, n, [None, pa.py_buffer(offsets), pa.py_buffer(sl.src)])
    if not binary and not sl.ascii:
        _check_utf8(out, sl.src[:last], "string column holds invalid UTF-8")
    return out.cast(typ) if out.type != typ and not (large and typ in (pa.string(), pa.binary())) else out


def slices_to_runs(sl: StringSlices, value_type: pa.DataType) -> RunColumn | None:
    """A dictionary block whose codes are kept as runs: one DictionaryArray entry per run
    (codes over the table); None when the codes are not runs."""
    runs = sl.code_runs()
    if runs is None:
        return None
    codes, ends = runs
    return RunColumn(checked_dictionary(codes, _table(sl, value_type)), ends)


def slices_to_coded(sl: StringSlices, value_type: pa.DataType, bitmap: np.ndarray | None = None,
                    valid: np.ndarray | None = None) -> CodedColumn | None:
    """A dictionary block whose codes are not unpacked yet (F5's bit-packed index, or an
    FC index in a QPack payload) as a :class:`CodedColumn` a filter maps through; None
    once the codes are unpacked. A PackFor payload maps its packed codes straight
    through the per-entry table; other payloads (PFOR, blocks, ...) are decoded once and
    mapped by one kernel pass that also checks each code, never cast to an Arrow
    dictionary array nor checked again. A nullable column's codes are its present
    rows': ``bitmap`` (the v1 presence bitmap) and ``valid`` (the same as a boolean
    mask) spread them over its rows."""
    if sl._codes is not None:
        return None
    if sl.payload is not None:
        gather = sl.payload[0].gather
    elif sl.packed is not None:
        body, bits = sl.packed

        def gather(table: np.ndarray, out: np.ndarray) -> int:
            return int(bitpack.unpack_for_gather(body, bits, np.uint64(0), table, out))
    else:
        return None
    n_present = sl.n

    def lookup(table: np.ndarray) -> np.ndarray:
        out = alloc.empty(n_present, np.uint8)
        if gather(table, out) != n_present:
            sl.codes  # noqa: B018 - unpacks and checks them: raises the out-of-range error
            raise CorruptDataError(f"dictionary index out of range for {len(sl.table_lens)} entries")
        return out if bitmap is None else spread_present(out, bitmap, len(valid))[0]

    return CodedColumn(_table(sl, value_type), n_present if valid is None else len(valid), lookup, valid)


def slices_to_dictionary(sl: StringSlices, value_type: pa.DataType, rows: np.ndarray | None = None) -> pa.Array:
    """A DictionaryArray straight from a dictionary block (no expansion of the values)."""
    # StringSlices checks every code against the table as it unpacks them.
    return checked_dictionary(sl.codes if rows is None else sl.codes_at(rows), _table(sl, value_type))


def _table(sl: StringSlices, value_type: pa.DataType) -> pa.Array:
    """A dictionary block's table as an Arrow array."""
    return slices_to_arrow(StringSlices(sl.src, sl.table_starts, sl.table_lens), value_type)
