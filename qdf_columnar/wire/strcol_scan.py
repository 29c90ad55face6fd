"""Parse string-column bodies into :class:`StringSlices` without copying string bytes.

:func:`scan_string_column` dispatches on the body's first byte through the registry
(:data:`qdf_columnar.codecs.registry.STRING_BY_TAG`): each block form (F5, FA, FC, F6,
F8, F9, FB) is a unit of :mod:`qdf_columnar.codecs.strings` that checks each length and
count against the bytes left before anything is sized, and a body whose first byte is
no block tag is per-value Dense strings. Dictionary codes stay bit-packed and alpha
bodies stay packed until a caller materialises all rows or only the ones a filter kept
(:mod:`qdf_columnar.wire.strcol_arrow`). Per-value strings are the exception: they are
read by a Numba kernel (``qdf_kernels.dense_strings``) that replays the Dense state,
then gathered into one slab, because later values and columns depend on that state.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..codecs.qpack import INT_CODES
from ..codecs.registry import STRING_BY_TAG, STRING_UNTAGGED
from ..codecs.strings.per_value import read_str_bytes
from ..codecs.strings.slices import StringSlices
from ..format.reader import ByteReader

#: StringSlices and read_str_bytes are imported from here by the column readers.
__all__ = ["StringSlices", "read_str_bytes", "scan_string_column"]


def scan_string_column(r: ByteReader, n: int, dense: Any, *, skip: bool = False,
                       end: int | None = None) -> StringSlices | list[bytes]:
    """Parse one string column body of ``n`` values; no string bytes are copied.

    Returns :class:`StringSlices` (per-value bodies are replayed through the Dense
    state by a kernel and gathered into one slab; a list of bytes only when a row
    needed the Python reader, see :meth:`..codecs.strings.per_value.PerValue.read`). With
    ``skip`` the caller only needs the reader moved past the body: alpha-packed bodies
    are then validated for length but not unpacked. ``end``: where the body ends, when a
    column index says so (an FSST block is then framed when it is decoded, not now).
    """
    if n == 0:
        return StringSlices(r.array(), np.zeros(0, np.int64), np.zeros(0, np.int64))
    unit = STRING_BY_TAG.get(r.peek("a string column"), STRING_UNTAGGED)
    return unit.read(r, n, dense, INT_CODES, skip=skip, end=end)
