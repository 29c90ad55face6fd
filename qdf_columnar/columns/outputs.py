"""Turn a decoded Arrow table into what ``output=`` asks for (Arrow is the hub)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import pyarrow as pa
from qdf_kernels import columns as ck

from ..errors import CorruptDataError
from . import alloc
from .chunked import one_array
from .frames import empty_table as empty_table  # re-exported: the output side's column-less table
from .frames import python_object_columns, restore_frame, with_metadata
from .inputs import ARROW_DTYPE_KEY

OutputKind = Literal["pandas", "arrow", "numpy", "records"]


def convert_output(table: pa.Table, output: OutputKind, *, owned: bool = False) -> Any:
    """``table`` as ``output``. ``owned``: nothing but this call holds ``table``'s buffers
    (a decode that copied what it read), so a DataFrame may use them as they are."""
    if output == "arrow":
        return table
    if output == "pandas":
        if b"pandas" not in (table.schema.metadata or {}):
            return to_pandas(table, owned=owned)
        try:
            return to_pandas(table, owned=owned)
        except (ValueError, TypeError, KeyError, IndexError, pa.ArrowException) as exc:
            # The metadata came from the buffer's schema note: a damaged note is corrupt input.
            raise CorruptDataError(f"the pandas metadata in the schema note does not fit the data: {exc}") from None
    python = python_object_columns(table)  # object columns of a DataFrame: their Python values
    if output == "records":
        meta = (table.schema.metadata or {}).get(b"pandas")
        rows = table.drop_columns(pandas_index_columns(meta, table.column_names)).to_pylist()
        for name, values in python.items():
            if rows and name in rows[0]:
                for row, v in zip(rows, values):
                    row[name] = v
        return rows
    return {name: python[name] if name in python else _to_numpy(table.column(name)) for name in table.column_names}


def to_pandas(table: pa.Table, *, owned: bool = False) -> Any:
    """``table.to_pandas()`` that also restores ``pd.ArrowDtype`` columns exactly.

    With ``owned`` (see :func:`convert_output`), a batch that did not come from a
    DataFrame hands its non-null integer and its float columns to pandas without a
    copy (:func:`_owned_frame`).

    A batch that did not come from a DataFrame (no pandas metadata) gets the columns
    pandas has no native dtype for (list / struct / map, binary) as ``pd.ArrowDtype``:
    the data stays in its Arrow buffers instead of becoming millions of Python lists,
    dicts and bytes objects (which costs far more than the decode itself).
    ``.astype(object)`` or ``Series.tolist()`` give Python objects when they are
    wanted. A DataFrame's own dtypes always come back as they were (its pandas
    metadata says which).

    The encoder records which DataFrame columns were ``pd.ArrowDtype``: pandas metadata
    alone cannot tell ``pd.ArrowDtype(pa.string())`` from the pyarrow-backed
    ``StringDtype`` (both "string[pyarrow]"), and pandas cannot even parse nested ones
    such as ``list<item: string>[pyarrow]`` (it raises; the same bug breaks
    ``pd.read_parquet`` on such frames). Those columns are converted with their dtype
    string neutralised, then replaced by the Arrow data itself.
    """
    meta = table.schema.metadata or {}
    projected = project_pandas_metadata(meta, table.column_names) if b"pandas" in meta else meta
    if projected is not meta:
        table = with_metadata(table, projected)
    return restore_frame(_base_to_pandas(table, owned), table)


def _base_to_pandas(table: pa.Table, owned: bool = False) -> Any:
    meta_all = table.schema.metadata or {}
    if b"pandas" not in meta_all:
        return _owned_frame(table, _plain_to_pandas) if owned else _plain_to_pandas(table)
    if owned:
        index = pandas_index_columns(meta_all[b"pandas"], table.column_names)
        return _owned_frame(table, _pandas_meta_to_pandas, index=index, keep=_arrow_dtype_columns(table)[1])
    return _pandas_meta_to_pandas(table)


def _arrow_dtype_columns(table: pa.Table) -> tuple[list[str], list[str]]:
    """(the columns the encoder recorded as ``pd.ArrowDtype``, those of them ``table`` has)."""
    meta_all = table.schema.metadata or {}
    listed = json.loads(meta_all[ARROW_DTYPE_KEY]) if ARROW_DTYPE_KEY in meta_all else []
    return listed, [c for c in listed if c in table.column_names]


def _pandas_meta_to_pandas(table: pa.Table) -> Any:
    """pyarrow's conversion of a batch with pandas metadata, ``pd.ArrowDtype`` columns restored."""
    meta_all = table.schema.metadata or {}
    listed, arrow_cols = _arrow_dtype_columns(table)
    if not arrow_cols:
        return table.to_pandas(use_threads=_threads(table))
    import pandas as pd

    meta = json.loads(meta_all[b"pandas"])
    for col in meta.get("columns", []):
        if col.get("field_name") in listed:
            col["numpy_type"] = "object"
            col["pandas_type"] = "object"
    fixed = table.replace_schema_metadata({**meta_all, b"pandas": json.dumps(meta).encode()})
    df = fixed.to_pandas(types_mapper=lambda t: pd.ArrowDtype(t) if pa.types.is_nested(t) else None,
                         use_threads=_threads(table))
    for name in arrow_cols:
        df[name] = pd.Series(pd.arrays.ArrowExtensionArray(table.column(name)), index=df.index, name=name)
    return df


