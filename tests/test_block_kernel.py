"""The F0 PackBlock kernel decodes exactly what the per-block Python reader decodes.

``qdf_kernels.blocks.block_decode`` walks every block of a PackBlock payload in one
call; anything it does not take (a nested block payload, damage) goes back to the
Python reader. So for any bytes, the result with the kernel must equal the result
without it: the same values, or the same error type at the same offset.
"""

from __future__ import annotations

import numpy as np
import pytest
from qdf_kernels import blocks

from qdf_columnar.codecs import intdec
from qdf_columnar.codecs.intenc import encode_int_array
from qdf_columnar.codecs.ints import blocks as block_unit
from qdf_columnar.codecs.qpack import decode_int_payload
from qdf_columnar.errors import QdfError
from qdf_columnar.format.reader import ByteReader
from qdf_columnar.format.tags import Kind, QPackTag
from qdf_columnar.format.varint import encode_uvarint


def _payload(values: np.ndarray) -> bytes:
    out = bytearray()
    encode_int_array(out, values, force="block")
    assert out[0] == QPackTag.BLOCK
    return bytes(out)


def _decode(buf: bytes, n: int | None) -> tuple[str, object]:
    try:
        r = ByteReader(buf, 0)
        v = decode_int_payload(r, n=n)
        return "ok", (v.dtype.str, v.tolist(), r.pos)
    except QdfError as exc:
        return type(exc).__name__, exc.offset


def _both(buf: bytes, n: int | None, monkeypatch: pytest.MonkeyPatch) -> tuple[object, object]:
    with_kernel = _decode(buf, n)
    with monkeypatch.context() as m:
        m.setattr(block_unit.kblocks, "block_decode", lambda *a: blocks.ERR_UNSUPPORTED)
        without = _decode(buf, n)
    return with_kernel, without


def _mixed(rng: np.random.Generator, signed: bool) -> np.ndarray:
    """Runs, constants, small ranges, sorted stretches, outliers, a few distinct values:
    blocks of every sub-codec."""
    parts = [
        np.repeat(rng.integers(0, 50, 20), rng.integers(5, 40, 20)),  # RLE
        np.full(300, 7),  # constant FOR
        rng.integers(0, 1000, 400),  # FOR
        np.cumsum(rng.integers(1, 4, 500)),  # Delta+FOR
        rng.choice([3, 9, 200, 4000], 600),  # dictionary
        np.where(rng.random(700) < 0.02, rng.integers(0, 2**40, 700), rng.integers(0, 16, 700)),  # PFOR
        rng.integers(0, 2**62, 260),  # raw
    ]
    v = np.concatenate(parts)
    if signed:
        v = v.astype(np.int64) - (v.max() // 2 if v.size else 0)
        return v
    return v.astype(np.uint64)


@pytest.mark.parametrize("signed", [True, False])
@pytest.mark.parametrize("seed", range(4))
def test_kernel_matches_the_python_reader(signed: bool, seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(seed)
    vals = _mixed(rng, signed)
    buf = _payload(vals)
    got, ref = _both(buf, len(vals), monkeypatch)
    assert got == ref
    assert got[0] == "ok" and got[1][1] == vals.tolist() and got[1][2] == len(buf)
    calls = []  # the kernel really ran: one payload read, none per block
    orig = intdec._ReadEach.read

    def spy(self, r, expect, copy, depth):  # noqa: ANN001, ANN202
        calls.append(expect)
        return orig(self, r, expect, copy, depth)

    monkeypatch.setattr(intdec._ReadEach, "read", spy)
    r = ByteReader(buf, 0)
    intdec.read_int(r, len(vals), True, True)
    assert calls == [len(vals)]


@pytest.mark.parametrize("seed", range(6))
def test_damaged_block_payloads_fail_alike(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(100 + seed)
    vals = _mixed(rng, bool(seed % 2))
    buf = bytearray(_payload(vals))
    for _ in range(150):
        bad = bytearray(buf)
        for at in rng.integers(1, len(bad), rng.integers(1, 4)):
            bad[at] = int(rng.integers(0, 256))
        cut = bytes(bad[: rng.integers(len(bad) // 2, len(bad) + 1)])
        for sample in (bytes(bad), cut):
            got, ref = _both(sample, len(vals), monkeypatch)
            assert got == ref


def test_blocks_of_every_raw_width_and_a_nested_block(monkeypatch: pytest.MonkeyPatch) -> None:
    """Hand-built: raw blocks of 1, 2 and 4 bytes (signed, sign-extended), then a block
    that is itself a block payload (the kernel declines; Python decodes it)."""
    n = 256 * 3 + 10

    def raw(kind: int, width: int, rows: list[int]) -> bytes:
        body = b"".join(int(v).to_bytes(width, "little", signed=True) for v in rows)
        return bytes([QPackTag.RAW, kind]) + encode_uvarint(len(rows)) + body

    rng = np.random.default_rng(1)
    rows = [rng.integers(-100, 100, 256).tolist(), rng.integers(-30000, 30000, 256).tolist(),
            rng.integers(-2**31, 2**31 - 1, 256).tolist(), list(range(-5, 5))]
    blocks_ = [raw(Kind.I8, 1, rows[0]), raw(Kind.I16, 2, rows[1]), raw(Kind.I32, 4, rows[2])]
    inner = raw(Kind.I64, 8, rows[3])
    want = [v for part in rows for v in part]
    for last in (inner, bytes([QPackTag.BLOCK, 0, 8]) + encode_uvarint(10) + (0).to_bytes(4, "little") + inner):
        parts = [*blocks_, last]
        offs, at = [], 0
        for p in parts:
            offs.append(at)
            at += len(p)
        buf = (bytes([QPackTag.BLOCK, 0, 8]) + encode_uvarint(n)
               + b"".join(o.to_bytes(4, "little") for o in offs) + b"".join(parts))
        got, ref = _both(buf, n, monkeypatch)
        assert got == ref
        assert got[0] == "ok" and got[1][1] == want
