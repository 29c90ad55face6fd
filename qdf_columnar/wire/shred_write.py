"""Write a batch with nested columns as shredded levels: ``[EF level 0, EF level 1, ...]``.

The root value is a plain v1 array whose elements are ``EF`` containers, one per
level of :mod:`.shred_plan`; level 0 carries the schema note that names the plan
(``"shred"``: the top-level columns and the nested columns' Arrow types). Any v1
reader decodes it (as a list of row lists); this package reassembles the nested
Arrow arrays from the flat columns without a Python loop over rows.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from ..columns.kinds import type_to_str
from ..errors import EncodeError
from .shred_plan import Node, Plan, is_nested, map_storage_type
from .values_write import _write_seq_header


def shred(table: pa.Table) -> tuple[list[pa.Table], dict]:
    """The level tables of ``table`` and the ``shred`` entry of level 0's schema note."""
    cols = [c.combine_chunks() if isinstance(c, pa.ChunkedArray) else c for c in table.columns]
    names = table.column_names
    plan = Plan([n for n, a in zip(names, cols) if not is_nested(a.type)])
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
    return tables, {"levels": len(plan.levels), "columns": described}


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
    _fill(node.children[0], arr.flatten(), out)


def write_shredded(out: bytearray, table: pa.Table, ctx) -> None:
    """Append the root array of level containers for ``table``."""
    from .colstruct_write import write_table_columnar

    tables, desc = shred(table)
    _write_seq_header(out, len(tables))
    for k, t in enumerate(tables):
        write_table_columnar(out, t, ctx, note_extra={"shred": desc} if k == 0 else None)
