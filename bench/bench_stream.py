"""Messages and streams bench: ``qdf.dumps`` / ``loads`` and ``StreamWriter`` / ``StreamReader``
against msgpack-python (a C extension) in one process, with PASS / FAIL per acceptance item.

Size
  (S1) a stream of 10,000 Logs records (one record per message) in balanced mode is at
       least 2x smaller than msgpack of the same records (``packb`` per record, which is
       how msgpack streams records); speed and compression streams are reported too.
Speed (ratios of medians from this one run)
  (T1) the 1-row Wolverine reference message (bench/fixtures/wolverine.py): ``dumps``
       within 5x of ``msgpack.packb`` and ``loads`` within 5x of ``msgpack.unpackb``,
       judged in speed mode (the single-message mode) and in balanced mode;
  (T2) the 1,024-row Logs batch as a list of dicts: balanced ``dumps`` + ``loads`` no
       slower than ``packb`` + ``unpackb``.
Reported without a verdict: stream write / read of the 10,000 records against msgpack's
``Packer`` / ``Unpacker`` on the same bytes.

The Logs records are the fixture's (bench/fixtures/logs.py) with its Go-map dict subclass
turned into plain dicts, as a Python service holds them (e.g. from ``json.loads``); every
contender gets the same objects.

Every qdf figure is preceded by a round-trip check (the value read back equals the one
written); a failed check is reported as FAIL with the reason.

Timing: each operation is a loop of ``n`` calls timed as one sample (garbage collector
off during the loop); samples of all operations are taken in shuffled rounds (seeded) so
drift on this shared machine hits every contender alike; the median sample is reported.

Run: ``make bench-stream`` or ``.venv/bin/python bench/bench_stream.py [--rounds K]
[--no-save] [--strict]``. Results go to ``bench/results/stream-<date>.{json,md}``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import io
import json
import math
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import msgpack  # noqa: E402

import qdf_columnar as qdf  # noqa: E402
from bench import fixtures as fx_mod  # noqa: E402
from bench.env import environment as _environment  # noqa: E402

RESULTS = ROOT / "bench" / "results"
STREAM_RECORDS = 10_000
BATCH_ROWS = 1024


def _equal(a: Any, b: Any) -> bool:
    """Deep equality where NaN equals NaN (floats compared by value otherwise)."""
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, dict):
        return isinstance(b, dict) and list(a) == list(b) and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return isinstance(b, list) and len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    return a == b


class Timer:
    """Shuffled-round sampling of several operations; median seconds per call."""

    def __init__(self, rounds: int, seed: int = 20261130) -> None:
        self.rounds = rounds
        self.ops: dict[str, tuple[Callable[[], Any], int]] = {}
        self.samples: dict[str, list[float]] = {}
        self.rng = random.Random(seed)

    def add(self, name: str, fn: Callable[[], Any], target_s: float = 0.02) -> None:
        fn()  # warm: compile kernels, fill caches
        t0 = time.perf_counter()
        fn()
        one = max(time.perf_counter() - t0, 1e-7)
        n = max(1, int(target_s / one))
        self.ops[name] = (fn, n)
        self.samples[name] = []

    def run(self) -> dict[str, float]:
        names = list(self.ops)
        for _ in range(self.rounds):
            self.rng.shuffle(names)
            for name in names:
                fn, n = self.ops[name]
                gc.collect()
                gc.disable()
                try:
                    t0 = time.perf_counter()
                    for _ in range(n):
                        fn()
                    self.samples[name].append((time.perf_counter() - t0) / n)
                finally:
                    gc.enable()
        return {name: statistics.median(s) for name, s in self.samples.items()}


def _plain(value: Any) -> Any:
    """``value`` with every dict / list subclass replaced by a plain dict / list (same order)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _stream_bytes(records: list[dict], mode: str) -> bytes:
    sink = io.BytesIO()
    with qdf.StreamWriter(sink, mode=mode) as w:
        for rec in records:
            w.write(rec)
        w.flush()
        return sink.getvalue()


