"""A dictionary-coded column a filter reads through its codes, never expanding them.

The form a filter evaluates on when a column's rows are codes into a small dictionary
and the codes are still bit-packed (a PackFor payload, or the packed index of an F5
string block): the predicate is computed once per dictionary entry, and one kernel
pass maps every row's packed code through that per-entry table straight to the row's
answer. No array of codes is unpacked, cast or compared on the way (on flights'
``dep_delay > 120.0``, 336k nullable codes over 527 floats, that chain of steps cost
several times the one pass).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyarrow as pa


class CodedColumn:
    """``values`` (an Arrow array without nulls: the dictionary) and the rows' codes
    behind ``lookup``: ``lookup(per_entry)`` maps a boolean array of one answer per
    entry to one answer per row (False at null rows), raising CorruptDataError for a
    code outside the dictionary. ``valid`` is the rows' presence (None: no nulls).
    Quacks like an Arrow array where a filter needs it: ``type`` and ``len``."""

    __slots__ = ("values", "valid", "_n", "_lookup")

    def __init__(self, values: pa.Array, n: int, lookup: Callable[[np.ndarray], np.ndarray],
                 valid: np.ndarray | None = None) -> None:
        if values.null_count:
            raise ValueError("a coded column's dictionary holds no nulls")
        self.values = values
        self.valid = valid
        self._n = n
        self._lookup = lookup

    @property
    def type(self) -> pa.DataType:
        return self.values.type

    def __len__(self) -> int:
        return self._n

    def lookup(self, per_entry: np.ndarray) -> np.ndarray:
        """``per_entry[code of row i]`` for every row (False where the row is null)."""
        if len(per_entry) != len(self.values):
            raise ValueError(f"{len(per_entry)} answers for a dictionary of {len(self.values)} entries")
        table = np.ascontiguousarray(per_entry, dtype=np.bool_).view(np.uint8)
        table.flags.writeable = False  # the kernels see read-only tables: one compiled form
        return self._lookup(table).view(np.bool_)


__all__ = ["CodedColumn"]
