"""Column chunks of container version 2.0 (docs/FORMAT.md §4.2): write one, fetch and open them.

A chunk is one top-level column of one row group as a complete qdf v1 buffer,
``encode()`` of that column alone, so a reader fetches and decodes only the columns a
query touches, any v1 reader can decode a chunk by itself, and no chunk depends on
another's bytes. The last stage is chosen per chunk, never larger. Balanced mode: the
v1 buffer as it is, or a zstd frame of it when that saves enough to pay for the
unpacking (:data:`ZSTD_MIN_SAVING` bytes plus :data:`ZSTD_MIN_GAIN`).
Compression mode also encodes the column with whole-byte integer widths
(``Options.ALIGNED``) and keeps the smallest of either buffer as it is, with its tANS
entropy pass, as a zstd frame, or as an xz stream (LZMA2; only when
:data:`XZ_MIN_GAIN` smaller than every other form, as it decodes far slower).
"""

from __future__ import annotations

import threading
import zlib
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import pyarrow as pa

from ..columns.frames import PANDAS_NOTE_KEY
from ..columns.inputs import ARROW_DTYPE_KEY
from ..errors import CorruptDataError, UnknownCodecError
from ..format.header import finish_body
from ..options import Options, parse_mode
from ..wire.parallel import available_cpus
from .layout import CHUNK_V1, CHUNK_XZ, CHUNK_ZSTD, Chunk, RowGroup, max_unpacked
from .source import Source

try:  # CPython built without liblzma has no lzma module: such a Python writes no xz chunks
    import lzma as _lzma
except ImportError:  # pragma: no cover - every supported build has it
    _lzma = None  # type: ignore[assignment]

#: zstd level per mode: balanced stays quick to write, compression spends more time.
ZSTD_LEVEL = {"balanced": 3, "compression": 9}
#: Balanced mode, where reads come first, wraps a chunk in a zstd frame only when the
#: bytes it saves are worth the unpacking: at least ZSTD_MIN_SAVING bytes plus
#: ZSTD_MIN_GAIN of the v1 buffer (compression mode keeps whatever is smaller).
#: Unpacking a frame costs ~8-10 us however small it is, plus ~0.8 ns per byte
#: (pyarrow's zstd on this project's chunks, 3 KB to 640 KB); a byte saved is worth
#: ~16 ns over a ~60 MB/s link (one object-store stream), so a frame pays from ~512
#: bytes + 5% saved. On the bench-real tables this keeps every large frame and drops
#: the small ones that saved a few hundred bytes for 10-30 us of unpacking each.
ZSTD_MIN_GAIN = 0.05
ZSTD_MIN_SAVING = 512
#: Compression mode also weighs an xz stream (LZMA2, preset 6: an 8 MiB window and
#: literals coded in the context of the byte before, which is what whole-byte integers
#: need). It decodes at tens of MB/s, not GB/s, so it must beat the best other form by
#: this much.
XZ_PRESET = 6
XZ_MIN_GAIN = 0.03
#: Smaller v1 buffers are not worth an xz trial (its stream headers alone are ~60 bytes).
XZ_MIN_INPUT = 4096
#: Sources whose zstd frame is this much larger than the best one are not tried with xz.
XZ_REACH = 1.5
#: The decoder's memory limit: preset 6 needs ~9 MiB; a hostile stream asking for more
#: is refused before anything is allocated.
XZ_MEMLIMIT = 64 << 20
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
        return _smallest([encode(table, mode=mode, column_index=column_index, **kw)], ZSTD_LEVEL["balanced"])
    plain = encode(table, mode=opts & ~Options.RANS, **kw)
    if not opts & Options.RANS:
        return _smallest([plain], ZSTD_LEVEL["balanced"])
    # Compression mode also weighs the column with its integers at whole-byte widths
    # (Options.ALIGNED): larger as v1, but zstd, xz or tANS often code it far smaller
    # (values that repeat at a lag, counters interleaved, deltas of a few values).
    sources = [plain]
    aligned = encode(table, mode=(opts & ~Options.RANS) | Options.ALIGNED, **kw)
    if aligned != plain:
        sources.append(aligned)
    return _smallest(sources, ZSTD_LEVEL["compression"], entropy=True, min_gain=0.0, min_saving=0,
                     xz=_lzma is not None)


