"""Read a shredded batch (``[EF level 0, EF level 1, ...]``) back into nested Arrow columns.

Level 0's schema note names the plan (:mod:`qdf_columnar.codecs.nested.plan`); every
level's column names must match it, so a buffer from another writer that merely looks
alike is not misread. Select decodes only the slots of the columns asked for (other bodies are
seeked past with the column index, or walked without materialising); Where runs on
level 0's flat columns exactly as on a plain ``EF`` batch, and nested columns are then
taken at the surviving rows.
"""

from __future__ import annotations

from collections.abc import Callable, Container

import pyarrow as pa

from ..codecs.nested.plan import Plan, assemble
from ..codecs.nested.unit import Node, Slot
from ..errors import CorruptDataError, DecodeError, QdfError, QueryError
from ..format.reader import ByteReader
from ..format.tags import HEADER_SIZE, ContainerTag, Tag
from ..query import validate
from ..query.prune import select_rows
from .colstruct_read import ColStructHeader, read_header, scan_level
from .dict_read import DictionaryColumn, DictionaryLevel, check_dictionary_columns, read_dictionary_levels
from .parallel import RowSelection, check_rows, materialize


def shredded_levels(r: ByteReader) -> int:
    """The level count if the root is an array whose first element is an EF container, else 0."""
    tag = r.peek("the root value")
    if Tag.FIXARR <= tag <= Tag.FIXARR | 0x1F:
        n, width = tag & 0x1F, 1
    elif tag in (Tag.ARR16, Tag.ARR32):
        width = 3 if tag == Tag.ARR16 else 5
        if r.remaining < width:
            return 0
        n = int.from_bytes(r.buf[r.pos + 1 : r.pos + width], "little")
    else:
        return 0
    if n < 1 or r.remaining <= width or r.buf[r.pos + width] != ContainerTag.COL_STRUCT:
        return 0
    r.pos += width + 1
    return n


def open_shredded(r: ByteReader, ctx) -> tuple[ColStructHeader, int] | None:
    """(level 0's header, level count) when ``r`` is at the root of a shredded batch, else
    None (``r`` and ``ctx`` then hold partial state: start over for another reading)."""
    n_levels = shredded_levels(r)
    if not n_levels:
        return None
    try:
        h0 = read_header(r, ctx)
    except DecodeError:
        return None  # not ours: the row-major reader says what is wrong
    return (h0, n_levels) if h0.shred is not None or h0.dicts is not None else None


def is_shredded(plain: bytes | memoryview, flags: int) -> bool:
    """Whether a plain v1 buffer (entropy pass undone) holds a shredded batch."""
    from .context import DecodeContext

    return open_shredded(ByteReader(plain, HEADER_SIZE), DecodeContext(flags=flags)) is not None


def build_plan(h0: ColStructHeader, n_levels: int) -> tuple[Plan, dict[str, Node]]:
    """The encoder's plan, rebuilt from level 0's note, checked against the level-0 header.

    ``n_levels`` counts the plan's levels (dictionary levels excluded). A batch with
    dictionary levels but no nested columns has a one-level plan of flat columns.
    """
    layout = h0.shred if h0.shred is not None else [(c.name, None, None) for c in h0.columns]
    plan = Plan([n for n, t, _ in layout if t is None], {n: keys for n, _, keys in layout if keys})
    nodes: dict[str, Node] = {}
    try:
        for name, typ, _ in layout:
            nodes[name] = plan.flat(name) if typ is None else plan.add(name, typ)
    except ValueError as exc:
        raise CorruptDataError(f"shredded batch: {exc}") from None
    if len(plan.levels) != n_levels:
        raise CorruptDataError(f"shredded batch has {n_levels} levels, its schema note describes {len(plan.levels)}")
    _check_names(h0, plan.levels[0], 0)
    return plan, nodes


def _check_names(h: ColStructHeader, slots: list[Slot], level: int) -> None:
    names = h.names
    if names != [s.name for s in slots]:
        raise CorruptDataError(
            f"shredded level {level} has columns {names}, the schema note expects {[s.name for s in slots]}"
        )


def node_slots(node: Node) -> list[Slot]:
    out = [node.slot] if node.slot is not None else []
    for c in node.children:
        out += node_slots(c)
    return out


