"""A map's entries with the values split by key: the key column at the entries' level,
then one new level per key holding, in entry order, the values of that key.

A map with few distinct keys (attributes, labels, log fields) holds a few unrelated
value columns interleaved; stored apart, each gets its own codec (ids, dictionaries,
numbers as text) instead of one compromise for all (docs/FORMAT.md Part 3).
:func:`split_keys` is the choice, made on the data; the keys travel in the schema note.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...errors import CorruptDataError, EncodeError
from .struct import from_fields
from .unit import Node, Planner, levels_of, map_storage_type, split_candidate

#: A map column with at most this many distinct keys gets one value level per key.
MAX_SPLIT_KEYS = 64
#: Splitting pays once every key has a few values to share a level header with.
MIN_SPLIT_ENTRIES = 64


def split_keys(arr: pa.Array) -> list[str] | None:
    """The keys of a map column whose values should get one level per key, else None."""
    if not split_candidate(arr.type):
        return None
    keys = arr.view(map_storage_type(arr.type)).flatten().field(0)
    if len(keys) < MIN_SPLIT_ENTRIES:
        return None
    distinct = pc.unique(keys)
    if not 2 <= len(distinct) <= MAX_SPLIT_KEYS:
        return None
    return distinct.to_pylist()


class SplitEntries:
    name = "split_map"
    reference = "map values split by key"

    def applies(self, t: pa.DataType, entries: bool, split: list[str] | None) -> bool:
        return pa.types.is_struct(t) and entries and bool(split)

    def shreddable(self, t: pa.DataType, depth: int, child: Callable[[pa.DataType, int], bool]) -> bool:
        return all(child(t.field(i).type, depth + 1) for i in range(t.num_fields))

    def plan(self, p: Planner, path: str, t: pa.DataType, level: int, depth: int, *, entries: bool,
             split: list[str] | None) -> Node:
        key_field, item_type = t.field(0), t.field(1).type
        key = Node(key_field.type, p.slot(level, f"{path}.{key_field.name}", "leaf"))
        p.mark_split_key(key.slot)
        values = Node(item_type, None, split_keys=list(split or ()))
        for k in values.split_keys:
            lvl = p.new_level()
            values.children.append(Node(item_type, p.slot(lvl, f"{path}.value[{k}]", "leaf")))
        return Node(t, None, [key, values], codec=self)

    def shred(self, node: Node, arr: pa.Array, out: list[list[pa.Array]],
              child: Callable[[Node, pa.Array], None]) -> None:
        key_node, value_node = node.children
        keys, values = arr.field(0), arr.field(1)
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

    def assemble(self, node: Node, levels: list[dict[str, pa.Array]], level_rows: list[int],
                 child: Callable[[Node], pa.Array]) -> pa.Array:
        t = node.type
        keys = child(node.children[0])
        values = _unsplit(node.children[1], keys, levels)
        if pa.types.is_dictionary(keys.type):
            keys = keys.dictionary_decode()
        key_type = t.field(0).type
        return from_fields(t, [keys if keys.type == key_type else keys.cast(key_type), values], None)


def _unsplit(node: Node, keys: pa.Array, levels: list[dict[str, pa.Array]]) -> pa.Array:
    """A map's values back in entry order from one level per key (see :meth:`SplitEntries.shred`)."""
    if pa.types.is_dictionary(keys.type):  # map the few dictionary entries, not every key
        where = pc.index_in(keys.dictionary, value_set=pa.array(node.split_keys, keys.type.value_type))
        if where.null_count:
            raise CorruptDataError("a map key is not in the schema note's split key list")
        codes = np.asarray(where, dtype=np.int8)[np.asarray(keys.indices)]
    else:
        where = pc.index_in(keys, value_set=pa.array(node.split_keys, keys.type))
        if where.null_count:
            raise CorruptDataError("a map key is not in the schema note's split key list")
        codes = np.asarray(where).astype(np.int8)  # <= 64 keys: numpy sorts 8-bit keys by radix
    counts = np.bincount(codes, minlength=len(node.split_keys)) if len(codes) else np.zeros(len(node.split_keys), int)
    parts = [levels_of(levels, c.slot) for c in node.children]
    if [len(p) for p in parts] != counts.tolist():
        raise CorruptDataError("a map's value levels do not hold as many values as its keys say")
    order = np.argsort(codes, kind="stable")
    inverse = np.empty(len(order), dtype=np.int64)
    inverse[order] = np.arange(len(order))
    values = pa.concat_arrays(parts) if parts else pa.array([], node.type)
    return values.take(pa.array(inverse))


SPLIT_ENTRIES = SplitEntries()
