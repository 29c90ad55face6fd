"""``qdf.explain(buf)``: where the bytes of a qdf v1 batch go.

One row per column: its v1 kind, whether it is nullable, the codec chosen (the tag's
reference name: ``PackDeltaFor``, ``ColStrAlpha``, ...; a time column shows both of
its payloads; a dictionary column its codes' codec in level 0 and its values' codec
in its dictionary level), its bytes and its share of the whole buffer, plus rows for the header
and shape declaration, and for the residual rows of a hybrid container. Nothing is
decoded: column bodies are only walked.
"""

from __future__ import annotations

from typing import Any

from .codecs.nested.plan import unit_slots
from .codecs.registry import reference_name, string_reference_name
from .errors import DecodeError
from .format.header import open_body
from .format.reader import ByteReader
from .format.tags import HEADER_SIZE, ColKind, ContainerTag
from .wire.colstruct_read import ColumnDecoder
from .wire.colstruct_read import read_header as read_colstruct_header
from .wire.context import DecodeContext
from .wire.shred_read import build_plan, shredded_levels


def _codec(buf: Any, at: int, kind: int) -> str:
    if at >= len(buf):
        return "(empty)"
    tag = buf[at]
    if kind == ColKind.STRING:
        return string_reference_name(tag)
    return reference_name(tag)


def explain(buf: bytes | bytearray | memoryview) -> Any:
    """Per-column size breakdown of a qdf v1 batch, as a pandas DataFrame.

    Columns of the result: ``column``, ``kind``, ``nullable``, ``codec``, ``bytes``,
    ``share`` (of the whole buffer).

    Examples
    --------
    >>> import qdf_columnar as qdf
    >>> qdf.explain(qdf.encode({"id": list(range(100))}))[["column", "codec", "bytes"]].to_dict("records")[1]
    {'column': 'id', 'codec': 'PackDeltaFor', 'bytes': 6}
    """
    import pandas as pd

    total = len(buf)
    flags, plain = open_body(buf)
    r = ByteReader(plain, HEADER_SIZE)
    ctx = DecodeContext(flags=flags)
    rows: list[dict[str, Any]] = []
    root = r.peek("the root value")
    n_levels = shredded_levels(r)
    # The first container's header row also counts the 5-byte qdf header (start 0).
    h0 = _explain_container(r, ctx, plain, rows, start=0, level=0, n_levels=n_levels) if n_levels else None
    if h0 is not None:
        dicts = h0.dicts or []
        first_dict = n_levels - len(dicts)
        nested = _nested_slots(h0, first_dict)
        _label_nested(rows, nested, 0)
        for k in range(1, n_levels):
            at = r.pos
            r.u8(f"level {k}")
            first = len(rows)
            _explain_container(r, ctx, plain, rows, start=at, level=k, n_levels=n_levels,
                               dictionary_of=dicts[k - first_dict] if k >= first_dict else None)
            _label_nested(rows[first:], nested, k)
    elif root in (ContainerTag.COL_STRUCT, ContainerTag.HYBRID_COL_STRUCT):
        r = ByteReader(plain, HEADER_SIZE + 1)
        ctx = DecodeContext(flags=flags)
        _explain_container(r, ctx, plain, rows, start=0, hybrid=root == ContainerTag.HYBRID_COL_STRUCT)
    else:
        rows.append({"column": "(row-major value)", "kind": "row-major", "nullable": False,
                     "codec": f"tag {root:#04x}", "bytes": len(plain) - HEADER_SIZE})
    if len(plain) != total:  # the tANS pass: the rows above are sizes before it
        rows.append({"column": "(tANS entropy pass)", "kind": "", "nullable": False, "codec": "tANS",
                     "bytes": total - len(plain)})
    df = pd.DataFrame(rows, columns=["column", "kind", "nullable", "codec", "bytes"])
    df["share"] = (df["bytes"] / total).round(4)
    return df