def _read_stream(buf: bytes) -> list[Any]:
    return list(qdf.StreamReader(buf))


def _msgpack_stream(records: list[dict]) -> bytes:
    packer = msgpack.Packer()
    return b"".join(packer.pack(r) for r in records)


def _msgpack_read(buf: bytes) -> list[Any]:
    unpacker = msgpack.Unpacker(raw=False, strict_map_key=False)
    unpacker.feed(buf)
    return list(unpacker)


def run(rounds: int) -> dict[str, Any]:
    items: dict[str, dict[str, Any]] = {}
    # The fixtures hold Go maps as a dict subclass (GoMap, to keep Go's generation order);
    # a Python service has plain dicts, e.g. from json.loads: the same values, as plain types.
    logs = _plain(fx_mod.get("logs", 10).records[:STREAM_RECORDS])
    batch = _plain(fx_mod.get("logs", 1).records[:BATCH_ROWS])
    wolverine = fx_mod.get("wolverine", 1).root

    # ------------------------------------------------------------------ S1 size
    mp_stream = _msgpack_stream(logs)
    sizes = {"msgpack": len(mp_stream)}
    checks: dict[str, str] = {}
    for mode in ("speed", "balanced", "compression"):
        buf = _stream_bytes(logs, mode)
        sizes[f"qdf-{mode}"] = len(buf)
        back = _read_stream(buf)
        checks[mode] = "ok" if _equal(back, logs) else "round trip differs"
    ratio = sizes["msgpack"] / sizes["qdf-balanced"]
    ok = checks["balanced"] == "ok" and ratio >= 2.0
    items["S1"] = {
        "what": f"{STREAM_RECORDS:,}-message Logs stream, balanced, >= 2x smaller than msgpack",
        "verdict": "PASS" if ok else "FAIL",
        "sizes": sizes,
        "msgpack_over_qdf_balanced": round(ratio, 3),
        "round_trip": checks,
    }

    # ------------------------------------------------------------------ timings
    timer = Timer(rounds)
    wb = {m: qdf.dumps(wolverine, mode=m) for m in ("speed", "balanced")}
    wmp = msgpack.packb(wolverine)
    for m, b in wb.items():
        if not _equal(qdf.loads(b), wolverine):
            checks[f"wolverine-{m}"] = "round trip differs"
        timer.add(f"wolverine dumps {m}", lambda m=m: qdf.dumps(wolverine, mode=m))
        timer.add(f"wolverine loads {m}", lambda b=b: qdf.loads(b))
    timer.add("wolverine packb", lambda: msgpack.packb(wolverine))
    timer.add("wolverine unpackb", lambda: msgpack.unpackb(wmp))

    bb = qdf.dumps(batch, mode="balanced")
    bmp = msgpack.packb(batch)
    batch_ok = _equal(qdf.loads(bb), batch)
    timer.add("logs1024 dumps balanced", lambda: qdf.dumps(batch, mode="balanced"))
    timer.add("logs1024 loads balanced", lambda: qdf.loads(bb))
    timer.add("logs1024 packb", lambda: msgpack.packb(batch))
    timer.add("logs1024 unpackb", lambda: msgpack.unpackb(bmp, strict_map_key=False))

    sb = _stream_bytes(logs, "balanced")
    timer.add("stream write balanced", lambda: _stream_bytes(logs, "balanced"), target_s=0.2)
    timer.add("stream read balanced", lambda: _read_stream(sb), target_s=0.2)
    timer.add("stream write msgpack", lambda: _msgpack_stream(logs), target_s=0.2)
    timer.add("stream read msgpack", lambda: _msgpack_read(mp_stream), target_s=0.2)
    t = timer.run()

    t1 = {}
    t1_ok = True
    for m in ("speed", "balanced"):
        d = t[f"wolverine dumps {m}"] / t["wolverine packb"]
        lo = t[f"wolverine loads {m}"] / t["wolverine unpackb"]
        t1[m] = {"dumps_over_packb": round(d, 2), "loads_over_unpackb": round(lo, 2),
                 "roundtrip_over_msgpack": round((t[f"wolverine dumps {m}"] + t[f"wolverine loads {m}"])
                                                 / (t["wolverine packb"] + t["wolverine unpackb"]), 2),
                 "bytes": len(wb[m])}
        t1_ok &= d <= 5 and lo <= 5 and checks.get(f"wolverine-{m}", "ok") == "ok"
    items["T1"] = {"what": "1-row Wolverine: dumps <= 5x packb and loads <= 5x unpackb (speed and balanced)",
                   "verdict": "PASS" if t1_ok else "FAIL", **t1, "msgpack_bytes": len(wmp)}

    q = t["logs1024 dumps balanced"] + t["logs1024 loads balanced"]
    mp = t["logs1024 packb"] + t["logs1024 unpackb"]
    items["T2"] = {"what": "1,024-row Logs list of dicts: balanced dumps+loads no slower than packb+unpackb",
                   "verdict": "PASS" if batch_ok and q <= mp else "FAIL",
                   "qdf_over_msgpack": round(q / mp, 3), "round_trip": "ok" if batch_ok else "differs",
                   "bytes": {"qdf-balanced": len(bb), "msgpack": len(bmp)}}
    items["stream-speed"] = {
        "what": f"{STREAM_RECORDS:,}-message stream write / read vs msgpack Packer / Unpacker (no verdict)",
        "write_over_msgpack": round(t["stream write balanced"] / t["stream write msgpack"], 2),
        "read_over_msgpack": round(t["stream read balanced"] / t["stream read msgpack"], 2),
    }
    return {"items": items, "median_seconds": {k: v for k, v in sorted(t.items())}}


