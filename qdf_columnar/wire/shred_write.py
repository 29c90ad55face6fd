"""Write a batch with nested columns as shredded levels: ``[EF level 0, EF level 1, ...]``.

The root value is a plain v1 array whose elements are ``EF`` containers, one per
level of :mod:`.shred_plan`; level 0 carries the schema note that names the plan
(``"shred"``: the top-level columns and the nested columns' Arrow types). Any v1
reader decodes it (as a list of row lists); this package reassembles the nested
Arrow arrays from the flat columns without a Python loop over rows.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..columns.chunked import one_array
from ..columns.kinds import type_to_str
from ..errors import EncodeError
from ..options import Options
from .colstruct_write import write_table_columnar
from .dict_write import DictColumn, DictionaryPlan, note_entry, with_codes, write_dictionary_levels
from .schema_note import MAX_SPLIT_KEYS
from .shred_plan import Node, Plan, is_nested, map_storage_type, split_candidate
from .values_write import _write_seq_header


def shred(table: pa.Table) -> tuple[list[pa.Table], dict]:
    """The level tables of ``table`` and the ``shred`` entry of level 0's schema note."""
    cols = [one_array(c) for c in table.columns]
    names = table.column_names
    splits = {n: keys for n, a in zip(names, cols) if (keys := _split_keys(a)) is not None}
    plan = Plan([n for n, a in zip(names, cols) if not is_nested(a.type)], splits)
    level_cols: list[list[pa.Array]] = [[]]
    described: list[list] = []
    for name, arr in zip(names, cols):
        if is_nested(arr.type):
            node = plan.add(name, arr.type)
            described.append([name, type_to_str(arr.type)])
        else:
            node = plan.flat(name)
            described.append([name, None])
        while len(level_cols) < len(plan.levels):
            level_cols.append([])
        _fill(node, arr, level_cols)
    tables = []
    for k, slots in enumerate(plan.levels):
        arrays = level_cols[k]
        assert len(arrays) == len(slots)  # noqa: S101 - _fill follows the plan slot by slot
        n = table.num_rows if k == 0 else (len(arrays[0]) if arrays else 0)
        # Level 0 keeps the batch's schema metadata (pandas index and dtypes).
        t = pa.table(dict(zip([s.name for s in slots], arrays)), metadata=table.schema.metadata if k == 0 else None)
        if t.num_rows != n:  # pragma: no cover - lengths agree by construction
            raise EncodeError(f"shredded level {k} has {t.num_rows} rows, expected {n}")
        tables.append(t)
    desc: dict = {"levels": len(plan.levels), "columns": described}
    if splits:
        desc["split"] = splits
    return tables, desc


#: Splitting pays once every key has a few values to share a level header with.
MIN_SPLIT_ENTRIES = 64


def _split_keys(arr: pa.Array) -> list[str] | None:
    """The keys of a map column whose values should get one level per key, else None.

    A map with few distinct keys (attributes, labels, log fields) holds a few unrelated
    value columns interleaved; stored apart, each gets its own codec (ids, dictionaries,
    numbers as text) instead of one compromise for all (docs/FORMAT.md Part 3).
    """
    if not split_candidate(arr.type):
        return None
    keys = arr.view(map_storage_type(arr.type)).flatten().field(0)
    if len(keys) < MIN_SPLIT_ENTRIES:
        return None
    distinct = pc.unique(keys)
    if not 2 <= len(distinct) <= MAX_SPLIT_KEYS:
        return None
    return distinct.to_pylist()


def _fill(node: Node, arr: pa.Array, out: list[list[pa.Array]]) -> None:
    """Append ``arr``'s flat columns to the level lists in the plan's slot order."""
    t = arr.type
    if node.slot is not None and node.slot.role == "leaf":
        out[node.slot.level].append(arr)
        return
    if pa.types.is_struct(t):
        if node.slot is not None:  # validity: zeros, null where the struct is null
            zeros = pc.if_else(arr.is_valid(), pa.scalar(0, pa.int64()), pa.scalar(None, pa.int64()))
            out[node.slot.level].append(zeros)
        for i, child in enumerate(node.children):
            # field(i) honours the array's slice offset; values under a null struct are
            # kept as they are (the reader puts the struct's nulls back on top).
            _fill(child, arr.field(i), out)
        return
    if pa.types.is_map(t):
        arr = arr.view(map_storage_type(t))
    lengths = pc.list_value_length(arr).cast(pa.int64())
    out[node.slot.level].append(lengths)
    # flatten() honours the slice offset and drops what null lists point at.
    child = node.children[0]
    if len(child.children) == 2 and child.children[1].split_keys is not None:
        _fill_split(child, arr.flatten(), out)
    else:
        _fill(child, arr.flatten(), out)


def _fill_split(node: Node, entries: pa.StructArray, out: list[list[pa.Array]]) -> None:
    """Map entries split by key: the keys, then each key's values in entry order."""
    key_node, value_node = node.children
    keys, values = entries.field(0), entries.field(1)
    out[key_node.slot.level].append(keys)
    codes = np.asarray(pc.index_in(keys, value_set=pa.array(value_node.split_keys, keys.type)).fill_null(-1))
    codes = codes.astype(np.int8)  # <= 64 keys: numpy sorts 8-bit keys by radix
    if len(codes) and codes.min() < 0:  # pragma: no cover - the keys were taken from this column
        raise EncodeError("a map key is missing from its split key list")
    order = np.argsort(codes, kind="stable")
    counts = np.bincount(codes, minlength=len(value_node.split_keys))
    start = 0
    for leaf, count in zip(value_node.children, counts.tolist()):
        out[leaf.slot.level].append(values.take(pa.array(order[start:start + count])))
        start += count


def write_shredded(out: bytearray, table: pa.Table, ctx, plan: DictionaryPlan | None = None) -> None:
    """Append the root array of level containers for ``table``.

    ``plan`` (:mod:`.dict_write`) names flat columns written as codes in level 0, their
    dictionary levels after the shredded levels, and level-0 bodies already written.
    """
    tables, desc = shred(table)
    dicts = plan.columns if plan is not None else []
    extra: dict = {"shred": desc}
    if dicts:
        tables[0] = with_codes(tables[0], [_at_level0(tables[0], dc) for dc in dicts])
        extra["dict"] = note_entry(dicts)
    if ctx.opts & Options.CASCADE:
        extra["indep"] = True  # string bodies are blocks only: a reader may seek past any level's
    _write_seq_header(out, len(tables) + len(dicts))
    for k, t in enumerate(tables):
        write_table_columnar(out, t, ctx, note_extra=extra if k == 0 else None,
                             bodies=plan.bodies if k == 0 and plan is not None else None)
    write_dictionary_levels(out, dicts, ctx)


def _at_level0(level0: pa.Table, dc: DictColumn) -> DictColumn:
    """``dc`` re-pointed at its column's position in level 0 (flat columns keep their names)."""
    return replace(dc, index=level0.column_names.index(dc.name))
