"""Object-dtype columns: Python values stored so that they come back as the same objects.

pandas ``object`` columns hold anything. What qdf does with each, decided per column
from ``pd.api.types.infer_dtype`` (documented in docs/FORMAT.md, "The pandas note"):

* strings, bytes, Python ints / floats / bools, ``datetime.date``, Decimals of one
  exponent (all nulls aside): a typed Arrow column (string, binary, int64, ...), so
  the column keeps its codec, filters and statistics; the decoder rebuilds the Python
  objects (``Array.to_pylist``). numpy scalars inside an object column come back as
  the equal Python scalars.
* anything else (lists, dicts, tuples, sets of values, mixed scalar types, datetimes,
  Decimals of mixed exponents, NaN next to None): one typed-JSON text per cell
  (:func:`to_json_deep`), exact for every type it accepts: list, tuple, dict (any
  supported key type, key order kept), set / frozenset, and the scalars of
  :mod:`.labels`. A value of any other type raises :class:`UnsupportedTypeError`
  naming the column, the row and the type.

Nulls: a column's missing values (``None``, ``NaN``, ``pd.NA``, ``NaT``) are Arrow
nulls; the decoder writes back the one marker the column used. A column that mixes
markers goes the typed-JSON way, where each marker is a value of its own.
"""

from __future__ import annotations

import decimal
import json
import math
from typing import Any

import numpy as np
import pyarrow as pa

from ..errors import CorruptDataError, UnsupportedTypeError
from .chunked import one_array
from .labels import from_json, to_json

__all__ = ["object_column", "restore_object", "to_json_deep", "from_json_deep"]

#: infer_dtype results whose values Arrow stores as one typed column and ``to_pylist`` gives back.
_TYPED = {"string", "bytes", "integer", "floating", "boolean", "date", "empty"}


def to_json_deep(v: Any) -> Any:
    """Like :func:`labels.to_json`, also for lists, dicts and sets (recursively)."""
    if isinstance(v, list):
        return {"l": [to_json_deep(x) for x in v]}
    if isinstance(v, tuple):
        return {"t": [to_json_deep(x) for x in v]}
    if isinstance(v, dict):
        return {"m": [[to_json_deep(k), to_json_deep(x)] for k, x in v.items()]}
    if isinstance(v, (set, frozenset)):
        return {"set" if isinstance(v, set) else "fset": [to_json_deep(x) for x in v]}
    if _is_na(v):
        return {"na": True}
    return to_json(v)


def from_json_deep(j: Any) -> Any:
    if isinstance(j, dict) and len(j) == 1:
        (tag, x), = j.items()
        if tag in ("l", "t", "set", "fset", "m") and isinstance(x, list):
            if tag == "l":
                return [from_json_deep(e) for e in x]
            if tag == "t":
                return tuple(from_json_deep(e) for e in x)
            if tag == "m":
                return {from_json_deep(k): from_json_deep(e) for k, e in x}
            items = [from_json_deep(e) for e in x]
            return set(items) if tag == "set" else frozenset(items)
        if tag == "na" and x is True:
            import pandas as pd

            return pd.NA
    return from_json(j)


def _is_na(v: Any) -> bool:
    return type(v).__name__ == "NAType"


def _null_kind(v: Any) -> str | None:
    """The null marker ``v`` is, or None for a value."""
    if v is None:
        return "None"
    if isinstance(v, float) and math.isnan(v):
        return "nan"
    if _is_na(v):
        return "NA"
    if type(v).__name__ == "NaTType":
        return "NaT"
    if isinstance(v, np.datetime64) and np.isnat(v):
        return "NaT"
    return None


_MARKERS: dict[str, Any] = {"None": None, "nan": float("nan")}


def _marker(kind: str) -> Any:
    if kind in _MARKERS:
        return _MARKERS[kind]
    import pandas as pd

    return pd.NA if kind == "NA" else pd.NaT


def _na_marker(kind: Any) -> Any:
    if kind not in ("nan", "NA", "NaT"):
        raise CorruptDataError(f"unknown null marker {kind!r} in the pandas note")
    return _marker(kind)


def _uniform_decimal(values: list[Any]) -> pa.DataType | None:
    """decimal128(p, s) holding every Decimal exactly when all share one exponent, else None."""
    exps = set()
    digits = 1
    for v in values:
        if not isinstance(v, decimal.Decimal) or not v.is_finite():
            return None
        t = v.as_tuple()
        exps.add(t.exponent)
        digits = max(digits, len(t.digits))
    if len(exps) != 1:
        return None
    (exp,) = exps
    scale = -int(exp)
    precision = max(digits, scale)
    if scale < 0 or precision > 38:
        return None
    return pa.decimal128(precision, scale)