def _plain_to_pandas(table: pa.Table) -> Any:
    """pyarrow's conversion of a batch without pandas metadata (Arrow-only types as ``pd.ArrowDtype``)."""
    if not any(_arrow_only(t) for t in table.schema.types):
        return table.to_pandas(use_threads=_threads(table))
    import pandas as pd

    return table.to_pandas(types_mapper=lambda t: pd.ArrowDtype(t) if _arrow_only(t) else None,
                           use_threads=_threads(table))


#: Below this many bytes of buffers, pyarrow converts a batch faster on the calling
#: thread than on its pool (the hand-off costs ~0.1 ms; the conversion's columns are
#: too small to share out). Measured on bench-real's tables (interleaved medians, one
#: thread against the pool): penguins 0.78x, airports 0.73x, planes 0.76x, weather
#: (3.7 MB) 0.90x, trump_tweets (4.2 MB) 0.83x; diamonds (5 MB) 1.08x and the 12 MB
#: tables 1.3x are faster on the pool.
PANDAS_THREADS_MIN_BYTES = 9 << 19


def _threads(table: pa.Table) -> bool:
    """Whether pyarrow's conversion of ``table`` to pandas should use its thread pool."""
    return table.get_total_buffer_size() >= PANDAS_THREADS_MIN_BYTES


#: Below this many bytes of columns to hand over, pyarrow's copy costs less than
#: assembling a frame from separate columns (a zero-row conversion for the labels and
#: dtypes, then the frame: 1.5-3 ms). Measured on real tables: 3 ms saved on 13 MB
#: (nafld2), 2.6 ms on 24 MB (flights), a loss on 8 MB with string columns (military).
OWNED_MIN_BYTES = 8 << 20
#: When every column is handed over there is no second conversion of the others, and
#: the frame costs ~0.2 ms plus ~0.02 ms a column against pyarrow's copy of ~0.2-0.3 ms
#: a MB: handing over pays from OWNED_ALL_BASE + OWNED_ALL_PER_COLUMN bytes a column.
#: Measured (1, 2, 5 and 20 numeric columns of 0.5-7 MB in all, interleaved medians):
#: break-even at ~1, ~2, ~3 and ~7 MB; nafld2's two numeric columns (6.4 MB) 3.9 -> 3.1 ms.
OWNED_ALL_BASE = 1 << 20
OWNED_ALL_PER_COLUMN = 350 << 10
#: A batch without pandas metadata needs no zero-row conversion: its labels are its
#: field names and each handed-over column keeps the dtype pyarrow would give it, so
#: the frame costs one conversion of the other columns plus the assembly (~0.6 ms).
#: Measured on bench-real's tables (interleaved medians, pyarrow's copy against this):
#: diamonds 0.95x and Fertility 0.90x at ~3-4 MB of numeric columns, movies 0.59x, TV16
#: 0.60x, flights 0.63x; weather (2.8 MB) 1.27x and MplsStops 1.21x still lose.
OWNED_PLAIN_MIN_BYTES = 3 << 20


def _owned_threshold(n_columns: int, every_column: bool, plain: bool = False) -> int:
    """Bytes of handed-over columns from which :func:`_owned_frame` pays (``plain``: a
    batch without pandas metadata, see :data:`OWNED_PLAIN_MIN_BYTES`)."""
    least = min(OWNED_MIN_BYTES, OWNED_PLAIN_MIN_BYTES) if plain else OWNED_MIN_BYTES
    if not every_column:
        return least
    return min(least, OWNED_ALL_BASE + OWNED_ALL_PER_COLUMN * n_columns)


