"""Container version 2.0: column chunks (docs/FORMAT.md §4.2).

A read fetches and decodes only the chunks of the columns it asks for (and of its
filter): a remote read transfers little more than those bytes, damage in another
column's chunk does not matter, zstd-wrapped chunks are checked like any other, and a
hostile chunk directory raises a typed error before anything is allocated.
"""

from __future__ import annotations

import struct
import zlib

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import qdf_columnar as qdf
from qdf_columnar.io.chunks import ZSTD_MIN_GAIN, ZSTD_MIN_SAVING
from qdf_columnar.io.layout import CHUNK_V1, CHUNK_ZSTD, MAGIC, TRAILER_SIZE
from qdf_columnar.wire.values import dumps, loads


def _twelve_columns(n: int) -> pd.DataFrame:
    rng = np.random.default_rng(11)
    return pd.DataFrame({
        "id": np.arange(n, dtype=np.int64),
        "user": rng.integers(0, 50_000, n),
        "amount": np.round(rng.gamma(2.0, 30.0, n), 2),
        "status": pd.array(rng.choice(["ok", "failed", "pending", "refunded", "disputed"], n,
                                      p=[0.9, 0.04, 0.03, 0.02, 0.01]), dtype=object),
        "country": rng.choice([f"C{i:03d}" for i in range(180)], n).astype(object),
        "flag": rng.random(n) < 0.1,
        "score": rng.normal(0, 1, n),
        "ts": pd.Timestamp("2026-01-01") + pd.to_timedelta(np.sort(rng.integers(0, 86_400 * 300, n)), unit="s"),
        "qty": rng.integers(1, 20, n).astype(np.int32),
        "sku": np.char.add("SKU-", rng.integers(0, 400_000, n).astype(str)).astype(object),
        "rating": pd.array(np.where(rng.random(n) < 0.2, None, rng.integers(1, 6, n)), dtype="Int8"),
        "discount": np.where(rng.random(n) < 0.7, 0.0, np.round(rng.random(n) * 0.5, 2)),
    })


@pytest.fixture(scope="module")
def wide():
    return _twelve_columns(1_000_000)


def _count_bytes(monkeypatch):
    from fsspec.implementations.memory import MemoryFileSystem

    calls: list[tuple[int, int]] = []
    orig = MemoryFileSystem.cat_file

    def spy(self, path, start=None, end=None, **kw):
        data = orig(self, path, start=start, end=end, **kw)
        calls.append((start, len(data)))
        return data

    monkeypatch.setattr(MemoryFileSystem, "cat_file", spy)
    return calls


def test_one_column_of_a_remote_file_costs_its_bytes_and_the_footer(wide, monkeypatch):
    """1 of 12 columns of a 1M-row file on fsspec transfers <= 1.2x its chunks + the footer."""
    url = "memory://qdf-chunks/wide.qdf"
    qdf.write_qdf(wide, url, row_group_size=250_000, mode="balanced")
    f = qdf.QdfFile(url)
    k = f.schema.names.index("status")
    column_bytes = sum(g.chunks[k].length for g in f.row_groups)
    footer = f._meta.footer_length
    whole = f.size
    f.close()
    calls = _count_bytes(monkeypatch)
    got = qdf.read_qdf(url, columns=["status"])
    moved = sum(n for _, n in calls)
    pd.testing.assert_frame_equal(got, wide[["status"]], check_exact=True)
    assert moved <= 1.2 * column_bytes + footer, (moved, column_bytes, footer, whole)
    assert moved < whole / 5


