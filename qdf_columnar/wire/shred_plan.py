"""The shredding plan: how a nested Arrow column maps onto flat columnar tables.

Nested columns (lists, structs, maps) are stored the way Arrow lays them out in
memory: every list opens a new *level*, a flat table with one row per list element;
struct fields become sibling columns of the same level; a list contributes its
per-row lengths to its parent level. Level 0 is the batch itself. Each level is then
an ordinary ``EF`` container, so every leaf gets the columnar codecs (and a Where
on level 0 still pushes down). docs/FORMAT.md Part 3 gives the wire layout.

The plan is a pure function of the Arrow type, so the decoder rebuilds exactly the
encoder's slot order from the type alone (the type travels in the schema note):

* leaf (any type :func:`kind_for` accepts): one slot, the values;
* struct: one ``valid`` slot (an int column of zeros, null where the struct is null:
  a 0-bit payload when nothing is null), then its fields' slots, at the same level;
  a map's entries struct has no ``valid`` slot (entries are never null);
* list / large list / fixed-size list / map: one ``len`` slot (element counts, null
  for a null list) in the parent level, the element's slots in a new level.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pyarrow as pa

from ..columns.kinds import kind_for
from ..errors import QdfError

_NULL = pa.null()  # the type of a flat column's node (its slot says everything)
#: Deeper types are refused (a hostile schema note cannot recurse without bound).
MAX_DEPTH = 64


@dataclass(slots=True)
class Slot:
    """One flat column of one level table."""

    level: int
    name: str
    role: str  # "leaf", "valid" or "len"
    index: int = -1  # position in its level table


@dataclass(slots=True)
class Node:
    """One nested value position: what to read back from which slots."""

    type: pa.DataType
    slot: Slot | None = None  # the leaf's values, a struct's validity or a list's lengths
    children: list[Node] = field(default_factory=list)
    child_level: int = -1  # lists: the level holding the elements
    split_keys: list[str] | None = None  # a map's values split by key: one leaf child per key


def is_list_like(t: pa.DataType) -> bool:
    return pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t) or pa.types.is_map(t)


def is_nested(t: pa.DataType) -> bool:
    return is_list_like(t) or pa.types.is_struct(t)


def shreddable(t: pa.DataType, depth: int = 0) -> bool:
    """Whether every part of ``t`` has a flat columnar form (else the column goes row-major)."""
    if depth > MAX_DEPTH:
        return False
    if pa.types.is_struct(t):
        return t.num_fields > 0 and all(shreddable(t.field(i).type, depth + 1) for i in range(t.num_fields))
    if pa.types.is_map(t):
        return shreddable(t.key_type, depth + 1) and shreddable(t.item_type, depth + 1)
    if is_list_like(t):
        return shreddable(t.value_type, depth + 1)
    try:
        kind_for("", t)
    except QdfError:
        return False
    return True


class Plan:
    """Slots of every level, filled by :meth:`add` one top-level column at a time."""

    def __init__(self, flat_names: list[str], splits: dict[str, list[str]] | None = None) -> None:
        self.splits = splits or {}
        #: (level, name) of the key column of every map split by key
        self.split_key_slots: set[tuple[int, str]] = set()
        self.levels: list[list[Slot]] = [[]]
        # The batch's flat columns keep their own names at level 0 (filters use them),
        # so generated names must avoid them whatever the column order.
        self._names: list[set[str]] = [set(flat_names)]

    def flat(self, name: str) -> Node:
        """A flat top-level column: one level-0 slot under its own name."""
        s = Slot(0, name, "leaf", len(self.levels[0]))
        self.levels[0].append(s)
        return Node(_NULL, s)

    def _slot(self, level: int, name: str, role: str) -> Slot:
        # Slot names are for people (qdf.explain, a Go reader); the decoder goes by
        # position. A generated name that collides gets a ~k suffix.
        taken = self._names[level]
        unique, k = name, 1
        while unique in taken:
            unique, k = f"{name}~{k}", k + 1
        taken.add(unique)
        s = Slot(level, unique, role, len(self.levels[level]))
        self.levels[level].append(s)
        return s

    def _new_level(self) -> int:
        self.levels.append([])
        self._names.append(set())
        return len(self.levels) - 1

    def add(self, name: str, typ: pa.DataType) -> Node:
        """Plan one nested top-level column (level 0)."""
        return self._node(name, typ, 0, 0, split=self.splits.get(name))

    def _node(
        self, path: str, t: pa.DataType, level: int, depth: int, *, entries: bool = False,
        split: list[str] | None = None,
    ) -> Node:
        if depth > MAX_DEPTH:
            raise ValueError(f"nested type deeper than {MAX_DEPTH} levels")
        if pa.types.is_struct(t):
            node = Node(t, None if entries else self._slot(level, path, "valid"))
            for i in range(t.num_fields):
                f = t.field(i)
                node.children.append(self._node(f"{path}.{f.name}", f.type, level, depth + 1))
            return node
        if is_list_like(t):
            node = Node(t, self._slot(level, path, "len"))
            node.child_level = self._new_level()
            if pa.types.is_map(t) and split:
                node.children.append(self._split_entries(path, t, node.child_level, split))
            elif pa.types.is_map(t):
                node.children.append(self._node(path, map_entries_type(t), node.child_level, depth + 1, entries=True))
            else:
                node.children.append(self._node(f"{path}[]", t.value_type, node.child_level, depth + 1))
            return node
        return Node(t, self._slot(level, path, "leaf"))


    def _split_entries(self, path: str, t: pa.MapType, level: int, keys: list[str]) -> Node:
        """A map's entries with the values split by key: the key column at the entries'
        level, then one new level per key holding, in entry order, the values of that key."""
        key = Node(t.key_type, self._slot(level, f"{path}.{t.key_field.name}", "leaf"))
        self.split_key_slots.add((level, key.slot.name))
        values = Node(t.item_type, None, split_keys=list(keys))
        for k in keys:
            lvl = self._new_level()
            values.children.append(Node(t.item_type, self._slot(lvl, f"{path}.value[{k}]", "leaf")))
        return Node(map_entries_type(t), None, [key, values])


def split_candidate(t: pa.DataType) -> bool:
    """Maps whose values can be split by key: string keys, flat values."""
    return (pa.types.is_map(t) and (pa.types.is_string(t.key_type) or pa.types.is_large_string(t.key_type))
            and not is_nested(t.item_type))


def map_entries_type(t: pa.MapType) -> pa.StructType:
    return pa.struct([t.key_field, t.item_field])


def map_storage_type(t: pa.MapType) -> pa.ListType:
    """The list<entries> layout a map array can be viewed as (and back)."""
    return pa.list_(pa.field("entries", map_entries_type(t), nullable=False))