def _smallest(sources: list[bytes], level: int, *, entropy: bool = False, min_gain: float = ZSTD_MIN_GAIN,
              min_saving: int = ZSTD_MIN_SAVING, xz: bool = False) -> tuple[bytes, int, int]:
    """The smallest chunk made of one of the plain v1 buffers ``sources``: a buffer as it
    is (or with the tANS pass, when ``entropy``), or a zstd frame of one at ``level``,
    kept only when it saves ``min_saving`` bytes plus ``min_gain`` of the best v1 form;
    with ``xz``, also an xz stream, kept only when :data:`XZ_MIN_GAIN` smaller than
    every other form."""
    v1 = [finish_body(bytearray(b), entropy=True) if entropy else b for b in sources]
    best = min(v1, key=len)
    packed = [_zstd(level).compress(b, asbytes=True) for b in sources]
    k = min(range(len(sources)), key=lambda i: len(packed[i]))
    frame, plain, codec = packed[k], sources[k], CHUNK_ZSTD
    if xz:
        bar = (1 - XZ_MIN_GAIN) * min(len(frame), len(best))
        for i, src in enumerate(sources):
            if len(src) < XZ_MIN_INPUT or len(packed[i]) > XZ_REACH * len(packed[k]):
                continue
            stream = _lzma.compress(src, format=_lzma.FORMAT_XZ, check=_lzma.CHECK_NONE, preset=XZ_PRESET)
            if len(stream) < bar and (codec == CHUNK_ZSTD or len(stream) < len(frame)):
                frame, plain, codec = stream, src, CHUNK_XZ
    if len(frame) < (1 - min_gain) * len(best) - min_saving and len(plain) <= max_unpacked(len(frame)):
        return frame, codec, len(plain)
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
    if chunk.codec == CHUNK_XZ:
        out = _unxz(data, chunk, column=column, row_group=row_group)
    else:
        try:
            out = _zstd(1).decompress(data, decompressed_size=chunk.raw_length, asbytes=True)
        except (pa.ArrowException, OSError, ValueError) as exc:
            raise CorruptDataError(f"column chunk is not a zstd frame of {chunk.raw_length} bytes: {exc}",
                                   column=column, row_group=row_group, offset=chunk.offset) from None
    if len(out) != chunk.raw_length:
        raise CorruptDataError(f"column chunk unpacks to {len(out)} bytes, the footer says {chunk.raw_length}",
                               column=column, row_group=row_group, offset=chunk.offset)
    return out


def read_adjacent(src: Source, chunks: list[Chunk]) -> list[Any]:
    """The bytes of ``chunks``, in one round trip: chunks that lie back to back in the file
    are fetched as one range and sliced (no copy), so reading whole groups costs no more
    requests than a version-1 file."""
    if not chunks:
        return []
    order = sorted(range(len(chunks)), key=lambda i: chunks[i].offset)
    runs: list[list[int]] = []
    for i in order:
        if runs and chunks[runs[-1][-1]].offset + chunks[runs[-1][-1]].length == chunks[i].offset:
            runs[-1].append(i)
        else:
            runs.append([i])
    spans = [(chunks[r[0]].offset, sum(chunks[i].length for i in r)) for r in runs]
    out: list[Any] = [None] * len(chunks)
    for run, data in zip(runs, src.read_ranges(spans)):
        view, pos = memoryview(data), 0
        for i in run:
            out[i] = view[pos:pos + chunks[i].length]
            pos += chunks[i].length
    return out


#: A packed (zstd / xz) chunk of at least this many bytes is unpacked on a helper thread
#: while the calling thread decodes the chunk before it: pyarrow's zstd, lzma and zlib's
#: CRC-32 release the GIL, so with two CPUs the unpacking hides behind the decoding.
#: A smaller one is not worth the hand-off between threads (tens of microseconds).
AHEAD_MIN_BYTES = 256 << 10

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _unpack_pool() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="qdf-unpack")
        return _pool


def can_unpack_ahead(threads: Any) -> bool:
    """Whether a read with ``threads=`` (None / True: automatic) may unpack on a helper thread."""
    return (threads is None or threads is True) and available_cpus() >= 2


