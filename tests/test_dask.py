"""qdf_columnar.dask on a small distributed cluster: planned pruning, pushdown, projection, round trips.

Contract: ``read_qdf`` over many files equals ``qdf.read_qdf`` of each file concatenated
(filter, columns and dtypes included); the row groups a filter rules out get no
partition, before any task runs; ``to_qdf`` writes one file per partition that reads
back equal, with its divisions.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import qdf_columnar as qdf

dask = pytest.importorskip("dask")
dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

from qdf_columnar import dask as qdask  # noqa: E402 - after the skips

N_FILES, ROWS, GROUP = 8, 40, 10  # 32 row groups of 10 rows


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                       dashboard_address=None)
    c = distributed.Client(cluster)
    try:
        yield c
    finally:
        c.close()
        cluster.close()


@pytest.fixture
def exact_strings():
    """dask's convert-string option off, so dtypes can be compared exactly."""
    with dask.config.set({"dataframe.convert-string": False}):
        yield


def _frame(i: int) -> pd.DataFrame:
    x = np.arange(i * ROWS, (i + 1) * ROWS)
    s = pd.Series([["a", "b", "c"][v % 3] for v in x], dtype="str")
    s[x % 7 == 0] = None
    f = (x * 0.5).astype("float64")
    f[x % 11 == 0] = np.nan
    return pd.DataFrame({
        "x": x,
        "s": s,
        "f": f,
        "cat": pd.Categorical([["lo", "hi"][v % 2] for v in x], categories=["lo", "hi"]),
        "ts": pd.date_range("2025-01-01", periods=ROWS, freq="min", tz="Europe/Paris") + pd.Timedelta(hours=i),
    })


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> list[str]:
    d = tmp_path_factory.mktemp("dask")
    paths = []
    for i in range(N_FILES):
        p = str(d / f"part.{i}.qdf")
        qdf.write_qdf(_frame(i), p, row_group_size=GROUP)
        paths.append(p)
    return paths


def _groups_read(path: str, flt=None) -> int:
    with qdf.QdfFile(path) as f:
        return int(f.explain(flt)["read"].sum())


def _concat(frames: list[pd.DataFrame]) -> pd.DataFrame:
    return pd.concat(frames, ignore_index=True)


FILTER = (qdf.col("x") >= 95) & (qdf.col("x") < 231) & ~(qdf.col("s") == "b")


def test_filtered_read_matches_pandas_and_prunes_before_tasks(client, files, exact_strings) -> None:
    ddf = qdask.read_qdf(os.path.join(os.path.dirname(files[0]), "*.qdf"), filter=FILTER)
    # x in [95, 231) touches the row groups [90, 100) ... [230, 240): 15 of 32, known from the footers alone.
    planned = sum(_groups_read(p, FILTER) for p in files)
    assert planned == 15
    assert ddf.npartitions == 15
    out = ddf.compute()
    per_file = _concat([qdf.read_qdf(p, filter=FILTER) for p in files])
    pd.testing.assert_frame_equal(out.reset_index(drop=True), per_file)
    # The same rows as pandas filtering under SQL logic: a NULL s is not "not b", it is dropped.
    full = _concat([qdf.read_qdf(p) for p in files])
    want = full[(full.x >= 95) & (full.x < 231) & full.s.notna() & (full.s != "b")]
    pd.testing.assert_frame_equal(out.reset_index(drop=True), want.reset_index(drop=True))
    assert ddf.divisions == (None,) * 16  # filtered RangeIndex partitions are numbered afresh


def test_dnf_filter_and_meta_dtypes(client, files, exact_strings) -> None:
    ddf = qdask.read_qdf(files, filter=[("x", "<", 25), ("cat", "==", "hi")])
    assert ddf.npartitions == 3
    assert ddf._meta.empty
    pd.testing.assert_series_equal(ddf._meta.dtypes, qdf.read_qdf(files[0]).dtypes)
    out = ddf.compute()
    assert out.x.tolist() == [1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23]
    assert (out.cat == "hi").all() and out.cat.dtype == ddf._meta.cat.dtype


def test_projection(client, files, exact_strings) -> None:
    ddf = qdask.read_qdf(files[:3], columns=["f", "x"], filter=qdf.col("s").is_null())
    assert list(ddf.columns) == ["f", "x"]
    want = _concat([qdf.read_qdf(p, columns=["f", "x"], filter=qdf.col("s").is_null()) for p in files[:3]])
    pd.testing.assert_frame_equal(ddf.compute().reset_index(drop=True), want)
    # A later selection is pushed into the reads (and the result is the same).
    sel = qdask.read_qdf(files[:3])[["ts"]]
    pd.testing.assert_frame_equal(sel.compute().reset_index(drop=True),
                                  _concat([qdf.read_qdf(p, columns=["ts"]) for p in files[:3]]))


