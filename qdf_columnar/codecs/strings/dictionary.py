"""String dictionaries: F5 ColStrDict, FA ColStrDictFC (front-coded table), FC ColStrDictQ
(QPack-coded indices). One unit: the three forms share the table and its codes.

Layouts after the tag (docs/FORMAT.md): F5 is ``uvarint(d in 2..256)``, d x
(``uvarint(len)``, bytes) in first-seen order, ``uvarint(n)``, the ceil(log2 d)-bit
indices LSB-first; FA is the same with the table sorted and front-coded (``uvarint(d)``,
d x (``uvarint(prefix)``, ``uvarint(suffixLen)``, suffix)) and the indices into the
sorted table; FC is F5's table followed by the indices as one QPack integer payload.

Never more than 256 entries: the Go decoder rejects larger tables. The reference's gate
(:meth:`Dictionary.gate`) has one deliberate difference, the 129..256-distinct case
(:func:`_per_value_floor`). Codes stay packed (F5 / FA) or in their QPack payload (FC)
until a caller needs them: :class:`.slices.StringSlices` checks each against the table.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from qdf_kernels import strings as sk
from qdf_kernels._status import ERR_OVERFLOW, ERR_TRUNCATED

from ...format.reader import ByteReader
from ...format.tags import StrColTag
from ...format.varint import uvarint_len, write_uvarint
from .bits import bits_for_distinct, pack_bits
from .unit import HEAD_ROWS, MIN_ROWS, SAMPLE, Column, IntCodes, StringSlices, StrPlan, high_cardinality_sample

DICT_MAX_DISTINCT = 256


def _common_prefix(a: bytes, b: bytes) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


class _Dict:
    """A column's first-seen dictionary (2..256 values), its packed-index facts and,
    computed once when first asked for, the front-coded table and the QPack index."""

    __slots__ = ("values", "idx", "d", "bits", "body_bytes", "plain", "n", "ints", "_fc", "_qbuf", "_plans")

    def __init__(self, values: list[bytes], idx: np.ndarray, n: int, ints: IntCodes) -> None:
        self.values = values
        self.idx = idx
        self.n = n
        self.ints = ints
        self.d = len(values)
        self.bits = bits_for_distinct(self.d)
        self.body_bytes = (n * self.bits + 7) >> 3
        self.plain = sum(uvarint_len(len(v)) + len(v) for v in values)
        self._fc: tuple[bytearray, list[int]] | None = None
        self._qbuf: bytearray | None = None
        self._plans: dict[int, StrPlan] = {}

    @property
    def fc(self) -> tuple[bytearray, list[int]]:
        if self._fc is None:
            self._fc = _front_coded_table(self.values)
        return self._fc

    @property
    def qbuf(self) -> bytearray:
        if self._qbuf is None:
            self._qbuf = bytearray()
            self.ints.encode(self._qbuf, self.idx)
        return self._qbuf

    def plan(self, tag: int) -> StrPlan:
        """The F5 / FA / FC block's exact size; ``detail`` is the tag."""
        plan = self._plans.get(tag)
        if plan is None:
            n = self.n
            if tag == StrColTag.DICT_FC:
                size = 1 + len(self.fc[0]) + uvarint_len(n) + self.body_bytes
            elif tag == StrColTag.DICT_Q:
                size = 1 + uvarint_len(self.d) + self.plain + len(self.qbuf)
            else:
                size = 1 + uvarint_len(self.d) + self.plain + uvarint_len(n) + self.body_bytes
            plan = self._plans[tag] = StrPlan(DICTIONARY.name, size, int(tag))
        return plan


def _parts(col: Column) -> _Dict | None:
    """The column's dictionary facts (cached), or None outside 2..256 distinct values."""
    if DICTIONARY.name not in col.cache:
        table = col.enc.dictionary
        d = len(table)
        if d < 2 or d > DICT_MAX_DISTINCT:
            col.cache[DICTIONARY.name] = None
        else:
            values = [v.encode("utf-8") if isinstance(v, str) else bytes(v) for v in table.to_pylist()]
            col.cache[DICTIONARY.name] = _Dict(values, np.asarray(col.enc.indices).astype(np.uint64), col.n, col.ints)
    return col.cache[DICTIONARY.name]