def test_a_filter_fetches_its_columns_and_the_projection_only(wide, monkeypatch):
    url = "memory://qdf-chunks/filter.qdf"
    part = wide.iloc[:200_000]
    qdf.write_qdf(part, url, row_group_size=50_000)
    f = qdf.QdfFile(url)
    at = {n: i for i, n in enumerate(f.schema.names)}
    spans = [(c.offset, c.length) for g in f.row_groups for c in (g.chunks[at["amount"]], g.chunks[at["status"]])]
    calls = _count_bytes(monkeypatch)
    got = f.read(columns=["amount"], filter=qdf.col("status") == "disputed")
    want = part.loc[part["status"] == "disputed", ["amount"]].reset_index(drop=True)
    pd.testing.assert_frame_equal(got.reset_index(drop=True), want, check_exact=True)
    # Exactly those chunks, each fetched once (adjacent ones as one range).
    assert sum(n for _, n in calls) == sum(ln for _, ln in spans)
    for start, n in calls:
        assert any(o == start for o, _ in spans), (start, n)
    f.close()


@pytest.fixture
def chunked(tmp_path):
    df = _twelve_columns(30_000)
    path = tmp_path / "c.qdf"
    qdf.write_qdf(df, path, row_group_size=10_000)
    return path, df


def test_each_column_reads_with_every_other_chunk_destroyed(chunked):
    path, df = chunked
    f = qdf.QdfFile(path)
    names, groups = f.schema.names, f.row_groups
    f.close()
    clean = path.read_bytes()
    for k, name in enumerate(names):
        data = bytearray(clean)
        for g in groups:
            for j, c in enumerate(g.chunks):
                if j != k:
                    data[c.offset:c.offset + c.length] = b"\xa5" * c.length
        path.write_bytes(bytes(data))
        got = qdf.read_qdf(path, columns=[name])
        pd.testing.assert_frame_equal(got, df[[name]], check_exact=True)
        with pytest.raises(qdf.CorruptDataError, match="checksum mismatch") as e:
            qdf.read_qdf(path, columns=[name, names[(k + 1) % len(names)]])
        assert e.value.column == names[(k + 1) % len(names)] and e.value.row_group == 0
    path.write_bytes(clean)


def test_threads_do_not_change_the_result(chunked):
    path, df = chunked
    where = (qdf.col("qty") > 15) & qdf.col("rating").is_not_null()
    one = qdf.read_qdf(path, filter=where, threads=False)
    two = qdf.read_qdf(path, filter=where, threads=2)
    pd.testing.assert_frame_equal(one, two, check_exact=True)
    want = df[(df["qty"] > 15) & df["rating"].notna()].reset_index(drop=True)
    pd.testing.assert_frame_equal(one.reset_index(drop=True), want, check_exact=True)


def test_zstd_wraps_a_chunk_only_when_it_pays():
    """Text with long repeats (where a dictionary of whole values does not reach) takes a
    zstd frame; random floats keep the v1 buffer."""
    rng = np.random.default_rng(5)
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]
    text = [" ".join(rng.choice(words, 12)) + f" #{i}" for i in range(20_000)]
    df = pd.DataFrame({"text": text, "noise": rng.random(20_000)})
    blob = qdf.write_qdf(df, None, mode="balanced")
    f = qdf.QdfFile(blob)
    (g,) = f.row_groups
    text_chunk, noise_chunk = g.chunks
    assert text_chunk.codec == CHUNK_ZSTD
    assert text_chunk.length < (1 - ZSTD_MIN_GAIN) * text_chunk.raw_length - ZSTD_MIN_SAVING
    assert noise_chunk.codec == CHUNK_V1 and noise_chunk.raw_length == noise_chunk.length
    pd.testing.assert_frame_equal(qdf.read_qdf(blob), df, check_exact=True)
    assert "zstd" in f.columns_summary().set_index("column").loc["text", "codecs"]



