"""Zone maps of .qdf files (docs/FORMAT.md §4.3-4.5): statistics per run of rows inside a
row group, so a filter decodes and evaluates only the zones that may match.

Contract: a zone is ruled out only when no row in it can be TRUE under SQL three-valued
logic with qdf's NaN rules, so ``read_qdf(filter=e)`` always equals evaluating ``e`` row
by row; on a column sorted within its groups, a narrow range decodes only the zones that
hold it; a hostile ``zones`` map raises CorruptDataError, never another exception.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from test_files_chunks import _footer, _refooter
from test_files_prune import _ref, _same, exprs, tables

import qdf_columnar as qdf
from qdf_columnar import api
from qdf_columnar.io import reader as reader_mod
from qdf_columnar.io import writer as writer_mod
from qdf_columnar.io.layout import ZONE_ROWS
from qdf_columnar.io.prune import Pruner, zone_mask
from qdf_columnar.io.zones import zone_stats
from qdf_columnar.query import as_expr
from qdf_columnar.wire.values import dumps, loads

col = qdf.col


def _log(n: int = 100_000, seed: int = 5) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "ts": pd.Timestamp("2026-01-01") + pd.to_timedelta(np.sort(rng.integers(0, 86_400 * 10**6, n)), unit="us"),
        "seq": np.arange(n, dtype=np.int64),
        "lat": rng.gamma(2.0, 30.0, n),
        "code": pd.array(rng.choice([200, 404, None], n), dtype="Int64"),
        "path": rng.choice(["/a", "/b", "/c"], n),
    })


def test_zone_maps_are_written_for_groups_longer_than_a_zone():
    df = _log(50_000)
    f = qdf.QdfFile(qdf.write_qdf(df, None, row_group_size=20_000))
    assert f._meta.zone_rows == ZONE_ROWS
    assert [len(g.zones) for g in f.row_groups] == [3, 3, 2]  # 20k, 20k and 10k rows
    z = f.row_groups[1].zones[2]  # rows 36,384 .. 39,999 of the table
    assert z["seq"].min == 20_000 + 2 * ZONE_ROWS and z["seq"].max == 39_999
    part = df.iloc[20_000 + 2 * ZONE_ROWS:40_000]
    assert z["code"].null_count == part["code"].isna().sum()
    assert z["ts"].min == part["ts"].iloc[0].value // 1000  # storage ticks (us)
    assert z["path"].min is None and z["path"].null_count == 0  # strings: null counts only
    short = qdf.QdfFile(qdf.write_qdf(df, None, row_group_size=ZONE_ROWS))
    assert all(not g.zones for g in short.row_groups) and short._meta.zone_rows == 0
    assert "zones" not in _footer(qdf.write_qdf(df, None, row_group_size=ZONE_ROWS))[1]
    off = qdf.write_qdf(df, None, row_group_size=20_000, zone_maps=False)
    assert "zones" not in _footer(off)[1] and all(not g.zones for g in qdf.QdfFile(off).row_groups)
    with pytest.raises(qdf.InvalidOptionError, match="zone_maps"):
        qdf.write_qdf(df, None, zone_maps="yes")


def test_version_1_files_have_no_zone_maps():
    blob = qdf.write_qdf(_log(20_000), None, format_version=1)
    assert "zones" not in _footer(blob)[1] and not qdf.QdfFile(blob).row_groups[0].zones


def test_zone_stats_match_group_statistics_of_the_same_rows():
    """Each zone's figures are what column_stats gives for exactly those rows."""
    from qdf_columnar.io.stats import column_stats

    rng = np.random.default_rng(2)
    n = 3 * 1024 + 17
    t = pa.table({
        "i": pa.array(np.where(rng.random(n) < 0.2, None, rng.integers(-50, 50, n)).tolist(), pa.int64()),
        "u": pa.array(rng.integers(0, 2**64 - 1, n, dtype=np.uint64)),
        "f": pa.array([None if i % 7 == 0 else (float("nan") if i % 11 == 0 else float(x))
                       for i, x in enumerate(rng.normal(size=n))], pa.float64()),
        "h": pa.array(rng.normal(size=n).astype(np.float16)),
        "d": pa.array(rng.integers(0, 20_000, n).astype("datetime64[D]")),
        "allnull": pa.nulls(n, pa.int32()),
        "b": pa.array(rng.random(n) < 0.5),
    })
    zones = zone_stats(t, 1024)
    assert len(zones) == 4
    for k, z in enumerate(zones):
        part = t.slice(k * 1024, 1024)
        for name in ("i", "u", "f", "h", "d", "allnull"):
            want = column_stats(part.column(name))
            got = z[name]
            assert (got.null_count, got.nan_count, got.min, got.max) == \
                (want.null_count, want.nan_count, want.min, want.max), (k, name)
        assert z["b"].null_count == 0 and z["b"].min is None
    assert zone_stats(t.slice(0, 1024), 1024) == ()


