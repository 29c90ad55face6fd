"""The peer-adapter interface and the helpers every adapter shares.

A :class:`Peer` turns a :class:`~bench.fixtures.base.Fixture` into bytes and back,
and proves the round trip was lossless (:meth:`Peer.check`) before the runner reports
any figure for it. Peers that cannot hold a fixture say why in :meth:`Peer.supports`
(the text lands in the results table) instead of failing at run time.

Comparison is canonical rather than ``==``: floats are compared bit-for-bit (so NaN
equals NaN and -0.0 differs from 0.0), ``True`` never equals ``1``, tuples equal
lists, and maps (dicts or Arrow's lists of key/value pairs) compare as unordered.
"""

from __future__ import annotations

import importlib
import math
import struct
from collections.abc import Iterator
from typing import Any, ClassVar

import pyarrow as pa

from bench.fixtures.base import Fixture

__all__ = [
    "Blob",
    "Peer",
    "RootFeatures",
    "assert_same",
    "canon",
    "canon_table",
    "fixture_cache",
    "assert_lossless",
    "is_large",
    "sample_indices",
    "import_or_reason",
    "null_paths",
    "root_features",
]


class Blob(bytes):
    """Encoded bytes plus out-of-band metadata the decoder needs (never counted as size).

    Schema-first formats (protobuf, Avro) ship their schema out of band, as the Go
    benchmark's compiled types do; ``meta`` carries that compiled schema, or which qdf
    path wrote the buffer, from ``encode`` to ``decode``. ``len(blob)`` is the payload
    only, and a Blob is a real ``bytes`` so every reader accepts it unchanged.
    """

    meta: dict[str, Any]

    def __new__(cls, data: bytes, **meta: Any) -> Blob:
        obj = super().__new__(cls, data)
        obj.meta = meta
        return obj


class Peer:
    """One serialisation format in the benchmark matrix (see module docstring)."""

    name: ClassVar[str] = ""
    family: ClassVar[str] = ""  # "row" or "columnar"
    #: the importable modules this peer needs, paired with the PyPI package to install
    requires: ClassVar[tuple[tuple[str, str], ...]] = ()

    def available(self) -> str | None:
        """None if the peer's packages import, else the reason (names the package)."""
        for module, package in self.requires:
            reason = import_or_reason(module, package)
            if reason:
                return reason
        return None

    def supports(self, fx: Fixture) -> str | None:
        """None if the peer can hold ``fx`` losslessly, else the reason for the table cell."""
        return None

    def variant(self, fx: Fixture) -> str:
        """Which path of the peer handles ``fx`` (shown by the runner); "" if only one."""
        return ""

    def encode(self, fx: Fixture) -> bytes:
        raise NotImplementedError

    def decode(self, blob: bytes) -> Any:
        raise NotImplementedError

    def check(self, fx: Fixture, decoded: Any) -> None:
        raise NotImplementedError

    def select(self, blob: bytes, columns: list[str] | tuple[str, ...]) -> Any | None:
        """Read only ``columns`` with the format's own projection; None if it has none."""
        return None

    def where(self, blob: bytes, dnf: list[tuple[str, str, Any]]) -> Any | None:
        """Read the rows matching ``dnf`` with native pushdown; None if the format has none."""
        return None

    def __repr__(self) -> str:
        return f"<Peer {self.name} ({self.family})>"


def import_or_reason(module: str, package: str) -> str | None:
    try:
        importlib.import_module(module)
    except Exception as exc:  # ImportError, or a broken native extension
        return f"package {package!r} not installed ({type(exc).__name__}: {exc})"
    return None


class fixture_cache:  # noqa: N801 - used like functools.cache
    """Memoise a per-fixture analysis on the Fixture's identity.

    Fixtures hold lists, so they are unhashable; keyed on ``id(fx)`` with the fixture
    kept alive in the entry so the id cannot be reused by another object.
    """

    def __init__(self, fn: Any) -> None:
        self.fn = fn
        self.entries: dict[int, tuple[Fixture, Any]] = {}

    def __call__(self, fx: Fixture, *args: Any) -> Any:
        key = id(fx)
        hit = self.entries.get(key)
        if hit is None or hit[0] is not fx:
            hit = (fx, self.fn(fx, *args))
            self.entries[key] = hit
        return hit[1]


