"""Where a ``.qdf`` file's bytes come from, and how path arguments are understood.

A source is one of:

* a local path (str or os.PathLike, ``~`` expanded): memory-mapped once, so a row
  group is a zero-copy ``memoryview`` slice (``no_copy`` reads keep numeric columns as
  views of the map; those views keep the map alive after the file object is gone);
* any other fsspec URL: byte ranges read on demand -- the tail, the footer if the tail
  did not hold it, then only the row groups a read needs;
* bytes / bytearray / memoryview holding a whole file: sliced without copying, exactly
  like a map (``no_copy`` columns are views of the caller's buffer);
* a readable binary file object: a seekable one is read with ``seek`` + ``read`` of the
  ranges needed (the file spans the object from offset 0 to its end, since a ``.qdf``
  file's offsets are absolute); a non-seekable one is read to its end into memory.

OS errors are raised as :class:`~qdf_columnar.errors.QdfIOError` subclasses naming the
path (``os_error``); an argument of no accepted kind raises ``InvalidPathError``.
"""

from __future__ import annotations

import errno
import io
import mmap
import os
import threading
from typing import Any, Protocol

from ..errors import (
    InvalidOptionError,
    InvalidPathError,
    QdfFileNotFoundError,
    QdfIOError,
    QdfIsADirectoryError,
    QdfPermissionError,
    TruncatedError,
)

__all__ = [
    "QdfPath",
    "QdfSource",
    "QdfTarget",
    "ReadableFile",
    "WritableFile",
    "open_source",
    "resolve",
    "is_path",
    "is_url",
    "source_name",
    "writable_file",
    "os_error",
    "missing_directory",
    "LocalSource",
    "FsspecSource",
    "MemorySource",
    "FileObjectSource",
    "Source",
    "TAIL_BYTES",
]

#: The first ranged read of a remote file; a footer that fits needs no second request.
#: 16 KiB holds the footer of ~16 row groups of 12 columns; a larger one costs one more
#: request. Larger reads save that request but, with column chunks, the extra bytes
#: are other columns' data a projected read does not want.
TAIL_BYTES = 16 * 1024
#: Chunk size when a non-seekable stream is read to its end.
_STREAM_CHUNK = 8 * 1024 * 1024


class ReadableFile(Protocol):
    """A binary file object to read a ``.qdf`` file from (``seek`` / ``tell`` used when seekable)."""

    def read(self, size: int = ..., /) -> bytes: ...


class WritableFile(Protocol):
    """A binary file object to write a ``.qdf`` file to."""

    def write(self, data: bytes, /) -> Any: ...


#: A local path or an fsspec URL.
QdfPath = str | os.PathLike[str] | os.PathLike[bytes]
#: What ``read_qdf`` / ``QdfFile`` read: a path or URL, a binary file object, or a whole file's bytes.
QdfSource = QdfPath | ReadableFile | bytes | bytearray | memoryview
#: What ``write_qdf`` writes to: a path or URL, a binary file object, or None (return the bytes).
QdfTarget = QdfPath | WritableFile | None


# ----------------------------------------------------------------------------- path arguments


def is_path(obj: Any) -> bool:
    """A str or os.PathLike (a local path or an fsspec URL), as opposed to a file object or bytes."""
    return isinstance(obj, (str, os.PathLike))


def is_url(path: str) -> bool:
    """An fsspec URL (``proto://...`` or a ``::`` chain), never ``~``-expanded."""
    return "://" in path or "::" in path


def _fspath(path: Any) -> str:
    p = os.fspath(path)
    return p if isinstance(p, str) else os.fsdecode(p)


def _kinds(verb: str) -> str:
    if verb == "write":
        return "a str or os.PathLike path, an fsspec URL, a writable binary file object or None"
    return "a str or os.PathLike path, an fsspec URL, a readable binary file object or bytes"