def test_a_narrow_range_decodes_only_its_zones(monkeypatch):
    df = _log(100_000)
    f = qdf.QdfFile(qdf.write_qdf(df, None, row_group_size=100_000))
    seen: list[int] = []
    real = api.decode_chunk_arrays

    def spy(buf, **kw):
        if kw.get("filter_form"):  # the filter's chunk: the rows its zones leave
            seen.append(-1 if kw.get("rows") is None else len(kw["rows"]))
        return real(buf, **kw)

    monkeypatch.setattr(reader_mod, "decode_chunk_arrays", spy)
    lo = df["ts"].iloc[40_000]
    hi = lo + pd.Timedelta(minutes=5)
    expr = (col("ts") >= lo) & (col("ts") < hi)
    got = f.read(filter=expr)
    want = df[(df.ts >= lo) & (df.ts < hi)].reset_index(drop=True)
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    assert seen and all(0 < k <= 2 * ZONE_ROWS for k in seen), seen  # one or two zones of 13
    plan = f.explain(expr)
    assert plan.loc[0, "read"] and plan.loc[0, "rows_read"] == seen[0] and plan.loc[0, "rows"] == 100_000
    seen.clear()
    # An unclustered column rules no zone out: the chunks decode whole.
    got = f.read(filter=col("lat") > 100, columns=["seq"])
    assert seen == [-1]
    pd.testing.assert_frame_equal(got, df.loc[df.lat > 100, ["seq"]].reset_index(drop=True), check_exact=True)
    seen.clear()
    # Every zone ruled out inside a group the group statistics keep: no row is decoded.
    got = f.read(filter=(col("seq") < 5000) & (col("seq") > 9000), columns=["path"])
    assert len(got) == 0 and list(got.columns) == ["path"] and seen == [0]


@pytest.mark.parametrize("expr", [
    (col("seq") < 100) | (col("seq") > 99_990),
    ~(col("seq") >= 20_000),
    col("seq").isin([5, 50_000, 99_999]),
    col("code").is_null() & (col("seq") < 9000),
    (col("lat") > 200) & (col("seq") >= 30_000) & (col("seq") < 31_000),
    col("seq") == 16_383.0,
    col("seq") < 16_383.5,  # a fraction against integers: decided zone by zone
    col("ts") > pd.Timestamp("2026-01-01 23:00"),
], ids=repr)
def test_zone_pruned_reads_equal_pandas(expr):
    df = _log(100_000, seed=9)
    f = qdf.QdfFile(qdf.write_qdf(df, None, row_group_size=60_000))
    for columns in (None, ["path", "lat"]):
        got = f.read(filter=expr, columns=columns)
        full = qdf.decode(qdf.encode(df), filter=expr)  # the buffer path: no zone maps
        want = full if columns is None else full[columns]
        pd.testing.assert_frame_equal(got, want.reset_index(drop=True), check_exact=True)


def test_vectorised_zone_verdicts_equal_zone_by_zone_verdicts():
    df = _log(40_000, seed=3)
    f = qdf.QdfFile(qdf.write_qdf(df, None, row_group_size=40_000))
    g = f.row_groups[0]
    t0 = df["ts"].iloc[10_000]
    for e in [col("seq") > 12_000, col("ts") <= t0, (col("lat") < 5) | col("code").is_null(),
              ~col("seq").isin([3, 30_000]), col("code") != 200, col("lat") == float("nan")]:
        expr = as_expr(e)
        prune = Pruner(expr, f._filter_kinds(expr))
        fast = zone_mask(prune, g.zones, f._meta.zone_rows, g.num_rows)
        slow = zone_mask(prune, list(g.zones), f._meta.zone_rows, g.num_rows)  # a list has no arrays
        assert fast.tolist() == slow.tolist(), e


# --------------------------------------------------------------------------- property
BLOCK = 512  # rows of one drawn value; zones of 1024 rows hold two blocks


