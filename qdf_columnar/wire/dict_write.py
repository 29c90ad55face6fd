"""Dictionary levels: a column of any type and cardinality as integer codes plus a dictionary.

The reference's dictionary blocks stop at 64 distinct integers (``ED``) and 256 distinct
strings (``F5`` / ``FA`` / ``FC``; the Go decoder rejects larger tables) and floats have
none at all, so a column with a few thousand repeating values is coded per row. Here
such a column is written in two v1 pieces (docs/FORMAT.md Part 2 §2.4):

* in the batch's level 0, the column's **codes**: a uint column (nullable where the
  column has nulls), through the integer picker, so codes cascade into FOR, RLE,
  Delta, PFOR or the 64-entry dictionary as their own statistics say;
* a **dictionary level**: one more ``EF`` container after the batch's levels, one
  column of the same name holding the distinct values in sorted order (sorted, so
  integer dictionaries delta-code, string tables front-code and code ranges follow
  value ranges), written with the column kind's own codecs.

The choice is made per column and is never larger: a ~1% sample of whole runs rejects
columns that are mostly distinct without hashing them; for the rest both forms are
encoded in a scratch context and the dictionary form is kept only when it is smaller,
its level's header and the note entry included.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from qdf_kernels import span_dict, string_dict

from ..codecs.sample import run_sample
from ..codecs.strings.unit import offsets_data
from ..columns.buffers import data_values
from ..columns.chunked import one_array
from ..columns.kinds import kind_for
from ..errors import QdfError
from ..format.tags import ColKind, StrColTag
from .colstruct_write import write_body, write_table_columnar
from .numeric_arrow import read_only
from .schema_note import build_note
from .values_write import _write_seq_header as write_seq_header

#: Columns shorter than this stay as they are: a level's header would eat the gain.
MIN_ROWS = 64
#: A sample with more distinct values than this share of its rows skips the column.
#: A sample overstates the distinct share of skewed columns (names, prices, counts: in
#: bench-real's corpus 61-79% distinct in the sample are 10-38% in the whole column),
#: so the gate only spares the trial encode of columns that are nearly all distinct.
MAX_SAMPLE_DISTINCT = 0.8
#: Bytes a dictionary column costs besides its level (written in full by the trial):
#: the array slot and the note entry (``,"dict":[...]`` and the quoted name; the name
#: is counted apart).
LEVEL_OVERHEAD = 12
#: A schema note of its own: the note column's name (prefix and JSON), kind byte,
#: index entry and its 0-bit body.
NOTE_COST = 64

#: Column kinds that can be dictionary-coded (bools are 1 bit already; time columns
#: are two sub-columns; the schema note's own column is never offered).
_KINDS = (ColKind.INT, ColKind.UINT, ColKind.FLOAT64, ColKind.FLOAT32, ColKind.STRING)


@dataclass(frozen=True)
class DictColumn:
    """One column chosen for a dictionary level: its position, codes and sorted values."""

    index: int
    name: str
    codes: pa.Array  # uint64, null where the column is null
    values: pa.Array  # the distinct values, sorted, no nulls
    #: the values' finished body, written by the trial (None: the level writes it)
    level_body: bytes | None = None


@dataclass
class DictionaryPlan:
    """The dictionary columns chosen, and the level-0 bodies the trials already wrote.

    ``bodies`` maps a column name to its finished level-0 body (the codes of a
    dictionary column, the direct body of a column that stayed direct) when that body
    does not depend on the Dense state, so the real write reuses it instead of
    encoding the column a second time.
    """

    columns: list[DictColumn]
    bodies: dict[str, bytes]


def plan_dictionaries(table: pa.Table, ctx_factory) -> DictionaryPlan:
    """The columns of ``table`` whose dictionary form is smaller, in column order.

    ``ctx_factory()`` makes a fresh encode context: trial encodes never touch the
    real buffer's Dense state.
    """
    plan = DictionaryPlan([], {})
    if table.num_rows < MIN_ROWS:
        return plan
    # The first dictionary column of a batch that had no schema note pays for one.
    note_cost = 0 if _has_note(table) else NOTE_COST
    for i, (name, col) in enumerate(zip(table.column_names, table.columns)):
        arr = one_array(col)
        try:
            kind = kind_for(name, arr.type)
        except QdfError:
            continue
        if kind not in _KINDS or not _eligible_type(arr.type) or arr.null_count >= len(arr) - 1:
            continue
        # A string column's hash encoding serves both trials: its dictionary level and its
        # direct body's dictionary forms (7 ms a column of 372k rows, Birthdays' state).
        strings_enc = None
        try:
            if not _sample_repeats(arr):
                continue
            if kind == ColKind.STRING and _hashable(arr) is arr:
                strings_enc = string_dictionary(arr)
            cand = dictionary_of(arr, strings_enc)
        except (pa.ArrowNotImplementedError, pa.ArrowTypeError):
            cand = None  # a type the hash / sort kernels lack: the column stays direct
        if cand is None:
            continue
        codes, values = cand
        codes_body = _body(codes, ColKind.UINT, ctx_factory)
        level_size, level_body = _level(name, values, ctx_factory)
        # The dictionary form first: the direct body is kept only when no larger than it,
        # so forms that cannot be are not tried (FSST on a column whose codes and level
        # are smaller than its bytes: Birthdays' dates, flights' tail numbers).
        dict_cost = len(codes_body) + level_size + note_cost
        direct = _body(arr, kind, ctx_factory, strings_enc, limit=dict_cost + 1)
        if dict_cost < len(direct):
            plan.columns.append(DictColumn(i, name, codes, values, level_body))
            plan.bodies[name] = bytes(codes_body)
            note_cost = 0
        elif _stateless(direct, kind, arr.null_count > 0, len(arr)):
            plan.bodies[name] = bytes(direct)
    return plan


def _has_note(table: pa.Table) -> bool:
    kinds = []
    for name, f in zip(table.column_names, table.schema):
        try:
            kinds.append(kind_for(name, f.type))
        except QdfError:
            return True  # residual or refused: not a batch this plan changes
    return build_note(table, kinds) is not None


def _stateless(body: bytearray, kind: int, nullable: bool, n: int) -> bool:
    """Whether a body reads the same whatever the Dense state: numbers always, strings
    when written as a string-column block rather than per-value Dense strings."""
    if kind != ColKind.STRING:
        return True
    at = (n + 7) // 8 if nullable else 0
    return at < len(body) and body[at] in _BLOCK_TAGS


_BLOCK_TAGS = frozenset(int(t) for t in StrColTag)


def _eligible_type(t: pa.DataType) -> bool:
    return (pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_string(t)
            or pa.types.is_large_string(t) or pa.types.is_binary(t) or pa.types.is_large_binary(t)
            or pa.types.is_date(t) or pa.types.is_time(t) or pa.types.is_duration(t))


def _sample_repeats(arr: pa.Array) -> bool:
    """Whether a sample of whole runs repeats values often enough to try a dictionary."""
    idx = run_sample(len(arr))
    sample = arr.take(pa.array(idx)) if idx is not None else arr
    present = len(sample) - sample.null_count
    if present == 0:
        return False
    return pc.count_distinct(_hashable(sample)).as_py() <= MAX_SAMPLE_DISTINCT * present


def _hashable(arr: pa.Array) -> pa.Array:
    """``arr`` with floats as their bit patterns (0.0 and -0.0, NaN payloads stay apart)
    and temporal values as their integer storage."""
    t = arr.type
    if pa.types.is_floating(t):
        return arr.view({16: pa.uint16(), 32: pa.uint32(), 64: pa.uint64()}[t.bit_width])
    if pa.types.is_date(t) or pa.types.is_time(t) or pa.types.is_duration(t):
        return arr.view(pa.int32() if t.bit_width == 32 else pa.int64())
    return arr


#: A column of integers (or integral floats) spanning at most this many values, or four
#: times its length if more, finds its distinct values with a presence table instead of
#: a hash table: one pass, no sort (3-5x faster on bench-real's int and float columns).
SMALL_SPAN = 1 << 16


def dictionary_of(arr: pa.Array, enc: pa.DictionaryArray | None = None) -> tuple[pa.Array, pa.Array] | None:
    """(uint64 codes, sorted distinct values) of ``arr``, or None when it is mostly distinct.
    ``enc``: ``arr.dictionary_encode()`` when the caller has it already."""
    small = _small_span_dictionary(arr)
    return _hashed_dictionary(arr, enc) if small is NOT_SMALL else small


#: What :func:`_small_span_dictionary` says of a column it does not take.
NOT_SMALL = object()


def _small_span_dictionary(arr: pa.Array) -> Any:
    """:func:`_hashed_dictionary`'s exact result (null rows' codes included: the code of
    the first present value, as the hash path fills them; None when mostly distinct) for
    integers, and floats that are all whole numbers (no NaN, no -0.0), spanning few
    values; NOT_SMALL for any other column. The table and the codes come from
    ``qdf_kernels.span_dict``."""
    t = arr.type
    is_float = pa.types.is_float32(t) or pa.types.is_float64(t)
    if pa.types.is_floating(t) and not is_float:
        return NOT_SMALL  # float16: its bit patterns do not sort as its values
    keys = _hashable(arr)
    if not pa.types.is_integer(keys.type) or keys.buffers()[1] is None or len(arr) == arr.null_count:
        return NOT_SMALL
    raw = data_values(keys)
    key_dtype = raw.dtype
    unsigned = not is_float and key_dtype == np.uint64  # its int64 view; the kernel declines values >= 2**63
    if is_float:
        kv = raw.view(np.dtype(t.to_pandas_dtype())).astype(np.float64, copy=False)
    else:
        kv = raw.view(np.int64) if unsigned else raw.astype(np.int64, copy=False)
    kv = read_only(kv)
    nullable = arr.null_count > 0
    bitmap = _validity_bytes(arr)
    off = np.int64(arr.offset)
    bounds = np.empty(2, dtype=np.int64)
    present = int(span_dict.span_bounds(kv, bitmap, off, nullable, unsigned, is_float, bounds))
    if present == span_dict.NOT_KEYS:
        return NOT_SMALL  # NaN, an infinity, a fraction, a huge value or -0.0: the hash path keeps their bits
    lo, hi = int(bounds[0]), int(bounds[1])
    if hi - lo > max(SMALL_SPAN, 4 * len(arr)):
        return NOT_SMALL
    rank = np.zeros(hi - lo + 1, dtype=np.int32)
    codes = np.empty(len(arr), dtype=np.uint64)
    d = int(span_dict.span_codes(kv, bitmap, off, nullable, np.int64(lo), rank, codes))
    if d > present // 2:
        return None
    distinct = np.flatnonzero(rank).astype(np.int64) + lo
    if is_float:
        values = pa.array(distinct.astype(np.dtype(t.to_pandas_dtype())), type=t)
    else:
        values = pa.array(distinct.astype(key_dtype), type=keys.type)
        values = values.view(t) if keys.type != t else values
    if not nullable:
        return pa.array(codes, type=pa.uint64()), values
    if arr.offset == 0:  # the column's own validity bitmap fits the codes as it is
        return pa.Array.from_buffers(pa.uint64(), len(arr), [arr.buffers()[0], pa.py_buffer(codes)],
                                     null_count=arr.null_count), values
    return pa.array(codes, type=pa.uint64(), mask=np.asarray(arr.is_null())), values


_NO_BITMAP = np.zeros(1, dtype=np.uint8)


def _validity_bytes(arr: pa.Array) -> np.ndarray:
    """The bytes of ``arr``'s validity bitmap as the trial's kernels take them (read-only;
    a one-byte stand-in when the column has no nulls, which the kernels then never read)."""
    return read_only(np.frombuffer(arr.buffers()[0], dtype=np.uint8) if arr.null_count else _NO_BITMAP)


def _hashed_dictionary(arr: pa.Array, enc: pa.DictionaryArray | None = None) -> tuple[pa.Array, pa.Array] | None:
    limit = (len(arr) - arr.null_count) // 2  # more distinct values than this: no dictionary
    if enc is None:
        keyed = _first_seen_ids(arr, limit)
        if keyed is None:
            enc = pc.dictionary_encode(_hashable(arr))
        elif keyed is _TOO_MANY:
            return None
    if enc is not None:
        dictionary = enc.dictionary
        indices = enc.indices
        ids = np.asarray(indices.fill_null(0) if indices.null_count else indices, dtype=np.int64)
    else:
        dictionary, ids = keyed
    d = len(dictionary)
    if d == 0 or d > limit:
        return None
    values = dictionary.view(arr.type) if dictionary.type != arr.type else dictionary
    if pa.types.is_floating(arr.type):  # numpy sorts every float width, NaN last
        order = np.argsort(values.to_numpy(zero_copy_only=False), kind="stable")
    else:
        order = np.asarray(pc.array_sort_indices(values), dtype=np.int64)
    rank = np.empty(d, dtype=np.uint64)
    rank[order] = np.arange(d, dtype=np.uint64)
    codes = rank[ids]
    mask = np.asarray(arr.is_null()) if arr.null_count else None
    return pa.array(codes, type=pa.uint64(), mask=mask), values.take(pa.array(order))


_TOO_MANY = object()


def string_dictionary(arr: pa.Array) -> pa.DictionaryArray:
    """``arr.dictionary_encode()`` of a string or binary column (the same indices, null at
    null rows, and the same dictionary in first-seen order), hashed by
    ``qdf_kernels.string_dict.string_ids``; other types go to Arrow."""
    t = arr.type
    if not (pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t)
            or pa.types.is_large_binary(t)) or len(arr) == 0:
        return arr.dictionary_encode()
    bufs = arr.buffers()
    offsets, data = offsets_data(arr)
    offsets = read_only(offsets)
    nullable = arr.null_count > 0
    bitmap = _validity_bytes(arr)
    ids = np.empty(len(arr), dtype=np.int32)
    first = string_dict.string_ids(offsets, data, bitmap, np.int64(arr.offset), nullable, ids)
    if not nullable or arr.offset == 0:  # the column's own validity bitmap fits the indices as it is
        indices = pa.Array.from_buffers(pa.int32(), len(arr), [bufs[0] if nullable else None, pa.py_buffer(ids)],
                                        null_count=arr.null_count)
    else:
        indices = pa.array(ids, mask=np.asarray(arr.is_null()))
    # every id is below the number of distinct values: no check pass over the indices
    return pa.DictionaryArray.from_arrays(indices, arr.take(pa.array(first)), safe=False)


def _first_seen_ids(arr: pa.Array, limit: int) -> Any:
    """(distinct values in first-seen order as an array of ``_hashable(arr)``'s type, each
    row's index into them: 0 at null rows) of a fixed-width integer-keyed column, what
    ``pc.dictionary_encode`` answers, from ``qdf_kernels.span_dict.hash_ids``;
    _TOO_MANY when it has more than ``limit`` distinct values; None for other columns
    (strings, binary, decimals, bool), which keep Arrow's hashing."""
    keys = _hashable(arr)
    t = keys.type
    if not pa.types.is_integer(t) or keys.buffers()[1] is None or len(keys) == keys.null_count:
        return None
    raw = data_values(keys)
    kv = read_only(raw.view(np.uint64) if raw.dtype.itemsize == 8 else raw.astype(np.uint64))
    nullable = arr.null_count > 0
    bitmap = _validity_bytes(arr)
    ids = np.empty(len(arr), dtype=np.int64)
    seen = np.empty(max(limit, 0), dtype=np.uint64)
    d = int(span_dict.hash_ids(kv, bitmap, np.int64(arr.offset), nullable, np.int64(limit), ids, seen))
    if d == span_dict.TOO_MANY:
        return _TOO_MANY
    # Back to the keys' own width (a negative int32 widened to uint64 narrows exactly).
    distinct = seen[:d].astype(np.dtype(f"u{raw.dtype.itemsize}"), copy=False).view(raw.dtype)
    return pa.array(distinct, type=t), ids


def _body(arr: pa.Array, kind: int, ctx_factory, strings_enc: pa.DictionaryArray | None = None,
          limit: int | None = None) -> bytearray:
    body = bytearray()
    write_body(body, arr, kind, arr.null_count > 0, ctx_factory(), strings_enc=strings_enc, limit=limit)
    return body


def _level(name: str, values: pa.Array, ctx_factory) -> tuple[int, bytes | None]:
    """(bytes the dictionary level and its note entry add, the level written in full;
    the values' body when it does not depend on the Dense state, for the real write to
    reuse instead of coding the values again: an FSST table trains once, not twice)."""
    kind = kind_for(name, values.type)
    body = bytearray()
    write_body(body, values, kind, False, ctx_factory())
    done = bytes(body) if _stateless(body, kind, False, len(values)) else None
    level = bytearray()
    write_table_columnar(level, dictionary_level(name, values), ctx_factory(),
                         bodies=None if done is None else {name: done})
    return len(level) + LEVEL_OVERHEAD + len(name.encode("utf-8")), done


def dictionary_level(name: str, values: pa.Array) -> pa.Table:
    """The one-column table a dictionary level holds."""
    return pa.table({name: values})


def with_codes(table: pa.Table, dicts: list[DictColumn]) -> pa.Table:
    """``table`` with each dictionary column replaced by its codes (level 0's columns)."""
    for dc in dicts:
        table = table.set_column(dc.index, dc.name, dc.codes)
    return table


def note_entry(dicts: list[DictColumn]) -> list[str]:
    """Level 0's note entry ``"dict"``: the dictionary columns, in dictionary-level order."""
    return [dc.name for dc in dicts]


def write_dictionary_batch(out: bytearray, table: pa.Table, plan: DictionaryPlan, ctx) -> None:
    """Append a flat batch with dictionary columns: ``[EF level 0, dictionary levels...]``."""
    dicts = plan.columns
    write_seq_header(out, 1 + len(dicts))
    # Dictionary levels exist only under CASCADE, whose string bodies are all blocks.
    write_table_columnar(out, with_codes(table, dicts), ctx, note_extra={"dict": note_entry(dicts), "indep": True},
                         bodies=plan.bodies)
    write_dictionary_levels(out, dicts, ctx)


def write_dictionary_levels(out: bytearray, dicts: list[DictColumn], ctx) -> None:
    """Append the dictionary levels, one ``EF`` per dictionary column, in note order."""
    for dc in dicts:
        bodies = {dc.name: dc.level_body} if dc.level_body is not None else None
        write_table_columnar(out, dictionary_level(dc.name, dc.values), ctx, bodies=bodies)


__all__ = ["DictColumn", "DictionaryPlan", "plan_dictionaries", "dictionary_of", "with_codes", "note_entry",
           "write_dictionary_batch", "write_dictionary_levels", "MIN_ROWS"]
