"""The encoder's present values of a nullable column: one kernel pass, pyarrow's drop_null.

``colstruct_write._present`` compacts fixed-width columns with
``qdf_kernels.columns.gather_present_into`` (a branch-free pass over the validity
bits); its result must be ``arr.drop_null()`` exactly, at every bit offset.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qdf_columnar.wire.colstruct_write import _present

_TYPES = [pa.int8(), pa.uint16(), pa.int32(), pa.int64(), pa.uint64(), pa.float16(), pa.float32(), pa.float64(),
          pa.date32(), pa.timestamp("us", tz="UTC"), pa.duration("s"), pa.time64("ns")]


@settings(max_examples=200, deadline=None)
@given(typ=st.sampled_from(_TYPES), n=st.integers(0, 300), nulls=st.floats(0, 1), offset=st.integers(0, 17),
       seed=st.integers(0, 2**32 - 1))
def test_equals_drop_null(typ: pa.DataType, n: int, nulls: float, offset: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    width = typ.bit_width // 8
    raw = rng.integers(0, 256, (n + offset) * width, dtype=np.uint8)
    mask = rng.random(n + offset) < nulls
    validity = pa.array(~mask).buffers()[1]  # an Arrow bitmap, 1 = present
    arr = pa.Array.from_buffers(typ, n + offset, [validity, pa.py_buffer(raw)]).slice(offset)
    got = _present(arr, arr.null_count > 0)
    want = arr.drop_null()
    assert got.type == want.type and len(got) == len(want) and got.null_count == 0
    view = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[width]
    bits = [np.frombuffer(a.buffers()[1], view, count=len(a) + a.offset)[a.offset:] for a in (got, want)]
    assert np.array_equal(*bits)  # bit for bit: NaN payloads too


@pytest.mark.parametrize("typ", [pa.bool_(), pa.string(), pa.decimal128(10, 2)])
def test_other_types_take_pyarrows_filter(typ: pa.DataType) -> None:
    values = {"bool": [True, None, False], "string": ["a", None, "b"]}.get(str(typ), None)
    arr = pa.array(values if values is not None else [None, 1, 2], type=typ)
    assert _present(arr, True).equals(arr.drop_null())
