"""Turn a decoded Arrow table into what ``output=`` asks for (Arrow is the hub)."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import pyarrow as pa

OutputKind = Literal["pandas", "arrow", "numpy", "records"]


def convert_output(table: pa.Table, output: OutputKind) -> Any:
    if output == "arrow":
        return table
    if output == "pandas":
        return table.to_pandas()
    if output == "records":
        return table.drop_columns(_index_columns(table)).to_pylist()
    return {name: _to_numpy(table.column(name)) for name in table.column_names}


def _index_columns(table: pa.Table) -> list[str]:
    meta = (table.schema.metadata or {}).get(b"pandas")
    if not meta:
        return []
    import json

    idx = json.loads(meta).get("index_columns", [])
    return [c for c in idx if isinstance(c, str) and c in table.column_names]


def _to_numpy(col: pa.ChunkedArray) -> np.ndarray:
    """numpy array of a column; columns with nulls become masked arrays (no sentinel values)."""
    arr = col.combine_chunks()
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    if arr.null_count == 0:
        return arr.to_numpy(zero_copy_only=False)
    mask = np.asarray(arr.is_null())
    if pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type) or pa.types.is_binary(arr.type):
        return np.ma.MaskedArray(arr.to_numpy(zero_copy_only=False), mask=mask)
    filled = arr.fill_null(pa.scalar(False) if pa.types.is_boolean(arr.type) else 0)
    return np.ma.MaskedArray(filled.to_numpy(zero_copy_only=False), mask=mask)
