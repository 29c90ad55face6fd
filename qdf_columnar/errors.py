"""The exception tree of qdf_columnar.

Everything raised on purpose derives from :class:`QdfError`. Messages follow the
pattern ``what went wrong - at <location>`` and the location is also available as
attributes (``column``, ``offset``, ``row_group``) for programs.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "QdfError",
    "EncodeError",
    "UnsupportedTypeError",
    "InvalidOptionError",
    "DecodeError",
    "TruncatedError",
    "CorruptDataError",
    "UnsupportedVersionError",
    "UnknownCodecError",
    "QueryError",
    "InvalidPathError",
    "QdfIOError",
    "QdfFileNotFoundError",
    "QdfIsADirectoryError",
    "QdfPermissionError",
    "QdfWarning",
    "PerformanceWarning",
]


class QdfError(Exception):
    """Base class of every error qdf_columnar raises on purpose."""

    def __init__(
        self,
        message: str,
        *,
        column: str | None = None,
        offset: int | None = None,
        row_group: int | None = None,
    ) -> None:
        self.column = column
        self.offset = offset
        self.row_group = row_group
        self.reason = message
        super().__init__(self._format(message))

    def _format(self, message: str) -> str:
        where = []
        if column := self.column:
            where.append(f"column {column!r}")
        if self.row_group is not None:
            where.append(f"row group {self.row_group}")
        if self.offset is not None:
            where.append(f"byte {self.offset}")
        return f"{message} - at {', '.join(where)}" if where else message

    def with_location(self, *, column: str | None = None, row_group: int | None = None) -> QdfError:
        """Return a copy of this error that also names ``column`` / ``row_group``."""
        err = type(self)(
            self.reason,
            column=self.column if self.column is not None else column,
            offset=self.offset,
            row_group=self.row_group if self.row_group is not None else row_group,
        )
        return err


class EncodeError(QdfError):
    """The data or the options cannot be written."""


class UnsupportedTypeError(EncodeError, TypeError):
    """A value or column type that qdf v1 cannot represent (or that we do not support yet)."""


class InvalidOptionError(EncodeError, ValueError):
    """An option value that makes no sense (unknown mode name, negative size...)."""


class DecodeError(QdfError, ValueError):
    """The bytes are not a valid qdf v1 buffer."""


class TruncatedError(DecodeError):
    """The input ended before a declared structure ended."""


class CorruptDataError(DecodeError):
    """The input is complete but inconsistent (bad tag, impossible length, trailing bytes)."""


class UnsupportedVersionError(DecodeError):
    """The header names a version or flag this implementation does not read."""


class UnknownCodecError(CorruptDataError):
    """A tag byte that is not valid in its context."""


class QueryError(QdfError, ValueError):
    """A bad projection or filter: unknown column, wrong literal type, malformed expression."""


class InvalidPathError(QdfError, TypeError):
    """A ``path`` / source argument that is none of the accepted kinds.

    ``write_qdf`` takes a str or os.PathLike path, an fsspec URL, a writable binary file
    object or None; ``read_qdf`` a path, URL, readable binary file object or the bytes of
    a whole file. A file object opened in text mode, or not for reading / writing, is
    refused up front with this error too.
    """


class QdfIOError(QdfError, OSError):
    """A ``.qdf`` file could not be opened, read or written.

    The message names the path as the caller gave it (``~`` expanded); ``path`` and
    ``filename`` hold it and ``errno`` the operating system's error number, when there
    is one. The common causes have subclasses that are also the matching builtin, so
    ``except FileNotFoundError`` keeps working: :class:`QdfFileNotFoundError`,
    :class:`QdfIsADirectoryError`, :class:`QdfPermissionError`. Any other OS error
    (a full disk, a parent that is a file...) is a plain ``QdfIOError``.
    """

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        errno: int | None = None,
        column: str | None = None,
        offset: int | None = None,
        row_group: int | None = None,
    ) -> None:
        super().__init__(message, column=column, offset=offset, row_group=row_group)
        self.path = path
        self.errno = errno
        self.filename = path
        # strerror stays None: the message already says what happened, in our words.

    def __str__(self) -> str:
        # OSError.__str__ would print "[Errno n] None: 'path'" once filename is set.
        return str(self.args[0]) if self.args else ""

    def __reduce__(self) -> tuple[Any, ...]:
        # errno and filename live in OSError's C slots, which default pickling drops.
        state = dict(self.__dict__, errno=self.errno, filename=self.filename)
        return type(self), (str(self),), state

    def with_location(self, *, column: str | None = None, row_group: int | None = None) -> QdfError:
        return type(self)(
            self.reason,
            path=self.path,
            errno=self.errno,
            column=self.column if self.column is not None else column,
            offset=self.offset,
            row_group=self.row_group if self.row_group is not None else row_group,
        )


class QdfFileNotFoundError(QdfIOError, FileNotFoundError):
    """Reading a file that does not exist, or writing into a directory that does not."""


class QdfIsADirectoryError(QdfIOError, IsADirectoryError):
    """The path names a directory, not a file."""


class QdfPermissionError(QdfIOError, PermissionError):
    """The operating system (or the object store) denied access to the file or its directory."""


class QdfWarning(UserWarning):
    """Base class of qdf_columnar warnings."""


class PerformanceWarning(QdfWarning):
    """Something works but slower than it should (for example no writable Numba cache)."""
