"""One Arrow array per column, without a copy when the column already is one.

``ChunkedArray.combine_chunks()`` copies every buffer even of a single chunk (1.5 ms
for an 8 MB column), and most columns the encoder and the readers see are one chunk.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa


def one_array(col: Any) -> Any:
    """``col`` as one array: its only chunk as it is, anything else combined (a copy, as
    before), and anything that is not a ChunkedArray unchanged. Only a flat chunk that
    starts at offset 0 is passed through: a slice's offsets, and the offsets nested
    types keep in their children, stay normalised the way callers have always seen them."""
    if isinstance(col, pa.ChunkedArray):
        if col.num_chunks == 1:
            chunk = col.chunk(0)
            if chunk.offset == 0 and not pa.types.is_nested(chunk.type):
                return chunk
        return col.combine_chunks()
    return col


__all__ = ["one_array"]
