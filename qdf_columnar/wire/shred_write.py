"""Write a batch with nested columns as shredded levels: ``[EF level 0, EF level 1, ...]``.

The root value is a plain v1 array whose elements are ``EF`` containers, one per
level of the plan (:mod:`qdf_columnar.codecs.nested.plan`); level 0 carries the schema note that names the plan
(``"shred"``: the top-level columns and the nested columns' Arrow types). Any v1
reader decodes it (as a list of row lists); this package reassembles the nested
Arrow arrays from the flat columns without a Python loop over rows.
"""

from __future__ import annotations

from dataclasses import replace

import pyarrow as pa

from ..codecs.nested.plan import Plan, shred_into
from ..codecs.nested.split_map import split_keys
from ..codecs.nested.unit import is_nested
from ..columns.chunked import one_array
from ..columns.kinds import type_to_str
from ..errors import EncodeError
from ..options import Options
from .colstruct_write import write_table_columnar
from .dict_write import DictColumn, DictionaryPlan, note_entry, with_codes, write_dictionary_levels
from .values_write import _write_seq_header


def shred(table: pa.Table) -> tuple[list[pa.Table], dict]:
    """The level tables of ``table`` and the ``shred`` entry of level 0's schema note."""
    cols = [one_array(c) for c in table.columns]
    names = table.column_names
    splits = {n: keys for n, a in zip(names, cols) if (keys := split_keys(a)) is not None}
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
        shred_into(node, arr, level_cols)
    tables = []
    for k, slots in enumerate(plan.levels):
        arrays = level_cols[k]
        assert len(arrays) == len(slots)  # noqa: S101 - shred_into follows the plan slot by slot
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
