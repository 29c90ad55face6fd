"""Where a ``.qdf`` file's bytes come from: a memory map (local) or fsspec ranged reads.

Local files are memory-mapped once, so a row group is a zero-copy ``memoryview`` slice
(``no_copy`` reads keep numeric columns as views of the map; those views keep the map
alive after the file object is gone). Other fsspec URLs read byte ranges on demand:
the tail, the footer if the tail did not hold it, then only the row groups a read needs.
"""

from __future__ import annotations

import mmap
import os
from typing import Any

from ..errors import TruncatedError

__all__ = ["open_source", "resolve", "LocalSource", "FsspecSource", "TAIL_BYTES"]

#: The first ranged read of a remote file; a footer that fits needs no second request.
TAIL_BYTES = 64 * 1024


def resolve(path: Any, storage_options: dict[str, Any] | None) -> tuple[Any, str]:
    """(fsspec filesystem or None for a plain local path, path within it)."""
    p = os.fspath(path)
    if not isinstance(p, str):
        p = os.fsdecode(p)
    if "://" not in p and "::" not in p and not storage_options:
        return None, p
    import fsspec
    from fsspec.implementations.local import LocalFileSystem

    fs, fpath = fsspec.core.url_to_fs(p, **(storage_options or {}))
    if isinstance(fs, LocalFileSystem):
        return None, fpath
    return fs, fpath


class LocalSource:
    """A read-only memory map of a local file."""

    def __init__(self, path: str) -> None:
        with open(path, "rb") as f:
            st = os.fstat(f.fileno())
            self.size = st.st_size
            #: Identifies this exact file content for the parsed-footer cache: the writer
            #: never rewrites a file in place (it replaces it: a new inode).
            self.identity = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
            # An empty file cannot be mapped; the caller reports it as truncated.
            self._map = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if self.size else None
        self._view = memoryview(self._map) if self._map is not None else memoryview(b"")

    def read(self, start: int, length: int) -> memoryview:
        if start < 0 or start + length > self.size:
            raise TruncatedError(f"need bytes [{start}, {start + length}) of a {self.size}-byte file", offset=start)
        return self._view[start:start + length]

    def read_ranges(self, ranges: list[tuple[int, int]]) -> list[memoryview]:
        return [self.read(start, length) for start, length in ranges]

    def close(self) -> None:
        # Slices handed out (no_copy columns) keep the map alive: it then closes when they die.
        try:
            self._view.release()
            if self._map is not None:
                self._map.close()
        except BufferError:
            pass


class FsspecSource:
    """Ranged reads through an fsspec filesystem (object stores, memory://, ...)."""

    def __init__(self, fs: Any, path: str) -> None:
        self.fs, self.path = fs, path
        self.size = int(fs.size(path))

    def read(self, start: int, length: int) -> bytes:
        if start < 0 or start + length > self.size:
            raise TruncatedError(f"need bytes [{start}, {start + length}) of a {self.size}-byte file", offset=start)
        data = self.fs.cat_file(self.path, start=start, end=start + length)
        if len(data) != length:
            raise TruncatedError(f"read {len(data)} of {length} bytes (the file changed?)", offset=start)
        return bytes(data)

    def read_ranges(self, ranges: list[tuple[int, int]]) -> list[bytes]:
        """Several ranges in one call (object stores fetch them concurrently)."""
        for start, length in ranges:
            if start < 0 or start + length > self.size:
                raise TruncatedError(f"need bytes [{start}, {start + length}) of a {self.size}-byte file",
                                     offset=start)
        out = self.fs.cat_ranges([self.path] * len(ranges), [s for s, _ in ranges], [s + n for s, n in ranges])
        for (start, length), data in zip(ranges, out):
            if isinstance(data, Exception):
                raise data
            if len(data) != length:
                raise TruncatedError(f"read {len(data)} of {length} bytes (the file changed?)", offset=start)
        return [bytes(d) for d in out]

    def close(self) -> None:
        pass


def open_source(path: Any, storage_options: dict[str, Any] | None = None) -> LocalSource | FsspecSource:
    fs, p = resolve(path, storage_options)
    return LocalSource(p) if fs is None else FsspecSource(fs, p)