def resolve(path: Any, storage_options: dict[str, Any] | None) -> tuple[Any, str]:
    """(fsspec filesystem or None for a plain local path, path within it).

    A local path has ``~`` expanded (``os.path.expanduser``); URLs are left as they are.
    """
    if not is_path(path):
        raise InvalidPathError(f"path must be a str or os.PathLike path or an fsspec URL, not {type(path).__name__}")
    p = _fspath(path)
    if not is_url(p):
        p = os.path.expanduser(p)
        if not storage_options:
            return None, p
    import fsspec
    from fsspec.implementations.local import LocalFileSystem

    fs, fpath = fsspec.core.url_to_fs(p, **(storage_options or {}))
    if isinstance(fs, LocalFileSystem):
        return None, fpath
    return fs, fpath


def source_name(obj: Any) -> str:
    """How messages and ``QdfFile.path`` name a source: the (``~``-expanded) path or URL,
    a file object's ``name`` (or fsspec ``path``) when it is a str, else ``<BytesIO>``-style
    or ``<N bytes>``."""
    if is_path(obj):
        p = _fspath(obj)
        return p if is_url(p) else os.path.expanduser(p)
    if isinstance(obj, (bytes, bytearray, memoryview)):
        return f"<{memoryview(obj).nbytes} bytes>"
    for attr in ("name", "path"):  # open() files have a name, fsspec files a path
        name = getattr(obj, attr, None)
        if isinstance(name, str) and name:
            return name
    return f"<{type(obj).__name__}>"


def _check_open(f: Any, verb: str) -> None:
    """Refuse a closed, text-mode or wrong-direction file object before any byte moves."""
    mode = "rb" if verb == "read" else "wb"
    if getattr(f, "closed", False) is True:
        raise InvalidPathError(f"cannot {verb} {source_name(f)!r}: the file object is closed")
    if isinstance(f, io.TextIOBase):
        raise InvalidPathError(
            f"cannot {verb} {source_name(f)!r}: the file object is in text mode; a .qdf file is binary, "
            f"open it with mode {mode!r}")
    able = getattr(f, "readable" if verb == "read" else "writable", None)
    if callable(able) and not able():
        raise InvalidPathError(f"cannot {verb} {source_name(f)!r}: the file object is not open for "
                               f"{'reading' if verb == 'read' else 'writing'} (open it with mode {mode!r})")


def writable_file(target: Any) -> bool:
    """Whether ``target`` is a file object to write to (checked: binary, open for writing).

    Raises ``InvalidPathError`` for anything that is neither a path, None nor such an object.
    """
    if target is None or is_path(target):
        return False
    if isinstance(target, (bytes, bytearray, memoryview)):
        raise InvalidPathError(
            f"cannot write a .qdf file into a {type(target).__name__} object; pass path=None to get the bytes, "
            "or an io.BytesIO")
    if not callable(getattr(target, "write", None)):
        raise InvalidPathError(f"path must be {_kinds('write')}, not {type(target).__name__}")
    _check_open(target, "write")
    return True


# ----------------------------------------------------------------------------- OS errors


def _parent(path: str) -> str:
    if is_url(path):
        return path.rstrip("/").rsplit("/", 1)[0]
    return os.path.dirname(os.path.abspath(path))


def missing_directory(path: str, directory: str | None = None) -> QdfFileNotFoundError:
    """The error for a write whose target directory does not exist, naming both."""
    directory = directory if directory is not None else _parent(path)
    return QdfFileNotFoundError(f"cannot write {path!r}: the directory {directory!r} does not exist",
                                path=path, errno=errno.ENOENT)


