"""A two-minute tour of qdf_columnar: ``python -m qdf_columnar.demo`` (or ``make demo``).

It builds a realistic web-service log batch (:func:`qdf_columnar.datasets.make_log_table`),
encodes it with qdf's ``balanced`` mode, compares the size with JSON lines and with
Parquet (snappy and zstd, written in memory by pyarrow), then runs one Select/Where
query straight on the encoded bytes and shows the result.

The first run compiles the Numba kernels (cached on disk afterwards), so it is slower
than later runs; ``qdf warmup`` (``make warmup``) does that compilation up front.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

import qdf_columnar as qdf

from .datasets import make_log_table

__all__ = ["main"]

T = TypeVar("T")

#: The demo query: which columns to return and which rows to keep.
QUERY_COLUMNS = ["ts", "service", "status", "latency_ms"]


def _say(msg: str) -> None:
    print(msg, flush=True)


def _timed(label: str, fn: Callable[[], T]) -> tuple[T, float]:
    """Run ``fn`` behind a progress line (``label ... 0.42 s``); return its result and seconds."""
    print(f"  {label} ...", end="", flush=True)
    t0 = time.perf_counter()
    out = fn()
    dt = time.perf_counter() - t0
    print(f" {dt:.2f} s", flush=True)
    return out, dt


def _fmt_bytes(n: int) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:,.2f} {unit}"
    return f"{n:,} B"


def _json_lines(table: pa.Table) -> bytes:
    """The table as JSON lines, one ``json.dumps`` per record, timestamps as ISO-8601 strings."""
    # Formatting ts in Arrow keeps the per-row Python work to the json.dumps call itself.
    iso = pc.strftime(table["ts"], format="%Y-%m-%dT%H:%M:%SZ")  # %S carries the microseconds
    records = table.set_column(0, "ts", iso).to_pylist()
    return "\n".join(json.dumps(r, separators=(",", ":")) for r in records).encode() + b"\n"


def _parquet(table: pa.Table, compression: str) -> bytes:
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression=compression)
    return sink.getvalue().to_pybytes()


def _size_table(rows: Sequence[tuple[str, int]], reference: int) -> str:
    """A small aligned table of encoded sizes with each size as a multiple of qdf's."""
    name_w = max(len(name) for name, _ in rows)
    lines = [f"  {'format':<{name_w}}  {'size':>11}  {'vs qdf':>7}"]
    lines.append(f"  {'-' * name_w}  {'-' * 11}  {'-' * 7}")
    for name, size in rows:
        lines.append(f"  {name:<{name_w}}  {_fmt_bytes(size):>11}  {size / reference:>6.2f}x")
    return "\n".join(lines)


def main(n_rows: int = 200_000) -> dict[str, Any]:
    """Run the demo on ``n_rows`` rows; print the tour and return its numbers (used by the tests)."""
    # Checked at call time, not import time, so the module stays importable in partial builds.
    if not hasattr(qdf, "encode"):
        raise RuntimeError("qdf_columnar.encode is not available in this build; the demo needs it")

    _say(f"qdf_columnar demo: {n_rows:,} rows of web-service logs, 12 columns")
    _say("(the first run compiles the Numba kernels and caches them; later runs are much faster)\n")

    table, _ = _timed("generating the log table", lambda: make_log_table(n_rows))
    buf, t_enc = _timed("encoding with qdf (balanced)", lambda: qdf.encode(table, mode="balanced", column_index=True))
    jsonl, _ = _timed("writing JSON lines", lambda: _json_lines(table))
    snappy, _ = _timed("writing Parquet (snappy)", lambda: _parquet(table, "snappy"))
    zstd, _ = _timed("writing Parquet (zstd)", lambda: _parquet(table, "zstd"))

    sizes = [
        ("qdf balanced", len(buf)),
        ("JSON lines", len(jsonl)),
        ("Parquet snappy", len(snappy)),
        ("Parquet zstd", len(zstd)),
    ]
    _say("\nEncoded size")
    _say(_size_table(sizes, len(buf)))

    where = (qdf.col("status") >= 500) & (qdf.col("level") == "ERROR")
    _say(f"\nSelect {QUERY_COLUMNS} Where status >= 500 & level == 'ERROR'")
    t0 = time.perf_counter()
    result = qdf.decode(buf, columns=QUERY_COLUMNS, filter=where, output="pandas")
    t_query = time.perf_counter() - t0
    # Cross-check the row count with pyarrow on the source table, so the demo shows a
    # number the reader can trust rather than one it merely prints.
    expected = int(
        pc.sum(pc.and_(pc.greater_equal(table["status"], 500), pc.equal(table["level"], "ERROR"))).as_py() or 0
    )
    check = "matches pyarrow" if len(result) == expected else f"MISMATCH: pyarrow finds {expected:,}"
    _say(f"  {len(result):,} of {n_rows:,} rows matched in {t_query * 1e3:.1f} ms ({check})\n")
    with pd.option_context("display.width", 120, "display.max_columns", 12):
        _say(result.head(10).to_string(index=False))

    stream = _stream_tour(table.slice(0, min(n_rows, 10_000)))

    return {
        "rows": n_rows,
        "stream": stream,
        "sizes": dict(sizes),
        "encode_seconds": t_enc,
        "query_seconds": t_query,
        "matched": len(result),
        "expected": expected,
    }


def _stream_tour(table: pa.Table) -> dict[str, Any]:
    """The same rows as a feed: one message per event in a qdf stream, against msgpack."""
    import io

    import msgpack

    events = table.to_pylist()
    _say(f"\nThe first {len(events):,} rows as a feed of events, one message each (qdf.StreamWriter)")
    sink = io.BytesIO()
    t0 = time.perf_counter()
    with qdf.StreamWriter(sink, mode="balanced") as w:
        for event in events:
            w.write(event)
    t_write = time.perf_counter() - t0
    data = sink.getvalue()
    t0 = time.perf_counter()
    back = list(qdf.StreamReader(data))
    t_read = time.perf_counter() - t0
    packer = msgpack.Packer(datetime=True)
    mp = sum(len(packer.pack(e)) for e in events)
    ok = "round trip exact" if back == events else "ROUND TRIP DIFFERS"
    _say(f"  qdf stream {_fmt_bytes(len(data))} vs msgpack {_fmt_bytes(mp)} ({mp / len(data):.2f}x smaller); "
         f"written in {t_write * 1e3:.0f} ms, read in {t_read * 1e3:.0f} ms ({ok})")
    return {"events": len(events), "bytes": len(data), "msgpack_bytes": mp, "round_trip": back == events}


def _cli(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m qdf_columnar.demo", description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000, help="rows to generate (default 200,000)")
    args = parser.parse_args(argv)
    summary = main(args.rows)
    return 0 if summary["matched"] == summary["expected"] and summary["stream"]["round_trip"] else 1


if __name__ == "__main__":
    sys.exit(_cli())
