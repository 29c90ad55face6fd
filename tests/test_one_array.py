"""``columns.chunked.one_array``: a one-chunk column is used as it is (no copy), and the
encoder writes the same bytes whatever the column's chunking or slicing."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import qdf_columnar as qdf
from qdf_columnar.columns.chunked import one_array


def test_a_single_flat_chunk_is_not_copied() -> None:
    col = pa.chunked_array([pa.array(np.arange(1000, dtype=np.int64))])
    got = one_array(col)
    assert got.buffers()[1].address == col.chunk(0).buffers()[1].address


@pytest.mark.parametrize("col", [
    pa.chunked_array([pa.array(np.arange(10)), pa.array(np.arange(5))]),  # several chunks
    pa.chunked_array([pa.array(np.arange(10))]).slice(3, 4),  # a slice: offset 3
    pa.chunked_array([pa.array([[1, 2], [3], None, []])]),  # nested: children offsets normalised
    pa.chunked_array([], type=pa.int64()),  # no chunk at all
])
def test_other_columns_are_combined(col: pa.ChunkedArray) -> None:
    got = one_array(col)
    assert isinstance(got, pa.Array) and got.offset == 0 and got.equals(col.combine_chunks())


def test_arrays_pass_through() -> None:
    arr = pa.array([1, 2, 3])
    assert one_array(arr) is arr


@pytest.mark.parametrize("mode", ["speed", "balanced", "compression"])
def test_chunking_and_slicing_do_not_change_the_bytes(mode: str) -> None:
    rng = np.random.default_rng(3)
    n = 5000
    base = pa.table({"i": rng.integers(0, 100, n), "f": np.round(rng.random(n), 2),
                     "s": pa.array(rng.choice(["a", "bb", "ccc"], n)).cast(pa.large_string()),
                     "l": pa.array([[int(x)] * (int(x) % 3) for x in rng.integers(0, 9, n)])})
    whole = qdf.encode(base.slice(100, 4000).combine_chunks(), mode=mode)
    assert qdf.encode(base.slice(100, 4000), mode=mode) == whole
    split = pa.concat_tables([base.slice(100, 1000), base.slice(1100, 3000)])
    assert qdf.encode(split, mode=mode) == whole
    assert qdf.decode(whole, output="arrow").equals(base.slice(100, 4000).combine_chunks())
