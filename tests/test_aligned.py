"""Whole-byte integer widths (Options.ALIGNED), the compression-mode chunk trial, xz chunks.

Aligned payloads are the reference's own FOR / Delta+FOR / ALP payloads at a bit width
rounded up to whole bytes: they must decode (and skip) to exactly the values written,
pick the body a byte-wise stage codes smaller, fall back to the picker where neither
form applies, and a compression-mode file must keep them only for chunks that come out
smaller; an xz chunk must read back, and a damaged one raise CorruptDataError at its
chunk without touching the other columns.
"""

from __future__ import annotations

import lzma
import zlib

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_files_chunks import _footer, _refooter
from test_floats import SHAPES
from test_floats import make as make_floats
from test_qpack import INT_DTYPES, KINDS, LENGTHS, check_round_trip, make_values

import qdf_columnar as qdf
from qdf_columnar.codecs.floats.unit import F64
from qdf_columnar.codecs.intenc import aligned_plan, byte_width
from qdf_columnar.codecs.qpack import decode_float_payload, encode_float_array, encode_int_array, skip_payload
from qdf_columnar.codecs.stats import compute_stats
from qdf_columnar.format.reader import ByteReader
from qdf_columnar.format.tags import QPackTag
from qdf_columnar.io import chunks
from qdf_columnar.io.chunks import ZSTD_LEVEL, _smallest, chunk_table, encode_chunk
from qdf_columnar.io.layout import CHUNK_V1, CHUNK_XZ, CHUNK_ZSTD, Chunk
from qdf_columnar.options import Options, parse_mode

ALIGNED = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def enc(values: np.ndarray, **kw: object) -> bytes:
    out = bytearray()
    encode_int_array(out, values, **kw)  # type: ignore[arg-type]
    return bytes(out)


def _bits(payload: bytes) -> int:
    """The bit-width byte of a FOR / Delta+FOR payload (tag, kind, bits, ...)."""
    return payload[2]


# ------------------------------------------------------------------ integer payloads
@ALIGNED
@given(dtype=st.sampled_from(INT_DTYPES), n=st.sampled_from(LENGTHS[1:]), kind=st.sampled_from(KINDS),
       seed=st.integers(0, 2**32 - 1))
def test_aligned_ints_round_trip_at_whole_byte_widths(dtype: type, n: int, kind: str, seed: int) -> None:
    values = make_values(kind, dtype, n, seed)
    payload = enc(values, aligned=True)
    check_round_trip(values, payload)  # decode and skip both stop at the payload's end
    s = compute_stats(np.ascontiguousarray(values, dtype=np.int64 if values.dtype.kind == "i" else np.uint64)
                      .view(np.uint64), values.dtype.kind == "i")
    if aligned_plan(s) is None:  # a range over 56 bits: the picker's own payload
        assert payload == enc(values)
    else:
        assert payload[0] in (QPackTag.FOR, QPackTag.DELTA_FOR)
        assert _bits(payload) % 8 == 0


def test_the_body_with_fewer_distinct_bytes_wins() -> None:
    rng = np.random.default_rng(3)
    # Two counters interleaved: FOR sees a 20-bit range, deltas repeat two values.
    a = np.arange(100_000, dtype=np.int64)
    counters = np.empty(200_000, dtype=np.int64)
    counters[0::2], counters[1::2] = a + 10, a + 500_000
    payload = enc(counters, aligned=True)
    assert payload[0] == QPackTag.DELTA_FOR and _bits(payload) == 24
    # Shuffled small values: deltas are twice as wide and spread, FOR keeps one byte each.
    shuffled = rng.integers(0, 40, 100_000).astype(np.int64)
    payload = enc(shuffled, aligned=True)
    assert payload[0] == QPackTag.FOR and _bits(payload) == 8
    assert byte_width(0) == 0 and byte_width(1) == 8 and byte_width(9) == 16 and byte_width(56) == 56


def test_constant_and_capped_columns_stay_decodable() -> None:
    const = np.full(1000, -7, dtype=np.int64)
    payload = enc(const, aligned=True)
    assert payload[0] == QPackTag.FOR and _bits(payload) == 0
    check_round_trip(const, payload)


