"""The .qdf file container: lossless round trips through several row groups, appends,
streamed input, memory:// and the inspection API (docs/FORMAT.md Part 4).

Contract: ``read_qdf(write_qdf(df))`` equals ``df`` exactly (dtypes, nulls, categories,
time zones, index) whatever the row-group size; every row group is a plain v1 buffer.
"""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import qdf_columnar as qdf
from qdf_columnar.io import SchemaMismatchError

N = 40


def _with_nulls(s: pd.Series, every: int = 5) -> pd.Series:
    s = s.copy()
    s.iloc[::every] = None
    return s


def dtype_frame(n: int = N) -> pd.DataFrame:
    """One column per dtype the container must round-trip, most with nulls."""
    rng = np.random.default_rng(7)
    cols: dict[str, object] = {}
    for t in ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]:
        info = np.iinfo(t)
        v = rng.integers(info.min, info.max, n, dtype=t, endpoint=True)
        v[0], v[1] = info.min, info.max
        cols[t] = v
    for t in ["float32", "float64"]:
        v = rng.normal(size=n).astype(t)
        v[2], v[3], v[4] = np.nan, np.inf, -0.0
        cols[t] = v
    cols["bool"] = rng.integers(0, 2, n).astype(bool)
    for t in ["Int8", "Int16", "Int32", "Int64", "UInt8", "UInt16", "UInt32", "UInt64", "Float32", "Float64"]:
        cols[t] = _with_nulls(pd.Series(rng.integers(0, 100, n), dtype=t))
    cols["boolean"] = _with_nulls(pd.Series(rng.integers(0, 2, n).astype(bool), dtype="boolean"))
    words = [f"w{i % 9}é" for i in range(n)]
    cols["str_default"] = _with_nulls(pd.Series(words))
    cols["str_python"] = _with_nulls(pd.Series(words, dtype="string[python]"))
    cols["str_pyarrow"] = _with_nulls(pd.Series(words, dtype="string[pyarrow]"))
    cols["obj_str"] = _with_nulls(pd.Series(words, dtype=object))
    cols["obj_bytes"] = _with_nulls(pd.Series([w.encode() + b"\x00" for w in words], dtype=object))
    cats = ["z", "b", "a", "unused"]
    cols["cat"] = pd.Categorical(_with_nulls(pd.Series(rng.choice(["a", "b", "z"], n))), categories=cats)
    cols["cat_ordered"] = pd.Categorical(_with_nulls(pd.Series(rng.choice(["a", "b"], n))), categories=cats,
                                         ordered=True)
    cols["cat_int"] = pd.Categorical(rng.choice([3, 1], n), categories=[5, 3, 1])
    base = pd.Series(pd.date_range("2021-03-28", periods=n, freq="37min"))
    for unit in ["s", "ms", "us", "ns"]:
        cols[f"dt_{unit}"] = _with_nulls(base.astype(f"datetime64[{unit}]"))
        local = base.astype(f"datetime64[{unit}]").dt.tz_localize("UTC").dt.tz_convert("Europe/Paris")
        cols[f"dttz_{unit}"] = _with_nulls(local)
        cols[f"td_{unit}"] = _with_nulls(pd.Series(pd.to_timedelta(rng.integers(-10**6, 10**6, n), unit="s"))
                                         .astype(f"timedelta64[{unit}]"))
    cols["arrow_int"] = pd.Series(pa.array([None if i % 4 == 0 else i for i in range(n)], pa.int16()),
                                  dtype=pd.ArrowDtype(pa.int16()))
    cols["arrow_str"] = pd.Series(pa.array([None if i % 3 == 0 else words[i] for i in range(n)]),
                                  dtype=pd.ArrowDtype(pa.string()))
    cols["arrow_date"] = pd.Series(pa.array([None if i % 6 == 0 else dt.date(2000, 1, 1) + dt.timedelta(days=i * 40)
                                             for i in range(n)]), dtype=pd.ArrowDtype(pa.date32()))
    lt = pa.list_(pa.int64())
    cols["arrow_list"] = pd.Series(pa.array([None if i % 5 == 1 else list(range(i % 4)) for i in range(n)], lt),
                                   dtype=pd.ArrowDtype(lt))
    st = pa.struct([("a", pa.int64()), ("b", pa.string())])
    cols["arrow_struct"] = pd.Series(
        pa.array([None if i % 7 == 2 else {"a": i, "b": None if i % 2 else words[i]} for i in range(n)], st),
        dtype=pd.ArrowDtype(st))
    mt = pa.map_(pa.string(), pa.int64())
    cols["arrow_map"] = pd.Series(pa.array([None if i % 6 == 3 else [(f"k{j}", j) for j in range(i % 3)]
                                            for i in range(n)], mt), dtype=pd.ArrowDtype(mt))
    return pd.DataFrame(cols)