# ----------------------------------------------------------------------------- canonical


def _fbits(x: float) -> tuple[str, bytes]:
    return ("f", struct.pack("<d", x))


def canon(v: Any, *, drop_none_keys: bool = False) -> Any:
    """A hashable, exactly comparable form of a JSON-like / Arrow ``to_pylist`` value.

    ``drop_none_keys`` treats a dict key whose value is None as absent: schema-first
    formats (Avro, protobuf) materialise every declared field, while a Go-shaped
    record may omit null ones (``omitempty``); both mean "no value".
    """
    if v is None or isinstance(v, str | int) and not isinstance(v, bool):
        return v
    if isinstance(v, bool):
        return ("b", v)
    if isinstance(v, float):
        return _fbits(v)
    if isinstance(v, bytes | bytearray | memoryview):
        return ("B", bytes(v))
    if isinstance(v, dict):
        items = (
            (canon(k), canon(x, drop_none_keys=drop_none_keys))
            for k, x in v.items()
            if not (drop_none_keys and x is None)
        )
        return ("M", tuple(sorted(items, key=repr)))
    if isinstance(v, list | tuple):
        return ("L", tuple(canon(x, drop_none_keys=drop_none_keys) for x in v))
    # datetimes, decimals...: their own equality is exact
    return ("O", type(v).__name__, v)


def canon_table(t: pa.Table) -> Any:
    """Canonical rows of an Arrow table (maps as dicts, as in records); equal to
    ``canon(records)`` for the same rows, so string_view vs string does not matter."""
    return canon(t.to_pylist(maps_as_pydicts="lossy"))


def _first_diff(a: Any, b: Any, path: str = "") -> str:
    """Where two canonical values first differ (keeps AssertionError messages short)."""
    if type(a) is not type(b):
        return f"{path or '<root>'}: {_short(a)} != {_short(b)}"
    if isinstance(a, tuple) and a and a[0] in ("L", "M") and len(a) == 2:
        if a[0] != b[0]:
            return f"{path or '<root>'}: kind {a[0]} != {b[0]}"
        xs, ys = a[1], b[1]
        if len(xs) != len(ys):
            return f"{path or '<root>'}: length {len(xs)} != {len(ys)}"
        for i, (x, y) in enumerate(zip(xs, ys, strict=True)):
            if x != y:
                step = f"[{i}]" if a[0] == "L" else f"{{{x[0]!r}}}" if x[0] == y[0] else f"{{#{i}}}"
                return _first_diff(x, y, path + step)
    return f"{path or '<root>'}: {_short(a)} != {_short(b)}"


def _short(v: Any) -> str:
    s = repr(v)
    return s if len(s) <= 160 else s[:157] + "..."


#: A fixture is "large" (its checks use whole-batch equality plus an exact sample instead
#: of canonicalising every value, which took 25-60 s per cell at 100x scale) when it is a
#: scaled variant or its Arrow table exceeds this many bytes.
LARGE_TABLE_BYTES = 8 << 20
#: The exact sample covers about this many values (few, deeply nested records -> fewer rows).
SAMPLE_VALUES = 100_000
SAMPLE_ROWS = 2_000


def is_large(fx: Any) -> bool:
    return getattr(fx, "scale", 1) > 1 or fx.table.nbytes > LARGE_TABLE_BYTES


def sample_indices(n: int, fx: Any = None, k: int = SAMPLE_ROWS) -> list[int]:
    """Evenly spaced row numbers of ``n`` (first and last included); all rows unless large."""
    if fx is not None and not is_large(fx):
        return list(range(n))
    if fx is not None:
        per_row = max(1.0, _value_count(fx) / max(1, n))
        k = max(2, min(k, int(SAMPLE_VALUES / per_row)))
    if n <= k:
        return list(range(n))
    return sorted({round(i * (n - 1) / (k - 1)) for i in range(k)})


def _value_count(fx: Any) -> int:
    """Leaf values in the fixture's table (list / struct / map children counted)."""
    def leaves(a: pa.Array) -> int:
        t = a.type
        if pa.types.is_struct(t):
            return sum(leaves(a.field(i)) for i in range(t.num_fields))
        if pa.types.is_map(t):
            return leaves(a.keys) + leaves(a.items)
        if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
            return leaves(a.flatten())
        return len(a)
    return sum(leaves(c.combine_chunks()) for c in fx.table.columns)