class Dictionary:
    name = "dict"
    tags = {int(StrColTag.DICT): "ColStrDict", int(StrColTag.DICT_FC): "ColStrDictFC",
            int(StrColTag.DICT_Q): "ColStrDictQ"}
    self_contained = True
    compression_only = False

    def gate(self, col: Column) -> StrPlan | None:
        """The reference's dictionary gate and form choice (FA, else FC, else F5)."""
        n = col.n
        if n < MIN_ROWS:
            return None
        if n >= SAMPLE and high_cardinality_sample(col.arr, n):
            return None
        dp = _parts(col)
        if dp is None:
            return None
        overhead = 1 + uvarint_len(dp.d) + uvarint_len(n)
        if dp.body_bytes + overhead >= n and dp.body_bytes + overhead >= _per_value_floor(dp.idx, dp.values):
            return None
        gp = len(dp.values[0])
        for v in dp.values[1:]:
            gp = _common_prefix(dp.values[0][:gp], v)
        if gp >= 2 and len(dp.fc[0]) - uvarint_len(dp.d) < dp.plain:
            return dp.plan(StrColTag.DICT_FC)
        if len(dp.qbuf) < dp.body_bytes:
            return dp.plan(StrColTag.DICT_Q)
        return dp.plan(StrColTag.DICT)

    def plan(self, col: Column, to_beat: int | None) -> StrPlan | None:
        """The smallest of F5 / FA / FC whenever there are 2..256 distinct values (ties:
        FA, FC, F5); the first HEAD_ROWS rows are checked before hashing the column."""
        if col.n > HEAD_ROWS and col.head_distinct() > DICT_MAX_DISTINCT:
            return None
        dp = _parts(col)
        if dp is None:
            return None
        best = dp.plan(StrColTag.DICT_FC)
        for tag in (StrColTag.DICT_Q, StrColTag.DICT):
            plan = dp.plan(tag)
            if plan.cost < best.cost:
                best = plan
        return best

    def encode(self, out: bytearray, col: Column, plan: StrPlan) -> None:
        dp = _parts(col)
        assert dp is not None
        if plan.detail == StrColTag.DICT_FC:
            out += _dict_fc_block(dp, dp.fc, dp.n)
        elif plan.detail == StrColTag.DICT_Q:
            out += _dict_block(StrColTag.DICT_Q, dp, dp.qbuf)
        else:
            out += _dict_block(StrColTag.DICT, dp, None)

    def read(self, r: ByteReader, n: int, dense: Any, ints: IntCodes, *, skip: bool = False,
             end: int | None = None) -> StringSlices:
        src = r.array()
        tag = r.u8("a string column")
        start = r.pos
        d = r.uvarint("dictionary size")
        if d < 2 or d > DICT_MAX_DISTINCT:
            raise r.corrupt(f"dictionary size {d} is outside 2..256", start)
        packed = None
        if tag == StrColTag.DICT_FC:
            src, ts, tl = _read_front_coded(r, d)
            packed = _read_codes(r, n, d)
        else:
            ts, tl = _scan_table(r, d)
            if tag == StrColTag.DICT:
                packed = _read_codes(r, n, d)
            else:
                # Codes that stay packed (FOR) or in runs (long RLE runs) are checked when
                # decoded; the others are decoded and checked now, as before.
                at = r.pos
                payload = ints.scan(r, n)
        sl = StringSlices(src, None, None, table_starts=ts, table_lens=tl)
        sl.n = n
        if packed is not None:
            sl.packed = packed
        elif payload.decoded:
            sl._codes = sl._checked(payload.values(), r.pos, r.column)
        else:
            sl.payload = (payload, at, r.column)
        return sl


DICTIONARY = Dictionary()


# ------------------------------------------------------------------ writing


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


# ------------------------------------------------------------------ reading


def _scan_table(r: ByteReader, d: int) -> tuple[np.ndarray, np.ndarray]:
    starts = np.empty(d, dtype=np.int64)
    lens = np.empty(d, dtype=np.int64)
    pos = sk.scan_lenprefixed_into(r.array(), np.int64(r.pos), np.int64(r.end), starts, lens)
    if pos < 0:
        if pos == ERR_TRUNCATED:
            raise r.truncated("a string table", 1)
        raise r.corrupt("malformed length in a string table")
    r.pos = int(pos)
    return starts, lens


def _read_codes(r: ByteReader, n: int, d: int) -> tuple[np.ndarray, int]:
    start = r.pos
    n2 = r.uvarint("dictionary row count")
    if n2 != n:
        raise r.corrupt(f"dictionary block holds {n2} rows, the container declares {n}", start)
    bits = bits_for_distinct(d)
    nbytes = (n * bits + 7) >> 3
    return r.take_array(nbytes, "dictionary indices"), bits


def _read_front_coded(r: ByteReader, d: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rebuild a front-coded table into a fresh byte buffer; return (buffer, starts, lens)."""
    prefix, suffix_at, lens = (np.empty(d, dtype=np.int64) for _ in range(3))
    # An entry may repeat its predecessor for two bytes of wire, so the rebuilt table is
    # bounded by the decoder's output cap rather than by the bytes left.
    cap = max(1 << 28, 64 * r.remaining)
    pos = sk.front_coded_scan(r.array(), np.int64(r.pos), np.int64(r.end), prefix, suffix_at, lens, np.int64(cap))
    if pos < 0:
        if pos == ERR_TRUNCATED:
            raise r.truncated("a front-coded dictionary table", 1)
        if pos == ERR_OVERFLOW:
            raise r.corrupt(f"front-coded dictionary table rebuilds to more than {cap} bytes")
        raise r.corrupt("front-coded table: a prefix is longer than the previous entry, or a bad varint")
    starts = np.zeros(d, dtype=np.int64)
    if d:
        np.cumsum(lens[:-1], out=starts[1:])
    blob = np.empty(int(lens.sum()) if d else 0, dtype=np.uint8)
    sk.front_coded_build(r.array(), prefix, suffix_at, lens, starts, blob)
    r.pos = int(pos)
    return blob, starts, lens