def _index(kind: str, n: int) -> pd.Index | None:
    if kind == "default":
        return None
    if kind == "range":
        return pd.RangeIndex(5, 5 + 3 * n, 3, name="r")
    if kind == "named":
        return pd.Index(np.arange(n)[::-1] * 10, name="key")
    if kind == "multi":
        return pd.MultiIndex.from_arrays([np.arange(n) % 4, [f"s{i}" for i in range(n)]], names=["g", "s"])
    if kind == "datetime_tz":
        # Arrow keeps no index freq (neither does Parquet), so the index has none.
        return pd.DatetimeIndex(list(pd.date_range("2020-01-01", periods=n, freq="h", tz="UTC")), name="t")
    raise AssertionError(kind)


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    return dtype_frame()


@pytest.mark.parametrize("index", ["default", "range", "named", "multi", "datetime_tz"])
@pytest.mark.parametrize("row_group_size", [7, N])
def test_round_trip_matrix(tmp_path, frame, index, row_group_size):
    df = frame.copy()
    idx = _index(index, len(df))
    if idx is not None:
        df.index = idx
    path = tmp_path / "m.qdf"
    qdf.write_qdf(df, path, row_group_size=row_group_size)
    f = qdf.QdfFile(path)
    assert f.num_row_groups == -(-N // row_group_size)
    assert f.num_rows == N
    pd.testing.assert_frame_equal(qdf.read_qdf(path), df, check_exact=True)
    # Threads, no_copy and one thread agree.
    pd.testing.assert_frame_equal(qdf.read_qdf(path, threads=1, no_copy=True), df, check_exact=True)
    # A projection keeps the stored index and the column dtypes.
    cols = ["cat", "dttz_ns", "str_python", "arrow_list"]
    pd.testing.assert_frame_equal(qdf.read_qdf(path, columns=cols), df[cols], check_exact=True)
    # The pandas accessor writes the same file.
    df.to_qdf(tmp_path / "acc.qdf", row_group_size=row_group_size)
    pd.testing.assert_frame_equal(qdf.read_qdf(tmp_path / "acc.qdf"), df, check_exact=True)


def test_every_row_group_is_a_v1_buffer(tmp_path, frame):
    path = tmp_path / "g.qdf"
    qdf.write_qdf(frame, path, row_group_size=16, mode="balanced", format_version=1)
    data = path.read_bytes()
    assert data[:8] == b"QDFC\x01\x00\x00\x00"
    f = qdf.QdfFile(path)
    parts = []
    for g in f.row_groups:
        buf = data[g.offset:g.offset + g.length]
        assert buf[:4] == b"QDF\x01"
        parts.append(qdf.decode(buf)[["int64", "str_default"]])
    got = pd.concat(parts)
    pd.testing.assert_frame_equal(got, frame[["int64", "str_default"]], check_exact=True)


@pytest.mark.parametrize("mode", ["balanced", "compression"])
def test_every_column_chunk_is_a_v1_buffer(tmp_path, frame, mode):
    """Version 2.0: one chunk per column and row group, each a v1 buffer (or a zstd frame of one)."""
    import pyarrow.compute as pc

    path = tmp_path / "c.qdf"
    qdf.write_qdf(frame, path, row_group_size=16, mode=mode)
    data = path.read_bytes()
    assert data[:8] == b"QDFC\x02\x00\x00\x00"
    f = qdf.QdfFile(path)
    names = f.schema.names
    cols: dict[str, list] = {n: [] for n in ["int64", "str_default"]}
    for g in f.row_groups:
        assert len(g.chunks) == len(names) and g.crc32 == 0
        assert g.offset == g.chunks[0].offset and g.length == sum(c.length for c in g.chunks)
        for name, c in zip(names, g.chunks):
            raw = data[c.offset:c.offset + c.length]
            buf = raw if c.codec == 0 else pa.Codec("zstd").decompress(raw, decompressed_size=c.raw_length,
                                                                      asbytes=True)
            assert buf[:4] == b"QDF\x01" and len(buf) == c.raw_length
            if name in cols:
                cols[name].append(qdf.decode(buf, output="arrow").column(name))
    want = pa.Table.from_pandas(frame[list(cols)], preserve_index=False)
    for name, parts in cols.items():
        assert pc.all(pc.equal(pa.chunked_array([p for c in parts for p in c.chunks]), want.column(name))).as_py()


def test_arrow_output_has_the_file_schema(tmp_path, frame):
    path = tmp_path / "a.qdf"
    qdf.write_qdf(frame, path, row_group_size=9)
    t = qdf.read_qdf(path, output="arrow")
    assert t.schema.equals(qdf.QdfFile(path).schema, check_metadata=True)
    assert t.schema.equals(pa.Table.from_pandas(frame).schema, check_metadata=False)


def test_arrow_table_and_record_batch_inputs(tmp_path):
    t = pa.table({"a": pa.array([1, None, 3, 4], pa.int32()), "b": pa.array(["x", "y", None, "z"], pa.large_string()),
                  "ts": pa.array([0, 1, None, 3], pa.timestamp("us", "Asia/Tokyo"))})
    qdf.write_qdf(t, tmp_path / "t.qdf", row_group_size=3)
    assert qdf.read_qdf(tmp_path / "t.qdf", output="arrow").equals(t)
    qdf.write_qdf(t.to_batches()[0], tmp_path / "b.qdf")
    assert qdf.read_qdf(tmp_path / "b.qdf", output="arrow").equals(t)
    qdf.write_qdf({"x": [1, 2]}, tmp_path / "d.qdf")
    assert qdf.read_qdf(tmp_path / "d.qdf", output="records") == [{"x": 1}, {"x": 2}]
    qdf.write_qdf([{"x": 1}, {"x": 2}], tmp_path / "r.qdf")
    assert qdf.read_qdf(tmp_path / "r.qdf", output="numpy")["x"].tolist() == [1, 2]


def test_streamed_batches_unify_categories_and_continue_the_range_index(tmp_path):
    chunks = [
        pd.DataFrame({"c": pd.Categorical(["a", "b"], categories=["b", "a"]), "v": [1, 2]}),
        pd.DataFrame({"c": pd.Categorical(["q", None, "a"], categories=["q", "a"]), "v": [3, 4, 5]}),
        pd.DataFrame({"c": pd.Categorical([f"n{i}" for i in range(200)]), "v": np.arange(200)}),  # int16 codes
    ]
    path = tmp_path / "s.qdf"
    qdf.write_qdf(iter(chunks), path, row_group_size=4)
    got = qdf.read_qdf(path)
    want = pd.concat(chunks, ignore_index=True)
    want["c"] = pd.Categorical(want["c"].astype(object), categories=["b", "a", "q", *chunks[2]["c"].cat.categories])
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    f = qdf.QdfFile(path)
    assert f.num_row_groups == -(-205 // 4)
    assert pa.types.is_int16(f.schema.field("c").type.index_type)
    # A filter that keeps nothing still returns the file's categories.
    empty = qdf.read_qdf(path, filter=qdf.col("v") > 10**6)
    assert list(empty["c"].cat.categories) == list(want["c"].cat.categories) and len(empty) == 0


def test_record_batch_reader_input(tmp_path):
    t = pa.table({"x": np.arange(1000), "y": np.arange(1000) * 0.5})
    reader = pa.RecordBatchReader.from_batches(t.schema, t.to_batches(max_chunksize=90))
    qdf.write_qdf(reader, tmp_path / "r.qdf", row_group_size=256)
    f = qdf.QdfFile(tmp_path / "r.qdf")
    assert [g.num_rows for g in f.row_groups] == [256, 256, 256, 232]
    assert f.read(output="arrow").equals(t)


def test_append(tmp_path, frame):
    path = tmp_path / "ap.qdf"
    a, b = frame.iloc[:25], frame.iloc[25:]
    qdf.write_qdf(a, path, row_group_size=10, append=True)  # a missing file is created
    qdf.write_qdf(b, path, row_group_size=10, append=True)
    f = qdf.QdfFile(path)
    assert [g.num_rows for g in f.row_groups] == [10, 10, 5, 10, 5]
    pd.testing.assert_frame_equal(qdf.read_qdf(path), frame, check_exact=True)


def test_append_rejects_another_schema(tmp_path):
    path = tmp_path / "x.qdf"
    qdf.write_qdf(pd.DataFrame({"a": [1], "b": ["x"]}), path)
    before = path.read_bytes()
    with pytest.raises(SchemaMismatchError, match="int32 but the file has int64") as e:
        qdf.write_qdf(pd.DataFrame({"a": np.array([1], np.int32), "b": ["y"]}), path, append=True)
    assert e.value.column == "a"
    with pytest.raises(SchemaMismatchError) as e:
        qdf.write_qdf(pd.DataFrame({"a": [1], "c": ["y"]}), path, append=True)
    assert e.value.column == "c"
    assert isinstance(e.value, qdf.QdfError)
    assert path.read_bytes() == before
    assert not [p for p in tmp_path.iterdir() if p.name != "x.qdf"]  # no temporary left behind


def test_stream_rejects_a_batch_with_other_types(tmp_path):
    chunks = [pd.DataFrame({"a": [1]}), pd.DataFrame({"a": ["s"]})]
    with pytest.raises(SchemaMismatchError):
        qdf.write_qdf(chunks, tmp_path / "x.qdf")
    assert not list(tmp_path.iterdir())


def test_all_null_chunk_takes_the_later_type(tmp_path):
    t1 = pa.table({"a": pa.array([None, None])})
    t2 = pa.table({"a": pa.array(["x", None])})
    qdf.write_qdf([t1, t2], tmp_path / "n.qdf", row_group_size=2)
    got = qdf.read_qdf(tmp_path / "n.qdf", output="arrow")
    assert got.column("a").to_pylist() == [None, None, "x", None] and got.schema.field("a").type == pa.string()


@pytest.mark.parametrize("bad", [
    pa.table({"m": pa.array([pa.MonthDayNano([1, 2, 3])], pa.month_day_nano_interval())}),
    pd.DataFrame({"c": [1 + 2j, 3j, 0j]}),
    pa.table({"u": pa.UnionArray.from_sparse(pa.array([0, 1], pa.int8()), [pa.array([1, 2]), pa.array(["a", "b"])])}),
])
def test_unsupported_columns_are_named(tmp_path, bad):
    with pytest.raises(qdf.UnsupportedTypeError) as e:
        qdf.write_qdf(bad, tmp_path / "u.qdf")
    name = bad.column_names[0] if isinstance(bad, pa.Table) else bad.columns[0]
    assert e.value.column == name
    with pytest.raises(qdf.UnsupportedTypeError):
        qdf.write_qdf(bad.slice(0, 0) if isinstance(bad, pa.Table) else bad.iloc[:0], tmp_path / "u.qdf")
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("size", [0, -1, 2**24 + 1, 1.5, True])
def test_row_group_size_is_checked(tmp_path, size):
    with pytest.raises(qdf.InvalidOptionError):
        qdf.write_qdf({"a": [1]}, tmp_path / "x.qdf", row_group_size=size)


def test_empty_inputs(tmp_path):
    df = pd.DataFrame({"a": pd.Series([], dtype="Int64"), "c": pd.Categorical([], categories=["x", "y"])})
    qdf.write_qdf(df, tmp_path / "e.qdf")
    f = qdf.QdfFile(tmp_path / "e.qdf")
    assert f.num_row_groups == 0 and f.num_rows == 0
    pd.testing.assert_frame_equal(qdf.read_qdf(tmp_path / "e.qdf"), df, check_exact=True)
    with pytest.raises(qdf.InvalidOptionError, match="no batches"):
        qdf.write_qdf(iter([]), tmp_path / "none.qdf")


def test_memory_filesystem_round_trip(frame):
    url = "memory://qdf-tests/frame.qdf"
    qdf.write_qdf(frame, url, row_group_size=11)
    pd.testing.assert_frame_equal(qdf.read_qdf(url), frame, check_exact=True)
    qdf.write_qdf(frame, url, row_group_size=11, append=True)
    assert qdf.QdfFile(url).num_rows == 2 * N
    got = qdf.read_qdf(url, columns=["int64"], filter=qdf.col("int64") == int(frame["int64"].iloc[3]))
    assert len(got) == 2


def test_remote_reads_fetch_only_surviving_row_groups(monkeypatch):
    """A remote open costs one request; a read fetches only the row groups it needs."""
    from fsspec.implementations.memory import MemoryFileSystem

    n = 10_000
    url = "memory://qdf-tests/ranged.qdf"
    qdf.write_qdf(pd.DataFrame({"x": np.arange(n)}), url, row_group_size=1000)
    f = qdf.QdfFile(url)
    calls = []
    orig = MemoryFileSystem.cat_file

    def spy(self, path, start=None, end=None, **kw):
        calls.append((start, end))
        return orig(self, path, start=start, end=end, **kw)

    monkeypatch.setattr(MemoryFileSystem, "cat_file", spy)
    got = qdf.read_qdf(url, filter=(qdf.col("x") >= 4500) & (qdf.col("x") < 5200), output="arrow")
    assert got.column("x").to_pylist() == list(range(4500, 5200))
    size = f.size
    groups = {(g.offset, g.offset + g.length) for g in f.row_groups[4:6]}
    assert calls[0] == (0, size)  # a small file: header, footer and trailer in one request
    assert set(calls[1:]) == groups


def test_explain_columns_summary_and_html(tmp_path, frame):
    path = tmp_path / "e.qdf"
    qdf.write_qdf(frame, path, row_group_size=10)
    f = qdf.QdfFile(path)
    plan = f.explain()
    assert list(plan.columns) == ["index", "rows", "bytes", "read", "rows_read", "reason"]
    assert (plan["rows_read"] == plan["rows"]).all()
    assert plan["read"].all() and plan["rows"].sum() == N
    s = f.columns_summary()
    assert list(s["column"]) == frame.columns.tolist()
    row = s.set_index("column").loc["Int64"]
    assert row["null_count"] == frame["Int64"].isna().sum()
    assert row["min"] == frame["Int64"].min() and row["max"] == frame["Int64"].max()
    assert row["bytes"] > 0 and row["ratio"] > 0 and row["codecs"]
    assert s.set_index("column").loc["dttz_ns", "min"] == frame["dttz_ns"].min()
    assert s.set_index("column").loc["arrow_struct", "bytes"] > 0  # shredded slots are summed
    html = f._repr_html_()
    assert "4 row groups" in html and "cat_ordered" in html and "<table" in html
    assert "rows=40" in repr(f) and "row_groups=4" in repr(f)
    assert f.metadata["container_version"] == "2.0"
    g = f.row_groups[0]
    assert (g.index, g.num_rows) == (0, 10) and g.statistics["int8"].min == frame["int8"].iloc[:10].min()


def test_statistics_of_long_strings_are_sound_bounds(tmp_path):
    vals = ["a" * 100 + "b", "a" * 100, "\U0010fffe" * 40, "zz", "\U0010ffff" * 30 + "x", "b"]
    path = tmp_path / "l.qdf"
    qdf.write_qdf({"s": vals}, path, row_group_size=4)
    g0, g1 = qdf.QdfFile(path).row_groups
    st = g0.statistics["s"]
    assert not st.exact and len(st.min.encode()) <= 64 and len(st.max.encode()) <= 68
    assert st.min <= min(vals[:4]) and st.max > max(vals[:4])
    # No short upper bound exists above U+10FFFF...: the statistics are dropped, not wrong.
    assert g1.statistics["s"].min is None and g1.statistics["s"].max is None
    for v in vals:
        got = qdf.read_qdf(path, filter=qdf.col("s") == v, output="arrow")
        assert got.column("s").to_pylist() == [v]


def test_read_options(tmp_path):
    df = pd.DataFrame({"k": ["a", "b", None, "c"] * 25, "v": np.arange(100.0), "i": np.arange(100)})
    path = tmp_path / "o.qdf"
    qdf.write_qdf(df, path, row_group_size=30, mode="balanced")
    # DNF filters, like pyarrow's.
    got = qdf.read_qdf(path, filter=[("i", ">=", 90), ("k", "in", ["a", "b"])])
    pd.testing.assert_frame_equal(got, df[(df.i >= 90) & df.k.isin(["a", "b"])].reset_index(drop=True))
    # categories=: one dictionary across row groups.
    cat = qdf.read_qdf(path, categories=["k"], output="arrow").column("k")
    assert pa.types.is_dictionary(cat.type) and cat.num_chunks == 4
    assert len({c.dictionary.to_pylist().__repr__() for c in cat.chunks}) == 1
    assert cat.to_pylist() == ["a", "b", None, "c"] * 25
    # No columns: still the row count.
    assert len(qdf.read_qdf(path, columns=[])) == 100
    assert len(qdf.read_qdf(path, columns=[], filter=qdf.col("i") < 45)) == 45
    assert qdf.read_qdf(path, output="numpy")["i"].tolist() == list(range(100))
    with pytest.raises(qdf.QueryError, match="on_error"):
        qdf.read_qdf(path, on_error="ignore")
    with pytest.raises(qdf.QueryError, match="threads"):
        qdf.read_qdf(path, threads=0)
    with pytest.raises(qdf.QueryError, match="unknown column"):
        qdf.read_qdf(path, columns=["nope"])
    with pytest.raises(qdf.QueryError, match="not a string column"):
        qdf.read_qdf(path, categories=["v"])


def test_no_copy_columns_outlive_the_file(tmp_path):
    import gc

    v = np.random.default_rng(1).normal(size=50_000)
    path = tmp_path / "nc.qdf"
    # Raw floats in plain v1 buffers: go_compatible (the balanced preset would take ALP-RD, which
    # decodes into new memory) and version 1 (a version-2 chunk may be a zstd frame)
    qdf.write_qdf({"v": v, "i": np.arange(50_000)}, path, row_group_size=20_000, mode="balanced",
                  go_compatible=True, format_version=1)
    with qdf.QdfFile(path) as f:
        t = f.read(output="arrow", no_copy=True)
        base = np.frombuffer(f._src._map, dtype=np.uint8).ctypes.data
        # Raw float columns are views of the map itself.
        assert all(base <= c.buffers()[1].address < base + f.size for c in t.column("v").chunks)
    del f
    gc.collect()
    path.unlink()  # the mapping outlives the directory entry (POSIX)
    assert np.array_equal(t.column("v").to_numpy(), v)
    assert t.column("i").to_pylist()[-1] == 49_999


def test_remote_file_with_a_footer_beyond_the_first_tail_read(monkeypatch):
    from fsspec.implementations.memory import MemoryFileSystem

    from qdf_columnar.io.source import TAIL_BYTES

    rng = np.random.default_rng(2)
    t = pa.table({"id": np.arange(12_000), **{f"c{i}": rng.integers(0, 10**9, 12_000) for i in range(24)}})
    url = "memory://qdf-tests/wide.qdf"
    qdf.write_qdf(t, url, row_group_size=15, mode="speed")  # ~800 groups: a footer past the first tail read
    f = qdf.QdfFile(url)
    assert f.metadata["footer_bytes"] > TAIL_BYTES and f.size > 2 * TAIL_BYTES
    calls = []
    orig = MemoryFileSystem.cat_file
    monkeypatch.setattr(MemoryFileSystem, "cat_file",
                        lambda self, p, start=None, end=None, **kw: calls.append((start, end)) or orig(
                            self, p, start=start, end=end, **kw))
    got = qdf.read_qdf(url, filter=qdf.col("id") == 11_999, output="arrow")
    assert got.num_rows == 1
    assert calls[:2] == [(0, 8), (f.size - TAIL_BYTES, f.size)]  # head and tail, then the footer
    assert calls[2] == (f._meta.footer_offset, f._meta.footer_offset + f._meta.footer_length)
    last = f.row_groups[-1]
    assert calls[3:] == [(last.offset, last.offset + last.length)]


def test_categorical_of_timestamps(tmp_path):
    df = pd.DataFrame({"c": pd.Categorical(pd.to_datetime(["2020-01-01", "2021-06-01"] * 5))})
    qdf.write_qdf(df, tmp_path / "ct.qdf", row_group_size=4)
    pd.testing.assert_frame_equal(qdf.read_qdf(tmp_path / "ct.qdf"), df, check_exact=True)
    pd.testing.assert_frame_equal(qdf.decode(qdf.encode(df)), df, check_exact=True)