def assert_lossless(peer: str, what: str, fx: Any, expected: Any, got: Any, *, drop_none_keys: bool = False) -> None:
    """Exact comparison; for large fixtures: ``==`` on everything plus an exact sample.

    Python ``==`` already fails on most losses (values, shapes, NaN); the exact
    comparison of an evenly spaced sample catches the type-level ones it cannot see
    (``True == 1``, ``-0.0 == 0.0``), which a codec applies to every row alike.
    """
    if is_large(fx) and not drop_none_keys and isinstance(expected, list) and isinstance(got, list):
        if len(expected) == len(got) and expected == got:
            idx = sample_indices(len(expected), fx)
            assert_same(peer, what, canon([expected[i] for i in idx]), canon([got[i] for i in idx]))
            return
    elif is_large(fx) and not drop_none_keys and isinstance(expected, dict) and expected == got:
        return  # a single large root object (never the case for the current fixtures)
    assert_same(peer, what, canon(expected, drop_none_keys=drop_none_keys), canon(got, drop_none_keys=drop_none_keys))


def assert_same(peer: str, what: str, expected: Any, got: Any) -> None:
    """Raise AssertionError naming the first difference between two canonical values."""
    if expected != got:
        raise AssertionError(f"{peer}: {what} not a lossless round trip: {_first_diff(expected, got)}")


# ----------------------------------------------------------------------------- analysis


class RootFeatures:
    """What a Go-shaped root contains that text / binary row formats may not hold."""

    def __init__(self) -> None:
        self.has_bytes = False
        self.nonfinite: float | None = None  # first NaN / inf seen
        self.nonstr_key: Any = None  # first dict key that is not a str
        self.big_int: int | None = None  # first int outside int64 / uint64
        self.other_type: str | None = None  # first value type outside the JSON-like set


def root_features(root: Any) -> RootFeatures:
    """Scan ``root`` once, iteratively (scale-100 fixtures are too deep for recursion)."""
    f = RootFeatures()
    stack = [root]
    while stack:
        v = stack.pop()
        if v is None or isinstance(v, str | bool):
            continue
        if isinstance(v, int):
            if f.big_int is None and not -(2**63) <= v < 2**64:
                f.big_int = v
        elif isinstance(v, float):
            if f.nonfinite is None and not math.isfinite(v):
                f.nonfinite = v
        elif isinstance(v, bytes):
            f.has_bytes = True
        elif isinstance(v, dict):
            for k in v:
                if f.nonstr_key is None and not isinstance(k, str):
                    f.nonstr_key = k
            stack.extend(v.values())
        elif isinstance(v, list | tuple):
            stack.extend(v)
        elif f.other_type is None:
            f.other_type = type(v).__name__
    return f


def _chunks(arr: pa.Array | pa.ChunkedArray) -> Iterator[pa.Array]:
    if isinstance(arr, pa.ChunkedArray):
        yield from arr.chunks
    else:
        yield arr


def null_paths(t: pa.Table) -> set[tuple[str, ...]]:
    """Paths (column, then field names / "[]" for list items / "{}" for map values) holding nulls.

    A struct child counts only where its parent struct is valid (a field under a null
    struct is not a null field), and list / map items only inside valid, in-range slots.
    """
    out: set[tuple[str, ...]] = set()

    def walk(a: pa.Array, path: tuple[str, ...]) -> None:
        if a.null_count:
            out.add(path)
        typ = a.type
        if pa.types.is_dictionary(typ):
            walk(a.dictionary, path)
        elif pa.types.is_struct(typ):
            valid = a.is_valid() if a.null_count else None
            for i in range(typ.num_fields):
                child = a.field(i)  # ignores the parent's validity and offset-aware
                walk(child if valid is None else child.filter(valid), (*path, typ.field(i).name))
        elif pa.types.is_map(typ):
            walk(a.keys, (*path, "{k}"))
            walk(a.items, (*path, "{}"))
        elif pa.types.is_list(typ) or pa.types.is_large_list(typ) or pa.types.is_fixed_size_list(typ):
            walk(a.flatten(), (*path, "[]"))

    for name, col in zip(t.column_names, t.columns, strict=True):
        for chunk in _chunks(col):
            walk(chunk, (name,))
    return out
