"""String columns decoded for pandas come back as large_string (api.decode_arrow).

pandas converts every string column to ``large_string`` (``pc.cast`` in
``ArrowStringArray``), so a decode for ``output="pandas"`` writes 64-bit offsets in the
first place. The frame must be exactly the one the plain decode gives, and a column
that was ``pd.ArrowDtype(pa.string())`` keeps its type (it is its pandas dtype).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import qdf_columnar as qdf
from qdf_columnar.api import decode_arrow


def _table(n: int = 3000) -> pa.Table:
    rng = np.random.default_rng(7)
    words = np.array(["alpha", "beta", "gamma", "delta", "épsilon", ""])
    return pa.table({
        "few": pa.array(rng.choice(words, n)),  # a dictionary
        "few_null": pa.array(rng.choice(words, n), mask=rng.random(n) < 0.2),
        "unique": pa.array([f"id-{i:06d}-{rng.integers(1 << 40)}" for i in range(n)]),  # FSST or per value
        "mid": pa.array([f"w{int(v)}" for v in rng.integers(0, 900, n)]),  # beyond 256 entries
        "big": pa.array(rng.choice(words, n), type=pa.large_string()),
        "x": rng.integers(0, 100, n),
    })


@pytest.mark.parametrize("mode", ["speed", "balanced", "compression"])
def test_a_pandas_decode_gives_the_same_frame_with_wide_strings(mode: str) -> None:
    t = _table()
    buf = qdf.encode(t, mode=mode)
    want = t.to_pandas()
    pd.testing.assert_frame_equal(qdf.decode(buf), want, check_exact=True)
    pd.testing.assert_frame_equal(qdf.decode(buf, columns=["mid", "x"]), want[["mid", "x"]], check_exact=True)
    got = qdf.decode(buf, filter=qdf.col("few") == "beta")
    pd.testing.assert_frame_equal(got, want[want["few"] == "beta"].reset_index(drop=True), check_exact=True)
    cats = qdf.decode(buf, categories=["few"])
    assert isinstance(cats["few"].dtype, pd.CategoricalDtype)
    assert cats["few"].astype(object).tolist() == want["few"].astype(object).tolist()
    # Arrow output keeps the types written
    assert qdf.decode(buf, output="arrow").schema == t.schema


def test_columnar_batches_decode_their_strings_wide_for_pandas() -> None:
    t = _table()
    for mode in ("balanced", "compression"):
        wide = decode_arrow(qdf.encode(t, mode=mode), for_pandas=True)
        assert all(wide.schema.field(c).type == pa.large_string() for c in ("few", "few_null", "unique", "mid"))
        assert wide.cast(pa.schema([f.with_type(t.schema.field(f.name).type) for f in wide.schema])).equals(t)


@pytest.mark.parametrize("mode", ["balanced", "compression"])
def test_files_read_to_pandas_need_no_string_cast(mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    t = _table()
    blob = qdf.write_qdf(t, None, mode=mode, row_group_size=1000)
    want = t.to_pandas()
    keep = want[want["mid"] >= "w5"][["unique", "few_null"]].reset_index(drop=True)
    casts: list[pa.DataType] = []
    real = pc.cast
    monkeypatch.setattr(pc, "cast", lambda arr, *a, **k: casts.append(arr.type) or real(arr, *a, **k))
    whole = qdf.read_qdf(blob)
    got = qdf.read_qdf(blob, columns=["unique", "few_null"], filter=qdf.col("mid") >= "w5")
    assert pa.string() not in casts  # pandas had nothing to widen
    monkeypatch.undo()
    pd.testing.assert_frame_equal(whole, want, check_exact=True)
    pd.testing.assert_frame_equal(got, keep, check_exact=True)
    assert qdf.read_qdf(blob, output="arrow").schema == t.schema


def test_an_arrow_dtype_string_column_keeps_its_type() -> None:
    df = pd.DataFrame({"a": pd.array(["x", None, "yy"] * 50, dtype=pd.ArrowDtype(pa.string())),
                       "b": ["p", "q", "r"] * 50})
    for mode in ("balanced", "compression"):
        pd.testing.assert_frame_equal(qdf.decode(qdf.encode(df, mode=mode)), df, check_exact=True)
        pd.testing.assert_frame_equal(qdf.read_qdf(qdf.write_qdf(df, None, mode=mode)), df, check_exact=True)
