"""F1 zone chunks: lossless round trips, Go's header layout, and zone skipping in filters."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import qdf_columnar as qdf
from qdf_columnar.codecs import zone
from qdf_columnar.format.tags import QPackTag

ZONED = qdf.Options.BALANCED | qdf.Options.COLUMN_INDEX | qdf.Options.ZONE_MAP


def _frame(n: int = 5000) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame({
        "id": np.arange(n, dtype=np.int64) * 3 + 7,  # sorted: linear zone map
        "u": rng.integers(0, 1000, n).astype(np.uint64),  # unsorted: min/max zone map
        "x": np.where(rng.random(n) < 0.01, np.nan, rng.normal(size=n)),
        "s": rng.choice(["a", "b"], n),
    })


@pytest.mark.parametrize("n", [511, 512, 513, 5000])
def test_zone_round_trip(n: int) -> None:
    df = _frame(n)
    buf = qdf.encode(df, mode=ZONED)
    codecs = dict(zip(*qdf.explain(buf)[["column", "codec"]].T.values))
    assert (codecs["id"] == "ZoneChunk") == (n >= zone.MIN_ROWS) and (codecs["u"] == "ZoneChunk") == (n >= 512)
    pd.testing.assert_frame_equal(qdf.decode(buf), df, check_exact=True)
    for cols in (["u"], ["x", "id"]):
        pd.testing.assert_frame_equal(qdf.decode(buf, columns=cols), df[cols], check_exact=True)
    no_index = qdf.encode(df, mode=qdf.Options.BALANCED | qdf.Options.ZONE_MAP)
    pd.testing.assert_frame_equal(qdf.decode(no_index, columns=["s"]), df[["s"]], check_exact=True)


def test_header_layout_and_linear_map() -> None:
    out = bytearray()
    zone.write_zone_chunk(out, np.arange(100_000, dtype=np.int64) * 3)  # sorted ids: the linear model fits
    assert out[:4] == bytes([QPackTag.ZONE, zone.KIND_INT, zone.ZMAP_LINEAR, 8])
    out2 = bytearray()
    zone.write_zone_chunk(out2, np.random.default_rng(1).integers(0, 50, 1000))
    assert out2[2] == zone.ZMAP_MINMAX


@pytest.mark.parametrize("expr_fn", [
    lambda c: (c("id") >= 3007) & (c("id") < 3307),
    lambda c: c("id") == 7 + 3 * 4000,
    lambda c: c("u").isin([5, 6]) & (c("s") == "a"),
    lambda c: (c("x") > 2.5) & (c("id") > 0),
    lambda c: (c("id") < 100) | (c("u") == 3),  # OR: no pruning, still correct
])
def test_zone_filters_match_pandas(expr_fn) -> None:
    df = _frame()
    buf = qdf.encode(df, mode=ZONED)
    got = qdf.decode(buf, filter=expr_fn(qdf.col))
    want = qdf.decode(qdf.encode(df), filter=expr_fn(qdf.col))
    pd.testing.assert_frame_equal(got.reset_index(drop=True), want.reset_index(drop=True), check_exact=True)


def test_zones_outside_the_range_are_not_decoded(monkeypatch) -> None:
    df = _frame(20_000)
    buf = qdf.encode(df, mode=ZONED)
    calls = []
    real = zone._decode_zone
    monkeypatch.setattr(zone, "_decode_zone", lambda r, h, z: calls.append(z) or real(r, h, z))
    got = qdf.decode(buf, columns=["id"], filter=(qdf.col("id") >= 30_007) & (qdf.col("id") <= 30_400))
    assert got["id"].tolist() == [v for v in df["id"] if 30_007 <= v <= 30_400]
    zones = (len(df) + 255) // 256
    assert 0 < len(calls) <= 4, f"decoded {len(calls)} of {zones} zones"


def test_hostile_zone_chunks() -> None:
    buf = qdf.encode(_frame(1200), mode=ZONED)
    for k in range(0, len(buf), 7):
        with pytest.raises(qdf.TruncatedError):
            qdf.decode(buf[:k])
    rng = np.random.default_rng(2)
    for pos in rng.integers(5, len(buf), 400):
        bad = bytearray(buf)
        bad[pos] ^= int(rng.integers(1, 256))
        try:
            qdf.decode(bytes(bad), filter=qdf.col("id") > 500)
        except (qdf.DecodeError, qdf.QueryError):
            pass
