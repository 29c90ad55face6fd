"""The contract of a nested codec unit, and the plan structures the units share.

A nested column (list, struct, map) is stored shredded, the way Arrow lays it out in
memory: every list opens a new *level* (a flat table, one row per element), struct
fields are sibling columns of their level, and every leaf is an ordinary flat column
that the integer, float, bool and string units code (docs/FORMAT.md Part 3). A nested
unit is one shape of that mapping, with:

* ``name`` (how tests and the registry name it) and ``reference`` (what ``qdf.explain``
  prints for the slot the unit writes: a struct's validity, a list's lengths);
* ``applies(t, entries, split)``: whether the unit stores Arrow type ``t`` (``entries``:
  ``t`` is a map's entries struct; ``split``: the keys a map's values are split by);
* ``shreddable(t, depth, child)``: whether every part of ``t`` has a flat form, asking
  ``child(type, depth)`` about each child type;
* ``plan(p, path, t, level, depth, entries, split)``: the :class:`Node` of ``t``, its
  slots taken from the planner ``p`` (:class:`Planner`), children planned through
  ``p.node``. The plan is a pure function of the type (and the split keys), so the
  decoder rebuilds the encoder's slot order from the schema note alone;
* ``shred(node, arr, out, child)`` (encode): append ``arr``'s flat columns to the level
  lists ``out`` in the plan's slot order, ``child(node, arr)`` for each child;
* ``assemble(node, levels, level_rows, child)`` (decode): the nested array from the
  decoded level columns, ``child(node)`` rebuilding each child; damaged levels raise
  CorruptDataError.

The units are registered in :mod:`..registry` (``NESTED_CODECS``); :mod:`.plan` walks a
type through them. Leaves are not nested units: their slot holds the values as they are.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import pyarrow as pa

__all__ = ["MAX_DEPTH", "NestedCodec", "Node", "Planner", "Slot", "is_list_like", "is_nested",
           "map_entries_type", "map_storage_type", "split_candidate"]

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
    """One nested value position: what to read back from which slots, and which unit does."""

    type: pa.DataType
    slot: Slot | None = None  # the leaf's values, a struct's validity or a list's lengths
    children: list[Node] = field(default_factory=list)
    child_level: int = -1  # lists: the level holding the elements
    split_keys: list[str] | None = None  # a map's values split by key: one leaf child per key
    codec: NestedCodec | None = None  # None: a leaf (or a split map's values, read by their parent)


class Planner(Protocol):
    """What a unit's ``plan`` takes its slots and levels from (:class:`.plan.Plan`)."""

    def slot(self, level: int, name: str, role: str) -> Slot: ...

    def new_level(self) -> int: ...

    def node(self, path: str, t: pa.DataType, level: int, depth: int, *, entries: bool = False,
             split: list[str] | None = None) -> Node: ...

    def mark_split_key(self, slot: Slot) -> None: ...


class NestedCodec(Protocol):
    """What every nested unit provides (see the module docstring)."""

    name: str
    reference: str

    def applies(self, t: pa.DataType, entries: bool, split: list[str] | None) -> bool: ...

    def shreddable(self, t: pa.DataType, depth: int, child: Callable[[pa.DataType, int], bool]) -> bool: ...

    def plan(self, p: Planner, path: str, t: pa.DataType, level: int, depth: int, *, entries: bool,
             split: list[str] | None) -> Node: ...

    def shred(self, node: Node, arr: pa.Array, out: list[list[pa.Array]],
              child: Callable[[Node, pa.Array], None]) -> None: ...

    def assemble(self, node: Node, levels: list[dict[str, pa.Array]], level_rows: list[int],
                 child: Callable[[Node], pa.Array]) -> pa.Array: ...


def is_list_like(t: pa.DataType) -> bool:
    return pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t) or pa.types.is_map(t)


def is_nested(t: pa.DataType) -> bool:
    return is_list_like(t) or pa.types.is_struct(t)


def split_candidate(t: pa.DataType) -> bool:
    """Maps whose values can be split by key: string keys, flat values."""
    return (pa.types.is_map(t) and (pa.types.is_string(t.key_type) or pa.types.is_large_string(t.key_type))
            and not is_nested(t.item_type))


def map_entries_type(t: pa.MapType) -> pa.StructType:
    return pa.struct([t.key_field, t.item_field])


def map_storage_type(t: pa.MapType) -> pa.ListType:
    """The list<entries> layout a map array can be viewed as (and back)."""
    return pa.list_(pa.field("entries", map_entries_type(t), nullable=False))


def levels_of(levels: list[dict[str, pa.Array]], slot: Slot) -> Any:
    """The decoded column of ``slot``."""
    return levels[slot.level][slot.name]
