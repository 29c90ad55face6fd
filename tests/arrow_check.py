"""Bit-exact comparison of Arrow tables (NaN payloads and -0.0 must survive)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa


def assert_tables_bit_equal(got: pa.Table, want: pa.Table) -> None:
    assert got.column_names == want.column_names, (got.column_names, want.column_names)
    assert got.num_rows == want.num_rows
    for name in want.column_names:
        g = got.column(name).combine_chunks()
        w = want.column(name).combine_chunks()
        assert g.type == w.type, f"{name}: {g.type} != {w.type}"
        assert_arrays_bit_equal(g, w, name)


def assert_arrays_bit_equal(g: pa.Array, w: pa.Array, name: str = "") -> None:
    assert g.null_count == w.null_count, name
    assert np.array_equal(np.asarray(g.is_null()), np.asarray(w.is_null())), name
    t = w.type
    if pa.types.is_floating(t):
        width = {16: np.uint16, 32: np.uint32, 64: np.uint64}[t.bit_width]
        gv = g.fill_null(0).to_numpy(zero_copy_only=False).view(width)
        wv = w.fill_null(0).to_numpy(zero_copy_only=False).view(width)
        assert np.array_equal(gv, wv), name
    else:
        assert g.equals(w), f"{name}: {g} != {w}"
