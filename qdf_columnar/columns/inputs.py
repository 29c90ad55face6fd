"""Normalise every accepted input (DataFrame, Arrow Table/RecordBatch, dict of arrays,
list of dicts) to one ``pyarrow.Table``, Arrow being the in-memory hub.

pandas metadata (index, dtypes such as ``Int64`` or ``category``) and the ``qdf.pandas``
note of :mod:`.frames` (labels, object / categorical / sparse columns) are kept on the
Table's schema so they travel in the buffer's schema note and come back on decode.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from ..errors import UnsupportedTypeError
from .frames import frame_to_table

#: Schema-metadata key listing the DataFrame columns that were ``pd.ArrowDtype``.
ARROW_DTYPE_KEY = b"qdf.arrow_dtype"


def arrow_dtype_names(meta: Mapping[bytes, bytes] | None) -> set[str]:
    """The columns schema metadata ``meta`` lists as ``pd.ArrowDtype`` (their Arrow type is
    their pandas dtype, so a decode keeps it exactly); empty when unreadable (the
    conversion to pandas then says so)."""
    raw = (meta or {}).get(ARROW_DTYPE_KEY)
    if raw is None:
        return set()
    try:
        names = json.loads(raw)
    except ValueError:
        return set()
    return {n for n in names if isinstance(n, str)} if isinstance(names, list) else set()


def to_arrow_table(table: Any) -> pa.Table:
    """Return ``table`` as a pyarrow Table, raising UnsupportedTypeError naming what failed."""
    if isinstance(table, pa.Table):
        return table
    if isinstance(table, pa.RecordBatch):
        return pa.Table.from_batches([table])
    mod = type(table).__module__
    if mod.startswith("pandas") and type(table).__name__ == "DataFrame":
        return _from_pandas(table)
    if isinstance(table, Mapping):
        return _from_dict(table)
    if isinstance(table, Sequence) and not isinstance(table, (str, bytes)):
        return _from_records(table)
    raise UnsupportedTypeError(
        f"cannot encode a {type(table).__name__}; pass a pandas DataFrame, a pyarrow Table or "
        "RecordBatch, a dict of arrays or a list of dicts"
    )


def _from_pandas(df: Any) -> pa.Table:
    import pandas as pd

    table = frame_to_table(df)
    # pandas metadata spells pd.ArrowDtype(pa.string()) and the pyarrow-backed StringDtype
    # the same way ("string[pyarrow]"), so remember which columns were ArrowDtype (by their
    # v1 names: the table's first columns, in the frame's order).
    arrow_cols = [table.column_names[i] for i, dt in enumerate(df.dtypes) if isinstance(dt, pd.ArrowDtype)]
    if arrow_cols:
        meta = dict(table.schema.metadata or {})
        meta[ARROW_DTYPE_KEY] = json.dumps(arrow_cols).encode()
        table = table.replace_schema_metadata(meta)
    return table


def _from_dict(d: Mapping[Any, Any]) -> pa.Table:
    arrays = {}
    for name, values in d.items():
        if not isinstance(name, str):
            raise UnsupportedTypeError(f"column names must be str, got {type(name).__name__} {name!r}")
        try:
            if isinstance(values, (pa.Array, pa.ChunkedArray)):
                arrays[name] = values
            elif isinstance(values, np.ndarray):
                if values.ndim != 1:
                    raise UnsupportedTypeError(f"column arrays must be 1-D, got shape {values.shape}", column=name)
                arrays[name] = pa.array(values)
            else:
                arrays[name] = pa.array(values)
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, UnicodeEncodeError) as exc:
            raise UnsupportedTypeError(f"cannot convert column: {exc}", column=name) from None
    lengths = {len(a) for a in arrays.values()}
    if len(lengths) > 1:
        raise UnsupportedTypeError(f"columns have different lengths: {sorted(lengths)}")
    return pa.table(arrays)


def _from_records(rows: Sequence[Any]) -> pa.Table:
    for i, row in enumerate(rows):
        if not isinstance(row, Mapping):
            raise UnsupportedTypeError(f"a list input must hold dicts; item {i} is a {type(row).__name__}")
    try:
        return pa.Table.from_pylist(list(rows))
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, UnicodeEncodeError) as exc:
        raise UnsupportedTypeError(f"cannot convert records: {exc}") from None
