"""A column kept as runs: one value per run and where each run ends.

The form a filter evaluates on when a column's payload is run-length coded and not yet
expanded (a sorted or low-cardinality column; its dictionary codes, for a string
column): a predicate is computed once per run, and its TRUE / FALSE masks are spread
over the rows afterwards, so the column's rows are never materialised.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from qdf_kernels import intdecode

from ..errors import CorruptDataError


def run_index(ends: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The run holding each of the ascending ``rows``, given each run's end (ascending
    int64, the row it ends before): one galloping walk over both (int64 indices)."""
    out = np.empty(len(rows), dtype=np.int64)
    if intdecode.run_index_into(np.ascontiguousarray(ends, dtype=np.int64),
                                np.ascontiguousarray(rows, dtype=np.int64), out) != len(rows):
        last = int(ends[-1]) if len(ends) else 0
        raise CorruptDataError(f"row {int(rows[-1])} lies past the last run, which ends at row {last}")
    return out


class RunColumn:
    """``values[i]`` (an Arrow array, one entry per run) holds for rows
    ``ends[i-1] <= row < ends[i]``; ``ends`` is ascending int64 and its last entry is
    the row count. Quacks like an Arrow array where a filter needs it: ``type`` and
    ``len``."""

    __slots__ = ("values", "ends")

    def __init__(self, values: pa.Array, ends: np.ndarray) -> None:
        if len(values) != len(ends):
            raise ValueError(f"{len(values)} run values for {len(ends)} run ends")
        self.values = values
        self.ends = ends

    @property
    def type(self) -> pa.DataType:
        return self.values.type

    def __len__(self) -> int:
        return int(self.ends[-1]) if len(self.ends) else 0

    def lengths(self) -> np.ndarray:
        """Rows per run."""
        return np.diff(self.ends, prepend=np.int64(0))

    def spread(self, per_run: np.ndarray) -> np.ndarray:
        """A per-run array repeated over the rows of its run."""
        return np.repeat(per_run, self.lengths())

    def take(self, rows: np.ndarray) -> pa.Array:
        """The values at ascending row numbers ``rows``."""
        return self.values.take(pa.array(run_index(self.ends, rows)))


__all__ = ["RunColumn", "run_index"]