# ------------------------------------------------------------------ float payloads
@ALIGNED
@given(shape=st.sampled_from(SHAPES), n=st.sampled_from([1, 7, 256, 4096]), seed=st.integers(0, 2**32 - 1))
def test_aligned_alp_round_trips_bit_for_bit(shape: str, n: int, seed: int) -> None:
    values = make_floats(shape, np.float64, n, seed)
    out = bytearray()
    encode_float_array(out, values, compress=True, aligned=True)
    r = ByteReader(bytes(out))
    got = decode_float_payload(r)
    assert r.pos == len(out)
    np.testing.assert_array_equal(got.view(np.uint64), values.view(np.uint64))
    r = ByteReader(bytes(out))
    skip_payload(r)
    assert r.pos == len(out)
    if out[0] == QPackTag.ALP and out[1] == F64.kind and n:  # ALP (kind 0F is ALP-RD)
        r = ByteReader(bytes(out), 2)  # tag, kind, uvarint(n), exponent, FOR base, width
        r.uvarint("n")
        r.u8("exponent")
        r.uvarint("FOR base")
        assert r.u8("width") % 8 == 0


def test_alp_is_preferred_to_bit_streams_when_aligned() -> None:
    walk = np.round(np.cumsum(np.random.default_rng(1).normal(0, 0.01, 5000)) + 20, 2)
    out = bytearray()
    encode_float_array(out, walk, compress=True, aligned=True)
    assert out[0] == QPackTag.ALP and out[1] == F64.kind


def test_aligned_is_an_option_bit_of_its_own() -> None:
    opts = parse_mode(Options.COMPRESSION | Options.CASCADE | Options.ALIGNED)
    assert opts & Options.ALIGNED and not parse_mode("compression") & Options.ALIGNED
    df = pd.DataFrame({"i": np.arange(5000) % 97, "f": np.round(np.linspace(0, 50, 5000), 2),
                       "t": pd.date_range("2024-01-01", periods=5000, freq="min"),
                       "n": pd.array([None if i % 7 == 0 else i * 3 for i in range(5000)], dtype="Int64")})
    buf = qdf.encode(df, mode=opts)
    pd.testing.assert_frame_equal(qdf.decode(buf), df, check_exact=True)


