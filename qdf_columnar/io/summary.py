"""Looking inside a ``.qdf`` file: per-row-group plans, per-column summaries, notebook HTML.

``explain_groups`` needs only the footer. ``columns_summary`` also walks each row
group's column bodies with ``qdf.explain`` (nothing is decoded) to name the codecs
and count bytes; nested columns are summed over their shredded slots, and in a
version-2 file a column's bytes are its chunks' bytes on disk (zstd and xz ones
unpacked first to name their codecs).
"""

from __future__ import annotations

import decimal
import html
from typing import TYPE_CHECKING, Any

from .chunks import open_chunk
from .layout import CHUNK_CODEC_NAMES, CHUNK_V1, stat_kind

if TYPE_CHECKING:
    from .reader import QdfFile

__all__ = ["explain_groups", "columns_summary", "repr_html"]

#: _repr_html_ walks at most this many row groups for codecs and bytes.
HTML_MAX_ROW_GROUPS = 16


def explain_groups(f: QdfFile, filter: Any) -> Any:  # noqa: A002
    import numpy as np
    import pandas as pd

    expr, plan = f._plan(filter)
    size = f._meta.zone_rows
    rows = []
    for g, read, why in plan:
        keep = f._zone_mask(g, expr) if read and expr is not None else None
        evaluated = g.num_rows if read else 0
        if keep is not None:  # rows of the zones the zone maps keep
            evaluated = int(np.minimum(size, g.num_rows - size * np.flatnonzero(keep)).sum())
        rows.append({"index": g.index, "rows": g.num_rows, "bytes": g.length, "read": read,
                     "rows_read": evaluated, "reason": why})
    return pd.DataFrame(rows, columns=["index", "rows", "bytes", "read", "rows_read", "reason"])


def _owner(slot: str, names: list[str]) -> str | None:
    """The top-level column a breakdown row belongs to (shredded slots are ``a.b``, ``a[]``)."""
    if slot in names:
        return slot
    best = None
    for n in names:
        if slot.startswith((n + ".", n + "[")) and (best is None or len(n) > len(best)):
            best = n
    return best


def _display(v: Any, kind: str | None, t: Any) -> Any:
    """A statistic as a reader expects it (storage ints of temporal and decimal columns shown as values)."""
    import pyarrow as pa

    if v is None or kind != "int":
        return v
    vt = t.value_type if pa.types.is_dictionary(t) else t
    if pa.types.is_decimal(vt):  # stored scaled: 125 on a scale-2 column is Decimal("1.25")
        return decimal.Decimal(v).scaleb(-vt.scale)
    if pa.types.is_temporal(vt):
        try:  # via pandas: as_py() refuses nanoseconds a datetime cannot hold
            storage = pa.int32() if vt.bit_width == 32 else pa.int64()
            return pa.array([v], storage).view(vt).to_pandas().iloc[0]
        except (pa.ArrowException, ValueError, OverflowError):
            return v
    return v


def columns_summary(f: QdfFile, max_row_groups: int | None) -> Any:
    import pandas as pd

    from ..breakdown import explain

    schema = f.schema
    names = schema.names
    groups = f.row_groups if max_row_groups is None else f.row_groups[:max_row_groups]
    codecs: dict[str, dict[str, int]] = {n: {} for n in names}
    kinds: dict[str, set[str]] = {n: set() for n in names}
    enc_bytes = dict.fromkeys(names, 0)
    row_major = False
    for g in groups:
        if g.chunks:  # version 2: each chunk is its column's, headers and all, at its bytes on disk
            for name, chunk in zip(names, g.chunks):
                buf = open_chunk(f._src.read(chunk.offset, chunk.length), chunk, column=name, row_group=g.index)
                wrap = "" if chunk.codec == CHUNK_V1 else CHUNK_CODEC_NAMES[chunk.codec] + ": "
                for r in explain(buf).itertuples(index=False):
                    if _owner(r.column, names) == name:
                        codecs[name][wrap + r.codec] = codecs[name].get(wrap + r.codec, 0) + int(r.bytes)
                        kinds[name].add(r.kind)
                enc_bytes[name] += chunk.length
            continue
        part = explain(f._src.read(g.offset, g.length))
        for r in part.itertuples(index=False):
            if r.column.startswith("(residual rows: "):
                # An F7 group (a small nested batch): its row-major values are shared by
                # the residual columns; each is given an equal part.
                shared = [c for c in r.column[len("(residual rows: "):-1].split(", ") if c in enc_bytes]
                for c in shared:
                    part_bytes = int(r.bytes) // len(shared)
                    codecs[c]["row-major values"] = codecs[c].get("row-major values", 0) + part_bytes
                    kinds[c].add("nested")
                    enc_bytes[c] += part_bytes
                continue
            owner = _owner(r.column, names)
            if owner is None:
                row_major |= r.kind == "row-major"
                continue
            codecs[owner][r.codec] = codecs[owner].get(r.codec, 0) + int(r.bytes)
            kinds[owner].add(r.kind)
            enc_bytes[owner] += int(r.bytes)
    rows = []
    for field in schema:
        n = field.name
        sts = [g.statistics[n] for g in f.row_groups]
        sampled = [g.statistics[n] for g in groups]
        arrow_b = sum(s.arrow_bytes for s in sampled)
        kind = stat_kind(field.type)
        los = [s.min for s in sts if s.min is not None]
        his = [s.max for s in sts if s.max is not None]
        b = enc_bytes[n] if not row_major else None
        rows.append({
            "column": n,
            "type": str(field.type),
            "kind": ", ".join(sorted(kinds[n])) or ("row-major" if row_major else ""),
            "codecs": ", ".join(sorted(codecs[n], key=lambda c: -codecs[n][c])) or ("row-major" if row_major else ""),
            "bytes": b,
            "ratio": round(arrow_b / b, 2) if b else None,
            "null_count": sum(s.null_count for s in sts),
            "nan_count": sum(s.nan_count for s in sts),
            "min": _display(min(los), kind, field.type) if los else None,
            "max": _display(max(his), kind, field.type) if his else None,
        })
    return pd.DataFrame(rows, columns=["column", "type", "kind", "codecs", "bytes", "ratio", "null_count",
                                       "nan_count", "min", "max"])


def repr_html(f: QdfFile) -> str:
    n = f.num_row_groups
    summary = columns_summary(f, HTML_MAX_ROW_GROUPS)
    sampled = "" if n <= HTML_MAX_ROW_GROUPS else (
        f" (codecs, bytes and ratio from the first {HTML_MAX_ROW_GROUPS} row groups)")
    head = (f"<b>QdfFile</b> <code>{html.escape(str(f.path))}</code>: {f.num_rows:,} rows, {len(f.schema)} columns, "
            f"{n:,} row group{'s' if n != 1 else ''}, {f.size:,} bytes, container v{f.metadata['container_version']}"
            f"{html.escape(sampled)}")
    return f"<div>{head}{summary.to_html(index=False, na_rep='')}</div>"
