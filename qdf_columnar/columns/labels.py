"""Column labels and small scalars as typed JSON, so a DataFrame's column Index comes back exactly.

v1 column names are strings. A DataFrame's labels may be ints (after a pivot or
``read_csv(header=None)``), floats, bools, bytes, Timestamps, Timedeltas, tuples (a
column MultiIndex) or ``None``, and even all-string labels may sit in an ``object``
Index rather than pandas' ``str`` one. The encoder names each column by
``str(label)`` and records the labels here, each as JSON that keeps its Python type
(``1`` and ``"1"`` and ``1.0`` stay apart); the decoder rebuilds the Index, with its
dtype and names, for the columns it actually returns.

Scalar spelling (:func:`to_json` / :func:`from_json`): ``str``, ``int`` and ``None``
are plain JSON; every other type is a one-key object: ``{"b": true}`` bool,
``{"f": "0x1.8p+0"}`` float (``float.hex``: exact, NaN and infinities included),
``{"y": "<base64>"}`` bytes, ``{"ts": [ns, unit, tz]}`` Timestamp, ``{"td": [ns, unit]}``
Timedelta, ``{"dt": iso}`` datetime, ``{"d": iso}`` date, ``{"dec": text}`` Decimal,
``{"t": [...]}`` tuple.
"""

from __future__ import annotations

import base64
import datetime
import decimal
import math
from typing import Any

import numpy as np

from ..errors import CorruptDataError, UnsupportedTypeError

__all__ = ["to_json", "from_json", "describe_columns", "rebuild_columns", "field_names"]


def to_json(v: Any) -> Any:
    """A JSON value that :func:`from_json` turns back into ``v`` with its exact type."""
    if v is None or type(v) is str:
        return v
    if isinstance(v, (bool, np.bool_)):
        return {"b": bool(v)}
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        return {"f": float(v).hex()}
    if isinstance(v, bytes):
        return {"y": base64.b64encode(v).decode("ascii")}
    if isinstance(v, tuple):
        return {"t": [to_json(x) for x in v]}
    if isinstance(v, decimal.Decimal):
        return {"dec": str(v)}
    import pandas as pd

    if v is pd.NaT:
        return {"nat": True}
    if isinstance(v, pd.Timestamp):
        return {"ts": [int(v.value), v.unit, None if v.tz is None else str(v.tz)]}
    if isinstance(v, pd.Timedelta):
        return {"td": [int(v.value), v.unit]}
    if isinstance(v, datetime.datetime):
        if v.tzinfo is not None:
            raise UnsupportedTypeError(f"a column label that is a zoned datetime.datetime ({v!r}); use pd.Timestamp")
        return {"dt": v.isoformat()}
    if isinstance(v, datetime.date):
        return {"d": v.isoformat()}
    if isinstance(v, str):  # a str subclass (e.g. an Enum mixin): its text
        return str(v)
    raise UnsupportedTypeError(f"a column label of type {type(v).__name__} ({v!r}) cannot be stored")


def from_json(j: Any) -> Any:
    """Inverse of :func:`to_json`; raises CorruptDataError on anything it did not write."""
    if j is None or isinstance(j, str) or (isinstance(j, int) and not isinstance(j, bool)):
        return j
    try:
        if isinstance(j, dict) and len(j) == 1:
            (tag, x), = j.items()
            if tag == "b" and isinstance(x, bool):
                return x
            if tag == "f":
                return float.fromhex(x)
            if tag == "y":
                return base64.b64decode(x, validate=True)
            if tag == "t" and isinstance(x, list):
                return tuple(from_json(e) for e in x)
            if tag == "dec":
                return decimal.Decimal(x)
            if tag == "dt":
                return datetime.datetime.fromisoformat(x)
            if tag == "d":
                return datetime.date.fromisoformat(x)
            import pandas as pd

            if tag == "nat":
                return pd.NaT
            if tag == "ts":
                ns, unit, tz = x
                return pd.Timestamp(int(ns), unit="ns", tz="UTC" if tz else None).tz_convert(tz).as_unit(unit) \
                    if tz else pd.Timestamp(int(ns), unit="ns").as_unit(unit)
            if tag == "td":
                ns, unit = x
                return pd.Timedelta(int(ns), unit="ns").as_unit(unit)
    except (ValueError, TypeError, OverflowError, decimal.InvalidOperation) as exc:
        raise CorruptDataError(f"unreadable typed value {j!r} in the pandas note: {exc}") from None
    raise CorruptDataError(f"unreadable typed value {j!r} in the pandas note")