def _markdown(res: dict[str, Any], env: dict[str, Any]) -> str:
    lines = [f"# Messages and streams bench ({dt.date.today().isoformat()})", "",
             f"Python {env.get('python')}, msgpack {msgpack.version}, {env.get('platform')}, "
             f"{env.get('cpus_usable')} usable CPUs, load {env.get('load_1min')}", "",
             "| item | verdict | figures |", "|---|---|---|"]
    for key, it in res["items"].items():
        figs = {k: v for k, v in it.items() if k not in ("what", "verdict")}
        lines.append(f"| {key}: {it['what']} | {it.get('verdict', '-')} | `{json.dumps(figs)}` |")
    lines += ["", "Median seconds per call:", ""]
    lines += [f"- {k}: {v * 1e6:,.1f} µs" for k, v in res["median_seconds"].items()]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--no-save", action="store_true")
    ap.add_argument("--strict", action="store_true", help="exit 1 when an item FAILs")
    args = ap.parse_args(argv)
    env = _environment(("numpy", "pyarrow", "numba", "msgpack"))
    t0 = time.perf_counter()
    res = run(args.rounds)
    res["environment"] = env
    res["elapsed_s"] = round(time.perf_counter() - t0, 1)
    for key, it in res["items"].items():
        figs = {k: v for k, v in it.items() if k not in ("what", "verdict")}
        print(f"{key:13} {it.get('verdict', '-'):5} {it['what']}\n{'':19}{json.dumps(figs)}")
    if not args.no_save:
        RESULTS.mkdir(parents=True, exist_ok=True)
        stem = RESULTS / f"stream-{dt.date.today().isoformat()}"
        stem.with_suffix(".json").write_text(json.dumps(res, indent=2, default=str) + "\n")
        stem.with_suffix(".md").write_text(_markdown(res, env))
        print(f"wrote {stem}.json / .md ({res['elapsed_s']} s)")
    failed = [k for k, it in res["items"].items() if it.get("verdict") == "FAIL"]
    return 1 if failed and args.strict else 0


if __name__ == "__main__":
    raise SystemExit(main())