@settings(max_examples=60, deadline=None)
@given(table=tables().filter(lambda t: t.num_rows > 0), data=st.data(), groups=st.integers(1, 4))
def test_zone_pruning_never_drops_a_matching_row(table, data, groups):
    expr = data.draw(exprs(table.column_names))
    blocks = table.to_pylist()
    truth = [_ref(expr, r) is True for r in blocks]
    big = table.take(pa.array(np.repeat(np.arange(table.num_rows), BLOCK)))
    size = -(-big.num_rows // groups)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(writer_mod, "ZONE_ROWS", 1024)
        blob = qdf.write_qdf(big, None, row_group_size=size)
    f = qdf.QdfFile(blob)
    assert f._meta.zone_rows in (0, 1024)
    seen = {"ruled out": 0}
    real = reader_mod.QdfFile._zone_candidates

    def count(self, g, e):
        cand = real(self, g, e)
        if cand is not None:
            seen["ruled out"] += 1
            start = sum(h.num_rows for h in self.row_groups[:g.index])
            kept = set(((cand + start) // BLOCK).tolist())
            assert all(not truth[b] for b in range((start // BLOCK), (start + g.num_rows - 1) // BLOCK + 1)
                       if b not in kept), expr
        return cand

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(reader_mod.QdfFile, "_zone_candidates", count)
        got = f.read(filter=expr, output="arrow").to_pylist()
    event(f"a zone ruled out: {seen['ruled out'] > 0}")
    want = [r for r, t in zip(blocks, truth) if t for _ in range(BLOCK)]
    assert _same(got, want), expr


# --------------------------------------------------------------------------- hostile
@pytest.fixture(scope="module")
def zoned() -> bytes:
    return qdf.write_qdf(_log(30_000), None, row_group_size=20_000)


@pytest.mark.parametrize("edit,match", [
    (lambda z: z.update(rows=512), "zones.rows 512"),
    (lambda z: z.update(rows=-1), "zones.rows"),
    (lambda z: z.update(rows="8192"), "zones.rows"),
    (lambda z: z.update(count=np.array([2, 2], dtype=np.uint64)), "row group 0 of 20000 rows has 2 zones"),
    (lambda z: z.update(count=np.array([3], dtype=np.uint64)), "zone counts"),
    (lambda z: z.update(count=np.array([3, 1], dtype=np.uint64)), "row group 1 of 10000 rows has 1 zones"),
    (lambda z: z.update(stats=z["stats"][:2]), "one buffer per schema field"),
    (lambda z: z.update(stats="x"), "one buffer per schema field"),
], ids=["small", "negative", "str", "count", "count-len", "short-group", "stats-len", "stats-type"])
def test_hostile_zone_maps_are_refused(zoned, edit, match):
    _, meta = _footer(zoned)
    edit(meta["zones"])
    with pytest.raises(qdf.CorruptDataError, match=match):
        qdf.QdfFile(_refooter(zoned, meta))


def test_hostile_zone_statistics_are_refused_when_a_filter_needs_them(zoned):
    _, meta = _footer(zoned)
    names = qdf.QdfFile(zoned).schema.names
    k = names.index("seq")
    entry = loads(meta["zones"]["stats"][k])
    entry["lo"], entry["hi"] = entry["hi"], entry["lo"]  # min > max in every zone
    meta["zones"]["stats"][k] = dumps(entry, mode="balanced")
    f = qdf.QdfFile(_refooter(zoned, meta))
    assert len(f.read()) == 30_000  # a read without a filter never looks at zone maps
    with pytest.raises(qdf.CorruptDataError, match="zone maps"):
        f.read(filter=col("seq") > 5)
    meta["zones"]["stats"][k] = b"QDF\x01\x00\xff"
    with pytest.raises(qdf.CorruptDataError, match="zone maps of 'seq'"):
        qdf.QdfFile(_refooter(zoned, meta)).read(filter=col("seq") > 5)
    meta["zones"] = "nope"
    with pytest.raises(qdf.CorruptDataError, match="zones is not a map"):
        qdf.QdfFile(_refooter(zoned, meta))


def test_too_many_zones_are_refused(zoned, monkeypatch):
    from qdf_columnar.io import layout

    monkeypatch.setattr(layout, "MAX_ZONES", 4)
    with pytest.raises(qdf.CorruptDataError, match="5 zones, more than 4"):
        qdf.QdfFile(zoned)


def test_append_keeps_zone_maps(tmp_path):
    df = _log(30_000)
    path = tmp_path / "z.qdf"
    qdf.write_qdf(df.iloc[:20_000], path, row_group_size=20_000)
    qdf.write_qdf(df.iloc[20_000:].reset_index(drop=True), path, row_group_size=20_000, append=True)
    f = qdf.QdfFile(path)
    assert [len(g.zones) for g in f.row_groups] == [3, 2]
    assert f.row_groups[0].zones[1]["seq"].min == ZONE_ROWS
    expr = (col("seq") >= 17_000) & (col("seq") < 23_000)
    pd.testing.assert_frame_equal(f.read(filter=expr), df[(df.seq >= 17_000) & (df.seq < 23_000)]
                                  .reset_index(drop=True), check_exact=True)