# ------------------------------------------------------------------ the chunk trial
def _interleaved(n: int) -> pd.DataFrame:
    """Row labels of a long-format table: counters of two blocks interleaved (as R data
    sets stacked by measurement keep them)."""
    half = np.arange(n // 2, dtype=np.int64)
    ids = np.empty(n, dtype=np.int64)
    ids[0::2], ids[1::2] = half + 1, half + 1 + 178_066
    return pd.DataFrame({"rownames": ids})


def test_compression_chunks_keep_aligned_bodies_where_smaller() -> None:
    df = _interleaved(200_000)
    t = pa.Table.from_pandas(df, preserve_index=False)
    chunk, codec, raw_len = encode_chunk(chunk_table(t, 0), qdf.encode, "compression", None)
    opts = parse_mode("compression")
    plain = qdf.encode(t, mode=opts & ~Options.RANS)
    without = _smallest([plain], ZSTD_LEVEL["compression"], entropy=True, min_gain=0.0)
    assert codec in (CHUNK_ZSTD, CHUNK_XZ) and len(chunk) < 0.5 * len(without[0])
    blob = qdf.write_qdf(df, None, mode="compression")
    pd.testing.assert_frame_equal(qdf.read_qdf(blob), df, check_exact=True)
    # What a Go reader gets: the frame unpacks to a v1 buffer of the reference's tags.
    v1 = chunks.open_chunk(chunk, Chunk(0, len(chunk), zlib.crc32(chunk), codec, raw_len), column="rownames",
                           row_group=0)
    assert qdf.explain(v1)["codec"].tolist()[1] == "PackDeltaFor"


@pytest.mark.parametrize("column", ["noise", "words"])
def test_chunks_without_a_win_are_what_they_were(column: str) -> None:
    rng = np.random.default_rng(9)
    df = pd.DataFrame({"noise": rng.integers(-(2**40), 2**40, 20_000),
                       "words": rng.choice(["north", "south", "east", "west"], 20_000)})
    t = pa.Table.from_pandas(df[[column]], preserve_index=False)
    chunk, codec, _ = encode_chunk(chunk_table(t, 0), qdf.encode, "compression", None)
    plain = qdf.encode(t, mode=parse_mode("compression") & ~Options.RANS)
    without = _smallest([plain], ZSTD_LEVEL["compression"], entropy=True, min_gain=0.0)
    assert len(chunk) <= len(without[0])
    assert codec in (CHUNK_V1, CHUNK_ZSTD)


# ------------------------------------------------------------------ xz chunks
def _xz_file() -> tuple[bytes, int, pd.DataFrame]:
    # Daily counts with a weekly cycle and noise: whole-byte values whose low byte follows
    # the high one, which xz's literal context sees and zstd's does not.
    rng = np.random.default_rng(4)
    weekly = np.tile([900, 1100, 1150, 1120, 1080, 700, 650], 40_000 // 7 + 1)[:40_000] + rng.integers(0, 40, 40_000)
    df = pd.DataFrame({"k": np.arange(40_000) % 11, "births": weekly})
    blob = qdf.write_qdf(df, None, mode="compression")
    codecs = _footer(blob)[1]["chunks"]["codec"].tolist()
    assert CHUNK_XZ in codecs
    return blob, codecs.index(CHUNK_XZ), df


def test_an_xz_chunk_reads_back_and_is_named():
    blob, i, df = _xz_file()
    pd.testing.assert_frame_equal(qdf.read_qdf(blob), df, check_exact=True)
    f = qdf.QdfFile(blob)
    chunk = f.row_groups[0].chunks[i]
    assert chunk.codec == CHUNK_XZ and chunk.length < chunk.raw_length
    assert lzma.decompress(blob[chunk.offset:chunk.offset + chunk.length])[:4] == b"QDF\x01"  # a standard xz stream
    codecs = f.columns_summary().set_index("column").loc[df.columns[i], "codecs"]
    assert "xz: " in codecs
    # Balanced mode never writes xz: its reads come first.
    assert CHUNK_XZ not in _footer(qdf.write_qdf(df, None, mode="balanced"))[1]["chunks"]["codec"].tolist()


def _with_chunk(blob: bytes, i: int, data: bytes | None = None, **fields: int) -> bytes:
    """``blob`` with chunk ``i``'s bytes replaced (its checksum fixed) or footer fields changed."""
    _, footer = _footer(blob)
    ch = footer["chunks"]
    for k in ch:
        ch[k] = ch[k].copy()
    out = bytearray(blob)
    if data is not None:
        off, ln = int(ch["offset"][i]), int(ch["length"][i])
        assert len(data) == ln
        out[off:off + ln] = data
        ch["crc32"][i] = zlib.crc32(data)
    for k, v in fields.items():
        ch[k][i] = v
    return _refooter(bytes(out), footer)


@pytest.mark.parametrize("delta", [-1, 1, 4096])
def test_an_xz_chunk_of_another_length_is_corrupt(delta):
    blob, i, df = _xz_file()
    raw = int(_footer(blob)[1]["chunks"]["raw"][i])
    bad = _with_chunk(blob, i, raw=raw + delta)
    name = df.columns[i]
    with pytest.raises(qdf.CorruptDataError, match="unpacks to|xz stream") as e:
        qdf.read_qdf(bad, columns=[name])
    assert e.value.column == name and e.value.row_group == 0
    other = df.columns[1 - i]
    pd.testing.assert_frame_equal(qdf.read_qdf(bad, columns=[other]), df[[other]], check_exact=True)


@pytest.mark.parametrize("damage", ["garbage", "truncated", "trailing"])
def test_a_damaged_xz_chunk_is_corrupt(damage):
    blob, i, df = _xz_file()
    c = qdf.QdfFile(blob).row_groups[0].chunks[i]
    stream = blob[c.offset:c.offset + c.length]
    if damage == "garbage":
        data = bytes(stream[:12]) + bytes((b * 7 + 3) & 0xFF for b in stream[12:])
    elif damage == "truncated":
        data = stream[:-40] + bytes(40)
    else:  # a whole stream followed by bytes that are not part of it
        data = lzma.compress(lzma.decompress(stream)[:-64], format=lzma.FORMAT_XZ, check=lzma.CHECK_NONE)
        data = data + bytes(len(stream) - len(data)) if len(data) <= len(stream) else data[:len(stream)]
    with pytest.raises(qdf.CorruptDataError) as e:
        qdf.read_qdf(_with_chunk(blob, i, data), columns=[df.columns[i]])
    assert e.value.offset == c.offset and e.value.column == df.columns[i]


def test_an_xz_stream_asking_for_too_much_memory_is_refused(monkeypatch):
    blob, i, df = _xz_file()
    monkeypatch.setattr(chunks, "XZ_MEMLIMIT", 1 << 20)  # below the 8 MiB window of preset 6
    with pytest.raises(qdf.CorruptDataError, match="xz stream"):
        qdf.read_qdf(blob, columns=[df.columns[i]])


def test_without_lzma_files_are_written_without_xz_and_xz_chunks_say_why(monkeypatch):
    blob, i, df = _xz_file()
    monkeypatch.setattr(chunks, "_lzma", None)
    with pytest.raises(qdf.UnknownCodecError, match="no lzma module"):
        qdf.read_qdf(blob, columns=[df.columns[i]])
    plain = qdf.write_qdf(df, None, mode="compression")
    assert CHUNK_XZ not in _footer(plain)[1]["chunks"]["codec"].tolist()
    pd.testing.assert_frame_equal(qdf.read_qdf(plain), df, check_exact=True)
