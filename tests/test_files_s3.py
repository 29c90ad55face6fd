"""``s3://`` paths through fsspec/s3fs against a local S3-compatible server (moto).

Contract: write, append, filtered and projected reads work on an object store
with ranged requests; the server is started on a free loopback port by the test
itself. Skipped only when moto (or s3fs) is not installed.
"""

from __future__ import annotations

import socket

import numpy as np
import pandas as pd
import pytest

import qdf_columnar as qdf

moto_server = pytest.importorskip("moto.server")
pytest.importorskip("s3fs")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def s3():
    port = _free_port()
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    opts = {
        "key": "testing",
        "secret": "testing",
        "client_kwargs": {"endpoint_url": f"http://127.0.0.1:{port}"},
        "skip_instance_cache": True,
    }
    import s3fs

    fs = s3fs.S3FileSystem(**opts)
    fs.mkdir("qdf-bucket")
    try:
        yield opts
    finally:
        server.stop()


def test_s3_round_trip_append_and_pruned_read(s3):
    url = "s3://qdf-bucket/dir/data.qdf"
    df = pd.DataFrame({
        "id": np.arange(5000),
        "city": pd.Categorical(np.where(np.arange(5000) % 3 == 0, "Oslo", "Lima")),
        "v": pd.array(np.arange(5000) % 7, dtype="Int32"),
    })
    qdf.write_qdf(df.iloc[:3000], url, row_group_size=1000, storage_options=s3)
    qdf.write_qdf(df.iloc[3000:], url, row_group_size=1000, append=True, storage_options=s3)
    f = qdf.QdfFile(url, storage_options=s3)
    assert f.num_row_groups == 5 and f.num_rows == 5000
    pd.testing.assert_frame_equal(qdf.read_qdf(url, storage_options=s3), df, check_exact=True)
    e = (qdf.col("id") >= 3500) & (qdf.col("city") == "Oslo")
    assert f.explain(e)["read"].tolist() == [False, False, False, True, True]
    got = qdf.read_qdf(url, columns=["id", "v"], filter=e, storage_options=s3)
    want = df.loc[(df.id >= 3500) & (df.city == "Oslo"), ["id", "v"]].reset_index(drop=True)
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    assert "dictionary" in f.columns_summary().set_index("column").loc["city", "type"]
