"""The exception tree of qdf_columnar.

Everything raised on purpose derives from :class:`QdfError`. Messages follow the
pattern ``what went wrong - at <location>`` and the location is also available as
attributes (``column``, ``offset``, ``row_group``) for programs.
"""

from __future__ import annotations

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


class QdfWarning(UserWarning):
    """Base class of qdf_columnar warnings."""


class PerformanceWarning(QdfWarning):
    """Something works but slower than it should (for example no writable Numba cache)."""