def test_unfiltered_divisions_and_everything_pruned(client, files, exact_strings) -> None:
    one = qdask.read_qdf(files[2])
    assert one.npartitions == 4 and one.divisions == (0, 10, 20, 30, 39)
    pd.testing.assert_frame_equal(one.compute(), qdf.read_qdf(files[2]))
    # Files that each start at row 0 overlap: divisions unknown.
    assert not qdask.read_qdf(files[:2]).known_divisions
    none = qdask.read_qdf(files, filter=qdf.col("x") > 10_000)
    assert none.npartitions == 1 and len(none.compute()) == 0
    assert list(none.columns) == ["x", "s", "f", "cat", "ts"]


def test_sorted_stored_index_gives_divisions(client, tmp_path) -> None:
    idx = pd.date_range("2025-03-01", periods=60, freq="h", tz="UTC", name="when")
    df = pd.DataFrame({"v": np.arange(60)}, index=idx)
    p = str(tmp_path / "t.qdf")
    qdf.write_qdf(df, p, row_group_size=20)
    ddf = qdask.read_qdf(p, filter=qdf.col("v") >= 10)
    assert ddf.divisions == (idx[0], idx[20], idx[40], idx[59])  # footer bounds of the groups read
    pd.testing.assert_frame_equal(ddf.loc["2025-03-02 18:00":"2025-03-02 20:00"].compute(),
                                  df.loc["2025-03-02 18:00":"2025-03-02 20:00"], check_freq=False)


def test_categories_across_files(client, tmp_path) -> None:
    a, b = str(tmp_path / "a.qdf"), str(tmp_path / "b.qdf")
    qdf.write_qdf(pd.DataFrame({"k": pd.Categorical(["x", "y"]), "s": ["p", "q"]}), a)
    qdf.write_qdf(pd.DataFrame({"k": pd.Categorical(["z", "x"]), "s": ["q", "r"]}), b)
    ddf = qdask.read_qdf([a, b])
    assert list(ddf._meta.k.cat.categories) == ["x", "y", "z"]  # the union of the files' dictionaries
    out = ddf.compute()
    assert out.k.dtype == ddf._meta.k.dtype and out.k.tolist() == ["x", "y", "z", "x"]
    # categories= dictionaries are made per row group: unknown until read.
    per_group = qdask.read_qdf([a, b], categories=["s"])
    assert not per_group.s.cat.known
    assert sorted(per_group.s.cat.as_known().cat.categories) == ["p", "q", "r"]


def test_to_qdf_round_trip(client, tmp_path, exact_strings) -> None:
    df = _concat([_frame(i) for i in range(2)])
    ddf = dd.from_pandas(df, npartitions=4)
    paths = qdask.to_qdf(ddf, tmp_path / "out", row_group_size=7)
    assert paths == [os.path.join(tmp_path / "out", f"part.{i}.qdf") for i in range(4)]
    assert all(os.path.exists(p) for p in paths)
    back = qdask.read_qdf(tmp_path / "out")
    assert back.npartitions == sum(_groups_read(p) for p in paths) == 12
    assert back.divisions[0] == 0 and back.divisions[-1] == len(df) - 1
    pd.testing.assert_frame_equal(back.compute(), df)


def test_to_qdf_fsspec_lazy(client, exact_strings) -> None:
    df = _frame(3)
    ddf = dd.from_pandas(df, npartitions=2)
    job = qdask.to_qdf(ddf, "memory://qdf-dask-test/out", name_function=lambda i: f"chunk-{i:02d}.qdf",
                       compute=False, overwrite=True)
    paths = job.compute()
    assert paths == ["memory://qdf-dask-test/out/chunk-00.qdf", "memory://qdf-dask-test/out/chunk-01.qdf"]
    back = qdask.read_qdf("memory://qdf-dask-test/out/*.qdf", filter=qdf.col("x") >= 130)
    pd.testing.assert_frame_equal(back.compute().reset_index(drop=True),
                                  df[df.x >= 130].reset_index(drop=True))


def test_mismatched_files_are_refused(tmp_path, files) -> None:
    other = str(tmp_path / "other.qdf")
    qdf.write_qdf(pd.DataFrame({"x": [1.5]}), other)
    with pytest.raises(ValueError, match="columns and types"):
        qdask.read_qdf([files[0], other])
    with pytest.raises(qdf.QueryError):
        qdask.read_qdf(files[0], filter=qdf.col("nope") > 1)
    with pytest.raises(FileNotFoundError):
        qdask.read_qdf(str(tmp_path / "absent-*.qdf"))


def test_import_qdf_columnar_does_not_import_dask() -> None:
    code = ("import sys, qdf_columnar as q, qdf_columnar.dask; q.read_qdf; q.QdfFile;"
            "assert 'dask' not in sys.modules and 'distributed' not in sys.modules, 'dask imported'")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