def _owned_frame(table: pa.Table, convert: Any, index: Sequence[str] = (), keep: Sequence[str] = ()) -> Any:
    """``convert(table)`` without copying the non-null integer columns and the float ones.

    pyarrow copies every numeric column into one 2-D block per dtype (8.6 ms for seven
    400k-row columns, against 0.4 ms with ``split_blocks``), and its zero-copy arrays
    are read-only, so a frame built from them would refuse ``df.iloc[0, 0] = 1``.
    These buffers were allocated by the decoder and nothing else holds them (the
    caller says so with ``owned``): each becomes a writable numpy view of its own, the
    other columns (always the ``index`` fields and the ``keep`` ones) go through
    ``convert``, which builds the index, and the frame takes the column labels, order
    and dtypes ``convert`` gives a zero-row slice of the batch; a view whose dtype is
    not the one pandas metadata asks for (``Int64``, say) is not used. A batch without
    pandas metadata needs no such slice: pyarrow labels its columns with the field names
    and gives each handed-over column its view's dtype (a nullable float holds NaN under
    its nulls). Values, labels and dtypes are those of ``convert(table)``; only pandas'
    internal block layout differs (one block per handed-over column, as with
    ``split_blocks=True``).
    """
    import pandas as pd

    names = table.column_names
    plain = convert is _plain_to_pandas and not index and not keep
    # All the buffers in one C call, no per-column look (``nbytes``, which sizes what
    # string offsets reference, costs ~4 us a column; the buffers' size bounds it).
    if table.get_total_buffer_size() < _owned_threshold(len(names), True, plain):
        return convert(table)
    if len(set(names)) != len(names):  # columns are found by name below
        return convert(table)
    movable = [c for c in table.columns if _can_hand_over(c)]
    every = len(movable) == len(names) and not index and not keep
    if sum(len(c) * (c.type.bit_width // 8) for c in movable) < _owned_threshold(len(names), every, plain):
        return convert(table)  # decided before any view is made: small frames pay nothing
    template = None if plain else convert(table.slice(0, 0))
    data = [n for n in names if n not in index]  # the fields that become columns, in order
    if template is not None and len(data) != template.shape[1]:
        return convert(table)
    views: dict[str, np.ndarray] = {}
    seen: set[int] = set()
    dtypes = None if template is None else list(template.dtypes)  # one Series, not one per column
    for j, name in enumerate(data):
        view = _writable_view(table.column(name)) if name not in keep else None
        if view is not None and view.ctypes.data not in seen and (dtypes is None or dtypes[j] == view.dtype):
            seen.add(view.ctypes.data)  # never one buffer under two columns
            views[name] = view
    if sum(v.nbytes for v in views.values()) < _owned_threshold(len(names), len(views) == len(names), plain):
        return convert(table)
    rest = [n for n in names if n not in views]
    if template is None and not rest:  # nothing to convert: pyarrow's index of such a batch
        return pd.DataFrame(dict(zip(data, (views[n] for n in data))), index=pd.RangeIndex(table.num_rows),
                            copy=False)
    others = convert(with_metadata(table.select(rest), project_pandas_metadata(table.schema.metadata, rest) or None))
    expected = rest if template is None else [template.columns[j] for j, n in enumerate(data) if n not in views]
    if list(others.columns) != expected:
        return convert(table)  # not the columns expected: never guess
    at = iter(range(others.shape[1]))
    arrays = [views[n] if n in views else others._ixs(next(at), axis=1).array for n in data]
    if template is None:
        return pd.DataFrame(dict(zip(data, arrays)), index=others.index, copy=False)
    df = pd.DataFrame(dict(enumerate(arrays)), index=others.index, copy=False)
    df.columns = template.columns
    return df


def _can_hand_over(col: pa.ChunkedArray) -> bool:
    """One chunk of non-null integers or floats (not float16: pandas has no such column),
    or of nullable float32 / float64 (pandas holds their nulls as NaN)."""
    t = col.type
    if col.num_chunks != 1 or pa.types.is_float16(t):
        return False
    if pa.types.is_floating(t):
        return True
    return pa.types.is_integer(t) and not col.null_count


def _writable_view(col: pa.ChunkedArray) -> np.ndarray | None:
    """A writable numpy view of a :func:`_can_hand_over` column whose values sit in a mutable
    buffer, or None. A nullable float column gets NaN written into its null rows'
    slots first, unless the decoder wrote them as it spread the values (the buffer is
    marked in :mod:`.alloc`): Arrow leaves those slots undefined, so its values do not
    change, and the view is then exactly what pyarrow's conversion would have built."""
    if not _can_hand_over(col):
        return None
    t = col.type
    arr = col.chunk(0)
    buf = arr.buffers()[1]
    if buf is None or not buf.is_mutable:
        return None
    dtype = np.dtype(t.to_pandas_dtype())
    if (arr.offset + len(arr)) * dtype.itemsize > buf.size:
        return None
    view = np.frombuffer(buf, dtype=dtype, count=len(arr), offset=arr.offset * dtype.itemsize)
    if arr.null_count and not alloc.holds_nan_under_nulls(buf.address, buf.size):
        validity = np.frombuffer(arr.buffers()[0], dtype=np.uint8)
        bits = np.dtype(f"u{dtype.itemsize}")
        ck.fill_null_slots(validity, np.int64(arr.offset), view.view(bits), dtype.type(np.nan).view(bits),
                           ck.NULL_LANES[dtype.itemsize])
    return view


def project_pandas_metadata(meta: dict[bytes, bytes] | None, names: list[str]) -> dict[bytes, bytes]:
    """Schema metadata whose pandas part describes only the columns ``names``.

    pandas parses the dtype of every column its metadata lists, present or not, and
    cannot parse some (``list<item: int64>[pyarrow]``), so a projection (``columns=``)
    must drop the absent ones. Returns ``meta`` itself when nothing is dropped, or when
    the pandas part is unreadable (``to_pandas`` then reports it as corrupt).
    """
    meta = meta if meta is not None else {}
    raw = meta.get(b"pandas")
    if raw is None:
        return meta
    try:
        pd_meta = json.loads(raw)
        present = set(names)
        cols = pd_meta.get("columns", [])
        keep = [c for c in cols if c.get("field_name") in present]
    except (ValueError, TypeError, AttributeError):
        return meta
    if len(keep) == len(cols):
        return meta
    pd_meta["columns"] = keep
    return {**meta, b"pandas": json.dumps(pd_meta).encode()}


def _arrow_only(t: pa.DataType) -> bool:
    """Types pandas can only hold as Python objects (or as pd.ArrowDtype)."""
    known = _ARROW_ONLY.get(t.id)
    if known is None:
        known = _ARROW_ONLY[t.id] = pa.types.is_nested(t) or pa.types.is_binary(t) or pa.types.is_large_binary(t) \
            or pa.types.is_binary_view(t) or pa.types.is_fixed_size_binary(t)
    return known


#: :func:`_arrow_only` by type id, the only thing its tests look at (each pa.types test
#: costs ~1 us, and every conversion asks once a column).
_ARROW_ONLY: dict[int, bool] = {}


def pandas_index_columns(meta: bytes | None, names: list[str]) -> list[str]:
    """The stored (not RangeIndex) index columns named by pandas metadata, among ``names``."""
    if not meta:
        return []
    try:
        idx = json.loads(meta).get("index_columns", [])
    except (ValueError, AttributeError):
        return []
    return [c for c in idx if isinstance(c, str) and c in names]


def _to_numpy(col: pa.ChunkedArray) -> np.ndarray:
    """numpy array of a column; columns with nulls become masked arrays (no sentinel values)."""
    arr = one_array(col)
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    if arr.null_count == 0:
        return arr.to_numpy(zero_copy_only=False)
    mask = np.asarray(arr.is_null())
    t = arr.type
    if not (pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_boolean(t)
            or pa.types.is_temporal(t) or pa.types.is_decimal(t)):
        # Strings, binaries and nested values become objects; there is no fill value to
        # put under the mask (0 is not a list or a struct), and None already marks it.
        return np.ma.MaskedArray(arr.to_numpy(zero_copy_only=False), mask=mask)
    filled = arr.fill_null(pa.scalar(False) if pa.types.is_boolean(arr.type) else 0)
    return np.ma.MaskedArray(filled.to_numpy(zero_copy_only=False), mask=mask)
