"""The whole-body entropy pass through the public API (mode="compression" / Options.RANS)."""

from __future__ import annotations

import numpy as np
import pandas as pd

import qdf_columnar as qdf
from qdf_columnar.format.tags import Flag


def _logs(n: int) -> list[dict]:
    rng = np.random.default_rng(0)
    return [{"level": ["INFO", "WARN", "ERROR"][int(rng.integers(0, 3))], "msg": f"request {i % 17} handled",
             "code": int(rng.choice([200, 404, 500]))} for i in range(n)]


def test_dumps_applies_the_pass_only_when_smaller() -> None:
    small = qdf.dumps({"a": 1}, mode=qdf.Options.DENSE | qdf.Options.RANS)
    assert not small[4] & Flag.RANS  # under 512 bytes: never applied
    rows = _logs(300)
    big = qdf.dumps(rows, mode=qdf.Options.RANS)
    assert big[4] & Flag.RANS and len(big) < len(qdf.dumps(rows, mode="speed"))
    assert qdf.loads(big) == rows


def test_encode_compression_mode_round_trips_and_filters() -> None:
    df = pd.DataFrame(_logs(5000))
    buf = qdf.encode(df, mode="compression")
    assert buf[4] & Flag.RANS and len(buf) < len(qdf.encode(df, mode="balanced"))
    pd.testing.assert_frame_equal(qdf.decode(buf), df, check_exact=True)
    got = qdf.decode(buf, columns=["msg"], filter=qdf.col("code") == 500)
    pd.testing.assert_frame_equal(got.reset_index(drop=True), df.loc[df.code == 500, ["msg"]].reset_index(drop=True))
    assert int(qdf.explain(buf)["bytes"].sum()) > 0


def test_with_a_column_index_the_pass_must_save_three_percent() -> None:
    rng = np.random.default_rng(5)
    # random 48-bit ints: bit-packed bodies the byte-wise entropy coder can barely shrink
    t = {"x": rng.integers(0, 2**48, 20_000), "y": rng.integers(0, 2**40, 20_000)}
    indexed = qdf.encode(t, mode="compression")
    assert not indexed[4] & Flag.RANS  # stays seekable: Select reads only its column
    plain = qdf.encode(t, mode="compression", column_index=False)
    no_pass = qdf.encode(t, mode=qdf.Options.COMPRESSION & ~qdf.Options.RANS)
    if plain[4] & Flag.RANS:  # without an index any saving is taken, as the reference does
        assert len(plain) < len(no_pass)
    # a text-heavy batch still gets the pass (it saves far more than 3 %)
    df = pd.DataFrame(_logs(5000))
    buf = qdf.encode(df, mode="compression")
    assert buf[4] & Flag.RANS
    no_pass = qdf.encode(df, mode=qdf.Options.COMPRESSION & ~qdf.Options.RANS | qdf.Options.COLUMN_INDEX)
    assert len(buf) <= 0.97 * len(no_pass)
