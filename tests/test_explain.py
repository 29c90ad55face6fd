"""qdf.explain: a per-column byte breakdown that adds up to the buffer."""

from __future__ import annotations

import doctest

import numpy as np
import pandas as pd
import pyarrow as pa

import qdf_columnar as qdf
from qdf_columnar import breakdown


def test_breakdown_adds_up_and_names_codecs() -> None:
    rng = np.random.default_rng(0)
    n = 2000
    df = pd.DataFrame({
        "ts": pd.date_range("2026-01-01", periods=n, freq="ms", tz="UTC"),
        "level": rng.choice(["INFO", "WARN"], n),
        "id": [f"{x:032x}" for x in rng.integers(0, 2**62, n)],
        "u": pd.array([None if i % 3 else i for i in range(n)], dtype="Int64"),
        "x": rng.random(n),
    })
    for column_index in (True, False):
        buf = qdf.encode(df, column_index=column_index)
        ex = qdf.explain(buf)
        assert int(ex["bytes"].sum()) == len(buf)
        codecs = dict(zip(ex["column"], ex["codec"]))
        assert codecs["level"] == "ColStrDict" and codecs["id"] == "ColStrFSST" and codecs["x"] == "PackALP"
        assert "+" in codecs["ts"]  # seconds payload + nanoseconds payload
        assert ex.loc[ex.column == "u", "nullable"].item()
        assert abs(ex["share"].sum() - 1) < 1e-3


def test_breakdown_of_hybrid_shredded_and_row_major(monkeypatch) -> None:
    monkeypatch.setattr("qdf_columnar.api.SMALL_NESTED_ROWS", 0)  # shred even 3 rows
    t = pa.table({"a": [1, 2, 3], "l": pa.array([[1], [], [2, 3]])})
    ex = qdf.explain(qdf.encode(t, nested="rows"))
    assert int(ex["bytes"].sum()) == len(qdf.encode(t, nested="rows"))
    assert ex["column"].iloc[-1].startswith("(residual rows: l")
    buf = qdf.encode(t)  # shredded: one row per level header and per flat column
    ex = qdf.explain(buf)
    assert int(ex["bytes"].sum()) == len(buf)
    assert ex["column"].tolist() == [
        "(level 0 of 2: header + shape)", "a", "l", "(schema note)", "(level 1 of 2: header + shape)", "l[]"]
    assert ex.set_index("column").loc["l", "kind"] == "int"  # the list lengths
    ex2 = qdf.explain(qdf.dumps({"a": 1}))
    assert ex2["column"].tolist() == ["(row-major value)"]


def test_doctest() -> None:
    assert doctest.testmod(breakdown).failed == 0
