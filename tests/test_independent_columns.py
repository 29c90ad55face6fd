"""Columns of a balanced / compression batch are independent (#12 item 3).

Every column body is self-contained: decoding column k neither reads the bodies of
the other columns nor depends on intern state they leave. The tests overwrite every
other column body with garbage and still decode column k (projected, and filtered on
itself) to the same values.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import qdf_columnar as qdf
from qdf_columnar.format.header import open_body
from qdf_columnar.format.reader import ByteReader
from qdf_columnar.format.tags import HEADER_SIZE, ColKind, ContainerTag
from qdf_columnar.options import parse_mode
from qdf_columnar.wire.colstruct_read import ColumnDecoder
from qdf_columnar.wire.colstruct_read import read_header as read_colstruct_header
from qdf_columnar.wire.context import DecodeContext
from qdf_columnar.wire.schema_note import is_note
from qdf_columnar.wire.shred_read import shredded_levels


def _table(n: int = 4000) -> pa.Table:
    rng = np.random.default_rng(7)
    words = [f"customer-{i:05d}" for i in rng.integers(0, n * 2 // 3, n)]  # ~55-65% distinct: repeats
    return pa.table({
        "id": pa.array(rng.permutation(n).astype(np.int64)),
        "name": pa.array(words),
        "note": pa.array([w + "-x" if i % 3 else None for i, w in enumerate(words)]),
        "price": pa.array(np.round(rng.normal(100, 20, n), 2)),
        "flag": pa.array(rng.random(n) < 0.3),
        "state": pa.array(rng.choice(["CA", "NY", "TX", "WA", None], n).tolist()),
        "when": pa.array((1_700_000_000_000_000 + rng.integers(0, 10**9, n)).astype("datetime64[us]")),
        "tag": pa.array([f"t{i % 700}" for i in range(n)]),
    })


def _bodies(buf: bytes) -> dict[str, list[tuple[int, int]]]:
    """Byte spans [start, end) of every column body in every container of ``buf``,
    keyed by the column it belongs to (a dictionary level's body counts as its column's)."""
    flags, plain = open_body(buf)
    assert len(plain) == len(buf), "the test needs a buffer without the tANS pass"
    r = ByteReader(plain, HEADER_SIZE)
    ctx = DecodeContext(flags=flags)
    n_levels = shredded_levels(r)
    spans: dict[str, list[tuple[int, int]]] = {}

    def container(owner: str | None) -> object:
        header = read_colstruct_header(r, ctx)
        assert header.has_index, "balanced batches carry a column index"
        dec = ColumnDecoder(r, header, ctx)
        for info in header.all_columns:
            assert info.kind != ColKind.RESIDUAL
            r.pos = info.start
            dec._skip(info)
            assert r.pos == info.start + info.length
            if is_note(info.name, info.kind):  # the schema note: the batch's metadata, read by every decode
                continue
            spans.setdefault(owner or info.name, []).append((info.start, info.start + info.length))
        return header

    if n_levels:
        h0 = container(None)
        dicts = h0.dicts or []
        first_dict = n_levels - len(dicts)
        for k in range(1, n_levels):
            r.u8("level")
            container(dicts[k - first_dict] if k >= first_dict else None)
    else:
        assert r.u8("root") == ContainerTag.COL_STRUCT
        container(None)
    return spans


def _garble(buf: bytes, spans: dict[str, list[tuple[int, int]]], keep: str) -> bytes:
    out = bytearray(buf)
    rng = np.random.default_rng(3)
    for name, ranges in spans.items():
        if name == keep:
            continue
        for lo, hi in ranges:
            out[lo:hi] = rng.integers(0, 256, hi - lo, dtype=np.uint8).tobytes()
    return bytes(out)


@pytest.mark.parametrize("mode", ["balanced", "compression"])
def test_every_column_decodes_with_the_others_garbled(mode: str) -> None:
    table = _table()
    # The tANS pass would hide the layout; the column bodies are the same without it.
    buf = qdf.encode(table, mode=parse_mode(mode, column_index=True) & ~qdf.Options.RANS)
    spans = _bodies(buf)
    assert set(spans) == set(table.column_names)
    for name in table.column_names:
        bad = _garble(buf, spans, keep=name)
        with pytest.raises(qdf.QdfError):  # the garbage is real: a full decode fails
            qdf.decode(bad, output="arrow")
        got = qdf.decode(bad, columns=[name], output="arrow")
        assert got.column(name).equals(table.column(name)), name
        where = qdf.col(name).is_null() | qdf.col(name).is_not_null()
        got = qdf.decode(bad, columns=[name], filter=where, output="arrow")
        assert got.column(name).equals(table.column(name)), name


def test_go_compatible_strings_still_intern_so_a_later_column_needs_the_earlier() -> None:
    # The reference's shapes share the intern table: the switch keeps them (and so the
    # dependency), which is what makes the default's independence a deliberate change.
    table = pa.table({"a": pa.array([f"word-{i % 300:04d}" for i in range(2000)]),
                      "b": pa.array([f"word-{(i * 7) % 300:04d}" for i in range(2000)])})
    buf = qdf.encode(table, mode="balanced", go_compatible=True)
    bad = _garble(buf, _bodies(buf), keep="b")
    try:
        got = qdf.decode(bad, columns=["b"], output="arrow").column("b")
    except qdf.QdfError:
        return
    assert not got.equals(table.column("b"))
