"""A full decode holds one column's scan at a time, not every column's.

The scan of a batch decodes the integer payloads it meets (a dictionary column's codes,
a nullable column's present values); building each column's array from them is the
last use of those buffers. Each scanned column releases them once its array is built,
so the decode's peak is about the output plus one column's scan. Measured with
tracemalloc, which sees numpy's allocations (every decoder buffer comes from numpy).
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pyarrow as pa
import pytest

import qdf_columnar as qdf

N = 200_000
COLS = 6


def _table(nullable: bool) -> pa.Table:
    rng = np.random.default_rng(3)
    cols = {}
    for j in range(COLS):
        # 40 distinct values: a dictionary level. The codes walk up and down by one,
        # so they are Delta+FOR coded, a payload the scan decodes (FOR codes would
        # be gathered straight from their packed bits, with no code array).
        table = np.sort(np.round(rng.normal(size=40), 2)) + j  # codes rank the values
        codes = np.abs((np.cumsum(rng.integers(-1, 2, N)) + 39) % 78 - 39)
        values = table[codes]
        mask = (rng.random(N) < 0.2) if nullable else None
        cols[f"c{j}"] = pa.array(values, mask=mask)
    return pa.table(cols)


def _peak_over_output(buf: bytes) -> tuple[int, int]:
    qdf.decode(buf, output="arrow")  # compile and warm
    tracemalloc.start()
    try:
        out = qdf.decode(buf, output="arrow")
        current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert out.num_rows == N
    return peak - current, current


@pytest.mark.parametrize("nullable", [False, True])
def test_peak_is_the_output_plus_about_one_column(nullable: bool) -> None:
    t = _table(nullable)
    buf = qdf.encode(t, mode="balanced")
    assert len(qdf.decode(buf, output="arrow").schema) == COLS
    extra, kept = _peak_over_output(buf)
    one_column = N * 8
    assert kept >= COLS * one_column * 0.9  # the output itself was traced
    assert extra <= 2.5 * one_column, f"peak is {extra / one_column:.1f} columns over the output"
    assert qdf.decode(buf, output="arrow").equals(t)
