"""Seed inputs for the fuzz harnesses: small valid frames, values and streams in every mode.

Coverage-guided fuzzing goes deep only from inputs that already pass the outer
checks, so every harness starts from valid encodings of frames that exercise each
column kind the decoder has a path for: ints, floats with NaN, strings of low and
high cardinality, timestamps with a time zone, categoricals, nested list / struct /
map ``pd.ArrowDtype`` columns and nulls, written in the three modes. ``python -m
fuzz.frames OUTDIR`` writes them as ``OUTDIR/<target>/<name>`` files; the first
bytes of a decode, file and stream seed are the harness's option byte(s) (see each
harness's docstring).
"""

from __future__ import annotations

import argparse
import datetime as dt
import io
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

import qdf_columnar as qdf

MODES = ("speed", "balanced", "compression")

#: Column names every harness uses for ``columns=`` and ``filter=``; the seed frames
#: share them so a projection or a filter from the option byte usually hits a column.
NAMES = ("id", "f", "s_low", "s_high", "ts", "cat", "u", "lst", "st", "mp")


def _nested(n: int, rng: np.random.Generator) -> dict[str, pd.Series]:
    lists = [None if i % 7 == 3 else [int(x) for x in rng.integers(-5, 50, i % 4)] for i in range(n)]
    structs = [None if i % 9 == 4 else {"a": i, "b": f"v{i % 3}"} for i in range(n)]
    maps = [None if i % 5 == 2 else [(f"k{j}", float(i + j)) for j in range(i % 3)] for i in range(n)]
    return {
        "lst": pd.Series(lists, dtype=pd.ArrowDtype(pa.list_(pa.int64()))),
        "st": pd.Series(structs, dtype=pd.ArrowDtype(pa.struct([("a", pa.int64()), ("b", pa.string())]))),
        "mp": pd.Series(maps, dtype=pd.ArrowDtype(pa.map_(pa.string(), pa.float64()))),
    }


def seed_frames() -> dict[str, pd.DataFrame]:
    """A few small frames covering every column kind (deterministic)."""
    rng = np.random.default_rng(11)
    n = 24
    f = rng.normal(size=n).round(2)
    f[[2, 9]] = np.nan
    flat = pd.DataFrame(
        {
            "id": np.arange(n, dtype=np.int64) * 3 - 7,
            "f": f,
            "s_low": rng.choice(["INFO", "WARN", "ERROR"], n),
            "s_high": [f"user-{x:012x}@example.com" for x in rng.integers(0, 2**48, n)],
            "ts": pd.date_range("2026-03-01 09:30", periods=n, freq="37s", tz="Europe/Paris"),
            "cat": pd.Categorical(rng.choice(["red", "green", "blue"], n)),
            "u": pd.array([None if i % 4 == 1 else int(i * 1000) for i in range(n)], dtype="Int64"),
        }
    )
    nested = pd.DataFrame({"id": np.arange(n), **_nested(n, rng)})
    # More than SMALL_NESTED_ROWS rows, so the nested columns are shredded into levels
    # rather than possibly written row-major (the smaller form wins at <= 64 rows).
    m = 80
    shredded = pd.DataFrame({"id": np.arange(m), "f": rng.random(m), **_nested(m, rng)})
    nulls = pd.DataFrame(
        {
            "id": pd.array([None, 1, None, 3, None, 5, 6, None], dtype="Int64"),
            "f": [np.nan, 1.5, None, -0.0, np.inf, 2.25, None, 1e300],
            "s_low": pd.array([None, "a", "b", None, "a", "a", None, "b"], dtype="string"),
            "s_high": [None, "x" * 40, "yé", "z\u4e2d", None, "", "q", "r"],
            "ts": pd.to_datetime([None, "2026-01-01", None, "2026-01-02", None, None, "2026-01-03", None], utc=True),
            "u": pd.array([None] * 8, dtype="Int64"),
        }
    )
    wide_f = pd.DataFrame(
        {
            "f": np.cumsum(rng.normal(size=64)).round(3),
            "id": np.cumsum(rng.integers(0, 9, 64)),
            "s_low": [f"tok{i % 5}" for i in range(64)],
        }
    )
    # Repeating values beyond the v1 dictionary caps: written as dictionary levels
    # (codes in level 0, one sorted dictionary level per column; docs/FORMAT.md §2.4).
    k = 1000
    dicts = pd.DataFrame(
        {
            "s": [None if i % 11 == 0 else f"name-{i * 7919 % 300}" for i in range(k)],
            "f": np.round(rng.normal(size=40), 2)[rng.integers(0, 40, k)],
            "i": (rng.integers(0, 200, k) * 104_729).astype(np.int64),
        }
    )
    return {"flat": flat, "nested": nested, "shredded": shredded, "nulls": nulls, "wide": wide_f, "dicts": dicts}


