"""Nullable float columns handed to pandas without a copy (columns/outputs.py).

A decoded nullable float column's null slots are undefined in Arrow; the owned-frame
path writes NaN into them in place (``fill_null_slots``) and gives pandas the buffer
itself. The frame must equal pyarrow's conversion exactly (NaN payloads of present
values kept bit for bit), accept writes, and not alias anything the caller sees.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from qdf_kernels import columns as ck

import qdf_columnar as qdf
from qdf_columnar.columns import outputs


@pytest.fixture
def every_size(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(outputs, "OWNED_MIN_BYTES", 0)


def _fill(values: np.ndarray, valid: np.ndarray, offset: int) -> np.ndarray:
    """``fill_null_slots`` over ``values`` whose validity starts at bit ``offset``."""
    bits = np.concatenate([np.ones(offset, bool), valid])
    bitmap = np.frombuffer(np.packbits(bits, bitorder="little").tobytes(), dtype=np.uint8)  # read-only, as Arrow's
    out = values.copy()
    u = np.dtype(f"u{out.itemsize}")
    assert ck.fill_null_slots(bitmap, np.int64(offset), out.view(u), out.dtype.type(np.nan).view(u),
                              ck.NULL_LANES[out.itemsize]) == len(out)
    return out


@settings(max_examples=120, deadline=None)
@given(n=st.integers(0, 300), offset=st.integers(0, 17), p=st.sampled_from([0.0, 0.05, 0.5, 0.95, 1.0]),
       wide=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_fill_null_slots_writes_nan_exactly_under_the_nulls(n: int, offset: int, p: float, wide: bool,
                                                             seed: int) -> None:
    rng = np.random.default_rng(seed)
    values = rng.normal(size=n).astype(np.float64 if wide else np.float32)
    valid = rng.random(n) >= p
    got = _fill(values, valid, offset)
    assert np.isnan(got[~valid]).all()
    assert np.array_equal(got[valid].view(f"u{values.itemsize}"), values[valid].view(f"u{values.itemsize}"))


@pytest.mark.parametrize("mode", ["speed", "balanced", "compression"])
@pytest.mark.parametrize("n", [1, 13, 4000])
def test_nullable_floats_come_back_as_pyarrow_converts_them(every_size: None, mode: str, n: int) -> None:
    rng = np.random.default_rng(n)
    payload_nan = np.frombuffer(np.array([0x7FF8_0000_0000_0ABC], np.uint64).tobytes(), np.float64)[0]
    vals = np.round(rng.normal(size=n), 2)
    vals[rng.random(n) < 0.1] = payload_nan  # NaN values (not nulls) keep their bits
    t = pa.table({
        "f64": pa.array(vals, mask=rng.random(n) < 0.3, from_pandas=False),
        "f32": pa.array(rng.random(n).astype(np.float32), mask=rng.random(n) < 0.5),
        "dict_f": pa.array(rng.choice([0.5, 1.5, 2.5], n), mask=rng.random(n) < 0.2),  # a dictionary level
        "all_null": pa.array(np.zeros(n), mask=np.ones(n, bool)),
        "i": rng.integers(0, 9, n),
    })
    want = t.to_pandas()
    for got in (qdf.decode(qdf.encode(t, mode=mode)), qdf.read_qdf(qdf.write_qdf(t, None, mode=mode))):
        pd.testing.assert_frame_equal(got, want, check_exact=True)
        for c in ("f64", "f32"):  # present values bit for bit, NaN payloads included
            present = t.column(c).is_valid().to_numpy(zero_copy_only=False)
            bits = f"u{got[c].dtype.itemsize}"
            assert np.array_equal(got[c].to_numpy().view(bits)[present], want[c].to_numpy().view(bits)[present])
        got.loc[0, "f64"] = 7.0  # writable
        assert got.loc[0, "f64"] == 7.0


def test_a_frame_of_nullable_floats_is_not_copied_into_blocks() -> None:
    n = (outputs.OWNED_MIN_BYTES // 16) + 1
    rng = np.random.default_rng(1)
    t = pa.table({"a": pa.array(np.round(rng.random(n), 1), mask=rng.random(n) < 0.3),
                  "b": pa.array(np.round(rng.random(n), 1), mask=rng.random(n) < 0.3)})
    df = qdf.decode(qdf.encode(t))
    pd.testing.assert_frame_equal(df, t.to_pandas(), check_exact=True)
    assert len(t.to_pandas()._mgr.blocks) == 1  # pyarrow copies both into one 2-D block
    assert len(df._mgr.blocks) == 2  # the decoder's own buffers, one per column
    again = qdf.decode(qdf.encode(t))
    df.loc[0, "a"] = -1.0
    assert again.loc[0, "a"] != -1.0


@pytest.mark.parametrize("mode", ["balanced", "compression"])  # (speed writes this table row-major)
def test_the_decoder_writes_nan_under_the_nulls_so_the_frame_makes_no_pass(
        every_size: None, monkeypatch: pytest.MonkeyPatch, mode: str) -> None:
    # The decoder spreads a nullable float column with NaN under its nulls and marks
    # the buffer; the frame then takes it as it is. A buffer from elsewhere still gets
    # NaN written in place.
    calls: list[int] = []
    real = ck.fill_null_slots
    monkeypatch.setattr(ck, "fill_null_slots", lambda *a: calls.append(1) or real(*a))
    rng = np.random.default_rng(3)
    n = 5000
    t = pa.table({
        "f64": pa.array(np.round(rng.normal(size=n), 2), mask=rng.random(n) < 0.3),
        "f32": pa.array(rng.random(n).astype(np.float32), mask=rng.random(n) < 0.5),
        "dict_f": pa.array(rng.choice([0.5, 1.5, 2.5], n), mask=rng.random(n) < 0.2),
        "wide_dict_f": pa.array(rng.choice(np.round(rng.normal(size=300), 3), n), mask=rng.random(n) < 0.2),
    })
    for got in (qdf.decode(qdf.encode(t, mode=mode)), qdf.read_qdf(qdf.write_qdf(t, None, mode=mode))):
        pd.testing.assert_frame_equal(got, t.to_pandas(), check_exact=True)
    assert calls == []
    arrow_made = pa.table({"x": pa.array([1.5, None, 2.5])})
    assert outputs.convert_output(arrow_made, "pandas", owned=True)["x"].isna().tolist() == [False, True, False]
    assert calls == [1]
