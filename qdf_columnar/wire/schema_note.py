"""The schema note: a hidden trailing column that carries what v1 column kinds cannot.

v1 kinds lose details Python users care about (int32 vs int64, bytes vs str, a
timestamp's unit and zone, categoricals, pandas index metadata). When any such detail
exists, the encoder appends one extra **int** column named ``__qdf_schema__`` + JSON,
whose body is all zeros (a 0-bit FOR payload, a handful of bytes). The buffer stays
plain qdf v1: any v1 reader sees an ordinary int column, and this decoder hides it.
JSON layout: ``{"v": 1, "types": {column: arrow-type-spelling}, "pandas": <pandas metadata>,
"arrow_dtype": [columns that were pd.ArrowDtype], "qdf_pandas": <the qdf.pandas document>,
"logical": {column: type spelling}, "dict": [dictionary columns]}`` (the last five only when present; ``qdf_pandas`` is
described in :mod:`qdf_columnar.columns.frames`, ``logical`` in :mod:`qdf_columnar.columns.logical`).
"""

from __future__ import annotations

import functools
import json
from typing import Any, NamedTuple

import pyarrow as pa

from ..codecs.nested.split_map import MAX_SPLIT_KEYS
from ..columns.frames import PANDAS_NOTE_KEY
from ..columns.inputs import ARROW_DTYPE_KEY
from ..columns.kinds import DEFAULT_TYPES, type_from_str, type_to_str
from ..columns.logical import LOGICAL_KEY
from ..errors import CorruptDataError
from ..format.tags import ColKind

PREFIX = "__qdf_schema__"


def build_note(table: pa.Table, kinds: list[int], extra: dict[str, Any] | None = None) -> str | None:
    """Return the note column's name, or None when every column decodes exactly by default.

    ``extra`` entries (the shredded layout's ``"shred"``) are added and force a note.
    """
    types = {field.name: field.type for field, kind in zip(table.schema, kinds)
             if kind == ColKind.RESIDUAL or field.type != DEFAULT_TYPES[kind]}
    doc = note_document(types, table.schema.metadata or {})
    if doc is None and not extra:
        return None
    doc = doc or {"v": 1, "types": {}}
    # Key order v, types, extra, metadata: the bytes of earlier releases' notes stay the same.
    note = {"v": 1, "types": doc["types"], **(extra or {})}
    note.update((k, v) for k, v in doc.items() if k not in note)
    return PREFIX + json.dumps(note, separators=(",", ":"), ensure_ascii=False)


def note_document(types: dict[str, pa.DataType], meta: dict[bytes, bytes]) -> dict[str, Any] | None:
    """The note's JSON document for these column types and schema metadata (None when empty)."""
    pandas_meta = meta.get(b"pandas")
    arrow_dtype = meta.get(ARROW_DTYPE_KEY)
    qdf_pandas = meta.get(PANDAS_NOTE_KEY)
    logical = meta.get(LOGICAL_KEY)
    if not types and pandas_meta is None and qdf_pandas is None and logical is None:
        return None
    note: dict[str, Any] = {"v": 1, "types": {name: type_to_str(t) for name, t in types.items()}}
    if pandas_meta is not None:
        note["pandas"] = json.loads(pandas_meta)
    if arrow_dtype is not None:
        note["arrow_dtype"] = json.loads(arrow_dtype)
    if qdf_pandas is not None:
        note["qdf_pandas"] = json.loads(qdf_pandas)
    if logical is not None:
        note["logical"] = json.loads(logical)
    return note


def is_note(name: str, kind: int) -> bool:
    return kind == ColKind.INT and name.startswith(PREFIX)


#: The shredded layout: every top-level column with its nested Arrow type (None for a
#: flat one) and, for a map whose values are split by key, the keys in level order.
Layout = list[tuple[str, pa.DataType | None, list[str] | None]]



class ParsedNote(NamedTuple):
    """A schema note's content: column types, schema metadata to restore, the shredded
    layout (top-level columns in order with the Arrow type of each nested one, None for
    a flat one), the dictionary columns in dictionary-level order, and whether the
    batch's levels are independent (``"indep": true``: every string body is a block)."""

    types: dict[str, pa.DataType]
    metadata: dict[bytes, bytes]
    shred: Layout | None
    dicts: list[str] | None
    independent: bool = False


