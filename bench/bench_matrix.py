"""The fixture x peer matrix: qdf against every peer on the Go library's benchmark data.

For every fixture (``bench/fixtures``, scale 1 and the x100 throughput variants) and
every peer adapter (``bench/peers``): wire bytes; encode and full-decode time (median
and min of interleaved, shuffled repetitions in this one process); a two-column select
and a filtered read where the peer has them natively; and the peak memory of one decode.
Before any figure is reported each cell proves a lossless round trip; a peer that
cannot hold a fixture shows why in its cell instead of a number.

Peak memory method: the decode whose result is checked (and which is the first timed
decode sample) runs after free memory has been returned to the system (gc, Arrow's
pool, ``malloc_trim``) and the kernel's peak-RSS mark has been reset
(``/proc/self/clear_refs``); the figure is the peak RSS growth during that call, so it
includes native allocations (Arrow, Vortex, Lance, protobuf) at no per-allocation cost.

Run: ``make bench`` (both benchmarks) or ``.venv/bin/python bench/bench_matrix.py
[--quick] [--rounds K] [--no-save]``.
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import json
import random
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import pyarrow as pa  # noqa: E402

from bench import fixtures as fx_mod  # noqa: E402
from bench import peers as peer_mod  # noqa: E402
from bench.env import SampleStats  # noqa: E402
from bench.env import environment as _environment  # noqa: E402

RESULTS = ROOT / "bench" / "results"
#: A timed operation stops repeating once its samples add up to this many seconds.
TIME_CAP_S = 1.5
QUICK_FIXTURES = ("rtb", "logs", "events", "access")
QUICK_PEERS = ("json", "msgpack", "parquet-zstd3", "ipc-lz4", "qdf-speed", "qdf-balanced")


@dataclass
class Cell(SampleStats):
    fixture: str
    peer: str
    status: str = "ok"  # "ok" or the reason there is no figure
    variant: str = ""
    nbytes: int | None = None
    samples: dict[str, list[float]] = field(default_factory=dict)  # op -> seconds
    peak_bytes: int | None = None
    blob: Any = None
    native: Any = None


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _time(fn) -> float:
    gc.collect()
    gc.disable()
    try:
        t0 = time.perf_counter()
        out = fn()
        dt_s = time.perf_counter() - t0
    finally:
        gc.enable()
    del out
    return dt_s


def _libc_trim() -> None:
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc: nothing to return to the system
        pass


def _status_kb(field: str) -> int | None:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def _measured_decode(fn) -> tuple[int | None, Any, float]:
    """(peak RSS growth in bytes, result, seconds) of one decode.

    Free memory is first returned to the system (gc, Arrow pool, malloc_trim) and the
    kernel's peak-RSS mark is reset (``/proc/self/clear_refs``), so the growth counts
    everything the decode touched, native allocations included, with no per-allocation
    overhead: this decode's time is also the cell's first decode sample.
    """
    gc.collect()
    pa.default_memory_pool().release_unused()
    _libc_trim()
    base = _status_kb("VmRSS")
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        base = None
    gc.disable()
    try:
        t0 = time.perf_counter()
        out = fn()
        dt_s = time.perf_counter() - t0
    finally:
        gc.enable()
    peak = _status_kb("VmHWM")
    return ((peak - base) * 1024 if base is not None and peak is not None else None), out, dt_s


def prepare(fx, peer) -> Cell:
    """Availability, support, one encode, one decode and the lossless check."""
    cell = Cell(fx.name, peer.name)
    reason = peer.available() or peer.supports(fx)
    if reason:
        cell.status = reason
        return cell
    try:
        cell.variant = peer.variant(fx) if hasattr(peer, "variant") else ""
        cell.native = peer.prepare(fx) if hasattr(peer, "prepare") else fx
        enc = (lambda: peer.encode_native(cell.native)) if hasattr(peer, "encode_native") else (lambda: peer.encode(fx))
        # This encode is timed like a round's and counts as the first encode sample.
        gc.collect()
        gc.disable()
        try:
            t0 = time.perf_counter()
            blob = enc()
            cell.samples["encode"] = [time.perf_counter() - t0]
        finally:
            gc.enable()
        # The decode that is checked is also the first decode sample and the memory figure.
        cell.peak_bytes, decoded, dt_s = _measured_decode(lambda: peer.decode(blob))
        cell.samples["decode"] = [dt_s]
        peer.check(fx, decoded)
    except AssertionError as exc:
        cell.status = f"not lossless: {str(exc)[:120]}"
        return cell
    except Exception as exc:  # noqa: BLE001 - a peer failing is a result, not a crash
        cell.status = f"failed: {type(exc).__name__}: {str(exc)[:120]}"
        return cell
    cell.blob = blob
    cell.nbytes = len(blob) if isinstance(blob, (bytes, bytearray, memoryview)) else int(peer.size(blob))
    return cell


def _ops(fx, peer, cell: Cell) -> dict[str, Any]:
    if hasattr(peer, "encode_native"):
        encode = lambda: peer.encode_native(cell.native)  # noqa: E731
    else:
        encode = lambda: peer.encode(fx)  # noqa: E731
    ops: dict[str, Any] = {"encode": encode, "decode": lambda: peer.decode(cell.blob)}
    if peer.select(cell.blob, list(fx.select)) is not None:
        ops["select"] = lambda: peer.select(cell.blob, list(fx.select))
    if fx.where and peer.where(cell.blob, fx.where) is not None:
        ops["where"] = lambda: peer.where(cell.blob, fx.where)
    return ops


def run(args: argparse.Namespace) -> dict[str, Any]:
    keys = QUICK_FIXTURES if args.quick else tuple(fx_mod.FIXTURES)
    scales = (1,) if args.quick else (1, 100)
    peers = [p for p in peer_mod.PEERS if not args.quick or p.name in QUICK_PEERS]
    cells: list[Cell] = []
    tasks: list[tuple[Cell, str, Any]] = []
    fixtures_used = []
    for key in keys:
        for scale in scales:
            t0 = time.perf_counter()
            fx = fx_mod.get(key, scale)
            fixtures_used.append(fx)
            # Long-lived fixture data must not be traversed by every gc.collect() before a
            # timed call: with millions of objects alive that cost seconds per call.
            gc.collect()
            gc.freeze()
            _log(f"fixture {fx.name}: {fx.table.num_rows:,} rows, generated in {time.perf_counter() - t0:.1f} s")
            for peer in peers:
                t_peer = time.perf_counter()
                cell = prepare(fx, peer)
                cells.append(cell)
                if cell.status != "ok":
                    _log(f"  {peer.name:18s} {cell.status}")
                    continue
                if args.verbose:
                    _log(f"  {peer.name:18s} {cell.nbytes:>12,} B, checked in {time.perf_counter() - t_peer:.1f} s")
                for op, fn in _ops(fx, peer, cell).items():
                    tasks.append((cell, op, fn))
                    cell.samples.setdefault(op, [])
                gc.freeze()  # the cell's blob and native form live for the whole run too
    rng = random.Random(20261130)
    for r in range(args.rounds):
        order = list(tasks)
        rng.shuffle(order)
        t_round = time.perf_counter()
        for cell, op, fn in order:
            s = cell.samples[op]
            if s and sum(s) > TIME_CAP_S:  # a slow operation keeps the samples it has
                continue
            s.append(_time(fn))
        _log(f"round {r + 1}/{args.rounds}: {time.perf_counter() - t_round:.1f} s")
    for cell in cells:
        cell.blob = cell.native = None
    return {"cells": cells, "fixtures": fixtures_used, "peers": peers}


# --------------------------------------------------------------------------- report
def environment() -> dict[str, Any]:
    return _environment(("numpy", "pyarrow", "pandas", "numba", "orjson", "msgpack", "protobuf", "fastavro",
                 "vortex-data", "pylance", "matplotlib", "qdf-columnar"))


def _fmt_bytes(n: int | None) -> str:
    if n is None:
        return ""
    return f"{n:,}"


def _cell_text(cell: Cell, metric: str) -> str:
    if cell.status != "ok":
        return cell.status
    if metric == "bytes":
        return _fmt_bytes(cell.nbytes)
    if metric == "peak":
        return f"{cell.peak_bytes / 1e6:.2f} MB" if cell.peak_bytes is not None else "?"
    med = cell.median_ms(metric)
    if med is None:
        return "n/a"
    return f"{med:.3g} ms" if med >= 0.01 else f"{med * 1e3:.2g} us"


def render(report: dict[str, Any]) -> str:
    cells: list[Cell] = report["cells"]
    fixtures = [f.name for f in report["fixtures"]]
    peers = [p.name for p in report["peers"]]
    by = {(c.fixture, c.peer): c for c in cells}
    env = report["env"]
    out = [
        f"# qdf benchmark matrix - {env['date']}",
        "",
        f"{len(fixtures)} fixtures x {len(peers)} peers, {report['rounds']} shuffled interleaved rounds, one process; "
        f"Python {env['python']}, {env['cpus']} CPUs, 1-minute load {env['load_1min']} at the start. "
        "Package versions are in the .json file. Every figure comes from a cell that first passed a lossless "
        "round trip; a cell without a figure says why. Method: `bench/README.md`.",
        "",
    ]
    titles = {
        "bytes": "Wire size (bytes)",
        "encode": "Encode (median ms)",
        "decode": "Full decode (median ms)",
        "select": "Select two columns (median ms)",
        "where": "Filtered read (median ms)",
        "peak": "Peak memory of one decode (peak RSS growth)",
    }
    for metric, title in titles.items():
        out += [f"## {title}", "", "| fixture | " + " | ".join(peers) + " |", "|---|" + "---:|" * len(peers)]
        for f in fixtures:
            out.append(f"| {f} | " + " | ".join(_cell_text(by[(f, p)], metric) for p in peers) + " |")
        out.append("")
    out += ["## Full decode time relative to qdf-balanced (above 1: slower than qdf)", "",
            "| fixture | " + " | ".join(peers) + " |", "|---|" + "---:|" * len(peers)]
    for f in fixtures:
        ref = by.get((f, "qdf-balanced"))
        ref_ms = ref.median_ms("decode") if ref and ref.status == "ok" else None
        row = []
        for p in peers:
            c = by[(f, p)]
            ms = c.median_ms("decode") if c.status == "ok" else None
            row.append(f"{ms / ref_ms:.2f}x" if ms and ref_ms else "-")
        out.append(f"| {f} | " + " | ".join(row) + " |")
    out.append("")
    notes = sorted({(c.peer, c.variant) for c in cells if c.variant})
    if notes:
        out += ["## Notes", ""] + [f"- {p}: {v}" for p, v in notes] + [""]
    for fx in report["fixtures"]:
        if fx.go_json_bytes:
            c = by.get((fx.name, "json"))
            if c and c.nbytes:
                out.append(f"- {fx.name}: stdlib JSON {c.nbytes:,} B vs the Go library's published JSON "
                           f"{fx.go_json_bytes:,} B (ratio {c.nbytes / fx.go_json_bytes:.3f})")
    return "\n".join(out) + "\n"


def to_json(report: dict[str, Any]) -> dict[str, Any]:
    rows = []
    for c in report["cells"]:
        rows.append({
            "fixture": c.fixture, "peer": c.peer, "status": c.status, "variant": c.variant, "bytes": c.nbytes,
            "peak_bytes": c.peak_bytes,
            "ms": {op: {"median": c.median_ms(op), "min": c.min_ms(op), "n": len(s)} for op, s in c.samples.items()},
        })
    return {"env": report["env"], "rounds": report["rounds"], "cells": rows}


def charts(report: dict[str, Any], stem: Path) -> list[Path]:
    """Two PNGs: wire size per fixture, and decode speed relative to qdf-balanced."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cells: list[Cell] = report["cells"]
    fixtures = [f.name for f in report["fixtures"] if f.scale == 1]
    peers = [p.name for p in report["peers"]]
    by = {(c.fixture, c.peer): c for c in cells}
    paths = []
    for kind in ("size", "decode"):
        fig, ax = plt.subplots(figsize=(13, 5.5))
        width = 0.8 / max(1, len(peers))
        for j, p in enumerate(peers):
            vals = []
            for f in fixtures:
                c = by.get((f, p))
                ref = by.get((f, "qdf-balanced"))
                v = float("nan")
                if c and c.status == "ok":
                    if kind == "size":
                        v = c.nbytes / 1e3
                    elif ref and ref.status == "ok" and c.median_ms("decode") and ref.median_ms("decode"):
                        v = c.median_ms("decode") / ref.median_ms("decode")
                vals.append(v)
            xs = [i + (j - len(peers) / 2) * width for i in range(len(fixtures))]
            ax.bar(xs, vals, width, label=p, color="black" if p == "qdf-balanced" else None)
        ax.set_xticks(range(len(fixtures)))
        ax.set_xticklabels(fixtures, rotation=15)
        ax.set_yscale("log")
        if kind == "size":
            ax.set_ylabel("wire size, kB (log)")
            ax.set_title("Wire size per fixture (lower is better)")
        else:
            ax.axhline(1.0, color="black", linewidth=0.8)
            ax.set_ylabel("decode time / qdf-balanced decode time (log)")
            ax.set_title("Full decode time relative to qdf balanced (above 1 = slower than qdf)")
        ax.legend(ncol=6, fontsize=7, loc="upper left")
        fig.tight_layout()
        path = stem.with_name(f"{stem.name}-{kind}.png")
        fig.savefig(path, dpi=110)
        plt.close(fig)
        paths.append(path)
    return paths


