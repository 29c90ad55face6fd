"""Lists, large lists, fixed-size lists and maps: one ``len`` slot (element counts, null
for a null list) in the parent level, the elements' slots in a new level. A map is its
list<entries> layout; its entries are a struct without a validity slot, or, when its
values are split by key, :mod:`.split_map`'s entries."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...errors import CorruptDataError
from .unit import Node, Planner, is_list_like, levels_of, map_entries_type, map_storage_type

_INT32_MAX = (1 << 31) - 1


class ListLike:
    name = "list"
    reference = "list / map lengths"

    def applies(self, t: pa.DataType, entries: bool, split: list[str] | None) -> bool:
        return is_list_like(t)

    def shreddable(self, t: pa.DataType, depth: int, child: Callable[[pa.DataType, int], bool]) -> bool:
        if pa.types.is_map(t):
            return child(t.key_type, depth + 1) and child(t.item_type, depth + 1)
        return child(t.value_type, depth + 1)

    def plan(self, p: Planner, path: str, t: pa.DataType, level: int, depth: int, *, entries: bool,
             split: list[str] | None) -> Node:
        node = Node(t, p.slot(level, path, "len"), codec=self)
        node.child_level = p.new_level()
        if pa.types.is_map(t):
            node.children.append(p.node(path, map_entries_type(t), node.child_level, depth + 1, entries=True,
                                        split=split or None))
        else:
            node.children.append(p.node(f"{path}[]", t.value_type, node.child_level, depth + 1))
        return node

    def shred(self, node: Node, arr: pa.Array, out: list[list[pa.Array]],
              child: Callable[[Node, pa.Array], None]) -> None:
        if pa.types.is_map(arr.type):
            arr = arr.view(map_storage_type(arr.type))
        out[node.slot.level].append(pc.list_value_length(arr).cast(pa.int64()))
        # flatten() honours the slice offset and drops what null lists point at.
        child(node.children[0], arr.flatten())

    def assemble(self, node: Node, levels: list[dict[str, pa.Array]], level_rows: list[int],
                 child: Callable[[Node], pa.Array]) -> pa.Array:
        t, slot = node.type, node.slot
        lengths = levels_of(levels, slot)
        elements = child(node.children[0])
        counts = np.asarray(lengths.fill_null(0) if lengths.null_count else lengths, dtype=np.int64)
        if counts.size and counts.min() < 0:
            raise CorruptDataError(f"shredded list {slot.name!r} has a negative length")
        offsets = np.zeros(len(counts) + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        if int(offsets[-1]) != len(elements) or len(elements) != level_rows[node.child_level]:
            raise CorruptDataError(
                f"shredded list {slot.name!r} has {int(offsets[-1])} elements, its level holds {len(elements)}")
        mask = lengths.is_null() if lengths.null_count else None
        try:
            if pa.types.is_large_list(t):
                return pa.LargeListArray.from_arrays(pa.array(offsets), elements, type=t, mask=mask)
            if offsets[-1] > _INT32_MAX:
                raise CorruptDataError(f"shredded list {slot.name!r} holds more elements than a 32-bit list can")
            off32 = pa.array(offsets.astype(np.int32))
            if pa.types.is_map(t):
                if elements.field(0).null_count:
                    raise CorruptDataError(f"shredded map {slot.name!r} has a null key")
                return pa.ListArray.from_arrays(off32, elements, type=map_storage_type(t), mask=mask).view(t)
            if pa.types.is_fixed_size_list(t):
                return _fixed_size(t, counts, elements, mask, slot.name)
            return pa.ListArray.from_arrays(off32, elements, type=t, mask=mask)
        except (pa.ArrowInvalid, pa.ArrowTypeError, ValueError) as exc:
            raise CorruptDataError(f"shredded list {slot.name!r} does not fit its type: {exc}") from None


def _fixed_size(t: pa.FixedSizeListType, counts: np.ndarray, child: pa.Array, mask, name: str) -> pa.Array:
    """Fixed-size lists: null slots hold no elements on the wire; Arrow wants ``size`` each."""
    size = t.list_size
    valid = np.ones(len(counts), dtype=bool) if mask is None else ~np.asarray(mask, dtype=bool)
    if np.any(counts[valid] != size) or np.any(counts[~valid] != 0):
        raise CorruptDataError(f"shredded fixed-size list {name!r} has a length other than {size}")
    if mask is None:
        values = child
    else:  # give every null slot `size` null elements
        src = np.full(len(counts) * size, -1, dtype=np.int64)
        pos = np.flatnonzero(np.repeat(valid, size))
        src[pos] = np.arange(len(pos))
        values = child.take(pa.array(src, mask=src < 0))
    return pa.FixedSizeListArray.from_arrays(values, type=t, mask=mask)


LIST = ListLike()
