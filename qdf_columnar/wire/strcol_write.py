"""Write the body of a string column: the string picker (qdf-wire-v1.md §3.3).

Each form is a unit of :mod:`qdf_columnar.codecs.strings`, registered in
:mod:`qdf_columnar.codecs.registry`; this module holds only the picking rules and
goes through the registry's lists.

**The reference order** (:func:`_reference_order` over ``STRING_REFERENCE_ORDER``, the
reference's ``writeStringColumn``): the first form whose gate passes wins:

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
(:func:`_smallest` over ``STRING_CANDIDATES``), so a string column is never larger
than the reference-order choice nor than its F8 form:

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
(:func:`qdf_columnar.codecs.fsst.fsst_block`); FSST is the one ``compression_only``
unit. So a string column is never larger in compression mode than in balanced mode
(given the same Dense state).

Per-value sizes depend on the Dense state left by earlier columns, so "never larger"
is per column given the same state; a column whose strings repeat an earlier column's
can differ when that earlier column took another form.
An empty column writes nothing.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from ..codecs.qpack import INT_CODES
from ..codecs.registry import STRING_BY_NAME, STRING_CANDIDATES, STRING_REFERENCE_ORDER
from ..codecs.strings.fsst import FSST
from ..codecs.strings.slab import SLAB
from ..codecs.strings.unit import Column, StringCodec, StrPlan


def write_string_column(out: bytearray, arr: pa.Array, dense: Any, *, fsst: bool = False,
                        independent: bool = False, enc: pa.DictionaryArray | None = None,
                        limit: int | None = None) -> str:
    """Append the body of a string column (no nulls in ``arr``); return the form's name.

    ``independent`` (Options.CASCADE) leaves out per-value strings: every form left is
    a self-contained block, so the body neither reads nor changes the Dense intern
    state and a reader seeks past it (the column index gives its length).
    ``enc``: ``arr.dictionary_encode()`` (first-seen order), when the caller has it.
    ``limit``: the caller keeps the body only when it is shorter than this many bytes;
    FSST is not trained when its lower bound shows it cannot be, and its encode stops
    once past it. Whenever some form is shorter than ``limit``, the body is the one
    written without it: a candidate left out could not have been chosen.
    """
    if len(arr) == 0:
        return "empty"
    col = Column(arr, dense, INT_CODES, enc)
    plan = _self_contained(col, fsst=fsst, limit=limit) if independent else _smallest(col, fsst=fsst, limit=limit)
    STRING_BY_NAME[plan.codec].encode(out, col, plan)
    return plan.codec


def _reference_order(col: Column) -> StrPlan:
    """The first registered form whose reference gate passes (per-value strings' always does)."""
    for unit in STRING_REFERENCE_ORDER:
        plan = unit.gate(col)
        if plan is not None:
            return plan
    raise AssertionError("the reference order ends with a form whose gate always passes")


def _plan(unit: StringCodec, col: Column, best: StrPlan, limit: int | None) -> StrPlan | None:
    """``unit``'s plan against the best form so far. The caller's ``limit`` reaches FSST
    only, as a cap on its encode: its held-out projection is an estimate, and judged
    against a bound that moves with ``limit`` it could drop a block the call without
    ``limit`` keeps. The other forms are sized exactly and cheaply, limit or not, so the
    best so far, and every choice, is the same with and without it."""
    if unit is FSST:
        return FSST.plan(col, best.cost, cap=limit)
    return unit.plan(col, best.cost)


def _smallest(col: Column, *, fsst: bool, limit: int | None = None) -> StrPlan:
    """The smallest exact-size form; ties keep the reference-order choice, then the
    earlier candidate.

    Each unit sizes itself only when a cheap lower bound leaves it a chance against the
    best so far (alphabet packing needs at least a bit per character, the raw slab a
    length byte per row plus the bytes, per-value strings a byte per row plus the
    inline short strings, FSST its own bound and projection).
    """
    best = _reference_order(col)
    for unit in STRING_CANDIDATES:
        if unit.compression_only and not fsst:
            continue
        plan = _plan(unit, col, best, limit)
        if plan is not None and plan.cost < best.cost:
            best = plan
    return best


def _self_contained(col: Column, *, fsst: bool, limit: int | None = None) -> StrPlan:
    """The smallest self-contained form (never per-value strings), starting from the raw
    slab; a later candidate also replaces the best on a tie (dictionary over the slab,
    alphabet packing over both), as the CASCADE picker always has."""
    best = SLAB.plan(col, None)
    assert best is not None  # the slab has no gate
    for unit in STRING_CANDIDATES:
        if unit is SLAB or not unit.self_contained or (unit.compression_only and not fsst):
            continue
        plan = _plan(unit, col, best, limit)
        if plan is not None and plan.cost <= best.cost:
            best = plan
    return best
