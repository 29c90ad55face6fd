"""``api.decode_rows``: late materialisation of chosen rows, as a .qdf reader uses it
after evaluating a filter on other column chunks."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import qdf_columnar as qdf
from qdf_columnar.api import decode_rows


def _table(n: int = 3000) -> pa.Table:
    rng = np.random.default_rng(4)
    return pa.table({
        "i": pa.array(rng.integers(-10**6, 10**6, n)),
        "cat": pa.array(rng.choice(["a", "b", "c", None], n).tolist()),
        "name": pa.array([f"name-{k}" for k in rng.integers(0, 900, n)]),
        "f": pa.array(np.round(rng.normal(size=n), 2)),
        "ts": pa.array(rng.integers(0, 10**12, n).astype("datetime64[us]")),
        "tags": pa.array([[f"t{k}" for k in range(j % 4)] if j % 7 else None for j in range(n)]),
        "pt": pa.array([{"x": j, "y": str(j % 5)} for j in range(n)]),
    })


@pytest.mark.parametrize("mode,extra", [("balanced", {}), ("compression", {}), ("speed", {}),
                                        ("balanced", {"go_compatible": True}),
                                        ("balanced", {"nested": "rows"})])
@pytest.mark.parametrize("pick", ["none", "some", "all"])
def test_decode_rows_is_decode_then_take(mode, extra, pick):
    t = _table()
    buf = qdf.encode(t, mode=mode, **extra)
    rows = {"none": np.zeros(0, np.int64), "some": np.arange(3, t.num_rows, 7),
            "all": np.arange(t.num_rows)}[pick]
    got = decode_rows(buf, rows, t.num_rows)
    want = qdf.decode(buf, output="arrow").take(pa.array(rows))
    assert got.equals(want)
    assert got.equals(t.take(pa.array(rows)))


def test_decode_rows_checks_its_arguments():
    t = _table(100)
    buf = qdf.encode(t)
    with pytest.raises(qdf.CorruptDataError, match="holds 100 rows, expected 101"):
        decode_rows(buf, np.arange(5), 101)
    for bad in ([5, 3], [0, 0], [-1], [100], [[1, 2]]):
        with pytest.raises(qdf.QueryError, match="ascending row numbers"):
            decode_rows(buf, np.array(bad), 100)


@pytest.mark.parametrize("version", [1, 2])
def test_filtered_file_reads_materialise_only_survivors(tmp_path, version):
    t = _table(20_000)
    path = tmp_path / "f.qdf"
    qdf.write_qdf(t, path, row_group_size=3000, format_version=version)
    df = t.to_pandas()
    for where, mask in [
        (qdf.col("i") > 900_000, df["i"] > 900_000),
        (qdf.col("cat") == "b", df["cat"] == "b"),
        (qdf.col("i") > 10**7, df["i"] > 10**7),  # nothing survives
        ((qdf.col("f") < 0) | qdf.col("cat").is_null(), (df["f"] < 0) | df["cat"].isna()),
    ]:
        for columns in (None, ["name", "tags"], ["pt", "i"], ["cat"]):
            got = qdf.read_qdf(path, columns=columns, filter=where, output="arrow")
            want = t.filter(pa.array(mask.to_numpy()))
            if columns is not None:
                want = want.select(columns)
            assert got.equals(want), (where, columns)


@pytest.mark.parametrize("mode,extra", [("balanced", {}), ("compression", {}), ("speed", {}),
                                        ("balanced", {"go_compatible": True})])
def test_chunk_arrays_are_the_decoded_columns(mode, extra):
    """``decode_chunk_arrays`` (a .qdf reader's per-chunk decode) gives the columns of
    ``decode_arrow`` / ``decode_rows`` / ``decode_filter_inputs`` without their table,
    for every root a chunk may have: columnar, levels, rows, and logical types."""
    from qdf_columnar.api import decode_arrow, decode_chunk_arrays, decode_filter_inputs

    t = _table(500)
    extra_cols = {
        "fsb": pa.array([bytes([j % 7]) * 3 if j % 5 else None for j in range(500)], pa.binary(3)),
        "sv": pa.array([f"v{j % 9}" for j in range(500)], pa.string_view()),
        "f32cat": pa.array((np.arange(500) % 6).astype(np.float32)),
    }
    for name, arr in extra_cols.items():
        t = t.append_column(name, arr)
    rows = np.arange(1, 500, 3)
    for name in t.column_names:
        one = t.select([name])
        buf = qdf.encode(one, mode=mode, **extra)
        names, arrays, n = decode_chunk_arrays(buf, for_pandas=True)
        want = decode_arrow(buf, for_pandas=True)
        assert names == [name] and n == 500 and arrays[0].equals(want.column(0).combine_chunks())
        assert arrays[0].cast(one.schema.field(0).type).equals(one.column(0).combine_chunks())
        names, arrays, n = decode_chunk_arrays(buf, rows=rows, n_rows=500)
        assert names == [name] and n == len(rows)
        assert arrays[0].equals(decode_rows(buf, rows, 500).column(0).combine_chunks())
        names, arrays, n = decode_chunk_arrays(buf, filter_form=True)
        assert arrays[0].equals(decode_filter_inputs(buf).column(0).combine_chunks())
    with pytest.raises(qdf.CorruptDataError, match="holds 500 rows, expected 501"):
        decode_chunk_arrays(qdf.encode(t.select(["i"])), rows=np.arange(3), n_rows=501)