def shredded_arrays(
    r: ByteReader, ctx, h0: ColStructHeader, n_levels: int, columns: list[str] | None, expr,
    *, copy: bool, threads, index_columns: Callable[[bytes | None, list[str]], list[str]],
    categories: list[str] | bool | None = None, rows: RowSelection | None = None, filter_form: bool = False,
    widen: Container[str] = (),
) -> tuple[dict[str, pa.Array], int]:
    """Decode a batch of levels (shredded nested columns, dictionary levels) whose
    level-0 header ``h0`` was just read: (column -> array, row count); the batch's
    schema metadata is ``h0.metadata``. ``categories`` names the dictionary columns
    to return as Arrow dictionary arrays (``True``: every string one); ``filter_form``
    returns flat columns in the form filters evaluate on (``Deferred.for_filter``);
    the dictionary columns named in ``widen`` decode their strings as ``large_string``
    (see :func:`.colstruct_read.widen_strings`; level 0's flat columns are the caller's)."""
    dict_names = h0.dicts or []
    plan, nodes = build_plan(h0, n_levels - len(dict_names))
    top = list(nodes)
    check_dictionary_columns(h0, [n for n in top if not nodes[n].children])
    proj = top if columns is None else columns
    missing = [c for c in proj if c not in nodes]
    if missing:
        raise QueryError(f"unknown column {missing[0]!r}; the batch has columns {top}", column=missing[0])
    flat_kinds = h0.logical_schema()
    if expr is not None and not dict_names:
        validate(expr, {n: ("nested" if nodes[n].children else flat_kinds[n]) for n in top})
    idx = index_columns(h0.pandas_metadata, top) if columns is not None else []
    proj_all = proj + [c for c in idx if c not in proj]
    wanted: list[set[str]] = [set() for _ in plan.levels]
    for c in proj_all:
        if nodes[c].children:
            for s in node_slots(nodes[c]):
                wanted[s.level].add(s.name)
    names0 = sorted(wanted[0])  # level-0 slots of the nested columns asked for
    flat_out = [c for c in proj_all if not nodes[c].children]
    wanted[0] |= set(flat_out)
    if expr is not None:
        wanted[0] |= set(expr.columns())

    scanned0 = _scan(r, h0, ctx, wanted[0], copy, h0.independent)
    levels = [dict(zip(names0, materialize([scanned0[n] for n in names0], None, h0.n_rows, threads,
                                                   last_use=True)))]
    level_rows = [h0.n_rows]
    for k in range(1, len(plan.levels)):
        at = r.pos
        if r.u8(f"shredded level {k}") != ContainerTag.COL_STRUCT:
            raise CorruptDataError(f"shredded level {k} is not a columnar container", offset=at)
        hk = read_header(r, ctx)
        if hk.shred is not None:
            raise CorruptDataError(f"shredded level {k} carries a layout of its own", offset=at)
        _check_names(hk, plan.levels[k], k)
        scanned = _scan(r, hk, ctx, wanted[k], copy, h0.independent)
        names = sorted(wanted[k])
        # The keys of a map split by key are taken in dictionary form when their block is
        # a dictionary: the split needs their codes, and the strings are one take away.
        makers = [scanned[n].for_filter_all if (k, n) in plan.split_key_slots else scanned[n] for n in names]
        levels.append(dict(zip(names, materialize(makers, None, hk.n_rows, threads, last_use=True))))
        level_rows.append(hk.n_rows)
    if dict_names:
        dict_levels = read_dictionary_levels(r, ctx, dict_names, wanted[0], copy=copy,
                                             independent=h0.independent, widen=widen)
        _as_dictionary_columns(scanned0, dict_levels, categories)
        for name, level in dict_levels.items():
            if level.logical is not None:  # (a level sought past is no filter's column)
                flat_kinds[name] = level.logical
        if expr is not None:
            validate(expr, {n: ("nested" if nodes[n].children else flat_kinds[n]) for n in top})
    if r.pos != r.end:
        raise CorruptDataError(f"{r.end - r.pos} trailing bytes after the batch's levels", offset=r.pos)
    if expr is not None:
        rows = select_rows(expr, scanned0, h0.n_rows)
    elif rows is not None:
        rows = check_rows(rows, h0.n_rows)
    n_out = h0.n_rows if rows is None else len(rows)
    makers = [scanned0[c].for_filter_all if filter_form else scanned0[c] for c in flat_out]
    flat_arrays = dict(zip(flat_out, materialize(makers, rows, n_out, threads, last_use=True)))

    out: dict[str, pa.Array] = {}
    for c in proj_all:
        if c in flat_arrays:
            out[c] = flat_arrays[c]
            continue
        try:
            arr = assemble(nodes[c], levels, level_rows)
        except QdfError as exc:
            raise exc.with_location(column=c) from None
        out[c] = arr if rows is None else arr.take(pa.array(rows))
    return out, n_out


def _as_dictionary_columns(scanned: dict, dict_levels: dict[str, DictionaryLevel],
                           categories: list[str] | bool | None) -> None:
    """Replace the scanned codes of every decoded dictionary column by its dictionary column."""
    listed = set(categories) if isinstance(categories, list) else set()
    for name, level in dict_levels.items():
        if name in listed and level.logical is not None and level.logical not in LOGICAL_STRINGS:
            raise QueryError(f"categories= names {name!r}, which is not a string column", column=name)
        if level.values is None:
            continue
        as_dict = name in listed or (categories is True and level.logical in LOGICAL_STRINGS)
        scanned[name] = DictionaryColumn(name, scanned[name], level.values, as_dictionary=as_dict)


#: Logical kinds that categories= may ask for as dictionary arrays.
LOGICAL_STRINGS = frozenset({"string", "binary"})


def _scan(r: ByteReader, h: ColStructHeader, ctx, wanted: set[str], copy: bool, independent: bool) -> dict:
    """Scan one level's bodies, leaving ``r`` at the level's end (walk_all keeps Dense
    state in step for later levels, unless the batch's levels are ``independent``)."""
    scanned = scan_level(r, h, ctx, wanted, copy=copy, independent=independent)
    if h.has_index and r.pos != h.end:
        raise CorruptDataError("columnar level ends before its column index says", offset=r.pos)
    return scanned


__all__ = ["build_plan", "shredded_arrays", "shredded_levels"]
