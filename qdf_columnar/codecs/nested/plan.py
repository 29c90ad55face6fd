"""The shredding plan: how a batch's nested Arrow columns map onto flat level tables.

Every list opens a new *level*, a flat table with one row per list element; struct
fields become sibling columns of the same level; a list contributes its per-row
lengths to its parent level. Level 0 is the batch itself. Each level is then an
ordinary ``EF`` container, so every leaf gets the columnar codecs (and a Where on level
0 still pushes down). docs/FORMAT.md Part 3 gives the wire layout.

:class:`Plan` walks each nested type through the units of ``NESTED_CODECS`` (the first
whose ``applies`` passes plans it); :func:`shred_into` and :func:`assemble` follow the
plan's nodes, each through the unit that planned it. The plan is a pure function of the
Arrow type (and a split map's keys), so the decoder rebuilds exactly the encoder's slot
order from the type alone (the type travels in the schema note).
"""

from __future__ import annotations

import pyarrow as pa

from ...columns.kinds import kind_for
from ...errors import QdfError
from ..registry import NESTED_CODECS
from .unit import MAX_DEPTH, NestedCodec, Node, Slot, levels_of

__all__ = ["Plan", "assemble", "shred_into", "shreddable", "unit_for", "unit_slots"]

_NULL = pa.null()  # the type of a flat column's node (its slot says everything)


def unit_for(t: pa.DataType, entries: bool = False, split: list[str] | None = None) -> NestedCodec | None:
    """The nested unit that stores ``t``, or None for a flat (leaf) type."""
    for unit in NESTED_CODECS:
        if unit.applies(t, entries, split):
            return unit
    return None


def shreddable(t: pa.DataType, depth: int = 0) -> bool:
    """Whether every part of ``t`` has a flat columnar form (else the column goes row-major)."""
    if depth > MAX_DEPTH:
        return False
    unit = unit_for(t)
    if unit is not None:
        return unit.shreddable(t, depth, shreddable)
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

    def add(self, name: str, typ: pa.DataType) -> Node:
        """Plan one nested top-level column (level 0)."""
        return self.node(name, typ, 0, 0, split=self.splits.get(name))

    # The Planner protocol the units plan through.

    def slot(self, level: int, name: str, role: str) -> Slot:
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

    def new_level(self) -> int:
        self.levels.append([])
        self._names.append(set())
        return len(self.levels) - 1

    def node(self, path: str, t: pa.DataType, level: int, depth: int, *, entries: bool = False,
             split: list[str] | None = None) -> Node:
        if depth > MAX_DEPTH:
            raise ValueError(f"nested type deeper than {MAX_DEPTH} levels")
        unit = unit_for(t, entries, split)
        if unit is None:
            return Node(t, self.slot(level, path, "leaf"))
        return unit.plan(self, path, t, level, depth, entries=entries, split=split)

    def mark_split_key(self, slot: Slot) -> None:
        self.split_key_slots.add((slot.level, slot.name))


def shred_into(node: Node, arr: pa.Array, out: list[list[pa.Array]]) -> None:
    """Append ``arr``'s flat columns to the level lists ``out`` in the plan's slot order."""
    if node.codec is None:  # a leaf: its values as they are
        out[node.slot.level].append(arr)
        return
    node.codec.shred(node, arr, out, lambda child, a: shred_into(child, a, out))


def assemble(node: Node, levels: list[dict[str, pa.Array]], level_rows: list[int]) -> pa.Array:
    """Rebuild one nested array from its decoded level columns (vectorised: offsets from lengths)."""
    if node.codec is None:
        return levels_of(levels, node.slot)
    return node.codec.assemble(node, levels, level_rows, lambda child: assemble(child, levels, level_rows))


def unit_slots(nodes: list[Node]) -> dict[tuple[int, str], NestedCodec]:
    """The unit that wrote each nested unit's own slot (a struct's validity, a list's
    lengths), by (level, slot name): what ``qdf.explain`` labels those slots with."""
    out: dict[tuple[int, str], NestedCodec] = {}
    stack = list(nodes)
    while stack:
        node = stack.pop()
        if node.codec is not None and node.slot is not None:
            out[(node.slot.level, node.slot.name)] = node.codec
        stack.extend(node.children)
    return out
