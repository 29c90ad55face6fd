"""Filtered reads of a .qdf file vs Parquet: the [files] acceptance figure.

``make bench-files`` (or ``.venv/bin/python bench/bench_files.py [--rows N] [--groups G]
[--rounds K]``) writes the same 5M-row log table (``qdf_columnar.datasets.make_log_table``)
as a .qdf file (``qdf.write_qdf``, balanced mode, the default) and as Parquet files (zstd-3 and
snappy) with the same row-group size (rows / groups), then times, in one process with
shuffled interleaved rounds and medians:

* ``qdf.read_qdf(path, filter=expr, output="arrow")`` (row groups pruned by the footer
  statistics, then pushdown inside the surviving ones; one thread, like Parquet below);
* ``pq.read_table(path, filters=dnf, use_threads=False)`` (row groups pruned by their
  statistics, then the filter);
* the qdf read again with its parsed-footer cache emptied first (qdf keeps the parsed
  footers of unchanged local files; Parquet parses its footer on every call), so both
  figures are on record;
* the qdf read of the same file written with ``zone_maps=False`` (row groups pruned,
  but every row of a surviving group's filter chunks decoded and evaluated), which
  shows what the zone maps inside row groups save;

for three filters: a selective time window (what footer statistics are for), the same
window with a string predicate, and a non-prunable predicate (every row group is read).
Each contender's result is first checked to hold exactly the rows pandas selects.
The acceptance item is judged on the time window: qdf at least 3x faster than Parquet
zstd-3. Results go to ``bench/results/files-<date>.md`` / ``.json``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import qdf_columnar as qdf  # noqa: E402
from qdf_columnar.datasets import make_log_table  # noqa: E402
from qdf_columnar.io.reader import clear_footer_cache  # noqa: E402

RESULTS = ROOT / "bench" / "results"
TARGET = 3.0


def _filters(t: pa.Table) -> dict[str, tuple[Any, list, Any]]:
    """name -> (qdf expression, pyarrow DNF, pyarrow compute mask) for the table ``t``."""
    ts = t.column("ts")
    lo = ts[len(ts) // 2].as_py()
    hi = lo + dt.timedelta(seconds=60)  # ~20k rows of a 5M-row table (one or two row groups)
    window = (qdf.col("ts") >= lo) & (qdf.col("ts") < hi)
    return {
        "time window (1 min)": (
            window, [("ts", ">=", lo), ("ts", "<", hi)],
            pc.and_(pc.greater_equal(ts, pa.scalar(lo, ts.type)), pc.less(ts, pa.scalar(hi, ts.type)))),
        "time window & level == ERROR": (
            window & (qdf.col("level") == "ERROR"), [("ts", ">=", lo), ("ts", "<", hi), ("level", "==", "ERROR")],
            pc.and_(pc.and_(pc.greater_equal(ts, pa.scalar(lo, ts.type)), pc.less(ts, pa.scalar(hi, ts.type))),
                    pc.equal(t.column("level"), "ERROR"))),
        "service == search & status >= 500 (no pruning)": (
            (qdf.col("service") == "search") & (qdf.col("status") >= 500),
            [("service", "==", "search"), ("status", ">=", 500)],
            pc.and_(pc.equal(t.column("service"), "search"), pc.greater_equal(t.column("status"), 500))),
    }


def _args_text(args: argparse.Namespace) -> str:
    """The ``ARGS=`` of the make command that reproduces this run ("" for the defaults)."""
    parts = [f"--{k} {v}" for k, v, d in (("rows", args.rows, 5_000_000), ("groups", args.groups, 50),
                                          ("rounds", args.rounds, 7)) if v != d]
    return f' ARGS="{" ".join(parts)}"' if parts else ""


def _timed(fn) -> float:
    gc.collect()
    time.sleep(0.02)
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1e3


def _same_rows(got: pa.Table, want: pa.Table) -> bool:
    got = got.select(want.column_names).combine_chunks()
    return got.num_rows == want.num_rows and got.equals(want.combine_chunks())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=5_000_000)
    ap.add_argument("--groups", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--no-save", action="store_true")
    args = ap.parse_args(argv)
    rg = -(-args.rows // args.groups)
    print(f"generating {args.rows:,} rows ...", file=sys.stderr)
    t = make_log_table(args.rows)
    tmp = Path(tempfile.mkdtemp(prefix="qdf-bench-files-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None))
    paths = {"qdf": tmp / "logs.qdf", "qdf-no-zones": tmp / "logs-no-zones.qdf",
             "parquet-zstd3": tmp / "logs-zstd.parquet", "parquet-snappy": tmp / "logs-snappy.parquet"}
    t0 = time.perf_counter()
    qdf.write_qdf(t, paths["qdf"], row_group_size=rg)
    t_qdf = time.perf_counter() - t0
    qdf.write_qdf(t, paths["qdf-no-zones"], row_group_size=rg, zone_maps=False)
    pq.write_table(t, paths["parquet-zstd3"], row_group_size=rg, compression="zstd", compression_level=3)
    pq.write_table(t, paths["parquet-snappy"], row_group_size=rg, compression="snappy")
    f = qdf.QdfFile(paths["qdf"])
    sizes = {k: p.stat().st_size for k, p in paths.items()}
    print(f"files written ({f.num_row_groups} qdf row groups, qdf write {t_qdf:.1f} s): "
          + ", ".join(f"{k} {v:,} B" for k, v in sizes.items()), file=sys.stderr)

    rows: list[dict[str, Any]] = []
    rng = random.Random(20261130)
    for name, (expr, dnf, mask) in _filters(t).items():
        want = t.filter(mask)
        ops = {
            "qdf": lambda e=expr: qdf.read_qdf(paths["qdf"], filter=e, output="arrow", threads=1),
            # qdf keeps parsed footers of unchanged local files; this one parses the footer every time.
            "qdf, footer parsed": lambda e=expr: (clear_footer_cache(),
                                                  qdf.read_qdf(paths["qdf"], filter=e, output="arrow", threads=1))[1],
            "qdf, no zone maps": lambda e=expr: qdf.read_qdf(paths["qdf-no-zones"], filter=e, output="arrow",
                                                             threads=1),
            "parquet-zstd3": lambda d=dnf: pq.read_table(paths["parquet-zstd3"], filters=d, use_threads=False),
            "parquet-snappy": lambda d=dnf: pq.read_table(paths["parquet-snappy"], filters=d, use_threads=False),
        }
        ok = {k: _same_rows(fn(), want) for k, fn in ops.items()}
        ex = f.explain(expr)
        groups_read = int(ex["read"].sum())
        samples: dict[str, list[float]] = {k: [] for k in ops}
        for _ in range(args.rounds):
            order = list(ops)
            rng.shuffle(order)
            for k in order:
                samples[k].append(_timed(ops[k]))
        med = {k: statistics.median(v) for k, v in samples.items()}
        row = {"filter": name, "matching_rows": want.num_rows, "qdf_row_groups_read": groups_read,
               "row_groups": f.num_row_groups, "lossless": ok, "median_ms": med,
               "ratio_zstd3": med["parquet-zstd3"] / med["qdf"], "ratio_snappy": med["parquet-snappy"] / med["qdf"]}
        rows.append(row)
        print(f"{name}: {want.num_rows:,} rows, qdf reads {groups_read}/{f.num_row_groups} groups; "
              + ", ".join(f"{k} {v:.1f} ms" for k, v in med.items())
              + f"; parquet-zstd3/qdf {row['ratio_zstd3']:.2f}x", file=sys.stderr)

    judged = rows[0]
    verdict = "PASS" if all(judged["lossless"].values()) and judged["ratio_zstd3"] >= TARGET else "FAIL"
    load = os.getloadavg()[0]
    lines = [
        f"# Filtered file reads: .qdf vs Parquet - {dt.date.today().isoformat()}",
        "",
        f"{args.rows:,} rows of `make_log_table`, {args.groups} row groups of {rg:,} rows in every file; "
        f"{args.rounds} shuffled interleaved rounds in one process, medians; one thread each; files on "
        f"{'/dev/shm' if str(tmp).startswith('/dev/shm') else 'local disk'} (page cache warm); "
        f"load average {load:.2f} on {os.cpu_count()} CPUs. Command: `make bench-files{_args_text(args)}`.",
        "",
        "| | qdf (balanced) | qdf, no zone maps | parquet-zstd3 | parquet-snappy |",
        "|---|---:|---:|---:|---:|",
        "| file bytes | " + " | ".join(f"{sizes[k]:,}" for k in ("qdf", "qdf-no-zones", "parquet-zstd3",
                                                                 "parquet-snappy")) + " |",
        "",
        "| filter | matching rows | qdf row groups read | qdf ms | qdf ms, footer parsed each read "
        "| qdf ms, no zone maps | parquet-zstd3 ms | parquet-snappy ms | zstd3 / qdf | zstd3 / qdf (footer parsed) "
        "| snappy / qdf | no zone maps / qdf | results exact |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        m = r["median_ms"]
        lines.append(
            f"| {r['filter']} | {r['matching_rows']:,} | {r['qdf_row_groups_read']}/{r['row_groups']} "
            f"| {m['qdf']:.1f} | {m['qdf, footer parsed']:.1f} | {m['qdf, no zone maps']:.1f} "
            f"| {m['parquet-zstd3']:.1f} | {m['parquet-snappy']:.1f} | {r['ratio_zstd3']:.2f}x "
            f"| {m['parquet-zstd3'] / m['qdf, footer parsed']:.2f}x | {r['ratio_snappy']:.2f}x "
            f"| {m['qdf, no zone maps'] / m['qdf']:.2f}x | {all(r['lossless'].values())} |")
    lines += ["", f"**Acceptance** (selective filter, qdf >= {TARGET:g}x faster than "
              f"`pq.read_table(filters=...)` zstd-3, same row-group size): **{verdict}** "
              f"({judged['ratio_zstd3']:.2f}x on \"{judged['filter']}\").", ""]
    text = "\n".join(lines)
    print(text)
    if not args.no_save:
        RESULTS.mkdir(parents=True, exist_ok=True)
        stem = f"files-{dt.date.today().isoformat()}" + ("" if args.rows == 5_000_000 else "-partial") \
            + ("" if args.groups == 50 else f"-{args.groups}-groups")
        (RESULTS / f"{stem}.md").write_text(text)
        (RESULTS / f"{stem}.json").write_text(json.dumps(
            {"rows": args.rows, "groups": args.groups, "rounds": args.rounds, "sizes": sizes, "load": load,
             "results": rows, "verdict": verdict}, indent=2, default=str))
    for p in paths.values():
        p.unlink(missing_ok=True)
    tmp.rmdir()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
