"""Compression acceptance bench: qdf's compression and balanced modes vs Parquet and Vortex.

One command measures every figure of the compression-mode acceptance text and prints
PASS / FAIL per item with the measured numbers (nothing is hard-coded):

Size
  (Z1) compression mode smaller than Parquet zstd (level 3, dictionary on) on every one
       of RTB, IoT, OTLP, Logs, Events, Active-Directory and their 100x variants;
  (Z2) ... and smaller than Vortex's default writer on at least 5 of those 6 fixtures
       (a fixture counts when qdf is smaller at both its scales; per-scale counts are
       shown too);
  (Z3) reported, no verdict: against Vortex's compact writer and Parquet zstd level 19;
  (Z4) balanced mode smaller than Parquet snappy on all of them;
  (Z5) compression mode never larger than balanced on any bench fixture (all fixtures
       in bench/fixtures, both scales).
Speed (same run; judged on the 100x variants of the six fixtures, both scales reported)
  (T1) compression-mode full decode to a DataFrame at least 2x faster than Parquet zstd-3
       ``pq.read_table(..., use_threads=False).to_pandas()``;
  (T2) balanced-mode encode no slower than Parquet zstd-3 write;
  (T3) compression-mode encode no more than 3x Parquet zstd-3 write time.

Every qdf cell first proves a lossless round trip (``qdf.decode(buf, output="arrow")``
equal to ``fx.table`` via ``.equals`` after ``combine_chunks``); a cell that fails it,
or whose encode raises or times out, is reported as FAIL with the reason, not a crash.
Parquet and Vortex cells are checked with ``bench.peers.columnar.check_table``.

Timing method (as in bench_core / bench_matrix): one process; per fixture, the timed
operations run in freshly shuffled rounds (seeded), each sample after ``gc.collect()``
and a short pause, with the collector disabled during the call; medians are reported.
An operation stops repeating once its samples add up to ``--cap`` seconds; a single
call longer than ``--call-timeout`` is abandoned (SIGALRM; a native kernel is only
interrupted when it returns to Python).

Run: ``make bench-compress`` or ``.venv/bin/python bench/bench_compress.py [--quick]
[--fixtures rtb,logs] [--scales 1,100] [--rounds K] [--no-save] [--strict]``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import signal
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from bench import fixtures as fx_mod  # noqa: E402
from bench.env import environment as _environment  # noqa: E402

RESULTS = ROOT / "bench" / "results"
#: The six fixtures the acceptance text names (with their 100x variants).
ACCEPT = ("rtb", "iot", "otlp", "logs", "events", "ad")
SCALES = (1, 100)
#: The scale the speed items are judged on (the other is reported for information).
SPEED_SCALE = 100
SETTLE_S = 0.02

#: Size contenders, in report order.
QDF_BAL, QDF_COMP = "qdf-balanced", "qdf-compression"
PQ_SNAPPY, PQ_ZSTD3, PQ_ZSTD19 = "parquet-snappy", "parquet-zstd3", "parquet-zstd19"
VX_DEFAULT, VX_COMPACT = "vortex-default", "vortex-compact"
SIZE_CONTENDERS = (QDF_BAL, QDF_COMP, PQ_SNAPPY, PQ_ZSTD3, PQ_ZSTD19, VX_DEFAULT, VX_COMPACT)
#: Timed operations: (operation, contender).
ENC_BAL, ENC_COMP, ENC_PQ = ("encode", QDF_BAL), ("encode", QDF_COMP), ("encode", PQ_ZSTD3)
DEC_COMP, DEC_PQ = ("decode", QDF_COMP), ("decode", PQ_ZSTD3)
#: Parquet decoded into the same DataFrame dtypes qdf's pandas output uses (nested and
#: binary columns as pd.ArrowDtype): the like-for-like ratio, reported beside T1.
DEC_PQ_SAME = ("decode-same-dtypes", PQ_ZSTD3)
TIMED = (ENC_BAL, ENC_COMP, ENC_PQ, DEC_COMP, DEC_PQ, DEC_PQ_SAME)


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# ----------------------------------------------------------------------------- contenders


def parquet_write(table: pa.Table, compression: str, level: int | None = None) -> bytes:
    """Parquet in memory: pyarrow defaults (one row group up to 1Mi rows), dictionary on."""
    kw: dict[str, Any] = {"compression": compression, "use_dictionary": True}
    if level is not None:
        kw["compression_level"] = level
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, **kw)
    return sink.getvalue().to_pybytes()


def parquet_read(buf: bytes) -> pa.Table:
    return pq.read_table(pa.BufferReader(buf), use_threads=False)


def parquet_to_pandas(buf: bytes) -> Any:
    return pq.read_table(pa.BufferReader(buf), use_threads=False).to_pandas()


def _arrow_only(t: pa.DataType) -> bool:
    return pa.types.is_nested(t) or pa.types.is_binary(t) or pa.types.is_large_binary(t)


def parquet_to_pandas_same_dtypes(buf: bytes) -> Any:
    """Parquet into the dtypes ``qdf.decode(output="pandas")`` gives an Arrow-born batch."""
    import pandas as pd

    return pq.read_table(pa.BufferReader(buf), use_threads=False).to_pandas(
        types_mapper=lambda t: pd.ArrowDtype(t) if _arrow_only(t) else None)


def qdf_encode(table: pa.Table, mode: str) -> bytes:
    import qdf_columnar as qdf

    return qdf.encode(table, mode=mode)


def qdf_to_pandas(buf: bytes) -> Any:
    import qdf_columnar as qdf

    return qdf.decode(buf, output="pandas")


def qdf_lossless(buf: bytes, table: pa.Table) -> str | None:
    """None if ``qdf.decode(buf, output="arrow")`` equals ``table``, else what differs."""
    import qdf_columnar as qdf

    got = qdf.decode(buf, output="arrow")
    if not isinstance(got, pa.Table):
        return f"decoded a {type(got).__name__}, not a pyarrow.Table"
    got, want = got.combine_chunks(), table.combine_chunks()
    if got.equals(want):
        return None
    if got.column_names != want.column_names:
        return f"columns {got.column_names} != {want.column_names}"
    if got.num_rows != want.num_rows:
        return f"{got.num_rows} rows, expected {want.num_rows}"
    for name in want.column_names:
        a, b = got.column(name), want.column(name)
        if a.type != b.type:
            return f"column {name!r}: type {a.type} != {b.type}"
        if not a.equals(b):
            return f"column {name!r}: values differ"
    return "tables differ (schema metadata or nullability)"


def vortex_peers() -> dict[str, Any]:
    from bench.peers.columnar import VortexCompactPeer, VortexPeer

    return {VX_DEFAULT: VortexPeer(), VX_COMPACT: VortexCompactPeer()}


# ----------------------------------------------------------------------------- time box


class CallTimeout(Exception):
    pass


def _on_alarm(signum: int, frame: Any) -> None:
    raise CallTimeout()


def _bounded(fn: Callable[[], Any], seconds: float) -> Any:
    """``fn()``, abandoned with CallTimeout after ``seconds`` (main thread, SIGALRM)."""
    if seconds <= 0 or not hasattr(signal, "setitimer"):
        return fn()
    old = signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return fn()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _timed(fn: Callable[[], Any], timeout: float) -> float:
    gc.collect()
    time.sleep(SETTLE_S)
    gc.disable()
    try:
        t0 = time.perf_counter()
        out = _bounded(fn, timeout)
        elapsed = time.perf_counter() - t0
    finally:
        gc.enable()
    del out
    return elapsed


# ----------------------------------------------------------------------------- cells


@dataclass
class Row:
    """One fixture at one scale: sizes, statuses and timing samples of every contender."""

    key: str
    scale: int
    name: str
    rows: int
    bytes: dict[str, int] = field(default_factory=dict)
    status: dict[str, str] = field(default_factory=dict)  # contender -> "ok" or why there is no figure
    samples: dict[str, list[float]] = field(default_factory=dict)  # "op contender" -> seconds
    op_status: dict[str, str] = field(default_factory=dict)  # "op contender" -> "ok" or error
    load: list[float] = field(default_factory=list)  # 1-min load average before / after the rounds
    seconds: float = 0.0

    def ok(self, contender: str) -> bool:
        return self.status.get(contender) == "ok"

    def size(self, contender: str) -> int | None:
        return self.bytes.get(contender) if self.ok(contender) else None

    def median_ms(self, op: tuple[str, str]) -> float | None:
        s = self.samples.get(" ".join(op))
        return statistics.median(s) * 1e3 if s else None

    def n(self, op: tuple[str, str]) -> int:
        return len(self.samples.get(" ".join(op), []))


def _attempt(row: Row, contender: str, fn: Callable[[], Any], timeout: float) -> Any:
    try:
        out = _bounded(fn, timeout)
    except CallTimeout:
        row.status[contender] = f"timed out (> {timeout:g} s)"
        return None
    except Exception as exc:  # noqa: BLE001 - a contender failing is a result, not a crash
        row.status[contender] = f"failed: {type(exc).__name__}: {str(exc)[:160]}"
        return None
    row.status[contender] = "ok"
    return out


def measure_fixture(key: str, scale: int, args: argparse.Namespace) -> Row:
    t_start = time.perf_counter()
    fx = fx_mod.FIXTURES[key](scale)  # not fx_mod.get: that memoises every fixture for the process
    gc.collect()
    gc.freeze()  # the fixture lives for the whole cell: gc.collect() before a sample must not walk it
    row = Row(key, scale, fx.name, fx.table.num_rows)
    table = fx.table
    _log(f"{fx.name}: {row.rows:,} rows, generated in {time.perf_counter() - t_start:.1f} s")
    timeout = args.call_timeout
    bufs: dict[str, bytes] = {}

    # --- sizes + lossless checks (one encode each; these encodes are not timing samples)
    for mode, name in (("balanced", QDF_BAL), ("compression", QDF_COMP)):
        t0 = time.perf_counter()
        buf = _attempt(row, name, lambda mode=mode: qdf_encode(table, mode), timeout)
        if buf is None:
            _log(f"  {name:16s} {row.status[name]}")
            continue
        row.bytes[name] = len(buf)
        try:
            reason = _bounded(lambda buf=buf: qdf_lossless(buf, table), timeout)
        except CallTimeout:
            reason = f"lossless check timed out (> {timeout:g} s)"
        except Exception as exc:  # noqa: BLE001
            reason = f"decode failed: {type(exc).__name__}: {str(exc)[:160]}"
        if reason:
            row.status[name] = f"not lossless: {reason}"
        else:
            bufs[name] = buf
        _log(f"  {name:16s} {len(buf):>12,} B  {row.status[name]}  ({time.perf_counter() - t0:.1f} s)")

    from bench.peers.columnar import check_table

    for name, comp, level in ((PQ_SNAPPY, "snappy", None), (PQ_ZSTD3, "zstd", 3), (PQ_ZSTD19, "zstd", 19)):
        buf = _attempt(row, name, lambda c=comp, lv=level: parquet_write(table, c, lv), timeout)
        if buf is None:
            continue
        row.bytes[name] = len(buf)
        try:
            check_table(name, fx, parquet_read(buf))
        except AssertionError as exc:
            row.status[name] = f"not lossless: {str(exc)[:160]}"
        if name == PQ_ZSTD3 and row.ok(name):
            bufs[name] = buf

    for name, peer in vortex_peers().items():
        reason = peer.available()
        if reason:
            row.status[name] = reason
            continue
        buf = _attempt(row, name, lambda peer=peer: peer.encode(fx), timeout)
        if buf is None:
            continue
        row.bytes[name] = len(buf)
        try:
            check_table(name, fx, peer.decode(buf))
        except AssertionError as exc:
            row.status[name] = f"not lossless: {str(exc)[:160]}"
        except Exception as exc:  # noqa: BLE001
            row.status[name] = f"read back failed: {type(exc).__name__}: {str(exc)[:160]}"
    _log("  sizes: " + ", ".join(f"{c} {row.bytes[c]:,}" if row.ok(c) else f"{c} -" for c in SIZE_CONTENDERS))

    # --- timing: shuffled interleaved rounds of this fixture's operations
    fns: dict[tuple[str, str], Callable[[], Any]] = {}
    if QDF_BAL in row.bytes:  # timed even if not lossless (that cell still fails its items)
        fns[ENC_BAL] = lambda: qdf_encode(table, "balanced")
    if QDF_COMP in row.bytes:
        fns[ENC_COMP] = lambda: qdf_encode(table, "compression")
    if PQ_ZSTD3 in bufs:
        fns[ENC_PQ] = lambda: parquet_write(table, "zstd", 3)
        fns[DEC_PQ] = lambda: parquet_to_pandas(bufs[PQ_ZSTD3])
        fns[DEC_PQ_SAME] = lambda: parquet_to_pandas_same_dtypes(bufs[PQ_ZSTD3])
    if QDF_COMP in bufs:
        fns[DEC_COMP] = lambda: qdf_to_pandas(bufs[QDF_COMP])
    for op in fns:
        row.samples[" ".join(op)] = []
        row.op_status[" ".join(op)] = "ok"
    row.load.append(round(os.getloadavg()[0], 2))
    rng = random.Random(f"{key}-{scale}-20261130")
    for r in range(args.rounds):
        order = list(fns)
        rng.shuffle(order)
        t_round = time.perf_counter()
        for op in order:
            k = " ".join(op)
            s = row.samples[k]
            if row.op_status[k] != "ok" or (s and sum(s) > args.cap):
                continue  # a failed op stops; a slow one keeps the samples it has
            try:
                s.append(_timed(fns[op], timeout))
            except CallTimeout:
                row.op_status[k] = f"timed out (> {timeout:g} s)"
            except Exception as exc:  # noqa: BLE001
                row.op_status[k] = f"failed: {type(exc).__name__}: {str(exc)[:160]}"
        _log(f"  round {r + 1}/{args.rounds}: {time.perf_counter() - t_round:.1f} s")
    row.load.append(round(os.getloadavg()[0], 2))
    _log("  medians: " + ", ".join(
        f"{op} {c} {row.median_ms((op, c)):.1f} ms" if row.median_ms((op, c)) is not None else f"{op} {c} -"
        for op, c in TIMED))
    row.seconds = time.perf_counter() - t_start
    return row  # the fixture, its buffers and closures go with this frame (the caller unfreezes)


# ----------------------------------------------------------------------------- verdicts


def _label(row: Row) -> str:
    return row.name


def _cell_fail(row: Row, *contenders: str) -> str | None:
    for c in contenders:
        if not row.ok(c):
            return f"{c}: {row.status.get(c, 'not measured')}"
    return None


def _verdict(fails: int, missing: int) -> str:
    if fails:
        return "FAIL"
    return "INCOMPLETE" if missing else "PASS"


def size_item(rows: dict[tuple[str, int], Row], ident: str, text: str, keys: tuple[str, ...],
              a: str, b: str, strict: bool) -> dict[str, Any]:
    """``a`` smaller than (strict) / no larger than ``b`` on every (key, scale) cell."""
    cells = []
    fails = missing = 0
    for key in keys:
        for scale in SCALES:
            row = rows.get((key, scale))
            if row is None:
                missing += 1
                cells.append({"fixture": f"{key} x{scale}", "result": "not run"})
                continue
            why = _cell_fail(row, a, b)
            if why:
                fails += 1
                cells.append({"fixture": row.name, "result": "FAIL", "why": why})
                continue
            ratio = row.bytes[a] / row.bytes[b]
            good = ratio < 1 if strict else ratio <= 1
            fails += not good
            cells.append({"fixture": row.name, "result": "ok" if good else "FAIL", "a": row.bytes[a],
                          "b": row.bytes[b], "ratio": ratio})
    measured = [c for c in cells if "ratio" in c]
    worst = max(measured, key=lambda c: c["ratio"]) if measured else None
    passed = sum(c["result"] == "ok" for c in cells)
    summary = f"{passed}/{len(cells)} cells"
    if worst:
        summary += f"; worst {worst['fixture']}: {a} / {b} = {worst['ratio']:.3f}"
    return {"id": ident, "text": text, "verdict": _verdict(fails, missing), "summary": summary, "cells": cells}


def vortex_item(rows: dict[tuple[str, int], Row]) -> dict[str, Any]:
    """Z2: smaller than Vortex default on >= 5 of the 6 fixtures (a fixture: both its scales)."""
    text = (f"{QDF_COMP} < {VX_DEFAULT} on >= 5 of the 6 fixtures "
            "(a fixture counts when smaller at scale 1 and at 100x)")
    cells = []
    wins = losses = unknown = 0
    per_scale = {s: [0, 0] for s in SCALES}  # scale -> [wins, measured]
    unavailable = None
    for key in ACCEPT:
        results = []
        for scale in SCALES:
            row = rows.get((key, scale))
            if row is None:
                results.append(None)
                continue
            if not row.ok(VX_DEFAULT):
                unavailable = unavailable or row.status.get(VX_DEFAULT)
            why = _cell_fail(row, QDF_COMP, VX_DEFAULT)
            if why:
                # qdf failing is a loss; Vortex failing leaves the cell unknown
                results.append(False if not row.ok(QDF_COMP) else None)
                cells.append({"fixture": row.name, "result": "FAIL" if not row.ok(QDF_COMP) else "n/a", "why": why})
                continue
            ratio = row.bytes[QDF_COMP] / row.bytes[VX_DEFAULT]
            results.append(ratio < 1)
            per_scale[scale][0] += ratio < 1
            per_scale[scale][1] += 1
            cells.append({"fixture": row.name, "result": "ok" if ratio < 1 else "larger",
                          "a": row.bytes[QDF_COMP], "b": row.bytes[VX_DEFAULT], "ratio": ratio})
        if all(r is True for r in results):
            wins += 1
        elif any(r is False for r in results):
            losses += 1
        else:
            unknown += 1
    if wins >= 5:
        verdict = "PASS"
    elif wins + unknown >= 5:
        verdict = "INCOMPLETE" if unavailable is None else "N/A"
    else:
        verdict = "FAIL"
    summary = (f"{wins}/6 fixtures at both scales ({losses} lost, {unknown} not measured); "
               + ", ".join(f"x{s}: {w}/{m}" for s, (w, m) in per_scale.items()))
    if unavailable:
        summary += f"; Vortex: {unavailable}"
    return {"id": "Z2", "text": text, "verdict": verdict, "summary": summary, "cells": cells}


def info_item(rows: dict[tuple[str, int], Row], ident: str, peer: str) -> dict[str, Any]:
    cells = []
    for key in ACCEPT:
        for scale in SCALES:
            row = rows.get((key, scale))
            if row is None:
                cells.append({"fixture": f"{key} x{scale}", "result": "not run"})
                continue
            why = _cell_fail(row, QDF_COMP, peer)
            if why:
                cells.append({"fixture": row.name, "result": "n/a", "why": why})
                continue
            ratio = row.bytes[QDF_COMP] / row.bytes[peer]
            cells.append({"fixture": row.name, "result": "smaller" if ratio < 1 else "larger",
                          "a": row.bytes[QDF_COMP], "b": row.bytes[peer], "ratio": ratio})
    measured = [c for c in cells if "ratio" in c]
    smaller = sum(c["ratio"] < 1 for c in measured)
    summary = f"smaller on {smaller}/{len(measured)} measured cells"
    if measured:
        summary += (f"; {QDF_COMP} / {peer} from {min(c['ratio'] for c in measured):.3f} "
                    f"to {max(c['ratio'] for c in measured):.3f}")
    if len(measured) < len(cells):
        why = next((c["why"] for c in cells if "why" in c), None)
        if why:
            summary += f"; {why}"
    return {"id": ident, "text": f"{QDF_COMP} vs {peer} (reported, no verdict)", "verdict": "INFO",
            "summary": summary, "cells": cells}


def speed_item(rows: dict[tuple[str, int], Row], ident: str, text: str, num: tuple[str, str],
               den: tuple[str, str], need: Callable[[float], bool], bound: str,
               lossless: tuple[str, ...]) -> dict[str, Any]:
    """ratio = median(num) / median(den) per cell; judged on SPEED_SCALE, other scales reported."""
    cells = []
    fails = missing = 0
    for key in ACCEPT:
        for scale in SCALES:
            judged = scale == SPEED_SCALE
            row = rows.get((key, scale))
            if row is None:
                missing += judged
                cells.append({"fixture": f"{key} x{scale}", "judged": judged, "result": "not run"})
                continue
            why = _cell_fail(row, *lossless)
            for op in (num, den):
                if why is None and row.op_status.get(" ".join(op), "not timed") != "ok":
                    why = f"{' '.join(op)}: {row.op_status.get(' '.join(op), 'not timed')}"
            a, b = row.median_ms(num), row.median_ms(den)
            if why is None and (a is None or b is None):
                why = "no samples"
            if why:
                fails += judged
                cells.append({"fixture": row.name, "judged": judged, "result": "FAIL", "why": why})
                continue
            ratio = a / b
            good = need(ratio)
            fails += judged and not good
            cells.append({"fixture": row.name, "judged": judged, "result": "ok" if good else "FAIL",
                          "a_ms": a, "b_ms": b, "n": [row.n(num), row.n(den)], "ratio": ratio})
    judged = [c for c in cells if c["judged"] and "ratio" in c]
    passed = sum(c["result"] == "ok" for c in cells if c["judged"])
    n_judged = sum(c["judged"] for c in cells)
    summary = f"{passed}/{n_judged} x{SPEED_SCALE} cells ({bound})"
    if judged:
        worst = min(judged, key=lambda c: c["ratio"]) if bound.startswith(">=") else max(
            judged, key=lambda c: c["ratio"])
        summary += f"; worst {worst['fixture']}: {worst['ratio']:.2f}"
    return {"id": ident, "text": text, "verdict": _verdict(fails, missing), "summary": summary, "cells": cells}


def evaluate(rows: dict[tuple[str, int], Row]) -> list[dict[str, Any]]:
    all_keys = tuple(fx_mod.FIXTURES)
    items = [
        size_item(rows, "Z1", f"{QDF_COMP} < {PQ_ZSTD3} (zstd level 3, dictionary on), 6 fixtures x 2 scales",
                  ACCEPT, QDF_COMP, PQ_ZSTD3, strict=True),
        vortex_item(rows),
        info_item(rows, "Z3a", VX_COMPACT),
        info_item(rows, "Z3b", PQ_ZSTD19),
        size_item(rows, "Z4", f"{QDF_BAL} < {PQ_SNAPPY}, 6 fixtures x 2 scales", ACCEPT, QDF_BAL, PQ_SNAPPY,
                  strict=True),
        size_item(rows, "Z5", f"{QDF_COMP} <= {QDF_BAL} on every bench fixture ({len(all_keys)} x 2 scales)",
                  all_keys, QDF_COMP, QDF_BAL, strict=False),
        speed_item(rows, "T1", "full decode to DataFrame: parquet-zstd3 / qdf-compression >= 2",
                   DEC_PQ, DEC_COMP, lambda r: r >= 2.0, ">= 2", (QDF_COMP, PQ_ZSTD3)),
        speed_item(rows, "T2", "encode: qdf-balanced / parquet-zstd3 <= 1", ENC_BAL, ENC_PQ,
                   lambda r: r <= 1.0, "<= 1", (QDF_BAL, PQ_ZSTD3)),
        speed_item(rows, "T3", "encode: qdf-compression / parquet-zstd3 <= 3", ENC_COMP, ENC_PQ,
                   lambda r: r <= 3.0, "<= 3", (QDF_COMP, PQ_ZSTD3)),
    ]
    return items


# ----------------------------------------------------------------------------- report


def environment() -> dict[str, Any]:
    return _environment(("qdf-columnar", "numpy", "pyarrow", "pandas", "numba", "vortex-data"))


def vortex_compact_finding() -> str:
    try:
        import importlib.metadata as md

        ver = md.version("vortex-data")
    except Exception:  # noqa: BLE001
        return "vortex-data is not installed: both Vortex columns are n/a."
    from bench.peers.columnar import VortexCompactPeer

    reason = VortexCompactPeer().available()
    if reason:
        return f"vortex-data {ver}: no compact writer ({reason}); the vortex-compact column is n/a."
    return (f"vortex-data {ver} has a compact writer: `vortex.io.VortexWriteOptions.compact().write(table, path)` "
            "(\"prioritize small size over read-throughput and read-latency\"); `vortex-default` is "
            "`vortex.io.write(table, path)` = `VortexWriteOptions.default()`. Sizes are the files' bytes.")


def _ms(v: float | None) -> str:
    if v is None:
        return "-"
    return f"{v:,.0f}" if v >= 100 else f"{v:.3g}"


def _b(row: Row, c: str) -> str:
    if row.ok(c):
        return f"{row.bytes[c]:,}"
    if c in row.bytes:  # measured but failed its check
        return f"{row.bytes[c]:,} (!)"
    return "-"


def _ratio(row: Row, a: str, b: str) -> str:
    if row.ok(a) and row.ok(b):
        return f"{row.bytes[a] / row.bytes[b]:.3f}"
    return "-"


def render(report: dict[str, Any]) -> str:
    env = report["env"]
    rows: list[Row] = report["rows"]
    items = report["items"]
    loads = [x for r in rows for x in r.load]
    out = [
        f"# qdf compression acceptance bench - {env['date']}",
        "",
        f"Python {env['python']}, qdf-columnar {env['packages']['qdf-columnar']}, "
        f"pyarrow {env['packages']['pyarrow']}, "
        f"vortex-data {env['packages']['vortex-data']}; {env['cpus']} CPUs ({env['cpus_usable']} usable). "
        f"{report['rounds']} shuffled interleaved rounds per fixture, one process; an operation stops repeating "
        f"once its samples add up to {report['cap']:g} s. Command: `{report['command']}`.",
        "",
        f"Load average (1 min): {env['load_1min']} at the start, {report['load_1min_end']} at the end, "
        f"max {max(loads) if loads else '-'} around the timing rounds. With {env['cpus']} CPUs a load well above 0 "
        "means other processes shared the CPUs and the timings (not the sizes) are noisy: rerun before "
        "trusting a borderline speed verdict.",
        "",
        "## Summary",
        "",
        "| item | acceptance | verdict | measured |",
        "|---|---|---|---|",
    ]
    for it in items:
        out.append(f"| {it['id']} | {it['text']} | **{it['verdict']}** | {it['summary']} |")
    counts = {v: sum(it["verdict"] == v for it in items) for v in ("PASS", "FAIL", "INCOMPLETE", "N/A")}
    out += [
        "",
        "Overall: " + ", ".join(f"{n} {v}" for v, n in counts.items() if n) + " (INFO items carry no verdict). "
        f"Speed items are judged on the x{SPEED_SCALE} variants (the acceptance text does not state the "
        "scale for the encode items; scale-1 ratios are shown below for information)."
        + (" INCOMPLETE: every measured cell passes but cells are missing (`--fixtures` / `--scales` subset)."
           if counts["INCOMPLETE"] else "")
        + (" N/A: Vortex is not available, so the item could not be measured." if counts["N/A"] else ""),
        "",
        "## Wire size (bytes)",
        "",
        "`(!)`: the contender wrote this many bytes but the cell failed (see Failures).",
        "",
        "| fixture | rows | " + " | ".join(SIZE_CONTENDERS)
        + " | comp / zstd3 | comp / vortex | comp / vortex-compact | comp / zstd19 | bal / snappy | comp / bal |",
        "|---|---:|" + "---:|" * (len(SIZE_CONTENDERS) + 6),
    ]
    for r in rows:
        out.append(
            f"| {r.name} | {r.rows:,} | " + " | ".join(_b(r, c) for c in SIZE_CONTENDERS) + " | "
            + " | ".join(_ratio(r, a, b) for a, b in ((QDF_COMP, PQ_ZSTD3), (QDF_COMP, VX_DEFAULT),
                                                      (QDF_COMP, VX_COMPACT), (QDF_COMP, PQ_ZSTD19),
                                                      (QDF_BAL, PQ_SNAPPY), (QDF_COMP, QDF_BAL)))
            + " |")
    out += [
        "",
        "## Time (median ms; samples in parentheses)",
        "",
        "Encode: Arrow table to bytes. Decode: bytes to a pandas DataFrame (`qdf.decode(buf, output=\"pandas\")`; "
        "`pq.read_table(pa.BufferReader(buf), use_threads=False).to_pandas()`). qdf's DataFrame keeps "
        "list / struct / map and binary columns of an Arrow-born batch as `pd.ArrowDtype` (no Python objects), "
        "while Parquet's plain `to_pandas()` builds Python lists, dicts and bytes; the \"qdf's dtypes\" column "
        "times Parquet into those same dtypes (`to_pandas(types_mapper=...)`), the like-for-like comparison.",
        "",
        "| fixture | enc qdf-balanced | enc qdf-compression | enc parquet-zstd3 | dec qdf-compression "
        "| dec parquet-zstd3 | dec parquet-zstd3, qdf's dtypes | T1 pq dec / comp dec (>= 2) "
        "| same dtypes: pq dec / comp dec | T2 bal enc / pq enc (<= 1) "
        "| T3 comp enc / pq enc (<= 3) | load before/after |",
        "|---|" + "---:|" * 10 + "---|",
    ]
    for r in rows:
        def t(op: tuple[str, str], r: Row = r) -> str:
            k = " ".join(op)
            st = r.op_status.get(k)
            if st is None:
                return "-"
            if st != "ok" and not r.samples.get(k):
                return st
            return f"{_ms(r.median_ms(op))} ({r.n(op)})"

        def q(a: tuple[str, str], b: tuple[str, str], r: Row = r) -> str:
            x, y = r.median_ms(a), r.median_ms(b)
            return f"{x / y:.2f}" if x and y else "-"

        out.append(f"| {r.name} | " + " | ".join(t(op) for op in TIMED) + " | "
                   + " | ".join((q(DEC_PQ, DEC_COMP), q(DEC_PQ_SAME, DEC_COMP), q(ENC_BAL, ENC_PQ),
                                 q(ENC_COMP, ENC_PQ)))
                   + f" | {' / '.join(str(x) for x in r.load)} |")
    fails = [(r.name, c, s) for r in rows for c, s in r.status.items() if s != "ok"]
    fails += [(r.name, k, s) for r in rows for k, s in r.op_status.items() if s != "ok"]
    out += ["", "## Failures and missing figures", ""]
    out += [f"- {n} / {c}: {s}" for n, c, s in fails] or ["- none: every cell round-tripped losslessly."]
    out += ["", "## Per-item cells", ""]
    out.append("Cells that do not pass (ratio as in the item; cells not run are only counted). "
               f"Speed items list the judged x{SPEED_SCALE} cells only.")
    out.append("")
    for it in items:
        judged = [c for c in it["cells"] if c.get("judged", True)]
        not_run = sum(c["result"] == "not run" for c in judged)
        bad = [c for c in judged if c["result"] not in ("ok", "smaller", "not run")]
        parts = []
        for c in bad:
            if "ratio" in c:
                parts.append(f"{c['fixture']} {c['ratio']:.3f}")
            else:
                parts.append(f"{c['fixture']} ({c.get('why', c['result'])})")
        if not_run:
            parts.append(f"{not_run} cell(s) not run")
        if parts:
            label = "larger" if it["verdict"] == "INFO" else "not passing"
            out.append(f"- {it['id']} {label}: " + "; ".join(parts))
    out += [
        "",
        "## Notes",
        "",
        f"- Vortex: {report['vortex_compact']}",
        "- Parquet: `pq.write_table(t, sink, compression=..., compression_level=..., use_dictionary=True)` "
        "in memory, pyarrow defaults otherwise (one row group; every fixture is under 1Mi rows).",
        "- Every qdf cell is checked once: `qdf.decode(buf, output=\"arrow\")` `.equals(fx.table)` after "
        "`combine_chunks()`; Parquet and Vortex via `bench.peers.columnar.check_table`. The size encodes and "
        "checks are not timing samples.",
        "- Vortex is compared on size only (no timings).",
        "",
    ]
    return "\n".join(out)


def to_json(report: dict[str, Any]) -> dict[str, Any]:
    rows = []
    for r in report["rows"]:
        rows.append({
            "key": r.key, "scale": r.scale, "name": r.name, "rows": r.rows, "bytes": r.bytes, "status": r.status,
            "op_status": r.op_status, "load_1min": r.load, "seconds": round(r.seconds, 1),
            "ms": {k: {"median": statistics.median(s) * 1e3 if s else None, "min": min(s) * 1e3 if s else None,
                       "samples": [x * 1e3 for x in s]} for k, s in r.samples.items()},
        })
    return {"benchmark": "compress", "env": report["env"], "command": report["command"], "rounds": report["rounds"],
            "cap_seconds": report["cap"], "load_1min_end": report["load_1min_end"],
            "vortex_compact": report["vortex_compact"], "speed_scale": SPEED_SCALE, "items": report["items"],
            "rows": rows, "wall_seconds": round(report["wall_seconds"], 1)}


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    tmp.replace(path)


# ----------------------------------------------------------------------------- main


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="2 rounds and a 12 s cap per operation (default 5, 30 s)")
    ap.add_argument("--fixtures", default=None,
                    help=f"comma-separated fixture keys (default all: {','.join(fx_mod.FIXTURES)})")
    ap.add_argument("--scales", default=",".join(map(str, SCALES)), help="comma-separated scales (default 1,100)")
    ap.add_argument("--rounds", type=int, default=None, help="interleaved rounds per fixture")
    ap.add_argument("--cap", type=float, default=None, help="seconds of samples after which an operation stops")
    ap.add_argument("--call-timeout", type=float, default=180.0, help="abandon one call after this many seconds")
    ap.add_argument("--no-save", action="store_true", help="print only; do not write bench/results")
    ap.add_argument("--strict", action="store_true", help="exit 1 unless every item passes")
    args = ap.parse_args(argv)
    if args.rounds is None:
        args.rounds = 2 if args.quick else 5
    if args.cap is None:
        args.cap = 12.0 if args.quick else 30.0
    keys = [k.strip() for k in (args.fixtures or ",".join(fx_mod.FIXTURES)).split(",") if k.strip()]
    unknown = [k for k in keys if k not in fx_mod.FIXTURES]
    if unknown:
        ap.error(f"unknown fixture(s) {unknown}; known: {', '.join(fx_mod.FIXTURES)}")
    try:
        scales = [int(s) for s in args.scales.split(",") if s.strip()]
    except ValueError:
        ap.error("--scales takes integers, e.g. 1,100")
    if not scales or any(s not in SCALES for s in scales):
        ap.error(f"--scales must be among {SCALES}")
    if args.rounds < 1:
        ap.error("--rounds must be >= 1")
    args.keys, args.scale_list = keys, scales
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    t0 = time.perf_counter()
    env = environment()  # first, so the load average is the machine's, not this run's
    import qdf_columnar as qdf

    _log("warming up qdf kernels (compilation is never timed) ...")
    qdf.warmup()
    rows: dict[tuple[str, int], Row] = {}
    # Scale 1 of every fixture first: cheap, and it warms every type path before the 100x runs.
    for scale in sorted(args.scale_list):
        for key in args.keys:
            rows[(key, scale)] = measure_fixture(key, scale, args)
            gc.unfreeze()
            gc.collect()
            pa.default_memory_pool().release_unused()
    items = evaluate(rows)
    command = " ".join(["bench/bench_compress.py", *(sys.argv[1:] if argv is None else argv)])
    report = {
        "env": env, "rows": list(rows.values()), "items": items, "rounds": args.rounds, "cap": args.cap,
        "command": command, "load_1min_end": round(os.getloadavg()[0], 2),
        "vortex_compact": vortex_compact_finding(), "wall_seconds": time.perf_counter() - t0,
    }
    text = render(report)
    print(text)
    if not args.no_save:
        RESULTS.mkdir(parents=True, exist_ok=True)
        full = (not args.quick and args.fixtures is None and sorted(args.scale_list) == list(SCALES))
        stem = RESULTS / (f"compress-{env['date']}" + ("" if full else "-quick" if args.quick else "-partial"))
        _write_atomic(stem.with_suffix(".md"), text)
        _write_atomic(stem.with_suffix(".json"), json.dumps(to_json(report), indent=1) + "\n")
        _log(f"wrote {stem.with_suffix('.md').relative_to(ROOT)} and .json")
    _log(f"total {time.perf_counter() - t0:.0f} s")
    if args.strict:
        return 0 if all(it["verdict"] in ("PASS", "INFO") for it in items) else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
