"""Write the body of a string column: the string picker (qdf-wire-v1.md §3.3).

**The reference order** (:func:`_balanced`, the reference's ``writeStringColumn``): the
first form whose gate passes wins:

1. Dictionary (F5, front-coded FA, QPack-indexed FC) when n >= 16, the first 64 rows
   are at most 70 % distinct, 2..256 distinct values and the index beats per-value
   strings (docs/FORMAT.md §1.2 has the one deliberate difference from the reference:
   the 129..256-distinct gate).
2. Alphabet packing (FB) for high-cardinality values over 2..64 distinct bytes (hex
   ids) when smaller than the raw floor.
3. The raw slab (F8) when n >= 16 and no larger than per-value strings. Both sizes are
   exact: per-value strings are sized (and written) by a kernel that replays the Dense
   intern state. Where the reference's estimate and the exact sizes disagree, the
   strictly smaller form wins; an exact tie keeps the estimate's choice.
4. Per-value strings through the Dense intern table.

**Both modes** then size the other eligible forms exactly and keep the smallest
(:func:`_smallest`), so a string column is never larger than the reference-order
choice nor than its F8 form:

* the reference-order choice above (it wins ties);
* the dictionary, as the smallest of F5 / FA / FC, whenever the column has 2..256
  distinct values (no head-sample or per-value gate, any n; the first 1024 rows are
  checked first so high-cardinality columns are not hashed for it). Never more than
  256 entries: the Go decoder rejects larger F5 / FA / FC tables;
* alphabet packing whenever the bytes use 2..64 distinct values (no head-sample or
  raw-floor gate, any n);
* the raw slab at any n;
* per-value strings when the reference order reaches them, or when the first 1024
  rows are at most 75 % distinct (a cheap guard: with fewer repeats interning loses
  to the raw slab and alphabet packing, and sizing it costs a hash of the whole
  column) and their floor (one byte a row plus the bytes of inline short strings) is
  below the best so far.

Alphabet packing, the raw slab and per-value strings are only sized when a lower
bound (a bit per character; a byte per row plus the bytes; a byte per row) leaves
them a chance, so a dictionary column pays for none of them.

**Compression mode and the CASCADE presets** (``fsst=True``: Options.FSST or
Options.CASCADE) add FSST (F6, n >= 16) last, gated on being strictly smaller than
the best of the others: a lower bound is checked before training and a held-out
projection before the full encode
(:func:`qdf_columnar.codecs.fsst.fsst_block`). So a string column is never larger in
compression mode than in balanced mode (given the same Dense state).

Per-value sizes depend on the Dense state left by earlier columns, so "never larger"
is per column given the same state; a column whose strings repeat an earlier column's
can differ when that earlier column took another form.
An empty column writes nothing.
"""

from __future__ import annotations

from collections.abc import Callable

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
HEAD_ROWS = 1024  # compression mode: rows checked before hashing a whole column
PER_VALUE_HEAD_PCT = 75  # compression mode: per-value strings are sized when the head is at most this distinct


