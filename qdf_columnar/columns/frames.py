"""DataFrame <-> Arrow table, exactly: what pyarrow's pandas metadata alone does not bring back.

``pa.Table.from_pandas`` / ``Table.to_pandas`` carry most of a DataFrame (index,
nullable dtypes, time zones). What they lose, this module records in one JSON
document under the schema-metadata key ``qdf.pandas`` (it travels in the buffer's
schema note and in a ``.qdf`` file's footer), and puts back after ``to_pandas``:

* ``"columns"``: the column Index when it is not pandas' default (non-string labels,
  a MultiIndex, an ``object`` Index of strings, a name), see :mod:`.labels`;
* ``"specs"``: per stored column (data columns and row-index levels, by v1 name), how
  to rebuild its pandas dtype: ``object`` / ``pyjson`` (:mod:`.pyobjects`),
  ``string`` (``StringDtype("python")``), ``category`` (the exact categories and
  their dtype: unused ones, order and int / float / datetime categories included),
  ``sparse`` (densified for storage; fill value and index kind restored).

Every spec depends only on the column's dtype and declared properties, never on row
positions, so any slice of the table (a row group, a filtered read) restores alike.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pyarrow as pa

from ..errors import CorruptDataError, UnsupportedTypeError
from .chunked import one_array
from .labels import describe_columns, field_names, from_json, rebuild_columns, to_json
from .pyobjects import bad_string_row, object_column, restore_object

__all__ = ["PANDAS_NOTE_KEY", "frame_to_table", "restore_frame", "strip_categories", "python_object_columns"]

#: Schema-metadata key of the JSON document described in the module docstring.
PANDAS_NOTE_KEY = b"qdf.pandas"


# ----------------------------------------------------------------------------- encode


def frame_to_table(df: Any) -> pa.Table:
    """``pa.Table.from_pandas(df)`` plus the ``qdf.pandas`` note; UnsupportedTypeError names what fails."""
    import pandas as pd

    names = field_names(df.columns)
    work = df.copy(deep=False)
    work.columns = pd.Index(names, dtype=object)
    specs: dict[str, Any] = {}
    arrays: dict[str, pa.Array] = {}
    for i, name in enumerate(names):
        spec, arr, dense = _column_spec(name, work.iloc[:, i])
        if spec is not None:
            specs[name] = spec
        if arr is not None:
            arrays[name] = arr
            work.isetitem(i, pd.Series(0, index=work.index, dtype="int8"))  # a stand-in, replaced below
        elif dense is not None:
            work.isetitem(i, dense)
    index_specs = _index_specs(df.index)
    if any(arr is not None for _, arr in index_specs.values()):
        work.index = _index_stand_in(df.index, [i for i, (_, arr) in index_specs.items() if arr is not None])
    table = _from_pandas(work)
    for name, arr in arrays.items():
        table = table.set_column(table.column_names.index(name), pa.field(name, arr.type), arr)
    pd_meta = json.loads(table.schema.metadata[b"pandas"])
    fields = [c for c in pd_meta.get("index_columns", []) if isinstance(c, str)]
    for level, (spec, arr) in index_specs.items():
        if level >= len(fields):
            continue
        field = fields[level]
        specs[field] = spec
        if arr is not None:
            table = table.set_column(table.column_names.index(field), pa.field(field, arr.type), arr)
            arrays[field] = arr
    note: dict[str, Any] = {"v": 1}
    cols = describe_columns(df.columns)
    if cols is not None:
        note["columns"] = cols
    if specs:
        note["specs"] = specs
    meta = dict(table.schema.metadata)
    if arrays:
        _describe_replaced(pd_meta, arrays)
        meta[b"pandas"] = json.dumps(pd_meta).encode()
    if len(note) > 1:
        meta[PANDAS_NOTE_KEY] = json.dumps(note, separators=(",", ":")).encode()
    return with_metadata(table, meta)


def with_metadata(table: pa.Table, metadata: dict[bytes, bytes] | None) -> pa.Table:
    """``table.replace_schema_metadata(metadata)`` that keeps the row count of a table
    without columns (pyarrow's drops it to 0: a 5-row, column-less DataFrame would come
    back empty)."""
    return table.replace_schema_metadata(metadata) if table.num_columns else empty_table(table.num_rows, metadata)


def empty_table(n: int, metadata: dict[bytes, bytes] | None) -> pa.Table:
    """A table with no columns but ``n`` rows (so pandas output keeps its length)."""
    batch = pa.RecordBatch.from_struct_array(pa.StructArray.from_buffers(pa.struct([]), n, [None]))
    # The metadata goes on the batch: Table.replace_schema_metadata would drop the row count.
    return pa.Table.from_batches([batch.replace_schema_metadata(metadata)])


def _from_pandas(work: Any) -> pa.Table:
    try:
        return pa.Table.from_pandas(work, preserve_index=None)
    except UnicodeEncodeError:
        for i, name in enumerate(work.columns):  # a lone surrogate in an object column: say where
            dt = work.dtypes.iloc[i]
            bad = bad_string_row(work.iloc[:, i]) if isinstance(dt, np.dtype) and dt.kind == "O" else None
            if bad is not None:
                raise UnsupportedTypeError(bad[1], column=str(name)) from None
        raise UnsupportedTypeError("a string is not valid Unicode (a lone surrogate): qdf strings are UTF-8",
                                   column=_failing_column(work)) from None
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, TypeError, ValueError) as exc:
        raise UnsupportedTypeError(f"cannot convert DataFrame: {exc}", column=_failing_column(work)) from None


def _failing_column(df: Any) -> str | None:
    for i, name in enumerate(df.columns):
        try:
            pa.array(df.iloc[:, i], from_pandas=True)
        except Exception:  # noqa: BLE001 - only looking for the culprit to name it
            return str(name)
    return None


def _column_spec(name: str, s: Any) -> tuple[dict[str, Any] | None, pa.Array | None, Any]:
    """(spec or None, an Arrow array replacing pyarrow's conversion or None, a dense stand-in or None)."""
    import pandas as pd

    dt = s.dtype
    if isinstance(dt, pd.SparseDtype):
        dense = s.sparse.to_dense()
        inner, arr, _ = _column_spec(name, dense)
        spec = {"k": "sparse", "subtype": str(dt.subtype), "fill": _fill_json(name, dt.fill_value),
                "kind": s.array.kind}
        if inner is not None:
            spec["inner"] = inner
        return spec, arr, dense
    if isinstance(dt, pd.CategoricalDtype):
        return _category_spec(name, dt), None, None
    if isinstance(dt, pd.StringDtype) and dt.storage == "python":
        return {"k": "string", "na": "nan" if isinstance(dt.na_value, float) and np.isnan(dt.na_value) else "NA"}, \
            None, None
    if isinstance(dt, np.dtype) and dt.kind == "O":  # (is_object_dtype raises on some ArrowDtypes)
        arr, spec = object_column(name, s)
        return spec, arr, None
    return None, None, None


def _fill_json(name: str, v: Any) -> Any:
    try:
        return to_json(v)
    except UnsupportedTypeError:
        raise UnsupportedTypeError(f"a sparse column whose fill value is a {type(v).__name__}", column=name) from None


def _category_spec(name: str, dt: Any) -> dict[str, Any]:
    cats = dt.categories
    spec: dict[str, Any] = {"k": "category", "ordered": bool(dt.ordered), "dtype": str(cats.dtype)}
    try:
        spec["categories"] = [to_json(c) for c in cats]
    except UnsupportedTypeError as exc:
        raise UnsupportedTypeError(f"a categorical whose categories cannot be stored: {exc.reason}",
                                   column=name) from None
    return spec


def _index_specs(index: Any) -> dict[int, tuple[dict[str, Any], pa.Array | None]]:
    """Specs of the row-index levels that need one (pyarrow stores the levels as columns)."""
    import pandas as pd

    if isinstance(index, pd.RangeIndex):
        return {}
    out = {}
    levels = [index.get_level_values(i) for i in range(index.nlevels)] if isinstance(index, pd.MultiIndex) \
        else [index]
    for i, level in enumerate(levels):
        name = f"index level {i}" if level.name is None else f"index level {level.name!r}"
        spec, arr, dense = _column_spec(name, level)
        if spec is not None and dense is None:
            out[i] = (spec, arr)
    return out


def _index_stand_in(index: Any, levels: list[int]) -> Any:
    """``index`` with the given levels replaced by int8 zeros (pyarrow may not convert them;
    their Arrow arrays are put in afterwards), names kept so pyarrow names the columns alike."""
    import pandas as pd

    zeros = np.zeros(len(index), dtype=np.int8)
    if not isinstance(index, pd.MultiIndex):
        return pd.Index(zeros, name=index.name)
    arrays = [zeros if i in levels else index.get_level_values(i) for i in range(index.nlevels)]
    return pd.MultiIndex.from_arrays(arrays, names=index.names)


def _describe_replaced(pd_meta: dict[str, Any], arrays: dict[str, pa.Array]) -> None:
    """The pandas metadata of columns this module converted: plain object columns for pyarrow."""
    for entry in pd_meta.get("columns", []):
        if entry.get("field_name") in arrays:
            entry["pandas_type"], entry["numpy_type"], entry["metadata"] = "object", "object", None


def strip_categories(meta: dict[bytes, bytes]) -> dict[bytes, bytes]:
    """``meta`` without the category lists (a ``.qdf`` file keeps them once, in its footer)."""
    raw = meta.get(PANDAS_NOTE_KEY)
    if raw is None:
        return meta
    note = json.loads(raw)
    for spec in note.get("specs", {}).values():
        spec.pop("categories", None)
    return {**meta, PANDAS_NOTE_KEY: json.dumps(note, separators=(",", ":")).encode()}


# ----------------------------------------------------------------------------- decode


def restore_frame(df: Any, table: pa.Table) -> Any:
    """Apply the ``qdf.pandas`` note of ``table`` to ``df = to_pandas(table)``."""
    meta = table.schema.metadata or {}
    raw = meta.get(PANDAS_NOTE_KEY)
    note: dict[str, Any] = {}
    if raw is not None:
        try:
            note = json.loads(raw)
            if not isinstance(note, dict) or note.get("v") != 1 or not isinstance(note.get("specs", {}), dict):
                raise ValueError("unknown pandas note version")
            _apply_note(df, table, note)
        except CorruptDataError:
            raise
        except (ValueError, TypeError, KeyError, AttributeError, IndexError, pa.ArrowException) as exc:
            raise CorruptDataError(f"the pandas note in the schema does not fit the data: {exc}") from None
    if df.shape[1] == 0 and "columns" not in note and b"pandas" in meta:
        import pandas as pd

        # No column left (columns=[]): pandas would give an object Index; the frame had the default one.
        df.columns = pd.Index([], dtype=pd.Index(["a"]).dtype)
    return df


def _apply_note(df: Any, table: pa.Table, note: dict[str, Any]) -> None:
    index_fields = _index_fields(table)
    for name, spec in note.get("specs", {}).items():
        if name not in table.column_names:
            continue
        if name in index_fields:
            df.index = _restore_level(df.index, index_fields.index(name), table.column(name), spec)
        elif name in df.columns:
            df.isetitem(list(df.columns).index(name), _restore(df[name], table.column(name), spec))
    if "columns" in note:
        df.columns = rebuild_columns(note["columns"], [str(c) for c in df.columns])


def python_object_columns(table: pa.Table) -> dict[str, np.ndarray]:
    """The columns of ``table`` stored as typed JSON (``pyjson``), as numpy arrays of their Python values.

    Outputs other than pandas (``records``, ``numpy``) use them instead of the JSON text.
    """
    raw = (table.schema.metadata or {}).get(PANDAS_NOTE_KEY)
    if raw is None:
        return {}
    try:
        specs = json.loads(raw).get("specs", {})
        return {name: restore_object(table.column(name), spec) for name, spec in specs.items()
                if isinstance(spec, dict) and spec.get("k") == "pyjson" and name in table.column_names}
    except (ValueError, TypeError, AttributeError) as exc:
        raise CorruptDataError(f"the pandas note in the schema does not fit the data: {exc}") from None


def _index_fields(table: pa.Table) -> list[str]:
    raw = (table.schema.metadata or {}).get(b"pandas")
    if not raw:
        return []
    return [c if isinstance(c, str) else "" for c in json.loads(raw).get("index_columns", [])]


def _restore(s: Any, col: pa.ChunkedArray, spec: dict[str, Any]) -> Any:
    import pandas as pd

    kind = spec.get("k")
    if kind in ("object", "pyjson"):
        return pd.Series(restore_object(col, spec), index=s.index, name=s.name, dtype=object)
    if kind == "string":
        na = {"nan": np.nan, "NA": pd.NA}[spec["na"]]
        return s.astype(pd.StringDtype("python", na_value=na))
    if kind == "category":
        current = _categorical(col, s)
        if "categories" not in spec:
            return pd.Series(current, index=s.index, name=s.name)  # a .qdf file's footer dictionary is exact
        cats = pd.Index([from_json(c) for c in spec["categories"]], dtype=spec["dtype"], tupleize_cols=False)
        dtype = pd.CategoricalDtype(cats, ordered=bool(spec["ordered"]))
        return pd.Series(pd.Categorical(current, dtype=dtype), index=s.index, name=s.name)
    if kind == "sparse":
        if "inner" in spec:
            s = _restore(s, col, spec["inner"])
        fill = from_json(spec["fill"])
        dtype = pd.SparseDtype(spec["subtype"], fill)
        values = s.to_numpy() if pd.api.types.is_object_dtype(dtype.subtype) else s.to_numpy(dtype=dtype.subtype)
        arr = pd.arrays.SparseArray(values, fill_value=fill, kind=spec["kind"], dtype=dtype)
        return pd.Series(arr, index=s.index, name=s.name)
    raise ValueError(f"unknown column spec {kind!r}")


def _categorical(col: pa.ChunkedArray, s: Any) -> Any:
    """The column as a pandas Categorical built from its Arrow dictionary (or its values).

    Built here rather than by ``to_pandas``, which drops the time zone of a dictionary's
    timestamp values.
    """
    import pandas as pd

    arr = one_array(col)
    if not pa.types.is_dictionary(arr.type):
        return pd.Categorical(s)
    codes = arr.indices.fill_null(-1).to_numpy(zero_copy_only=False)
    cats = pd.Index(arr.dictionary.to_pandas(), tupleize_cols=False)
    return pd.Categorical.from_codes(codes, categories=cats, ordered=arr.type.ordered)


def _restore_level(index: Any, i: int, col: pa.ChunkedArray, spec: dict[str, Any]) -> Any:
    import pandas as pd

    if isinstance(index, pd.MultiIndex):
        levels = [index.get_level_values(j) for j in range(index.nlevels)]
        lv = levels[i]
        levels[i] = pd.Index(_restore(pd.Series(lv, index=range(len(lv))), col, spec), name=lv.name,
                             tupleize_cols=False)
        return pd.MultiIndex.from_arrays(levels, names=index.names)
    return pd.Index(_restore(pd.Series(index, index=range(len(index))), col, spec), name=index.name,
                    tupleize_cols=False)