def _explain_container(
    r: ByteReader, ctx: Any, buf: Any, rows: list[dict[str, Any]], *, start: int, level: int = -1,
    n_levels: int = 0, hybrid: bool = False, dictionary_of: str | None = None,
) -> Any:
    """Append one row per column of the container whose tag is just before ``r.pos``;
    return its header.

    ``start`` is where its header row's bytes begin. ``level`` >= 0 marks a level of a
    batch of levels (shredded nested columns, dictionary levels); returns None
    (appending nothing) when level 0 turns out not to be one. ``dictionary_of`` names
    the column whose dictionary level this is. A dictionary column shows as two rows,
    ``codes: <codec>`` in level 0 and ``values: <codec>`` in its level.
    """
    header = read_colstruct_header(r, ctx, hybrid=hybrid)
    if level == 0 and header.shred is None and header.dicts is None:
        return None
    dict_cols = set(header.dicts or [])
    if dictionary_of is not None:
        label = f"(dictionary level of {dictionary_of}: header + shape)"
        codec = "EF dictionary level"
    elif level >= 0:
        label = f"(level {level} of {n_levels}: header + shape)"
        codec = "EF columnar level"
    else:
        label, codec = "(header + shape)", "F7 hybrid" if hybrid else "EF columnar"
    rows.append({"column": label, "kind": "", "nullable": False, "codec": codec,
                 "bytes": header.body_start - start})
    dec = ColumnDecoder(r, header, ctx)
    for info in header.all_columns:
        if info.kind == ColKind.RESIDUAL:
            continue
        at = r.pos if info.start < 0 else info.start
        r.pos = at
        body_at = at + (((header.n_rows + 7) >> 3) if info.nullable else 0)
        codec = _codec(buf, body_at, info.kind)
        if info.kind == ColKind.TIME and body_at < len(buf):
            dec._skip(info)
            second = _codec(buf, _second_payload(buf, body_at, info, header, ctx), ColKind.INT)
            codec = f"{codec} + {second}"
        else:
            dec._skip(info)
        hidden = info not in header.columns
        if info.name in dict_cols and not hidden:
            codec = f"dictionary codes: {codec}"
        elif dictionary_of is not None and not hidden:
            codec = f"dictionary values ({header.n_rows:,}): {codec}"
        rows.append({
            "column": "(schema note)" if hidden else info.name,
            "kind": ColKind(info.kind).name.lower(),
            "nullable": info.nullable,
            "codec": codec,
            "bytes": r.pos - at,
        })
    if header.hybrid:
        at = r.pos
        names = [c.name for c in header.columns if c.kind == ColKind.RESIDUAL]
        rows.append({"column": "(residual rows: " + ", ".join(names) + ")", "kind": "nested",
                     "nullable": False, "codec": "row-major values", "bytes": r.end - at})
        r.pos = r.end
    return header


def _nested_slots(h0: Any, n_levels: int) -> dict[tuple[int, str], Any]:
    """The nested units' own slots of a shredded batch (none when its note cannot be planned:
    explain still lists the columns, only without the unit names)."""
    if h0.shred is None:
        return {}
    try:
        _, nodes = build_plan(h0, n_levels)
    except DecodeError:
        return {}
    return unit_slots(list(nodes.values()))


def _label_nested(rows: list[dict[str, Any]], nested: dict[tuple[int, str], Any], level: int) -> None:
    """Prefix the codec of each nested unit's own slot with the unit's reference name
    (``list lengths: PackFor``), as dictionary codes are (``dictionary codes: ...``)."""
    for row in rows:
        unit = nested.get((level, row["column"]))
        if unit is not None:
            row["codec"] = f"{unit.reference}: {row['codec']}"


def _second_payload(buf: Any, body_at: int, info: Any, header: Any, ctx: Any) -> int:
    """Offset of a time column's nanoseconds payload (after its seconds payload)."""
    from .codecs.qpack import skip_payload

    r = ByteReader(buf, body_at)
    skip_payload(r)
    return r.pos