def _same_label(a: Any, b: Any) -> bool:
    """Labels equal with the same type (so 1, 1.0, True and '1' are four different labels)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    if isinstance(a, tuple):
        return len(a) == len(b) and all(_same_label(x, y) for x, y in zip(a, b))
    return bool(a == b)


def field_names(columns: Any) -> list[str]:
    """The v1 column names for a DataFrame's column Index: the labels' string forms.

    Raises UnsupportedTypeError for duplicate labels and for labels whose string forms
    collide (``1`` and ``"1"``): a v1 batch names each column once.
    """
    if not columns.is_unique:
        dup = list(dict.fromkeys(columns[columns.duplicated()].tolist()))
        raise UnsupportedTypeError(f"duplicate column labels {dup}: a qdf batch names each column once")
    names = [c if type(c) is str else str(c) for c in columns]
    for name in names:
        try:
            name.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise UnsupportedTypeError(f"column label {name!r} is not valid Unicode ({exc.reason}); qdf names are "
                                       "UTF-8") from None
    if len(set(names)) != len(names):
        seen: dict[str, Any] = {}
        for label, name in zip(columns, names):
            if name in seen:
                raise UnsupportedTypeError(
                    f"column labels {seen[name]!r} and {label!r} have the same string form {name!r}; "
                    "rename one of them"
                )
            seen[name] = label
    return names


def _default_columns(columns: Any) -> bool:
    """Labels the decoder rebuilds by itself: string labels in pandas' default str Index, no name."""
    import pandas as pd

    if isinstance(columns, pd.MultiIndex) or columns.name is not None:
        return False
    default = pd.Index(["a"]).dtype  # pandas 3: the str dtype; pandas 2: object
    return columns.dtype == default and all(type(c) is str for c in columns)


def describe_columns(columns: Any) -> dict[str, Any] | None:
    """The column Index as JSON (None when the decoder's default gives it back exactly)."""
    import pandas as pd

    if _default_columns(columns):
        return None
    if isinstance(columns, pd.MultiIndex):
        return {
            "multi": True,
            "names": [to_json(n) for n in columns.names],
            "dtypes": [str(lv.dtype) for lv in columns.levels],
            "labels": [to_json(tuple(c)) for c in columns],
        }
    desc: dict[str, Any] = {"name": to_json(columns.name), "dtype": str(columns.dtype),
                            "labels": [to_json(c) for c in columns]}
    if isinstance(columns.dtype, pd.CategoricalDtype):
        desc["categories"] = [to_json(c) for c in columns.dtype.categories]
        desc["ordered"] = bool(columns.dtype.ordered)
    return desc


def rebuild_columns(desc: dict[str, Any], names: list[str]) -> Any:
    """The column Index of the returned columns (``names``, their v1 names), as it was written."""
    import pandas as pd

    try:
        by_name: dict[str, Any] = {}
        for j in desc["labels"]:
            label = from_json(j)
            by_name[label if type(label) is str else str(label)] = label
        labels = [by_name[n] for n in names]
        if desc.get("multi"):
            names_ = [from_json(n) for n in desc["names"]]
            if not labels:
                return pd.MultiIndex.from_arrays([[] for _ in names_], names=names_)
            mi = pd.MultiIndex.from_tuples(labels, names=names_)
            levels = [lv.astype(dt) if str(lv.dtype) != dt else lv for lv, dt in zip(mi.levels, desc["dtypes"])]
            return mi.set_levels(levels)
        dtype = desc["dtype"]
        if "categories" in desc:
            dtype = pd.CategoricalDtype([from_json(c) for c in desc["categories"]], ordered=desc["ordered"])
        return pd.Index(labels, dtype=dtype, name=from_json(desc["name"]), tupleize_cols=False)
    except CorruptDataError:
        raise
    except (KeyError, TypeError, ValueError) as exc:
        raise CorruptDataError(f"the column labels in the pandas note do not fit the data: {exc}") from None