README_PEERS = ("json", "msgpack", "protobuf", "parquet-snappy", "parquet-zstd3", "ipc-lz4", "vortex", "lance",
                "qdf-speed", "qdf-balanced", "qdf-compression")
START, END = "<!-- bench-matrix:start -->", "<!-- bench-matrix:end -->"


def update_readme(report: dict[str, Any], size_png: Path, md_path: Path) -> None:
    """Replace the README's size table and chart (between the markers) with this run's."""
    readme = ROOT / "README.md"
    text = readme.read_text()
    if START not in text or END not in text:
        return
    by = {(c.fixture, c.peer): c for c in report["cells"]}
    peers = [p.name for p in report["peers"] if p.name in README_PEERS]
    rows = [f"Wire size in bytes (scale-1 fixtures; run of {report['env']['date']}, full tables in "
            f"[`{md_path.relative_to(ROOT)}`]({md_path.relative_to(ROOT)})):", "",
            "| fixture | " + " | ".join(peers) + " |", "|---|" + "---:|" * len(peers)]
    for fx in report["fixtures"]:
        if fx.scale != 1:
            continue
        cells = [by[(fx.name, p)] for p in peers]
        figures = [_fmt_bytes(c.nbytes) if c.status == "ok" else "-" for c in cells]
        rows.append(f"| {fx.name} | " + " | ".join(figures) + " |")
    rows += ["", f"![wire size per fixture]({size_png.relative_to(ROOT)})"]
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    readme.write_text(head + START + "\n" + "\n".join(rows) + "\n" + END + tail)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a subset that runs in under 2 minutes")
    ap.add_argument("--rounds", type=int, default=None, help="interleaved rounds (default 5, 3 with --quick)")
    ap.add_argument("--no-save", action="store_true", help="print only; do not write bench/results")
    ap.add_argument("-v", "--verbose", action="store_true", help="log every cell as it is checked")
    args = ap.parse_args(argv)
    if args.rounds is None:
        args.rounds = 3 if args.quick else 5
    t0 = time.perf_counter()
    import qdf_columnar as qdf

    qdf.warmup()  # never time Numba compilation
    report = run(args)
    report["rounds"] = args.rounds
    report["env"] = environment()
    text = render(report)
    print(text)
    if not args.no_save:
        RESULTS.mkdir(parents=True, exist_ok=True)
        stem = RESULTS / (report["env"]["date"] + ("-quick" if args.quick else ""))
        stem.with_suffix(".md").write_text(text)
        stem.with_suffix(".json").write_text(json.dumps(to_json(report), indent=1))
        pngs = charts(report, stem)
        for p in pngs:
            _log(f"wrote {p.relative_to(ROOT)}")
        _log(f"wrote {stem.with_suffix('.md').relative_to(ROOT)} and .json")
        if not args.quick:
            update_readme(report, pngs[0], stem.with_suffix(".md"))
    _log(f"total {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
