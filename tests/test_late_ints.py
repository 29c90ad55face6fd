"""Integer columns decode late: checked at scan time, unpacked when materialised, and
PackFor / PackRaw / PackPFor bodies and long PackRLE runs answer a row selection
without unpacking the other rows.

The selective path (``IntPayload.take``, the ``take_for`` and ``present_ranks`` kernels)
must give exactly what full decoding then indexing gives, for every width, signedness,
null pattern and codec, and a damaged payload must still fail at scan time with the
same error as before.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from qdf_kernels import bitpack
from qdf_kernels import columns as ck

import qdf_columnar as qdf
from qdf_columnar import api
from qdf_columnar.codecs import intdec
from qdf_columnar.codecs.intenc import encode_int_array
from qdf_columnar.codecs.ints import frame
from qdf_columnar.codecs.qpack import decode_int_payload
from qdf_columnar.errors import InvalidOptionError, QdfError
from qdf_columnar.format.reader import ByteReader
from qdf_columnar.format.tags import QPackTag

CODECS = ["raw", "for", "delta", "rle", "dict", "pfor", "block"]


def _values(rng: np.random.Generator, codec: str, n: int, signed: bool) -> np.ndarray:
    lo = -(2**20) if signed else 0
    if codec == "rle":
        v = np.repeat(rng.integers(lo, 2**20, n), rng.integers(1, 9, n))[:n]
    elif codec == "delta":
        v = np.cumsum(rng.integers(0, 5, n)) + lo
    elif codec == "dict":
        v = rng.choice(np.array([lo, 7, 300, 2**19]), n)
    elif codec == "pfor":
        v = np.where(rng.random(n) < 0.02, rng.integers(0, 2**40, n), rng.integers(0, 16, n)) + lo
    else:
        v = rng.integers(lo, 2**20, n)
    return v.astype(np.int64 if signed else np.uint64)


def _payload(values: np.ndarray, codec: str) -> bytes | None:
    """The payload of ``values`` under ``codec``, or None where its gate refuses them."""
    out = bytearray()
    try:
        encode_int_array(out, values, force=codec)
    except InvalidOptionError:
        return None
    return bytes(out)


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("signed", [True, False])
def test_take_equals_full_decode_then_index(codec: str, signed: bool) -> None:
    rng = np.random.default_rng(len(codec) * 2 + signed)
    tried = 0
    for n in (1, 2, 9, 64, 600, 1000, 4099):
        values = _values(rng, codec, n, signed)
        buf = _payload(values, codec)
        if buf is None:
            continue
        tried += 1
        rows = np.flatnonzero(rng.random(n) < 0.3)
        rows = np.concatenate([[0], rows, [n - 1]]) if n > 1 else np.array([0])
        rows = np.unique(rows).astype(np.int64)
        r = ByteReader(buf, 0)
        payload = intdec.scan_int(r, n)
        assert r.pos == len(buf)  # left after the payload, as read_int leaves it
        got = payload.take(rows)
        assert got.dtype == values.dtype
        np.testing.assert_array_equal(got, values[rows])
        np.testing.assert_array_equal(payload.values(), values)
        np.testing.assert_array_equal(payload.take(rows), values[rows])  # after values(): from the cache
    assert tried >= 3


@pytest.mark.parametrize("bits", [0, 1, 3, 7, 8, 13, 31, 32, 33, 55, 56])
def test_take_for_kernel_every_width(bits: int) -> None:
    rng = np.random.default_rng(bits)
    n = 777
    hi = 1 << bits
    vals = rng.integers(0, hi, n, dtype=np.uint64) if bits else np.zeros(n, dtype=np.uint64)
    src = np.zeros((n * bits + 7) // 8 + 0, dtype=np.uint8)
    bitpack.pack_for(vals, np.uint64(0), bits, src)
    base = np.uint64(2**63 + 5)
    full = np.empty(n, dtype=np.uint64)
    assert bitpack.unpack_for(src, bits, base, full) == n
    rows = np.array([0, 1, 2, n // 2, n - 3, n - 2, n - 1], dtype=np.int64)  # the tail words too
    out = np.empty(len(rows), dtype=np.uint64)
    assert bitpack.take_for(src, bits, base, rows, out) == len(rows)
    np.testing.assert_array_equal(out, full[rows])
    ro = np.frombuffer(src.tobytes(), dtype=np.uint8)  # read-only input buffers, as decode passes
    bitpack.take_for(ro, bits, base, rows, out)
    np.testing.assert_array_equal(out, full[rows])


def test_take_for_rejects_a_width_over_56() -> None:
    out = np.empty(1, dtype=np.uint64)
    assert bitpack.take_for(np.zeros(16, np.uint8), 57, np.uint64(0), np.zeros(1, np.int64), out) < 0


def test_present_ranks_are_the_presence_and_the_prefix_count() -> None:
    rng = np.random.default_rng(3)
    for n in (1, 7, 8, 9, 63, 64, 65, 100, 5000):
        valid = rng.random(n) < rng.random()
        bitmap = np.packbits(valid, bitorder="little")
        prefix = np.concatenate([[0], np.cumsum(valid)])
        for rows in (np.flatnonzero(valid), np.unique(rng.integers(0, n, max(1, n // 3))), np.arange(n), np.zeros(0)):
            rows = rows.astype(np.int64)
            sel, ranks = np.empty(len(rows), dtype=bool), np.full(len(rows), -1, dtype=np.int64)
            k = ck.present_ranks(bitmap, rows, sel, ranks, np.empty((len(bitmap) + 7) // 8, np.int64))
            np.testing.assert_array_equal(sel, valid[rows])
            assert k == int(valid[rows].sum())
            np.testing.assert_array_equal(ranks[:k], prefix[rows[valid[rows]]])


@pytest.mark.parametrize("dtype", [np.uint8, np.int32, np.int64, np.float64])
def test_scatter_present_matches_a_reference_on_every_byte_pattern(dtype: type) -> None:
    # Runs of all-present and all-null bytes (the kernel's fast paths), mixed bytes,
    # lengths that end mid-byte, a fill other than 0 under the nulls; then one value too
    # few and one too many for the mask, which must be reported (the caller checks the
    # count it gets back equals the values it passed).
    rng = np.random.default_rng(5)
    for n in (0, 1, 7, 8, 9, 63, 64, 65, 1000, 4099):
        for p_null in (0.0, 0.02, 0.5, 0.98, 1.0):
            blocks = rng.random(n // 8 + 1) < 0.5  # long stretches with no null, or all null
            valid = np.where(np.repeat(blocks, 8)[:n], rng.random(n) >= p_null, rng.random(n) < p_null)
            bitmap = np.packbits(valid, bitorder="little")
            values = rng.integers(1, 100, int(valid.sum())).astype(dtype)
            for fill in (0, 3):
                out = np.full(n, 7, dtype=dtype)
                assert ck.scatter_present_into(values, bitmap, out, dtype(fill), ck.PRESENT_RANKS) == len(values)
                want = np.full(n, fill, dtype=dtype)
                want[valid] = values
                np.testing.assert_array_equal(out, want)
            if len(values):
                assert ck.scatter_present_into(values[:-1], bitmap, out, dtype(0), ck.PRESENT_RANKS) < 0
            assert ck.scatter_present_into(np.append(values, dtype(1)), bitmap, out, dtype(0),
                                           ck.PRESENT_RANKS) == len(values)


def test_present_ranks_table_counts_the_set_bits_below_each_bit() -> None:
    for m in range(256):
        bits = [(m >> t) & 1 for t in range(8)]
        assert ck.PRESENT_RANKS[m].tolist() == [sum(bits[:t]) for t in range(8)]


def test_spread_present_puts_nan_under_the_nulls_of_a_float_column() -> None:
    from qdf_columnar.columns import alloc
    from qdf_columnar.wire.numeric_arrow import spread_present

    valid = np.array([True, False, True, False, False, True, True, False, True, False, True])
    bitmap = np.packbits(valid, bitorder="little")
    values = np.arange(1, int(valid.sum()) + 1, dtype=np.float64)
    full, validity = spread_present(values, bitmap, len(valid))
    assert np.isnan(full[~valid]).all() and full[valid].tolist() == values.tolist()
    ints, _ = spread_present(values.astype(np.int64), bitmap, len(valid))
    assert (ints[~valid] == 0).all()
    bits, _ = spread_present(values.view(np.uint64), bitmap, len(valid), float_bits=np.dtype(np.float64))
    assert np.isnan(bits.view(np.float64)[~valid]).all() and bits.view(np.float64)[valid].tolist() == values.tolist()
    assert alloc.holds_nan_under_nulls(full.ctypes.data, full.nbytes)
    assert alloc.holds_nan_under_nulls(bits.ctypes.data, bits.nbytes)
    assert not alloc.holds_nan_under_nulls(ints.ctypes.data, ints.nbytes)
    assert bytes(validity) == bitmap.tobytes()


def _table(rng: np.random.Generator, n: int) -> pa.Table:
    cols = {}
    for codec in ("raw", "for", "delta", "rle", "dict"):
        v = _values(rng, codec, n, signed=True)
        if codec == "raw":
            v = rng.integers(-(2**62), 2**62, n)
        cols[codec] = pa.array(v)
        cols[codec + "_null"] = pa.array(v, mask=rng.random(n) < 0.3)
        cols[codec + "_u"] = pa.array(np.abs(v).astype(np.uint64))
    cols["key"] = pa.array(rng.integers(0, 100, n))
    return pa.table(cols)


@pytest.mark.parametrize("mode", ["balanced", "compression"])
def test_filtered_decode_equals_arrow_filter(mode: str) -> None:
    rng = np.random.default_rng(11)
    t = _table(rng, 20_000)
    buf = qdf.encode(t, mode=mode)
    for filt in ([("key", "<", 3)], [("key", "==", 50)], [("key", ">=", 0)], [("key", "<", 0)],
                 [("for_null", ">", 0)], [("rle_null", "<", 0), ("key", ">", 10)]):
        want = t.filter(pq_expr(filt))
        got = qdf.decode(buf, filter=filt, output="arrow")
        assert got.equals(want), filt
        pd.testing.assert_frame_equal(qdf.decode(buf, filter=filt), want.to_pandas(), check_exact=True)


def pq_expr(filt: list[tuple[str, str, int]]) -> pc.Expression:
    ops = {"<": pc.less, ">": pc.greater, "==": pc.equal, ">=": pc.greater_equal}
    expr = None
    for col, op, v in filt:
        e = ops[op](pc.field(col), v)
        expr = e if expr is None else expr & e
    return expr


def test_decode_rows_of_every_codec_and_null_pattern() -> None:
    rng = np.random.default_rng(5)
    t = _table(rng, 3000)
    buf = qdf.encode(t)
    for rows in (np.array([0]), np.array([2999]), np.arange(0, 3000, 7), np.arange(3000),
                 np.flatnonzero(rng.random(3000) < 0.01)):
        got = api.decode_rows(buf, rows.astype(np.int64), 3000)
        assert got.equals(t.take(pa.array(rows))), rows[:5]


def test_a_selective_filter_does_not_unpack_the_other_rows_of_a_for_column(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(2)
    n = 50_000
    t = pa.table({"key": pa.array(rng.integers(0, 1000, n)), "v": pa.array(rng.integers(0, 2**30, n)),
                  "w": pa.array(rng.integers(0, 2**30, n), mask=rng.random(n) < 0.2)})
    buf = qdf.encode(t)
    codecs = qdf.explain(buf).set_index("column")["codec"]
    assert codecs["v"] == "PackFor" and codecs["w"] == "PackFor", codecs
    unpacked: list[int] = []
    real = bitpack.unpack_for

    def counting(src, bits, base, out):  # noqa: ANN001, ANN202
        unpacked.append(len(out))
        return real(src, bits, base, out)

    monkeypatch.setattr(frame.bitpack, "unpack_for", counting)
    got = qdf.decode(buf, filter=[("key", "==", 7)], output="arrow")
    assert got.equals(t.filter(pc.field("key") == 7))
    assert n not in unpacked[1:] and len([u for u in unpacked if u >= 0.8 * n]) <= 1, unpacked  # only the filter column


@pytest.mark.parametrize("codec", CODECS)
def test_damage_fails_at_scan_time_as_before(codec: str) -> None:
    rng = np.random.default_rng(9)
    values = _values(rng, codec, 1000, signed=True)
    buf = _payload(values, codec)
    assert buf is not None
    for cut in sorted({1, 2, 3, len(buf) // 2, len(buf) - 1}):
        damaged = buf[:cut]
        with pytest.raises(QdfError) as eager:
            decode_int_payload(ByteReader(damaged, 0), n=1000)
        with pytest.raises(QdfError) as lazy:
            intdec.scan_int(ByteReader(damaged, 0), 1000)
        assert type(lazy.value) is type(eager.value) and lazy.value.offset == eager.value.offset
    assert buf[0] in set(QPackTag)


@pytest.mark.parametrize(("first", "step", "signed"), [
    (0, 1, True), (10**12, 7, False), (2**63 - 40, 3, True), (-(2**63) + 5, -1, True),
    (2**64 - 30, 1, False), (5, 0, True), (-17, -(2**40), True)])
def test_a_constant_step_takes_rows_by_arithmetic(first: int, step: int, signed: bool) -> None:
    """Delta+FOR of width 0 (a row counter, a constant step, wrapping past the type's end
    as the decode wraps) answers a row selection without decoding the other rows."""
    n = 5000
    wide = (first + step * np.arange(n, dtype=object)) % 2**64
    values = np.array([int(v) for v in wide], dtype=np.uint64)
    values = values.view(np.int64) if signed else values
    buf = _payload(values, "delta")
    assert buf is not None
    payload = intdec.scan_int(ByteReader(buf, 0), n)
    rows = np.array([0, 1, 2, 999, 4096, n - 2, n - 1], dtype=np.int64)
    got = payload.take(rows)
    assert got.dtype == values.dtype
    np.testing.assert_array_equal(got, values[rows])
    assert not payload.decoded, "the selection decoded every row"
    np.testing.assert_array_equal(payload.values(), values)
