"""DataFrames built on the decoder's own buffers (columns/outputs.py ``_owned_frame``).

A decode that copied what it read hands its non-null integer and float columns to
pandas as writable views instead of letting pyarrow copy them into 2-D blocks. The
frame must equal pyarrow's conversion exactly, accept writes, and never alias memory
the caller can see (``no_copy=True`` input) or another column.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import qdf_columnar as qdf
from qdf_columnar.columns import outputs


def _table(n: int, seed: int = 0) -> pa.Table:
    rng = np.random.default_rng(seed)
    return pa.table({
        "i64": rng.integers(-(2**40), 2**40, n),
        "u8": rng.integers(0, 200, n).astype(np.uint8),
        "i32": rng.integers(-1000, 1000, n).astype(np.int32),
        "f64": rng.random(n).round(3),
        "f32": rng.random(n).astype(np.float32),
        "nullable": pa.array(rng.integers(0, 9, n), mask=rng.random(n) < 0.2),
        "s": pa.array(rng.choice(["a", "bb", "ccc"], n)),
        "b": pa.array(rng.random(n) < 0.5),
        "ts": pa.array(np.arange(n).astype("datetime64[s]").astype("datetime64[us]")),
        "const": np.full(n, 7, dtype=np.int64),
    })


@pytest.fixture
def every_size(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(outputs, "OWNED_MIN_BYTES", 0)  # take the owned path on small tables too


@pytest.mark.parametrize("mode", ["speed", "balanced", "compression"])
@pytest.mark.parametrize("n", [0, 1, 300, 5000])
def test_an_owned_frame_equals_pyarrows_conversion(every_size: None, mode: str, n: int) -> None:
    t = _table(n)
    buf = qdf.encode(t, mode=mode)
    want = t.to_pandas()
    pd.testing.assert_frame_equal(qdf.decode(buf), want, check_exact=True)
    pd.testing.assert_frame_equal(qdf.read_qdf(qdf.write_qdf(t, None, mode=mode)), want, check_exact=True)
    cols = ["f64", "s", "i64"]
    pd.testing.assert_frame_equal(qdf.decode(buf, columns=cols), want[cols], check_exact=True)
    kept = qdf.decode(buf, filter=[("u8", "<", 50)])
    pd.testing.assert_frame_equal(kept, want[want["u8"] < 50].reset_index(drop=True), check_exact=True)


def test_an_owned_frame_takes_writes_and_shares_nothing(every_size: None) -> None:
    t = _table(2000)
    buf = qdf.encode(t)
    df = qdf.decode(buf)
    df.iloc[0, 0] = 123  # the decoder's buffer, handed over writable
    df.loc[1, "f64"] = -1.5
    df["u8"] += 1
    assert df.iloc[0, 0] == 123 and df.loc[1, "f64"] == -1.5
    again = qdf.decode(buf)  # a second decode of the same bytes sees none of it
    pd.testing.assert_frame_equal(again, t.to_pandas(), check_exact=True)
    # Equal columns are still two buffers: a write to one leaves the other alone.
    twins = pa.table({"x": np.arange(1000), "y": np.arange(1000)})
    df2 = qdf.decode(qdf.encode(twins))
    df2.loc[0, "x"] = -5
    assert df2.loc[0, "y"] == 0


def test_no_copy_input_is_never_written_through(every_size: None) -> None:
    t = pa.table({"x": np.arange(5000, dtype=np.int64), "y": np.arange(5000, dtype=np.float64)})
    raw = bytearray(qdf.encode(t, mode="speed"))
    before = bytes(raw)
    df = qdf.decode(raw, no_copy=True)
    df.loc[0, "x"] = 99
    df["y"] *= 2
    assert bytes(raw) == before


@pytest.mark.parametrize("mode", ["speed", "balanced"])
def test_a_decode_shares_no_byte_with_a_bytearray_input(mode: str) -> None:
    """Without no_copy nothing decoded is a view of the input, presence bitmaps included:
    changing the bytearray afterwards changes nothing decoded."""
    rng = np.random.default_rng(3)
    vals = np.round(rng.normal(size=4000), 1)
    mask = rng.random(4000) < 0.2
    t = pa.table({"f": pa.array(vals, mask=mask), "i": pa.array(rng.integers(0, 50, 4000), mask=mask),
                  "s": pa.array(rng.choice(["a", "bb", "ccc"], 4000).astype(object), mask=mask),
                  "u": pa.array([f"id-{k:08x}" for k in rng.integers(0, 1 << 31, 4000)])})
    raw = bytearray(qdf.encode(t, mode=mode))
    got = qdf.decode(raw, output="arrow")
    assert got.equals(t)
    raw[5:] = bytes(len(raw) - 5)  # everything after the header zeroed
    assert got.equals(t)


def test_small_frames_keep_pyarrows_layout() -> None:
    t = _table(100)
    df = qdf.decode(qdf.encode(t))
    assert len(t.to_pandas()._mgr.blocks) == len(df._mgr.blocks)  # below OWNED_MIN_BYTES: pyarrow's conversion


def test_a_large_numeric_frame_is_not_copied_into_blocks() -> None:
    n = (outputs.OWNED_MIN_BYTES // 24) + 1
    t = pa.table({"a": np.arange(n, dtype=np.int64), "a2": np.arange(n, dtype=np.int64) * 3,
                  "b": np.arange(n, dtype=np.float64), "s": ["q"] * n})
    df = qdf.decode(qdf.encode(t))
    pd.testing.assert_frame_equal(df, t.to_pandas(), check_exact=True)
    assert len(t.to_pandas()._mgr.blocks) == 3  # pyarrow puts both int64 columns in one block
    assert len(df._mgr.blocks) == 4  # one per column: nothing copied into a shared block
    df.loc[0, "a"] = -1
    df.loc[n - 1, "b"] = 0.25
    assert df.loc[0, "a"] == -1 and df.loc[n - 1, "b"] == 0.25



def test_a_mid_size_frame_is_handed_over_only_when_every_column_can_be() -> None:
    """Below OWNED_MIN_BYTES, a frame of numeric columns only is built on the decoder's
    buffers (no second conversion of other columns to pay for); the same columns next
    to a string column keep pyarrow's conversion, which is cheaper there."""
    k = 2
    need = outputs._owned_threshold(k, True)
    assert need < outputs.OWNED_MIN_BYTES == outputs._owned_threshold(k, False)
    n = need // (8 * k) + 1
    nums = {"a": np.arange(n, dtype=np.int64), "b": np.arange(n, dtype=np.int64) * 3}
    t = pa.table(nums)
    assert t.nbytes < outputs.OWNED_MIN_BYTES
    df = qdf.decode(qdf.encode(t))
    pd.testing.assert_frame_equal(df, t.to_pandas(), check_exact=True)
    assert len(t.to_pandas()._mgr.blocks) == 1  # pyarrow copies both into one 2-D block
    assert len(df._mgr.blocks) == 2  # the decoder's own buffers, one per column
    df.loc[0, "a"] = -1
    assert df.loc[0, "a"] == -1
    mixed = pa.table({**nums, "s": ["q"] * n})
    got = qdf.decode(qdf.encode(mixed))
    pd.testing.assert_frame_equal(got, mixed.to_pandas(), check_exact=True)
    assert len(got._mgr.blocks) == len(mixed.to_pandas()._mgr.blocks)  # pyarrow's conversion
    small = pa.table({c: v[: n // 4] for c, v in nums.items()})  # below the threshold: pyarrow's too
    assert len(qdf.decode(qdf.encode(small))._mgr.blocks) == len(small.to_pandas()._mgr.blocks)


def test_a_batch_without_pandas_metadata_is_handed_over_from_a_lower_threshold() -> None:
    """A batch that did not come from a DataFrame needs no zero-row conversion to learn its
    labels and dtypes, so its numeric columns are handed over from OWNED_PLAIN_MIN_BYTES
    even next to a string column; a DataFrame's batch of the same size keeps pyarrow's
    conversion there. Both equal pyarrow's conversion and take writes."""
    assert outputs.OWNED_PLAIN_MIN_BYTES < outputs.OWNED_MIN_BYTES
    n = outputs.OWNED_PLAIN_MIN_BYTES // 24 + 1
    rng = np.random.default_rng(3)
    t = pa.table({"a": np.arange(n, dtype=np.int64), "b": np.arange(n, dtype=np.int64) * 7,
                  "s": pa.array(rng.choice(["q", "rr"], n)), "f": pa.array(rng.random(n), mask=rng.random(n) < 0.1)})
    assert t.nbytes < outputs.OWNED_MIN_BYTES
    want = t.to_pandas()
    assert len(want._mgr.blocks) == 3  # pyarrow copies a and b into one 2-D block
    for df in (qdf.decode(qdf.encode(t)), qdf.read_qdf(qdf.write_qdf(t, None))):
        pd.testing.assert_frame_equal(df, want, check_exact=True)
        assert len(df._mgr.blocks) == 4  # a, b and f are the decoder's buffers, one block each
        df.loc[0, "a"] = -1
        df.loc[n - 1, "f"] = 0.5
        assert df.loc[0, "a"] == -1 and df.loc[1, "b"] == 7 and df.loc[n - 1, "f"] == 0.5
    got = qdf.decode(qdf.encode(want))  # pandas metadata: below OWNED_MIN_BYTES, pyarrow's conversion
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    assert len(got._mgr.blocks) == 3


def test_the_hand_over_threshold_grows_with_the_columns_and_is_capped() -> None:
    got = [outputs._owned_threshold(k, True) for k in (1, 2, 5, 20, 200)]
    assert got == sorted(got) and got[0] > 0 and got[-1] == outputs.OWNED_MIN_BYTES

def _frames() -> list[pd.DataFrame]:
    rng = np.random.default_rng(4)
    n = 400
    base = pd.DataFrame({
        "i": rng.integers(-50, 50, n), "f": rng.random(n), "u": rng.integers(0, 9, n).astype(np.uint16),
        "s": rng.choice(["x", "y"], n), "nullable": pd.array(rng.integers(0, 5, n), dtype="Int64"),
        "cat": pd.Categorical(rng.choice(["lo", "hi"], n)), "when": pd.date_range("2020", periods=n, tz="UTC"),
    })
    named = base.set_index("s")
    multi = base.set_index(["s", "u"])
    int_labels = pd.DataFrame({0: rng.random(n), 1: rng.integers(0, 3, n), 2: rng.choice(["a", "b"], n)})
    cols = pd.MultiIndex.from_tuples([("a", "x"), ("a", "y"), ("b", "x")], names=["top", "sub"])
    multi_cols = pd.DataFrame(np.column_stack([rng.random(n), rng.random(n), rng.random(n)]), columns=cols)
    offset_index = pd.DataFrame({"v": rng.random(n), "w": rng.integers(0, 9, n)},
                                index=pd.RangeIndex(10, 10 + 2 * n, 2))
    return [base, named, multi, int_labels, multi_cols, offset_index, base[["i", "f"]]]


@pytest.mark.parametrize("k", range(7))
def test_dataframes_round_trip_through_an_owned_frame(every_size: None, k: int) -> None:
    df = _frames()[k]
    for mode in ("balanced", "speed"):
        got = qdf.decode(qdf.encode(df, mode=mode))
        pd.testing.assert_frame_equal(got, df, check_exact=True)
        got.iloc[0, 0] = got.iloc[1, 0]  # writable, whatever the layout
    pd.testing.assert_frame_equal(qdf.read_qdf(qdf.write_qdf(df, None)), df, check_exact=True)
    if not isinstance(df.columns, pd.MultiIndex):  # columns= takes field names
        first = df.columns[0]
        pd.testing.assert_frame_equal(qdf.decode(qdf.encode(df), columns=[str(first)]), df[[first]], check_exact=True)