def parse_note(name: str) -> ParsedNote:
    """The :class:`ParsedNote` of a note column's name (raises CorruptDataError)."""
    types, meta, shred, dicts, indep = _parsed_note(name)
    # the parse is shared: the caller gets containers of its own
    return ParsedNote(dict(types), dict(meta), None if shred is None else list(shred),
                      None if dicts is None else list(dicts), indep)


@functools.lru_cache(maxsize=512)
def _parsed_note(name: str) -> ParsedNote:
    """:func:`parse_note`, kept per note: the column chunks of a file, and the batches of
    a stream, repeat the same few notes (parsing one costs ~10 us, most of a small
    string chunk's header)."""
    try:
        note = json.loads(name[len(PREFIX) :])
    except ValueError as exc:
        raise CorruptDataError(f"unreadable schema note column: {exc}") from None
    return parse_note_document(note)


def parse_note_document(note: Any) -> ParsedNote:
    """:func:`parse_note` of an already parsed JSON document (raises CorruptDataError)."""
    try:
        if not isinstance(note, dict) or note.get("v") != 1:
            raise ValueError("unknown schema note version")
        types = {str(k): type_from_str(v) for k, v in note.get("types", {}).items()}
        meta: dict[bytes, bytes] = {}
        if note.get("pandas") is not None:
            meta[b"pandas"] = json.dumps(note["pandas"]).encode()
        if note.get("arrow_dtype"):
            if not all(isinstance(c, str) for c in note["arrow_dtype"]):
                raise ValueError("arrow_dtype must list column names")
            meta[ARROW_DTYPE_KEY] = json.dumps(note["arrow_dtype"]).encode()
        if note.get("qdf_pandas") is not None:
            if not isinstance(note["qdf_pandas"], dict):
                raise ValueError("qdf_pandas must be an object")
            meta[PANDAS_NOTE_KEY] = json.dumps(note["qdf_pandas"], separators=(",", ":")).encode()
        if note.get("logical") is not None:
            if not isinstance(note["logical"], dict):
                raise ValueError("logical must be an object")
            meta[LOGICAL_KEY] = json.dumps(note["logical"], separators=(",", ":")).encode()
        indep = note.get("indep", False)
        if not isinstance(indep, bool):
            raise ValueError("indep must be true or false")
        return ParsedNote(types, meta, _shred_layout(note.get("shred")), _dict_names(note.get("dict")), indep)
    except (ValueError, TypeError, AttributeError, KeyError) as exc:
        raise CorruptDataError(f"unreadable schema note column: {exc}") from None


def _dict_names(desc: Any) -> list[str] | None:
    if desc is None:
        return None
    if not isinstance(desc, list) or not desc or not all(isinstance(n, str) for n in desc) \
            or len(set(desc)) != len(desc):
        raise ValueError("malformed dictionary column list")
    return desc


def _shred_layout(desc: Any) -> Layout | None:
    if desc is None:
        return None
    cols = desc["columns"]
    if not isinstance(desc.get("levels"), int) or not isinstance(cols, list):
        raise ValueError("malformed shred layout")
    splits = desc.get("split", {})
    if not isinstance(splits, dict):
        raise ValueError("malformed shred split")
    out: Layout = []
    for item in cols:
        name, spelling = item
        if not isinstance(name, str) or not (spelling is None or isinstance(spelling, str)):
            raise ValueError("malformed shred layout entry")
        typ = None if spelling is None else type_from_str(spelling)
        keys = splits.get(name)
        if keys is not None and not (
            typ is not None and pa.types.is_map(typ) and isinstance(keys, list) and 2 <= len(keys) <= MAX_SPLIT_KEYS
            and all(isinstance(k, str) for k in keys) and len(set(keys)) == len(keys)
        ):
            raise ValueError(f"malformed split keys for {name!r}")
        out.append((name, typ, keys))
    if len({n for n, _, _ in out}) != len(out) or not set(splits) <= {n for n, _, _ in out}:
        raise ValueError("shred layout names a column twice, or splits an unknown one")
    return out