def os_error(exc: OSError, path: str, verb: str) -> QdfIOError:
    """``exc`` raised while ``verb``-ing ("read" / "write") ``path``, as a typed error naming the path.

    A qdf error is returned as it is (never wrapped twice).
    """
    if isinstance(exc, QdfIOError):
        return exc
    code = exc.errno
    if isinstance(exc, FileNotFoundError):
        if verb == "write":
            return missing_directory(path)
        return QdfFileNotFoundError(f"cannot read {path!r}: no such file", path=path, errno=code or errno.ENOENT)
    if isinstance(exc, IsADirectoryError):
        return QdfIsADirectoryError(f"cannot {verb} {path!r}: it is a directory, not a .qdf file", path=path,
                                    errno=code or errno.EISDIR)
    if isinstance(exc, PermissionError):
        where = f" (no write access to {_parent(path)!r})" if verb == "write" else ""
        return QdfPermissionError(f"cannot {verb} {path!r}: permission denied{where}", path=path,
                                  errno=code or errno.EACCES)
    reason = exc.strerror or str(exc) or type(exc).__name__
    return QdfIOError(f"cannot {verb} {path!r}: {reason}", path=path, errno=code)


# ----------------------------------------------------------------------------- sources


def _check_range(start: int, length: int, size: int) -> None:
    if start < 0 or start + length > size:
        raise TruncatedError(f"need bytes [{start}, {start + length}) of a {size}-byte file", offset=start)


class _RangeSource:
    """What every source shares: ``read_ranges`` as one ``read`` per range (fsspec batches them instead)."""

    def read_ranges(self, ranges: list[tuple[int, int]]) -> list[Any]:
        return [self.read(start, length) for start, length in ranges]  # type: ignore[attr-defined]


class _ViewSource(_RangeSource):
    """Random access to a whole file held as one memoryview (a map, or bytes in memory)."""

    #: Random access costs nothing: the footer is parsed from one slice of the whole file.
    mapped = True
    size: int
    _view: memoryview

    def read(self, start: int, length: int) -> memoryview:
        _check_range(start, length, self.size)
        return self._view[start:start + length]



class LocalSource(_ViewSource):
    """A read-only memory map of a local file."""

    def __init__(self, path: str) -> None:
        self.name = path
        try:
            f = open(path, "rb")
        except OSError as exc:
            raise os_error(exc, path, "read") from exc
        with f:
            st = os.fstat(f.fileno())
            self.size = st.st_size
            #: Identifies this exact file content for the parsed-footer cache: the writer
            #: never rewrites a file in place (it replaces it: a new inode).
            self.identity = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
            # An empty file cannot be mapped; the caller reports it as truncated.
            self._map = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if self.size else None
        self._view = memoryview(self._map) if self._map is not None else memoryview(b"")

    def close(self) -> None:
        # Slices handed out (no_copy columns) keep the map alive: it then closes when they die.
        try:
            self._view.release()
            if self._map is not None:
                self._map.close()
        except BufferError:
            pass


class MemorySource(_ViewSource):
    """A whole ``.qdf`` file in memory, sliced without copying (as a map is)."""

    def __init__(self, data: bytes | bytearray | memoryview, name: str) -> None:
        self.name = name
        view = memoryview(data)
        if not view.c_contiguous:
            raise InvalidPathError(f"cannot read {name!r}: a memoryview source must be C-contiguous")
        # Slices of a byte-format 1-D view are what decode and zlib.crc32 take (like a map's).
        self._view = view if view.ndim == 1 and view.format == "B" else view.cast("B")
        self.size = self._view.nbytes

    def close(self) -> None:
        # Releasing lets a caller's bytearray be resized again; slices handed out stay valid.
        try:
            self._view.release()
        except BufferError:
            pass


class FileObjectSource(_RangeSource):
    """Ranged reads from a seekable binary file object the caller owns (never closed here).

    Reads seek then read under a lock: row groups are fetched from a thread pool and one
    file object has a single position.
    """

    mapped = False

    def __init__(self, f: Any, name: str) -> None:
        self.f, self.name = f, name
        self._lock = threading.Lock()
        f.seek(0, os.SEEK_END)
        self.size = int(f.tell())

    def read(self, start: int, length: int) -> bytes:
        _check_range(start, length, self.size)
        parts, got = [], 0
        with self._lock:
            self.f.seek(start)
            while got < length:  # raw files may return fewer bytes than asked for
                chunk = self.f.read(length - got)
                if not chunk:
                    break
                if isinstance(chunk, str):
                    raise InvalidPathError(f"cannot read {self.name!r}: the file object returns str; "
                                           "open it in binary mode ('rb')")
                parts.append(chunk)
                got += len(chunk)
        if got != length:
            raise TruncatedError(f"read {got} of {length} bytes (the file changed?)", offset=start)
        return parts[0] if len(parts) == 1 and isinstance(parts[0], bytes) else b"".join(parts)

    def close(self) -> None:
        pass  # the caller opened the object and closes it