def test_a_small_chunk_stays_unwrapped_when_zstd_saves_less_than_its_unpacking_costs():
    """A chunk whose frame would be smaller, but by less than ZSTD_MIN_SAVING bytes plus
    ZSTD_MIN_GAIN, keeps its v1 buffer in balanced mode: unpacking a small frame costs
    more read time than its saving is worth. Compression mode keeps the smaller frame."""
    rng = np.random.default_rng(8)
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]
    df = pd.DataFrame({"text": [" ".join(rng.choice(words, 6)) + f" #{i}" for i in range(60)]})
    v1 = qdf.encode(df[["text"]], mode="balanced")
    frame = pa.Codec("zstd", compression_level=3).compress(v1, asbytes=True)
    assert len(frame) < (1 - ZSTD_MIN_GAIN) * len(v1)  # the old 5% rule alone would wrap it
    assert len(frame) > (1 - ZSTD_MIN_GAIN) * len(v1) - ZSTD_MIN_SAVING
    blob = qdf.write_qdf(df, None, mode="balanced")
    (g,) = qdf.QdfFile(blob).row_groups
    assert g.chunks[0].codec == CHUNK_V1
    pd.testing.assert_frame_equal(qdf.read_qdf(blob), df, check_exact=True)
    (g,) = qdf.QdfFile(qdf.write_qdf(df, None, mode="compression")).row_groups
    assert g.chunks[0].codec != CHUNK_V1

def _footer(data: bytes) -> tuple[int, dict]:
    flen = struct.unpack_from("<Q", data, len(data) - TRAILER_SIZE)[0]
    at = len(data) - TRAILER_SIZE - flen
    return at, loads(data[at:at + flen])


def _refooter(data: bytes, footer: dict) -> bytes:
    at, _ = _footer(data)
    buf = dumps(footer, mode="balanced")
    return data[:at] + buf + struct.pack("<QI4s", len(buf), zlib.crc32(buf), MAGIC)


def _zstd_file() -> tuple[bytes, int]:
    words = ["alpha", "bravo", "charlie", "delta"]
    df = pd.DataFrame({"n": np.arange(5000), "t": [" ".join(words[(i * j) % 4] for j in range(9)) + str(i % 97)
                                                   for i in range(5000)]})
    blob = qdf.write_qdf(df, None, mode="balanced")
    codecs = loads(blob[_footer(blob)[0]:-TRAILER_SIZE])["chunks"]["codec"].tolist()
    assert CHUNK_ZSTD in codecs
    return blob, codecs.index(CHUNK_ZSTD)


@pytest.mark.parametrize("field,value,match", [
    ("raw", 1 << 40, "impossible checksum, codec or unpacked length"),
    ("raw", 3, "impossible checksum, codec or unpacked length"),
    ("codec", 7, "impossible checksum, codec or unpacked length"),
    ("offset", 0, "overlaps another, lies outside its row group"),
    ("length", 1 << 20, "overlaps another, lies outside its row group"),
])
def test_hostile_chunk_directories_are_refused_at_open(field, value, match):
    blob, i = _zstd_file()
    _, footer = _footer(blob)
    footer["chunks"][field] = footer["chunks"][field].copy()
    footer["chunks"][field][i] = value
    with pytest.raises(qdf.CorruptDataError, match=match):
        qdf.QdfFile(_refooter(blob, footer))


@pytest.mark.parametrize("delta", [-1, 1, 5000])
def test_a_zstd_chunk_of_another_length_is_corrupt(delta):
    blob, i = _zstd_file()
    _, footer = _footer(blob)
    footer["chunks"]["raw"] = footer["chunks"]["raw"].copy()
    footer["chunks"]["raw"][i] = int(footer["chunks"]["raw"][i]) + delta
    bad = _refooter(blob, footer)
    with pytest.raises(qdf.CorruptDataError, match="zstd frame|unpacks to") as e:
        qdf.read_qdf(bad)
    assert e.value.column == "t" and e.value.row_group == 0
    pd.testing.assert_frame_equal(qdf.read_qdf(bad, columns=["n"]), pd.DataFrame({"n": np.arange(5000)}),
                                  check_exact=True)