class ChunkOpener:
    """The v1 buffers of one row group's chunks (:func:`open_chunk`), asked for in
    ``order`` (column name, chunk index): with ``ahead``, the large packed ones are
    unpacked one ahead of the decoding on a helper thread, so at most one unpacked
    buffer waits besides the one being decoded; the others are opened when asked."""

    def __init__(self, g: RowGroup, order: list[tuple[str, int]], datas: dict[str, Any], *, ahead: bool) -> None:
        self._g, self._datas, self._index = g, datas, dict(order)
        self._queue = [n for n, j in order if ahead and g.chunks[j].codec != CHUNK_V1
                       and g.chunks[j].length >= AHEAD_MIN_BYTES]
        if len(self._queue) == len(order):  # nothing to decode while the first one unpacks
            self._queue = self._queue[1:]
        self._pending: dict[str, Future] = {}
        self._lock = threading.Lock()  # decode threads (threads=None on 4+ CPUs) ask at once
        with self._lock:
            self._submit_next()

    def _open(self, name: str) -> Any:
        return open_chunk(self._datas[name], self._g.chunks[self._index[name]], column=name, row_group=self._g.index)

    def _submit_next(self) -> None:  # under the lock
        if self._queue and not self._pending:
            name = self._queue.pop(0)
            self._pending[name] = _unpack_pool().submit(self._open, name)

    def decode_order(self, names: list[str]) -> list[str]:
        """``names`` with the chunks unpacked ahead last, so the first of them unpacks
        while the others are decoded."""
        ahead = set(self._queue) | set(self._pending)
        return [n for n in names if n not in ahead] + [n for n in names if n in ahead]

    def data(self, name: str) -> Any:
        """The chunk's bytes as read (its v1 buffer itself when it is not packed)."""
        return self._datas[name]

    def get(self, name: str) -> Any:
        """The v1 buffer of column ``name``'s chunk: checksum verified, unpacked."""
        with self._lock:
            fut = self._pending.pop(name, None)
            if fut is None:
                if name in self._queue:  # asked for out of the expected order: open it here
                    self._queue.remove(name)
            else:
                self._submit_next()  # the next one unpacks while this one is decoded
        return self._open(name) if fut is None else fut.result()

    def close(self) -> None:
        """Drop the chunk still unpacking ahead (a read that stopped early)."""
        with self._lock:
            for fut in self._pending.values():
                fut.cancel()
            self._pending.clear()
            self._queue.clear()


def _unxz(data: Any, chunk: Chunk, *, column: str, row_group: int) -> bytes:
    """The v1 buffer of an xz chunk: at most ``raw_length`` bytes are ever produced, and a
    stream that asks for more memory than :data:`XZ_MEMLIMIT` is refused."""
    if _lzma is None:
        raise UnknownCodecError("column chunk is an xz stream, and this Python has no lzma module (build it "
                                "with liblzma to read compression-mode files)", column=column, row_group=row_group,
                                offset=chunk.offset)
    where = {"column": column, "row_group": row_group, "offset": chunk.offset}
    d = _lzma.LZMADecompressor(format=_lzma.FORMAT_XZ, memlimit=XZ_MEMLIMIT)
    try:
        out = d.decompress(bytes(data), max_length=chunk.raw_length)
        if not d.eof and d.decompress(b"", max_length=1):
            raise CorruptDataError(f"column chunk unpacks to more than the {chunk.raw_length} bytes the footer "
                                   "says", **where)
    except _lzma.LZMAError as exc:
        raise CorruptDataError(f"column chunk is not an xz stream of {chunk.raw_length} bytes: {exc}",
                               **where) from None
    if not d.eof or d.unused_data:
        raise CorruptDataError("column chunk is not one whole xz stream (it ends early or has bytes after it)",
                               **where)
    return out


__all__ = ["ChunkOpener", "can_unpack_ahead", "chunk_table", "encode_chunk", "open_chunk", "read_adjacent",
           "XZ_MIN_GAIN", "XZ_PRESET", "ZSTD_LEVEL", "ZSTD_MIN_GAIN", "ZSTD_MIN_SAVING"]