class FsspecSource:
    """Ranged reads through an fsspec filesystem (object stores, memory://, ...)."""

    mapped = False

    def __init__(self, fs: Any, path: str, name: str | None = None) -> None:
        self.fs, self.path = fs, path
        self.name = name if name is not None else path
        try:
            info = fs.info(path)  # the same one request fs.size() makes, plus the entry type
        except OSError as exc:
            raise os_error(exc, self.name, "read") from exc
        if info.get("type") == "directory":
            raise QdfIsADirectoryError(f"cannot read {self.name!r}: it is a directory, not a .qdf file",
                                       path=self.name, errno=errno.EISDIR)
        size = info.get("size")
        self.size = int(size if size is not None else fs.size(path))

    def read(self, start: int, length: int) -> bytes:
        _check_range(start, length, self.size)
        data = self.fs.cat_file(self.path, start=start, end=start + length)
        if len(data) != length:
            raise TruncatedError(f"read {len(data)} of {length} bytes (the file changed?)", offset=start)
        return bytes(data)

    def read_ranges(self, ranges: list[tuple[int, int]]) -> list[bytes]:
        """Several ranges in one call (object stores fetch them concurrently)."""
        for start, length in ranges:
            _check_range(start, length, self.size)
        out = self.fs.cat_ranges([self.path] * len(ranges), [s for s, _ in ranges], [s + n for s, n in ranges])
        for (start, length), data in zip(ranges, out):
            if isinstance(data, Exception):
                raise data
            if len(data) != length:
                raise TruncatedError(f"read {len(data)} of {length} bytes (the file changed?)", offset=start)
        return [bytes(d) for d in out]

    def close(self) -> None:
        pass


Source = LocalSource | MemorySource | FileObjectSource | FsspecSource


def _seekable(f: Any) -> bool:
    test = getattr(f, "seekable", None)
    if callable(test):
        try:
            return bool(test())
        except (OSError, ValueError):
            return False
    return callable(getattr(f, "seek", None)) and callable(getattr(f, "tell", None))


def _read_to_end(f: Any, name: str) -> bytes:
    parts = []
    while True:
        chunk = f.read(_STREAM_CHUNK)
        if not chunk:
            break
        if isinstance(chunk, str):
            raise InvalidPathError(f"cannot read {name!r}: the file object returns str; open it in binary mode ('rb')")
        parts.append(chunk)
    return b"".join(parts)


def _file_source(f: Any) -> MemorySource | FileObjectSource:
    _check_open(f, "read")
    name = source_name(f)
    if _seekable(f):
        try:
            return FileObjectSource(f, name)
        except (OSError, ValueError):  # claims seek but cannot (io.UnsupportedOperation is both)
            pass
    return MemorySource(_read_to_end(f, name), name)


def open_source(src: Any, storage_options: dict[str, Any] | None = None) -> Source:
    """The source of ``src`` (a path, URL, file object or bytes; see the module docstring)."""
    if is_path(src):
        fs, p = resolve(src, storage_options)
        return LocalSource(p) if fs is None else FsspecSource(fs, p, source_name(src))
    if storage_options:
        raise InvalidOptionError(
            f"storage_options= applies only to a path or URL, not to a {type(src).__name__}")
    if isinstance(src, (bytes, bytearray, memoryview)):
        return MemorySource(src, source_name(src))
    if callable(getattr(src, "read", None)):
        return _file_source(src)
    raise InvalidPathError(f"path must be {_kinds('read')}, not {type(src).__name__}")