def test_a_zstd_chunk_holding_garbage_is_corrupt():
    blob, i = _zstd_file()
    at, footer = _footer(blob)
    c = {k: int(v[i]) for k, v in footer["chunks"].items()}
    data = bytearray(blob)
    data[c["offset"]:c["offset"] + c["length"]] = bytes(range(256)) * (c["length"] // 256) + bytes(c["length"] % 256)
    footer["chunks"]["crc32"] = footer["chunks"]["crc32"].copy()
    footer["chunks"]["crc32"][i] = zlib.crc32(data[c["offset"]:c["offset"] + c["length"]])
    with pytest.raises(qdf.CorruptDataError, match="not a zstd frame") as e:
        qdf.read_qdf(_refooter(bytes(data), footer), columns=["t"])
    assert e.value.offset == c["offset"]


def test_a_chunk_that_decodes_to_another_column_is_corrupt(chunked):
    path, _ = chunked
    data = path.read_bytes()
    _, footer = _footer(data)
    ch = footer["chunks"]
    for key in ch:  # swap the directory entries of chunks 0 and 1 of group 0
        ch[key] = ch[key].copy()
        ch[key][[0, 1]] = ch[key][[1, 0]]
    with pytest.raises(qdf.CorruptDataError):
        qdf.read_qdf(_refooter(data, footer), columns=["id"])


def test_append_keeps_the_files_version(tmp_path):
    df = pd.DataFrame({"a": np.arange(50), "b": [f"v{i % 7}" for i in range(50)]})
    for version in (1, 2):
        path = tmp_path / f"v{version}.qdf"
        qdf.write_qdf(df, path, row_group_size=20, format_version=version)
        qdf.write_qdf(df, path, row_group_size=20, append=True)
        f = qdf.QdfFile(path)
        assert f.metadata["container_version"] == f"{version}.0"
        assert path.read_bytes()[4] == version
        assert all(len(g.chunks) == (2 if version == 2 else 0) for g in f.row_groups)
        pd.testing.assert_frame_equal(f.read(), pd.concat([df, df], ignore_index=True), check_exact=True)
        f.close()
        other = 3 - version
        with pytest.raises(qdf.InvalidOptionError, match=f"version-{version} file cannot write"):
            qdf.write_qdf(df, path, append=True, format_version=other)
        pd.testing.assert_frame_equal(qdf.read_qdf(path), pd.concat([df, df], ignore_index=True), check_exact=True)


@pytest.mark.parametrize("bad", [0, 3, "2", 2.0, True])
def test_format_version_is_checked(tmp_path, bad):
    with pytest.raises(qdf.InvalidOptionError, match="format_version"):
        qdf.write_qdf(pd.DataFrame({"a": [1]}), tmp_path / "x.qdf", format_version=bad)
    assert not (tmp_path / "x.qdf").exists()


@pytest.mark.parametrize("version", [1, 2])
@pytest.mark.parametrize("index", [pd.RangeIndex(5), pd.RangeIndex(3, 30, 3, name="r"),
                                   pd.Index(["x", "y", "z"], name="k")], ids=["range", "stepped", "labels"])
def test_a_frame_without_columns_keeps_its_rows(tmp_path, version, index):
    """pyarrow drops the row count of column-less tables in replace_schema_metadata,
    slice and concat_tables; the writer and encode keep it (and do not loop on it)."""
    df = pd.DataFrame(index=index)
    for mode in ("speed", "balanced", "compression"):
        pd.testing.assert_frame_equal(qdf.decode(qdf.encode(df, mode=mode)), df, check_exact=True)
    path = tmp_path / "empty.qdf"
    qdf.write_qdf(df, path, row_group_size=2, format_version=version)
    f = qdf.QdfFile(path)
    assert f.num_rows == len(df) and len(f.row_groups) == (len(df) + 1) // 2
    assert all(len(g.chunks) == (len(f.schema) if version == 2 else 0) for g in f.row_groups)
    pd.testing.assert_frame_equal(f.read(), df, check_exact=True)
    f.close()
    if isinstance(index, pd.RangeIndex) and index.start == 0:
        qdf.write_qdf(df, path, append=True)
        assert qdf.QdfFile(path).num_rows == 2 * len(df)


@pytest.mark.parametrize("categories", [None, ["status"], True])
@pytest.mark.parametrize("columns", [None, ["amount", "status"], ["amount"]])
def test_a_string_filter_is_evaluated_on_the_dictionary_codes(tmp_path, monkeypatch, categories, columns):
    # The filter's chunk is decoded in filter form: the dictionary-coded status column is
    # compared once per distinct value and expanded only at the kept rows (if projected).
    from qdf_kernels import strings

    df = _twelve_columns(60_000)
    path = tmp_path / "t.qdf"
    qdf.write_qdf(df, path, mode="balanced", row_group_size=30_000)
    want = qdf.read_qdf(path, columns=columns, categories=categories)
    want = want[want["status"].astype(object) == "disputed"] if columns is None or "status" in columns else None
    expanded: list[int] = []
    real = strings.dict_gather_into

    def counting(table_words, words_per_entry, table_lens, codes, offsets, data):
        expanded.append(len(codes))
        return real(table_words, words_per_entry, table_lens, codes, offsets, data)

    monkeypatch.setattr(strings, "dict_gather_into", counting)
    got = qdf.read_qdf(path, columns=columns, filter=[("status", "==", "disputed")], categories=categories)
    assert max(expanded, default=0) < 30_000 * 0.05, expanded  # never the whole chunk
    ref = df[df["status"] == "disputed"][columns or df.columns].reset_index(drop=True)
    if want is not None:  # as the unfiltered read, filtered by pandas (category sets may differ)
        assert (got.dtypes == want.dtypes.reindex(got.columns)).all() or categories is True
        plain = {c: object for c in got.columns if isinstance(got[c].dtype, pd.CategoricalDtype)}
        pd.testing.assert_frame_equal(got.astype(plain), want.reset_index(drop=True).astype(plain), check_exact=True)
    if categories is None:
        pd.testing.assert_frame_equal(got, ref, check_exact=True)
    elif "status" in got:
        assert isinstance(got["status"].dtype, pd.CategoricalDtype)
        assert got["status"].astype(object).tolist() == ["disputed"] * len(ref)


def test_reads_on_threads_reuse_the_decoders_pool(monkeypatch: pytest.MonkeyPatch) -> None:
    """threads=2 decodes row groups, or the chunks of a one-group file, on the decoder's
    long-lived pool: after the first reads, later reads start no thread (a pool per
    read or per row group started and joined two threads every time)."""
    import threading

    rng = np.random.default_rng(3)
    df = pd.DataFrame({"a": rng.integers(0, 1000, 50_000), "b": rng.random(50_000).round(2),
                       "c": rng.choice(["x", "y", "z"], 50_000)})
    blobs = [qdf.write_qdf(df, None, row_group_size=20_000), qdf.write_qdf(df, None)]
    assert [len(qdf.QdfFile(b).row_groups) for b in blobs] == [3, 1]
    for blob in blobs:
        pd.testing.assert_frame_equal(qdf.read_qdf(blob, threads=2), df, check_exact=True)
    started = []
    real = threading.Thread.start

    def start(self: threading.Thread) -> None:
        started.append(self.name)
        real(self)

    monkeypatch.setattr(threading.Thread, "start", start)
    for _ in range(3):
        for blob in blobs:
            pd.testing.assert_frame_equal(qdf.read_qdf(blob, threads=2, columns=["a", "b", "c"]), df,
                                          check_exact=True)
    assert not started


def test_a_failed_map_on_the_pool_returns_only_once_every_call_is_done() -> None:
    """The first error propagates only after the calls already running have finished and
    the others were cancelled: nothing keeps reading the caller's bytes after it."""
    import threading
    import time

    from qdf_columnar.wire.parallel import map_on_pool

    running, done = threading.Event(), []

    def call(k: int) -> int:
        if k == 0:
            running.wait(5)
            raise ValueError("damaged")
        running.set()
        time.sleep(0.05)
        done.append(k)
        return k

    with pytest.raises(ValueError, match="damaged"):
        map_on_pool(2, call, list(range(6)))
    settled = list(done)
    time.sleep(0.3)
    assert done == settled and 1 in done  # the running call finished before the raise
    assert map_on_pool(2, lambda k: k * k, list(range(5))) == [0, 1, 4, 9, 16]