def object_column(name: str, values: Any) -> tuple[pa.Array | None, dict[str, Any]]:
    """(the Arrow array to store, or None to let pyarrow convert the column; its note spec).

    ``values`` is the object-dtype Series or Index. Only the missing values are looked
    at one by one (to learn their marker); the rest is pandas' and Arrow's C code.
    """
    import pandas as pd

    inferred = pd.api.types.infer_dtype(values, skipna=True)
    missing = np.asarray(pd.isna(values), dtype=bool)
    nulls = {_null_kind(v) for v in np.asarray(values, dtype=object)[missing]} if missing.any() else set()
    nulls.discard(None)
    spec: dict[str, Any] = {"k": "object"}
    if len(nulls) > 1 or (nulls and inferred not in _TYPED and inferred != "decimal"):
        return _json_cells(name, values.tolist()), {"k": "pyjson"}
    if nulls and next(iter(nulls)) != "None":
        spec["na"] = next(iter(nulls))
    if inferred == "decimal":
        objs = values.tolist()
        present = [v for v in objs if _null_kind(v) is None]
        typ = _uniform_decimal(present)
        if typ is None:
            return _json_cells(name, objs), {"k": "pyjson"}
        return pa.array([None if _null_kind(v) else v for v in objs], type=typ), spec
    if inferred in _TYPED:
        return None, spec
    return _json_cells(name, values.tolist()), {"k": "pyjson"}


def bad_string_row(values: Any) -> tuple[int, str] | None:
    """(row, message) of the first str in ``values`` that cannot be UTF-8 (a lone surrogate), or None."""
    for i, v in enumerate(values):
        if isinstance(v, str):
            try:
                v.encode("utf-8")
            except UnicodeEncodeError as exc:
                return i, (f"row {i} holds a string that is not valid Unicode ({exc.reason} at character "
                           f"{exc.start}: {v[max(0, exc.start - 8):exc.start + 8]!r}); qdf strings are UTF-8")
    return None


def _json_cells(name: str, objs: list[Any]) -> pa.Array:
    out: list[str | None] = []
    for i, v in enumerate(objs):
        if v is None:
            out.append(None)
            continue
        try:
            j = to_json_deep(v)
        except UnsupportedTypeError as exc:
            raise UnsupportedTypeError(
                f"row {i} holds a {type(v).__name__} that an object column cannot store exactly "
                f"({exc.reason}); object columns take str, bytes, numbers, bools, dates, datetimes, Timestamps, "
                "Timedeltas, Decimals and lists / tuples / dicts / sets of those",
                column=name,
            ) from None
        try:
            out.append(json.dumps(j, separators=(",", ":"), ensure_ascii=False))
        except ValueError as exc:  # a circular reference
            raise UnsupportedTypeError(f"row {i} cannot be stored: {exc}", column=name) from None
    bad = bad_string_row(out)
    if bad is not None:
        raise UnsupportedTypeError(bad[1], column=name)
    return pa.array(out, type=pa.string())


def restore_object(col: pa.ChunkedArray | pa.Array, spec: dict[str, Any]) -> np.ndarray:
    """The object values of a column written by :func:`object_column`, as a numpy object array."""
    kind = spec.get("k")
    col = one_array(col)
    if pa.types.is_dictionary(col.type):
        col = col.dictionary_decode()
    if kind == "object" and (pa.types.is_string(col.type) or pa.types.is_large_string(col.type)
                             or pa.types.is_binary(col.type) or pa.types.is_large_binary(col.type)):
        out = col.to_numpy(zero_copy_only=False)  # str / bytes objects and None, in C
        if "na" in spec:
            out[col.is_null().to_numpy(zero_copy_only=False)] = _na_marker(spec["na"])
        return out
    vals = col.to_pylist()
    if kind == "pyjson":
        try:
            vals = [None if s is None else from_json_deep(json.loads(s)) for s in vals]
        except (TypeError, ValueError, AttributeError) as exc:
            raise CorruptDataError(f"an object column cell is not the typed JSON qdf writes: {exc}") from None
    elif "na" in spec:
        na = _na_marker(spec["na"])
        vals = [na if v is None else v for v in vals]
    out = np.empty(len(vals), dtype=object)
    for i, v in enumerate(vals):  # one by one: a slice assignment would broadcast list values
        out[i] = v
    return out