def seed_values() -> dict[str, object]:
    """Python values for ``qdf.dumps`` (the ``loads`` and stream seeds)."""
    return {
        "record": {"user": "alice@example.com", "n": 1, "tags": ["red", "green"], "ok": True, "score": 0.5},
        "records": [{"id": i, "lvl": ["INFO", "WARN"][i % 2], "msg": f"event {i}", "v": i * 0.25} for i in range(30)],
        "scalars": [1, -2, 2**40, -(2**63), 2**64 - 1, 3.5, float("nan"), None, True, b"\x00\x01", "", "é\u4e2d"],
        "nested": {"deep": [{"k": "v" * 40, "l": [[1, 2], [3]], "m": {"x": None}}], "n": {"a": {"b": {"c": [1.0]}}}},
        "times": [dt.datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=dt.timezone.utc),
                  dt.datetime(1969, 12, 31, 23, 59, 59, tzinfo=dt.timezone.utc)],
        "arrays": {"i": np.arange(40, dtype=np.int64), "f": np.linspace(0, 1, 33), "u8": np.arange(20, dtype=np.uint8),
                   "b": np.array([True, False] * 9)},
        "strings": [f"https://example.com/item/{i % 7}/{i}" for i in range(50)],
        "floats": [round(x, 3) for x in np.cumsum(np.random.default_rng(5).normal(size=40)).tolist()],
    }


def encodings() -> Iterator[tuple[str, bytes]]:
    """(name, buffer) for every seed frame via ``qdf.encode`` and value via ``qdf.dumps``, in every mode."""
    for name, df in seed_frames().items():
        for mode in MODES:
            yield f"{name}-{mode}", qdf.encode(df, mode=mode)
            if mode != "speed":
                yield f"{name}-{mode}-noindex", qdf.encode(df, mode=mode, column_index=False)
            if name == "nested" and mode != "speed":
                yield f"{name}-{mode}-rows", qdf.encode(df, mode=mode, nested="rows")


def dumped() -> Iterator[tuple[str, bytes]]:
    for name, value in seed_values().items():
        for mode in MODES:
            yield f"{name}-{mode}", qdf.dumps(value, mode=mode)


def qdf_files(tmp: Path) -> Iterator[tuple[str, bytes]]:
    """(name, .qdf file bytes): each seed frame written with small row groups, in every mode."""
    for name, df in seed_frames().items():
        for mode in MODES:
            path = tmp / f"{name}-{mode}.qdf"
            qdf.write_qdf(df, path, mode=mode, row_group_size=max(4, len(df) // 3))
            yield f"{name}-{mode}", path.read_bytes()


def streams() -> Iterator[tuple[str, bytes]]:
    """(name, stream bytes): several messages written by StreamWriter, in every mode."""
    frames = seed_frames()
    values = seed_values()
    for mode in MODES:
        sink = io.BytesIO()
        with qdf.StreamWriter(sink, mode=mode) as w:
            for v in (values["record"], values["record"] | {"n": 2}, values["records"][:5], values["nested"]):
                w.write(v)
        yield f"messages-{mode}", sink.getvalue()
        sink = io.BytesIO()
        with qdf.StreamWriter(sink, mode=mode) as w:
            for name in ("flat", "nulls", "flat"):
                w.write_batch(frames[name])
        yield f"batches-{mode}", sink.getvalue()
        sink = io.BytesIO()
        with qdf.StreamWriter(sink, mode=mode) as w:
            for rec in values["records"][:12]:
                w.write(rec)
            w.write_batch(frames["nested"])
        yield f"records-{mode}", sink.getvalue()


def _with_options(items: Iterator[tuple[str, bytes]], options: list[bytes]) -> Iterator[tuple[str, bytes]]:
    for name, buf in items:
        for opt in options:
            yield f"{name}-{opt.hex()}", opt + buf


def write_seeds(outdir: Path, targets: list[str]) -> dict[str, int]:
    """Write the seed corpus of each target under ``outdir/<target>``; return the file counts."""
    import tempfile

    builders = {
        # Option bytes (see fuzz_decode): output x projection/filter choices, a few of each.
        "decode": lambda: _with_options(encodings(), [bytes([o, c]) for o, c in
                                                      ((0, 0), (1, 0), (2, 4), (3, 1), (0x15, 2), (0x0D, 0),
                                                       (0x21, 6), (0x32, 3), (0x0D, 9))]),
        "loads": lambda: iter([*dumped(), *encodings()]),
        # Option byte (see fuzz_read_qdf): bits 0-1 reseal, 2-3 read variant, 4 memory://, 7 threads.
        "read_qdf": lambda: _with_options(qdf_files(Path(tmp)), [b"\x03", b"\x07", b"\x0b", b"\x1f", b"\xb3"]),
        # Option byte (see fuzz_stream): bits 0-1 consumer, bits 2-3 source.
        "stream": lambda: _with_options(streams(), [b"\x00", b"\x05", b"\x02", b"\x0b", b"\x03"]),
    }
    counts = {}
    with tempfile.TemporaryDirectory() as tmp:
        for target in targets:
            d = outdir / target
            d.mkdir(parents=True, exist_ok=True)
            n = 0
            for name, buf in builders[target]():
                (d / name).write_bytes(buf)
                n += 1
            counts[target] = n
    return counts


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("outdir", type=Path)
    ap.add_argument("targets", nargs="*", default=["decode", "loads", "read_qdf", "stream"])
    args = ap.parse_args(argv)
    for target, n in write_seeds(args.outdir, args.targets).items():
        print(f"{target}: {n} seeds in {args.outdir / target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
