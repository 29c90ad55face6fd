"""Column chunks of container version 2.0 (docs/FORMAT.md §4.2): write one, open one.

A chunk is one top-level column of one row group as a complete qdf v1 buffer,
``encode()`` of that column alone, so a reader fetches and decodes only the columns a
query touches, any v1 reader can decode a chunk by itself, and no chunk depends on
another's bytes. The last stage is chosen per chunk, never larger: the v1 buffer as it
is, its tANS entropy pass (compression mode), or a zstd frame of the plain buffer
when that beats the better of the two by :data:`ZSTD_MIN_GAIN`.
"""

from __future__ import annotations

import zlib
from typing import Any

import pyarrow as pa

from ..columns.frames import PANDAS_NOTE_KEY
from ..columns.inputs import ARROW_DTYPE_KEY
from ..errors import CorruptDataError
from ..format.header import finish_body
from ..options import Options, parse_mode
from .layout import CHUNK_V1, CHUNK_ZSTD, Chunk, max_unpacked

#: zstd level per mode: balanced stays quick to write, compression spends more time.
ZSTD_LEVEL = {"balanced": 3, "compression": 9}
#: A zstd frame replaces the v1 buffer only when at least this much smaller (zstd costs
#: a decompression pass and a copy; a few percent are not worth them).
ZSTD_MIN_GAIN = 0.05
#: Schema metadata that belongs to the file's footer, not to each chunk (it describes
#: every column; the reader gives decoded chunks the footer's schema).
_FILE_KEYS = (b"pandas", ARROW_DTYPE_KEY, PANDAS_NOTE_KEY)

_ZSTD: dict[int, pa.Codec] = {}


def _zstd(level: int) -> pa.Codec:
    codec = _ZSTD.get(level)
    if codec is None:
        codec = _ZSTD[level] = pa.Codec("zstd", compression_level=level)
    return codec


def chunk_table(group: pa.Table, i: int) -> pa.Table:
    """Column ``i`` of a row group as a table of its own, without the file-wide metadata."""
    meta = {k: v for k, v in (group.schema.metadata or {}).items() if k not in _FILE_KEYS}
    return pa.Table.from_arrays([group.column(i)], schema=pa.schema([group.schema.field(i)], metadata=meta or None))


def encode_chunk(table: pa.Table, encode: Any, mode: Any, column_index: bool | None,
                 **kw: Any) -> tuple[bytes, int, int]:
    """(chunk bytes, codec, v1 length) of a one-column table, the smallest last stage.

    ``encode`` is :func:`qdf_columnar.encode`; ``kw`` are its keyword options.
    """
    opts = parse_mode(mode, column_index=column_index)
    if not opts & Options.DENSE:  # speed mode: row-major maps, no entropy pass to weigh
        buf = encode(table, mode=mode, column_index=column_index, **kw)
        return _maybe_zstd(buf, buf, ZSTD_LEVEL["balanced"])
    plain = encode(table, mode=opts & ~Options.RANS, **kw)
    if not opts & Options.RANS:
        return _maybe_zstd(plain, plain, ZSTD_LEVEL["balanced"])
    return _maybe_zstd(plain, finish_body(bytearray(plain), entropy=True), ZSTD_LEVEL["compression"])


def _maybe_zstd(plain: bytes, best: bytes, level: int) -> tuple[bytes, int, int]:
    """``best`` (a plain or entropy-coded v1 buffer, as it is), or a zstd frame of the plain
    v1 buffer ``plain`` when that is :data:`ZSTD_MIN_GAIN` smaller."""
    packed = _zstd(level).compress(plain, asbytes=True)
    if len(packed) < (1 - ZSTD_MIN_GAIN) * len(best) and len(plain) <= max_unpacked(len(packed)):
        return packed, CHUNK_ZSTD, len(plain)
    return best, CHUNK_V1, len(best)


def open_chunk(data: Any, chunk: Chunk, *, column: str, row_group: int) -> Any:
    """The v1 buffer of a chunk's bytes ``data``: checksum verified, zstd frame unpacked."""
    crc = zlib.crc32(data)
    if crc != chunk.crc32:
        raise CorruptDataError(
            f"column chunk checksum mismatch (stored {chunk.crc32:#010x}, computed {crc:#010x}): its bytes are "
            "damaged", column=column, row_group=row_group, offset=chunk.offset)
    if chunk.codec == CHUNK_V1:
        return data
    try:
        out = _zstd(1).decompress(data, decompressed_size=chunk.raw_length, asbytes=True)
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise CorruptDataError(f"column chunk is not a zstd frame of {chunk.raw_length} bytes: {exc}",
                               column=column, row_group=row_group, offset=chunk.offset) from None
    if len(out) != chunk.raw_length:
        raise CorruptDataError(f"column chunk unpacks to {len(out)} bytes, the footer says {chunk.raw_length}",
                               column=column, row_group=row_group, offset=chunk.offset)
    return out


__all__ = ["chunk_table", "encode_chunk", "open_chunk", "ZSTD_LEVEL", "ZSTD_MIN_GAIN"]
