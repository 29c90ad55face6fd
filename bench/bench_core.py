"""Core benchmark: qdf vs Parquet (snappy, zstd) vs Arrow IPC (lz4) on a 1M-row log table.

Run with ``make bench`` or ``.venv/bin/python bench/bench_core.py [--rows N] [--rounds K]``.
See bench/README.md for what is measured and how to read the output.

Method, in short: every contender runs in this one process on the same in-memory
Arrow table; each round runs every timed operation once, in a freshly shuffled order
(seeded), with a short pause before each, so drift and neighbour effects (thermal,
page cache, allocator state, the wake-up after a multi-threaded operation) are spread
over all contenders instead of landing on one. Medians and minimums of the rounds are
reported. Kernels are compiled before anything is timed.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numba
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

import qdf_columnar as qdf
from qdf_columnar.datasets import make_log_table

HAVE_QDF = hasattr(qdf, "encode") and hasattr(qdf, "decode")

DEFAULT_ROWS = 1_000_000
SELECT_COLUMNS = ["status", "latency_ms"]
# The ~1 % predicate. With this generator, service is Zipf-distributed (search is the
# rank-2 service, ~16 % of rows) and level is independent of it (ERROR 5 %), so the
# conjunction selects ~0.8 %. It mixes two string columns, the common log query shape.
WHERE_DNF: list[tuple[str, str, Any]] = [("service", "==", "search"), ("level", "==", "ERROR")]
WHERE_TEXT = "service == 'search' AND level == 'ERROR'"

RESULTS_DIR = Path(__file__).resolve().parent / "results"


# ----------------------------------------------------------------------------- contenders


def qdf_where() -> Any:
    """The where predicate as a qdf expression (built lazily: qdf.col may not exist yet)."""
    return (qdf.col("service") == "search") & (qdf.col("level") == "ERROR")


def pandas_where(df: pd.DataFrame) -> pd.DataFrame:
    """The where predicate applied in pandas, with a fresh index like a decoded frame."""
    return df[(df["service"] == "search") & (df["level"] == "ERROR")].reset_index(drop=True)


def parquet_bytes(table: pa.Table, compression: str) -> pa.Buffer:
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression=compression)
    return sink.getvalue()


def ipc_bytes(table: pa.Table) -> pa.Buffer:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, table.schema, options=pa.ipc.IpcWriteOptions(compression="lz4")) as writer:
        writer.write_table(table)
    return sink.getvalue()


def qdf_bytes(table: pa.Table) -> bytes:
    return qdf.encode(table, mode="balanced", column_index=True)


@dataclass
class Op:
    """One timed operation: ``metric`` groups comparable contenders (e.g. "full decode")."""

    metric: str
    contender: str
    fn: Callable[[], Any]
    samples_ns: list[int] = field(default_factory=list)

    def run_once(self) -> None:
        # A collection between samples and none during one: a GC pause triggered by the
        # previous operation's garbage must not be billed to this one (timeit does the same).
        gc.collect()
        time.sleep(SETTLE_SECONDS)  # let the previous operation's threads and frees settle
        gc.disable()
        try:
            t0 = time.perf_counter_ns()
            out = self.fn()
            self.samples_ns.append(time.perf_counter_ns() - t0)
        finally:
            gc.enable()
        del out

    @property
    def median_ms(self) -> float:
        return statistics.median(self.samples_ns) / 1e6

    @property
    def min_ms(self) -> float:
        return min(self.samples_ns) / 1e6


def build_ops(table: pa.Table, bufs: dict[str, Any]) -> list[Op]:
    """Every timed operation (each round shuffles the order)."""
    ops: list[Op] = []
    if HAVE_QDF:
        ops.append(Op("encode", "qdf balanced", lambda: qdf_bytes(table)))
    ops += [
        Op("encode", "Parquet snappy", lambda: parquet_bytes(table, "snappy")),
        Op("encode", "Parquet zstd", lambda: parquet_bytes(table, "zstd")),
        Op("encode", "Arrow IPC lz4", lambda: ipc_bytes(table)),
    ]

    def parquet_read(name: str, **kw: Any) -> Callable[[], pd.DataFrame]:
        return lambda: pq.read_table(pa.BufferReader(bufs[name]), use_threads=False, **kw).to_pandas()

    if HAVE_QDF:
        q = bufs["qdf balanced"]
        ops.append(Op("full decode", "qdf balanced", lambda: qdf.decode(q, output="pandas")))
        # qdf's default decodes on one thread below 4 CPUs (like Parquet's use_threads=False
        # here); the two-thread figure shows what a second core buys when the host is quiet.
        ops.append(Op("full decode", QDF_2T, lambda: qdf.decode(q, output="pandas", threads=2)))
    ops += [
        Op("full decode", "Parquet snappy", parquet_read("Parquet snappy")),
        Op("full decode", "Parquet zstd", parquet_read("Parquet zstd")),
        Op(
            "full decode",
            "Arrow IPC lz4",
            lambda: pa.ipc.open_file(pa.BufferReader(bufs["Arrow IPC lz4"])).read_all().to_pandas(),
        ),
    ]
    if HAVE_QDF:
        ops.append(Op("select 2 of 12", "qdf balanced", lambda: qdf.decode(q, columns=SELECT_COLUMNS, output="pandas")))
    ops += [
        Op("select 2 of 12", "Parquet snappy", parquet_read("Parquet snappy", columns=SELECT_COLUMNS)),
        Op("select 2 of 12", "Parquet zstd", parquet_read("Parquet zstd", columns=SELECT_COLUMNS)),
    ]
    if HAVE_QDF:
        ops += [
            Op("where ~1%", "qdf balanced", lambda: qdf.decode(q, filter=qdf_where(), output="pandas")),
            Op("where ~1%", "qdf full + pandas filter", lambda: pandas_where(qdf.decode(q, output="pandas"))),
        ]
    ops += [
        Op("where ~1%", "Parquet snappy", parquet_read("Parquet snappy", filters=WHERE_DNF)),
        Op("where ~1%", "Parquet zstd", parquet_read("Parquet zstd", filters=WHERE_DNF)),
    ]
    return ops


# ----------------------------------------------------------------------------- checks


def warm_up() -> None:
    """Compile (or load from the Numba cache) every kernel the timed calls will use."""
    small = make_log_table(2_000, seed=1)
    if HAVE_QDF:
        buf = qdf_bytes(small)
        qdf.decode(buf, output="pandas")
        qdf.decode(buf, columns=SELECT_COLUMNS, output="pandas")
        qdf.decode(buf, filter=qdf_where(), output="pandas")
    # pyarrow has no JIT, but the first call still loads codecs and builds pools.
    for compression in ("snappy", "zstd"):
        pq.read_table(pa.BufferReader(parquet_bytes(small, compression)), filters=WHERE_DNF).to_pandas()
    pa.ipc.open_file(pa.BufferReader(ipc_bytes(small))).read_all().to_pandas()


def check_correctness(table: pa.Table, bufs: dict[str, Any]) -> None:
    """Fail loudly before timing anything if qdf does not round-trip or filter correctly."""
    expected_full = table.to_pandas()
    expected_where = pandas_where(expected_full)
    for name in ("Parquet snappy", "Parquet zstd"):
        got = pq.read_table(pa.BufferReader(bufs[name]), filters=WHERE_DNF, use_threads=False).to_pandas()
        if len(got) != len(expected_where):
            raise AssertionError(f"{name} filter returned {len(got)} rows, expected {len(expected_where)}")
    if not HAVE_QDF:
        return
    full = qdf.decode(bufs["qdf balanced"], output="pandas")
    pd.testing.assert_frame_equal(full, expected_full, obj="qdf full decode vs source")
    where = qdf.decode(bufs["qdf balanced"], filter=qdf_where(), output="pandas")
    pd.testing.assert_frame_equal(where, pandas_where(full), obj="qdf where vs pandas-filtered full decode")
    sel = qdf.decode(bufs["qdf balanced"], columns=SELECT_COLUMNS, output="pandas")
    pd.testing.assert_frame_equal(sel, expected_full[SELECT_COLUMNS], obj="qdf select vs source")


# ----------------------------------------------------------------------------- reporting


def environment() -> dict[str, Any]:
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True, timeout=5
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit = None  # no git, or no commit yet
    affinity = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    return {
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "cpus_usable": affinity,
        "numpy": np.__version__,
        "pyarrow": pa.__version__,
        "pandas": pd.__version__,
        "numba": numba.__version__,
        "qdf_columnar": getattr(qdf, "__version__", None),
        "git_commit": commit,
        # Other processes competing for the CPUs are the main source of noise: a run
        # whose load average is well above 0 at the start was not alone on the machine.
        "loadavg_1m": round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None,
    }


def _fmt_bytes(n: int) -> str:
    return f"{n / 1e6:,.2f} MB" if n >= 1e5 else f"{n / 1e3:,.1f} kB"


QDF_2T = "qdf balanced, threads=2"
SETTLE_SECONDS = 0.05


def targets(bytes_: dict[str, int], med: dict[tuple[str, str], float]) -> list[dict[str, Any]]:
    """The four release targets, each as value vs threshold (all are "higher is better")."""
    if not HAVE_QDF:
        return []
    q = "qdf balanced"
    return [
        {
            "id": "a",
            "text": "Parquet-snappy bytes / qdf bytes (qdf no larger than Parquet snappy)",
            "value": bytes_["Parquet snappy"] / bytes_[q],
            "threshold": 1.0,
        },
        {
            "id": "b",
            "text": "Parquet-zstd full decode / qdf full decode",
            "value": med[("full decode", "Parquet zstd")] / med[("full decode", q)],
            "threshold": 3.0,
        },
        {
            "id": "c",
            "text": "qdf full decode / qdf select 2 of 12",
            "value": med[("full decode", q)] / med[("select 2 of 12", q)],
            "threshold": 4.0,
        },
        {
            "id": "d",
            "text": "(qdf full decode + pandas filter) / qdf where ~1%",
            "value": med[("where ~1%", "qdf full + pandas filter")] / med[("where ~1%", q)],
            "threshold": 2.0,
        },
    ]


def render_markdown(report: dict[str, Any]) -> str:
    env = report["environment"]
    lines = [
        f"# qdf core benchmark - {report['date']}",
        "",
        f"{report['rows']:,} rows x 12 columns (`make_log_table(seed=0)`), {report['rounds']} interleaved rounds, "
        f"one process. Python {env['python']}, numpy {env['numpy']}, pyarrow {env['pyarrow']}, "
        f"pandas {env['pandas']}, numba {env['numba']}; {env['cpu_count']} CPUs ({env['platform']}), "
        f"1-minute load average {env['loadavg_1m']} at the start.",
        "",
        "## Wire size",
        "",
        "| format | bytes | size | bytes/row | vs qdf |",
        "|---|---:|---:|---:|---:|",
    ]
    ref = report["bytes"].get("qdf balanced")
    for name, n in report["bytes"].items():
        vs = f"{n / ref:.2f}x" if ref else "n/a"
        lines.append(f"| {name} | {n:,} | {_fmt_bytes(n)} | {n / report['rows']:.1f} | {vs} |")
    lines += [
        "",
        "## Time (ms over the rounds; `vs qdf` = contender median / qdf median, above 1 means qdf is faster)",
        "",
        "| operation | contender | median ms | min ms | vs qdf |",
        "|---|---|---:|---:|---:|",
    ]
    for metric, by_contender in report["timings_ms"].items():
        ref_ms = by_contender.get("qdf balanced", {}).get("median")
        for name, t in by_contender.items():
            vs = f"{t['median'] / ref_ms:.2f}x" if ref_ms else "n/a"
            lines.append(f"| {metric} | {name} | {t['median']:,.1f} | {t['min']:,.1f} | {vs} |")
    w = report["where"]
    lines += [
        "",
        f"Where predicate: `{w['predicate']}` matches {w['matched']:,} of {report['rows']:,} rows "
        f"({w['selectivity'] * 100:.2f} %); all 12 columns projected.",
        "",
        "## Targets",
        "",
    ]
    if not report["targets"]:
        lines.append("qdf_columnar.encode/decode are not available in this build: targets not evaluated.")
    for t in report["targets"]:
        verdict = "PASS" if t["pass"] else "FAIL"
        lines.append(f"- ({t['id']}) {t['text']} = **{t['value']:.2f}** (target >= {t['threshold']:g}): **{verdict}**")
    return "\n".join(lines) + "\n"


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")  # *.tmp is git-ignored in bench/results
    tmp.write_text(text)
    tmp.replace(path)


# ----------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=DEFAULT_ROWS, help=f"rows (default {DEFAULT_ROWS:,})")
    parser.add_argument("--rounds", type=int, default=11, help="interleaved rounds (default 11)")
    parser.add_argument("--no-save", action="store_true", help="print only; do not write bench/results")
    parser.add_argument("--strict", action="store_true", help="exit with status 1 if any target fails")
    args = parser.parse_args(argv)
    if args.rows < 1000 or args.rounds < 1:
        parser.error("--rows must be >= 1000 and --rounds >= 1")

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)  # progress on stderr keeps stdout pure markdown

    t_start = time.perf_counter()
    env = environment()  # taken first so the load average reflects the machine, not this run
    if not HAVE_QDF:
        log("WARNING: qdf_columnar.encode/decode not found; measuring the peers only")
    log(f"generating {args.rows:,} rows ...")
    table = make_log_table(args.rows)

    matched = int(pc.sum(pc.and_(pc.equal(table["service"], "search"), pc.equal(table["level"], "ERROR"))).as_py())
    selectivity = matched / args.rows
    log(f"where predicate {WHERE_TEXT}: {matched:,} rows = {selectivity * 100:.2f} %")
    assert 0.005 <= selectivity <= 0.02, f"where predicate selectivity {selectivity:.4f} is outside 0.5 %..2 %"

    log("warming up kernels (compilation is never timed) ...")
    warm_up()

    log("encoding each format once (sizes + correctness inputs) ...")
    bufs: dict[str, Any] = {}
    if HAVE_QDF:
        bufs["qdf balanced"] = qdf_bytes(table)
    bufs["Parquet snappy"] = parquet_bytes(table, "snappy")
    bufs["Parquet zstd"] = parquet_bytes(table, "zstd")
    bufs["Arrow IPC lz4"] = ipc_bytes(table)
    sizes = {name: len(b) for name, b in bufs.items()}

    log("checking correctness ...")
    check_correctness(table, bufs)

    ops = build_ops(table, bufs)
    # A fresh seeded shuffle every round: a fixed rotation keeps each operation behind
    # the same neighbour, and on this 2-vCPU host the operation right after a
    # multi-threaded one (Arrow IPC's lz4 encode) was measured 3-5x slow at random, so
    # a fixed order would bill that artifact to one contender every round.
    order_rng = random.Random(20261130)
    for r in range(args.rounds):
        order = list(ops)
        order_rng.shuffle(order)
        t_round = time.perf_counter()
        for op in order:
            op.run_once()
        log(f"round {r + 1}/{args.rounds}: {time.perf_counter() - t_round:.1f} s")

    timings: dict[str, dict[str, dict[str, Any]]] = {}
    med: dict[tuple[str, str], float] = {}
    for op in ops:
        timings.setdefault(op.metric, {})[op.contender] = {
            "median": op.median_ms,
            "min": op.min_ms,
            "samples": [s / 1e6 for s in op.samples_ns],
        }
        med[(op.metric, op.contender)] = op.median_ms

    tgs = targets(sizes, med)
    for t in tgs:
        t["pass"] = bool(t["value"] >= t["threshold"])
    ratios: dict[str, float] = {}
    if HAVE_QDF:
        for name, n in sizes.items():
            ratios[f"bytes {name} / qdf"] = n / sizes["qdf balanced"]
        for (metric, name), m in med.items():
            if name != "qdf balanced" and (metric, "qdf balanced") in med:
                ratios[f"{metric}: {name} / qdf"] = m / med[(metric, "qdf balanced")]
        ratios.update({f"target {t['id']}": t["value"] for t in tgs})

    report: dict[str, Any] = {
        "benchmark": "core",
        "date": env["date"][:10],
        "rows": args.rows,
        "rounds": args.rounds,
        "environment": env,
        "where": {"predicate": WHERE_TEXT, "dnf": WHERE_DNF, "matched": matched, "selectivity": selectivity},
        "select_columns": SELECT_COLUMNS,
        "bytes": sizes,
        "timings_ms": timings,
        "ratios": ratios,
        "targets": tgs,
        "wall_seconds": time.perf_counter() - t_start,
    }
    md = render_markdown(report)
    print(md, end="")

    if not args.no_save:
        RESULTS_DIR.mkdir(parents=True, exist_ok=True)
        # Quick runs (--rows) get their own file so they never overwrite the reference run.
        stem = f"core-{report['date']}" + ("" if args.rows == DEFAULT_ROWS else f"-{args.rows}rows")
        _write_atomic(RESULTS_DIR / f"{stem}.md", md)
        _write_atomic(RESULTS_DIR / f"{stem}.json", json.dumps(report, indent=2) + "\n")
        log(f"wrote {RESULTS_DIR / stem}.md and .json")
    log(f"total {time.perf_counter() - t_start:.0f} s")
    return 1 if args.strict and not all(t["pass"] for t in tgs) else 0


if __name__ == "__main__":
    sys.exit(main())
