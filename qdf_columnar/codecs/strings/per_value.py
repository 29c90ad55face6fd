"""Per-value strings: M row-major string values through the Dense intern table.

No block tag: a string column body whose first byte is not a StrColTag is M values,
each an inline string or a Dense state tag (intern id, ring slot, pair prediction;
``wire/dense.py``). Later values and later columns depend on the state, so this is the
one form that is not self-contained (Options.CASCADE never writes it).

Writing: a kernel (``qdf_kernels.strings.dense_strings_into``) replays the Dense
writer's state machine over the column's dictionary codes on copies of its state, so
the size is exact before anything is written; ``encode`` appends the bytes and installs
the new state. Reading: a kernel (``qdf_kernels.dense_strings``) reads the run and
replays the reader's state, then the rows are gathered into one slab.

``dense`` is the wire layer's DenseWriter / DenseReader, used through its attributes
(it lives above this layer).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from qdf_kernels import dense_strings as dsk
from qdf_kernels import strings as sk

from ...columns import alloc
from ...errors import CorruptDataError
from ...format.reader import ByteReader
from .unit import HEAD_ROWS, Column, IntCodes, StringSlices, StrPlan, offsets_data

MIN_INTERN = 4  # strings shorter than this are never interned (Go minIntern)
PER_VALUE_HEAD_PCT = 75  # sized outside the reference order when the head is at most this distinct
#: Per-value runs this short are read by the Python reader unless the state is already in array form.
SMALL_RUN = 8
#: ... and so are runs with fewer rows than 1/STATE_PER_ROW of the interned ids.
STATE_PER_ROW = 8


class PerValue:
    name = "values"
    tags: dict[int, str] = {}  # read whenever the first byte is not a block tag
    reference = "per-value strings (Dense)"
    self_contained = False
    compression_only = False

    def gate(self, col: Column) -> StrPlan:
        """The reference order's last resort: always the exact size."""
        return self._sized(col)

    def plan(self, col: Column, to_beat: int | None) -> StrPlan | None:
        """The exact size when already sized, or when the first HEAD_ROWS rows are at most
        75 % distinct (with fewer repeats interning loses to the raw slab and alphabet
        packing, and sizing costs a hash of the whole column) and the floor (a byte a
        row plus the bytes of inline short strings) is below ``to_beat``."""
        if self.name in col.cache or to_beat is None:
            return self._sized(col)
        if col.n < to_beat and col.head_distinct() * 100 <= min(col.n, HEAD_ROWS) * PER_VALUE_HEAD_PCT:
            short = col.lens < col.dense.min_intern
            floor = col.n + int(col.lens[short].sum())  # >= 1 byte a row, short strings inline
            if floor < to_beat:
                return self._sized(col)
        return None

    def _sized(self, col: Column) -> StrPlan:
        """Per-value strings exactly as ``DenseWriter.write_str`` writes them, sized before
        writing; cached on ``col``. ``detail`` appends the bytes and installs the state."""
        if self.name in col.cache:
            return col.cache[self.name]
        dense = col.dense
        dense.sync()  # the fast encode path may hold the current state in its array form
        enc = col.enc
        dvals = enc.dictionary
        d_off, d_data = offsets_data(dvals)
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
        params = np.array([dense.dense, col.binary, dense.pair_on, dense.mtf_on, dense.min_intern,
                           dense.max_entries], np.int64)
        state = np.array([next0, dense.last_id, dense.head], np.int64)
        ring = np.array(dense.ring, np.int64)
        new_k = np.empty(d, np.int64)
        buf = np.empty(col.total + 11 * col.n, np.uint8)
        codes = np.asarray(enc.indices).astype(np.int64)
        size = int(sk.dense_strings_into(codes, d_off, d_data, ids, params, state, ring, pair, touched, new_k, buf))
        if size < 0:  # a value of 4 GiB or more: the Dense writer raises the right error
            plan = col.cache[self.name] = StrPlan(self.name, 1 << 62, lambda out: _write_slow(out, col))
            return plan

        def install(out: bytearray) -> None:
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

        plan = col.cache[self.name] = StrPlan(self.name, size, install)
        return plan

    def encode(self, out: bytearray, col: Column, plan: StrPlan) -> None:
        plan.detail(out)

    def read(self, r: ByteReader, n: int, dense: Any, ints: IntCodes, *, skip: bool = False,
             end: int | None = None) -> StringSlices | list[bytes]:
        """The Dense kernel reads the run and replays the intern state.

        The kernel stops before any row it does not take (anything malformed); that row and
        the rest are then read by :meth:`DenseReader.read_str`, which raises the usual typed
        error from the same state, so both paths decode (and fail) identically. A list of
        bytes is returned when a row needed that Python reader.
        """
        r.need(n, "per-value strings")  # each value takes at least one byte
        if not dense._native and (n <= SMALL_RUN or n * STATE_PER_ROW < len(dense.values)):
            # Switching the state to its array form costs O(interned ids): only for runs long
            # enough to pay for it, so no input can make the switches dominate.
            return [read_str_bytes(r, dense) for _ in range(n)]
        src = r.array()
        starts = np.empty(n, dtype=np.int64)
        lens = np.empty(n, dtype=np.int64)
        done, pos, total = dense.scan_values(src, r.pos, r.end, n, starts, lens)
        r.pos = pos
        if done < n:
            slab = dense.slab
            vals = [(src[s : s + ln] if s >= 0 else slab[-s - 1 : -s - 1 + ln]).tobytes()
                    for s, ln in zip(starts[:done].tolist(), lens[:done].tolist())]
            vals += [read_str_bytes(r, dense) for _ in range(n - done)]
            return vals
        if skip:
            return StringSlices(np.zeros(0, np.uint8), np.zeros(n, np.int64), np.zeros(n, np.int64))
        offsets = alloc.empty(n + 1, np.int64)
        data = alloc.empty(total, np.uint8)
        dsk.dense_gather_into(src, dense.slab, starts, lens, offsets, data)
        sl = StringSlices(data, None, None, offsets=offsets)
        sl.n = n
        return sl


PER_VALUE = PerValue()


def estimate(col: Column) -> int:
    """The reference-style estimate of per-value Dense cost: short strings inline, each
    distinct long one interned once (tag + len + bytes), every other long row one byte."""
    lens = col.lens
    short = lens < MIN_INTERN
    est = int(lens[short].sum()) + int(np.count_nonzero(short))  # < 4 bytes: always a fixstr
    d_off, _ = offsets_data(col.enc.dictionary)
    d_lens = np.diff(d_off)
    d_long = d_lens[d_lens >= MIN_INTERN]
    n_long = col.n - int(np.count_nonzero(short))
    ulen = 1 + (d_long >= 0x80) + (d_long >= 1 << 14) + (d_long >= 1 << 21) + (d_long >= 1 << 28)
    return est + int((ulen + d_long).sum()) + len(d_long) + (n_long - len(d_long))


def read_str_bytes(r: ByteReader, dense: Any) -> bytes:
    """One row-major string/bytes value (inline or Dense state tag) as bytes."""
    at = r.pos
    tag = r.u8("a string tag")
    v = dense.read_str(r, tag)
    if v is None:
        raise CorruptDataError(f"expected a string value, found tag {tag:#04x}", column=r.column, offset=at)
    return v if type(v) is bytes else bytes(v)


def _write_slow(out: bytearray, col: Column) -> None:
    blob = col.data.tobytes()
    bounds = col.offsets.tolist()
    write = col.dense.write_str
    for i in range(col.n):
        write(out, blob[bounds[i] : bounds[i + 1]], binary=col.binary)
