"""The F0 PackBlock encoding kernel writes exactly what the per-block codec units write.

``qdf_kernels.block_encode.block_encode`` picks and writes every 256-row block in one
call; :meth:`PerBlock.encode_each` runs the v1 picker of ``codecs/picker.py`` over the
codec units once per block. Their bytes must be equal for every input, so the kernel
keeps the Go library's choice block for block, and the payload must decode back to
the values.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from qdf_columnar.codecs.intenc import _CHILD, encode_int_array
from qdf_columnar.codecs.ints.blocks import BLOCK
from qdf_columnar.codecs.ints.unit import Plan
from qdf_columnar.codecs.qpack import decode_int_payload
from qdf_columnar.codecs.registry import payload_name
from qdf_columnar.codecs.stats import compute_stats
from qdf_columnar.format.reader import ByteReader
from qdf_columnar.format.tags import QPackTag


def _kernel_and_reference(values: np.ndarray) -> tuple[bytes, bytes]:
    signed = values.dtype.kind == "i"
    u = np.ascontiguousarray(values, dtype=np.int64 if signed else np.uint64).view(np.uint64)
    s = compute_stats(u, signed)
    fast, ref = bytearray(), bytearray()
    BLOCK.encode(fast, s, Plan(BLOCK.name, 0), _CHILD)
    BLOCK.encode_each(ref, s, _CHILD)
    return bytes(fast), bytes(ref)


def _block_tags(buf: bytes, n: int) -> set[str]:
    """The sub-codec of every block of a PackBlock payload (tag after the offset table)."""
    nblocks = (n + 255) // 256
    r = ByteReader(buf, 3)
    r.uvarint("n")
    offs = np.frombuffer(r.take(4 * nblocks, "offsets"), dtype="<u4")
    return {payload_name(buf[r.pos + int(o)]) for o in offs}


def _mixed(rng: np.random.Generator) -> np.ndarray:
    """Blocks of every sub-codec: runs, a constant, a small range, a sorted stretch, a few
    distinct values, rare outliers, and full-width noise."""
    parts = [
        np.repeat(rng.integers(0, 50, 20), rng.integers(5, 40, 20)),  # RLE
        np.full(300, 7),  # FOR at width 0
        rng.integers(0, 1000, 400),  # FOR
        np.cumsum(rng.integers(1, 4, 500)),  # Delta+FOR
        rng.choice([3, 9, 200, 4000, 1 << 35], 600),  # dictionary
        np.where(rng.random(700) < 0.02, rng.integers(0, 2**40, 700), rng.integers(0, 16, 700)),  # PFOR
        rng.integers(0, 2**62, 260),  # raw
    ]
    return np.concatenate(parts).astype(np.int64)


@pytest.mark.parametrize("signed", [True, False])
def test_every_sub_codec_matches_the_reference_and_round_trips(signed: bool) -> None:
    rng = np.random.default_rng(7)
    v = _mixed(rng)
    if signed:
        v = v - (1 << 20)
    values = v if signed else v.astype(np.uint64)
    fast, ref = _kernel_and_reference(values)
    assert fast == ref
    assert _block_tags(fast, len(values)) == {"raw", "for", "delta_for", "rle", "dict", "pfor"}
    out = bytearray()
    encode_int_array(out, values, force="block")
    assert bytes(out) == fast
    back = decode_int_payload(ByteReader(fast, 0), n=len(values))
    np.testing.assert_array_equal(back, values)


_INTS = st.one_of(
    hnp.arrays(np.int64, st.integers(1, 1300), elements=st.integers(-(2**63), 2**63 - 1)),
    hnp.arrays(np.int64, st.integers(1, 1300), elements=st.integers(-40, 40)),
    hnp.arrays(np.uint64, st.integers(1, 1300), elements=st.integers(0, 2**64 - 1)),
    hnp.arrays(np.uint64, st.integers(1, 1300), elements=st.sampled_from([0, 1, 5, 2**33, 2**64 - 1])),
)


@settings(max_examples=150, deadline=None)
@given(_INTS, st.integers(0, 3))
def test_kernel_bytes_equal_the_codec_units(values: np.ndarray, shape: int) -> None:
    if shape == 1:  # runs
        values = np.repeat(values, 9)[: max(len(values), 1)]
    elif shape == 2:  # sorted
        values = np.sort(values)
    elif shape == 3:  # a block boundary inside a run of one value
        values = np.concatenate([values, np.full(300, values[0])])
    fast, ref = _kernel_and_reference(values)
    assert fast == ref
    assert fast[0] == QPackTag.BLOCK
    back = decode_int_payload(ByteReader(fast, 0), n=len(values))
    np.testing.assert_array_equal(back, values)
