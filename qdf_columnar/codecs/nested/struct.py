"""Structs: one ``valid`` slot (an int column of zeros, null where the struct is null:
a 0-bit payload when nothing is null), then the fields' slots, at the struct's level.
A map's entries struct has no ``valid`` slot (entries are never null)."""

from __future__ import annotations

from collections.abc import Callable

import pyarrow as pa
import pyarrow.compute as pc

from ...errors import CorruptDataError
from .unit import Node, Planner, levels_of


class Struct:
    name = "struct"
    reference = "struct validity"

    def applies(self, t: pa.DataType, entries: bool, split: list[str] | None) -> bool:
        return pa.types.is_struct(t) and not (entries and split)

    def shreddable(self, t: pa.DataType, depth: int, child: Callable[[pa.DataType, int], bool]) -> bool:
        return t.num_fields > 0 and all(child(t.field(i).type, depth + 1) for i in range(t.num_fields))

    def plan(self, p: Planner, path: str, t: pa.DataType, level: int, depth: int, *, entries: bool,
             split: list[str] | None) -> Node:
        node = Node(t, None if entries else p.slot(level, path, "valid"), codec=self)
        for i in range(t.num_fields):
            f = t.field(i)
            node.children.append(p.node(f"{path}.{f.name}", f.type, level, depth + 1))
        return node

    def shred(self, node: Node, arr: pa.Array, out: list[list[pa.Array]],
              child: Callable[[Node, pa.Array], None]) -> None:
        if node.slot is not None:  # validity: zeros, null where the struct is null
            zeros = pc.if_else(arr.is_valid(), pa.scalar(0, pa.int64()), pa.scalar(None, pa.int64()))
            out[node.slot.level].append(zeros)
        for i, c in enumerate(node.children):
            # field(i) honours the array's slice offset; values under a null struct are
            # kept as they are (the reader puts the struct's nulls back on top).
            child(c, arr.field(i))

    def assemble(self, node: Node, levels: list[dict[str, pa.Array]], level_rows: list[int],
                 child: Callable[[Node], pa.Array]) -> pa.Array:
        t = node.type
        children = [child(c) for c in node.children]
        mask = None
        if node.slot is not None:
            valid = levels_of(levels, node.slot)
            if valid.null_count:
                mask = valid.is_null()
        return from_fields(t, children, mask)


def from_fields(t: pa.StructType, children: list[pa.Array], mask: pa.Array | None) -> pa.Array:
    """The struct array of ``t`` over ``children``; a mismatch is corrupt input."""
    try:
        return pa.StructArray.from_arrays(children, fields=[t.field(i) for i in range(t.num_fields)], mask=mask)
    except (pa.ArrowInvalid, pa.ArrowTypeError, ValueError) as exc:
        raise CorruptDataError(f"shredded struct does not fit its type: {exc}") from None


STRUCT = Struct()
