"""Bridge between row-major values (``dumps``/``loads``) and the EF columnar container.

``loads`` meets an ``EF`` tag wherever a list of records was written columnar and
gets back a list of dicts; ``dumps`` in balanced mode offers a list of >= 16 dicts
that share one key order and scalar value types to the columnar writer (the
reference's columnar decision, §3.4). For a root list ``dumps`` keeps the columnar
form only when it is at least 10 % smaller than the row-major one, both sizes exact
(``values_write._smaller_of_columnar``); nested lists and stream messages take the
columnar form whenever the writer accepts them.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any

import pyarrow as pa

from ..errors import UnsupportedTypeError
from ..format.reader import ByteReader
from ..options import columnar_enabled
from .colstruct_read import ColumnDecoder, read_header
from .colstruct_write import write_table_columnar
from .values_write import COLUMNAR_MIN_ROWS

_SCALARS = (bool, int, float, str, bytes, _dt.datetime)


def read_hybrid_colstruct_value(r: ByteReader, ctx: Any) -> list[dict[str, Any]]:
    """Decode an F7 hybrid container (tag already consumed) into a list of row dicts."""
    return read_colstruct_value(r, ctx, hybrid=True)


def read_colstruct_value(r: ByteReader, ctx: Any, *, hybrid: bool = False) -> list[dict[str, Any]]:
    """Decode an EF container (tag already consumed) into a list of row dicts."""
    header = read_header(r, ctx, hybrid=hybrid)
    dec = ColumnDecoder(r, header, ctx)
    deferred = dec.run({c.name for c in header.columns}, walk_all=True)
    if header.has_index:
        r.pos = header.end if header.end >= 0 else r.pos
    table = pa.table({c.name: deferred[c.name](None) for c in header.columns}) if header.columns else None
    if table is None:
        return [{} for _ in range(header.n_rows)]
    return table.to_pylist()


def write_records_columnar(out: bytearray, records: list[Any], ctx: Any) -> bool:
    """Write ``records`` as one EF container if they qualify; return False to decline."""
    if not columnar_enabled(ctx.opts) or len(records) < COLUMNAR_MIN_ROWS:
        return False
    first = records[0]
    if not isinstance(first, dict) or not first or not all(isinstance(k, str) for k in first):
        return False
    keys = list(first)
    kinds: dict[str, type] = {}
    for rec in records:
        if not isinstance(rec, dict) or list(rec) != keys:
            return False
        for k, v in rec.items():
            if v is None:
                continue
            t = type(v)
            if t not in _SCALARS or (t is int and not -(2**63) <= v < 2**64):
                return False
            if kinds.setdefault(k, t) is not t:
                return False
    try:
        table = pa.Table.from_pylist(records)
        write_table_columnar(out, table, ctx)
    except (pa.ArrowInvalid, pa.ArrowTypeError, UnsupportedTypeError):
        return False
    return True