def _offsets_data(arr: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """int64 offsets (n+1) and a read-only uint8 view of the data of a string/binary Arrow array.

    The data view is always read-only (Arrow buffers come through writable or not
    depending on where they were allocated), so each kernel has one specialisation.
    """
    if pa.types.is_string(arr.type) or pa.types.is_binary(arr.type):
        off_t = np.int32
    else:
        off_t = np.int64
    bufs = arr.buffers()
    n = len(arr)
    offsets = np.frombuffer(bufs[1], dtype=off_t, count=n + 1, offset=arr.offset * np.dtype(off_t).itemsize)
    data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None else np.zeros(0, np.uint8)
    offsets = offsets.astype(np.int64)
    data = data.view()
    data.flags.writeable = False
    return offsets, data


def _common_prefix(a: bytes, b: bytes) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


class _Form:
    """One candidate encoding of the column: its exact size and how to append it."""

    __slots__ = ("name", "size", "emit")

    def __init__(self, name: str, size: int, emit: Callable[[bytearray], None]) -> None:
        self.name = name
        self.size = size
        self.emit = emit


def _bytes_form(name: str, block: bytes | bytearray) -> _Form:
    def emit(out: bytearray) -> None:
        out += block

    return _Form(name, len(block), emit)


class _Column:
    """A non-null string column's Arrow buffers and the facts the candidates share (computed once)."""

    def __init__(self, arr: pa.Array, dense, enc: pa.DictionaryArray | None = None) -> None:
        self.arr = arr
        self.n = len(arr)
        self.dense = dense
        self.offsets, self.data = _offsets_data(arr)
        self.binary = pa.types.is_binary(arr.type) or pa.types.is_large_binary(arr.type)
        self.lens = np.diff(self.offsets)
        self.total = int(self.offsets[-1] - self.offsets[0])
        self._bulk: int | None = None
        self._enc: pa.DictionaryArray | None = enc
        self._dict: object = False  # False = not computed, None = not a dictionary column
        self._alpha: object = False
        self._per_value: _Form | None = None
        self._head_distinct: int | None = None

    @property
    def bulk(self) -> int:
        """sum(uvarint_len(len) + len): the F8 body after its header, and the alphabet raw floor."""
        if self._bulk is None:
            self._bulk = int(sk.uvarint_lens_total(self.offsets))
        return self._bulk

    @property
    def enc(self) -> pa.DictionaryArray:
        """The column dictionary-encoded in first-seen order (as Go's tables)."""
        if self._enc is None:
            self._enc = self.arr.dictionary_encode()
        return self._enc

    def head_distinct(self) -> int:
        """Distinct values among the first HEAD_ROWS rows."""
        if self._head_distinct is None:
            self._head_distinct = int(pc.count_distinct(self.arr.slice(0, HEAD_ROWS)).as_py())
        return self._head_distinct


def write_string_column(out: bytearray, arr: pa.Array, dense, *, fsst: bool = False,
                        independent: bool = False, enc: pa.DictionaryArray | None = None) -> str:
    """Append the body of a string column (no nulls in ``arr``); return the form's name.

    ``independent`` (Options.CASCADE) leaves out per-value strings: every form left is
    a self-contained block, so the body neither reads nor changes the Dense intern
    state and a reader seeks past it (the column index gives its length).
    ``enc``: ``arr.dictionary_encode()`` (first-seen order), when the caller has it.
    """
    if len(arr) == 0:
        return "empty"
    col = _Column(arr, dense, enc)
    form = _self_contained(col, fsst=fsst) if independent else _smallest(col, fsst=fsst)
    form.emit(out)
    return form.name


# ------------------------------------------------------------------ pickers


def _balanced(col: _Column) -> _Form:
    form = _dict_balanced(col)
    if form is not None:
        return form
    form = _alpha_balanced(col)
    if form is not None:
        return form
    values = _per_value(col)
    if col.n >= RAW_MIN_ROWS:
        raw = _raw(col)
        if raw.size < values.size or (raw.size == values.size and raw.size <= _per_value_estimate(col)):
            return raw
    return values


def _smallest(col: _Column, *, fsst: bool) -> _Form:
    """The smallest exact-size form; ties keep the reference-order choice (:func:`_balanced`).

    Each candidate is sized only when a cheap lower bound leaves it a chance: alphabet
    packing needs at least a bit per character, the raw slab a length byte per row plus
    the bytes, per-value strings a byte per row plus the inline short strings.
    """
    best = _balanced(col)
    form = _dict_smallest(col)
    if form is not None and form.size < best.size:
        best = form
    if 6 + ((col.total + 7) >> 3) < best.size:  # tag, a, >= 2 alphabet bytes, n, flags, L or lengths
        form = _alpha_plan(col)
        if form is not None and form.size < best.size:
            best = form
    if 3 + col.total + col.n < best.size:  # tag, n, total, then n x (uvarint(len), bytes)
        form = _raw(col)
        if form.size < best.size:
            best = form
    if (col._per_value is None and col.n < best.size
            and col.head_distinct() * 100 <= min(col.n, HEAD_ROWS) * PER_VALUE_HEAD_PCT):
        short = col.lens < col.dense.min_intern
        floor = col.n + int(col.lens[short].sum())  # >= 1 byte a row, short strings inline
        if floor < best.size:
            _per_value(col)
    if col._per_value is not None and col._per_value.size < best.size:
        best = col._per_value
    return _fsst_if_smaller(col, best) if fsst else best


def _self_contained(col: _Column, *, fsst: bool) -> _Form:
    """The smallest block form (dictionary, alphabet packing, raw slab, FSST), never
    per-value strings; ties prefer them in that order, as :func:`_smallest` does."""
    best = _raw(col)
    for form in (_dict_smallest(col), _alpha_plan(col) if 6 + ((col.total + 7) >> 3) < best.size else None):
        if form is not None and form.size <= best.size:
            best = form
    return _fsst_if_smaller(col, best) if fsst else best


def _fsst_if_smaller(col: _Column, best: _Form) -> _Form:
    """FSST (F6) when it beats ``best``, else ``best``."""
    from ..codecs.fsst import fsst_block

    block = fsst_block(col.offsets, col.data, col.n, limit=best.size)
    return best if block is None else _bytes_form("fsst", block)


# ------------------------------------------------------------------ dictionary


class _Dict:
    """A column's first-seen dictionary (2..256 values), its packed-index facts and,
    computed once when first asked for, the front-coded table and the QPack index."""

    __slots__ = ("values", "idx", "d", "bits", "body_bytes", "plain", "n", "_fc", "_qbuf", "_forms")

    def __init__(self, values: list[bytes], idx: np.ndarray, n: int) -> None:
        self.values = values
        self.idx = idx
        self.n = n
        self.d = len(values)
        self.bits = bits_for_distinct(self.d)
        self.body_bytes = (n * self.bits + 7) >> 3
        self.plain = sum(uvarint_len(len(v)) + len(v) for v in values)
        self._fc: tuple[bytearray, list[int]] | None = None
        self._qbuf: bytearray | None = None
        self._forms: dict[int, _Form] = {}

    @property
    def fc(self) -> tuple[bytearray, list[int]]:
        if self._fc is None:
            self._fc = _front_coded_table(self.values)
        return self._fc

    @property
    def qbuf(self) -> bytearray:
        if self._qbuf is None:
            self._qbuf = _qpack_indices(self)
        return self._qbuf

    def form(self, tag: int) -> _Form:
        """The F5 / FA / FC block as a form: its exact size now, its bytes when emitted."""
        form = self._forms.get(tag)
        if form is None:
            n = self.n
            if tag == StrColTag.DICT_FC:
                size = 1 + len(self.fc[0]) + uvarint_len(n) + self.body_bytes

                def emit(out: bytearray) -> None:
                    out += _dict_fc_block(self, self.fc, n)
            elif tag == StrColTag.DICT_Q:
                size = 1 + uvarint_len(self.d) + self.plain + len(self.qbuf)

                def emit(out: bytearray) -> None:
                    out += _dict_block(StrColTag.DICT_Q, self, self.qbuf)
            else:
                size = 1 + uvarint_len(self.d) + self.plain + uvarint_len(n) + self.body_bytes

                def emit(out: bytearray) -> None:
                    out += _dict_block(StrColTag.DICT, self, None)
            form = self._forms[tag] = _Form("dict", size, emit)
        return form


def _dict_parts(col: _Column) -> _Dict | None:
    if col._dict is False:
        table = col.enc.dictionary
        d = len(table)
        if d < 2 or d > DICT_MAX_DISTINCT:
            col._dict = None
        else:
            values = [v.encode("utf-8") if isinstance(v, str) else bytes(v) for v in table.to_pylist()]
            col._dict = _Dict(values, np.asarray(col.enc.indices).astype(np.uint64), col.n)
    return col._dict  # type: ignore[return-value]


def _dict_balanced(col: _Column) -> _Form | None:
    """The reference's dictionary gate and form choice (FA, else FC, else F5)."""
    n = col.n
    if n < DICT_MIN_ROWS:
        return None
    if n >= DICT_SAMPLE and len(pc.unique(col.arr.slice(0, DICT_SAMPLE))) * 100 > DICT_SAMPLE * DICT_SAMPLE_MAX_PCT:
        return None
    dp = _dict_parts(col)
    if dp is None:
        return None
    overhead = 1 + uvarint_len(dp.d) + uvarint_len(n)
    if dp.body_bytes + overhead >= n and dp.body_bytes + overhead >= _per_value_floor(dp.idx, dp.values):
        return None
    gp = len(dp.values[0])
    for v in dp.values[1:]:
        gp = _common_prefix(dp.values[0][:gp], v)
    if gp >= 2 and len(dp.fc[0]) - uvarint_len(dp.d) < dp.plain:
        return dp.form(StrColTag.DICT_FC)
    if len(dp.qbuf) < dp.body_bytes:
        return dp.form(StrColTag.DICT_Q)
    return dp.form(StrColTag.DICT)


def _dict_smallest(col: _Column) -> _Form | None:
    """The smallest of F5 / FA / FC whenever there are 2..256 distinct values (ties: FA, FC, F5)."""
    n = col.n
    if n > HEAD_ROWS and col.head_distinct() > DICT_MAX_DISTINCT:
        return None
    dp = _dict_parts(col)
    if dp is None:
        return None
    best = dp.form(StrColTag.DICT_FC)
    for tag in (StrColTag.DICT_Q, StrColTag.DICT):
        form = dp.form(tag)
        if form.size < best.size:
            best = form
    return best


def _qpack_indices(dp: _Dict) -> bytearray:
    from ..codecs.qpack import encode_int_array

    qbuf = bytearray()
    encode_int_array(qbuf, dp.idx)
    return qbuf


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


def _dict_block(tag: int, dp: _Dict, qbuf: bytearray | None) -> bytearray:
    out = bytearray((tag,))
    write_uvarint(out, dp.d)
    for v in dp.values:
        write_uvarint(out, len(v))
        out += v
    if qbuf is not None:
        out += qbuf
    else:
        write_uvarint(out, len(dp.idx))
        out += pack_bits(dp.idx, dp.bits)
    return out


def _front_coded_table(values: list[bytes]) -> tuple[bytearray, list[int]]:
    """``uvarint(d)`` and the sorted table's (prefix, suffix length, suffix) entries; the sort order."""
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
    return fc, order


def _dict_fc_block(dp: _Dict, fc: tuple[bytearray, list[int]], n: int) -> bytearray:
    table, order = fc
    inv = np.empty(dp.d, dtype=np.uint64)
    inv[np.asarray(order)] = np.arange(dp.d, dtype=np.uint64)
    out = bytearray((StrColTag.DICT_FC,))
    out += table
    write_uvarint(out, n)
    out += pack_bits(inv[dp.idx.astype(np.intp)], dp.bits)
    return out


# ------------------------------------------------------------------ alphabet packing


def _high_cardinality_sample(arr: pa.Array, n: int) -> bool:
    """The reference's dictSampleHighCard: > 70 % distinct among the first min(n, 64) rows."""
    m = min(n, DICT_SAMPLE)
    return len(pc.unique(arr.slice(0, m))) * 100 > m * DICT_SAMPLE_MAX_PCT


def _alpha_balanced(col: _Column) -> _Form | None:
    if col.n < DICT_MIN_ROWS or not _high_cardinality_sample(col.arr, col.n):
        return None
    form = _alpha_plan(col)
    if form is None or form.size >= col.bulk:  # must beat the raw floor
        return None
    return form


def _alpha_plan(col: _Column) -> _Form | None:
    """The FB block's exact size (alphabet of 2..64 bytes) and its writer, or None."""
    if col._alpha is not False:
        return col._alpha  # type: ignore[return-value]
    col._alpha = None
    n = col.n
    offsets = col.offsets
    chars = col.data[offsets[0] : offsets[n]]
    code = np.full(256, -1, dtype=np.int16)
    alphabet = np.zeros(64, dtype=np.uint8)
    a = int(ak.alpha_scan(chars, code, alphabet))
    if a < 2:
        return None
    cbits = bits_for_distinct(a)
    lens = col.lens
    fixed = bool(np.all(lens == lens[0]))
    head = bytearray((StrColTag.ALPHA,))
    write_uvarint(head, a)
    head += alphabet[:a].tobytes()
    write_uvarint(head, n)
    head.append(1 if fixed else 0)
    if fixed:
        write_uvarint(head, int(lens[0]))
    len_bytes = 0 if fixed else col.bulk - col.total
    body_bytes = (col.total * cbits + 7) >> 3

    def emit(out: bytearray) -> None:
        buf = np.empty(len_bytes + body_bytes, np.uint8)
        if not fixed:
            sk.write_lens_into(offsets, buf, np.int64(0))
        ak.alpha_pack_into(chars, code, np.int64(cbits), buf[len_bytes:])
        out += head
        out += memoryview(buf)

    col._alpha = _Form("alpha", len(head) + len_bytes + body_bytes, emit)
    return col._alpha


# ------------------------------------------------------------------ raw slab and per-value strings


def _raw(col: _Column) -> _Form:
    head = bytearray((StrColTag.RAW,))
    write_uvarint(head, col.n)
    write_uvarint(head, col.total)

    def emit(out: bytearray) -> None:
        buf = np.empty(col.bulk, np.uint8)
        end = sk.encode_lenprefixed_into(col.data, col.offsets, buf, np.int64(0))
        assert end == col.bulk
        out += head
        out += memoryview(buf)

    return _Form("raw", len(head) + col.bulk, emit)


def _per_value_estimate(col: _Column) -> int:
    """The reference-style estimate of per-value Dense cost: short strings inline, each
    distinct long one interned once (tag + len + bytes), every other long row one byte."""
    lens = col.lens
    short = lens < MIN_INTERN
    est = int(lens[short].sum()) + int(np.count_nonzero(short))  # < 4 bytes: always a fixstr
    d_off, _ = _offsets_data(col.enc.dictionary)
    d_lens = np.diff(d_off)
    d_long = d_lens[d_lens >= MIN_INTERN]
    n_long = col.n - int(np.count_nonzero(short))
    ulen = 1 + (d_long >= 0x80) + (d_long >= 1 << 14) + (d_long >= 1 << 21) + (d_long >= 1 << 28)
    return est + int((ulen + d_long).sum()) + len(d_long) + (n_long - len(d_long))


def _per_value(col: _Column) -> _Form:
    """Per-value strings exactly as ``DenseWriter.write_str`` writes them, sized before emitting.

    The kernel replays the Dense state machine over the column's dictionary codes on
    copies of the writer's state (intern ids, last id, the 128-slot ring, the pair
    predictor); ``emit`` appends the bytes and installs the new state in the writer.
    """
    if col._per_value is not None:
        return col._per_value
    dense = col.dense
    dense.sync()  # the fast encode path may hold the current state in its array form
    enc = col.enc
    dvals = enc.dictionary
    d_off, d_data = _offsets_data(dvals)
    d = len(dvals)
    table = dense.btable if col.binary else dense.table
    next0 = dense.n_ids
    ids = np.full(d, -1, np.int64)
    if dense.dense and table and d:
        large = pa.types.is_large_string(dvals.type) or pa.types.is_large_binary(dvals.type)
        btype = pa.large_binary() if large else pa.binary()
        pos = pc.index_in(dvals.view(btype), value_set=pa.array(list(table), type=btype))
        pos = np.asarray(pos.fill_null(-1), dtype=np.int64)
        hit = pos >= 0
        if hit.any():
            ids[hit] = np.fromiter(table.values(), np.int64, count=len(table))[pos[hit]]
    space = next0 + d
    pair = np.full(space, -1, np.int64)
    if dense.pair_on and dense.pair:
        keys = set(ids[ids >= 0].tolist())
        if dense.last_id >= 0:
            keys.add(dense.last_id)
        for k in keys:
            v = dense.pair.get(k)
            if v is not None:
                pair[k] = v
    touched = np.zeros(space, np.uint8)
    params = np.array([dense.dense, col.binary, dense.pair_on, dense.mtf_on, dense.min_intern, dense.max_entries],
                      np.int64)
    state = np.array([next0, dense.last_id, dense.head], np.int64)
    ring = np.array(dense.ring, np.int64)
    new_k = np.empty(d, np.int64)
    buf = np.empty(col.total + 11 * col.n, np.uint8)
    codes = np.asarray(enc.indices).astype(np.int64)
    size = int(sk.dense_strings_into(codes, d_off, d_data, ids, params, state, ring, pair, touched, new_k, buf))
    if size < 0:  # a value of 4 GiB or more: the Dense writer raises the right error
        col._per_value = _Form("values", 1 << 62, lambda out: _per_value_slow(out, col))
        return col._per_value

    def emit(out: bytearray) -> None:
        out += memoryview(buf)[:size]
        nnew = int(state[0]) - next0
        if nnew:
            new = dvals.take(pa.array(new_k[:nnew]))
            new = new.view(pa.large_binary() if pa.types.is_large_string(new.type) else
                           pa.binary() if pa.types.is_string(new.type) else new.type)
            table.update(zip(new.to_pylist(), range(next0, next0 + nnew)))
            dense.n_ids = next0 + nnew
        dense.ring = ring.tolist()
        dense.head = int(state[2])
        dense.last_id = int(state[1])
        hits = np.flatnonzero(touched)
        if len(hits):
            dense.pair.update(zip(hits.tolist(), pair[hits].tolist()))

    col._per_value = _Form("values", size, emit)
    return col._per_value


def _per_value_slow(out: bytearray, col: _Column) -> None:
    blob = col.data.tobytes()
    bounds = col.offsets.tolist()
    write = col.dense.write_str
    for i in range(col.n):
        write(out, blob[bounds[i] : bounds[i + 1]], binary=col.binary)
