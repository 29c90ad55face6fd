"""Packed column chunks unpacked on a helper thread while the reader decodes the others
(``qdf_columnar.io.chunks.ChunkOpener``): same results, same errors, and only when the
read may use threads."""

from __future__ import annotations

import threading
import zlib

import numpy as np
import pandas as pd
import pytest

import qdf_columnar as qdf
from qdf_columnar.io import chunks
from qdf_columnar.io.layout import CHUNK_V1, CHUNK_ZSTD


def _frame(n: int = 6000) -> pd.DataFrame:
    rng = np.random.default_rng(11)
    words = np.array(["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"])
    text = [" ".join(rng.choice(words, 10)) + f" #{i}" for i in range(n)]
    return pd.DataFrame({
        "id": np.arange(n, dtype=np.int64),
        "note": text,
        "noise": rng.random(n),
        "memo": [t[::-1] for t in text],
        "qty": rng.integers(0, 50, n),
    })


@pytest.fixture
def packed(monkeypatch):
    """A balanced file whose text chunks are zstd frames, every one of them large enough
    to be unpacked ahead (the bar lowered so the file stays small), on a 4-CPU machine."""
    monkeypatch.setattr(chunks, "AHEAD_MIN_BYTES", 1024)
    monkeypatch.setattr(chunks, "available_cpus", lambda: 4)
    df = _frame()
    blob = qdf.write_qdf(df, None, mode="balanced")
    (g,) = qdf.QdfFile(blob).row_groups
    codecs = dict(zip(df.columns, (c.codec for c in g.chunks)))
    assert codecs["note"] == codecs["memo"] == CHUNK_ZSTD and codecs["noise"] == CHUNK_V1
    return blob, df


@pytest.fixture
def opened_on(monkeypatch):
    """The thread each chunk was opened on, by column name."""
    seen: dict[str, str] = {}
    real = chunks.open_chunk

    def spy(data, chunk, *, column, row_group):
        seen[column] = threading.current_thread().name
        return real(data, chunk, column=column, row_group=row_group)

    monkeypatch.setattr(chunks, "open_chunk", spy)
    return seen


def test_packed_chunks_unpack_on_the_helper_thread_and_decode_the_same(packed, opened_on):
    blob, df = packed
    got = qdf.read_qdf(blob)
    pd.testing.assert_frame_equal(got, df, check_exact=True)
    main = threading.current_thread().name
    # The first packed chunk unpacks ahead too: plain chunks are decoded while it does.
    assert opened_on["note"].startswith("qdf-unpack") and opened_on["memo"].startswith("qdf-unpack")
    assert opened_on["id"] == opened_on["noise"] == opened_on["qty"] == main


def test_a_single_threaded_read_never_uses_the_helper(packed, opened_on):
    blob, df = packed
    pd.testing.assert_frame_equal(qdf.read_qdf(blob, threads=False), df, check_exact=True)
    assert set(opened_on.values()) == {threading.current_thread().name}


def test_a_one_cpu_machine_never_uses_the_helper(packed, opened_on, monkeypatch):
    monkeypatch.setattr(chunks, "available_cpus", lambda: 1)
    blob, df = packed
    pd.testing.assert_frame_equal(qdf.read_qdf(blob), df, check_exact=True)
    assert set(opened_on.values()) == {threading.current_thread().name}


@pytest.mark.parametrize("columns", [None, ["memo", "id"], ["note"]])
def test_filtered_and_projected_reads_match_the_single_threaded_ones(packed, columns):
    blob, df = packed
    where = (qdf.col("qty") > 40) & (qdf.col("noise") < 0.5)
    one = qdf.read_qdf(blob, columns=columns, filter=where, threads=False)
    ahead = qdf.read_qdf(blob, columns=columns, filter=where)
    pd.testing.assert_frame_equal(ahead, one, check_exact=True)
    want = df[(df["qty"] > 40) & (df["noise"] < 0.5)]
    want = want if columns is None else want[columns]
    pd.testing.assert_frame_equal(one.reset_index(drop=True), want.reset_index(drop=True), check_exact=True)


def test_a_damaged_frame_unpacked_ahead_is_reported_where_it_is(packed):
    """A zstd chunk overwritten with garbage: the checksum check fails on the helper
    thread, and that error reaches the caller with the column, row group and offset."""
    blob, _ = packed
    f = qdf.QdfFile(blob)
    (g,) = f.row_groups
    j = f.schema.names.index("memo")
    c = g.chunks[j]
    data = bytearray(blob)
    data[c.offset:c.offset + c.length] = (bytes(range(256)) * (c.length // 256 + 1))[:c.length]
    with pytest.raises(qdf.CorruptDataError, match="checksum mismatch") as e:
        qdf.read_qdf(bytes(data))
    assert (e.value.column, e.value.row_group, e.value.offset) == ("memo", 0, c.offset)
    assert zlib.crc32(bytes(data[c.offset:c.offset + c.length])) != c.crc32


def test_the_decode_order_puts_the_chunks_unpacked_ahead_last(packed):
    blob, df = packed
    f = qdf.QdfFile(blob)
    (g,) = f.row_groups
    names = list(df.columns)
    datas = {n: memoryview(blob)[c.offset:c.offset + c.length] for n, c in zip(names, g.chunks)}
    opener = chunks.ChunkOpener(g, [(n, j) for j, n in enumerate(names)], datas, ahead=True)
    try:
        assert opener.decode_order(names) == ["id", "noise", "qty", "note", "memo"]
        for n in opener.decode_order(names):
            buf = opener.get(n)
            assert bytes(buf[:4]) == b"QDF\x01"
    finally:
        opener.close()
    plain = chunks.ChunkOpener(g, [(n, j) for j, n in enumerate(names)], datas, ahead=False)
    assert plain.decode_order(names) == names


def test_decode_threads_and_the_helper_together(packed, monkeypatch):
    """threads=None on a machine with many CPUs: decode threads ask the opener at once."""
    from qdf_columnar.wire import parallel

    monkeypatch.setattr(parallel, "available_cpus", lambda: 8)
    monkeypatch.setattr(parallel, "MIN_PARALLEL_CELLS", 1)
    blob, df = packed
    for _ in range(5):
        pd.testing.assert_frame_equal(qdf.read_qdf(blob), df, check_exact=True)
